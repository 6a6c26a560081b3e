"""Diffusion memorisation: Bonnaire, Urfin, Biroli, Mézard, "Why Diffusion Models Don't Memorize: The Role of
Implicit Dynamical Regularization in Training" (NeurIPS 2025 best paper), with the closed-form flow matching of
Bertrand et al. (arXiv 2506.03719).

* ``core``: schedules (DDPM/VP, OU, VE), data (GMM of SM B, 2-D sets, digits), the closed-form denoiser (Eq. 5),
  DDIM and reverse-SDE samplers, the flow-matching velocity, the memorisation test (Eq. 6) and quality metrics.
* ``learned``: the SM B network as a stacked ensemble, and the generalisation window τ_gen vs τ_mem ∝ n.
* ``rf``: the random-features model of §3, with its exact gradient-flow dynamics.
* ``explore``: the page's visualiser, flow-matching alignment and hybrid sampling.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from toymodels import Progress, report
from toymodels.store import write_tables
from toymodels.diffusion import core, explore, learned, rf  # noqa: F401
from toymodels.diffusion.learned import WindowConfig, train_window
from toymodels.diffusion.rf import RFConfig, run_rf

TOPIC = "diffusion"

#: The paper's reference numbers (quoted, never computed here).
PAPER = {
    "tau_gen_steps": 100_000,        # CelebA U-Net, W = 32, every n
    "tau_mem_over_n": 300,           # f_mem/f_mem(τ_max) rises at τ/n ≈ 300
    "fmem_n1024_190k": 0.0,
    "fmem_n1024_1620k": 0.472,
    "tau_mem_slope": 1.0,
    "rf_tau_mem_notes": {4: 2.5e3, 8: 5.9e3, 16: 12.8e3, 32: 22.1e3},  # notes, d → ∞ formula at t = 0.1, ψ_p = 64
}

#: The page's default views (precompute ships exactly these calls).
DEFAULT_WINDOW = WindowConfig()
DEFAULT_RF = RFConfig()
DEFAULT_2D = dict(dataset="moons", n=32, train_steps=3000, width=64, n_samples=300, sampler_steps=100, seed=0)
DEFAULT_DIGITS = dict(n=200, n_samples=16, sampler_steps=100, seed=0)
DEFAULT_HYBRID = dict(n=128, train_steps=4000, width=64, n_samples=500, steps=100, seed=0)

QUICK_WINDOW = WindowConfig(ns=[32, 64, 128], seeds=1, steps_per_n=150)
QUICK_RF = RFConfig(d=16, samples=20_000, n_test=1000, test_draws=10)
FULL_WINDOW = WindowConfig(ns=[32, 64, 128, 256], seeds=3, steps_per_n=200, n_samples=1000, ddim_steps=100,
                           ckpt_per_decade=8)
FULL_RF = RFConfig(d=40, samples=80_000, n_test=4000, test_draws=20)


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress = None) -> dict:
    """τ_gen flat and τ_mem ∝ n for the learned GMM denoiser, the closed-form sampler's f_mem, and the
    random-features timescales. ``quick``: one seed, n ∈ {32, 64, 128}, S = 150 n; else 3 seeds, n ∈ {32, …, 256},
    S = 200 n and the notes' RF setting (d = 40)."""
    wcfg = QUICK_WINDOW if quick else FULL_WINDOW
    rcfg = QUICK_RF if quick else FULL_RF
    wcfg = WindowConfig(**{**wcfg.__dict__, "seed": seed})
    rcfg = RFConfig(**{**rcfg.__dict__, "seed": seed})

    def sub(lo, hi):
        return None if progress is None else (lambda f, m="": report(progress, lo + (hi - lo) * f, m))

    win = train_window(wcfg, device=device, progress=sub(0.0, 0.8))
    rfr = run_rf(rcfg, device=device, progress=sub(0.8, 1.0))
    s, rs = win["summary"], rfr["summary"]
    if out is not None:
        write_tables(out, {"window_curves": win["curves"], "window_summary": s, "rf_summary": rs,
                           "rf_losses": rfr["curves"]})
    return {
        "ns": [int(v) for v in s.n],
        "tau_gen": [float(v) for v in s.tau_gen],
        "tau_mem": [float(v) for v in s.tau_mem],
        "tau_mem_slope": win["tau_mem_slope"],
        "tau_gen_slope": win["tau_gen_slope"],
        "tau_mem_half": [float(v) for v in s.tau_mem_half],
        "tau_mem_half_slope": win["tau_mem_half_slope"],
        "tau_gen_mmd": [float(v) for v in s.tau_gen_mmd],
        "tau_gen_mmd_slope": win["tau_gen_mmd_slope"],
        "tau_gap": [float(v) for v in s.tau_gap],
        "tau_gap_slope": win["tau_gap_slope"],
        "f_mem_final": [float(v) for v in s.f_final],
        "closed_form_fmem": float(np.mean(win["closed_form_fmem"])),
        "closed_form_fmem_min": win["closed_form_fmem_min"],
        "rf_psi_n": [float(v) for v in rs.psi_n],
        "rf_tau_mem": [float(v) for v in rs.tau_mem],
        "rf_tau_mem_slope": rfr["tau_mem_slope"],
        "rf_tau_mem_theory": [float(v) for v in rs.tau_mem_theory],
        "rf_tau_mem_theory_slope": rfr["tau_mem_theory_slope"],
        "rf_tau_mem_gap": [float(v) for v in rs.tau_mem_gap],
        "rf_tau_mem_gap_slope": rfr["tau_mem_gap_slope"],
        "rf_tau_gen": [float(v) for v in rs.tau_gen],
        "rf_tau_gen_slope": rfr["tau_gen_slope"],
        "rf_loss_train_tau10": [float(v) for v in rs.loss_train_10],
        "rf_loss_test_tau10": [float(v) for v in rs.loss_test_10],
        "quick": bool(quick), "seed": int(seed),
        "config": {"window": win["config"], "rf": rfr["config"]},
    }


def precompute(progress: Progress = None) -> None:
    """Ship the page's default views (the same calls the page makes through ui.compute)."""
    from toymodels import store

    def sub(lo, hi):
        return None if progress is None else (lambda f, m="": report(progress, lo + (hi - lo) * f, m))

    store.ship(TOPIC, "process_2d", explore.process_2d, **DEFAULT_2D, progress=sub(0.0, 0.05))
    store.ship(TOPIC, "process_digits", explore.process_digits, **DEFAULT_DIGITS)
    store.ship(TOPIC, "flow_alignment", explore.flow_alignment)
    store.ship(TOPIC, "hybrid", explore.hybrid_sampling, **DEFAULT_HYBRID, progress=sub(0.05, 0.1))
    store.ship(TOPIC, "els", explore.els_digits)
    store.ship(TOPIC, "rf", run_rf, DEFAULT_RF, progress=sub(0.1, 0.25))
    store.ship(TOPIC, "window", train_window, DEFAULT_WINDOW, progress=sub(0.25, 1.0))


__all__ = ["reproduce", "precompute", "WindowConfig", "RFConfig", "train_window", "run_rf", "core", "learned",
           "rf", "explore", "PAPER"]
