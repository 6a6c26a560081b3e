"""Does Reinforcement Learning Really Incentivize Reasoning Capacity in LLMs Beyond the Base Model? (Yue et al.,
NeurIPS 2025 runner-up, arXiv 2504.13837): the unbiased pass@k estimator (Eq. 2), a toy policy sharpened by RL
with verifiable rewards, and pass@k of a visitor's own evaluations.

The package, shaped like the paper: ``passk`` (Eq. 2) and ``uploads`` / ``evaluations`` (reading and analysing
evaluation tables) <- ``policy`` (the toy's math) <- ``training`` <- ``measure`` <- ``rho`` (the capacity-share
toy's experiments) <- this file (the contract: PAPER, VIEWS, CLAIMS, metrics, reproduce).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

from toymodels.claims import Claim, Evidence, Quote, claims, paper_numbers
from toymodels.errors import InputError
from toymodels.topic import View, lazy_exports, views

from .config import (
    ALGORITHMS,
    CONFIG_BOUNDS,
    DEFAULT_RHO,
    LIMITS,
    MAX_SWEEP,
    REGIME,
    RHO_GRID,
    RHO_MEASURED,
    RHO_RULE,
    RHO_SEEDS,
    RHO_STEPS,
    SWEEP_CHOICES,
    SWEEP_DEFAULT,
    SWEEPABLE,
    WORK_LIMIT,
    ToyConfig,
    expected_seconds,
    validate,
    work,
)

TOPIC = "rlvr"

PAPER = paper_numbers(
    pass1_base_train=Quote(9.9, "Table 2", "Omni-MATH-Rule train pass@1 (%), Qwen2.5-7B base"),
    pass1_grpo_train=Quote(26.1, "Table 2", "Omni-MATH-Rule train pass@1 (%), GRPO (150 steps)"),
    pass256_base_train=Quote(67.2, "Table 2", "Omni-MATH-Rule train pass@256 (%), Qwen2.5-7B base"),
    pass256_grpo_train=Quote(66.3, "Table 2", "Omni-MATH-Rule train pass@256 (%), GRPO (150 steps)"),
    pass1_base_test=Quote(10.2, "Table 2", "Omni-MATH-Rule test pass@1 (%), Qwen2.5-7B base"),
    pass1_grpo_test=Quote(25.1, "Table 2", "Omni-MATH-Rule test pass@1 (%), GRPO (150 steps)"),
    pass256_base_test=Quote(69.1, "Table 2", "Omni-MATH-Rule test pass@256 (%), Qwen2.5-7B base"),
    pass256_grpo_test=Quote(68.3, "Table 2", "Omni-MATH-Rule test pass@256 (%), GRPO (150 steps)"),
    steps=Quote((150, 300, 450), "Table 3", "GRPO training steps of the step sweep"),
    pass1_by_steps=Quote((26.1, 33.6, 42.5), "Table 3", "Omni-MATH train pass@1 (%) at GRPO steps 150/300/450"),
    pass256_by_steps=Quote((66.3, 65.3, 64.3), "Table 3", "Omni-MATH train pass@256 (%) at GRPO steps 150/300/450"),
    pass256_test_by_steps=Quote((68.3, 66.6, 63.9), "Table 3",
                                "Omni-MATH test pass@256 (%) at GRPO steps 150/300/450"),
    delta_se_grpo=Quote(43.9, "§4 (final version), Fig. 8", "Δ_SE = pass@256(base) − pass@1(RL), GRPO, in-domain"),
    delta_se_rloo=Quote(42.6, "§4 (final version), Fig. 8", "Δ_SE, RLOO (the best algorithm), in-domain"),
    aime_base_solved=Quote(23, "Table 4", "AIME24 problems base solves (of 30)"),
    aime_rl_solved=Quote(19, "Table 4", "AIME24 problems RL solves, a strict subset of base's"),
    crossover=Quote("tens or hundreds", "Fig. 2", "the k at which base overtakes RL, benchmark-dependent"),
    distill=Quote("above base at every k", "Fig. 7", "DeepSeek-R1-Distill-Qwen-7B vs Qwen2.5-Math-7B, Minerva"),
)

VIEWS = views(
    View("toy_default", ".rho:run_toy", dict(cfg=ToyConfig()), label="Training the toy…", seconds=2),
    View("rho_sweep", ".rho:rho_sweep", dict(cfg=ToyConfig(), rhos=RHO_GRID, steps=RHO_STEPS, seeds=RHO_SEEDS),
         label="Training every ρ of the grid (3 seeds)…", seconds=40),
    View("sweep_default", ".rho:run_sweep", dict(cfg=ToyConfig(), param="steps", values=SWEEP_DEFAULT["steps"]),
         label="Sweeping training steps…", seconds=3),
    View("example_analysis", ".evaluations:analyse_counts", lambda: dict(df=_example(), base="toy-base"),
         label="Computing pass@k…", seconds=2),
)
HEADLINE = "toy_default"


def _example():
    from .uploads import load_example

    return load_example()


# --------------------------------------------------------------------------- claims (the ρ toy; issue #27)


def _rho_rows(views, steps: int = 400, rho: float = DEFAULT_RHO):
    s = views["rho_sweep"]["summary"]
    rows = s[(s["steps"] == steps) & ((s["rho"] - rho).abs() < 1e-9)]
    if rows.empty:
        raise KeyError(f"the ρ sweep has no row at ρ = {rho:g}, {steps} steps")
    return rows


def _rho_pass1(views) -> Evidence:
    rows = _rho_rows(views)
    g = rows["pass1_gain"].astype(float)
    ok = bool((g >= REGIME["min_pass1_gain"]).all())
    return Evidence(f"×{g.mean():.2f}", "reproduced" if ok else "not reproduced", seeds=len(g),
                    uncertainty=f"min–max over seeds ×{g.min():.2f}–×{g.max():.2f}",
                    note=f"ρ toy at ρ = {DEFAULT_RHO:g}, 400 steps, training problems.",
                    metrics={"pass1_gain": float(g.mean())})


def _rho_pass256(views) -> Evidence:
    rows = _rho_rows(views)
    d = rows["pass256_drop"].astype(float)
    ok = bool(((d >= REGIME["min_pass256_drop"]) & (d <= REGIME["max_pass256_drop"])).all())
    return Evidence(f"{-100 * d.mean():+.1f} pts", "reproduced" if ok else "not reproduced", seeds=len(d),
                    uncertainty=f"min–max over seeds {-100 * d.max():+.1f} to {-100 * d.min():+.1f} pts",
                    note=f"ρ toy at ρ = {DEFAULT_RHO:g}, 400 steps, training problems.",
                    metrics={"pass256_drop": float(d.mean())})


def _rho_crossover(views) -> Evidence:
    rows = _rho_rows(views)
    x = rows["crossover_k"].astype(float)
    ok = bool(x.notna().all())
    return Evidence(f"k = {x.median():.0f} (median)" if x.notna().any() else "none",
                    "reproduced" if ok else "not reproduced", seeds=len(x),
                    uncertainty=f"min–max over seeds {x.min():.0f}–{x.max():.0f}" if ok else "some seeds never cross",
                    metrics={"crossover_k": None if math.isnan(x.median()) else float(x.median())})


def _distill(views) -> Evidence:
    m = views["toy_default"]["metrics"]
    ok = bool(m["distill_above_base_all_k"])
    return Evidence("above base at every k" if ok else "not above base at every k",
                    "reproduced" if ok else "not reproduced", seeds=1,
                    note="ρ toy, one seed: the distilled policy against base, k = 1 … 1024.",
                    metrics={"distill_above_base_all_k": ok})


CLAIMS = claims(
    Claim("rho-pass1-gain", "headline", "RL with verifiable rewards raises pass@1 well above the base model's.",
          "Table 2", f"{PAPER['pass1_base_train'].value} → {PAPER['pass1_grpo_train'].value}% (×2.6)",
          f"every seed of the ρ grid at ρ = {DEFAULT_RHO:g}, 400 steps, has a pass@1 gain of at least "
          f"×{REGIME['min_pass1_gain']:g}", _rho_pass1, fitted=("rho",),
          registered="before this ledger (issue 16's REGIME; ρ was then chosen on these numbers)"),
    Claim("rho-pass256-loss", "headline", "RL lowers pass@256 slightly: base covers more problems at large k.",
          "Table 2", f"{PAPER['pass256_base_train'].value} → {PAPER['pass256_grpo_train'].value}% (−0.9 pts)",
          f"every seed of the ρ grid at ρ = {DEFAULT_RHO:g}, 400 steps, loses between "
          f"{100 * REGIME['min_pass256_drop']:g} and {100 * REGIME['max_pass256_drop']:g} points of pass@256",
          _rho_pass256, fitted=("rho",),
          registered="before this ledger (issue 16's REGIME; ρ was then chosen on these numbers)"),
    Claim("rho-crossover", "mechanism", "Base overtakes RL at large k.", "Fig. 2", str(PAPER["crossover"]),
          f"every seed of the ρ grid at ρ = {DEFAULT_RHO:g}, 400 steps, has a finite crossover k ≤ 1024",
          _rho_crossover, fitted=("rho",),
          registered="before this ledger (issue 16's REGIME; ρ was then chosen on these numbers)"),
    Claim("distill-above-base", "control", "A distilled model, unlike an RL one, is above base at every k.",
          "Fig. 7", str(PAPER["distill"]),
          "the distilled policy's estimated pass@k exceeds base's at every k = 1 … 1024 (ρ toy, one seed)",
          _distill, registered="before this ledger (issue 16)"),
)


def metrics(views) -> dict:
    """The shipped verdict metrics: the ρ toy's headline numbers at its default."""
    m = views["toy_default"]["metrics"]
    return {k: m[k] for k in ("rho", "steps", "pass1_base", "pass1_rl", "pass1_gain", "pass256_base", "pass256_rl",
                              "pass256_drop", "crossover_k", "tabular_crossover_k", "distill_above_base_all_k",
                              "rl_solved_subset_fraction")} | {"delta_se_256": m["delta_se"]}


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """The paper's headline on the ρ toy: its default run (about 1 s), then (full) the ρ grid at three seeds.
    ``device`` is accepted for the common interface; the toy is NumPy."""
    from toymodels.shipped import reproduce_record
    from toymodels.store import write_tables
    from toymodels.topic import as_progress

    from .rho import rho_sweep, run_toy

    p = as_progress(progress)
    cfg = ToyConfig(seed=seed)
    res = run_toy(cfg, progress=p.sub(0.0, 0.2, "toy: "))
    computed = {"toy_default": res}
    tables = {"rlvr_pass_at_k": res["curves"], "rlvr_checkpoints": res["checkpoints"],
              "rlvr_checkpoint_stats": res["checkpoint_stats"], "rlvr_problems": res["coverage"]}
    if not quick:
        sweep = rho_sweep(cfg, rhos=RHO_GRID, steps=RHO_STEPS, seeds=(seed, seed + 1, seed + 2),
                          progress=p.sub(0.2, 1.0, "rho sweep: "))
        computed["rho_sweep"] = sweep
        tables |= {"rlvr_rho_sweep": sweep["summary"], "rlvr_rho_table": sweep["table"]}
    if out is not None:
        write_tables(out, tables)
    return reproduce_record(sys.modules[__name__], computed, quick, seed)


