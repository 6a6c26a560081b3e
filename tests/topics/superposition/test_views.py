"""Superposition toy: the shipped views (fresh, one recomputed bit for bit) and the judgement of the sweeps."""
import pandas as pd
import pytest

import toymodels.superposition as M
from toymodels import shipped, store
from toymodels.superposition import sweeps as S


def _synthetic(strong=1.0, weak=0.5, profiles=(1.0, 1.0, 0.9), converged=True):
    """A scaling result with exact power laws, to test the verdict by hand."""
    rows = []
    specs = [("strong", "power", strong, 34.0), ("weak", "power", weak, 5.4)] + [
        (f"strong · {p}", p, a, 400.0) for p, a in zip(M.PROFILES, profiles)]
    for name, prof, a, ne in specs:
        for m in (10, 20, 40, 80):
            rows.append(dict(regime=name, profile=prof, gamma=-1.0 if name.startswith("strong") else 0.1, alpha=1.0,
                             tau=float("nan"), n_eff=ne, seed=0, m=m, loss=2.0 * m ** -a, drift=0.01,
                             converged=converged, steps_run=12000, phi_half=1.0, phi_one=0.5,
                             overlap=1.0 / m, overlap_rep=1.0 / m, inv_m=1.0 / m, welch=0.9 / m, weak_pred=0.1,
                             ms_per_step=1.0))
    df = pd.DataFrame(rows)
    return {"table": df, "fits": S.fits(df), "fits_m20": S.fits(df, min_m=20)}


def test_verdict_bands_by_hand():
    v = M.verdict(_synthetic())
    assert v.reproduced is True and v.metrics["alpha_strong"] == pytest.approx(1.0)
    assert v.metrics["alpha_weak"] == pytest.approx(0.5) and v.metrics["converged"] is True
    assert M.verdict(_synthetic(strong=0.85)).reproduced is False           # outside [0.9, 1.1]
    assert M.verdict(_synthetic(weak=0.8)).reproduced is False              # weak off α − 1 by 0.3
    assert M.verdict(_synthetic(profiles=(1.0, 1.5, 0.9))).reproduced is False  # one profile breaks
    steep = _synthetic()
    steep["fits"] = steep["fits"].copy()
    steep["fits"].loc[steep["fits"]["regime"] == "strong", "overlap_slope"] = -1.5  # the mechanism's slope is off
    partly = M.verdict(steep)
    assert partly.reproduced is None and "mechanism is not" in partly.summary
    un = M.verdict(_synthetic(converged=False))
    assert un.reproduced is None and "lower bound" in un.summary and un.ours.startswith("α_m ≥")
    h = M.headline(_synthetic())
    assert {p["profile"] for p in h["profiles"]} == set(M.PROFILES) and h["alpha_weak_pred"] == 0.5



# --------------------------------------------------------------------------- shipped store, CLI contract


def test_shipped_geometry_view_is_current():
    """Recomputed on the CPU, the shipped geometry view is the same bit for bit (the move kept its definitions)."""
    fn, kwargs = shipped.view_call(M, "geometry")
    store.verify_shipped(M.TOPIC, "geometry", fn, rtol=0, **kwargs)


def test_every_view_is_shipped_and_fresh():
    assert shipped.stale_views(M) == {}


def test_shipped_headline_meets_the_issue_acceptance():
    """Issue 15: strong α_m in [0.9, 1.1] from converged runs, weak near α − 1, strong ≈ 1 for every profile."""
    res = store.load_shipped(M.TOPIC, M.HEADLINE)
    h = M.headline(res)
    assert h["converged"] and h["final_loss_drift"] < M.CONV_TOL
    assert all(p["n_eff"] >= 4 * p["max_width"] for p in h["profiles"])
    assert M.STRONG_BAND[0] <= h["alpha_strong"] <= M.STRONG_BAND[1], h["alpha_strong"]
    assert all(M.PROFILE_BAND[0] <= p["alpha_strong"] <= M.PROFILE_BAND[1] for p in h["profiles"])
    v = M.verdict(res)
    assert v.reproduced is not False, v.summary  # the claim's exponents; the overlap slope may make it "partly"


def test_shipped_neff_sweep_breaks_when_n_eff_nears_m():
    f = store.load_shipped(M.TOPIC, "neff_sweep")["fits"].sort_values("ratio")
    assert f["alpha_m"].iloc[0] > f["alpha_m"].iloc[-1] + 0.2             # N_eff ≈ m/2 … m: far steeper than 1/m


@pytest.mark.slow
def test_quick_reproduction_converges_and_prints_the_keys():
    h = M.reproduce(quick=True)
    assert h["converged"] and h["final_loss_drift"] < M.CONV_TOL
    for key in ("alpha_strong", "alpha_weak", "alpha_weak_pred", "converged", "final_loss_drift", "profiles"):
        assert key in h
    assert {p["profile"] for p in h["profiles"]} == set(M.PROFILES)


