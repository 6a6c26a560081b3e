"""The page's sentences, built from the shipped runs' numbers (the live run, the 20-seed study, SmolLM2's heads):
what to notice, the caveats. The page lays them out; nothing here imports Streamlit or decides a claim (the
ledger does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .analysis import PHASE_GAP

CAVEATS = (
    "**Initialisation.** PyTorch's defaults (embeddings N(0, 1), projections U(±1/√fan-in)). With every weight "
    "N(0, 0.02²) the 2-layer model had not formed an induction head after 3,000 steps (lab notebook).",
    "**One layer beats log 13.** A one-layer model cannot copy, but candidate offsets that are multiples of the "
    "period point at the same token, so it does better than a uniform guess over 13 periods (about 2.1 nats).",
    "**Theus et al.** report GPT-2 and ViT with LayerNorm; here there is none, so any invertible map of the "
    "residual stream is a symmetry too. Their learned matching (training the alignment) is not implemented: only "
    "their weight matching.",
    "**SmolLM2's copying score** folds the RMSNorm gains into the OV circuit and leaves out the per-token RMS "
    "scalings (positive numbers), as TransformerLens does; the value of a query head is its KV group's.",
)


def headline_notice(fin: Mapping[int, float], log13: float, terms: Mapping[str, str]) -> str:
    """What to notice beside the headline figure (``fin``: final copy loss by depth)."""
    return (f"Two {terms['attention-only']} layers copy ({terms['copy loss']} **{fin[2]:.2f}** nats in the run "
            f"shown); one layer cannot (**{fin[1]:.2f}**, near {terms['log 13']} = {log13:.2f}); zero layers guess "
            f"(**{fin[0]:.2f}**). Right: the {terms['induction head']} attends to the token *after* the previous "
            "occurrence of the current one.")


def run_notice(runs: Mapping[str, Any], hb: Mapping[str, float], where: str) -> str:
    """What to notice in one run up close (``hb``: the 2-layer model's best heads)."""
    return (f"final copy loss {runs['2']['eval_loss'][-1]:.3f} (2 layers), {runs['1']['eval_loss'][-1]:.3f} (1 layer), "
            f"{runs['0']['eval_loss'][-1]:.3f} (0 layers); the 2-layer model's best induction head scores "
            f"{hb['induction']:.2f} and its best layer-1 previous-token head {hb['prev_token']:.2f} ({where}).")


def seeds_notice(study: Mapping[str, Any]) -> str:
    seeds = study["arms"]["L2v"]["seeds"]
    return (f"every point is one fresh seed ({seeds[0]}-{seeds[-1]}) after 3,000 steps. With a **fixed** period one "
            "layer copies too, by reading a fixed offset; the same model fails on variable periods (hollow points: "
            "its loss there). Only variable periods need an induction head.")


def phase_text(ph) -> str:
    """Above the phase-change charts (``ph``: ``phase_table``)."""
    return (f"**The phase change** (2 layers, variable period, each line a seed, first 1,000 steps): the loss leaves "
            f"log 13 and reaches half of it in {ph['width'].median():.0f} steps (median), and the induction score is "
            f"halfway up {-ph['gap'].median():.0f} steps before the loss gets there (the registered rule: within "
            f"{PHASE_GAP} steps). Every seed, the same few dozen steps.")


def mechanism_text(mech) -> str:
    """The circuit on every seed (``mech``: ``mechanism_table``), medians."""
    return (f"**The mechanism on every seed:** the best layer-1 previous-token score "
            f"{mech['prev_score'].median():.2f}, its K-composition with the induction head "
            f"{mech['k_comp'].median():.3f} against the random baseline's 99% quantile "
            f"{mech['threshold'].iloc[0]:.3f}; copying score {mech['copying'].median():.3f}; zeroing the "
            f"previous-token heads raises the loss by {np.nanmedian(mech['knockout_prev_heads']):.2f} nats, zeroing "
            f"another layer-1 head by {np.nanmedian(mech['knockout_other_head']):.2f} (medians).")


def symmetry_notice(sym) -> str:
    """``sym``: the largest |Δ logit| per operation on the stream (``symmetry_table``), in its order."""
    return (f"on all 20 trained models, in float64, a random rotation changes no logit by more than "
            f"**{sym.iloc[0]:.0e}** (with x / rms(x) on the stream: {sym.iloc[1]:.0e}); with tanh on the stream the "
            f"largest change is **{sym.iloc[2]:.2f}**, with a LayerNorm-style gain **{sym.iloc[3]:.2f}**.")


def lmc_notice(lt) -> str:
    """``lt``: the barriers per pair (``lmc_table``)."""
    return (f"on every pair the orthogonal alignment cuts the barrier to {lt['ratio'].min():.2f}-"
            f"{lt['ratio'].max():.2f} of the unaligned one and beats permutations; the registered 'low barrier' (a "
            "quarter) is not reached: Theus et al.'s weight matching lines the residual streams up, but the two "
            "models' heads split the work differently.")


def real_notice(real: Mapping[str, Any], rf) -> str:
    """SmolLM2's heads (``rf``: ``real_frame``)."""
    n_ih = int(rf["induction_head"].sum())
    best = rf.sort_values("prefix", ascending=False).iloc[0]
    return (f"{real['n_seq']} sequences of {real['block']} random tokens, repeated once. {n_ih} of {len(rf)} heads "
            f"prefix-match (≥ 0.3) and copy (≥ 0.5); the best, layer {int(best['layer'])} head {int(best['head'])}, "
            f"puts {best['prefix']:.2f} of its attention on the token after the first occurrence (uniform attention: "
            f"{real['uniform']:.3f}).")


def basis(privileged: str, barrier: str) -> tuple:
    """The residual stream's symmetry and the interpolation barrier, in words and equations (``privileged``,
    ``barrier``: the glossary's links), for ``ui.blocks``."""
    return (f"The residual stream has no {privileged}. Rotate it by any orthogonal $R$, every write by $R$ and every "
            "read by $R^\\top$, and the model computes the same function: nothing in an attention-only transformer "
            "looks at single coordinates. An elementwise operation (a nonlinearity, a LayerNorm gain) does, and breaks "
            "the symmetry. Theus et al. use exactly this freedom to align two independently trained transformers "
            f"before interpolating their weights; the {barrier} B measures what the straight line between them costs.",
            ("tex", r"\begin{aligned}W_E&\to W_ER,\ \ W_{pos}\to W_{pos}R,\ \ W_O\to W_OR\\"
                    r"W_Q,W_K,W_V,W_U&\to R^{\top}W\end{aligned}"),
            ("tex", r"\begin{aligned}B&=\sup_\lambda L(\theta_\lambda)-\lambda L(\theta_A)-(1-\lambda)L(\theta_B)\\"
                    r"\theta_\lambda&=\lambda\theta_A+(1-\lambda)\theta_B\end{aligned}"))


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "copy loss": "The mean cross-entropy (in nats) of the next token over the positions where it is a copy of "
                 "an earlier one (from the second period on): 0 for perfect copying.",
    "induction head": "An attention head that attends to the token after the previous occurrence of the current "
                      "token and copies it: [A][B] … [A] → [B]. It needs a previous-token head in an earlier "
                      "layer.",
    "attention-only": "A transformer with attention layers and nothing else: no MLP, no LayerNorm, no biases, so "
                      "every path from a token to a logit is a product of weight matrices.",
    "log 13": "The loss of a model that knows the next token is one of the 13 tokens a possible period (4-16) "
              "back, but not which: log 13 ≈ 2.56 nats. log 64 ≈ 4.16 is a uniform guess.",
    "K-composition": "A layer-2 head's keys reading what a layer-1 head wrote into the residual stream: how an "
                     "induction head finds the token after the previous occurrence.",
    "privileged basis": "Coordinates of the residual stream that mean something on their own; an attention-only "
                        "model has none (any rotation gives the same function).",
    "barrier": "How far the loss rises above the straight line between two models when their weights are "
               "interpolated; a low barrier means the two are linearly mode-connected.",
}
