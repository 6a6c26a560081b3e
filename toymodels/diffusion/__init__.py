"""Why Diffusion Models Don't Memorize (Bonnaire, Urfin, Biroli, Mézard, NeurIPS 2025 best paper), with the
closed-form flow matching of Bertrand et al. (arXiv 2506.03719): the paper's own GMM check (SM B) trained on a CPU
shows τ_gen flat and τ_mem ∝ n; the random-features model of §3 is solved exactly.

The math: ``core`` (schedules DDPM/VP, OU, VE; data: the GMM of SM B, 2-D sets, digits; the closed-form denoiser
of Eq. 5; DDIM and reverse-SDE samplers; the flow-matching velocity; the memorisation test of Eq. 6 and quality
metrics), ``rf`` (the random-features model of §3), ``els`` (Kamb & Ganguli's ELS machine), ``network`` (the SM B
network as a stacked ensemble). Training: ``training``. Experiments: ``experiments`` (the generalisation window
τ_gen vs τ_mem ∝ n, the random-features timescales), ``flows`` (closed-form flow matching, CFM against EFM),
``explore`` (the page's visualiser). ``config``: configurations, bounds and cost models (light, no torch). This
file: the contract (``PAPER``, ``VIEWS``, ``CLAIMS``, ``metrics``, ``reproduce``).
"""
from __future__ import annotations

import math
from pathlib import Path

from toymodels.claims import (
    Claim,
    Evidence,
    Quote,
    all_of,
    claims,
    equivalence,
    exact,
    paper_numbers,
    pending,
    point,
    precondition,
)
from toymodels.errors import NotStored
from toymodels.topic import InputError, View, as_progress, lazy_exports, views  # noqa: F401 - InputError: for pages

from .config import (  # noqa: F401 - the page reads these
    DATASETS_2D,
    FLOW_BUDGET,
    FLOW_FRESH,
    FLOW_STUDY,
    KNOBS,
    RF_BUDGET,
    RF_STUDY,
    STUDY_WINDOW,
    WINDOW_BUDGET,
    FlowConfig,
    RFConfig,
    WindowConfig,
    ddpm_coeffs,
    expected_seconds,
    flow_cost,
    rf_cost,
    window_cost,
)

TOPIC = "diffusion"

PAPER = paper_numbers(
    tau_gen=Quote(100_000, "§2, Fig. 2", "FID reaches its plateau at τ_gen ≈ 100K SGD steps for every n "
                  "(CelebA 32×32, U-Net W = 32)"),
    tau_mem_over_n=Quote(300, "§2, Fig. 2", "f_mem(τ)/f_mem(τ_max) collapses against τ/n and rises at τ/n ≈ 300"),
    tau_mem_slope=Quote(1.0, "§2, Fig. 2; SM B", "τ_mem ∝ n (CelebA U-Net and the GMM of SM B)"),
    tau_gen_slope=Quote(0.0, "§2, Fig. 2", "τ_gen independent of n"),
    fmem_n1024=Quote("0% at 190K steps, 47.2% at 1.62M", "§2", "n = 1024: FID 35.1 and f_mem = 0 at τ = 190K"),
    rf_tau_mem=Quote("τ_mem = ψ_p/(Δ_t λ_min) ∝ ψ_n; τ_gen ~ 1/Δ_t", "§3, Thm 3.2",
                     "λ_min the lower edge of the ρ₁ bulk, s_t² + v_t²(1 − √(ψ_p/ψ_n))²"),
    rf_tau_mem_notes=Quote({4: 2.5e3, 8: 5.9e3, 16: 12.8e3, 32: 22.1e3}, "§3, Thm 3.2 (notes' evaluation)",
                           "the d → ∞ edge formula at t = 0.1, ψ_p = 64, tanh constants"),
    rf_loss_plateau=Quote("1 − O(Δ_t)", "§3", "L_train ≈ L_test for 1 ≪ τ ≪ ψ_n"),
    closed_form_fmem=Quote("100%", "§2, Eq. 5", "sampling with the exact empirical score reproduces training points"),
    cfm_efm=Quote("comparable FID; EFM matches or slightly improves it", "Bertrand et al., Alg. 2 (EFM) vs CFM",
                  "CIFAR-10 and CelebA-64, M ∈ {128, 256, 1000}: generalisation does not come from the target's "
                  "noise"),
    flow_alignment=Quote("cos(û*, x₁ − x₀) → 1 at small t in high d", "Bertrand et al., Finding 1",
                         "CIFAR-10 aligns early; 2-moons only at large t"),
    hybrid_switch=Quote("creative for τ ≤ 0.2, copies for τ ≥ 0.4", "Bertrand et al., Finding 3",
                        "û* for t ≤ τ, the network after (CIFAR-10, CelebA-64)"),
)

