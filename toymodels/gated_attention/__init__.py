"""Gated Attention for Large Language Models (Qiu et al., NeurIPS 2025): a sigmoid gate on each head's SDPA output,
trained in a tiny LM with and without it, and the attention sink and the massive activations it removes.

Two toy tasks: Bigram-Backcopy (Guo et al. 2024), where every head is dormant on the same queries, and head-specific
dormancy, where each query needs one head and not the other (the premise of the paper's head-shared control); a
real ungated transformer (all-MiniLM-L6-v2) shows the phenomenon itself. The package reads like the paper:
``config`` (configurations, bounds, cost) <- ``data`` (the tasks) <- ``model`` (the gated layer of Eq. 5, the LM,
the sink metrics) <- ``training`` <- ``experiments`` (every bounded call); ``minilm`` (the real model), ``real`` and
``real_claims`` (SmolLM2 and MiniLM, read through ``tracing``: one instrumented forward pass), ``summary``
(the statistics the claims and the page read), ``notebook`` (every configuration tried) beside them; this file is
the contract. Importing the package imports no torch.
"""
from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from toymodels.claims import (
    Claim,
    Evidence,
    Quote,
    claims,
    equivalence,
    exact,
    paper_numbers,
    pending,
    precondition,
    share,
    superiority,
)
from toymodels.errors import NotStored
from toymodels.topic import InputError, Progress, View, as_progress, lazy_exports, views

from .config import (  # noqa: F401  (the page and the tests read them here)
    AFTER_DELIMITER,
    ALL_VARIANTS,
    COPY_RULES,
    DEFAULT,
    DEFAULT_LRS,
    DEFAULT_VARIANTS,
    HIST_BINS,
    HSD_CFG,
    HSD_NAME,
    HSD_PILOT2,
    HSD_PILOT2_SEEDS,
    HSD_PILOT_SEED,
    HSD_PILOTS,
    HSD_SEEDS,
    II_SEEDS,
    KNOBS,
    MACT_CFG,
    MACT_NAME,
    MACT_SEEDS,
    MACT_VARIANTS,
    MAX_CHARS,
    MAX_TEXTS,
    MAX_WORK,
    PRESETS,
    SEARCH_BASE,
    SEARCH_CONFIGS,
    SINK_CFG,
    SINK_EPS,
    SINK_SEEDS,
    TASKS,
    VARIANTS,
    Config,
    ConfigError,
    check_budget,
    check_structure,
    expected_seconds,
    hsd_config,
    search_config,
)
from .minilm import SENTENCES  # noqa: F401
from .notebook import (  # noqa: F401
    HSD_PILOT,
    HSD_PILOT2_RESULTS,
    HSD_RULE,
    HSD_RULE2,
    LAB_NOTEBOOK,
    MACT_SEARCH,
    SEARCH_CONCLUSION,
    hsd_pick,
    hsd_pick2,
    search_seed_table,
    search_table,
    seed_replicates,
)
from .real import VISITOR_CHARS, expected_real_seconds  # noqa: F401
from .real import prompts as real_prompts
from .real_claims import claims_for as real_claims_for
from .real_claims import real_metrics
from .summary import (  # noqa: F401
    MACT_CUT_MIN,
    MACT_RATIO_MIN,
    SINK_PRESENT,
    clopper_pearson,
    control_table,
    loss_table,
    mact_metrics,
    mact_seed_table,
    mact_seen_table,
    midway_summary,
    pair_summary,
    removal,
    removal_table,
    sink_metrics,
    t_interval,
)

TOPIC = "gated-attention"

# --------------------------------------------------------------------------- the paper's numbers

