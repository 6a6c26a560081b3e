"""The page's sentences, built from the views' numbers: what to notice, the text beside each chart, the caveats.
The page lays them out; nothing here imports Streamlit or decides a claim (the ledger does)."""
from __future__ import annotations

from typing import Any, Mapping

from .config import CurveConfig

CAVEATS = (
    "The intervals are normal bootstrap intervals over seeds (the estimate ± 1.96 standard deviations of its "
    "resampled values), so each contains its estimate. A resampled Δ/σ reads high (a resample with repeated seeds "
    "has a smaller seed spread, and where Δ is mostly the finite-seed floor it carries the floor twice), so the "
    "percentile interval of the same resamples could exclude its own estimate (lab notebook).",
    "The horizon t0 = 830 at p = 64 comes from the constant-rate frontier (the notes' t0 = 300 is 2.8 × short of "
    "it); the exponent γ* = a does not depend on it.",
    "Seeded losses are stored as float32 (the summaries are computed from the stored values).",
    "The fast sampler draws each SGD step's exact distribution with p + 2B normals instead of B·p; the tests check "
    "it against the plain minibatch and against the recursion.",
)


def ratio_text(summary: Mapping[str, Any]) -> str:
    lo, hi = summary["ratio_ci"]
    return f"Δ/σ = **{summary['ratio']:.2f}** (95% CI over seeds [{lo:.2f}, {hi:.2f}])"


def l0_probe_caption(rows) -> str:
    """Under the knobs: our misfit-L0 probe on the 20-seed runs (``l0_probe``)."""
    return ("Our own probe, not one of the paper's claims (the official README says only \"check the L0 fit\"): the "
            "20-seed runs, linear decay at γ*, normalised with a misfit L0: " + "; ".join(
                f"L0 {r['l0_frac']:+.0%}: Δ/σ = {r['ratio']:.2f} (95% CI [{r['ratio_lo']:.2f}, {r['ratio_hi']:.2f}])"
                for r in rows) + ".")


def headline_notice(norm: Mapping[str, Any], noise: Mapping[str, Any], at_default: bool) -> str:
    """What to notice beside the headline figure."""
    return (f"The curves of p = 64 … 2048 {'are one line' if at_default else 'at these settings'} (median spread "
            f"{norm['median']:.1e} in ℓ); across sizes 64 … 512 with {noise['n_seeds']} seeds each, "
            f"{ratio_text(noise['summary'])}: **{noise['reading']}**."
            + (" The paper's Fig. 1c shows the same for transformers on CIFAR-5M." if at_default else
               " The ledger's number is at γ*, linear decay, true L0."))


def spread_caption(norm: Mapping[str, Any]) -> str:
    return (f"Spread across sizes: **Δ = {norm['median']:.1e}** (median over x in [0.2, 0.95]; exact expected "
            "curves, no seeds): the headline's lines magnified. The knobs are beside the headline.")


def exponent_caption(sel: Mapping[str, Mapping[str, Any]]) -> str:
    """Under the spread-against-γ chart: where the spread bottoms out, per schedule (``exponent_selection``)."""
    return (f"Each point is a full set of expected curves with horizons t*(p) ∝ p^γ. The spread bottoms out at "
            f"**{sel['constant']['best_mult']:g} γ*** at a constant rate (Δ(γ*) is "
            f"{sel['constant']['opt_over_off']:.3f} of the smaller of Δ(0.8 γ*), Δ(1.2 γ*)) and at "
            f"**{sel['linear']['best_mult']:g} γ*** with linear decay (ratio {sel['linear']['opt_over_off']:.2f}): "
            "the collapse points at the compute-optimal exponent, more sharply without decay. The circle marks the "
            "settings above.")


def noise_numbers(noise: Mapping[str, Any]) -> str:
    """Beside the noise chart: Δ/σ, σ and the systematic part."""
    s = noise["summary"]
    return (f"Sizes 64 … 512, {noise['n_seeds']} seeds each.\n\n- {ratio_text(s)}: **{noise['reading']}**\n"
            f"- seed noise σ = **{s['noise']:.4f}** (median; CI [{s['noise_ci'][0]:.4f}, {s['noise_ci'][1]:.4f}])\n"
            f"- Δ with the finite-seed floor removed, over σ: {s['systematic']:.2f}\n\n"
            "With S seeds the seed means still carry noise, so the measured Δ cannot fall much below "
            "σ·√(3/(4S)); the exact spread of the expected curves (purple) has no such floor.")


def constant_note(const: Mapping[str, Any]) -> str:
    """Under the noise chart: constant-rate curves collapse too (``const``: their summary at γ*)."""
    return (f"Note: at γ* this model's constant-rate curves also sit below their own seed noise (Δ/σ = "
            f"{const['ratio']:.2f}, σ = {const['noise']:.4f}), because at constant rate the scaling form makes the "
            "expected curves collapse almost exactly. Here decay shows its effect in σ itself (section 3 says why); "
            "the Lab notebook's seeded-runs table compares the schedules off γ*.")


