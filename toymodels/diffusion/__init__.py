"""Diffusion memorisation: Bonnaire, Urfin, Biroli, Mézard, "Why Diffusion Models Don't Memorize: The Role of
Implicit Dynamical Regularization in Training" (NeurIPS 2025 best paper), with the closed-form flow matching of
Bertrand et al. (arXiv 2506.03719).

The math: ``core`` (schedules DDPM/VP, OU, VE; data: the GMM of SM B, 2-D sets, digits; the closed-form denoiser
of Eq. 5; DDIM and reverse-SDE samplers; the flow-matching velocity; the memorisation test of Eq. 6 and quality
metrics), ``rf`` (the random-features model of §3), ``els`` (Kamb & Ganguli's ELS machine), ``network`` (the SM B
network as a stacked ensemble). Training: ``training``. Experiments: ``experiments`` (the generalisation window
τ_gen vs τ_mem ∝ n, the random-features timescales), ``flows`` (closed-form flow matching), ``explore`` (the page's
visualiser). ``config``: configurations, bounds and cost models (light, no torch). This file: the contract.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from toymodels.store import write_tables
from toymodels.topic import InputError, Verdict, View, as_progress, lazy_exports, views  # noqa: F401

from .config import DATASETS_2D, RF_BUDGET, WINDOW_BUDGET, RFConfig, WindowConfig, ddpm_coeffs, rf_cost, window_cost  # noqa: F401

TOPIC = "diffusion"

#: The paper's reference numbers (quoted, never computed here).
PAPER = {
    "tau_gen_steps": 100_000,        # CelebA U-Net, W = 32, every n
    "tau_mem_over_n": 300,           # f_mem/f_mem(τ_max) rises at τ/n ≈ 300
    "fmem_n1024_190k": 0.0,
    "fmem_n1024_1620k": 0.472,
    "tau_mem_slope": 1.0,
    "tau_gen_slope": 0.0,
    "rf_tau_mem_notes": {4: 2.5e3, 8: 5.9e3, 16: 12.8e3, 32: 22.1e3},  # notes, d → ∞ formula at t = 0.1, ψ_p = 64
}

#: The visualiser's data sets: stable ids (stored in links) → labels, and the view that holds each.
VIZ_DATA = {**DATASETS_2D, "digits": "8×8 digits (d = 64)"}
VIZ_VIEW = {"moons": "process_2d", "ring": "process_2d_ring", "gmm2": "process_2d_gmm2", "digits": "process_digits"}
#: The ELS machine's patch sizes, each a shipped view.
ELS_VIEW = {3: "els", 5: "els_p5", 7: "els_p7"}

_2D = dict(n=32, train_steps=3000, width=64, n_samples=300, sampler_steps=100, seed=0)

VIEWS = views(
    View("window", ".experiments:train_window", dict(cfg=WindowConfig()), label="Training the denoisers…",
         seconds=90),
    View("rf", ".experiments:run_rf", dict(cfg=RFConfig()), label="Estimating U, V and solving the dynamics…",
         seconds=25),
    View("process_2d", ".explore:process_2d", dict(dataset="moons", **_2D), label="Training a small denoiser…",
         seconds=20),
    View("process_2d_ring", ".explore:process_2d", dict(dataset="ring", **_2D), label="Training a small denoiser…",
         seconds=20),
    View("process_2d_gmm2", ".explore:process_2d", dict(dataset="gmm2", **_2D), label="Training a small denoiser…",
         seconds=20),
    View("process_digits", ".explore:process_digits", dict(n=200, n_samples=16, sampler_steps=100, seed=0),
         label="Sampling digits…", seconds=2),
    View("flow_alignment", ".flows:flow_alignment", {}, label="Computing alignments…", seconds=10),
    View("hybrid", ".flows:hybrid_sampling", dict(n=128, train_steps=4000, width=64, n_samples=500, steps=100,
                                                 seed=0), label="Hybrid sampling…", seconds=30),
    View("els", ".explore:els_digits", dict(P=3), label="Running the ELS machine…", seconds=3),
    View("els_p5", ".explore:els_digits", dict(P=5), label="Running the ELS machine…", seconds=5),
    View("els_p7", ".explore:els_digits", dict(P=7), label="Running the ELS machine…", seconds=8),
)
HEADLINE = "window"

#: Acceptance bands of the headline: τ_mem ∝ n^a with a in [0.6, 1.4], τ_gen ∝ n^b with |b| < 0.35, and the
#: closed-form (empirical-optimal) sampler memorising (f_mem ≥ 0.95) on every training set.
TAU_MEM_SLOPE_BAND = (0.6, 1.4)
TAU_GEN_SLOPE_MAX = 0.35
CLOSED_FORM_FMEM_MIN = 0.95


def _x(v: float) -> str:
    """An exponent for a sentence: 1.07, or n/a when it could not be fitted."""
    return f"{v:.2f}".replace("-0.00", "0.00") if np.isfinite(v) else "n/a"


def verdict(result: dict) -> Verdict:
    """Does the learned GMM denoiser reproduce τ_gen flat and τ_mem ∝ n? (the ``window`` view's result)."""
    s = result["summary"]
    mem, gen = float(result["tau_mem_slope"]), float(result["tau_gen_slope"])
    cf = float(result["closed_form_fmem_min"])
    ns = [int(v) for v in s["n"]]
    with_mem = int(np.isfinite(np.asarray(s["tau_mem"], float)).sum())
    ratio = np.asarray(s["tau_mem"], float) / np.asarray(s["n"], float)
    ratio = ratio[np.isfinite(ratio)]
    ok_mem = bool(TAU_MEM_SLOPE_BAND[0] <= mem <= TAU_MEM_SLOPE_BAND[1]) and with_mem >= 2
    ok_gen = bool(abs(gen) < TAU_GEN_SLOPE_MAX)
    ok_cf = cf >= CLOSED_FORM_FMEM_MIN
    reproduced = ok_mem and ok_gen and ok_cf
    if reproduced:
        summary = (f"Memorisation time τ_mem ∝ n^{_x(mem)} (paper: ∝ n) while the quality time τ_gen ∝ "
                   f"n^{_x(gen)} does not grow (paper: flat), and the exact empirical score memorises every sample. "
                   "Absolute times differ (Adam on a small MLP, not SGD on a 4M-parameter U-Net).")
    else:
        missed = [w for w, ok in (("τ_mem ∝ n", ok_mem), ("τ_gen flat", ok_gen),
                                  ("closed-form sampler memorises", ok_cf)) if not ok]
        summary = (f"Not reproduced in this run: {', '.join(missed)} failed (τ_mem ∝ n^{_x(mem)}, "
                   f"τ_gen ∝ n^{_x(gen)}, closed-form f_mem ≥ {cf:.2f}; {with_mem} of {len(ns)} sizes memorised).")
    return Verdict(
        reproduced=reproduced, summary=summary,
        ours=f"n^{_x(mem)}", paper="n^1",           # τ_mem's growth with n (short: a result-strip metric)
        metrics={"tau_mem_slope": mem, "tau_gen_slope": gen, "tau_mem_half_slope": float(result["tau_mem_half_slope"]),
                 "tau_gap_slope": float(result["tau_gap_slope"]), "closed_form_fmem_min": cf,
                 "n_sizes": len(ns), "n_sizes_memorised": with_mem,
                 "tau_mem_over_n_min": float(ratio.min()) if ratio.size else float("nan"),
                 "tau_mem_over_n_max": float(ratio.max()) if ratio.size else float("nan"),
                 "f_mem_final_min": float(np.min(s["f_final"])), "f_mem_final_max": float(np.max(s["f_final"])),
                 "paper_tau_mem_slope": PAPER["tau_mem_slope"], "paper_tau_gen_slope": PAPER["tau_gen_slope"],
                 "paper_tau_mem_over_n": PAPER["tau_mem_over_n"], "paper_tau_gen_steps": PAPER["tau_gen_steps"]})


def rf_verdict(result: dict) -> Verdict:
    """The random-features section (a ``run_rf`` result): does τ_mem grow with ψ_n while τ_gen does not?

    The paper's Thm 3.2 is a d → ∞ statement; at our small d the δ peak and ρ₁ overlap, so a slope below 1
    measured from the spectrum is expected and is reported as partial (None), not as a failure."""
    mem, gen = float(result["tau_mem_slope"]), float(result["tau_gen_slope"])
    theory, gap = float(result["tau_mem_theory_slope"]), float(result["tau_mem_gap_slope"])
    grows = mem > 0.3 and gap > 0.3
    flat = abs(gen) < TAU_GEN_SLOPE_MAX
    if grows and flat and TAU_MEM_SLOPE_BAND[0] <= mem <= TAU_MEM_SLOPE_BAND[1]:
        reproduced, summary = True, (f"The exact dynamics show both timescales: τ_gen flat (slope {_x(gen)}) and "
                                     f"τ_mem ∝ ψ_n^{_x(mem)} from the measured spectrum.")
    elif grows and flat:
        reproduced, summary = None, (
            f"The exact dynamics show the two timescales: a ψ_n-independent τ_gen (slope {_x(gen)}) and a "
            f"memorisation time growing with ψ_n, slower than linear at this small d (slope {_x(mem)} from the "
            f"spectrum, {_x(gap)} from the loss gap; the d → ∞ edge formula gives {_x(theory)}).")
    else:
        reproduced, summary = False, (f"Not reproduced at this setting: τ_mem slope {_x(mem)} (gap {_x(gap)}), "
                                      f"τ_gen slope {_x(gen)}.")
    return Verdict(reproduced=reproduced, summary=summary, ours=f"ψ_n^{_x(mem)}", paper="ψ_n^1",
                   metrics={"rf_tau_mem_slope": mem, "rf_tau_mem_gap_slope": gap, "rf_tau_mem_theory_slope": theory,
                            "rf_tau_gen_slope": gen, "paper_rf_tau_mem_slope": 1.0, "paper_rf_tau_gen_slope": 0.0})


QUICK_WINDOW = WindowConfig(ns=[32, 64, 128], seeds=1, steps_per_n=150)
QUICK_RF = RFConfig(d=16, samples=20_000, n_test=1000, test_draws=10)
FULL_WINDOW = WindowConfig(ns=[32, 64, 128, 256], seeds=3, steps_per_n=200, n_samples=1000, ddim_steps=100,
                           ckpt_per_decade=8)
FULL_RF = RFConfig(d=40, samples=80_000, n_test=4000, test_draws=20)


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress=None) -> dict:
    """τ_gen flat and τ_mem ∝ n for the learned GMM denoiser, the closed-form sampler's f_mem, and the
    random-features timescales. ``quick``: one seed, n ∈ {32, 64, 128}, S = 150 n; else 3 seeds, n ∈ {32, …, 256},
    S = 200 n and the notes' RF setting (d = 40)."""
    wcfg = QUICK_WINDOW if quick else FULL_WINDOW
    rcfg = QUICK_RF if quick else FULL_RF
    wcfg = WindowConfig(**{**wcfg.__dict__, "seed": seed})
    rcfg = RFConfig(**{**rcfg.__dict__, "seed": seed})
    from .experiments import run_rf, train_window

    p = as_progress(progress)
    # the full settings exceed the page's live budgets: call the unchecked functions (fixed, known configs)
    win = train_window.__wrapped__(wcfg, device=device, progress=p.sub(0.0, 0.8, "window: "))
    rfr = run_rf.__wrapped__(rcfg, device=device, progress=p.sub(0.8, 1.0, "random features: "))
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


#: Public names, each imported from its module on first use (so importing this package never imports torch).
_LAZY = {name: ".experiments" for name in ("train_window", "run_rf", "checkpoint_steps", "model_times", "summarise")}
_LAZY.update({name: ".explore" for name in ("process_2d", "process_digits", "els_digits")})
_LAZY.update({name: ".flows" for name in ("flow_alignment", "hybrid_sampling")})
_LAZY.update({"fit_denoiser": ".training", "els_denoiser": ".els", "Denoiser": ".network"})
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