PAPER = paper_numbers(
    fattn_baseline=Quote(0.467, "Table 4", "first-token attention of the ungated 15A2B MoE, mean over layers"),
    fattn_g1_elementwise=Quote(0.048, "Table 4", "G1 elementwise, head-specific sigmoid gate"),
    fattn_g1_headwise=Quote(0.073, "Table 4"),
    fattn_g1_headshared=Quote(0.301, "Table 4", "elementwise gate shared across heads"),
    fattn_g2_elementwise=Quote(0.297, "Table 4", "gate on the values"),
    fattn_g1_input_independent=Quote(0.364, "Table 4"),
    fattn_g1_ns_sigmoid=Quote(0.451, "Table 4", "0.5 + 0.5 sigmoid: a gate that cannot close"),
    gate_g1_elementwise=Quote(0.116, "Table 4", "mean gate score"),
    gate_g1_headwise=Quote(0.172, "Table 4"),
    gate_g1_headshared=Quote(0.271, "Table 4"),
    gate_g2_elementwise=Quote(0.221, "Table 4"),
    gate_g1_input_independent=Quote(0.335, "Table 4"),
    gate_g1_ns_sigmoid=Quote(0.653, "Table 4"),
    mact_baseline=Quote(1053, "Table 4", "M-Act: largest hidden-state activation per layer, averaged over layers"),
    mact_g1_elementwise=Quote(94, "Table 4"),
    mact_g1_headwise=Quote(98, "Table 4"),
    mact_g1_headshared=Quote(286, "Table 4"),
    mact_g2_elementwise=Quote(125, "Table 4"),
    mact_g1_input_independent=Quote(471, "Table 4"),
    mact_g1_ns_sigmoid=Quote(892, "Table 4"),
    ppl_baseline=Quote(6.026, "Table 1", "average perplexity, 15A2B MoE, 400B tokens"),
    ppl_g1_elementwise=Quote(5.761, "Table 1"),
    ppl_g1_headwise=Quote(5.792, "Table 4"),
    ppl_g1_headshared=Quote(5.801, "Table 4"),
    ppl_g2_elementwise=Quote(5.820, "Table 4"),
    ppl_g1_input_independent=Quote(5.917, "Table 4"),
    ppl_g1_ns_sigmoid=Quote(5.900, "Table 4"),
    fattn_layer21=Quote("0.83 -> 0.04", "Fig. 2", "first-token attention at layer 21, baseline -> G1"),
)
#: The share of the baseline's first-token attention a variant removes in the paper (its floor is negligible at
#: its context length): 1 - F_variant / F_baseline.
PAPER_REMOVED = {v: 1 - PAPER[f"fattn_{v}"].value / PAPER["fattn_baseline"].value for v in VARIANTS if v != "baseline"}


def paper_row(variant: str) -> dict:
    """The paper's Table 4 row of a variant: F-Attn, gate mean, M-Act, PPL (None where the paper has none)."""
    return {col: PAPER[f"{key}_{variant}"].value if f"{key}_{variant}" in PAPER else None
            for col, key in (("fattn", "fattn"), ("gate_mean", "gate"), ("mact", "mact"), ("ppl", "ppl"))}


# --------------------------------------------------------------------------- the views


def _hsd_arguments() -> dict:
    if HSD_CFG is None:
        raise NotStored("the head-specific-dormancy pilot has not picked a configuration yet (notebook.HSD_RULE2)")
    return dict(cfg=HSD_CFG, variants=ALL_VARIANTS, seeds=list(HSD_SEEDS))


