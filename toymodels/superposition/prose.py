"""The page's sentences, built from the shipped sweeps' numbers (``analysis.summary`` and friends): what to notice,
the captions under the charts. The page lays them out; nothing here imports Streamlit or decides a claim (the
ledger does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

from typing import Any, Mapping

from .analysis import MIN_M, WEAK_ALPHA, ci_text
from .config import M10_RECIPES

LLM_CAPTION = ("Every row of each matrix, every pair i < j, exactly (streamed through the m × m Gram). SmolLM2's and "
               "Gemma-3's embeddings are their LM heads (tied), read from their GGUF files (Q8_0, dequantised); "
               "MiniLM's are an encoder's word embeddings. Gemma-3-270M is not a dependency of this project: its row "
               "comes from a one-off run on its PyPI files (SHA-256 in the view).")
NEFF_CAPTION = ("The paper's exponential profile is e^(−i/400) at n = 10 240. Rescaling τ to 400·n/10240 = 39 at "
                "n = 1000 gives N_eff ≈ 78, about the largest width 80 here: the few features that carry the mass get "
                "nearly orthogonal directions and the fit reads far above 1. One seed (0), widths 10–80.")


def headline_notice(s: Mapping[str, Any], terms: Mapping[str, str]) -> str:
    """What to notice beside the headline figure: the strong and weak exponents."""
    a_s, a_w = s["alpha_strong"], s["alpha_weak"]
    ci = ci_text(a_s)
    return (f"In {terms['strong superposition']} (every feature kept at unit length) the loss falls as "
            f"m^−{a_s['mean']:.2f}" + (f" ({ci})" if ci else "") + f" over m = {MIN_M}…{max(s['widths'])}, the "
            f"paper's 1/m; in {terms['weak superposition']} (only some features kept) as m^−{a_w['mean']:.2f}, "
            f"flatter than its ideal m^−{s['alpha_weak_ideal']:.2f}.")


def overlap_caption(m10t, terms: Mapping[str, str]) -> str:
    """Under the overlap chart: the measure, the Welch bound, and why m = 10 is apart (``m10t``: ``m10_table``)."""
    rec = {r.recipe: r for r in m10t.itertuples()}
    brief, conv, small = (rec.get(r["name"]) for r in M10_RECIPES)
    return (f"The paper's {terms['mean squared overlap']}: the mean of (Ŵ_i·Ŵ_j)² over all pairs of normalised rows "
            f"(official `LLMs/overlap-0.py`). For N unit vectors in R^m it cannot fall below the "
            f"{terms['Welch bound']} (N − m)/(m(N − 1)), which is 1/m only when m ≪ N (at m = 160, 0.84/m). "
            "**m = 10 is apart:** with the paper's large-model rates (lr_b = 2/m = 0.2) the rows cluster as training "
            "goes on, at a lower loss: "
            + (f"{brief.overlap_over_welch:.2f}× Welch after {brief.steps:,} steps, " if brief else "")
            + (f"{conv.overlap_over_welch:.2f}× once converged (loss {conv.loss:.3f}); " if conv else "")
            + (f"the paper's small-model rates (lr 1e-2 on W and b, {small.steps:,} × {small.batch}, converged) give "
               f"{small.overlap_over_welch:.2f}× (loss {small.loss:.3f}). " if small else "")
            + f"Means over {int(m10t['seeds'].min()) if len(m10t) else 0} seeds. A real toy finding at the smallest "
            "width, not evidence against 1/m where the exponent is fitted.")


def profiles_caption(terms: Mapping[str, str], q) -> str:
    """Under the profiles table: N_eff, and the paper's exponents per profile (``q``: its quote)."""
    return (f"{terms['N_eff']} = 1/Σ q_i² (q = p/Σp), the effective number of features; each profile keeps N_eff ≥ "
            f"4 × the largest width. Paper ({q.source}): {', '.join(str(v) for v in q.value)}, {q.note}.")


