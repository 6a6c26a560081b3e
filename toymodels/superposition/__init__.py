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
``analysis`` (reading the sweeps) and ``notebook`` (what was tried) beside them. This ``__init__`` holds the
contract and never imports torch.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

from toymodels.claims import Claim, Evidence, Quote, claims, paper_numbers, pending, point, precondition
from toymodels.errors import InputError, NotStored
from toymodels.topic import View, lazy_exports, views

from . import analysis
from .analysis import MIN_M, WEAK_ALPHA
from .config import (
    CONV_TOL,
    CONV_WINDOW,
    GEOMETRY_GAMMAS,
    GEOMETRY_SECONDS,
    HEADLINE_REGIMES,
    KNOBS,
    M10,
    M10_RECIPES,
    MAX_MB,
    MAX_WORK,
    NEFF,
    NEFF_RATIOS,
    PRESETS,
    QUICK,
    REGIME_NAMES,
    SCALING,
    Config,
    expected_seconds,
    memory_mb,
    work_units,
)
from .data import PROFILES, V_MEAN, V_SQ, feature_probs, n_eff, param_for_neff, profile_weights
from .measure import (
    HIST_BINS,
    fit_exponent,
    ideal_weak_loss,
    mean_sq_overlap,
    measure,
    selection_share,
    weak_prediction,
    welch_bound,
)
from .notebook import TRIED

TOPIC = "superposition"

# --------------------------------------------------------------------------- the paper's numbers

PAPER = paper_numbers(
    alpha_strong=Quote(1.0, "Fig. 5e; App. D.1", "α_m ≈ 1 in strong superposition (small models: 0.8–1.1 for α ≲ 1)"),
    alpha_strong_se=Quote(0.1, "App. D.1", "the power-law profile's exponent, 1.0 ± 0.1 (n = 10 240)"),
    alpha_profiles=Quote((1.01, 1.0, 0.89), "App. D.1", "strong α_m for the exponential, power-law and linear "
                         "profiles, ± 0.05, 0.1 and 0.05 (n = 10 240, m = 8…1024)"),
    overlap=Quote("≈ 1/m", "Fig. 5d", "mean squared overlap of normalised rows ≈ 0.1 at m = 10, ≈ 0.009 at m = 100"),
    weak_eq4=Quote("L ≈ Σ_{i>φn} (⟨v²⟩p_i − ⟨v⟩²p_i²)", "Eq. 4", "weak regime: the loss of the features left out"),
    alpha_weak=Quote(0.5, "Eq. 14; Fig. 4b", "α_m = α − 1 for α = 1.5 in the ideal weak regime (φn = m, n → ∞); "
                                              "Fig. 4b scatters 0.4–1.15 around it"),
    alpha_llm=Quote(0.91, "Fig. 6; App. C", "α_m = 0.91 ± 0.04 fitted over 27 open LLMs (OPT, Qwen2.5, GPT-2, Pythia)"),
    alpha_chinchilla=Quote(0.88, "§5", "from Chinchilla's N ∝ m^2.52 and α_N = 0.35: α_m = 0.88 ± 0.06"),
    llm_overlap_line=Quote(25, "Fig. 6a, read off the figure", "the slope-1 line through the 27 LLMs' mean squared "
                           "overlaps sits near 25/m; their points span about 5-100 × 1/m"),
)

# --------------------------------------------------------------------------- the views

VIEWS = views(
    View("scaling", ".sweeps:scaling", SCALING, label="Training the width sweep to convergence…",
         seconds=expected_seconds(SCALING["n"], [m for m in SCALING["ms"] for _ in range(5 * len(SCALING["seeds"]))],
                                  SCALING["steps"], SCALING["batch"], sweep=True)),
    View("m10_recipes", ".sweeps:small_width_recipes", M10, label="Training m = 10 under three recipes…",
         seconds=sum(expected_seconds(M10["n"], [M10["m"]] * len(M10["seeds"]), r["steps"], r["batch"], sweep=True)
                     for r in M10_RECIPES)),
    View("neff_sweep", ".sweeps:neff_sweep", NEFF, label="Training the N_eff sweep to convergence…",
         seconds=expected_seconds(NEFF["n"], NEFF["ms"] * len(NEFF_RATIOS), NEFF["steps"], NEFF["batch"], sweep=True)),
    View("geometry", ".experiments:geometry", dict(n=5, m=2, alpha=0.0, E=0.1), label="Training one model per γ…",
         seconds=GEOMETRY_SECONDS),
    View("run_default", ".experiments:run", dict(cfg=Config(steps=2000, batch=128)), label="Training…",
         seconds=expected_seconds(1000, [20], 2000, 128)),
    View("minilm", ".embeddings:minilm_overlap", {}, label="Reading all-MiniLM-L6-v2…", seconds=5),
    View("llm_overlaps", ".llm:llm_overlaps", dict(models=["smollm2", "minilm", "gemma3"]),
         label="Reading three real models' embedding matrices…", seconds=90),
)
HEADLINE = "scaling"

