"""The exact solver's limits (issue #25): chunked layers give the same values, the memory model bounds
the measured peak, the solver stops before allocating past its limit, the worst accepted class runs under a
memory cap, and class parsing is linear."""
import time

import numpy as np
import pytest

import toymodels.transductive as M
from tests.topics.transductive.test_games import m_tr_brute
from toymodels.topic import InputError
from toymodels.transductive import exact as X


def _reduced(H):
    Hc = M.as_class(H)
    return Hc[:, X._reduce_points(Hc)]


class _Recorder(X._Meter):
    """A meter that records, per layer, the model's predicted peak and tracemalloc's measured one (bytes above
    the traced memory when the pass started)."""

    def __init__(self, n, max_bytes=float("inf")):
        super().__init__(n, float("inf"), max_bytes)
        self.layers, self.cur, self.base = [], None, None

    def need(self, nbytes):
        import tracemalloc

        if self.cur is None or self.cur[0] != self.layer:
            self.close()
            tracemalloc.reset_peak()
            self.cur = [self.layer, 0]
        self.cur[1] = max(self.cur[1], int(nbytes + self.persistent + X._TR_FIXED_BYTES))
        super().need(nbytes)

    def close(self):
        import tracemalloc

        if self.cur is not None:
            self.layers.append((self.cur[0], self.cur[1], tracemalloc.get_traced_memory()[1] - self.base))
            self.cur = None


def _traced_backward(Hr, lower, max_bytes=float("inf")):
    import tracemalloc

    tracemalloc.start()
    try:
        rec = _Recorder(Hr.shape[1], max_bytes)
        rec.base = tracemalloc.get_traced_memory()[0]
        try:
            result = X._backward(Hr, lower, meter=rec)
        except M.CostLimit as exc:
            result = exc
        rec.close()
        return result, rec.layers
    finally:
        tracemalloc.stop()


def test_chunked_layers_give_the_same_values_and_orders(monkeypatch):
    """Chunks of a few rows (so every chunk and pair-block boundary is crossed) give the same value and the same
    order as the default chunks, with and without pruning; and the value is the brute force's."""
    rng = np.random.default_rng(21)
    cases = []
    for i in range(36):
        n = int(rng.integers(2, 9))
        H = (M.random_class(n, int(rng.integers(2, min(2 ** n, 96) + 1)), int(rng.integers(2**31)))
             if i % 4 else M.tree_class(int(rng.integers(1, 3)), float(rng.random()), i))
        Hr = _reduced(H)
        if Hr.shape[1]:
            cases.append((H, Hr, X._lower_bound_order(Hr)[0]))
    expected = [(X._backward(Hr, -1), X._backward(Hr, L)) for _, Hr, L in cases]
    monkeypatch.setattr(X, "_CHUNK_CELLS", 64)
    monkeypatch.setattr(X, "_GROUP_CELLS", 40)
    monkeypatch.setattr(X, "_PAIR_BLOCK", 7)
    monkeypatch.setattr(X, "_PAIR_CELLS", 50)
    for (H, Hr, L), (plain, pruned) in zip(cases, expected):
        assert X._backward(Hr, -1) == plain and X._backward(Hr, L) == pruned, H.shape
        if H.shape[1] <= 5:
            assert plain[0] == m_tr_brute(H)


@pytest.mark.parametrize("name, H", [
    ("random 11x512", M.random_class(11, 512, 0)),       # large fronts: 50 MB at its widest layer
    ("random 13x384", M.random_class(13, 384, 0)),
    ("intervals 16", M.intervals(16)),                    # 16 points, small rows: index vectors dominate
    ("random 16x64", M.random_class(16, 64, 0)),          # 12,870 suffix sets in one layer
    ("all 3 x random", M.product(M.all_functions(3), M.random_class(10, 64, 1))),
    ("tree depth 3", M.tree_class(3, 0.3, 1)),
])
def test_memory_model_bounds_the_measured_peak(name, H):
    """Per layer, tracemalloc's peak (every NumPy allocation) is at most the model's; and the model is not
    vacuous where the arrays are large (within 2.5x of the measurement once it is over 40 MB)."""
    Hr = _reduced(H)
    result, layers = _traced_backward(Hr, X._lower_bound_order(Hr)[0])
    assert not isinstance(result, Exception) and layers
    for k, predicted, measured in layers:
        assert measured <= predicted, (name, k, measured, predicted)
    predicted, measured = max(p for _, p, _ in layers), max(m for _, _, m in layers)
    if measured > 40 * 2**20:
        assert predicted < 2.5 * measured, (name, predicted, measured)


def test_solver_stops_before_allocating_past_its_memory_limit():
    """With a limit below what random 12 x 512 needs (155 MB measured), the solver raises CostLimit saying
    what it would need, and the traced peak never passed the limit: it stopped before the allocation."""
    Hr = _reduced(M.random_class(12, 512, 0))
    L = X._lower_bound_order(Hr)[0]
    for limit in (40 * 2**20, 80 * 2**20):
        t = time.process_time()
        exc, layers = _traced_backward(Hr, L, max_bytes=limit)
        assert isinstance(exc, M.CostLimit) and exc.cost["limit"] == "memory", exc
        assert exc.cost["bytes"] > limit == exc.cost["max_bytes"]
        assert f"limit is {limit // 2**20} MB" in str(exc) and "would need" in str(exc)
        assert max(m for _, _, m in layers) <= limit
        if limit == 40 * 2**20:
            assert time.process_time() - t < 1.0


