"""RLVR: the pass@k estimator (paper Eq. 2) against exact integer arithmetic, Monte Carlo over subsets and the
straightforward loop; the crossover and k-grid helpers."""
import math
import time
from fractions import Fraction

import numpy as np
import pytest

from toymodels import rlvr as M
from toymodels.registry import REPO_ROOT as ROOT
from toymodels.rlvr import passk
from toymodels.topic import InputError


def _exact(n, c, k) -> Fraction:
    return Fraction(1) if n - c < k else 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_pass_at_k_matches_exact_comb_on_random_small_cases():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 40, 400)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, n + 1)
    got = M.pass_at_k(n, c, k)
    want = np.array([float(_exact(*map(int, t))) for t in zip(n, c, k)])
    assert got.shape == (400,)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_pass_at_k_hand_worked_and_edges():
    assert M.pass_at_k(4, 1, 2) == 0.5                      # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert M.pass_at_k(5, 2, 2) == pytest.approx(0.7)       # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert M.pass_at_k(10, 0, 7) == 0.0                     # c = 0
    assert M.pass_at_k(10, 10, 1) == 1.0                    # c = n
    assert M.pass_at_k(10, 4, 7) == 1.0                     # n - c < k
    assert M.pass_at_k(10, 3, 1) == pytest.approx(0.3)      # pass@1 = c/n
    assert isinstance(M.pass_at_k(10, 3, 2), float)
    # huge n: C(n-1, k)/C(n, k) = (n-k)/n, so pass@k = k/n, with no overflow
    assert M.pass_at_k(100_000, 1, 50_000) == pytest.approx(0.5, rel=1e-9)
    # broadcasting problems x ks
    out = M.pass_at_k(np.array([[8], [8]]), np.array([[0], [8]]), np.array([[1, 2, 8]]))
    assert out.shape == (2, 3) and out[0].tolist() == [0, 0, 0] and out[1].tolist() == [1, 1, 1]


def test_pass_at_k_monte_carlo_subsets():
    """pass@k is the chance that k samples drawn without replacement from n contain a correct one."""
    rng = np.random.default_rng(1)
    for n, c, k in [(20, 3, 5), (50, 1, 10), (16, 8, 2), (100, 5, 30)]:
        trials = 40_000
        draws = np.argsort(rng.random((trials, n)), axis=1)[:, :k]  # k distinct indices per trial
        mc = (draws < c).any(axis=1).mean()                        # samples 0..c-1 are the correct ones
        se = math.sqrt(mc * (1 - mc) / trials) + 1e-4
        assert abs(mc - M.pass_at_k(n, c, k)) < 5 * se, (n, c, k, mc)


@pytest.mark.parametrize("args, match", [
    ((5, 2, 6), "k > n"), ((5, 6, 1), "c > n"), ((-1, 0, 1), "non-negative"), ((5, -1, 1), "non-negative"),
    ((5, 1, -2), "non-negative"), ((5.5, 1, 1), "whole"), ((np.array([5, 3]), np.array([1, 4]), 1), "c > n"),
])
def test_pass_at_k_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        M.pass_at_k(*args)


def test_curve_matches_loop_and_validates():
    rng = np.random.default_rng(2)
    c = rng.integers(0, 65, 300)
    ks = [1, 2, 5, 17, 64]
    got = M.pass_at_k_curve(64, c, ks)
    want = [M.pass_at_k_loop(64, c, k) for k in ks]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    n = rng.integers(10, 30, 50)
    c2 = rng.integers(0, n + 1)
    np.testing.assert_allclose(M.pass_at_k_curve(n, c2, [1, 10]),
                               [np.mean(c2 / n), np.mean([float(_exact(int(a), int(b), 10)) for a, b in zip(n, c2)])])
    with pytest.raises(ValueError, match="k > n"):
        M.pass_at_k_curve(n, c2, [11])


def test_pass_at_k_is_fast():
    """10,000 problems x every k <= 1024 in well under a second (generous bound: shared CI cores)."""
    rng = np.random.default_rng(0)
    c = rng.integers(0, 1025, 10_000)
    ks = np.arange(1, 1025)
    t = time.perf_counter()
    grid = M.pass_at_k(1024, c[:, None], ks[None, :])
    curve = M.pass_at_k_curve(1024, c, ks)
    elapsed = time.perf_counter() - t
    assert grid.shape == (10_000, 1024)
    np.testing.assert_allclose(grid.mean(0), curve, rtol=1e-10)
    assert elapsed < 3.0, elapsed


def test_log_gamma_path_for_huge_n_matches_product_form():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 3000, 300)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, n + 1)
    np.testing.assert_allclose(passk._pass_at_k_lgamma(n, c, k), M.pass_at_k(n, c, k), rtol=1e-9, atol=1e-11)
    # the curve switches to it when the table would be too big, with the same answer
    n2 = np.full(400, 90_000)
    c2 = rng.integers(0, 90_001, 400)
    ks = [1, 10, 1000, 90_000]
    np.testing.assert_allclose(M.pass_at_k_curve(n2, c2, ks),
                               passk._pass_at_k_lgamma(n2[:, None], c2[:, None], np.array(ks)[None]).mean(0))
    assert M.pass_at_k_curve(n2, c2, [1])[0] == pytest.approx(np.mean(c2 / n2))


def test_exact_and_crossover_helpers():
    np.testing.assert_allclose(M.pass_at_k_exact([0.5, 0.0], [1, 2]), [0.25, 0.375])
    assert M.crossover_k([1, 2, 4, 8], [0.1, 0.2, 0.5, 0.9], [0.3, 0.4, 0.5, 0.6]) == 4
    assert M.crossover_k([1, 2], [0.1, 0.2], [0.3, 0.4]) is None
    assert M.crossover_k([1, 2, 4], [0.1, 0.5, 0.9], [0.3, 0.5, 0.6]) == 2    # a tie that turns into a lead
    assert M.crossover_k([1, 2, 4], [0.1, 0.5, 1.0], [0.3, 0.6, 1.0]) is None  # curves that only meet at the top


def test_estimator_rejects_overflowing_counts():
    with pytest.raises(InputError, match="too large"):
        M.pass_at_k(1e300, 1, 1)
    with pytest.raises(InputError, match="too large"):
        M.pass_at_k_curve(np.uint64(2**64 - 1), [1], [1])


@pytest.mark.slow
def test_benchmark_against_math_comb_loop():
    """The timing benchmark (make bench): prints pass_at_k's time and its speed-up over the math.comb loop."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_rlvr", ROOT / "bench" / "bench_rlvr.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    t_grid, t_curve, t_loop = bench.main()
    assert t_grid < 1.0 and t_loop / t_grid > 10