# --------------------------------------------------------------------------- the claims and their tests
#
# Thresholds, written before the run that decides them (the scaling view on seeds 1-5, widths 10-160). The strong
# regime is read over m ≥ 20 (``analysis.MIN_M``); m = 10 is reported apart (the m10_recipes view).

AGREE_Z = 2.0                 # agreement with the paper: |ours − paper| ≤ 2 × √(se_ours² + se_paper²)
WELCH_RATIO_MAX = 1.3         # mechanism: mean squared overlap ≤ 1.3 × the Welch bound at every width m ≥ 20 …
OVERLAP_TOL = 0.25            # … and its slope against m (over m ≥ 20) within 0.25 of −1 (overlap ∝ 1/m)
PROFILE_BAND = (0.8, 1.2)     # every profile's strong α_m (m ≥ 20) in this band, with N_eff ≥ 4 × the largest m
NEFF_MIN_FACTOR = 4.0
EQ4_BAND = (0.85, 1.15)       # weak regime: Eq. 4 on the measured rows / the measured loss, at every width …
EQ4_SLOPE_TOL = 0.1           # … and the exponents of the two within 0.1 of each other
WEAK_IDEAL_TOL = 0.1          # weak α_m within 0.1 of the finite-n ideal's (top m features kept, Eq. 4)


def _scaling(views) -> dict:
    return analysis.summary(views["scaling"])


def _not_converged(s: dict, what: str) -> Evidence | None:
    pre = precondition(bool(s["converged"]), f"not every run of the sweep met the convergence rule (worst drift "
                                             f"{s['max_drift']:.1%}): {what} would be a lower bound")
    return None if pre is None else Evidence("n/a", pre, seeds=len(s["seeds"]))


def _alpha_strong(views) -> Evidence:
    s = _scaling(views)
    if (ev := _not_converged(s, "the exponent")) is not None:
        return ev
    a, every = s["alpha_strong"], s["alpha_strong_all"]
    paper, se_paper = PAPER["alpha_strong"].value, PAPER["alpha_strong_se"].value
    se = a["se"] if math.isfinite(a["se"]) else 0.0
    z = abs(a["mean"] - paper) / math.hypot(se, se_paper)
    status = point(z <= AGREE_Z, f"|mean α_m − 1| within {AGREE_Z:g} combined standard errors (z = {z:.1f})")
    return Evidence(f"{a['mean']:.2f} (m ≥ {MIN_M})", status, seeds=a["k"],
                    uncertainty=analysis.ci_text(a),
                    note=f"{abs(a['mean'] - paper) / max(1e-12, math.hypot(se, se_paper)):.1f} combined standard "
                         f"errors from the paper's 1.0 ± 0.1. Over every width, m = 10 included: "
                         f"{every['mean']:.2f}. Between neighbouring widths the exponent reads "
                         + ", ".join(f"{r.local_alpha:.2f} (to m = {r.m})" for r in s["strong"].iloc[1:].itertuples())
                         + ": the log-log line bends.",
                    metrics={"alpha_strong": a["mean"], "alpha_strong_ci": [a["lo"], a["hi"]],
                             "alpha_strong_all_widths": every["mean"], "z": z})


