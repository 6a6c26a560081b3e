"""The page's sentences, built from the exact values: what to notice, the text beside each chart, the caveats,
the rows set beside the project's notes. The page lays them out; nothing here imports Streamlit or decides a
claim (the ledger does)."""
from __future__ import annotations

from typing import Any, Mapping

from .config import MAX_TR_BYTES, MAX_TR_SECONDS

CAVEATS = ("The paper's constants are vacuous at toy sizes: √d/10 < 1 for d < 100 and 48√d < d only when d > 2,304. "
           "The class G came from the notes' random search over depth-2 tree classes; G^k for k ≥ 3 (more than 16 "
           "points) is not solved, its values follow by additivity on disjoint domains. The solver stops at "
           f"{MAX_TR_SECONDS:g} s of CPU or {MAX_TR_BYTES // 2**20} MB of arrays.")

#: the two games and how the page computes their values exactly (for ``ui.blocks``)
GAMES = (
    "A **class** H is a 0/1 table: one row per hypothesis, one column per point. The adversary keeps its labels "
    "consistent with some hypothesis of H; each round the learner predicts a label and counts a mistake when wrong. "
    "In the **standard game** the adversary picks each point as it goes; in the **transductive game** it must "
    "announce the whole sequence x₁…xₙ first (the labels stay adaptive). V_{x,y} is the set of hypotheses of V with "
    "h(x) = y.",
    "**Littlestone dimension** = the value of the standard game:",
    ("tex", r"\mathrm{LD}(V)=\max\Big(0,\ \max_{x\ \text{splits}\ V}\ 1+\min\big(\mathrm{LD}(V_{x,0}),"
            r"\mathrm{LD}(V_{x,1})\big)\Big)"),
    "**One round** is worth the combination of its two continuations (min over the prediction of the max over the "
    "label):",
    ("tex", r"\mathrm{comb}(a,b)=\max(a,b)+\mathbb{1}[a=b],\qquad \mathrm{comb}(a,\emptyset)=a"),
    "**Transductive game** along a fixed order π = (x₁,…,xₙ), and its value:",
    ("tex", r"W(V,t)=\mathrm{comb}\big(W(V_{x_t,0},t{+}1),\,W(V_{x_t,1},t{+}1)\big)"),
    ("tex", r"W(V,n{+}1)=0,\qquad M_{\mathrm{tr}}(H)=\max_\pi W(H,1)"),
    "**What is exact here.** LD by memoised recursion over version spaces (bitmasks of hypotheses). M_tr by the "
    "notes' backward algorithm: over every suffix set T of points, keep the Pareto-maximal vectors of cell ranks (comb "
    "is monotone, so dominated vectors never matter), batched in NumPy, with an exact bound (comb(a, b) ≤ log₂(2ᵃ + "
    "2ᵇ)) that drops vectors that cannot beat a heuristic order. VC by checking sets of points. Our tests check LD and "
    "M_tr against brute-force minimax game search over every order. **Always** VC ≤ M_tr ≤ LD ≤ ⌊log₂|H|⌋.",
)

COMPARE_CAPTION = ("Both learners face the same minimax-optimal adversary (same announced order in the transductive "
                   "game); it reacts to each learner's predictions, so the labels can differ. The minimax adversary "
                   "guarantees {value} mistakes; an adversary who knows the learner can do better against a "
                   "suboptimal one (the notes' table at the bottom: SOA on G, worst order).")


def headline_notice(law: Mapping[str, Any]) -> str:
    """What to notice beside the headline figure (``law``: the sqrt-law claim's metrics)."""
    return (f"Every point lies between 2d/3 and d: seeing the sequence never hurts, and here it saves at most a third "
            f"(smallest M_tr/d {law['best_ratio_exact']:.2f}, solved exactly up to d = {law['max_d_exact']}; G^k "
            "beyond by additivity). The paper's √d needs d in the thousands: the toy shows the gap, not the law.")


