"""Training the toys with on-policy policy gradient (GRPO, RLOO, REINFORCE: App. A.1), and the distillation arm:
the ρ toy (shared and per-problem logits) and the typed toy (logits shared within a type of problem)."""
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


def _per_type_mean(theta: np.ndarray, types: np.ndarray, steps: np.ndarray) -> None:
    """theta_t += mean of ``steps`` (B, S) over the batch's prompts of type t, in place; a type with no prompt in
    the batch does not move."""
    K = theta.shape[0]
    count = np.bincount(types, minlength=K).astype(np.float64)
    total = np.zeros_like(theta)
    np.add.at(total, types, steps)
    theta += total / np.maximum(count, 1.0)[:, None]


def train_typed(problems: dict, theta0: np.ndarray, n_types: int, *, algorithm: str, lr: float, kl: float,
                group_size: int, steps: int, prompts_per_step: int, checkpoints, rng: np.random.Generator,
                progress=None) -> np.ndarray:
    """Train the typed toy's policy pi(s | i) = softmax(theta_{t_i} + u_i) with on-policy policy gradient;
    return the type logits theta at each checkpoint, shape (C, K, S).

    One step: draw ``prompts_per_step`` problems, sample G strategies from each, reward them with the verifier
    (r = 1 with probability q_i if the strategy is correct for problem i, else 0), and take each prompt's
    policy-gradient step g_b = (1/G) sum_g A_bg grad_z log pi(s_bg | i_b) - beta grad_z KL(pi || pi_base)
    (App. A.1's advantages). A type's logits move along the mean step of its own prompts in the batch,

        theta_t += lr * mean_{b : t_b = t} g_b,

    so a type's step size does not depend on how many types there are (with K = 1 this is the ρ toy at ρ = 0,
    draw for draw). Nothing is stored per problem: what RL learns on a training problem is what it does on
    every problem of that type, trained on or not.
    """
    p = as_progress(progress)
    u, correct, q, types = problems["u"], problems["correct"], problems["q"], problems["type"]
    N, S = u.shape
    G, B = int(group_size), int(prompts_per_step)
    checkpoints = sorted(set(int(c) for c in checkpoints))
    theta = np.broadcast_to(theta0, (n_types, S)).copy()
    ref_logp = np.log(softmax(theta0 + u))                                   # (N, S) the base policy
    eye = np.eye(S)
    snaps = [theta.copy()] if 0 in checkpoints else []
    for step in range(1, steps + 1):
        # the same stream of draws as ``train_rl``: prompts, then the sampling and the reward uniforms
        idx = rng.integers(0, N, size=B)
        pi = softmax(theta[types[idx]] + u[idx])                             # (B, S)
        cdf = np.cumsum(pi, axis=-1)
        s = (rng.random((B, G))[:, :, None] > cdf[:, None, :]).sum(-1)      # (B, G) inverse CDF
        np.minimum(s, S - 1, out=s)
        ok = np.take_along_axis(correct[idx], s, axis=-1)
        r = (ok & (rng.random((B, G)) < q[idx][:, None])).astype(np.float64)
        A = advantages(r, algorithm)
        # grad of (1/G) sum_g A_g log pi(s_g) w.r.t. the logits z: (1/G) sum_g A_g (e_{s_g} - pi)
        grad = (np.einsum("bg,bgs->bs", A, eye[s]) - A.sum(-1)[:, None] * pi) / G
        if kl:
            logpi = np.log(np.maximum(pi, 1e-300))
            diff = logpi - ref_logp[idx]
            grad -= kl * pi * (diff - (pi * diff).sum(-1, keepdims=True))    # exact grad_z KL(pi || pi_ref)
        _per_type_mean(theta, types[idx], lr * grad)
        if step in checkpoints:
            snaps.append(theta.copy())
        if step % 25 == 0:
            p(step / steps, f"RL step {step}/{steps}")
    return np.stack(snaps) if snaps else np.empty((0, n_types, S))


def distill_typed(problems: dict, cfg, n_types: int, rng: np.random.Generator, progress=None) -> np.ndarray:
    """SFT of the typed policy on a teacher's samples (the distillation arm, paper Fig. 7): ascend
    mean_b (1/G) sum_g log pi_theta(s_bg | i_b) with s_bg ~ pi_teacher(. | i_b), each type along the mean step of
    its prompts (as ``train_typed``). The teacher is the base prior with the novel strategies lifted to
    ``teacher_novel_mass`` (``teacher_logits``). Returns the type logits after ``cfg.distill_steps`` steps (K, S)."""
    p = as_progress(progress)
    u, types = problems["u"], problems["type"]
    N, S = u.shape
    theta = np.broadcast_to(base_logits(cfg), (n_types, S)).copy()
    tcdf = np.cumsum(softmax(teacher_logits(cfg) + u), axis=-1)
    G, B = cfg.group_size, cfg.prompts_per_step
    eye = np.eye(S)
    for step in range(1, cfg.distill_steps + 1):
        idx = rng.integers(0, N, size=B)
        s = np.minimum((rng.random((B, G))[..., None] > tcdf[idx][:, None, :]).sum(-1), S - 1)
        pi = softmax(theta[types[idx]] + u[idx])
        counts = eye[s].sum(1)                                               # (B, S)
        _per_type_mean(theta, types[idx], cfg.distill_lr * (counts - G * pi) / G)
        if step % 50 == 0:
            p(step / cfg.distill_steps, "distillation")
    return theta
