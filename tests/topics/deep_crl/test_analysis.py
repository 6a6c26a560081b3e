"""The tests the claims run, against brute force and published values, and each claim's rule on hand-made runs."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import toymodels.deep_crl as M
from toymodels import claims as C
from toymodels.deep_crl import analysis as A


def test_fisher_one_sided_equals_scipys_fisher_exact():
    """Our exact hypergeometric tail against scipy.stats.fisher_exact (one-sided, "greater") on every table of
    20 + 20 seeds and of a few unequal arms, both directions."""
    for na, nb in [(20, 20), (3, 3), (20, 7), (1, 12)]:
        for ka in range(na + 1):
            for kb in range(nb + 1):
                want = stats.fisher_exact([[ka, na - ka], [kb, nb - kb]], alternative="greater").pvalue
                assert A.fisher_greater(ka, na, kb, nb) == pytest.approx(want, rel=1e-12, abs=1e-300)
    assert A.fisher_greater(3, 3, 0, 3) == pytest.approx(0.05)           # 3 seeds: the best p there is, 1 / C(6, 3)


def test_quantiles_are_scipy_stats_bit_for_bit():
    """wilson / paired / Welch intervals use scipy.special's ndtri and stdtrit (no scipy.stats import on a page)."""
    assert A.wilson(7, 20, 0.95) == pytest.approx(stats.binomtest(7, 20).proportion_ci(0.95, "wilson"), rel=1e-12)
    a, b = np.array([0.3, 0.5, 0.1, 0.42, 0.2]), np.array([0.1, 0.05, 0.2, 0.0, 0.12, 0.07, 0.3])
    d, lo, hi = A.welch_interval(a, b, 0.9)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.9)
    assert (lo, hi) == pytest.approx((ci.low, ci.high), rel=1e-12)


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


def _critic(depth_gain, param_gain, seeds=8, step1=None):
    """Offline critics at depths 4, 16, 64 and a wide depth-4 one; depth 16 sits ``step1`` above depth 4 (half the
    gain by default)."""
    rng = np.random.default_rng(1)
    base = rng.normal(0.64, 0.02, seeds)
    step1 = depth_gain / 2 if step1 is None else step1
    rows = []
    for k in range(seeds):
        noise = rng.normal(0, 0.005, 3)
        for d, w, rho in ((4, 64, base[k]), (16, 64, base[k] + step1 + noise[2]),
                          (64, 64, base[k] + depth_gain + noise[0]),
                          (4, 254, base[k] + depth_gain - param_gain + noise[1])):
            rows.append({"depth": d, "width": w, "seed": 108 + k, "spearman_geodesic": rho, "params": w * 10,
                         "spearman_occupancy": 0.1, "retrieval": 0.4})
    return {"per_seed": pd.DataFrame(rows), "depths": [4, 16, 64], "config": {"width": 64, "maze": "rings19"},
            "wide": {"width": 254, "params": 2540, "spearman": 0.7}, "euclid_scored_spearman": 0.2,
            "random_retrieval": 0.07}


def _judge(claim_id, views):
    claim = next(c for c in M.CLAIMS if c.id == claim_id)
    return C.judge(claim, views)


def _online60(solved4, solved8):
    return {"online60_d4": _online(4, solved4, n=60, seed0=200), "online60_d8": _online(8, solved8, n=60, seed0=200)}


@pytest.mark.parametrize("solved,status", [((12, 30), C.REPRODUCED), ((12, 18), C.NOT_REPRODUCED),
                                           ((30, 38), C.NOT_TESTABLE)])
def test_the_online_depth_claim_follows_its_registered_rule(solved, status):
    j = _judge("depth-online", _online60(*solved))
    assert j.status == status and j.seeds == 120 and j.rule == "superiority" and "Fisher" in j.uncertainty
    p = stats.fisher_exact([[solved[1], 60 - solved[1]], [solved[0], 60 - solved[0]]], alternative="greater").pvalue
    assert j.metrics["p_value"] == pytest.approx(p)
    lo, hi = A.newcombe(solved[1], 60, solved[0], 60, 0.90)
    assert j.metrics["diff_ci"] == pytest.approx([lo, hi])
    # the rule by hand: excludes 0 upwards -> reproduced; excludes +0.25 -> not reproduced
    assert (lo > 0) == (status == C.REPRODUCED) and (hi < 0.25 and lo <= 0) == (status == C.NOT_REPRODUCED)


