"""Measuring a policy: pass@k curves (estimated and exact), the headline numbers against base."""
from __future__ import annotations

import numpy as np

from .passk import SE_K, crossover_k, pass_at_k_curve, pass_at_k_exact
from .policy import sample_completions, success_prob


def _ckpts(steps: int) -> list[int]:
    return sorted(set([0] + [int(round(steps * f)) for f in (0.125, 0.25, 0.5, 0.75, 1.0)]))


def _curves_for(label: str, probs: np.ndarray, problems: dict, n: int, rng, ks_chart,
                uniforms=None) -> tuple[dict, list]:
    p = success_prob(probs, problems)
    c, counts = sample_completions(probs, problems, n, rng, uniforms)
    full = pass_at_k_curve(n, c, np.arange(1, n + 1))
    exact = pass_at_k_exact(p, np.arange(1, n + 1))
    rows = [{"policy": label, "k": int(k), "pass_at_k": float(full[k - 1]), "exact": float(exact[k - 1])}
            for k in ks_chart]
    return {"p": p, "c": c, "counts": counts, "est": full, "exact": exact}, rows


def rl_label(algorithm: str) -> str:
    """The curve label of the RL policy: 'RL (GRPO)', 'RL (RLOO)', 'RL (REINFORCE)'."""
    return f"RL ({algorithm.upper()})"


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    v, w = values.ravel(), weights.ravel().astype(float)
    order = np.argsort(v)
    cw = np.cumsum(w[order])
    return float(v[order][np.searchsorted(cw, cw[-1] / 2)])


def _summary(base: dict, rl: dict, n: int) -> dict:
    """Headline numbers of one RL policy against base. Δ_SE is the paper's: pass@256(base) − pass@1(RL)
    (k = n when fewer than 256 samples were drawn; ``k_se`` says which)."""
    ks = np.arange(1, n + 1)
    solved_rl, solved_base = rl["c"] > 0, base["c"] > 0
    k256 = min(SE_K, n)
    pass1_base, pass1_rl = float(base["est"][0]), float(rl["est"][0])
    return {
        "pass1_base": pass1_base, "pass1_rl": pass1_rl, "pass1_gain": pass1_rl / max(pass1_base, 1e-12),
        "passkmax_base": float(base["est"][-1]), "passkmax_rl": float(rl["est"][-1]), "k_max": int(n),
        "pass256_base": float(base["est"][k256 - 1]), "pass256_rl": float(rl["est"][k256 - 1]),
        "pass256_drop": float(base["est"][k256 - 1] - rl["est"][k256 - 1]), "k_se": int(k256),
        "pass1_base_exact": float(base["exact"][0]), "pass1_rl_exact": float(rl["exact"][0]),
        "passkmax_base_exact": float(base["exact"][-1]), "passkmax_rl_exact": float(rl["exact"][-1]),
        "crossover_k": crossover_k(ks, base["est"], rl["est"]),
        "crossover_k_exact": crossover_k(ks, base["exact"], rl["exact"]),
        "delta_se": float(base["est"][k256 - 1] - rl["est"][0]),
        "delta_se_kmax": float(base["est"][-1] - rl["est"][0]),
        "rl_solved_subset_fraction": float((solved_rl & solved_base).sum() / max(solved_rl.sum(), 1)),
        "solved_base": int(solved_base.sum()), "solved_rl": int(solved_rl.sum()),
        "solved_rl_only": int((solved_rl & ~solved_base).sum()),
        "solved_base_only": int((solved_base & ~solved_rl).sum()),
    }