#: The visualiser's data sets: stable ids (stored in links) → labels, and the view that holds each.
VIZ_DATA = {**DATASETS_2D, "digits": "8×8 digits (d = 64)"}
VIZ_VIEW = {"moons": "process_2d", "ring": "process_2d_ring", "gmm2": "process_2d_gmm2", "digits": "process_digits"}
#: The ELS machine's patch sizes, each a shipped view.
ELS_VIEW = {3: "els", 5: "els_p5", 7: "els_p7"}

_2D = dict(n=32, train_steps=3000, width=64, n_samples=300, sampler_steps=100, seed=0)

VIEWS = views(
    View("study", ".experiments:window_study", dict(cfg=STUDY_WINDOW), label="Training 20 denoisers…",
         seconds=expected_seconds(STUDY_WINDOW, "study")),
    View("window", ".experiments:train_window", dict(cfg=WindowConfig()), label="Training the denoisers…",
         seconds=expected_seconds(WindowConfig())),
    View("rf_study", ".experiments:rf_study", dict(cfg=RF_STUDY, seeds=3),
         label="Estimating U, V and solving the dynamics for three seeds…", seconds=expected_seconds(RF_STUDY) * 3),
    View("rf", ".experiments:run_rf", dict(cfg=RFConfig()), label="Estimating U, V and solving the dynamics…",
         seconds=expected_seconds(RFConfig())),
    View("cfm_efm", ".flows:cfm_vs_efm", dict(cfg=FLOW_STUDY), label="Training CFM and EFM velocity fields…",
         seconds=expected_seconds(FLOW_STUDY)),
    View("cfm_efm_fresh", ".flows:cfm_vs_efm", dict(cfg=FLOW_FRESH),
         label="Training CFM and EFM velocity fields on fresh seeds…", seconds=expected_seconds(FLOW_FRESH)),
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
HEADLINE = "study"

# --------------------------------------------------------------------------- the claims (tests written before the runs)

#: τ_gen is flat when the 95% interval of its slope against n lies inside ±0.35 (n^0.35 is a 2× change over 8× in n,
#: against 8× for τ_mem ∝ n).
TAU_GEN_FLAT = 0.35
#: τ_mem ∝ n: the slope within ±0.2 of 1 and its 95% interval inside [0.6, 1.4]; every crossing inside its run.
TAU_MEM_POINT, TAU_MEM_BAND, TAU_MEM_INSIDE = (0.8, 1.2), (0.6, 1.4), 0.75
#: The closed-form sampler memorises: f_mem ≥ 0.95 on every training set.
CLOSED_FORM_FMEM_MIN = 0.95
#: CFM ≈ EFM: the paired f_mem difference within ±0.10 (issue 41: the equivalence rule, FM_LEVEL below).
FM_MARGIN = 0.10


#: CFM ≈ EFM under the equivalence rule (issue 41, registered before the fresh run): the paired f_mem difference's
#: 90% Student-t interval (TOST at 5%) inside ±FM_MARGIN.
FM_LEVEL = 0.90
REGISTERED_41 = "commit 9f87d83 (2026-11-27, issue 41)"


def _iv(lo: float, hi: float, digits: int = 2, level: str = "95%") -> str:
    return f"{level} CI [{lo:.{digits}f}, {hi:.{digits}f}]"


def _study_seeds(res) -> int:
    return int(res["config"]["seeds"])


def _tau_gen_flat(views) -> Evidence:
    res = views["study"]
    b, (lo, hi) = float(res["tau_gen_slope"]), res["tau_gen_slope_ci"]
    bm, (mlo, mhi) = float(res["tau_gen_mmd_slope"]), res["tau_gen_mmd_slope_ci"]
    n = _study_seeds(res)
    se = equivalence(b, (lo, hi), margin=TAU_GEN_FLAT, n=n, what="τ_gen slope (score error, registered)")
    mmd = equivalence(bm, (mlo, mhi), margin=TAU_GEN_FLAT, n=n, what="τ_gen slope (MMD², sample quality)")
    verdict = ("both definitions agree" if se.status == mmd.status else
               f"the definitions disagree: the sample-quality one, closer to the paper's FID plateau, reads "
               f"'{mmd.status}'")
    return Evidence(f"τ_gen ∝ n^{b:.2f} (score error); n^{bm:.2f} (MMD²)", se, seeds=n,
                    uncertainty=_iv(lo, hi) + " and " + _iv(mlo, mhi) + " (stratified bootstrap over seeds)",
                    note=f"Decided by the registered definition (score error against the exact GMM score, 90% of its "
                         f"drop); {verdict}. MMD²: {mmd.reason}. "
                         + ("τ_gen falls slightly with n (full-batch training gives larger n larger batches)."
                            if hi < 0 else ""),
                    metrics={"tau_gen_slope": b, "tau_gen_slope_ci": [lo, hi], "tau_gen_mmd_slope": bm,
                             "tau_gen_mmd_slope_ci": [mlo, mhi]})


def _tau_mem_linear(views) -> Evidence:
    res = views["study"]
    a, (lo, hi) = float(res["tau_mem_slope"]), res["tau_mem_slope_ci"]
    per = res["per_model"]
    frac = [float(v) for v in per["fraction_of_run"]]
    memorised = all(math.isfinite(v) for v in frac)
    inside = memorised and max(frac) <= TAU_MEM_INSIDE
    where = (f"every crossing at ≤ {max(frac):.2f} of its run" if memorised else
             f"{sum(not math.isfinite(v) for v in frac)} of {len(frac)} models never memorised within the run")
    mid, half = (TAU_MEM_BAND[0] + TAU_MEM_BAND[1]) / 2, (TAU_MEM_BAND[1] - TAU_MEM_BAND[0]) / 2
    d = precondition(inside, f"τ_mem is the crossing inside the run; {where}") or all_of(
        equivalence(a, (lo, hi), margin=half, target=mid, n=_study_seeds(res), what="τ_mem slope"),
        point(TAU_MEM_POINT[0] <= a <= TAU_MEM_POINT[1], f"the slope {a:.2f} in [{TAU_MEM_POINT[0]}, "
                                                          f"{TAU_MEM_POINT[1]}]"))
    return Evidence(f"τ_mem ∝ n^{a:.2f}", d, seeds=_study_seeds(res),
                    uncertainty=_iv(lo, hi) + " (stratified bootstrap over seeds)",
                    note=f"τ_mem: the sustained crossing of f_mem ≥ 2%; {where}.",
                    metrics={"tau_mem_slope": a, "tau_mem_slope_ci": [lo, hi],
                             "tau_mem_fraction_of_run_max": max(frac) if memorised else None})


def _rf_mechanism(views) -> Evidence:
    res = views["rf_study"]
    a, a_ci = float(res["tau_mem_slope"]), res["tau_mem_slope_ci"]
    b, b_ci = float(res["tau_gen_slope"]), res["tau_gen_slope_ci"]
    mid, half = (TAU_MEM_BAND[0] + TAU_MEM_BAND[1]) / 2, (TAU_MEM_BAND[1] - TAU_MEM_BAND[0]) / 2
    d = all_of(equivalence(a, a_ci, margin=half, target=mid, n=int(res["seeds"]), what="τ_mem slope"),
               equivalence(b, b_ci, margin=TAU_GEN_FLAT, n=int(res["seeds"]), what="τ_gen slope"))
    return Evidence(f"τ_mem ∝ ψ_n^{a:.2f}, τ_gen ∝ ψ_n^{b:.2f}", d,
                    seeds=int(res["seeds"]), uncertainty=f"τ_mem slope {_iv(*a_ci)}, τ_gen slope {_iv(*b_ci)} "
                                                         "(Student t over seeds)",
                    note=f"d = {res['config']['d']}, p = {res['p']:,}: λ_min measured from U's spectrum (the first "
                         f"eigenvalue above the δ peak); the d → ∞ edge formula gives "
                         f"ψ_n^{float(res['tau_mem_theory_slope']):.2f}. {_edge_note(res['summary'])} "
                         f"{_regime_note(res)}",
                    metrics={"rf_tau_mem_slope": a, "rf_tau_mem_slope_ci": list(a_ci), "rf_tau_gen_slope": b,
                             "rf_tau_gen_slope_ci": list(b_ci)})


def _regime_note(res) -> str:
    """Where the run sits against Thm 3.2's regime (d → ∞, ψ_p > ψ_n ≫ 1)."""
    cfg = res["config"]
    psi = sorted(float(v) for v in cfg["psi_ns"])
    return (f"Thm 3.2 is an asymptotic statement (d → ∞ with ψ_p > ψ_n ≫ 1); this run has d = {cfg['d']} and ψ_n "
            f"down to {psi[0]:g} (n = {int(psi[0] * cfg['d'])}): outside that regime at small ψ_n, where the "
            "measured λ_min sits far below the edge formula (a finite-d edge), so the test reads the model at "
            "d = 40, not the theorem's limit.")


def _edge_note(summary) -> str:
    """How the measured λ_min compares with Thm 3.2's edge at the smallest and the largest ψ_n (seeds' mean)."""
    by = summary.groupby("psi_n")[["lambda_min", "lambda_min_theory"]].mean()
    lo, hi = by.index.min(), by.index.max()
    ratio = by.lambda_min / by.lambda_min_theory
    return (f"Measured λ_min / the edge's: {ratio[lo]:.2f} at ψ_n = {lo:g}, {ratio[hi]:.2f} at ψ_n = {hi:g} (a "
            "measured edge below the formula where ψ_p/ψ_n is large flattens the slope).")


def _closed_form(views) -> Evidence:
    gmm = [float(v) for v in views["study"]["closed_form"]["f_mem"]]
    refs = views["cfm_efm"]["references"]
    dig = [float(v) for v in refs.loc[refs.source == "closed-form sampler", "f_mem"]]
    values = gmm + dig
    low = min(values)
    return Evidence(f"f_mem ≥ {low:.3f} on {len(values)} training sets",
                    exact(low >= CLOSED_FORM_FMEM_MIN, f"the exact empirical score reproduces its training points: "
                                                       f"f_mem ≥ {CLOSED_FORM_FMEM_MIN} on every set (a closed form, "
                                                       "known before the run)"), seeds=len(values),
                    uncertainty=f"min {low:.3f}, mean {sum(values) / len(values):.3f} over the sets (1,000 GMM or "
                                "500 digit samples each)",
                    note=f"{len(gmm)} GMM sets (DDIM, 100 steps) and {len(dig)} digit sets (Euler on û*, 100 steps).",
                    metrics={"closed_form_fmem_min": low, "closed_form_sets": len(values)})


def _fm_interval(res, level: float = FM_LEVEL) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the paired EFM − CFM difference of f_mem."""
    from scipy.stats import t

    d = [float(v) for v in res["fm_pairs"].f_diff]
    n = len(d)
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return m, m - half, m + half


def _cfm_efm(views) -> Evidence:
    first = views["cfm_efm"]
    m0, lo0, hi0 = _fm_interval(first)
    note = (f"The first run (seeds 0-5 per n, fe57f92) gave {m0:+.3f}, 90% CI [{lo0:+.3f}, {hi0:+.3f}], decided "
            "then by a point-null rule (it excludes 0: 'not reproduced'); the equivalence rule is decided on fresh "
            "seeds.")
    try:
        res = views["cfm_efm_fresh"]
    except (NotStored, KeyError):
        return Evidence(f"first run Δf_mem = {m0:+.3f}", pending(VIEWS["cfm_efm_fresh"].pending), seeds=0, note=note)
    m, lo, hi = _fm_interval(res)
    r, (r_lo, r_hi) = float(res["fm_nn_rel_diff"]), res["fm_nn_rel_ci"]
    pairs = len(res["fm_pairs"])
    d = equivalence(m, (lo, hi), margin=FM_MARGIN, n=pairs, what="Δf_mem (EFM − CFM)")
    return Evidence(f"Δf_mem = {m:+.3f} (EFM − CFM)", d, seeds=pairs,
                    uncertainty=_iv(lo, hi, 3, "90%") + " (Student t over paired seeds)",
                    note=f"{note} Median distance to held-out digits, EFM vs CFM: {100 * r:+.1f}% "
                         f"({_iv(100 * r_lo, 100 * r_hi, 1)} %).",
                    metrics={"fm_diff": m, "fm_diff_ci": [lo, hi], "fm_nn_rel_diff": r,
                             "fm_nn_rel_ci": [r_lo, r_hi]})


CLAIMS = claims(
    Claim("tau-mem-linear", "headline", "Memorisation sets in at a time τ_mem proportional to n.",
          "§2, Fig. 2; SM B", "τ_mem ∝ n (τ/n ≈ 300 on CelebA)",
          f"Window study on the GMM of SM B (n ∈ {{32, 64, 128, 256}}, 5 fresh seeds per n, runs of 300 n full-batch "
          f"steps): τ_mem = the sustained crossing of f_mem ≥ 2% (1,000 DDIM samples, Eq. 6, k = 1/3). Every model "
          f"memorises inside its run (τ_mem ≤ {TAU_MEM_INSIDE} S), the slope of τ_mem against n lies in "
          f"[{TAU_MEM_POINT[0]}, {TAU_MEM_POINT[1]}] and its 95% stratified-bootstrap interval inside "
          f"[{TAU_MEM_BAND[0]}, {TAU_MEM_BAND[1]}].",
          _tau_mem_linear, registered="commit b7554c8 (2026-11-25)"),
    Claim("tau-gen-flat", "headline",
          "Generation quality arrives at a time τ_gen that does not depend on the training-set size n.",
          "§2, Fig. 2; SM B", "τ_gen ≈ 100K SGD steps for every n (CelebA, U-Net W = 32)",
          f"Same study: τ_gen = the step where the score error has made 90% of its drop; the log-log slope of τ_gen "
          f"against n (geometric means over seeds) has its 95% stratified-bootstrap interval inside "
          f"[−{TAU_GEN_FLAT}, {TAU_GEN_FLAT}] (equivalence rule; wholly outside: not reproduced). Shown beside it: "
          "the same rule on τ_gen by sample quality (MMD² ≤ 0.05), the nearer analogue of the paper's FID plateau.",
          _tau_gen_flat, registered="commit b7554c8 (2026-11-25)",
          fitted=("the τ_gen definition: score error, chosen after the paper notes' pilot, where it gave a slope of "
                  "−0.14 and the MMD² definition −0.44",)),
    Claim("rf-spectrum", "mechanism",
          "In the random-features model the memorisation time τ_mem = ψ_p/(Δ_t λ_min), set by the lower edge of "
          "the ρ₁ bulk, grows ∝ ψ_n = n/d, while τ_gen ~ 1/Δ_t does not depend on ψ_n.",
          "§3, Thm 3.2", PAPER["rf_tau_mem"].value,
          "Exact gradient-flow dynamics at d = 40, p = 2,560 (ψ_p = 64), ψ_n ∈ {4, 8, 16, 32}, t = 0.1, 3 fresh "
          "seeds: the mean slope of τ_mem (λ_min measured from U's spectrum) against ψ_n has its 95% Student-t "
          f"interval inside [{TAU_MEM_BAND[0]}, {TAU_MEM_BAND[1]}], and that of τ_gen (test loss 90% of its drop) "
          f"inside [−{TAU_GEN_FLAT}, {TAU_GEN_FLAT}] (equivalence rule on each; not reproduced if one lies wholly "
          "outside). d = 40 and ψ_n = 4 are outside Thm 3.2's asymptotic regime (d → ∞, ψ_n ≫ 1).",
          _rf_mechanism, registered="commit b7554c8 (2026-11-25)"),
    Claim("closed-form-memorises", "control",
          "Sampling with the exact empirical (closed-form) score only reproduces training points.",
          "§2, Eq. 5", PAPER["closed_form_fmem"].value,
          f"f_mem (Eq. 6, k = 1/3) of the closed-form sampler ≥ {CLOSED_FORM_FMEM_MIN} on every training set: the "
          "window study's 20 GMM sets (DDIM) and the flow-matching comparison's 12 digit sets (Euler on û*).",
          _closed_form, registered="commit b7554c8 (2026-11-25)"),
    Claim("cfm-equals-efm", "control",
          "Training on the closed-form target (EFM) generalises as well as training on the stochastic conditional "
          "target (CFM): generalisation does not come from the target's noise (Bertrand et al.).",
          "Bertrand et al. (arXiv 2506.03719), Alg. 2", PAPER["cfm_efm"].value,
          "Digits (d = 64), n ∈ {64, 128}, 6 paired seeds per n (same training set, initialisation and draws of x₀, "
          "t and batch), the SM B network of width 128, Adam 1e-3, batch 128, 10,000 steps each, on fresh seeds "
          "(FLOW_FRESH: everything drawn from seed 100): the equivalence rule (TOST at 5%) on the EFM − CFM "
          f"difference of f_mem at the last checkpoint over the 12 pairs: reproduced if its {FM_LEVEL:.0%} Student-t "
          f"interval lies inside ±{FM_MARGIN} (the margin registered in fe57f92), not reproduced if it lies wholly "
          "outside, else not testable here. The relative difference of the median distance to held-out digits is "
          "reported beside it.",
          _cfm_efm, registered=REGISTERED_41),
)


def metrics(views) -> dict:
    """The shipped verdict metrics (issue #32); a group whose view is not stored is left out."""
    fresh = {}
    try:
        m, lo, hi = _fm_interval(views["cfm_efm_fresh"])
        fresh = {"fm_fresh_diff": m, "fm_fresh_diff_ci": [lo, hi]}
    except (NotStored, KeyError):
        pass
    out: dict = {}
    try:
        res = views["study"]
        s, per = res["summary"], res["per_model"]
        out.update(sizes=[int(v) for v in s.n], seeds=_study_seeds(res),
                   tau_mem_slope=float(res["tau_mem_slope"]), tau_mem_slope_ci=list(res["tau_mem_slope_ci"]),
                   tau_gen_slope=float(res["tau_gen_slope"]), tau_gen_slope_ci=list(res["tau_gen_slope_ci"]),
                   tau_mem_fraction_of_run=[float(v) for v in s.fraction_of_run],
                   tau_mem_fraction_of_run_max=[float(v) for v in s.fraction_of_run_max],
                   tau_mem=[float(v) for v in s.tau_mem], tau_gen=[float(v) for v in s.tau_gen],
                   f_mem_at_100n=[float(v) for v in s.f_at_100n], f_mem_at_200n=[float(v) for v in s.f_at_200n],
                   f_mem_at_300n=[float(v) for v in s.f_at_300n],
                   tau_mem_per_seed=[{"n": int(r.n), "seed": int(r.seed), "tau_mem": float(r.tau_mem),
                                      "fraction_of_run": float(r.fraction_of_run)} for r in per.itertuples()],
                   closed_form_fmem_min=float(res["closed_form"]["f_mem"].min()),
                   paper_tau_mem_slope=PAPER["tau_mem_slope"].value, paper_tau_gen_slope=PAPER["tau_gen_slope"].value)
    except (NotStored, KeyError):
        pass
    try:
        res = views["cfm_efm"]
        pairs, refs = res["fm_pairs"], res["references"]
        out.update(fm_seeds=int(res["config"]["seeds"]), fm_pairs=len(pairs), fm_mem_cfm=float(pairs.f_cfm.mean()),
                   fm_mem_efm=float(pairs.f_efm.mean()),
                   fm_mem_closed_form=float(refs.loc[refs.source == "closed-form sampler", "f_mem"].mean()),
                   fm_diff=float(res["fm_diff"]), fm_diff_ci=list(res["fm_diff_ci"]), **fresh)
    except (NotStored, KeyError):
        pass
    try:
        res = views["rf_study"]
        out.update(rf_tau_mem_slope=float(res["tau_mem_slope"]), rf_tau_mem_slope_ci=list(res["tau_mem_slope_ci"]),
                   rf_tau_gen_slope=float(res["tau_gen_slope"]), rf_tau_gen_slope_ci=list(res["tau_gen_slope_ci"]))
    except (NotStored, KeyError):
        pass
    return out


def run_summary(result) -> str:
    """One sentence on a visitor's own ``train_window`` run, with the claims' bands (the page shows it)."""
    a, b = float(result["tau_mem_slope"]), float(result["tau_gen_slope"])
    n = len(result["summary"])
    mem = int(sum(math.isfinite(float(v)) for v in result["summary"]["tau_mem"]))
    a_txt = f"n^{a:.2f}" if math.isfinite(a) else "not measurable (fewer than two sizes memorised)"
    b_txt = f"n^{b:.2f}" if math.isfinite(b) else "not measurable"
    in_band = math.isfinite(a) and TAU_MEM_POINT[0] <= a <= TAU_MEM_POINT[1] and math.isfinite(b) and \
        abs(b) <= TAU_GEN_FLAT
    return (f"Your run: τ_mem ∝ {a_txt}, τ_gen ∝ {b_txt}; {mem} of {n} sizes memorised (f_mem ≥ 2% at the end). "
            + ("Both slopes fall inside the claims' bands (one seed: no interval)." if in_band else
               "At least one slope falls outside the claims' bands (one run, no interval: compare with the study)."))


# --------------------------------------------------------------------------- the command line


def _quick_study(seed: int) -> WindowConfig:
    return WindowConfig(ns=[32, 64, 128], seeds=2, steps_per_n=200, n_samples=500, ddim_steps=50,
                        ckpt_per_decade=8, seed=seed)


QUICK_RF = RFConfig(d=16, samples=20_000, n_test=1000, test_draws=10)


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """The window study (τ_gen flat, τ_mem ∝ n, closed-form sampler), the random-features timescales and CFM
    against EFM. ``quick``: 2 seeds at n ∈ {32, 64, 128}, S = 200 n, the RF model at d = 16 (the flow-matching claim
    is then judged on the shipped comparison); else the shipped studies' settings (about 50 minutes of CPU)."""
    from dataclasses import replace

    from toymodels.shipped import reproduce_record

    from .experiments import rf_study, window_study
    from .flows import cfm_vs_efm

    p = as_progress(progress)
    if quick:
        wcfg, rcfg, seeds = _quick_study(seed), replace(QUICK_RF, seed=seed), 2
    else:
        wcfg, rcfg, seeds = replace(STUDY_WINDOW, seed=seed), replace(RF_STUDY, seed=seed), 3
    # fixed, known configurations beyond the page's live budgets: the unchecked functions
    win = window_study.__wrapped__(wcfg, device=device, progress=p.sub(0.0, 0.6 if not quick else 0.8, "window: "))
    rfr = rf_study.__wrapped__(rcfg, seeds=seeds, device=device,
                               progress=p.sub(0.6 if not quick else 0.8, 0.7 if not quick else 1.0, "RF: "))
    computed = {"study": win, "rf_study": rfr}
    if not quick:
        computed["cfm_efm"] = cfm_vs_efm.__wrapped__(replace(FLOW_STUDY, seed=seed), device=device,
                                                     progress=p.sub(0.7, 1.0, "CFM vs EFM: "))
    s, rs = win["summary"], rfr["summary"]
    if out is not None:
        from toymodels.store import write_tables

        tables = {"window_curves": win["curves"], "window_summary": s, "window_per_model": win["per_model"],
                  "rf_summary": rs, "rf_per_seed": rfr["per_seed"]}
        if "cfm_efm" in computed:
            tables.update(fm_curves=computed["cfm_efm"]["curves"], fm_pairs=computed["cfm_efm"]["fm_pairs"])
        write_tables(out, tables)
    first = rs[rs.seed == rs.seed.min()]
    return reproduce_record(
        __import__(__name__, fromlist=["TOPIC"]), computed, quick, seed,
        ns=[int(v) for v in s.n], tau_gen=[float(v) for v in s.tau_gen], tau_mem=[float(v) for v in s.tau_mem],
        tau_mem_half=[float(v) for v in s.tau_mem_half], tau_mem_half_slope=float(win["tau_mem_half_slope"]),
        tau_gen_mmd=[float(v) for v in s.tau_gen_mmd], tau_gen_mmd_slope=float(win["tau_gen_mmd_slope"]),
        tau_gap=[float(v) for v in s.tau_gap], tau_gap_slope=float(win["tau_gap_slope"]),
        f_mem_final=[float(v) for v in s.f_final],
        closed_form_fmem=float(win["closed_form"]["f_mem"].mean()),
        rf_psi_n=[float(v) for v in first.psi_n], rf_tau_mem=[float(v) for v in first.tau_mem],
        rf_tau_mem_theory=[float(v) for v in first.tau_mem_theory],
        rf_tau_mem_theory_slope=float(rfr["tau_mem_theory_slope"]),
        rf_tau_mem_gap=[float(v) for v in first.tau_mem_gap],
        rf_tau_mem_gap_slope=float(rfr["tau_mem_gap_slope"]), rf_tau_gen=[float(v) for v in first.tau_gen],
        rf_loss_train_tau10=[float(v) for v in first.loss_train_10],
        rf_loss_test_tau10=[float(v) for v in first.loss_test_10],
        config={"window": win["config"], "rf": rfr["config"]})


#: Public names, each imported from its module on first use (so importing this package never imports torch).
_LAZY = {name: ".experiments" for name in ("train_window", "window_study", "run_rf", "rf_study", "checkpoint_steps",
                                           "summarise", "analyse_window",
                                           "slope_interval")}
_LAZY.update({name: ".summaries" for name in ("FMEM_FLOOR", "model_times", "model_times_table", "window_curves",
                                              "seed_curves", "timescales",
                                              "collapse_table", "per_seed_table", "fm_curves", "fm_references",
                                              "fm_table", "fm_reading", "rf_curves", "rf_spectra", "rf_timescales",
                                              "hybrid_long", "power_fit", "rf_edges")})
_LAZY.update({name: ".notebook" for name in ("lab_notebook", "CAVEATS", "NOTEBOOK")})
_LAZY.update({name: ".explore" for name in ("process_2d", "process_digits", "els_digits")})
_LAZY.update({name: ".flows" for name in ("flow_alignment", "hybrid_sampling", "cfm_vs_efm", "compare_arms")})
_LAZY.update({"fit_denoiser": ".training", "els_denoiser": ".els", "Denoiser": ".network"})
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