def test_the_first_online_test_is_reported_beside_the_registered_run():
    views = {**_online60(12, 30), "online_d4": _online(4, 4), "online_d8": _online(8, 7)}
    assert "seeds 100-119" in _judge("depth-online", views).note


@pytest.mark.parametrize("c4,c16,status", [(-0.15, 0.3, C.REPRODUCED), (-0.15, -0.1, C.NOT_REPRODUCED),
                                           (-0.15, 0.05, C.NOT_TESTABLE)])
def test_the_value_map_claim_follows_its_registered_rule(c4, c16, status):
    def spread(r, sd, seed):
        r = dict(r)
        ps = r["per_seed"].copy()
        ps["spearman_corridor"] += np.random.default_rng(seed).normal(0, sd, len(ps))
        r["per_seed"] = ps
        return r

    views = {"online60_d4": spread(_online(4, 5, n=60, corridor=c4), 0.2, 1),
             "qmap_d16": spread(_online(16, 5, corridor=c16), 0.25, 2)}
    j = _judge("qmap-corridor", views)
    assert j.status == status, j.reason
    lo, hi = j.metrics["mean_deep_ci"]
    assert lo <= j.metrics["mean_deep"] <= hi


@pytest.mark.parametrize("depth_gain,param_gain,offline,stitching", [
    (0.0, 0.0, C.REPRODUCED, C.NOT_REPRODUCED),          # no gain of depth at the same width: §4.6 holds
    (0.08, 0.06, C.NOT_REPRODUCED, C.ILLUSTRATED),       # depth helps at the same width (stitching: fitted)
    (0.03, 0.0, C.NOT_TESTABLE, C.ILLUSTRATED)])         # a gain at the margin: offline undecided
def test_the_offline_claims_follow_their_registered_rules(depth_gain, param_gain, offline, stitching):
    views = {"critic_fresh": _critic(depth_gain, param_gain)}
    j = _judge("offline-depth", views)
    assert j.status == offline and j.rule == "equivalence", j.reason
    s = _judge("stitching-depth", views)
    assert s.status == stitching, s.reason                # fitted: a passing test reads "illustrated"
    assert s.metrics["step1"] != j.metrics["depth_gain"]  # stitching reads its own contrasts, not the offline one


def test_the_width_parity_is_its_own_finding():
    assert M.width_parity({}) is None
    same = M.width_parity({"critic_fresh": _critic(0.06, 0.0)})
    assert same.status == C.REPRODUCED and same.rule == "equivalence"
    assert M.width_parity({"critic_fresh": _critic(0.09, 0.08)}).status == C.NOT_REPRODUCED


def _arm(solved, ab, n=20):
    r = _online(8, solved, n=n, seed0=400)
    return r


@pytest.mark.parametrize("full,abl,status,rule", [
    (12, (2, 1, 3), C.REPRODUCED, "superiority"), (12, (2, 12, 3), C.NOT_REPRODUCED, "superiority"),
    (12, (2, 7, 3), C.NOT_TESTABLE, "superiority"), (3, (0, 0, 0), C.NOT_TESTABLE, "precondition")])
def test_the_ablations_claim_follows_its_registered_rule(full, abl, status, rule):
    views = {"ablation20_none": _arm(full, "none"),
             **{f"ablation20_{ab}": _arm(k, ab) for ab, k in zip(M.ABLATIONS[1:], abl)}}
    j = _judge("ablations", views)
    assert (j.status, j.rule) == (status, rule), j.reason


def test_a_claim_whose_runs_are_missing_is_pending():
    j = _judge("depth-online", {"online60_d4": _online(4, 3, n=60)})
    assert j.status == C.NOT_TESTABLE and j.rule == "pending" and "online60_d8" in j.reason


def test_metrics_are_json_lists_and_survive_a_missing_depth():
    views = {"online_d4": _online(4, 2), "online_d8": _online(8, 14), "critic": _critic(0.05, 0.0)}
    m = M.metrics(views)
    assert m["online_depths"] == [4, 8] and m["online_seeds"] == [20, 20] and m["online_solved"] == [2, 14]
    assert isinstance(m["online_diff_ci"], list) and len(m["online_diff_ci"]) == 2
    assert m["online_test"].startswith("Fisher") and 0 < m["online_p_value"] < 0.05
    assert C.flat_metrics(m)                               # every value is JSON the ledger accepts
    assert "online_p_value" not in M.metrics({"online_d4": _online(4, 2)})