#: A registered deciding run not in this build carries ``pending=`` (why): its claims read "not testable here" and
#: say so. To run one: ``python -m toymodels precompute gated-attention --view NAME``, then delete its ``pending=``.
VIEWS = views(
    View("compare_all", ".experiments:reproduction", dict(sink_cfg=SINK_CFG, mact_cfg=MACT_CFG),
         label="Training the seven variants and the massive-activation models…", seconds=900),
    View("layer_demo", ".experiments:layer_demo", dict(cfg=SINK_CFG), label="Building the variants…", seconds=2),
    View("gate_midway", ".experiments:gate_midway", dict(cfg=SINK_CFG, switch=SINK_CFG.steps // 2),
         label="Training with the gate added halfway…", seconds=40),
    View("sink_seeds", ".experiments:seed_sweep", dict(cfg=SINK_CFG, variants=ALL_VARIANTS, seeds=list(SINK_SEEDS)),
         label="Training the seven variants on five seeds…", seconds=1500),
    View("hsd_seeds", ".experiments:seed_sweep", _hsd_arguments,
         label="Training the seven variants on the head-specific task, five seeds…", seconds=600,
         pending="not run, by the registered rule: the second pilot (notebook.HSD_RULE2, baselines of P6 and P7 on "
                 "seeds 101-103) found no candidate with a sink in every pilot seed (seed 101: F-Attn 0.013 and "
                 "0.015 against twice the floor, 0.070), so no task configuration was picked for the claim seeds"),
    View("mact_seeds", ".experiments:seed_sweep",
         dict(cfg=MACT_CFG, variants=["baseline", "g1_elementwise"], seeds=list(MACT_SEEDS)),
         label="Training the massive-activation models on five seeds…", seconds=1500),
    View("ii_seeds", ".experiments:seed_sweep",
         dict(cfg=SINK_CFG, variants=["baseline", "g1_input_independent"], seeds=list(II_SEEDS)),
         label=f"Training the baseline and the input-independent gate on {len(II_SEEDS)} fresh seeds…",
         seconds=1200),
    View("real_minilm", ".minilm:minilm_sink", dict(texts=list(SENTENCES)),
         label="Loading all-MiniLM-L6-v2 and reading its attention…", seconds=8),
    View("real_smollm2", ".real:real_model", dict(key="smollm2", texts=list(real_prompts())),
         label="Loading SmolLM2-135M-Instruct and reading 32 prompts…", seconds=120),
    View("real_minilm_prompts", ".real:real_model", dict(key="minilm", texts=list(real_prompts()), ablation=False),
         label="Reading 32 prompts with all-MiniLM-L6-v2…", seconds=20),
)
HEADLINE = "compare_all"

# --------------------------------------------------------------------------- the claims and their tests
# Thresholds written and committed before the runs that decide them (the `registered` commit): SINK_SEEDS,
# HSD_SEEDS and MACT_SEEDS were first run after it; the MiniLM sentences were first read after it.

REMOVES_MIN = 0.5      # "removes the sink": the 95% interval of the share removed lies above 0.5
KEEPS_MAX = 0.5        # "keeps the sink": the 95% interval of the share removed lies below 0.5
MIN_SEEDS = 4          # seeds whose baseline has a sink, needed to decide a removal claim
GATE_SPARSE_MAX = 0.25  # "sparse": the 95% interval of G1's mean gate score lies below 0.25 (init 0.5)
MACT_SEEDS_NEEDED = 4  # of the 5 seeds of MACT_SEEDS meeting the massive-activation criterion
LOSS_SOLVED = 0.05     # both models within 0.05 nats of the Bayes CE: an improvement cannot show
REAL_SINK_MIN = 3.0    # MiniLM: first-token attention, mean over layers, at least 3x the uniform share
REAL_MASSIVE_LAYERS = 4  # MiniLM: the largest |h| sits on the first token in at least 4 of its 6 layers
TASK_NAMES = {"sink_seeds": "Bigram-Backcopy", "hsd_seeds": "head-specific dormancy"}
REGISTERED = "commit 22d87b4 (2026-11-25; first written in 09255b3)"
#: The head-specific-dormancy claims: the same tests, run on the second pilot's pick and fresh seeds 5-9.
#: Issue 41: the shared decision rules, and the input-independent gate's fresh seeds (II_SEEDS).
REGISTERED_41 = "commit a0845cb (2026-11-27, issue 41)"
REGISTERED_HSD = "commit 81c4609 (2026-11-25: second pilot rule, seeds 5-9; the tests as registered in 22d87b4)"
#: The real-model claims (issue 40): tests and prompts committed before any model read the registered prompts.
REGISTERED_REAL = "commit 1ee27cc (2026-11-27), before any model read the registered prompts"


def _pending(views, name: str):
    """``views[name]``, or None when it is missing because its registered run is not in this build (``pending=``)."""
    try:
        return views[name]
    except (KeyError, NotStored):
        if VIEWS[name].pending:
            return None
        raise


def _share(r: dict) -> str:
    return f"{100 * r['removed']:.0f}% of the sink removed (F-Attn {r['fattn_baseline']:.3f} → {r['fattn']:.3f}, " \
           f"floor {r['floor']:.3f})"


def _removal_decision(r: dict, removes: bool):
    """The removal rule (registered 22d87b4; the shared rule since issue 41): the share removed is "at least one
    half" (removes) or "at most one half" (keeps), by its 95% t-interval: inside the bound -> reproduced, wholly on
    the other side -> not reproduced, straddling it -> not testable here."""
    if removes:
        return equivalence(r["removed"], (r["lo"], r["hi"]), margin=1 - REMOVES_MIN, target=1.0, sides="lower",
                           n=r["n"], what="share of the sink removed")
    return equivalence(r["removed"], (r["lo"], r["hi"]), margin=KEEPS_MAX, target=0.0, sides="upper", n=r["n"],
                       what="share of the sink removed")


def _removal_evidence(views, view: str, variant: str, removes: bool, note: str = "") -> Evidence:
    """The test of a removal claim ("removes": the interval above REMOVES_MIN; "keeps": below KEEPS_MAX)."""
    sweep = _pending(views, view)
    if sweep is None:
        return Evidence("n/a", pending(VIEWS[view].pending), seeds=0, note=note)
    r = removal(sweep, variant)
    pre = precondition(r["n"] >= MIN_SEEDS, f"the {TASK_NAMES.get(view, TASK_NAMES['sink_seeds'])} baseline has a "
                                            f"sink (F-Attn ≥ {SINK_PRESENT:g}× the floor) in {r['n']} of {r['n_run']} "
                                            f"seeds: fewer than {MIN_SEEDS}, nothing to remove")
    if pre is not None:
        return Evidence(f"{r['n']} of {r['n_run']} seeds with a baseline sink", pre, seeds=r["n_run"], note=note)
    return Evidence(_share(r), _removal_decision(r, removes), seeds=r["n"],
                    uncertainty=f"95% t-interval of the share removed [{r['lo']:.2f}, {r['hi']:.2f}]", note=note,
                    metrics={"removed": r["removed"], "removed_lo": r["lo"], "removed_hi": r["hi"],
                             "fattn": r["fattn"], "fattn_baseline": r["fattn_baseline"], "floor": r["floor"]})


def _sink(views) -> Evidence:
    return _removal_evidence(views, "sink_seeds", "g1_elementwise", removes=True)


def _massive(views) -> Evidence:
    sweep = _pending(views, "mact_seeds")
    if sweep is None:
        return Evidence("n/a", pending(VIEWS["mact_seeds"].pending), seeds=0)
    t = mact_seed_table(sweep)
    k, n = int(t.meets.sum()), len(t)
    massive = int((t.bos_ratio_baseline >= MACT_RATIO_MIN).sum())
    lo, hi = clopper_pearson(k, n)
    per_seed = ", ".join(f"{r.bos_ratio_baseline:.0f}→{r.bos_ratio_g1:.0f}" for r in t.itertuples())
    pre = precondition(massive >= MACT_SEEDS_NEEDED,
                       f"the claim's premise is a massive activation to remove: the baseline's first token reaches "
                       f"{MACT_RATIO_MIN:g}× its layer's median in {massive} of {n} seeds (largest "
                       f"{t.bos_ratio_baseline.max():.0f}×), fewer than the {MACT_SEEDS_NEEDED} the test needs")
    d = pre or share(k, n, effect=MACT_SEEDS_NEEDED / len(MACT_SEEDS), what="share of seeds meeting the band")
    return Evidence(f"{k} of {n} seeds meet the band; median cut {t.cut.median():.1f}× (first token's max/median, "
                    f"baseline→G1: {per_seed})", d, seeds=n,
                    uncertainty=f"95% Clopper-Pearson interval of the share of seeds meeting it [{lo:.2f}, {hi:.2f}]",
                    metrics={"mact_seeds": n, "mact_seeds_meeting": k, "mact_seeds_massive": massive,
                             "median_cut": float(t.cut.median())})


#: The paper's gain in language modelling, in nats: log(PPL G1 / PPL baseline) (Table 1), the effect the
#: superiority rule must be able to exclude.
PPL_EFFECT = math.log(PAPER["ppl_g1_elementwise"].value / PAPER["ppl_baseline"].value)


def _loss(views) -> Evidence:
    t = loss_table(views["sink_seeds"])
    m, lo, hi = t_interval(t.g1_minus_baseline)
    ours = f"val loss G1 − baseline {m:+.4f} nats (excess over the Bayes CE {t.excess_baseline.mean():.3f} → " \
           f"{t.excess_g1.mean():.3f})"
    pre = precondition(not (t.excess_baseline.mean() < LOSS_SOLVED and t.excess_g1.mean() < LOSS_SOLVED),
                       "both models learn the toy task to within a few hundredths of a nat of its Bayes loss, so a "
                       "better language model cannot show here")
    d = pre or superiority(m, (lo, hi), effect=PPL_EFFECT, n=len(t), what="val loss, G1 − baseline (nats)")
    return Evidence(ours, d, seeds=len(t), uncertainty=f"95% t-interval [{lo:+.4f}, {hi:+.4f}]",
                    metrics={"loss_diff": m, "loss_diff_lo": lo, "loss_diff_hi": hi})


def _sparse(views) -> Evidence:
    t = removal_table(views["sink_seeds"])
    g = t[t.variant == "g1_elementwise"].gate_mean.astype(float)
    m, lo, hi = t_interval(g)
    d = equivalence(m, (lo, hi), margin=GATE_SPARSE_MAX, sides="upper", n=len(g), what="mean gate score")
    return Evidence(f"mean gate score {m:.3f} (from 0.5 at init)", d, seeds=len(g),
                    uncertainty=f"95% t-interval [{lo:.3f}, {hi:.3f}]", metrics={"gate_mean_g1": m})


def _real(views) -> Evidence:
    lay = views["real_minilm"]["layers"]
    ratio = float(lay.first_token_attention.mean() / lay.uniform.mean())
    on_first = int((lay.pos == 0).sum())
    d = exact(ratio >= REAL_SINK_MIN and on_first >= REAL_MASSIVE_LAYERS,
              f"a fixed model on fixed sentences: first-token attention ≥ {REAL_SINK_MIN:g}× uniform and the largest "
              f"|h| on the first token in ≥ {REAL_MASSIVE_LAYERS} layers")
    return Evidence(f"first-token attention {lay.first_token_attention.mean():.2f} = {ratio:.1f}× uniform "
                    f"({lay.uniform.mean():.3f}); largest |h| on [CLS] in {on_first} of {len(lay)} layers, "
                    f"{lay.ratio.min():.0f}-{lay.ratio.max():.0f}× the median: not massive (under the "
                    f"{MACT_RATIO_MIN:g}× bar of massive-removed and Sun et al.'s 1000×)",
                    d, seeds=1,
                    note="an ungated encoder (all-MiniLM-L6-v2) on 8 sentences: the phenomenon the gate removes, "
                         "with no gated twin to compare. The test asks only that the first token hold each layer's "
                         "largest activation; MiniLM is post-norm (every layer's output passes a LayerNorm), so its "
                         "outlier stays tens of times the median: see real-massive-minilm and, for a pre-norm LM, "
                         "real-massive-smollm2", metrics={"real_sink_over_uniform": ratio})


def _input_independent(views) -> Evidence:
    """Decided by the registered fresh seeds (II_SEEDS); the first 5 seeds' straddling interval in the note."""
    first = removal(views["sink_seeds"], "g1_input_independent")
    note = (f"The first 5 seeds (SINK_SEEDS): {100 * first['removed']:.0f}% removed, 95% t-interval "
            f"[{first['lo']:.2f}, {first['hi']:.2f}], straddling one half: not testable, so {len(II_SEEDS)} fresh "
            f"seeds ({II_SEEDS[0]}-{II_SEEDS[-1]}) were registered in {REGISTERED_41}.")
    return _removal_evidence(views, "ii_seeds", "g1_input_independent", removes=False, note=note)


def _g2_keeps(views) -> Evidence:
    ev = _removal_evidence(views, "sink_seeds", "g2_elementwise", removes=False)
    r = removal(views["sink_seeds"], "g2_elementwise")
    if r["removed"] < 0:
        from dataclasses import replace as _replace

        ev = _replace(ev, note=(f"Our G2 raises the sink (F-Attn {r['fattn_baseline']:.3f} → {r['fattn']:.3f}, "
                                f"{-r['removed']:.1f}× the excess) where the paper's lowers it 36%: the test asks only "
                                "that G2 does not remove it, which holds; its size and direction do not match."))
    return ev


def _g2_massive(views) -> Evidence:
    """The second half of the paper's G2 control: G2 removes the massive activations. Its premise, a massive
    activation in the baseline, does not occur in the sink configuration."""
    s = views["sink_seeds"]["summary"]
    b = s[s.variant == "baseline"]
    top = float(b.bos_ratio.max())
    pre = precondition(bool((b.bos_ratio >= MACT_RATIO_MIN).any()),
                       f"no baseline seed of the sink configuration has a massive activation (the first token's "
                       f"largest |h| reaches at most {top:.1f}× its layer's median, against {MACT_RATIO_MIN:g}×)")
    g = s[s.variant == "g2_elementwise"]
    if pre is None:   # written before any such seed existed: G2 cuts the first token's ratio >= MACT_CUT_MIN in all
        cut = (b.set_index("seed").bos_ratio / g.set_index("seed").bos_ratio).dropna()
        pre = exact(bool((cut >= MACT_CUT_MIN).all()), f"G2 cuts the first token's ratio ≥ {MACT_CUT_MIN:g}× "
                                                      "in every seed")
    return Evidence(f"baseline first-token max/median ≤ {top:.1f}× in all {len(b)} seeds", pre, seeds=len(b),
                    uncertainty=f"largest over the seeds {top:.1f}×")


#: Why a control came out as it did, by claim and status: the toy's mechanism, in the claim's note (the page
#: shows it beside the claim; it judges nothing itself).
_G2_WHY = ("A value gate can make the first token's value small (a cheap place to park attention) but cannot close a "
           "head for a query, so the sink stays, as in the paper; here it can even grow.")
_WHY = {
    ("headshared-keeps-bb", "not reproduced"): "Every head is idle on the same queries (the non-triggers), so one "
                                               "gate shared by the heads closes them all and the sink goes.",
    ("headshared-keeps-hsd", "reproduced"): "When each query needs one head and not the other, a shared gate must "
                                            "stay open for the busy head, so the idle one parks its attention on the "
                                            "first token: the paper's explanation, in a toy.",
    ("headshared-keeps-hsd", "not reproduced"): "Even when each query needs a different head, the shared gate "
                                                "removes the sink here.",
    ("ns-sigmoid-keeps-bb", "reproduced"): "A gate that cannot go below one half cannot close a head, so the sink "
                                           "stays.",
    ("g2-keeps-bb", "reproduced"): _G2_WHY,
    ("g2-keeps-hsd", "reproduced"): _G2_WHY,
}


def _control(view: str, variant: str, removes: bool, claim: str = ""):
    if (view, variant) == ("sink_seeds", "g1_input_independent"):
        decide = _input_independent
    elif (view, variant) == ("sink_seeds", "g2_elementwise"):
        decide = _g2_keeps
    else:
        def decide(views):
            return _removal_evidence(views, view, variant, removes)

    def explained(views) -> Evidence:
        ev = decide(views)
        why = _WHY.get((claim, ev.status))
        return replace(ev, note=f"{ev.note} {why}".strip()) if why else ev

    return explained


def _removal_test(removes: bool, where: str) -> str:
    side = f"lies above {REMOVES_MIN}" if removes else f"lies below {KEEPS_MAX}"
    return (f"on {where}, over the seeds whose baseline has a sink (F-Attn ≥ {SINK_PRESENT:g}× the uniform floor; at "
            f"least {MIN_SEEDS} of 5 needed), the share of the baseline's excess over the floor that the gate removes, "
            f"1 − (F − floor)/(F_baseline − floor), has a 95% t-interval that {side}")


_CONTROLS = (  # variant, claim id stem, removes?, the paper's statement
    ("g1_elementwise", "g1-removes", True, "The elementwise, head-specific G1 gate removes the sink"),
    ("g1_headwise", "headwise-removes", True, "A headwise G1 gate (one scalar per head) removes the sink too"),
    ("g1_headshared", "headshared-keeps", False, "A G1 gate shared across heads keeps the sink: the gate must be "
                                                  "head-specific, because heads go dormant on different queries"),
    ("g2_elementwise", "g2-keeps", False, "A gate on the values (G2) keeps the sink (the paper: although it "
                                          "removes the massive activations; that half is its own claim)"),
    ("g1_input_independent", "input-independent-keeps", False, "An input-independent gate σ(θ) keeps the sink: the "
                                                               "gate must depend on the query"),
    ("g1_ns_sigmoid", "ns-sigmoid-keeps", False, "A non-sparse gate 0.5 + 0.5σ keeps the sink: the gate must be "
                                                 "able to close"),
)
#: SINK_CFG's per-head QK-norm and lr 2e-2 were chosen when G1 cut the sink 5.5x (seed 0, LAB_NOTEBOOK): fitted for
#: the Bigram-Backcopy claims that selection favours (a head-specific G1 gate removing the sink, its sparse scores),
#: not for the controls that must keep the sink (the selection works against them).
_SINK_FITTED = ("qk_norm", "lr")


def _control_claims():
    out = []
    for view, task, where in (("sink_seeds", "bb", "Bigram-Backcopy (SINK_SEEDS)"),
                              ("hsd_seeds", "hsd", "head-specific dormancy (HSD_SEEDS)")):
        for variant, stem, removes, statement in _CONTROLS:
            if (variant, view) == ("g1_elementwise", "sink_seeds"):
                continue                                   # the headline claim
            pv = PAPER[f"fattn_{variant}"]
            fresh = (variant, view) == ("g1_input_independent", "sink_seeds")
            test = _removal_test(removes, f"Bigram-Backcopy, {len(II_SEEDS)} fresh seeds (II_SEEDS, "
                                          f"{II_SEEDS[0]}-{II_SEEDS[-1]})" if fresh else where)
            out.append(Claim(
                f"{stem}-{task}", "control", f"{statement} ({TASK_NAMES[view]} task).", pv.source,
                f"F-Attn {PAPER['fattn_baseline'].value:g} → {pv.value:g}: {100 * PAPER_REMOVED[variant]:.0f}% of "
                "the sink removed", test, _control(view, variant, removes, f"{stem}-{task}"),
                fitted=_SINK_FITTED if view == "sink_seeds" and removes else (),
                registered=REGISTERED_41 if fresh else REGISTERED if view == "sink_seeds" else REGISTERED_HSD))
            if (variant, view) == ("g2_elementwise", "sink_seeds"):
                out.append(Claim(
                    "g2-removes-massive-bb", "control", "A gate on the values (G2) removes the massive activations "
                    "(Bigram-Backcopy task).", "Table 4 (M-Act)",
                    f"M-Act {PAPER['mact_baseline'].value} → {PAPER['mact_g2_elementwise'].value}",
                    f"precondition: a baseline seed of SINK_SEEDS whose first token reaches {MACT_RATIO_MIN:g}× its "
                    f"layer's median |h|; then exact: G2 cuts that ratio ≥ {MACT_CUT_MIN:g}× in every such seed "
                    "(written in issue 41, after the sink seeds were run: the premise was known to fail)", _g2_massive,
                    registered=""))
    return out


CLAIMS = claims(
    Claim("sink-removed", "headline",
          "An elementwise, head-specific sigmoid gate after SDPA (G1) removes the attention sink.", "Table 4, Fig. 2",
          f"F-Attn {PAPER['fattn_baseline'].value:g} → {PAPER['fattn_g1_elementwise'].value:g}: "
          f"{100 * PAPER_REMOVED['g1_elementwise']:.0f}% of the sink removed",
          _removal_test(True, "Bigram-Backcopy (SINK_SEEDS)"), _sink, fitted=_SINK_FITTED, registered=REGISTERED),
    Claim("massive-removed", "headline",
          "The G1 gate removes the massive activation on the first token.", "Table 4 (M-Act), App. A.4",
          f"M-Act {PAPER['mact_baseline'].value} → {PAPER['mact_g1_elementwise'].value} (11× lower)",
          f"in config {MACT_NAME} over MACT_SEEDS (5 seeds), a seed meets the band when the baseline's first token "
          f"holds an activation ≥ {MACT_RATIO_MIN:g}× its layer's median |h| (max over layers) and G1's largest such "
          f"ratio, over all its layers, is ≥ {MACT_CUT_MIN:g}× lower; reproduced when at least {MACT_SEEDS_NEEDED} "
          "of 5 seeds meet it", _massive, fitted=("MACT_CFG",), registered=REGISTERED),
    Claim("ppl-improved", "headline", "The G1 gate improves language modelling.", "Table 1",
          f"PPL {PAPER['ppl_baseline'].value:g} → {PAPER['ppl_g1_elementwise'].value:g}",
          f"on Bigram-Backcopy (SINK_SEEDS): not testable when both models end within {LOSS_SOLVED} nats of the "
          "realised Bayes cross-entropy; otherwise reproduced when the 95% t-interval of G1's val loss minus the "
          "baseline's (same seed) lies below 0", _loss, registered=REGISTERED),
    Claim("gate-sparse", "mechanism", "The G1 gate scores are sparse: most are near 0.", "Table 4 (gate score)",
          f"mean gate score {PAPER['gate_g1_elementwise'].value:g}",
          f"on Bigram-Backcopy (SINK_SEEDS), the 95% t-interval of G1 elementwise's mean gate score (it starts at "
          f"0.5) lies below {GATE_SPARSE_MAX}", _sparse, fitted=_SINK_FITTED, registered=REGISTERED),
    *_control_claims(),
    Claim("real-ungated-sink", "control",
          "An ungated softmax-attention transformer puts much of its attention on the first token, which holds its "
          "layer's largest activation (all-MiniLM-L6-v2).", "Fig. 2, Table 4 (baseline)",
          f"F-Attn {PAPER['fattn_baseline'].value:g} (layer 21: 0.83); M-Act {PAPER['mact_baseline'].value}",
          f"in all-MiniLM-L6-v2 on the 8 sentences of minilm.SENTENCES (not those of issue 30): first-token "
          f"attention (queries i ≥ 1, mean over heads and layers) ≥ {REAL_SINK_MIN:g}× the uniform share 1/T, and "
          f"the layer's largest |h| on the first token in at least {REAL_MASSIVE_LAYERS} of 6 layers", _real,
          registered=REGISTERED),
    *real_claims_for(REGISTERED_REAL),
)


def _mean(table: pd.DataFrame, variant: str, col: str = "fattn") -> float:
    return float(table[table.variant == variant][col].mean())


def metrics(views) -> dict:
    """The shipped verdict metrics of issue 30 (lists per layer for the real model)."""
    sink = removal_table(views["sink_seeds"])
    g1 = sink[(sink.variant == "g1_elementwise") & sink.sink]
    out = {"fattn_excess_g1": float(g1.remaining.mean()), "fattn_headshared": _mean(sink, "g1_headshared"),
           "fattn_g2": _mean(sink, "g2_elementwise"), "fattn_baseline_seeds": _mean(sink, "g1_elementwise",
                                                                                  "fattn_baseline"),
           "fattn_g1_seeds": _mean(sink, "g1_elementwise"), "fattn_floor": float(views["sink_seeds"]["floor"])}
    hsd_seeds, mact_seeds = _pending(views, "hsd_seeds"), _pending(views, "mact_seeds")
    ii = _pending(views, "ii_seeds")
    if ii is not None:
        r = removal(ii, "g1_input_independent")
        out.update(ii_removed=r["removed"], ii_removed_lo=r["lo"], ii_removed_hi=r["hi"], ii_seeds=r["n"])
    if hsd_seeds is not None:
        hsd = removal_table(hsd_seeds)
        out.update(hsd_fattn_baseline=_mean(hsd, "g1_elementwise", "fattn_baseline"),
                   hsd_fattn_headshared=_mean(hsd, "g1_headshared"),
                   hsd_fattn_headspecific=_mean(hsd, "g1_elementwise"), hsd_floor=float(hsd_seeds["floor"]))
    if mact_seeds is not None:
        t = mact_seed_table(mact_seeds)
        out.update(mact_seeds=len(t), mact_seeds_meeting=int(t.meets.sum()), mact_median_cut=float(t.cut.median()),
                   mact_ratios_baseline=t.bos_ratio_baseline.round(1).tolist(),
                   mact_ratios_g1=t.bos_ratio_g1.round(1).tolist())
    real = views["real_minilm"]["layers"]
    out.update(real_first_token_attention=real.first_token_attention.round(4).tolist(),
               real_max_over_median=real.ratio.round(2).tolist(), real_uniform=float(real.uniform.mean()))
    out.update(real_metrics(views))
    return out


# --------------------------------------------------------------------------- tables the page shows

def controls(sink_seeds: dict, hsd_seeds: dict | None = None) -> pd.DataFrame:
    """Every gated variant on both tasks (mean over the claims' seeds): F-Attn, the share of the baseline's sink it
    removes with its 95% interval, the gate mean, beside the paper's F-Attn and share (Table 4)."""
    paper = {v: paper_row(v)["fattn"] for v in VARIANTS}
    sweeps = {"Bigram-Backcopy": sink_seeds, **({"Head-specific dormancy": hsd_seeds} if hsd_seeds else {})}
    return control_table(sweeps, paper)


def table4(sink: dict) -> pd.DataFrame:
    """The shipped sink comparison (seed 0) as the paper's Table 4: ours beside the paper's, per variant."""
    s = sink["summary"].set_index("variant")
    rows = []
    for v in VARIANTS:
        p = paper_row(v)
        rows.append({"variant": VARIANTS[v], "F-Attn (ours)": s.loc[v, "fattn"], "F-Attn (paper)": p["fattn"],
                     "gate mean (ours)": s.loc[v, "gate_mean"], "gate mean (paper)": p["gate_mean"],
                     "M-Act (ours)": s.loc[v, "mact"], "M-Act (paper)": p["mact"],
                     "max/median (ours)": s.loc[v, "mact_ratio"], "sink rate % (ours, ε=0.3)": s.loc[v, "sink_rate"],
                     "val loss (ours)": s.loc[v, "val_loss"], "PPL (paper)": p["ppl"]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the command line


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress | None = None) -> dict:
    """Quick (about 2 CPU-minutes): baseline, G1 elementwise and G1 headwise on the sink configuration with this
    seed: the sink keys (``fattn_baseline``, ``fattn_g1``, ``sink_cut_g1``, ...) beside the claims judged on the
    shipped views. Full (about an hour and a half): every view, its seeds shifted by ``seed``; the claims judged on
    this run."""
    from toymodels import store
    from toymodels.shipped import reproduce_record

    from .experiments import _compare, reproduction, seed_sweep
    from .minilm import minilm_sink

    p = as_progress(progress)
    if quick:
        res = _compare(replace(SINK_CFG, seed=seed), DEFAULT_VARIANTS, device=device, progress=p)
        extra = sink_metrics(res)
        s = res["summary"].set_index("variant")
        for v in s.index:
            extra[f"fattn_{v}"], extra[f"val_loss_{v}"] = float(s.loc[v, "fattn"]), float(s.loc[v, "val_loss"])
            if v != "baseline":
                extra[f"gate_mean_{v}"] = float(s.loc[v, "gate_mean"])
        extra["config"] = {k: v for k, v in res["config"].items() if k != "variant"}
        if out is not None:
            store.write_tables(out, {"gated_attention_summary": res["summary"],
                                     "gated_attention_layers": res["layers"], "gated_attention_curves": res["curves"]})
        return reproduce_record(sys.modules[__name__], {}, quick, seed, **extra)
    def seeds(view: str) -> list[int]:
        return [s + seed for s in VIEWS[view].arguments()["seeds"]]

    parts = [("compare_all", lambda q: reproduction(replace(SINK_CFG, seed=seed), replace(MACT_CFG, seed=seed),
                                                    progress=q)),
             ("sink_seeds", lambda q: seed_sweep(SINK_CFG, ALL_VARIANTS, seeds("sink_seeds"), device, q)),
             ("hsd_seeds", lambda q: seed_sweep(_hsd_arguments()["cfg"], ALL_VARIANTS, seeds("hsd_seeds"), device, q)),
             ("mact_seeds", lambda q: seed_sweep(MACT_CFG, ["baseline", "g1_elementwise"], seeds("mact_seeds"), device,
                                                 q)),
             ("real_minilm", lambda q: minilm_sink(list(SENTENCES), device))]
    computed = {name: run(p.part(i, len(parts), f"{name}: ")) for i, (name, run) in enumerate(parts)}
    if out is not None:
        tables = {f"gated_attention_{name}": computed[name]["summary"] for name in ("sink_seeds", "hsd_seeds",
                                                                                  "mact_seeds")}
        tables["gated_attention_minilm"] = computed["real_minilm"]["layers"]
        store.write_tables(out, tables)
    return reproduce_record(sys.modules[__name__], computed, quick, seed)


def main(argv: list[str]) -> int:
    """``python -m toymodels gated-attention search|pilot|pilot2 [NAME ...]``: rerun search configurations (the
    massive-activation search) or a head-specific-dormancy pilot (the first, or the second on three seeds), and
    print the table."""
    if not argv or argv[0] not in ("search", "pilot", "pilot2"):
        raise InputError("usage: python -m toymodels gated-attention search|pilot|pilot2 [NAME ...]")
    from .experiments import hsd_pilot, search

    if argv[0] == "search":
        table = search(argv[1:] or None)
    elif argv[0] == "pilot":
        table = hsd_pilot(argv[1:] or None)
    else:
        table = hsd_pilot(argv[1:] or list(HSD_PILOT2), list(HSD_PILOT2_SEEDS))
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


__getattr__, __dir__ = lazy_exports(__name__, {
    **{name: ".experiments" for name in ("compare", "lr_sweep", "layer_demo", "gate_midway", "reproduction",
                                         "search", "seed_sweep", "hsd_pilot", "n_params")},
    **{name: ".training" for name in ("train", "measure", "_adamw_step", "_add_gate", "_lr_factor")},
    **{name: ".model" for name in ("GatedLM", "explicit_attention", "first_token_attention", "sink_rate",
                                   "massive_activation", "massive_stats", "_uniform_floor", "_rope", "_apply_rope")},
    **{name: ".data" for name in ("BigramBackcopy", "HeadSpecificDormancy", "make_data")},
    "minilm_sink": ".minilm",
    "trace": ".tracing",
    "tokenize": ".tracing",
    "real_prompt": ".real",
    "real_model": ".real",
})