def _overlap(views) -> Evidence:
    s = _scaling(views)
    if (ev := _not_converged(s, "the overlap")) is not None:
        return ev
    w = s["strong"]
    judged = w[w["m"] >= MIN_M]
    ratios = judged["overlap_over_welch"].tolist()
    slope = s["overlap_slope"]                      # exponent() returns α with overlap ∝ m^(-α): slope = −α
    ok = all(r <= WELCH_RATIO_MAX for r in ratios) and abs(-slope["mean"] + 1.0) <= OVERLAP_TOL
    m10 = w[w["m"] < MIN_M]
    apart = "; ".join(f"m = {int(r.m)}: {r.overlap_over_welch:.2f}× Welch (reported apart)" for r in m10.itertuples())
    ci = analysis.ci_text({**slope, "lo": -slope["hi"], "hi": -slope["lo"]})
    return Evidence(f"{min(ratios):.2f}–{max(ratios):.2f}× Welch; slope {-slope['mean']:.2f}".replace("-", "−"),
                    point(ok, f"the overlap ≤ {WELCH_RATIO_MAX:g} × Welch at every m ≥ {MIN_M} and its slope within "
                              f"{OVERLAP_TOL:g} of −1"), seeds=slope["k"],
                    uncertainty=f"slope {ci}" if ci else None,
                    note=f"Overlap × m (1 for ≈ 1/m) at m ≥ {MIN_M}: "
                         + ", ".join(f"{v:.2f}" for v in judged["overlap_times_m"]) + (f". {apart}." if apart else "."),
                    metrics={"overlap_over_welch": ratios, "overlap_slope_m20": -slope["mean"]})


def _profiles(views) -> Evidence:
    s = _scaling(views)
    if (ev := _not_converged(s, "each profile's exponent")) is not None:
        return ev
    pr = s["profiles"]
    order = [p for p in ("exponential", "power", "linear") if p in set(pr["profile"])]   # the paper's order
    pr = pr.set_index("profile").loc[order].reset_index()
    ok = len(pr) == 3 and all(PROFILE_BAND[0] <= a <= PROFILE_BAND[1] for a in pr["alpha_m"]) and \
        all(f >= NEFF_MIN_FACTOR for f in pr["n_eff_over_max_m"])
    lo, hi = float(pr["alpha_lo"].min()), float(pr["alpha_hi"].max())
    k = int(pr["seeds"].min())
    return Evidence(", ".join(f"{r.alpha_m:.2f}" for r in pr.itertuples()),
                    point(ok, f"every profile's mean α_m in [{PROFILE_BAND[0]:g}, {PROFILE_BAND[1]:g}] with N_eff "
                              f"≥ {NEFF_MIN_FACTOR:g} × the largest width"), seeds=k,
                    uncertainty=f"95 % CIs within [{lo:.2f}, {hi:.2f}] over {k} seeds" if k > 1 else None,
                    note="In the order " + ", ".join(pr["profile"]) + ". N_eff / largest width: "
                         + ", ".join(f"{r.profile} {r.n_eff_over_max_m:.1f}"
                                                               for r in pr.itertuples())
                         + ". Over every width, m = 10 included: " + ", ".join(
                             f"{r.profile} {r.alpha_all_widths:.2f}" for r in pr.itertuples()) + ".",
                    metrics={f"alpha_strong_{r.profile}": r.alpha_m for r in pr.itertuples()}
                    | {f"n_eff_{r.profile}": r.n_eff for r in pr.itertuples()})


def _weak_eq4(views) -> Evidence:
    s = _scaling(views)
    if (ev := _not_converged(s, "the weak regime's exponent")) is not None:
        return ev
    w = s["weak"]
    ratios = w["eq4_ratio"].tolist()
    diff = analysis.interval([e - a for e, a in zip(s["alpha_weak_eq4"]["per_seed"], s["alpha_weak"]["per_seed"])])
    ok = all(EQ4_BAND[0] <= r <= EQ4_BAND[1] for r in ratios) and abs(diff["mean"]) <= EQ4_SLOPE_TOL
    return Evidence(f"Eq. 4 / L = {min(ratios):.2f}–{max(ratios):.2f}",
                    point(ok, f"Eq. 4 / L in [{EQ4_BAND[0]:g}, {EQ4_BAND[1]:g}] at every width and the exponents "
                              f"within {EQ4_SLOPE_TOL:g}"),
                    seeds=diff["k"],
                    uncertainty=f"exponent difference {analysis.ci_text(diff)}" if diff["k"] > 1 else None,
                    note="Eq. 4 on the measured rows (features with ‖W_i‖ ≤ 1/2 left out) against the measured loss, "
                         "per width: " + ", ".join(f"m = {r.m}: {r.eq4_ratio:.2f}" for r in w.itertuples())
                         + f". Exponents: Eq. 4 {s['alpha_weak_eq4']['mean']:.2f}, measured "
                           f"{s['alpha_weak']['mean']:.2f}.",
                    metrics={"weak_eq4_ratio": ratios, "alpha_weak_eq4": s["alpha_weak_eq4"]["mean"]})


