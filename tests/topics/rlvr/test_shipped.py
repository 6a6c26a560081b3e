"""RLVR: the shipped views are what today's code computes (bit for bit on the CPU), the default ρ is what its
rule picks from the shipped measurements, and the ledger of claims reads them."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests.exact import verify_shipped
from toymodels import claims as C
from toymodels import rlvr as M
from toymodels import shipped, store


def test_shipped_views_are_fresh_and_one_recomputes_bit_for_bit():
    assert not shipped.stale_views(M), shipped.stale_views(M)
    verify_shipped("rlvr", "example_analysis", M.analyse_counts, M.load_example(), "toy-base", rtol=0)
    verify_shipped("rlvr", "toy_default", M.run_toy, M.ToyConfig(), rtol=0)
    verify_shipped("rlvr", "typed_default", M.typed_run, M.TypedConfig(), M.TYPED_LENGTHS, rtol=0)


def test_the_shipped_seeds_are_what_one_seed_computes_today():
    """The 20-seed view, checked on its first seed (recomputing all 20 is the precompute's job)."""
    view = store.load_shipped("rlvr", "typed_seeds")
    first = view["seeds"][0]
    one = M.typed_seed(dataclasses.replace(M.TypedConfig(), seed=first), M.TYPED_LENGTHS)
    got = view["summary"][view["summary"]["seed"] == first].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, one["summary"], check_exact=True)


def test_default_rho_is_what_the_rule_picks_from_the_shipped_measurements():
    table = store.load_shipped("rlvr", "rho_sweep")["table"]
    assert M.choose_rho(table, M.ToyConfig().steps) == M.DEFAULT_RHO == M.ToyConfig().rho
    t = table[table.steps == 400].set_index("rho")
    for rho, gain, drop, cross, ok in M.RHO_MEASURED:       # the package's copy of the measured table
        row = t.loc[rho]
        assert row.pass1_gain == pytest.approx(gain, abs=6e-4) and row.pass256_drop == pytest.approx(drop, abs=6e-4)
        assert (cross is None and np.isnan(row.crossover_k_median)) or row.crossover_k_median == cross
        assert bool(row.all_seeds_in_regime) is ok
    # the regime flag is the claims' definition, applied per seed
    summ = store.load_shipped("rlvr", "rho_sweep")["summary"]
    flags = [M.in_regime(r.pass1_gain, r.pass256_drop, None if np.isnan(r.crossover_k) else r.crossover_k)
             for r in summ.itertuples()]
    assert flags == summ["in_regime"].astype(bool).tolist()


def test_the_rho_contrast_is_illustrated_because_rho_was_fitted():
    j = next(j for j in shipped.verdict_of(M).claims if j.id == "rho-contrast")
    assert j.status == C.ILLUSTRATED and j.fitted == ("rho",) and j.seeds == 3 and j.uncertainty


def test_the_rho_contrast_fails_when_one_seed_leaves_the_regime():
    """The test reads every seed: one seed out of the regime fails it."""
    rho = store.load_shipped("rlvr", "rho_sweep")
    summary = rho["summary"].copy()
    at = (summary.steps == 400) & np.isclose(summary.rho, M.DEFAULT_RHO)
    summary.loc[summary.index[at][0], "in_regime"] = False
    claim = next(c for c in M.CLAIMS if c.id == "rho-contrast")
    assert claim.decide({"rho_sweep": dict(rho, summary=summary)}).status == C.NOT_REPRODUCED


def test_reproduce_quick_prints_the_issues_metrics(tmp_path):
    res = M.reproduce(quick=True, seed=0, out=tmp_path)
    assert res["topic"] == "rlvr" and res["quick"] is True and res["seed"] == 0 and res["seeds"] == 3
    assert {c["id"] for c in res["claims"]} == {c.id for c in M.CLAIMS}
    for key in ("pass1_gain_train", "pass1_gain_heldout", "pass256_drop_train", "pass256_drop_heldout",
                "drop_by_steps", "crossover_k"):
        assert key in res, key
    assert [d["steps"] for d in res["drop_by_steps"]] == list(M.TYPED_LENGTHS)
    for name in ("rlvr_typed_summary", "rlvr_typed_table", "rlvr_typed_pass_at_k"):
        assert (tmp_path / f"{name}.csv").exists()
    summ = pd.read_csv(tmp_path / "rlvr_typed_summary.csv")
    head = summ[(summ.split == "train") & (summ.steps == M.HEADLINE_LENGTH)]
    assert res["pass256_drop_train"] == pytest.approx((head.pass256_base - head.pass256_rl).mean())
