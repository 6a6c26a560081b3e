"""Training the ρ toy: on-policy policy gradient with shared and per-problem logits, and the distillation arm."""
from __future__ import annotations

import numpy as np

from toymodels.topic import as_progress

from .config import ALGORITHMS, ToyConfig
from .policy import advantages, base_logits, softmax, teacher_logits


def train_rl(problems: dict, theta0: np.ndarray, *, algorithms, lrs, kls, group_sizes, rhos, steps: int,
             prompts_per_step: int, checkpoints, rng: np.random.Generator, progress=None) -> np.ndarray:
    """Train M policies at once (a leading instance axis) with on-policy policy gradient; return their
    per-problem strategy distributions at each checkpoint, shape (M, C, N, S). All instances share the random
    draws (prompts and uniforms), so instance m's run is the same whatever else is trained beside it.

    Instance m uses ``algorithms[m]``, step size ``lrs[m]``, KL coefficient ``kls[m]``, group size
    ``group_sizes[m]`` and capacity share ``rhos[m]``. The policy has shared logits theta and learnable
    per-problem logits phi_i, pi(.|i) = softmax(theta + u_i + phi_i), both starting at theta_0 and 0.

    One step: draw ``prompts_per_step`` problems, sample G strategies from each, reward them with the verifier,
    and take the policy-gradient step of each prompt b,
    g_b = (1/G) sum_g A_bg grad_z log pi(s_bg | i_b) - beta grad_z KL(pi(.|i_b) || pi_base(.|i_b)).
    A share rho of it is stored per problem and 1 - rho is shared:

        phi_{i_b} += lr * rho * g_b            theta += lr * (1 - rho) * (1/B) sum_b g_b

    rho = 0 is a fully shared policy (every update is interference between problems); rho = 1 is the tabular
    control (independent per-problem logits; nothing transfers). The policy is on-policy (one update per
    batch), so PPO/GRPO's ratio is 1 and clipping never acts.
    """
    p = as_progress(progress)
    u, correct, q = problems["u"], problems["correct"], problems["q"]
    N, S = u.shape
    M = len(algorithms)
    algorithms = list(algorithms)
    lrs, kls = np.asarray(lrs, float), np.asarray(kls, float)
    gs, rho = np.asarray(group_sizes, int), np.asarray(rhos, float)
    Gmax, B = int(gs.max()), int(prompts_per_step)
    checkpoints = sorted(set(int(c) for c in checkpoints))
    theta = np.broadcast_to(theta0, (M, S)).copy()
    phi = np.zeros((M, N, S))
    ref_logp = np.log(softmax(theta0 + u))  # (N, S) base policy
    gmask = (np.arange(Gmax)[None, :] < gs[:, None])[:, None, :]  # (M, 1, Gmax)
    algo_sel = {a: np.array([x == a for x in algorithms])[:, None, None] for a in ALGORITHMS}
    m_idx = np.arange(M)[:, None]
    eye = np.eye(S)
    snaps = []

    def snapshot():
        snaps.append(softmax(theta[:, None, :] + u[None] + phi))

    if 0 in checkpoints:
        snapshot()
    for step in range(1, steps + 1):
        # common random numbers: every instance sees the same prompts and the same uniforms, so an instance's
        # run does not depend on which other instances share the batch, and two instances differ only by their
        # settings, not by luck
        idx = np.broadcast_to(rng.integers(0, N, size=B), (M, B))
        z = theta[:, None, :] + u[idx] + phi[m_idx, idx]                       # (M, B, S)
        pi = softmax(z)
        cdf = np.cumsum(pi, axis=-1)
        s = (rng.random((B, Gmax))[None, :, :, None] > cdf[:, :, None, :]).sum(-1)  # (M, B, G) inverse CDF
        np.minimum(s, S - 1, out=s)
        ok = np.take_along_axis(correct[idx], s, axis=-1)
        r = (ok & (rng.random((B, Gmax))[None] < q[idx][..., None])).astype(np.float64)
        A = np.zeros_like(r)
        for a, sel in algo_sel.items():
            if sel.any():
                A = np.where(sel, advantages(r, a, gmask), A)
        # grad of (1/G) sum_g A_g log pi(s_g) w.r.t. the logits z: (1/G) sum_g A_g (e_{s_g} - pi)
        W = np.einsum("mbg,mbgs->mbs", A, eye[s])
        grad = (W - A.sum(-1)[..., None] * pi) / gs[:, None, None]
        if kls.any():
            logpi = np.log(np.maximum(pi, 1e-300))
            diff = logpi - ref_logp[idx]
            kl = (pi * diff).sum(-1, keepdims=True)
            grad -= kls[:, None, None] * pi * (diff - kl)  # exact grad_z KL(pi || pi_ref)
        step_size = lrs[:, None, None] * grad                                  # (M, B, S)
        theta += (1.0 - rho)[:, None] * step_size.mean(axis=1)
        if rho.any():
            np.add.at(phi, (np.broadcast_to(m_idx, idx.shape), idx), rho[:, None, None] * step_size)
        if step in checkpoints:
            snapshot()
        if step % 25 == 0:
            p(step / steps, f"RL step {step}/{steps}")
    return np.stack(snaps, axis=1)


def distill(problems: dict, cfg: ToyConfig, rng: np.random.Generator, checkpoints, progress=None) -> np.ndarray:
    """SFT of the shared logits on the teacher's samples: ascend (1/(B G)) sum log pi_theta(s_bg | i_b) with
    s_bg ~ pi_teacher(. | i_b). Returns strategy distributions (C, N, S) at the checkpoints."""
    p = as_progress(progress)
    u = problems["u"]
    N, S = u.shape
    theta = base_logits(cfg).copy()
    teacher = softmax(teacher_logits(cfg) + u)
    tcdf = np.cumsum(teacher, axis=-1)
    G, B = cfg.group_size, cfg.prompts_per_step
    snaps = [softmax(theta + u)] if 0 in checkpoints else []
    for step in range(1, cfg.distill_steps + 1):
        idx = rng.integers(0, N, size=B)
        s = np.minimum((rng.random((B, G))[..., None] > tcdf[idx][:, None, :]).sum(-1), S - 1)
        pi = softmax(theta + u[idx])
        counts = np.eye(S)[s].sum(1)                       # (B, S)
        theta += cfg.distill_lr * ((counts - G * pi) / G).mean(0)
        if step in checkpoints:
            snaps.append(softmax(theta + u))
        if step % 50 == 0:
            p(step / cfg.distill_steps, "distillation")
    return np.stack(snaps) if snaps else np.empty((0, N, S))