def gap_text(summ, pairs: list, tree_class: str) -> str:
    """Beside the gap-share chart: how often M_tr < LD at p = 0.5 (``summ``: ``gap_table``; ``pairs``:
    ``gap_pairs``; ``tree_class``: the glossary's link)."""
    at_half = summ.loc[(summ.p - 0.5).abs() < 1e-9].iloc[0]
    shown = ", ".join(f"({a}, {b})" for a, b in pairs)
    return (f"**Random depth-2 {tree_class}es** (7 points, LD = 3), {int(summ.classes.iloc[0])} per value of the "
            f"off-path probability p. At p = 0.5, **{int(at_half.gap_count)}/{int(at_half.classes)}** have "
            f"M_tr < LD (95% CI {at_half.ci_lo:.1%}–{at_half.ci_hi:.1%}); every gap found is (LD, M_tr) = {shown}. "
            "The paper reports no such frequency.")


def chain_text(summary: Mapping[str, Any]) -> str:
    """Beside the chain chart: an optimal order for the transductive adversary, and what seeing it saves."""
    gap = summary["ld"] - summary["m_tr"]
    return (("**The chain holds.** " if summary["chain_holds"] else "")
            + "An optimal sequence for the transductive adversary: "
            + f"**{' → '.join(f'x{x}' for x in summary['order'])}**. "
            + (f"Seeing the sequence in advance saves the learner **{gap}** mistake{'s' if gap != 1 else ''} "
               f"(M_tr = {summary['m_tr']} < LD = {summary['ld']})." if gap > 0 else
               "Here seeing the sequence in advance does not help: M_tr = LD."))


def notes_rows(hl: Mapping[str, Any], notes: Mapping[str, Any]) -> list[dict]:
    """Our exact values (``hl``: the headline view) beside the project's notes, one row a quantity."""
    rows = [("thresholds on 7 points: [LD, M_tr]", "thresholds7"), ("minimal tree class, 3 points", "minimal3"),
            ("minimal tree class, 7 points", "minimal7"), ("class G: [LD, M_tr]", "G"),
            ("G × G (14 points, 64 functions)", "GxG"), ("SOA on G, worst fixed order", "soa_mistakes_on_G"),
            ("Halving on G, worst fixed order", "halving_mistakes_on_G"),
            ("rank rule on G, worst fixed order", "rank_rule_mistakes_on_G")]
    return ([{"quantity": q, "ours": str(list(hl[k]) if isinstance(notes[k], list) else hl[k]), "notes": str(notes[k])}
             for q, k in rows]
            + [{"quantity": "share of 300 random depth-2 trees (p = .5) with M_tr < LD",
                "ours": f"{hl['gap_count']}/{hl['gap_classes']}",
                "notes": f"{round(notes['gap_fraction_p05'] * 300)}/300 (another random draw)"}])


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "Littlestone dimension": "The depth of the deepest complete mistake tree a class shatters: the number of "
                             "mistakes an adversary can force in the standard online game.",
    "transductive": "The learner sees the whole sequence of unlabeled points in advance; only their labels "
                    "are revealed one by one.",
    "VC dimension": "The size of the largest set of points the class labels in every possible way.",
    "M_tr": "The transductive value of a class: the most mistakes an adversary can force when it must announce "
            "the whole sequence of points first (its labels stay adaptive), against the best learner.",
    "version space": "The hypotheses of the class still consistent with every label revealed so far.",
    "tree class": "Points are the nodes of a complete binary tree; each hypothesis walks one root-to-leaf "
                  "path, labelling its nodes by the turns it takes, and gives every node off its path a "
                  "random bit (1 with the off-path probability p). Depth 2: 7 points, LD = 3.",
    "SOA": "Littlestone's Standard Optimal Algorithm: predict the label whose version space has the larger "
           "Littlestone dimension; it makes at most LD mistakes in the standard game.",
    "Halving": "Predict the majority label of the version space: each mistake at least halves it, so at most "
               "⌊log₂|H|⌋ mistakes.",
    "rank rule": "The optimal transductive learner for an announced order: predict the label whose version "
                 "space is worth more in the rest of the game along that order; at most M_tr mistakes.",
    "BKM 1997": "Ben-David, Kushilevitz and Mansour (1997): the best bound before this paper, M_tr ≤ 2d/3 "
                "from disjoint copies of a small class, and an Ω(√log d) lower bound.",
}