def _weak_ideal(views) -> Evidence:
    s = _scaling(views)
    if (ev := _not_converged(s, "the weak regime's exponent")) is not None:
        return ev
    a, ideal = s["alpha_weak"], s["alpha_weak_ideal"]
    ok = abs(a["mean"] - ideal) <= WEAK_IDEAL_TOL
    w = s["weak"]
    paper = PAPER["alpha_weak"].value
    contains = a["lo"] <= paper <= a["hi"]
    return Evidence(f"{a['mean']:.2f} (ideal at n = {s['n']}: {ideal:.2f})",
                    point(ok, f"mean α_m within {WEAK_IDEAL_TOL:g} of the finite-n ideal {ideal:.2f}"),
                    seeds=a["k"], uncertainty=analysis.ci_text(a),
                    note=(f"Our 95% interval [{a['lo']:.2f}, {a['hi']:.2f}] contains the paper's α − 1 = {paper:g}: "
                          "against the paper's own number this would read consistent; the registered test compares "
                          "with the ideal at this finite n instead, which it misses. " if contains else "")
                         + f"The ideal (the m most frequent features kept, Eq. 4 summed at n = {s['n']}) has exponent "
                         f"{ideal:.2f} over m = {min(s['widths'])}…{max(s['widths'])} (α − 1 = "
                         f"{WEAK_ALPHA - 1:.1f} only as n → ∞). Share of the represented features that are among as "
                         "many most frequent: " + ", ".join(f"m = {r.m}: {r.top_share:.2f}" for r in w.itertuples())
                         + ".",
                    metrics={"alpha_weak": a["mean"], "alpha_weak_ideal": ideal,
                             "weak_top_share": w["top_share"].tolist()})


def _llm(views) -> Evidence:
    return Evidence("n/a", pending("fitting α_m across 27 pretrained language models needs those models and their "
                                   "losses on four corpora, which this toy does not have"), seeds=0,
                    note="The page shows real models' LM-head overlaps (the llm-overlap claim) instead.")


REGISTERED = "commit 2695db3 (2026-11-25), before the scaling run on seeds 1-5 that decides it"
#: issue 40: the LLM overlap rule, committed before SmolLM2's and Gemma-3's overlaps were computed (MiniLM's was
#: already shipped in the ``minilm`` view, so its part is not blind)
REGISTERED_LLM = "commit 1ee27cc (2026-11-27), before SmolLM2's and Gemma-3's overlaps were computed"


def _llm_overlap(views) -> Evidence:
    from .llm import llm_claim_evidence

    try:
        toy = float(_scaling(views)["strong"]["overlap_times_m"].mean())
    except (KeyError, NotStored):
        toy = float("nan")
    return llm_claim_evidence(views, toy)


