"""The page's sentences, built from the shipped studies' numbers: what to notice, how each study was run, the
captions under its tables. The page lays them out; nothing here imports Streamlit or decides a claim (the ledger
does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

from typing import Any, Mapping


def ci(pair, digits: int = 2) -> str:
    """An interval as ``[lo, hi]``."""
    lo, hi = pair
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def headline_notice(study: Mapping[str, Any], terms: Mapping[str, str]) -> str:
    """What to notice beside the headline figure: τ_mem grows with n, τ_gen does not."""
    return (f"The memorisation time {terms['τ_mem']} (orange) grows in proportion to n (slope "
            f"{study['tau_mem_slope']:.2f}, 95% CI {ci(study['tau_mem_slope_ci'])}) while the time to good samples "
            f"{terms['τ_gen']} (blue) does not (slope {study['tau_gen_slope']:.2f}): the stretch of training where the "
            f"model generates without copying widens with the training set. {len(study['per_model'])} models, "
            f"{study['config']['seeds']} seeds per n.")


def study_method(study: Mapping[str, Any], terms: Mapping[str, str]) -> str:
    """How the window study was run (its settings, the two times' definitions, the intervals)."""
    scfg, sper = study["config"], study["per_model"]
    return (f"The paper's {terms['GMM']} check (SM B, d = {scfg['d']}): the SM B network (W = {scfg['width']}, p = "
            f"{study['n_params']:,}) trained full batch with Adam (lr {scfg['lr']:g}) for a fixed S = "
            f"{scfg['steps_per_n']:.0f} n steps (the run length does not depend on the outcome). At "
            f"{scfg['ckpt_per_decade']} log-spaced checkpoints per decade (and at 100 n, 200 n, 300 n) we draw "
            f"{scfg['n_samples']:,} {terms['DDIM']} samples ({scfg['ddim_steps']} steps, the same starting noise every "
            "time). τ_mem: the last upward crossing of f_mem = 2% (Eq. 6, k = 1/3); τ_gen: the score error against "
            "the exact GMM score has made 90% of its drop. Small points: seeds; diamonds: geometric means; dashed: "
            "the least-squares power law; intervals: stratified bootstrap over seeds. Every crossing lies at most "
            f"{sper.fraction_of_run.max():.2f} of the way through its run.")


def fm_setup(fcfg: Mapping[str, Any]) -> str:
    """The CFM-against-EFM comparison's design (after its formula)."""
    return ("and training on $\\hat u^\\star$ itself (**EFM**, their Alg. 2 with the whole training set) removes the "
            "noise. If the noise were what prevents memorisation, EFM would memorise more. Here the same network (SM "
            f"B, width {fcfg['width']}) learns 8×8 digits from training sets of "
            f"{' and '.join(str(n) for n in fcfg['ns'])} digits, {fcfg['seeds']} paired seeds each: a CFM and an EFM "
            "model share their training set, initialisation and every draw of x₀, t and batch.")


def fm_caption(fmr: Mapping[str, Any], margin: float) -> str:
    """Under the CFM-against-EFM table: training, convergence, the pooled difference and the claim's rule."""
    fcfg, moved = fmr["config"], fmr["fm_vm_change_second_half"]
    return (f"Both arms train {fcfg['steps']:,} steps (batch {fcfg['batch']}, Adam {fcfg['lr']:g}); "
            f"{fcfg['n_samples']} Euler samples ({fcfg['euler_steps']} steps) from the same noise at every "
            f"checkpoint. Convergence: the fit to û* (VM loss, seeds' mean) moved by {100 * moved['cfm']:.1f}% "
            f"(CFM) and {100 * moved['efm']:.1f}% (EFM) over the second half of training. Pooled over the "
            f"{len(fmr['fm_pairs'])} pairs: Δf_mem = {fmr['fm_diff']:+.3f}, 95% CI {ci(fmr['fm_diff_ci'], 3)}. The "
            f"claim asks whether the difference stays within ±{margin:g} (equivalence, the ledger's rule): seeds "
            f"drawn from seed {fcfg['seed']}, registered before the run; the first run (seed 0) is in the lab "
            "notebook.")


def rf_slopes(rst: Mapping[str, Any]) -> str:
    """Above the random-features slopes table: the mean slopes with their intervals."""
    return (f"**Slopes against ψ_n per seed.** Mean τ_mem slope {rst['tau_mem_slope']:.2f} (95% CI "
            f"{ci(rst['tau_mem_slope_ci'])}), τ_gen slope {rst['tau_gen_slope']:.2f} (95% CI "
            f"{ci(rst['tau_gen_slope_ci'])}).")


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "τ_gen": "The training time at which generated samples become good (the score error has fallen).",
    "τ_mem": "The training time at which the model starts reproducing its training examples.",
    "f_mem": "The fraction of generated samples that are copies of a training example.",
    "EFM": "Empirical flow matching: training on the exact, noiseless target of the empirical optimal "
           "denoiser.",
    "CFM": "Conditional flow matching: the usual training on noisy single-example targets.",
    "GMM": "Gaussian mixture model: the data are drawn from a few Gaussian blobs, so the exact score is known and "
           "a sample's quality can be measured against it.",
    "DDIM": "A deterministic sampler for diffusion models: it runs the learned denoiser backwards from noise in "
            "a fixed number of steps, the same noise giving the same sample.",
}
