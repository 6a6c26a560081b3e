"""Seeded one-pass minibatch SGD on the power-law model (``powerlaw``), vectorised over seeds and model sizes.

Every step draws a fresh batch of B Gaussian samples, x_i = Λ^½ z_i with z_i ~ N(0, I_p), and label noise
n_i ~ N(0, ζ(b, p + 1)) (the features the model cannot see), and takes

    θ <- θ - η_t ĝ,   ĝ = (1/B) Σ_i x_i (x_i·θ - y_i) = Λ^½ Zᵀ w / B,   w = Z u - n,   u = Λ^½ (θ - β).

Two samplers of the same step:

* ``plain``: draws Z (B × p) and computes Zᵀ w: B p normals a step, the textbook minibatch.
* ``fast``: the same step drawn in O(p + B): with û = u/‖u‖, Z u = ‖u‖ z0 for z0 = Z û ~ N(0, I_B), and given
  z0 the part of Zᵀ w orthogonal to û is N(0, ‖w‖² (I - û ûᵀ)), independent of z0. So
  ĝ = Λ^½ [û (z0·w) + ‖w‖ (ξ - û (û·ξ))] / B with ξ ~ N(0, I_p): exactly the plain step's distribution,
  16x fewer normals at B = 16. The tests check both against the exact recursion and against each other.

Each (size, seed) pair has its own random stream (``SeedSequence([seed, p, sampler])``), so a run of seed s at
size p gives the same curve whatever other sizes or seeds run beside it. The loss recorded is the population
loss of each run's θ, L = ‖u‖² + ζ(b, p + 1): exact, no test set.
"""
from __future__ import annotations

import numpy as np

from toymodels.topic import as_progress

from .powerlaw import initial_moments, lr_schedule, spectrum, tail_variance

SAMPLERS = ("fast", "plain")
_TAG = {"fast": 1, "plain": 2}
_BLOCK = 32  # steps of random numbers drawn at once per stream


def _streams(sizes, seeds, sampler):
    return [[np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(s), int(p), _TAG[sampler]])))
             for s in seeds] for p in sizes]


