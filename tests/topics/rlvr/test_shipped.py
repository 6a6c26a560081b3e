"""RLVR: the shipped views are what today's code computes (bit for bit on the CPU), the default ρ is what its
rule picks from the shipped measurements, and the ledger of claims reads them."""
import numpy as np
import pytest

from toymodels import claims as C
from toymodels import rlvr as M
from toymodels import shipped, store


def test_shipped_views_are_fresh_and_one_recomputes_bit_for_bit():
    assert not shipped.stale_views(M), shipped.stale_views(M)
    store.verify_shipped("rlvr", "example_analysis", M.analyse_counts, M.load_example(), "toy-base", rtol=0)
    store.verify_shipped("rlvr", "toy_default", M.run_toy, M.ToyConfig(), rtol=0)


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


def test_the_rho_claims_are_illustrated_because_rho_was_fitted():
    verdict = shipped.verdict_of(M)
    by_id = {j.id: j for j in verdict.claims}
    for cid in ("rho-pass1-gain", "rho-pass256-loss", "rho-crossover"):
        assert by_id[cid].status == C.ILLUSTRATED and "rho" in by_id[cid].fitted, by_id[cid]
        assert by_id[cid].seeds == 3 and by_id[cid].uncertainty


def test_a_rho_claim_fails_when_one_seed_leaves_the_regime():
    """The test reads every seed: one seed's pass@256 drop moved outside [0, 8] points fails the claim."""
    rho = store.load_shipped("rlvr", "rho_sweep")
    summary = rho["summary"].copy()
    at = (summary.steps == 400) & np.isclose(summary.rho, M.DEFAULT_RHO)
    summary.loc[summary.index[at][0], "pass256_drop"] = 0.2
    claim = next(c for c in M.CLAIMS if c.id == "rho-pass256-loss")
    assert claim.decide({"rho_sweep": dict(rho, summary=summary)}).status == C.NOT_REPRODUCED


def test_reproduce_quick_prints_the_record(tmp_path):
    res = M.reproduce(quick=True, seed=0, out=tmp_path)
    assert res["topic"] == "rlvr" and res["quick"] is True and res["seed"] == 0
    assert {c["id"] for c in res["claims"]} == {c.id for c in M.CLAIMS}
    assert res["rho"] == M.DEFAULT_RHO
    assert res["delta_se_256"] == pytest.approx(res["pass256_base"] - res["pass1_rl"])
    assert (tmp_path / "rlvr_pass_at_k.csv").exists()
