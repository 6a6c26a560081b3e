"""The page's sentences, built from the shipped runs' numbers (``analysis``'s tests and summaries): what to
notice, the text beside each chart. The page lays them out; nothing here imports Streamlit or decides a claim
(the ledger does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

from typing import Any, Mapping


def headline_notice(test: Mapping[str, Any] | None, runs: Mapping[int, Any], deep: int, shallow: int,
                    terms: Mapping[str, str]) -> str:
    """What to notice beside the headline figure: the registered online test (``online_rule_test``)."""
    if test:
        lo, hi = test["ci"]
        return (f"Success is all-or-nothing per seed: a seed either reaches the {terms['far goal']} or almost never "
                f"does. Depth {deep} {terms['solved seed'].replace('solved seed', 'solves')} {test['solved_deep']} "
                f"of {test['n_deep']} seeds, depth {shallow} {test['solved_shallow']} of {test['n_shallow']} "
                f"({terms['Fisher']}, one-sided p = {test['p_value']:.3g}; difference {test['diff']:+.2f}, 90% "
                f"{terms['Newcombe']} [{lo:+.2f}, {hi:+.2f}]).")
    return (f"Only depth {', '.join(map(str, sorted(runs)))} is in this build: the registered test compares depth "
            f"{deep} with depth {shallow}." if runs else "")


def corridor_text(cor: Mapping[str, Any]) -> str:
    """Under the value maps: does the deep critic follow the corridor (``corridor_test``)?"""
    follows = cor["median_deep"] > 0
    return (f"Yellow = high value (near the goal, red ring). Over all seeds, the median of ρ(corridor) − ρ(straight "
            f"line) is {cor['median_shallow']:+.2f} at depth {cor['shallow']} and {cor['median_deep']:+.2f} at "
            f"depth {cor['deep']}: " + ("the deep critic follows the corridor more than the straight line."
                                        if follows else
                                        f"the depth-{cor['deep']} critic ranks the maze more by straight-line "
                                        "distance than by the corridor (the paper's Fig. 9 finds this only at depth "
                                        "4). The registered test of this, at depth 16, is in the claims table."))


def offline_pending(q) -> str:
    """The offline section when its registered run is not shipped (``q``: the paper's offline quote)."""
    return (f"The paper reports {q.value} ({q.source}). Our test of it, an offline critic at depths 4, 16 and 64 "
            "against a wide depth-4 critic with the same parameters, was registered before its run on fresh seeds; "
            "that run is not in this build.")


def offline_text(pc: Mapping[str, Any], q) -> str:
    """Beside the offline chart: depth's gain at equal width, and a wide critic's at equal parameters
    (``critic_paired``; ``q``: the paper's offline quote)."""
    return (f"The paper found *{q.value}* ({q.source}). Here a random walk collects the data, so exploration plays "
            f"no part, and every critic is scored on pairs of cells farther apart than any training episode reaches. "
            f"Per seed (same data for every critic), depth {pc['deep']} gains {pc['depth_mean']:+.3f} in ρ over depth "
            f"{pc['shallow']} at the same width ({pc['level']:.0%} interval [{pc['depth_lo']:+.3f}, "
            f"{pc['depth_hi']:+.3f}]): the paper's comparison, which the offline claim in the ledger decides. Our own "
            f"finding beside it, not the paper's claim: a depth-4 critic of width {pc['wide_width']} with depth "
            f"{pc['deep']}'s parameters trails it by {pc['param_mean']:+.3f} ([{pc['param_lo']:+.3f}, "
            f"{pc['param_hi']:+.3f}]): offline, what depth adds here, parameters add too.")


def offline_caption(critic: Mapping[str, Any], pc: Mapping[str, Any], maze_label: str) -> str:
    """Under the offline chart: the data and the training of the critics."""
    ccfg = critic["config"]
    return (f"{maze_label}; {ccfg['episodes']:,} random-walk episodes of {ccfg['episode_len']} steps, γ = "
            f"{ccfg['gamma']}; {len(pc['seeds'])} seeds, each the mean of the evaluations in the last quarter of "
            f"{ccfg['steps']:,} SGD steps. Straight-line distance scores ρ = {critic['euclid_scored_spearman']:.2f} "
            "on these pairs.")


#: the losses, and where the toy departs from the paper's code (for ``ui.blocks``)
EQUATIONS = (
    ("tex", r"\mathcal L_{\text{critic}} = -\frac1B\sum_i\Big[L_{ii} - \log\sum_j e^{L_{ij}}\Big]"
            r" + 0.1\cdot\frac1B\sum_i\Big(\log\sum_j e^{L_{ij}}\Big)^2,\quad L_{ij}=f(s_i,a_i,g_j)"),
    ("tex", r"\mathcal L_{\text{actor}} = \mathbb E\big[\alpha \log\pi(a\mid s,g) - f(s,a,g)\big]"),
    "A point mass in the JaxGCRL U-maze, $s' = s + 0.75\\,a$, $a\\in[-1,1]^2$, cells 2.5 units; no reward. Actor, "
    "φ and ψ are the paper's residual MLPs (Dense → LayerNorm → Swish, blocks of 4 with a skip), width 64; goals "
    "relabeled from the same episode with $P(d)\\propto\\gamma^{d-1}$. Three departures the CPU runs needed to reach "
    "the far goal at all (switches in `Config`; *paper-exact* turns them off): half of the actor's goals come from "
    "another row; α starts at 0.1 with log-α learning rate 3e-3; walls stop each axis of a move separately.",
)

#: what it would take to see the paper's depth gains (for ``ui.blocks``)
SCALE = (
    "- **The paper's scale.** Its gains come at 100-400M environment steps, batch 512, width 256 and depth up to "
    "1024; here ~2M environment steps and 4,000 SGD steps, width 64, depth ≤ 16 online.\n"
    "- **Larger observations.** The paper's biggest gains are on Humanoid (268-d observations); here (x, y). The "
    "lifted 128-d observation in *Train your own* is a small step that way.\n"
    "- **Exploration.** Failing seeds rarely enter the far cell during training (0-6% of episodes against 15-20% for "
    "solving seeds): the all-or-nothing outcome is mostly about exploration, which the paper's collector experiment "
    "(Fig. 8) says depth and data drive together.",
)


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "contrastive RL": "Reinforcement learning without reward: a critic learns which states lead to which "
                      "goals by telling true (state, future state) pairs from shuffled ones.",
    "critic": "The network that scores a (state, action, goal) triple: here f(s, a, g) = −‖φ(s, a) − ψ(g)‖, "
              "high when the goal is likely to follow; the actor picks actions that raise it.",
    "far goal": "The test goal of the U-maze: 2 cells from the start in a straight line, about 6 along the "
                "corridor, behind a wall.",
    "solved seed": "A seed (one agent) whose final success rate at the far goal is above 0.5. Success is "
                   "nearly all-or-nothing per seed, so the test counts solved seeds.",
    "residual block": "Four Dense layers (each followed by LayerNorm and Swish) with a skip connection around "
                      "them; depth counts the Dense layers.",
    "value map": "The critic's value f(s, π(s, g), g) of each position s for one goal g, drawn over the maze "
                 "(the paper's Fig. 9).",
    "Spearman ρ": "The rank correlation of two quantities (1: the same order; 0: unrelated); here of the "
                  "critic's value with minus a distance, along the corridor or in a straight line.",
    "time at goal": "The paper's score: of 1000 environment steps, how many the agent spends at the goal.",
}