__getattr__, __dir__ = lazy_exports(__name__, {
    **{name: ".passk" for name in ("pass_at_k", "pass_at_k_curve", "pass_at_k_exact", "pass_at_k_loop", "crossover_k",
                                   "k_grid", "SE_K")},
    **{name: ".uploads" for name in ("read_evaluations", "load_example", "TEMPLATE_COUNTS", "TEMPLATE_SAMPLES",
                                     "EXAMPLE_CSV", "DATA_DIR", "MAX_ROWS", "MAX_N")},
    "analyse_counts": ".evaluations",
    **{name: ".policy" for name in ("make_problems", "base_logits", "softmax", "success_prob", "advantages",
                                    "teacher_logits", "sample_completions")},
    **{name: ".training" for name in ("train_rl", "distill")},
    **{name: ".measure" for name in ("rl_label",)},
    **{name: ".rho" for name in ("run_toy", "run_sweep", "rho_sweep", "choose_rho", "in_regime", "example_counts",
                                 "write_example")},
})

__all__ = ["TOPIC", "PAPER", "VIEWS", "HEADLINE", "CLAIMS", "metrics", "reproduce", "InputError", "ToyConfig",
           "ALGORITHMS", "CONFIG_BOUNDS", "DEFAULT_RHO", "LIMITS", "MAX_SWEEP", "REGIME", "RHO_GRID", "RHO_MEASURED",
           "RHO_RULE", "RHO_SEEDS", "RHO_STEPS", "SWEEP_CHOICES", "SWEEP_DEFAULT", "SWEEPABLE", "WORK_LIMIT",
           "expected_seconds", "validate", "work"]