CLAIMS = claims(
    Claim("alpha-strong", "headline", "In strong superposition the loss falls as a power of the width with exponent "
          "α_m ≈ 1.", "Fig. 5e; App. D.1",
          f"≈ {PAPER['alpha_strong'].value:g} (power law {PAPER['alpha_strong'].value:.1f} ± "
          f"{PAPER['alpha_strong_se'].value:g})",
          f"α_m fitted per seed (least squares, log L on log m) over m = {MIN_M}…160 for γ = −1, α = 1, n = 1000, "
          f"every run converged; reproduced when |mean α_m − 1| ≤ {AGREE_Z:g} × √(se² + 0.1²) (se over seeds, 0.1 "
          "the paper's), else not reproduced", _alpha_strong, registered=REGISTERED),
    Claim("overlap-1-over-m", "mechanism", "The loss is set by the interference of almost-unit vectors, whose mean "
          "squared overlap falls as 1/m.", "Fig. 5d; App. C",
          f"{PAPER['overlap'].value}",
          f"the paper's overlap (mean of (Ŵ_i·Ŵ_j)² over all pairs of normalised rows); reproduced when the seed-mean "
          f"overlap is ≤ {WELCH_RATIO_MAX:g} × the Welch bound at every width m ≥ {MIN_M} and its fitted slope "
          f"against m (over m ≥ {MIN_M}) is within {OVERLAP_TOL:g} of −1; m = 10 reported apart", _overlap,
          registered=REGISTERED),
    Claim("robust-profiles", "scaling", "The strong-regime exponent ≈ 1 holds whatever the feature-frequency "
          "profile.", "App. D.1",
          ", ".join(str(v) for v in PAPER["alpha_profiles"].value) + " (± 0.05–0.1)",
          f"power law, exponential and linear profiles, each with N_eff ≥ {NEFF_MIN_FACTOR:g} × the largest width "
          f"(5× for power and exponential, 3n/4 for linear); reproduced when every profile's seed-mean α_m over "
          f"m ≥ {MIN_M} lies in [{PROFILE_BAND[0]:g}, {PROFILE_BAND[1]:g}]", _profiles, registered=REGISTERED),
    Claim("weak-eq4", "mechanism", "In weak superposition the loss is the frequency mass of the features left out "
          "(Eq. 4).", "Eq. 4; Fig. 4", "the loss of the left-out features",
          f"γ = 0.1, α = 1.5: Eq. 4 summed over the measured rows with ‖W_i‖ ≤ 1/2; reproduced when its ratio to the "
          f"measured loss is in [{EQ4_BAND[0]:g}, {EQ4_BAND[1]:g}] at every width and the exponents of the two (per "
          f"seed, over every width) differ by at most {EQ4_SLOPE_TOL:g} on average", _weak_eq4, registered=REGISTERED),
    Claim("weak-ideal-exponent", "scaling", "In weak superposition the exponent follows the data: α_m = α − 1.",
          "Eq. 14; Fig. 4b",
          f"α − 1 = {PAPER['alpha_weak'].value:g} (n → ∞)",
          f"γ = 0.1, α = 1.5: the seed-mean α_m over every width against the ideal weak regime at the same n and "
          f"widths (the m most frequent features kept, Eq. 4 summed; α − 1 only as n → ∞); reproduced when within "
          f"{WEAK_IDEAL_TOL:g}", _weak_ideal, registered=REGISTERED),
    Claim("alpha-llm", "scaling", "Language models sit in strong superposition: their loss falls with width with "
          "α_m ≈ 1.", "Fig. 6; App. C",
          f"{PAPER['alpha_llm'].value:g} ± 0.04 (27 LLMs)",
          "would need the 27 pretrained models and their evaluation losses: not testable in this toy", _llm),
    Claim("llm-overlap", "mechanism", "Language models sit in strong superposition: their LM head's normalised rows "
          "have a mean squared overlap of about 1/m (our registered reading of Fig. 6a, which shows ∝ 1/m with a "
          "larger prefactor).", "Fig. 6; App. C (LLMs/overlap-0.py)",
          "∝ 1/m: 27 LLMs (OPT, Qwen2.5, GPT-2, Pythia) scatter around a slope-1 line near 25/m, m × overlap about "
          "5 to 100 (read off Fig. 6a; not fitted in the paper)",
          "the official measure (mean of (Ŵ_i·Ŵ_j)² over all pairs of L2-normalised rows, exact) on every real model "
          "at hand: SmolLM2-135M-Instruct (m = 576), all-MiniLM-L6-v2's word embeddings (m = 384), Gemma-3-270M "
          "(m = 640) when its file is there; 'consistent with 1/m' (reproduced) when at least 2 models were "
          "measured and every one has m × overlap in [0.5, 2]; not reproduced when one lies outside; fewer than 2 "
          "models: not testable (precondition). Beside it: the Welch bound and the toy's strong-regime m × overlap",
          _llm_overlap, registered=REGISTERED_LLM),
)


