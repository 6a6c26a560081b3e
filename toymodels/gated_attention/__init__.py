"""Gated Attention for Large Language Models (Qiu et al., NeurIPS 2025): a sigmoid gate on each head's SDPA
output, trained in a tiny LM with and without it on the Bigram-Backcopy task, and the attention sink and the
massive activations it removes.

The package reads like the paper: ``config`` (configurations, bounds, cost) <- ``data`` (the tasks) <- ``model``
(the gated layer of Eq. 5, the LM, the sink metrics) <- ``training`` <- ``experiments`` (every bounded call) <-
this contract. ``notebook`` is the lab notebook of the massive-activation search; ``summary`` reads the shipped
views for the verdict and the page. Importing the package imports no torch.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from toymodels.topic import InputError, Progress, View, as_progress, lazy_exports, views

from .config import (  # noqa: F401
    AFTER_DELIMITER,
    ALL_VARIANTS,
    CFG_BOUNDS,
    CHOICES,
    COPY_RULES,
    DEFAULT,
    DEFAULT_LRS,
    DEFAULT_VARIANTS,
    HIST_BINS,
    LIMITS,
    MACT_CFG,
    MACT_NAME,
    MACT_VARIANTS,
    MAX_WORK,
    SEARCH_BASE,
    SEARCH_CONFIGS,
    SINK_CFG,
    SINK_EPS,
    VARIANTS,
    Config,
    ConfigError,
    check_budget,
    check_compare,
    expected_seconds,
    search_config,
    validate,
)
from .notebook import (  # noqa: F401
    MACT_CUT_MIN,
    MACT_RATIO_MIN,
    MACT_SEARCH,
    SEARCH_CONCLUSION,
    meets_bands,
    search_table,
    seed_replicates,
)
from .summary import PAPER_SINK_CUT, mact_metrics, sink_metrics, verdict  # noqa: F401

TOPIC = "gated-attention"

#: Paper Table 4 (15A2B MoE, 400B tokens): gate-score mean, M-Act, F-Attn, PPL. References only.
PAPER_TABLE4: dict[str, dict] = {
    "baseline": {"gate_mean": None, "mact": 1053, "fattn": 0.467, "ppl": 6.026},
    "g1_elementwise": {"gate_mean": 0.116, "mact": 94, "fattn": 0.048, "ppl": 5.761},
    "g1_headwise": {"gate_mean": 0.172, "mact": 98, "fattn": 0.073, "ppl": 5.792},
    "g1_headshared": {"gate_mean": 0.271, "mact": 286, "fattn": 0.301, "ppl": 5.801},
    "g2_elementwise": {"gate_mean": 0.221, "mact": 125, "fattn": 0.297, "ppl": 5.820},
    "g1_input_independent": {"gate_mean": 0.335, "mact": 471, "fattn": 0.364, "ppl": 5.917},
    "g1_ns_sigmoid": {"gate_mean": 0.653, "mact": 892, "fattn": 0.451, "ppl": 5.900},
}

VIEWS = views(
    View("compare_all", ".experiments:reproduction", dict(sink_cfg=SINK_CFG, mact_cfg=MACT_CFG),
         label="Training the seven variants and the massive-activation models…", seconds=900),
    View("layer_demo", ".experiments:layer_demo", dict(cfg=SINK_CFG), label="Building the variants…", seconds=2),
    View("gate_midway", ".experiments:gate_midway", dict(cfg=SINK_CFG, switch=SINK_CFG.steps // 2),
         label="Training with the gate added halfway…", seconds=40),
)
HEADLINE = "compare_all"


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress | None = None) -> dict:
    """Quick: baseline vs G1 elementwise vs G1 headwise on the sink configuration (about 1.5 CPU-minutes).
    Full: all seven variants on the sink configuration and the three massive-activation models (about 11
    CPU-minutes)."""
    from toymodels import store

    from .experiments import _compare

    p = as_progress(progress)
    sink_cfg = replace(SINK_CFG, seed=seed)
    if quick:
        res = _compare(sink_cfg, DEFAULT_VARIANTS, device=device, progress=p)
        m = sink_metrics(res)
        tables = {"gated_attention_summary": res["summary"], "gated_attention_layers": res["layers"],
                  "gated_attention_curves": res["curves"]}
    else:
        sink = _compare(sink_cfg, ALL_VARIANTS, device=device, progress=p.sub(0, 0.45))
        mact = _compare(replace(MACT_CFG, seed=seed), MACT_VARIANTS, device=device, progress=p.sub(0.45, 1))
        m = dict(verdict({"sink": sink, "mact": mact}).metrics)     # the verdict's names, the same meaning
        res = sink
        tables = {"gated_attention_summary": pd.concat([sink["summary"].assign(experiment="sink"),
                                                        mact["summary"].assign(experiment="massive")]),
                  "gated_attention_layers": pd.concat([sink["layers"].assign(experiment="sink"),
                                                       mact["layers"].assign(experiment="massive")]),
                  "gated_attention_curves": sink["curves"]}
    s = res["summary"].set_index("variant")
    for v in s.index:
        m.setdefault(f"fattn_{v}", float(s.loc[v, "fattn"]))
        m.setdefault(f"val_loss_{v}", float(s.loc[v, "val_loss"]))
        if v != "baseline":
            m.setdefault(f"gate_mean_{v}", float(s.loc[v, "gate_mean"]))
    m["config"] = {k: v for k, v in res["config"].items() if k != "variant"}
    if out is not None:
        store.write_tables(out, tables)
    return m


def main(argv: list[str]) -> int:
    """``python -m toymodels gated-attention search [NAME ...]``: rerun search configurations, print the table."""
    if not argv or argv[0] != "search":
        raise InputError("usage: python -m toymodels gated-attention search [NAME ...]")
    from .experiments import search

    print(search(argv[1:] or None).to_string(index=False))
    return 0


__getattr__, __dir__ = lazy_exports(__name__, {
    **{name: ".experiments" for name in ("compare", "lr_sweep", "layer_demo", "gate_midway", "reproduction",
                                         "search", "n_params")},
    **{name: ".training" for name in ("train", "measure", "_adamw_step", "_add_gate", "_lr_factor")},
    **{name: ".model" for name in ("GatedLM", "explicit_attention", "first_token_attention", "sink_rate",
                                   "massive_activation", "massive_stats", "_uniform_floor", "_rope", "_apply_rope")},
    **{name: ".data" for name in ("BigramBackcopy", "make_data")},
})
