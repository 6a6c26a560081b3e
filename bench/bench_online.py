"""Benchmark: the exact transductive value of toymodels.transductive against what a competent user would write.

    python bench/bench_online.py

The baseline is a plain memoised recursive minimax: for every order of the points, solve the fixed-sequence
game (learner minimises, adversary maximises over realizable labels) by recursion over (version space, round),
version spaces as bitmasks, memoised per order; M_tr is the max over the n! orders. It is exact, short and
what one writes first. Ours is the notes' backward Pareto-front algorithm (batched in NumPy) with an exact
branch-and-bound. Prints CPU seconds (process time, so a busy shared machine inflates them less).
"""
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import toymodels.transductive as M  # noqa: E402
from toymodels.transductive import exact as X  # noqa: E402
from toymodels.transductive import games as Gm  # noqa: E402


def minimax_m_tr(H):
    """Baseline: max over every order of the fixed-sequence game, each solved by a memoised recursive minimax."""
    m, n = H.shape
    ones = [sum(1 << i for i in range(m) if H[i, x]) for x in range(n)]
    full = (1 << m) - 1

    def game_value(order):
        memo = {}

        def val(V, t):
            if t == n:
                return 0
            key = (V, t)
            if key not in memo:
                sides = (V & ~ones[order[t]], V & ones[order[t]])
                memo[key] = min(max((y != yhat) + val(sides[y], t + 1) for y in (0, 1) if sides[y])
                                for yhat in (0, 1))
            return memo[key]

        return val(full, 0)

    return max(game_value(order) for order in itertools.permutations(range(n)))


def cpu(fn, *args):
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def main():
    print("Exact M_tr: ours against a plain memoised recursive minimax over every order (CPU seconds)")
    print(f"{'class':<24}{'n':>3}{'|H|':>6}{'M_tr':>6}{'ours s':>9}{'minimax s':>11}{'speed-up':>10}")
    for name, H in [("thresholds(7)", M.thresholds(7)), ("G", M.class_G()), ("random 7x16", M.random_class(7, 16, 0)),
                    ("random 8x32", M.random_class(8, 32, 0)), ("tree depth 2, p=.5", M.tree_class(2, 0.5, 1))]:
        Gm._solver_for.cache_clear()
        v, t_fast = cpu(lambda h: M.transductive_value(h)[0], H)
        b, t_base = cpu(minimax_m_tr, H)
        assert v == b, (name, v, b)
        print(f"{name:<24}{H.shape[1]:>3}{len(H):>6}{v:>6}{t_fast:>9.3f}{t_base:>11.2f}{t_base / t_fast:>9.0f}x")
    print()
    for label, H in [("14 points x 64 hypotheses (random, seed 1)", M.random_class(14, 64, 1)),
                     ("14 points x 64 hypotheses (random, seed 0)", M.random_class(14, 64, 0)),
                     ("G x G (14 x 64)", M.product(M.class_G(), M.class_G())),
                     ("depth-3 tree class (15 x 16)", M.tree_class(3, 0.3, 1))]:
        Hc = M.as_class(H)
        pts = X._reduce_points(Hc)
        (v, _), t = cpu(M.transductive_value, H)
        (v0, _), t0 = cpu(X._backward, Hc[:, pts], -1)
        print(f"transductive_value, {label}: M_tr = {v}, {t:.3f} s CPU (target 0.3 s); "
              f"without the branch-and-bound {t0:.3f} s")
    H16 = M.random_class(16, 256, 1)
    Gm._solver_for.cache_clear()
    d, t = cpu(M.littlestone_dimension, H16)
    print(f"littlestone_dimension, 16 points x 256 hypotheses: LD = {d}, {t:.4f} s CPU (target 0.5 s)")


if __name__ == "__main__":
    main()