def simulate(sizes, horizons, schedule: str, peak: float, batch: int, a: float, b: float, seeds,
             record_steps, sampler: str = "fast", progress=None) -> dict:
    """Run SGD for every size in ``sizes`` (each for its own ``horizons[i]`` steps, on its own schedule) and
    every seed in ``seeds``, all at once.

    ``record_steps[i]``: the steps (0..horizons[i], sorted) at which size i's loss is recorded. Returns
    ``loss``: a list, per size, of (S, len(record_steps[i])) population losses, and ``final_delta``: per size,
    (S, p) the last θ - β.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}")
    p_bar = as_progress(progress)
    sizes = [int(p) for p in sizes]
    horizons = [int(t) for t in horizons]
    seeds = [int(s) for s in seeds]
    k, n_seeds, total = len(sizes), len(seeds), sum(sizes)
    starts = np.cumsum([0] + sizes[:-1])
    seg = np.repeat(np.arange(k), sizes)                                               # (P,) size of each coordinate
    t_max = max(horizons)
    sq = np.sqrt(np.concatenate([spectrum(p, a) for p in sizes]))                      # (P,) Λ^½
    noise_sd = np.sqrt([tail_variance(p, b) for p in sizes])                           # (k,)
    tails = noise_sd ** 2
    delta = -np.tile(np.sqrt(np.concatenate([initial_moments(p, a, b) for p in sizes])), (n_seeds, 1))  # θ = 0
    lrs = np.zeros((k, t_max))
    for i, steps in enumerate(horizons):
        lrs[i, :steps] = lr_schedule(schedule, steps, peak)                            # η = 0 after the horizon
    lrs_by_step = np.ascontiguousarray(lrs.T)                                          # (T, k)
    sq_over_b = sq / batch
    # Where each size records: one buffer over the union of all record steps.
    union = np.unique(np.concatenate([np.asarray(r, dtype=int) for r in record_steps]))
    row_of = -np.ones(t_max + 1, dtype=int)
    row_of[union] = np.arange(len(union))
    recorded = np.empty((len(union), n_seeds, k))
    # One block of random numbers for every stream, laid out so that each step's draws are views:
    # fast: [ξ for all coordinates | z0 and n for every size]; plain: per size [Z (B p) | n (B)].
    streams = _streams(sizes, seeds, sampler)
    if sampler == "fast":   # per stream: (column where its slice starts, how many of its numbers go there)
        width = total + 2 * batch * k
        cols = [((s0, p), (total + 2 * batch * i, 2 * batch)) for i, (s0, p) in enumerate(zip(starts, sizes))]
    else:
        width = sum(batch * p + batch for p in sizes)
        offs = np.cumsum([0] + [batch * p + batch for p in sizes[:-1]])
        cols = [((o, batch * p + batch),) for o, p in zip(offs, sizes)]
    buf = np.empty((_BLOCK, n_seeds, width))
    every = max(1, t_max // 100)
    for t in range(t_max + 1):
        u = sq * delta                                                                 # (S, P) Λ^½ δ
        u2 = np.add.reduceat(u * u, starts, axis=1)                                    # (S, k) ‖u‖² = L - ζ
        if row_of[t] >= 0:
            recorded[row_of[t]] = u2 + tails
        if t == t_max:
            break
        j = t % _BLOCK
        if j == 0:                                                                     # the next block of draws
            for i in range(k):
                n_i = sum(n for _, n in cols[i])
                for s in range(n_seeds):
                    block = streams[i][s].standard_normal((_BLOCK, n_i))
                    used = 0
                    for start, n in cols[i]:
                        buf[:, s, start:start + n] = block[:, used:used + n]
                        used += n
        if sampler == "fast":
            step = _fast_direction(u, u2, starts, seg, buf[j, :, :total],
                                   buf[j, :, total:].reshape(n_seeds, k, 2, batch), noise_sd)
        else:
            step = _plain_direction(u, starts, sizes, buf[j], noise_sd, batch)
        step *= lrs_by_step[t][seg] * sq_over_b                                        # η_t Λ^½ Zᵀw / B
        delta -= step
        if t % every == 0:
            p_bar(t / t_max, f"step {t:,} of {t_max:,}")
    out_loss = []
    for i, r in enumerate(record_steps):
        out_loss.append(recorded[row_of[np.asarray(r, dtype=int)], :, i].T.copy())   # (S, n_i)
    final = [delta[:, s0:s0 + p].copy() for s0, p in zip(starts, sizes)]
    p_bar(1.0, "done")
    return {"loss": out_loss, "final_delta": final}


def _fast_direction(u, u2, starts, seg, xi, zn, noise_sd):
    """Zᵀ w for every (seed, size), drawn in O(p + B) (see the module docstring). ``xi``: (S, P) ξ; ``zn``:
    (S, k, 2, B) z0 and the noise draws. (S, P)"""
    nrm = np.sqrt(u2)                                                                  # (S, k)
    uhat = u / np.where(nrm > 0, nrm, 1.0)[:, seg]                                     # û (0 where u = 0)
    z0 = zn[:, :, 0]                                                                   # (S, k, B)
    w = nrm[..., None] * z0 - noise_sd[None, :, None] * zn[:, :, 1]                    # Z u - noise
    zw = np.einsum("skb,skb->sk", z0, w)                                               # z0·w
    wn = np.sqrt(np.einsum("skb,skb->sk", w, w))                                       # ‖w‖
    uxi = np.add.reduceat(uhat * xi, starts, axis=1)                                   # û·ξ
    return uhat * (zw - wn * uxi)[:, seg] + xi * wn[:, seg]


def _plain_direction(u, starts, sizes, draws, noise_sd, batch):
    """Zᵀ w with Z drawn in full (B × p per seed and size): the reference the fast sampler must match. (S, P)"""
    out = np.empty_like(u)
    off = 0
    for i, (s0, p) in enumerate(zip(starts, sizes)):
        z = draws[:, off:off + batch * p].reshape(-1, batch, p)                        # (S, B, p)
        n = draws[:, off + batch * p:off + batch * p + batch]                          # (S, B)
        off += batch * p + batch
        w = np.einsum("sbp,sp->sb", z, u[:, s0:s0 + p]) - noise_sd[i] * n
        out[:, s0:s0 + p] = np.einsum("sbp,sb->sp", z, w)
    return out
