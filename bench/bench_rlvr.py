"""Time pass@k over 10,000 problems x every k <= 1024 against the straightforward math.comb loop, and the typed
toy's trainer against a one-prompt-at-a-time loop.

Run: python bench/bench_rlvr.py   (prints the timings and their ratios; one thread)
The loop is timed on a subset of k and scaled up (the full loop takes minutes); both results are checked equal
on that subset.
"""
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toymodels.rlvr import pass_at_k, pass_at_k_curve  # noqa: E402


def comb_loop(n, c, k):
    return [1.0 if n - ci < k else 1.0 - math.comb(n - ci, k) / math.comb(n, k) for ci in c]


def main(problems=10_000, n=1024, loop_ks=(1, 16, 256, 1024)):
    rng = np.random.default_rng(0)
    c = rng.integers(0, n + 1, problems)
    ks = np.arange(1, n + 1)
    t_grid = t_curve = float("inf")
    for _ in range(3):  # best of three: the first call also pays for page-faulting fresh memory
        t = time.perf_counter()
        grid = pass_at_k(n, c[:, None], ks[None, :])      # (problems, k): every problem at every k
        t_grid = min(t_grid, time.perf_counter() - t)
        t = time.perf_counter()
        curve = pass_at_k_curve(n, c, ks)                 # mean over problems at every k
        t_curve = min(t_curve, time.perf_counter() - t)
    t = time.perf_counter()
    ref = {k: comb_loop(n, c, k) for k in loop_ks}
    t_loop = (time.perf_counter() - t) / len(loop_ks) * len(ks)   # extrapolated to every k
    for k in loop_ks:
        assert np.allclose(grid[:, k - 1], ref[k], rtol=1e-10, atol=1e-12), k
        assert abs(curve[k - 1] - np.mean(ref[k])) < 1e-10, k
    print(f"pass_at_k, {problems:,} problems x all k <= {n}: {t_grid:.3f} s (full grid), {t_curve:.3f} s "
          "(pass_at_k_curve, mean over problems); best of 3")
    print(f"math.comb loop (measured on k in {list(loop_ks)}, scaled to all {n} k): {t_loop:.1f} s")
    print(f"speed-up: {t_loop / t_grid:.0f}x (grid), {t_loop / t_curve:.0f}x (curve)")
    return t_grid, t_curve, t_loop




def loop_train_typed(problems, theta0, n_types, lr, group_size, steps, prompts_per_step, rng):
    """The straightforward trainer a careful user would write: one prompt and one rollout at a time (GRPO)."""
    u, correct, q, types = problems["u"], problems["correct"], problems["q"], problems["type"]
    N, S = u.shape
    theta = np.tile(theta0, (n_types, 1))
    for _ in range(steps):
        idx = rng.integers(0, N, size=prompts_per_step)
        u_s, u_r = rng.random((prompts_per_step, group_size)), rng.random((prompts_per_step, group_size))
        steps_by_type = {}
        for b, i in enumerate(idx):
            z = theta[types[i]] + u[i]
            pi = np.exp(z - z.max())
            pi /= pi.sum()
            cdf = np.cumsum(pi)
            s = [min(int(np.searchsorted(cdf, x, side="left")), S - 1) for x in u_s[b]]
            r = np.array([float(correct[i, sg] and u_r[b, g] < q[i]) for g, sg in enumerate(s)])
            sd = r.std(ddof=1)
            A = (r - r.mean()) / sd if sd > 1e-12 else np.zeros_like(r)
            g_b = np.zeros(S)
            for g, sg in enumerate(s):
                g_b[sg] += A[g]
                g_b -= A[g] * pi
            steps_by_type.setdefault(types[i], []).append(lr * g_b / group_size)
        for t, st in steps_by_type.items():
            theta[t] += np.mean(st, axis=0)
    return theta


def typed(steps=200):
    """The typed toy's trainer (vectorised over the batch) against the one-prompt-at-a-time loop, and one whole
    default seed of the typed toy (train, distil, sample 1024 completions of 1024 problems at 7 checkpoints)."""
    from toymodels.rlvr import TypedConfig, base_logits, train_typed, typed_seed, typed_world

    cfg = TypedConfig()
    _, train, _ = typed_world(cfg)
    t = time.process_time()
    vec = train_typed(train, base_logits(cfg), cfg.n_types, algorithm="grpo", lr=cfg.lr, kl=0.0, group_size=8,
                      steps=steps, prompts_per_step=64, checkpoints=[steps], rng=np.random.default_rng(0))[-1]
    t_vec = time.process_time() - t
    t = time.process_time()
    loop = loop_train_typed(train, base_logits(cfg), cfg.n_types, cfg.lr, 8, steps, 64, np.random.default_rng(0))
    t_loop = time.process_time() - t
    assert np.allclose(vec, loop, rtol=1e-8, atol=1e-10), "the two trainers disagree"
    t = time.process_time()
    typed_seed(cfg)
    t_seed = time.process_time() - t
    print(f"train_typed, {steps} GRPO steps (64 prompts x 8 rollouts): {t_vec:.3f} CPU-s; the per-prompt loop: "
          f"{t_loop:.2f} CPU-s ({t_loop / t_vec:.0f}x)")
    print(f"one default seed of the typed toy (800 steps, distillation, 2 x 512 problems x 1024 samples at 7 "
          f"checkpoints): {t_seed:.2f} CPU-s")
    return t_vec, t_loop, t_seed


if __name__ == "__main__":
    main()
    typed()
