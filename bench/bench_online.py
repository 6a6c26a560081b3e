"""Benchmark: the exact solvers of toymodels.online against brute force (every order, n ≤ 8).

    python bench/bench_online.py

Prints CPU seconds (process time, so a busy shared machine inflates them less) and the speed-up ratio.
"""
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toymodels import online as M  # noqa: E402


def brute_m_tr(H):
    """max over every permutation of W(H, 1), each order evaluated by the comb recursion from scratch."""
    best = 0
    for order in itertools.permutations(range(H.shape[1])):
        best = max(best, M.RankRule(H, order).rank(M.full_mask(H), 0))
    return best


def cpu(fn, *args):
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def main():
    print(f"{'class':<28}{'n':>3}{'|H|':>6}{'M_tr':>6}{'fast s':>9}{'brute s':>9}{'ratio':>8}")
    for name, H in [("thresholds(7)", M.thresholds(7)), ("G", M.class_G()), ("random 7x16", M.random_class(7, 16, 0)),
                    ("random 8x32", M.random_class(8, 32, 0)), ("tree depth 2, p=.5", M.tree_class(2, 0.5, 1))]:
        M._solver_for.cache_clear()
        v, t_fast = cpu(lambda h: M.transductive_value(h)[0], H)
        b, t_brute = cpu(brute_m_tr, H)
        assert v == b, (name, v, b)
        print(f"{name:<28}{H.shape[1]:>3}{len(H):>6}{v:>6}{t_fast:>9.3f}{t_brute:>9.2f}{t_brute / t_fast:>8.0f}x")
    print()
    H14 = M.random_class(14, 64, 1)
    (v, _), t = cpu(M.transductive_value, H14)
    print(f"transductive_value, 14 points x 64 hypotheses: M_tr = {v}, {t:.3f} s CPU (target 0.3 s)")
    GG = M.product(M.class_G(), M.class_G())
    (v, _), t = cpu(M.transductive_value, GG)
    print(f"transductive_value, G x G (14 x 64): M_tr = {v}, {t:.3f} s CPU")
    H16 = M.random_class(16, 256, 1)
    M._solver_for.cache_clear()
    d, t = cpu(M.littlestone_dimension, H16)
    print(f"littlestone_dimension, 16 points x 256 hypotheses: LD = {d}, {t:.4f} s CPU (target 0.5 s)")


if __name__ == "__main__":
    main()