_CHILD = r"""
import json, resource, sys, time
cap = int(sys.argv[1])
import toymodels.transductive as M
M.class_summary(M.random_class(3, 4, 0))  # the imports the solver makes on its first call (pandas, ...), before base
def vm(key):
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith(key))) * 1024
base = vm("VmPeak:")
if cap:
    resource.setrlimit(resource.RLIMIT_AS, (base + cap, base + cap))
H, _ = M.parse_class(sys.stdin.read())
t = time.process_time()
try:
    out = M.class_summary(H)
    out = {"m_tr": out["m_tr"], "ld": out["ld"], "vc": out["vc"]}
except M.CostLimit as exc:
    out = {"refused": exc.cost["limit"], "message": str(exc)}
except MemoryError:
    out = {"memory_error": True}
out.update(cpu=time.process_time() - t, base=base, peak=vm("VmPeak:") - base,
           rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
print(json.dumps(out))
"""


def _solve_in_child(H, cap_bytes):
    """class_summary(H) in a fresh interpreter whose address space is capped at its size after the imports (those
    of the package and those a first small solve makes) plus ``cap_bytes`` (the class arrives as the text a link
    would carry)."""
    import json
    import subprocess
    import sys

    from toymodels.registry import REPO_ROOT

    proc = subprocess.run([sys.executable, "-c", _CHILD, str(int(cap_bytes))], input=M.format_class(H),
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: The worst class found inside the advertised limits (16 points, 1024 hypotheses) that the solver accepts. Searched:
#: random classes n = 8..16 x m = 64..1024 (and every 8-32 rows at the edge of the limit for n = 12..16), all
#: functions on a = 2..6 points x random rows, sparse random rows (density 0.1, 0.25), the presets and depth-3 trees:
#: random 12 x 512 (seed 0) and all functions on 6 points x random 10 x 16 (seed 2) have the largest peaks of the
#: classes solved (traced 155 and 156 MB, model 247 and 204 MB, about 8 s of CPU each).
WORST_ACCEPTED = dict(n=12, m=512, seed=0)


@pytest.mark.parametrize("H, m_tr", [
    (M.random_class(**WORST_ACCEPTED), 8),
    (M.product(M.all_functions(6), M.random_class(10, 16, 2)), 9),  # 16 x 1024, 17,407 characters: as large
], ids=["random 12x512", "all 6 x random 10x16"])
def test_worst_accepted_class_runs_under_a_memory_cap(H, m_tr):
    """The worst accepted classes complete with their address space capped at 400 MB over the interpreter's (the
    hosted server has 2.7 GB for everything and two compute slots), growing by less than MAX_TR_BYTES."""
    out = _solve_in_child(H, 400 * 2**20)
    assert out.get("m_tr") == m_tr and out["ld"] >= out["m_tr"] >= out["vc"], out
    assert out["peak"] <= M.MAX_TR_BYTES, out  # measured: about 206 MB over the interpreter's 359 MB


def test_the_killing_link_is_refused_under_a_memory_cap():
    """The class of the 17,489-character link (16 points x 1024 hypotheses, which needed more than 5 GB) is
    refused with a message, within the same 400 MB cap, instead of being killed."""
    H = M.random_class(16, 1024, 0)
    assert 17_000 < len(M.format_class(H)) <= M.MAX_CLASS_TEXT
    out = _solve_in_child(H, 400 * 2**20)
    assert out.get("refused") == "memory" and "the limit is 256 MB" in out["message"], out
    assert out["peak"] <= M.MAX_TR_BYTES and out["cpu"] < 10, out  # measured: 178 MB, 4 s


def test_parse_class_is_linear_on_maximal_inputs():
    """The longest texts a visitor may send, of every shape, are parsed or refused in a few milliseconds each;
    doubling the text at most about doubles the time (linear, no quadratic step)."""
    N = M.MAX_CLASS_TEXT
    shapes = {
        "1024 rows of 16": M.format_class(M.random_class(16, 1024, 0)),
        "one-digit rows": "0\n" * (M.MAX_CLASS_ROWS // 2) + "1\n" * (M.MAX_CLASS_ROWS // 2),
        "too many rows": "0 " * (N // 2),
        "one long word": "01" * (N // 2),
        "separators only": " ,;\n" * (N // 4),
        "bad character last": "0110\n" * (N // 5 - 1) + "01x1",
        "ragged last": "0110\n" * (N // 5 - 1) + "011",
        "markdown": "[a](http://example.com/x) " * (N // 26),
    }
    for name, text in shapes.items():
        assert len(text) <= N, name
        t = time.perf_counter()
        try:
            M.parse_class(text)
        except InputError:
            pass
        assert time.perf_counter() - t < 0.25, name

    def best_time(text):
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            M.parse_class(text)
            best = min(best, time.perf_counter() - t)
        return best

    rows = M.format_class(M.random_class(16, 1024, 1)).split("\n")
    half, full = "\n".join(rows[:512]), "\n".join(rows)
    assert best_time(full) < 3.0 * best_time(half) + 0.002
