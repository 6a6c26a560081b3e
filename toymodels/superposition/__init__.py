"""Superposition Yields Robust Neural Scaling (Liu, Liu & Gore, NeurIPS 2025 runner-up), as a toy.

The paper's toy model (its Eq. 1): n sparse features are squeezed through an m-dimensional bottleneck by a tied-weight
ReLU autoencoder, and a signed weight decay γ (its Eq. 2) decides whether the model keeps only the m most frequent
features (weak superposition, γ > 0) or squeezes all n of them in with small mutual overlaps (strong superposition,
γ < 0). The paper's claim: in strong superposition the loss falls as 1/m whatever the feature-frequency profile,
because the loss is set by the interference between almost-unit vectors, whose mean squared overlap is ≈ 1/m; in
weak superposition the loss is the frequency mass of the features left out, so its exponent follows the data,
α_m = α − 1.

Modules, in the order they depend on each other: ``data`` (Eq. 1) and ``measure`` (§2's measurements) <-
``config`` (bounds, settings, cost) <- ``training`` (Eq. 2, the batched engine; torch) <- ``sweeps`` (the converged
width sweeps) <- ``experiments`` (the page's bounded calls); ``uploads`` and ``embeddings`` (real models),
``analysis`` (reading the sweeps) and ``notebook`` (what was tried) beside them. This ``__init__`` holds the contract
and never imports torch.
"""
from __future__ import annotations

import time
from pathlib import Path

from toymodels.errors import InputError
from toymodels.topic import View, lazy_exports, views

from .analysis import OVERLAP_TOL, PROFILE_BAND, STRONG_BAND, WEAK_ALPHA, WEAK_TOL, headline, verdict
from .config import (
    BOUNDS,
    CONFIG_BOUNDS,
    CONV_TOL,
    CONV_WINDOW,
    GEOMETRY_GAMMAS,
    GEOMETRY_SECONDS,
    HEADLINE_REGIMES,
    NEFF,
    NEFF_RATIOS,
    PRESETS,
    QUICK,
    REGIME_NAMES,
    SCALING,
    Config,
    expected_seconds,
)
from .data import PROFILES, V_MEAN, V_SQ, feature_probs, n_eff, param_for_neff, profile_weights
from .measure import HIST_BINS, fit_exponent, mean_sq_overlap, measure, weak_prediction, welch_bound
from .notebook import TRIED

TOPIC = "superposition"

VIEWS = views(
    View("scaling", ".sweeps:scaling", SCALING, label="Training the width sweep to convergence…", seconds=360),
    View("neff_sweep", ".sweeps:neff_sweep", NEFF, label="Training the N_eff sweep to convergence…", seconds=360),
    View("geometry", ".experiments:geometry", dict(n=5, m=2, alpha=0.0, E=0.1), label="Training one model per γ…",
         seconds=4),
    View("run_default", ".experiments:run", dict(cfg=Config(steps=2000, batch=128)), label="Training…", seconds=20),
    View("minilm", ".embeddings:minilm_overlap", {}, label="Reading all-MiniLM-L6-v2…", seconds=5),
)
HEADLINE = "scaling"

__all__ = ["TOPIC", "InputError", "VIEWS", "HEADLINE", "reproduce", "verdict", "headline", "OVERLAP_TOL",
           "PROFILE_BAND",
           "STRONG_BAND", "WEAK_ALPHA", "WEAK_TOL", "BOUNDS", "CONFIG_BOUNDS", "CONV_TOL", "CONV_WINDOW",
           "GEOMETRY_GAMMAS", "GEOMETRY_SECONDS", "HEADLINE_REGIMES", "NEFF", "NEFF_RATIOS", "PRESETS", "QUICK",
           "REGIME_NAMES", "SCALING", "Config", "expected_seconds", "PROFILES", "V_MEAN", "V_SQ", "feature_probs",
           "n_eff",
           "param_for_neff", "profile_weights", "HIST_BINS", "fit_exponent", "mean_sq_overlap", "measure",
           "weak_prediction", "welch_bound", "TRIED"]


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """Strong vs weak superposition trained to convergence, loss against width, and the strong regime for three
    profiles: fitted α_m (paper: ≈ 1 strong for every profile, α − 1 weak). --quick: n = 500, m = 8…32."""
    from toymodels.store import write_tables

    from .sweeps import scaling

    cfg = dict(QUICK if quick else SCALING)
    t0 = time.perf_counter()
    res = scaling(**cfg, seed=seed, device=device, progress=progress)
    v = verdict(res)
    metrics = {**headline(res), "reproduced": v.reproduced, "verdict": v.summary, "n": cfg["n"],
               "steps": cfg["steps"], "max_steps": cfg["max_steps"], "batch": cfg["batch"], "lr_recipe": "paper-large",
               "seed": seed, "seconds": time.perf_counter() - t0}
    if out is not None:
        write_tables(out, {"superposition_width_sweep": res["table"], "superposition_fits": res["fits"]})
    return metrics


__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("run", "geometry", "gamma_sweep", "width_sweep", "train_batched"), ".experiments"),
    **dict.fromkeys(("sweep", "fits", "scaling", "neff_sweep", "profile_regimes", "regime_probs"), ".sweeps"),
    **dict.fromkeys(("train_groups", "train_alone", "eq2_step", "grads", "grads_sparse", "lr_at", "lr_for",
                     "sample_x", "drift", "Schedule", "init_params"), ".training"),
    **dict.fromkeys(("validate_matrix", "load_matrix", "MAX_ROWS", "MAX_COLS"), ".uploads"),
    **dict.fromkeys(("embedding_overlap", "minilm_matrix", "minilm_overlap"), ".embeddings"),
})