def weak_caption(s: Mapping[str, Any]) -> str:
    """Under the weak-regime chart: Eq. 4 holds on the measured rows, and why the exponent stays flatter."""
    return (f"Eq. 4 sums ⟨v²⟩p_i − ⟨v⟩²p_i² over the features a model left out (‖W_i‖ ≤ 1/2): on the measured rows "
            f"it predicts the loss within {100 * s['eq4_max_deviation']:.0f} % at every width. Its ideal keeps the m "
            f"most frequent features; α − 1 = {WEAK_ALPHA - 1:.1f} holds only as n → ∞ (here n = {s['n']}: "
            f"{s['alpha_weak_ideal']:.2f}). The trained model keeps about as many features as the ideal but not the "
            "most frequent ones (column *top*: the share of the kept features that are among as many most "
            "frequent), so its exponent stays flatter.")


#: the toy model in equations, and what is measured (for ``ui.blocks``)
MODEL = (
    ("tex", r"x_i = u_i v_i,\quad u_i\sim\mathrm{Bernoulli}(p_i),\quad v_i\sim U(0,2),\quad "
            r"\textstyle\sum_i p_i = E"),
    ("tex", r"y = \mathrm{ReLU}(W W^\top x + b),\quad W\in\mathbb{R}^{n\times m},\quad "
            r"L = \big\langle \lVert y - x\rVert^2 \big\rangle"),
    ("tex", r"W_i \leftarrow W_i - \eta_t\gamma\,W_i \;\;(\gamma\ge 0),\qquad "
            r"W_i \leftarrow W_i - \eta_t\gamma\,W_i\Big(\tfrac{1}{\lVert W_i\rVert+\epsilon}-1\Big)"
            r"\;\;(\gamma<0)"),
    "- **γ > 0** shrinks rows: about m of the n features keep a vector (**weak superposition**); the loss is the "
    "frequency mass left out (Eq. 4), so $L \\propto m^{-(\\alpha-1)}$ for $p_i \\propto i^{-\\alpha}$ when the m "
    "most frequent are kept and n → ∞.\n"
    "- **γ < 0** pulls every row toward unit norm (**strong superposition**); the loss is their interference, set by "
    "the mean squared overlap $\\approx 1/m$, so $L \\propto 1/m$ whatever the frequencies.\n"
    "- Measured: $\\varphi_{1/2} = |\\{i: \\lVert W_i\\rVert > 1/2\\}|/n$, $\\varphi_1$ (norm > 1), the mean "
    "squared overlap $\\langle(\\hat W_i\\cdot\\hat W_j)^2\\rangle$ of normalised rows, and α_m of "
    "$L \\propto m^{-\\alpha_m}$ (least squares in log-log, per seed).",
)


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "superposition": "Representing more features than the model has dimensions, by giving them directions "
                     "that overlap a little.",
    "N_eff": "The effective number of features: how many features carry the probability mass (1 / Σ p_i² "
             "for feature frequencies p_i).",
    "Welch bound": "The smallest possible mean squared overlap of n unit vectors in m dimensions, "
                   "(n − m)/(m(n − 1)): how tightly features can be packed.",
    "α_m": "The exponent of the loss against the model width m: loss ∝ m^−α_m.",
    "strong superposition": "Every feature keeps a vector of about unit length, so all n features share the "
                            "m dimensions and the loss is their interference (here: γ < 0, a pull toward unit "
                            "norm).",
    "weak superposition": "Only some features (about m) keep a vector; the rest are dropped, and the loss is the "
                          "frequency of what was dropped (here: γ > 0, ordinary weight decay).",
    "mean squared overlap": "⟨(Ŵ_i·Ŵ_j)²⟩: the mean, over all pairs of features, of the squared cosine between "
                            "their (normalised) vectors; 1/m for random directions when m ≪ n.",
    "Eq. 4": "The paper's prediction of the weak-superposition loss: the expected loss of each feature the model "
             "left out (‖W_i‖ ≤ 1/2), summed.",
}