def schedule_text(sched_model: Mapping[str, Any], paper: Mapping[str, Any]) -> str:
    """Beside the schedule-model chart: one α fitted on linear decay, and how well it predicts cosine (``paper``:
    the topic's ``PAPER``)."""
    errs = sched_model["errors"]
    worst = errs[errs["schedule"] != sched_model["fit_on"]]["error"].max()
    return (f"L_sched(t) ≈ L_const(τ(t)) + α (η(t)/η_peak − 1) tr(PΣ_t), with τ = Σ η/η_peak and Σ the minibatch "
            f"gradient covariance: one **α = {sched_model['alpha']:.2f}**, fitted on linear decay, predicts the "
            f"cosine curves to within **{worst:.0%}** of their deformation. As η → 0 the noise term vanishes, which "
            f"is why a decayed run ends with little seed noise. The paper fits α = {paper['alpha_cifar5m'].value} "
            f"(CIFAR-5M) and {paper['alpha_mlp'].value} (MLP) for Adam; our α is for plain SGD (quasi-static value "
            "1/2), so the values are not comparable, the form is.")


def frontier_text(front: Mapping[str, Any], a: float, paper: Mapping[str, Any]) -> str:
    """Beside the frontier chart: the fitted horizon exponent against γ* = a."""
    exponent = paper["data_exponent"]
    return (f"Each size is run well past its horizon at a constant rate. Their lower envelope is the compute-optimal "
            f"frontier; along it the optimal horizon grows as t* ∝ p^**{front['gamma_hat']:.2f}** (fitted over "
            f"{front['n_fitted']} sizes; theory: γ* = a = {a:g}) and p = 64 is best at **{front['t_opt_p0']:.0f}** "
            f"steps. The grey dots mark t*(p) = {CurveConfig().t0:g} (p/64)^1.5, the horizons used everywhere on this "
            f"page. The paper fits the same law to its MLPs: T ∝ P^{exponent.value:g} ({exponent.source}).")


def paper_trained(paper: Mapping[str, Any]) -> str:
    """What the paper trained, and why this page runs its theory instead."""
    return (f"- MLP on power-law Fourier features: {paper['mlp_setup'].value} ({paper['mlp_setup'].source}).\n"
            f"- Transformers on CIFAR-5M next-pixel prediction: {paper['transformer_setup'].value} "
            f"({paper['transformer_setup'].source}); also chess (Lichess) transformers.\n\n"
            "The largest MLP run alone is about 10¹³ FLOPs, each horizon comes from a compute frontier fitted on "
            "overtrained runs, and the transformers run billions of tokens on GPUs: hours to days per ladder, not a "
            "laptop's seconds. This page runs the paper's theory instead, the power-law SGD model its explanation "
            "rests on, exactly and with seeds. Its numbers test the mechanism, not the transformers.")


def model(t0: float) -> tuple:
    """The model in words and equations (``t0``: the horizon of p = 64), for ``ui.blocks``."""
    return ("Features $x_j \\sim \\mathcal N(0, \\lambda_j)$ with $\\lambda_j = j^{-a}$; target "
            "$y = \\sum_j \\beta_j x_j$ with signal power $\\lambda_j \\beta_j^2 = j^{-b}$ ($a = b = 1.5$). A model "
            "of size $p$ fits the first $p$ features, $f(x) = \\sum_{j\\le p} \\theta_j x_j$; the rest is noise it "
            "cannot learn, of variance $\\zeta(b, p+1)$ (Hurwitz zeta), so the irreducible loss of the infinite model "
            "is $L_0 = 0$ exactly. One-pass SGD, batch $B = 16$, peak rate $\\eta = 0.2$. With Gaussian features the "
            "expected loss closes on $m_j = E(\\theta_j-\\beta_j)^2$:",
            ("tex", r"m_j \leftarrow m_j\left(1 - 2\eta_t\lambda_j + \eta_t^2\lambda_j^2\left(1+\tfrac1B\right)\right)"
                    r" + \frac{\eta_t^2\lambda_j}{B}\Big(\sum_k \lambda_k m_k + \zeta(b, p+1)\Big),\qquad"
                    r" E\,L = \sum_j \lambda_j m_j + \zeta(b,p+1)."),
            "Size $p$ trains for $t^*(p) = t_0 (p/64)^{\\gamma}$ steps at compute $c = p\\,t$. The scaling form "
            "$L \\approx p^{1-b} F(t/p^{a})$ makes $\\gamma^* = a$ compute-optimal; "
            f"$t_0 = {t0:g}$ is where the constant-rate frontier puts the optimal horizon of $p = 64$ (the paper fits "
            "its horizon the same way). Normalised curve: $\\ell(x) = (L(xT) - L_0)/(L(T) - L_0)$; spread "
            "$\\Delta(x)$: standard deviation over sizes of the seed-mean $\\ell$; noise $\\sigma(x)$: standard "
            "deviation over seeds, averaged over sizes (the official `collapse.ipynb`).")


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "supercollapse": "Normalised loss curves of different model sizes agreeing more closely than two seeds "
                     "of one model do (spread Δ below the seed noise σ).",
    "compute-optimal": "Trained for the number of steps that gives the lowest loss for the compute spent.",
}
