"""The ρ toy's math (paper notes §3): problems, the base policy, the verifier, the advantages of App. A.1
and sampling completions for the pass@k estimator."""
from __future__ import annotations

import numpy as np

from .config import ALGORITHMS, ToyConfig


def make_problems(cfg: ToyConfig, rng: np.random.Generator) -> dict:
    """Offsets u (N, S), the correct-strategy mask (N, S) and execution success rates q (N,)."""
    N, S, E = cfg.n_problems, cfg.n_strategies, cfg.n_novel
    native = S - E
    u = rng.normal(0.0, cfg.offset_scale, size=(N, S)) if cfg.offset_scale > 0 else np.zeros((N, S))
    prior = 1.0 / np.arange(1, native + 1)
    primary = rng.choice(native, size=N, p=prior / prior.sum())
    correct = np.zeros((N, S), dtype=bool)
    correct[np.arange(N), primary] = True
    if E:
        correct[:, native:] = rng.random((N, E)) < cfg.novel_correct_prob
    q = rng.beta(cfg.q_alpha, cfg.q_beta, size=N)
    return {"u": u, "correct": correct, "q": q, "primary": primary}


def base_logits(cfg: ToyConfig) -> np.ndarray:
    """theta_0[s] = -zipf ln s, minus novel_gap on the last n_novel strategies."""
    s = np.arange(1, cfg.n_strategies + 1)
    theta = -cfg.zipf * np.log(s)
    if cfg.n_novel:
        theta[-cfg.n_novel:] -= cfg.novel_gap
    return theta


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def success_prob(probs: np.ndarray, problems: dict) -> np.ndarray:
    """p_i = q_i * sum_{s correct for i} pi(s | i): the chance one sampled completion is verified correct."""
    return (probs * problems["correct"]).sum(-1) * problems["q"]


def advantages(r: np.ndarray, algorithm: str, mask: np.ndarray | None = None) -> np.ndarray:
    """Per-rollout advantages for groups of rewards along the last axis (paper App. A.1).

    * GRPO:      A_i = (r_i - mean r) / std r       (sample std; A = 0 when every reward in the group is equal)
    * RLOO:      A_i = r_i - (1/(G-1)) sum_{j != i} r_j
    * REINFORCE: A_i = r_i                          (no baseline)

    ``mask`` (same shape, broadcastable) marks the valid rollouts when groups of different sizes share an array.

    >>> advantages(np.array([1., 0., 0., 0.]), "rloo").tolist()
    [1.0, -0.3333333333333333, -0.3333333333333333, -0.3333333333333333]
    """
    r = np.asarray(r, dtype=np.float64)
    m = np.ones_like(r) if mask is None else np.broadcast_to(mask, r.shape).astype(np.float64)
    g = m.sum(-1, keepdims=True)
    total = (r * m).sum(-1, keepdims=True)
    if algorithm == "grpo":
        mean = total / g
        var = (((r - mean) * m) ** 2).sum(-1, keepdims=True) / np.maximum(g - 1, 1)
        std = np.sqrt(var)
        a = np.where(std > 1e-12, (r - mean) / np.where(std > 1e-12, std, 1.0), 0.0)
    elif algorithm == "rloo":
        a = r - (total - r) / np.maximum(g - 1, 1)
    elif algorithm == "reinforce":
        a = r.copy()
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; use one of {ALGORITHMS}")
    return a * m


def teacher_logits(cfg: ToyConfig) -> np.ndarray:
    """The teacher: the base prior on native strategies, with the novel ones lifted so that (before the
    per-problem offsets) they carry ``teacher_novel_mass`` of the probability, split evenly."""
    theta = base_logits(cfg)
    if cfg.n_novel == 0 or cfg.teacher_novel_mass <= 0:
        return theta
    native = theta[: -cfg.n_novel]
    z_native = np.exp(native).sum()
    m = cfg.teacher_novel_mass
    theta[-cfg.n_novel:] = np.log(m / (1 - m) * z_native / cfg.n_novel)
    return theta


def sample_completions(probs: np.ndarray, problems: dict, n: int, rng: np.random.Generator,
                       uniforms: np.ndarray | None = None):
    """Draw n completions per problem from pi(.|i) and verify each.

    Returns (c, strat_counts): c[i] = verified-correct completions of problem i, and strat_counts[i, s] = how
    often strategy s was drawn.

    Completion j of problem i is correct with probability p_i = q_i * sum_{s correct} pi(s|i), independently, so
    it is drawn as ``uniforms[i, j] < p_i``; its strategy is then drawn from pi conditioned on that outcome
    (pi(s) q_i 1[s correct] / p_i if correct, pi(s)(1 - q_i 1[s correct]) / (1 - p_i) if not), as multinomial
    counts. This is exactly the joint law of n independent (strategy, verdict) pairs. Passing the *same*
    ``uniforms`` for every policy is the classic common-random-numbers coupling: each policy's counts keep their
    exact distribution, but two policies are compared on the same random draws, so a policy whose p_i is higher
    never gets fewer correct samples by luck. Without ``uniforms`` fresh ones are drawn from ``rng``.
    """
    N, S = probs.shape
    probs = probs / probs.sum(-1, keepdims=True)
    win = probs * problems["correct"] * problems["q"][:, None]          # (N, S): pi(s) P(verified | s)
    p = win.sum(-1)
    if uniforms is None:
        uniforms = rng.random((N, n))
    c = (uniforms[:, :n] < p[:, None]).sum(1)
    lose = probs - win
    pw = np.where(p[:, None] > 0, win / np.where(p[:, None] > 0, p[:, None], 1.0), 1.0 / S)
    pl = np.where(p[:, None] < 1, lose / np.where(p[:, None] < 1, 1 - p[:, None], 1.0), 1.0 / S)
    pw = np.clip(pw, 0, None); pw /= pw.sum(-1, keepdims=True)  # noqa: E702
    pl = np.clip(pl, 0, None); pl /= pl.sum(-1, keepdims=True)  # noqa: E702
    counts = rng.multinomial(c, pw) + rng.multinomial(n - c, pl)
    return c, counts
