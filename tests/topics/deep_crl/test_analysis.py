"""The tests the claims run, against brute force and published values, and each claim's rule on hand-made runs."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import toymodels.deep_crl as M
from toymodels import claims as C
from toymodels.deep_crl import analysis as A


def test_fisher_one_sided_is_the_hypergeometric_tail():
    """p = P(X >= a's solved) for X the solved seeds of arm a when the margins are fixed (brute-force sum)."""
    for ka, na, kb, nb in [(13, 20, 3, 20), (2, 3, 0, 3), (3, 3, 0, 3), (5, 20, 5, 20), (0, 20, 7, 20)]:
        k, n = ka + kb, na + nb
        tail = sum(math.comb(k, x) * math.comb(n - k, na - x) for x in range(ka, min(k, na) + 1)) / math.comb(n, na)
        assert A.fisher_greater(ka, na, kb, nb) == pytest.approx(tail, rel=1e-12)
    assert A.fisher_greater(3, 3, 0, 3) == pytest.approx(0.05)           # 3 seeds: the best p there is


@pytest.mark.parametrize("counts,want", [                               # Newcombe (1998), Table II, method 10
    ((56, 70, 48, 80), (0.0524, 0.3339)), ((9, 10, 3, 10), (0.1705, 0.8090)), ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)), ((0, 10, 0, 20), (-0.1611, 0.2775)), ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0)), ((10, 10, 0, 10), (0.6075, 1.0))])
def test_newcombe_interval_matches_the_published_table(counts, want):
    lo, hi = A.newcombe(*counts)
    assert (round(lo, 4), round(hi, 4)) == want


def test_newcombe_interval_covers_about_95_percent_at_20_seeds():
    rng = np.random.default_rng(0)
    for p1, p2 in [(0.15, 0.6), (0.1, 0.1), (0.5, 0.3)]:
        x1, x2 = rng.binomial(20, p1, 4000), rng.binomial(20, p2, 4000)
        cover = np.mean([lo <= p1 - p2 <= hi for lo, hi in (A.newcombe(a, 20, b, 20) for a, b in zip(x1, x2))])
        assert 0.93 < cover < 0.99, (p1, p2, cover)


def test_paired_interval_is_students():
    d = np.array([0.02, 0.071, 0.046, 0.058, -0.01, 0.03])
    m, lo, hi = A.paired_interval(d, 0.9)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.9)
    assert m == pytest.approx(d.mean()) and (lo, hi) == pytest.approx((ci.low, ci.high))


# --------------------------------------------------------------------------- the claims on hand-made runs


def _online(depth, solved, n=20, corridor=0.0, seed0=100):
    rng = np.random.default_rng(depth)
    success = np.r_[rng.uniform(0.6, 1.0, solved), rng.uniform(0.0, 0.4, n - solved)]
    per_seed = pd.DataFrame({"depth": depth, "seed": np.arange(seed0, seed0 + n), "success": success,
                             "time_at_goal": 180 * success, "critic_accuracy": 0.3, "critic_accuracy_fresh": 0.3,
                             "spearman_euclid": 0.7, "spearman_corridor": 0.7 + corridor + rng.normal(0, 0.02, n)})
    return {"per_seed": per_seed, "curves": pd.DataFrame(), "chance_accuracy": 1 / 256}


def _critic(depth_gain, param_gain, seeds=8):
    rng = np.random.default_rng(1)
    base = rng.normal(0.64, 0.02, seeds)
    rows = []
    for k in range(seeds):
        noise = rng.normal(0, 0.005, 3)
        for d, w, rho in ((4, 64, base[k]), (64, 64, base[k] + depth_gain + noise[0]),
                          (4, 254, base[k] + depth_gain - param_gain + noise[1])):
            rows.append({"depth": d, "width": w, "seed": 100 + k, "spearman_geodesic": rho, "params": w * 10,
                         "spearman_occupancy": 0.1, "retrieval": 0.4})
    return {"per_seed": pd.DataFrame(rows), "depths": [4, 64], "config": {"width": 64, "maze": "rings19"},
            "wide": {"width": 254, "params": 2540, "spearman": 0.7}, "euclid_scored_spearman": 0.2,
            "random_retrieval": 0.07}


def _judge(claim_id, views):
    claim = next(c for c in M.CLAIMS if c.id == claim_id)
    return C.judge(claim, views)


@pytest.mark.parametrize("solved,status", [((2, 14), C.REPRODUCED), ((10, 4), C.NOT_REPRODUCED),
                                           ((3, 6), C.NOT_TESTABLE)])
def test_the_online_depth_claim_follows_its_registered_rule(solved, status):
    views = {"online_d4": _online(4, solved[0]), "online_d8": _online(8, solved[1])}
    j = _judge("depth-online", views)
    assert j.status == status and j.seeds == 40 and "Fisher" in j.uncertainty
    p = stats.fisher_exact([[solved[1], 20 - solved[1]], [solved[0], 20 - solved[0]]], alternative="greater").pvalue
    assert j.metrics["p_value"] == pytest.approx(p)


@pytest.mark.parametrize("c4,c16,status", [(-0.05, 0.1, C.REPRODUCED), (-0.05, -0.1, C.NOT_REPRODUCED),
                                           (-0.05, 0.0, C.NOT_TESTABLE)])
def test_the_value_map_claim_follows_its_registered_rule(c4, c16, status):
    views = {"online_d4": _online(4, 5, corridor=c4), "online_d16": _online(16, 5, corridor=c16)}
    assert _judge("qmap-corridor", views).status == status


@pytest.mark.parametrize("depth_gain,param_gain,offline,stitching", [
    (0.05, 0.0, C.REPRODUCED, C.ILLUSTRATED),            # depth's gain is the parameters': §4.6 holds
    (0.08, 0.06, C.NOT_REPRODUCED, C.ILLUSTRATED),       # depth beats a wide net: depth helps offline
    (0.0, 0.0, C.REPRODUCED, C.NOT_REPRODUCED)])         # no gain at all
def test_the_offline_claims_follow_their_registered_rules(depth_gain, param_gain, offline, stitching):
    views = {"critic": _critic(depth_gain, param_gain)}
    assert _judge("offline-depth", views).status == offline
    s = _judge("stitching-depth", views)
    assert s.status == stitching                          # fitted: a passing test reads "illustrated"


def test_a_claim_whose_runs_are_missing_is_not_testable():
    j = _judge("depth-online", {"online_d4": _online(4, 3)})
    assert j.status == C.NOT_TESTABLE and j.note


def test_metrics_are_json_lists_and_survive_a_missing_depth():
    views = {"online_d4": _online(4, 2), "online_d8": _online(8, 14), "critic": _critic(0.05, 0.0)}
    m = M.metrics(views)
    assert m["online_depths"] == [4, 8] and m["online_seeds"] == [20, 20] and m["online_solved"] == [2, 14]
    assert isinstance(m["online_diff_ci"], list) and len(m["online_diff_ci"]) == 2
    assert m["online_test"].startswith("Fisher") and 0 < m["online_p_value"] < 0.05
    assert C.flat_metrics(m)                               # every value is JSON the ledger accepts
    assert "online_p_value" not in M.metrics({"online_d4": _online(4, 2)})
