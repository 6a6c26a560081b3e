"""The page's sentences, built from the shipped seeds' numbers (``metrics``, the per-problem table, the sweep over
the share a): what to notice, the toy in words. The page lays them out; nothing here imports Streamlit or
decides a claim (the ledger does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

import math
from typing import Any, Mapping


def fmt_k(k) -> str:
    """A crossover k, or "none"."""
    return "none" if k is None or (isinstance(k, float) and math.isnan(k)) else f"{int(k)}"


def lead(drop: float) -> str:
    """Who is ahead at k = 256, in words, from a drop (base − RL, probability units)."""
    return f"base ahead by {100 * drop:.1f}" if drop > 0 else f"RL still ahead by {-100 * drop:.1f}"


def headline_notice(m: Mapping[str, Any], steps: int, longest: int, terms: Mapping[str, str],
                    paper: Mapping[str, Any]) -> str:
    """What to notice beside the headline figure (``m``: ``metrics`` of the shown seeds; ``steps``: the headline
    length; ``longest``: the longest claim length; ``paper``: the topic's ``PAPER``)."""
    behind = m["pass256_drop_train"] <= 0  # RL still ahead at k = 256 after ``steps`` (the ledger's not reproduced)
    return (f"RL multiplies pass@1 by **×{m['pass1_gain_train']:.1f}** after {steps} {terms['GRPO']} steps (held-out: "
            f"×{m['pass1_gain_heldout']:.1f}), and base catches up as k grows: at k = 256, "
            f"**{lead(m['pass256_drop_train'])}** points (paper: base ahead by "
            f"{paper['pass256_base_train'].value - paper['pass256_grpo_train'].value:.1f})"
            + (f"; the toy's RL falls behind only with longer training (the {longest}-step curve)." if behind else "."))


def heldout_notice(m: Mapping[str, Any], terms: Mapping[str, str], paper: Mapping[str, Any]) -> str:
    """What to notice on the held-out problems, beside the paper's Omni-MATH gains."""
    gain_train = paper["pass1_grpo_train"].value / paper["pass1_base_train"].value
    gain_test = paper["pass1_grpo_test"].value / paper["pass1_base_test"].value
    return (f"**What to notice.** On held-out problems RL multiplies pass@1 by **×{m['pass1_gain_heldout']:.1f}** "
            f"(training problems ×{m['pass1_gain_train']:.1f}; paper, Omni-MATH: ×{gain_test:.2f} and "
            f"×{gain_train:.2f}). At k = 256, **{lead(m['pass256_drop_heldout'])}** points (paper: base ahead by "
            f"{paper['pass256_base_test'].value - paper['pass256_grpo_test'].value:.1f}); base reaches RL at the "
            f"{terms['crossover k']} ≈ **{fmt_k(m['crossover_k'])}** (median of seeds, training problems). The "
            f"{terms['distilled']} policy stays above base at every k.")


def toy_in_full(cfg, paper: Mapping[str, Any]) -> str:
    """The typed toy in words (``cfg``: its ``TypedConfig``)."""
    base, rl = paper["aime_base_solved"].value, paper["aime_rl_solved"].value
    return (f"Each problem is solved by one of *S* = {cfg.n_strategies} strategies. Problems come in *K* = "
            f"{cfg.n_types} **types** (a topic, a kind of question); the policy is shared within a type, and each type "
            f"has a typical correct strategy. A share ***a*** of the problems (here **a = {cfg.atypical:g}**, a "
            "property of the data) are **atypical**: another strategy solves them, drawn from the base model's own "
            "prior. RL can only learn what a type's problems have in common, so it sharpens every problem of a type "
            "toward the typical strategy: pass@1 rises on both splits, and the atypical problems, which the base "
            "model solved now and then by sampling widely, starve. (On AIME24 the paper's RL model loses "
            f"{base - rl} of the {base} problems base solves: the same order as a.)")


def steps_notice(m: Mapping[str, Any], lengths, paper_by_steps: list[dict]) -> str:
    """What to notice in the by-steps charts (``lengths``: the claim lengths; ``paper_by_steps``: the paper's
    Table 3 rows)."""
    by_steps = {d["steps"]: d for d in m["drop_by_steps"]}
    shown = [L for L in lengths if L in by_steps]
    starts_above = bool(shown) and by_steps[shown[0]]["drop"] < 0
    paper_rows = [r for r in paper_by_steps if r["split"] == "train"]
    return ("**What to notice.** On the training problems the pass@256 change is "
            + " → ".join(f"**{-100 * by_steps[L]['drop']:+.1f}**" for L in shown) + " points at "
            + " / ".join(map(str, shown)) + " steps (paper, Table 3: "
            + " → ".join(f"{r['pass256_change']:+.1f}" for r in paper_rows)
            + ")" + (": in the toy RL starts above base at k = 256 and falls below it only with longer training"
                     if starts_above else "") + ". "
            "The toy's steps are not the paper's (smaller batches, a 32-strategy policy): compare shapes.")


def coverage_notice(tr: Mapping[str, Any], ho: Mapping[str, Any], steps: int, atypical: float) -> str:
    """What to notice in the per-problem scatter (``tr``, ``ho``: the story rows of the two splits)."""
    return (f"**What to notice.** Over {int(tr['seeds'])} seeds at {steps} steps, base solves (one correct sample in "
            f"1024) and RL does not: **{int(tr['lost'])}** training problems, of which **{int(tr['lost_atypical'])}** "
            f"are atypical ({100 * tr['atypical_share_of_lost']:.0f}%; atypical problems are {100 * atypical:g}% of "
            f"all); RL solves **{int(tr['gained'])}** that base does not. An atypical problem's success probability "
            f"falls from **{tr['p_atypical_base']:.3f}** to **{tr['p_atypical_rl']:.3f}** on average, a typical one's "
            f"rises from **{tr['p_typical_base']:.3f}** to **{tr['p_typical_rl']:.3f}**. Held-out problems: "
            f"{int(ho['lost'])} lost ({int(ho['lost_atypical'])} atypical), {int(ho['gained'])} gained.")


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "RLVR": "Reinforcement learning with verifiable rewards: the reward is 1 when an automatic checker "
            "accepts the answer.",
    "pass@k": "The probability that at least one of k sampled answers is correct (estimated without bias "
              "from n ≥ k samples).",
    "GRPO": "Group Relative Policy Optimization: sample a group of G answers per problem, score each 1 or 0 by "
            "the checker, and weight each answer's gradient by its reward minus the group's mean, over the "
            "group's standard deviation (no value network).",
    "distilled": "A model trained to imitate a teacher's answers (supervised fine-tuning), not by RL: it can "
                 "learn strategies the base model almost never samples.",
    "atypical problem": "A problem of the toy that its type's usual strategy does not solve: another strategy, "
                        "one the base model samples now and then, does.",
    "crossover k": "The number of samples k at which the base model's pass@k catches up with the RL model's.",
    "ρ toy": "This page's earlier toy: each problem has its own logits beside the shared ones, and a share ρ of "
             "every update goes to them; ρ was tuned to land in the paper's regime (illustrated, not tested).",
}
