"""The typed-problems toy (issue 28): what RL can and cannot reach follows from the problems' structure.

Problems come in K types (a topic, a kind of question). Each type t has a typical correct strategy c_t, drawn
with probability proportional to 1/s like the paper notes' toy (§3); a fraction ``a`` of the problems (a property
of the data, not of the learner) are atypical: their correct strategy is another native strategy, drawn from the
base prior. The policy is shared within a type,

    pi(s | i) = softmax(theta_{t_i} + u_i)_s,        theta_t starts at theta_0[s] = -zipf ln s,

with fixed per-problem offsets u_i ~ N(0, sigma^2). RL can only move theta_t, that is, learn what the problems
of a type have in common: it sharpens them all toward c_t. pass@1 rises on the typical problems of the training
split and, since nothing is memorised per problem, on fresh problems of the same types (the held-out split, the
analogue of Omni-MATH test); the atypical problems, which the base model solved now and then by sampling widely,
lose their strategy's probability: the coverage the base model had on them is what RL gives up at large k.

Problem i: type t_i, correct set C_i = {c_{t_i}} (or {its atypical strategy}) plus each of the last ``n_novel``
strategies with probability ``novel_correct_prob`` (the base almost never samples those: the distillation arm's
teacher does), and execution success q_i ~ Beta(q_alpha, q_beta): a sampled strategy s is verified correct with
probability q_i 1[s in C_i], so one completion succeeds with p_i = q_i sum_{s in C_i} pi(s | i).
"""
from __future__ import annotations

import numpy as np

from .policy import softmax


def type_strategies(cfg, rng: np.random.Generator) -> np.ndarray:
    """c_t, the typical correct strategy of each of the K types (0-based), drawn proportional to 1/s over the
    native strategies (the correct-strategy law of the notes' toy)."""
    native = cfg.n_strategies - cfg.n_novel
    prior = 1.0 / np.arange(1, native + 1)
    return rng.choice(native, size=cfg.n_types, p=prior / prior.sum())


def make_typed_problems(cfg, typical: np.ndarray, n: int, rng: np.random.Generator) -> dict:
    """n problems of the world whose types' typical strategies are ``typical``.

    Returns ``u`` (n, S) offsets, ``type`` (n,), ``atypical`` (n,) bool, ``primary`` (n,) the correct native
    strategy, ``correct`` (n, S) bool and ``q`` (n,). An atypical problem's strategy is drawn from the base prior
    pi_0(s) ∝ s^-zipf over the native strategies other than its type's typical one.
    """
    S, E = cfg.n_strategies, cfg.n_novel
    native = S - E
    u = rng.normal(0.0, cfg.offset_scale, size=(n, S)) if cfg.offset_scale > 0 else np.zeros((n, S))
    types = rng.integers(0, cfg.n_types, size=n)
    atypical = rng.random(n) < cfg.atypical
    prior = np.arange(1, native + 1, dtype=np.float64) ** -cfg.zipf         # (native,) base prior, unnormalised
    w = np.broadcast_to(prior, (n, native)).copy()
    w[np.arange(n), typical[types]] = 0.0                                   # "atypical": not the type's strategy
    cdf = np.cumsum(w / w.sum(1, keepdims=True), axis=1)
    other = np.minimum((rng.random(n)[:, None] > cdf).sum(1), native - 1)   # inverse CDF, one draw per problem
    primary = np.where(atypical, other, typical[types])
    correct = np.zeros((n, S), dtype=bool)
    correct[np.arange(n), primary] = True
    if E:
        correct[:, native:] = rng.random((n, E)) < cfg.novel_correct_prob
    q = rng.beta(cfg.q_alpha, cfg.q_beta, size=n)
    return {"u": u, "type": types, "atypical": atypical, "primary": primary, "correct": correct, "q": q}


def typed_world(cfg) -> tuple[np.ndarray, dict, dict]:
    """The seed's world: the types' typical strategies, the training split and the held-out split (the same
    distribution: fresh problems, offsets and atypical draws of the same K types)."""
    rng = np.random.default_rng([cfg.seed, 0])
    typical = type_strategies(cfg, rng)
    train = make_typed_problems(cfg, typical, cfg.n_train, rng)
    heldout = make_typed_problems(cfg, typical, cfg.n_heldout, rng)
    return typical, train, heldout


def typed_policy(theta: np.ndarray, problems: dict) -> np.ndarray:
    """pi(. | i) = softmax(theta_{t_i} + u_i) for every problem: (N, S) from type logits theta (K, S)."""
    return softmax(theta[problems["type"]] + problems["u"])
