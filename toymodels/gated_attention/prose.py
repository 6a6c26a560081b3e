"""The page's sentences, built from the shipped runs' numbers (``pair_summary``, the seed tables, the real models'
layers): what to notice, the text beside each chart. The page lays them out; nothing here imports Streamlit or
decides a claim (the ledger does). ``terms``: the page's glossary links by word (markdown), and claim statuses
as the page shows them, passed in."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .summary import MACT_RATIO_MIN, mact_seed_table

#: the "massive" bar of section 5's real model: token 0's largest |h| at least this many times its layer's median
REAL_MASSIVE_BAR = 100


def headline_notice(terms: Mapping[str, str], bb_status: str) -> str:
    """What to notice beside the headline figure (``bb_status``: the head-shared control's status on
    Bigram-Backcopy, as shown)."""
    return (f"The paper's head-specific gates remove most of the {terms['attention sink']}, its controls keep most of "
            f"it. In the toy every gate at G1 removes it on {terms['Bigram-Backcopy']}, the head-shared one too "
            f"({bb_status} here); {terms['G2']} makes it larger.")


def sink_text(b: Mapping[str, Any]) -> str:
    """Beside the per-layer sink chart (``b``: ``pair_summary`` of G1 elementwise on the sink default)."""
    return (f"A 2-layer toy LM trained on Bigram-Backcopy. Without a gate, queries put **{b['fattn_baseline']:.3f}** "
            f"of their attention on `<s>` ({b['over_floor_baseline']:.1f}× the {b['floor']:.3f} a head attending "
            f"uniformly would give): heads with nothing to copy park their attention there. With the G1 gate F-Attn "
            f"is **{b['fattn']:.3f}** ({100 * b['removed']:.0f}% of the excess gone) and the gate's mean score "
            f"{b['gate_mean']:.2f} (it starts at 0.5): the head is closed instead of parked. Loss "
            f"{b['val_loss_baseline']:.3f} → {b['val_loss']:.3f} nats, Bayes {b['bayes_ce']:.3f}.")


def hsd_text(hcfg: Mapping[str, Any], candidate: str | None) -> str:
    """The head-specific-dormancy task in words (``candidate``: the pilot's candidate while the claim's run is
    not shipped)."""
    return ("In Bigram-Backcopy every head is idle on the same queries (the non-triggers), so one gate shared by all "
            "heads can close them together. The paper's explanation of its head-shared control needs heads idle on "
            "*different* queries. This task builds that: each token is of kind A or B; after an A token the next "
            "token depends on the token before it, after a B token on the one two before. One head serves "
            "A-queries, the other B-queries, and each must do nothing on the other half. Head dimension "
            f"{hcfg['d_model'] // hcfg['n_heads']}, {hcfg['n_layers']} layer(s), {hcfg['n_heads']} heads, "
            f"T = {hcfg['seq_len']}" + (f" (candidate {candidate})." if candidate else "."))


def massive_text(mt, seen: bool, status: str | None, paper: Mapping[str, Any], ratio_min: float,
                 cut_min: float) -> str:
    """Beside the massive-activation seeds (``mt``: the seed table; ``seen``: the search's seeds, not the claim's;
    ``status``: the claim's status once decided)."""
    return (f"Sun et al. call an activation *massive* when it is about 1000× the median; in LLMs it sits on the first "
            f"token, and the paper finds G1 removes it (M-Act {paper['mact_baseline'].value} → "
            f"{paper['mact_g1_elementwise'].value}). Our criterion, fixed before the claim's seeds run: the "
            f"baseline's first token ≥ {ratio_min:.0f}× its layer's median, and G1 ≥ {cut_min:.0f}× lower over all its "
            f"layers. **{int(mt.meets.sum())} of {len(mt)}** {'seen ' if seen else ''}seeds meet it (median cut "
            f"{mt.cut.median():.1f}×)" + (f"; the claim is **{status}**." if status else "."))


def last_layer_caption(ll) -> str:
    """Under every seed's numbers: G1's last-layer sink (``ll``: the first seed's row)."""
    return (f"The last two columns are F-Attn at the last layer: in this configuration G1 can build a sink there "
            f"(seed {int(ll.seed)}: {ll.last_layer_fattn_g1:.2f} against the baseline's "
            f"{ll.last_layer_fattn_baseline:.3f}, while G1's other layers have none), the layer where its MLP also "
            "writes its largest value on `<s>`. The paper's M-Act (largest |h| per layer, averaged over layers) is "
            "in the `mact_` columns.")


def toy_massive(sweep: dict) -> tuple[str, str]:
    """The page's words for how often the toy's baselines built a massive activation on the first token (largest
    |h| >= MACT_RATIO_MIN x its layer's median, max over layers) in the massive-activation seeds, and what G1 did
    in those seeds: (a heading's phrase, a sentence's clause)."""
    t = mact_seed_table(sweep)
    hit = t[t.bos_ratio_baseline >= MACT_RATIO_MIN]
    best = t.bos_ratio_baseline.max()
    if hit.empty:
        return ("the massive activation the toy never built",
                f"the massive activation none of the toy's {len(t)} baseline seeds reached (its best, {best:.0f}×, is "
                "the lowest dashed line)")
    pairs = ", ".join(f"{r.bos_ratio_baseline:.0f}× → {r.bos_ratio_g1:.0f}×" for r in hit.itertuples())
    seen = f"a massive activation only {len(hit)} of the toy's {len(t)} baseline seeds reached (its best, {best:.0f}×, "
    if hit.meets.any():
        return "the massive activation the toy rarely builds", seen + f"is a dashed line; baseline → G1 there: {pairs})"
    return ("the massive activation the toy rarely builds",
            seen + f"is a dashed line), and G1 did not remove it there (baseline → G1: {pairs})")


def real_massive_notice(lay, toy: str = "") -> str:
    """What to notice in SmolLM2's layers (``lay``: per block, token 0's ``first_ratio``, ``first_dim`` and the
    attention ``share`` on it): where the massive activation starts, where it dips under the bar, and what the
    next layer's attention does there; ``toy``: how often the toy built one (``toy_massive``)."""
    over = lay.first_ratio.to_numpy() >= REAL_MASSIVE_BAR
    first = int(np.argmax(over[1:])) + 1
    gap = [int(b) for b in lay.layer if first < b < len(lay) - 1 and not over[b]]
    big = int(lay.first_ratio.iloc[1:].to_numpy().argmax()) + 1
    dip = (f" Where it falls back under {REAL_MASSIVE_BAR}× (block{'s' if len(gap) > 1 else ''} "
           f"{', '.join(map(str, gap))}), the next layer's attention on token 0 falls to "
           f"{lay.share.iloc[gap[-1] + 1]:.2f} (uniform {lay.uniform.iloc[0]:.2f}); it returns when block {big} writes "
           f"{lay.first_ratio.iloc[big]:,.0f}× the median.") if gap else ""
    return (f"From block {first} on, dimension {int(lay.first_dim.iloc[big])} of token 0 sits hundreds of times above "
            f"its layer's median{': ' + toy if toy else ''}. The attention layers that read it put half their "
            f"attention on token 0.{dip} "
            "SmolLM2 has no gate, so the gate's effect cannot be tested on it; it shows what the gate removes.")


def pilots_text(M) -> str:
    """The head-specific-dormancy pilots: the rules written before each ran, and what they picked (``M``: the
    topic package, whose config holds the pilots)."""
    picked = (f"Picked: **{M.HSD_NAME}**." if M.HSD_NAME else "Picked: **none** (no candidate built a sink in every "
              "pilot seed), so the head-specific-dormancy claims are not testable here."
              if M.HSD_PILOT2_RESULTS else "**Not yet run.**")
    return (f"**Head-specific dormancy: the pilots.** First pilot: candidates (baseline only, seed "
            f"{M.HSD_PILOT_SEED}); the rule, written before it ran: {M.HSD_RULE}. It picked "
            f"**{M.hsd_pick(M.HSD_PILOT)}**, whose baseline then learned the task in 1 of the 5 claim seeds (see "
            f"*Every configuration of this session*). Second pilot, registered before it runs: {M.HSD_RULE2}. "
            + picked)


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "SDPA": "Scaled dot-product attention: softmax(QKᵀ/√d)·V, the output of one attention head before the "
            "heads are concatenated and multiplied by W_O.",
    "G1": "The paper's best gate position: a sigmoid gate multiplying each head's SDPA output, elementwise "
          "and head-specific, computed from the token's own hidden state.",
    "G2": "A gate on the value projection instead (after W_V), the paper's second position.",
    "attention sink": "A token (here the first) that receives a large share of attention from queries that "
                      "have nothing better to attend to.",
    "F-Attn": "The share of attention on the first token, averaged over heads and queries (the paper's "
              "measure of the attention sink).",
    "M-Act": "Massive activation: the largest |h| in each layer's residual stream (its output hidden state), "
             "averaged over layers: the paper's measure of massive activations (Sun et al., 2024, call an "
             "activation massive at about a thousand times the median |h|).",
    "Bigram-Backcopy": "A synthetic next-token task (Guo et al., 2024) on which small transformers grow an "
                       "attention sink: tokens follow a random bigram chain, except that after a trigger "
                       "token the token before the trigger is copied.",
}
