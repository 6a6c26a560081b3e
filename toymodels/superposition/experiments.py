"""Every bounded call a page or the command line makes into the superposition toy (bounds in ``config``).

``run`` trains one model (the page's "toy" panel), ``geometry`` a handful of features in 2 or 3 dimensions per γ,
``gamma_sweep`` φ against γ (paper Fig. 3), ``width_sweep`` a live loss-against-width sweep; ``train_batched``
is their engine (models of one width batched, widths sharing the step loop).
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd

from toymodels.topic import bounded

from .config import (
    GEOMETRY_GAMMAS,
    HEADLINE_REGIMES,
    KNOBS,
    Config,
    _config_budget,
    _gamma_budget,
    _sweep_budget,
)
from .data import feature_probs, n_eff
from .measure import HIST_BINS
from .sweeps import sweep
from .training import train_groups

REGIMES = {r["name"]: r for r in HEADLINE_REGIMES}


# --------------------------------------------------------------------------- training (page-sized calls)


def train_batched(n: int, ms: list[int], gammas: list[float], probs: np.ndarray, seeds: list[int],
                  steps: int = 4000, batch: int = 256, lr: float = 1e-2, warmup: float = 0.1, device=None,
                  lr_recipe: str = "constant", progress=None, eval_samples: int = 8192) -> dict:
    """Train I models (one per entry of ms, gammas, probs rows, seeds) for exactly ``steps`` steps: models of
    one width form one batched model, widths share the step loop and its data. Returns per-model arrays (W
    zero-padded to the widest width), the loss (on the evaluation stream) and the measurements."""
    I = len(ms)
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    widths = sorted(set(int(m) for m in ms))
    groups = [(m, [dict(gamma=float(gammas[k]), seed=int(seeds[k]), data=k) for k in range(I) if ms[k] == m])
              for m in widths]
    order = [[k for k in range(I) if ms[k] == m] for m in widths]
    res = train_groups(n, groups, probs, steps, batch, lr=lr, warmup=warmup, device=device, progress=progress,
                       eval_samples=eval_samples, lr_recipe=lr_recipe)
    M = max(widths)
    out = {"W": np.zeros((I, n, M), np.float32), "b": np.zeros((I, n), np.float32), "curve_steps": None,
           "ms_per_step": sum(r["ms_per_step"] for r in res)}
    keys = ("loss", "drift", "converged", "phi_half", "phi_one", "overlap", "overlap_rep", "welch", "inv_m",
            "etf_bound", "weak_pred")
    per = {k: [None] * I for k in keys + ("norms", "hist", "curve")}
    for r, idx in zip(res, order):
        out["curve_steps"] = r["curve_steps"]
        for j, k in enumerate(idx):
            out["W"][k, :, :r["m"]] = r["W"][j]
            out["b"][k] = r["b"][j]
            for key in per:
                per[key][k] = r[key][j]
    for key, vals in per.items():
        out[key] = np.stack(vals) if key in ("norms", "hist", "curve") else np.asarray(vals)
    return out


@bounded(cfg=KNOBS.fields(Config), _budget=_config_budget)
def run(cfg: Config = Config(), device=None, progress=None) -> dict:  # noqa: B008 - a frozen dataclass
    """Train one model (the page's "toy" panel) and return its measurements, row norms and loss curve."""
    p = feature_probs(cfg.n, cfg.alpha, cfg.E, cfg.profile)
    out = train_batched(cfg.n, [cfg.m], [cfg.gamma], p[None], [cfg.seed], cfg.steps, cfg.batch, cfg.lr,
                        cfg.warmup, device=device, progress=progress)
    W = out["W"][0, :, :cfg.m]
    k = min(cfg.n, 40)
    return {"config": asdict(cfg), "p": p, "n_eff": n_eff(p), "norms": out["norms"][0], "hist": out["hist"][0],
            "hist_edges": HIST_BINS, "gram_top": W[:k] @ W[:k].T, "b": out["b"][0],
            "curve_steps": out["curve_steps"], "curve": out["curve"][0],
            **{key: float(out[key][0]) for key in ("loss", "drift", "phi_half", "phi_one", "overlap", "overlap_rep",
                                                  "welch", "inv_m", "etf_bound", "weak_pred")},
            "converged": bool(out["converged"][0]), "ms_per_step": out["ms_per_step"]}


@bounded(**KNOBS.specs(group="geometry"))
def geometry(n: int = 5, m: int = 2, alpha: float = 0.0, E: float = 0.1, gammas=GEOMETRY_GAMMAS,
             steps: int = 3000, batch: int = 256, lr: float = 1e-2, seed: int = 0, device=None,
             progress=None) -> dict:
    """A handful of features in m = 2 or 3 dimensions, one model per γ, trained as one batched model.
    Returns the feature vectors W (γ, n, m), the Gram matrices WWᵀ and the biases, for drawing."""
    gammas = [float(g) for g in gammas]
    p = feature_probs(n, alpha, E)
    out = train_batched(n, [m] * len(gammas), gammas, np.repeat(p[None], len(gammas), 0), [seed] * len(gammas),
                        steps, batch, lr, device=device, progress=progress, eval_samples=4096)
    W = out["W"]
    return {"gammas": np.asarray(gammas), "p": p, "W": W, "gram": np.einsum("kim,kjm->kij", W, W), "b": out["b"],
            "loss": out["loss"], "phi_half": out["phi_half"], "overlap": out["overlap"]}


@bounded(**KNOBS.specs(group="gamma_sweep"), _budget=_gamma_budget)
def gamma_sweep(n: int = 1000, m: int = 20, alpha: float = 1.0, E: float = 1.0, gammas=None, steps: int = 2000,
                batch: int = 128, lr: float = 1e-2, seed: int = 0, device=None, progress=None) -> pd.DataFrame:
    """φ_1/2, φ_1, loss and overlap against γ at one width (paper Fig. 3), all γ in one batched model."""
    gammas = list(np.round(np.linspace(-1, 1, 10), 4)) if gammas is None else [float(g) for g in gammas]
    p = feature_probs(n, alpha, E)
    out = train_batched(n, [m] * len(gammas), gammas, np.repeat(p[None], len(gammas), 0), [seed] * len(gammas),
                        steps, batch, lr, device=device, progress=progress)
    return pd.DataFrame({"gamma": gammas, "phi_half": out["phi_half"], "phi_one": out["phi_one"],
                         "loss": out["loss"], "overlap": out["overlap"], "weak_pred": out["weak_pred"],
                         "m_over_n": m / n, "etf_bound": min(1.0, m * m / (2 * n))})


@bounded(**KNOBS.specs(group="width_sweep"), _budget=_sweep_budget)
def width_sweep(n: int = 1000, ms=(10, 20, 40, 80), regimes=("strong", "weak"), steps: int = 4000,
                batch: int = 128, seeds=(0,), lr_recipe: str = "paper-large", warmup: float = 0.05, device=None,
                progress=None) -> pd.DataFrame:
    """Loss against width for the headline regimes (strong: γ = −1, α = 1; weak: γ = 0.1, α = 1.5), a live,
    bounded sweep of exactly ``steps`` steps (the drift column says whether it met the convergence criterion)."""
    return sweep(n, sorted(int(m) for m in ms), [REGIMES[r] for r in regimes], steps, batch,
                      seeds=tuple(seeds), lr_recipe=lr_recipe, warmup=warmup, device=device, progress=progress)