def metrics(views) -> dict:
    """The shipped verdict metrics (issue #31): per-width lists, the exponents, convergence, each profile."""
    s = _scaling(views)
    out = {"widths": s["widths"], "seeds": s["seeds"],
           "overlap_over_welch": s["strong"]["overlap_over_welch"].tolist(),
           "overlap_times_m": s["strong"]["overlap_times_m"].tolist(),
           "overlap_slope_m20": -s["overlap_slope"]["mean"],
           "alpha_strong": s["alpha_strong"]["mean"], "alpha_strong_all_widths": s["alpha_strong_all"]["mean"],
           "alpha_weak": s["alpha_weak"]["mean"], "alpha_weak_ideal": s["alpha_weak_ideal"],
           "alpha_weak_eq4": s["alpha_weak_eq4"]["mean"], "weak_eq4_ratio": s["weak"]["eq4_ratio"].tolist(),
           "weak_top_share": s["weak"]["top_share"].tolist(), "converged": s["converged"],
           "max_drift": s["max_drift"]}
    for r in s["profiles"].itertuples():
        out[f"alpha_strong_{r.profile}"] = r.alpha_m
        out[f"n_eff_{r.profile}"] = r.n_eff
    try:
        m10 = analysis.m10_table(views["m10_recipes"])
        out["m10_overlap_over_welch"] = [{"recipe": r.recipe, "ratio": r.overlap_over_welch, "loss": r.loss}
                                         for r in m10.itertuples()]
    except (KeyError, NotStored):
        pass
    return out


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """Strong vs weak superposition trained to convergence, loss against width, and the strong regime for three
    profiles, on one seed; the claims judged on it. --quick: n = 500, m = 10…80 (a few minutes on one core)."""
    from toymodels.shipped import reproduce_record
    from toymodels.store import write_tables

    from .sweeps import scaling

    cfg = {**(QUICK if quick else SCALING), "seeds": [int(seed)]}
    res = scaling(**cfg, device=device, progress=progress)
    if out is not None:
        s = analysis.summary(res)
        write_tables(out, {"superposition_width_sweep": res["table"], "superposition_strong_by_width": s["strong"],
                           "superposition_weak_by_width": s["weak"], "superposition_profiles": s["profiles"]})
    return reproduce_record(sys.modules[__name__], {"scaling": res}, quick, seed,
                            n=cfg["n"], widths=cfg["ms"], steps=cfg["steps"], max_steps=cfg["max_steps"],
                            batch=cfg["batch"])


__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("run", "geometry", "gamma_sweep", "width_sweep", "train_batched"), ".experiments"),
    **dict.fromkeys(("sweep", "fits", "scaling", "neff_sweep", "small_width_recipes", "profile_regimes",
                     "regime_probs"), ".sweeps"),
    **dict.fromkeys(("train_groups", "train_alone", "eq2_step", "grads", "grads_sparse", "lr_at", "lr_for",
                     "sample_x", "drift", "Schedule", "init_params"), ".training"),
    **dict.fromkeys(("validate_matrix", "load_matrix", "MAX_ROWS", "MAX_COLS"), ".uploads"),
    **dict.fromkeys(("embedding_overlap", "minilm_matrix", "minilm_overlap"), ".embeddings"),
    "llm_overlaps": ".llm",
})

__all__ = ["TOPIC", "PAPER", "VIEWS", "HEADLINE", "CLAIMS", "metrics", "reproduce", "InputError", "analysis", "MIN_M",
           "WEAK_ALPHA", "KNOBS", "CONV_TOL", "CONV_WINDOW", "GEOMETRY_GAMMAS",
           "GEOMETRY_SECONDS", "HEADLINE_REGIMES", "M10", "M10_RECIPES", "NEFF", "NEFF_RATIOS", "PRESETS", "QUICK",
           "REGIME_NAMES", "SCALING", "Config", "expected_seconds", "work_units", "memory_mb", "MAX_MB", "PROFILES",
           "V_MEAN", "V_SQ", "feature_probs", "n_eff", "param_for_neff", "profile_weights", "HIST_BINS",
           "fit_exponent", "ideal_weak_loss", "mean_sq_overlap", "measure", "selection_share", "weak_prediction",
           "welch_bound", "TRIED", "AGREE_Z", "WELCH_RATIO_MAX", "OVERLAP_TOL", "PROFILE_BAND", "NEFF_MIN_FACTOR",
           "EQ4_BAND", "EQ4_SLOPE_TOL", "WEAK_IDEAL_TOL", "MAX_WORK"]
