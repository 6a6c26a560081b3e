"""The shared decision rules (``toymodels.claims``): the mapping from intervals to statuses on hand-made
intervals, and the ledger-wide checks that every topic's statuses come from them (issue 41)."""
from __future__ import annotations

import ast
import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from toymodels import claims as C
from toymodels.errors import ClaimError
from toymodels.registry import TOPICS

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- superiority


@pytest.mark.parametrize("est, iv, status", [
    (0.30, (0.10, 0.50), C.REPRODUCED),        # excludes 0 in the paper's direction
    (0.05, (0.01, 0.09), C.REPRODUCED),        # excludes 0 and the paper's 0.25: a smaller, real effect
    (0.02, (-0.10, 0.14), C.NOT_REPRODUCED),   # excludes the paper's effect 0.25
    (-0.30, (-0.50, -0.10), C.NOT_REPRODUCED),  # the opposite direction
    (0.15, (-0.12, 0.40), C.NOT_TESTABLE),     # contains both 0 and 0.25 (deep-crl depth-online, 20 seeds)
])
def test_superiority_maps_hand_made_intervals(est, iv, status):
    assert C.superiority(est, iv, effect=0.25, n=20).status == status


def test_superiority_mirrors_for_a_negative_effect():
    # the paper's effect is a fall (pass@256 loss: -0.9 points)
    assert C.superiority(-1.0, (-1.5, -0.5), effect=-0.9).status == C.REPRODUCED
    assert C.superiority(1.7, (0.4, 3.0), effect=-0.9).status == C.NOT_REPRODUCED
    assert C.superiority(-0.3, (-1.2, 0.6), effect=-0.9).status == C.NOT_TESTABLE
    # mirroring is exact: the same numbers, signs flipped, give the same status
    for est, iv in [(0.3, (0.1, 0.5)), (0.02, (-0.1, 0.14)), (0.15, (-0.12, 0.4))]:
        up = C.superiority(est, iv, effect=0.25)
        down = C.superiority(-est, (-iv[1], -iv[0]), effect=-0.25)
        assert up.status == down.status


def test_superiority_with_a_nonzero_null():
    # share of seeds: null 0.5, the paper's 0.9
    assert C.superiority(1.0, (0.83, 1.0), effect=0.9, null=0.5).status == C.REPRODUCED
    assert C.superiority(0.5, (0.27, 0.73), effect=0.9, null=0.5).status == C.NOT_REPRODUCED
    assert C.superiority(0.7, (0.46, 0.88), effect=0.9, null=0.5).status == C.NOT_REPRODUCED  # 0.88 < 0.9
    assert C.superiority(0.7, (0.35, 0.93), effect=0.9, null=0.5).status == C.NOT_TESTABLE


def test_superiority_names_the_seeds_it_would_need():
    # deep-crl depth-online: 40 seeds, +0.15 [-0.12, +0.40]; half-width 0.26; nearest boundary: 0.15 from 0
    d = C.superiority(0.15, (-0.12, 0.40), effect=0.25, n=40)
    assert d.status == C.NOT_TESTABLE and d.rule == "superiority"
    assert d.seeds_needed == math.ceil(40 * (0.26 / 0.15) ** 2)
    assert str(d.seeds_needed) in d.reason
    assert C.superiority(0.15, (-0.12, 0.40), effect=0.25).seeds_needed is None   # n unknown


def test_superiority_refuses_a_zero_effect_and_a_nan_interval_is_undecided():
    with pytest.raises(ClaimError):
        C.superiority(0.1, (0.0, 0.2), effect=0.0)
    assert C.superiority(float("nan"), (float("nan"), float("nan")), effect=1).status == C.NOT_TESTABLE


def test_share_is_superiority_on_a_clopper_pearson_interval():
    from scipy.stats import binomtest

    for k, n in [(0, 5), (3, 10), (19, 20), (20, 20)]:
        lo, hi = C.clopper_pearson(k, n)
        ref = binomtest(k, n).proportion_ci(0.95, method="exact")
        assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert C.share(20, 20, effect=0.9).status == C.REPRODUCED       # [0.83, 1]
    assert C.share(10, 20, effect=0.9).status == C.NOT_REPRODUCED   # [0.27, 0.73]
    assert C.share(14, 20, effect=0.9).status == C.NOT_REPRODUCED   # [0.46, 0.88]
    assert C.share(7, 10, effect=0.9).status == C.NOT_TESTABLE      # [0.35, 0.93]


# --------------------------------------------------------------------------- equivalence (TOST)


@pytest.mark.parametrize("est, iv, status", [
    (0.010, (0.002, 0.018), C.REPRODUCED),      # diffusion cfm-equals-efm: precise and negligible
    (0.00, (-0.05, 0.05), C.REPRODUCED),
    (0.20, (0.15, 0.25), C.NOT_REPRODUCED),     # wholly above the margin
    (-0.20, (-0.25, -0.15), C.NOT_REPRODUCED),  # wholly below
    (0.05, (-0.08, 0.18), C.NOT_TESTABLE),      # straddles +0.1
])
def test_equivalence_maps_hand_made_intervals(est, iv, status):
    assert C.equivalence(est, iv, margin=0.10, n=12).status == status


def test_equivalence_around_a_target_and_one_sided():
    # a slope that should be 1 within 0.4
    assert C.equivalence(0.93, (0.89, 0.98), margin=0.4, target=1.0).status == C.REPRODUCED
    assert C.equivalence(0.44, (0.41, 0.46), margin=0.4, target=1.0).status == C.NOT_REPRODUCED
    # "no gain": at most +0.03 (deep-crl offline-depth); a loss of any size does not count against it
    assert C.equivalence(-0.5, (-0.9, -0.1), margin=0.03, sides="upper").status == C.REPRODUCED
    assert C.equivalence(0.058, (0.034, 0.082), margin=0.03, sides="upper").status == C.NOT_REPRODUCED
    assert C.equivalence(0.009, (-0.008, 0.026), margin=0.03, sides="upper").status == C.REPRODUCED
    assert C.equivalence(0.02, (-0.01, 0.05), margin=0.03, sides="upper").status == C.NOT_TESTABLE
    assert C.equivalence(0.5, (0.1, 0.9), margin=0.03, sides="lower").status == C.REPRODUCED


def test_equivalence_seeds_needed_shrink_the_half_width_below_the_distance_to_the_band():
    d = C.equivalence(0.05, (-0.08, 0.18), margin=0.10, n=12)
    assert d.seeds_needed == math.ceil(12 * (0.13 / 0.05) ** 2)
    # a simulated check: with that many seeds (same sd), a t-interval around 0.05 lies inside ±0.1
    from scipy.stats import t

    sd = 0.13 / t.ppf(0.95, 11) * math.sqrt(12)
    n = d.seeds_needed
    half = t.ppf(0.95, n - 1) * sd / math.sqrt(n)
    assert 0.05 + half <= 0.10 + 1e-3


def test_equivalence_refuses_a_bad_margin():
    with pytest.raises(ClaimError):
        C.equivalence(0, (-1, 1), margin=0)
    with pytest.raises(ClaimError):
        C.equivalence(0, (-1, 1), margin=1, sides="left")


# --------------------------------------------------------------------------- the other rules


def test_point_is_a_registered_criterion_on_the_estimate_and_says_so():
    assert C.point(True, "the slope in [0.8, 1.2]").status == C.REPRODUCED
    d = C.point(False, "the slope in [0.8, 1.2]")
    assert (d.status, d.rule) == (C.NOT_REPRODUCED, "point") and "no interval" in d.reason


def test_exact_precondition_pending_illustration():
    assert C.exact(True, "M_std = d on all 473 classes").status == C.REPRODUCED
    assert C.exact(False, "x").status == C.NOT_REPRODUCED
    assert C.exact(np.bool_(True), "x").rule == "exact"
    assert C.precondition(True, "a baseline seed reaches 100x") is None
    d = C.precondition(False, "no baseline seed reaches 100x")
    assert d.status == C.NOT_TESTABLE and d.rule == "precondition" and d.label == "not testable here: precondition"
    assert C.exact(True, "x").label == "reproduced: exact check"
    assert C.pending("not yet run").status == C.NOT_TESTABLE
    assert C.illustration("true by construction").status == C.ILLUSTRATED


def test_all_of_combines_parts():
    yes, no = C.exact(True, "a"), C.exact(False, "b")
    open_ = C.superiority(0.15, (-0.12, 0.40), effect=0.25, n=40)
    assert C.all_of(yes, yes).status == C.REPRODUCED
    assert C.all_of(yes, no, open_).status == C.NOT_REPRODUCED
    both = C.all_of(yes, open_)
    assert both.status == C.NOT_TESTABLE and both.rule == "superiority" and both.seeds_needed == open_.seeds_needed
    assert "a holds" in both.reason
    pre = C.precondition(False, "no sink")
    assert C.all_of(pre, yes).label == "not testable here: precondition"
    with pytest.raises(ClaimError):
        C.all_of()


def test_an_interval_must_contain_its_own_estimate():
    # supercollapse's old row: 0.11 (95% CI [0.12, 0.14])
    with pytest.raises(ClaimError, match="outside its own interval"):
        C.superiority(0.11, (0.12, 0.14), effect=1.0)
    with pytest.raises(ClaimError, match="outside its own interval"):
        C.equivalence(0.32, (0.34, 0.69), margin=1.0)
    with pytest.raises(ClaimError, match="reversed"):
        C.equivalence(0.5, (0.6, 0.4), margin=1.0)


def test_evidence_takes_a_decision_and_the_ledger_keeps_its_rule():
    d = C.superiority(0.3, (0.1, 0.5), effect=0.25)
    ev = C.Evidence("0.3", d, seeds=10, uncertainty="95% t [0.1, 0.5]")
    assert ev.status == C.REPRODUCED and ev.rule == "superiority" and ev.reason == d.reason
    claim = C.Claim("x", "headline", "s", "Fig. 1", "p", "t", lambda views: ev)
    j = C.judge(claim, {})
    assert (j.status, j.rule, j.reason) == (C.REPRODUCED, "superiority", d.reason)
    assert j.as_dict()["rule"] == "superiority"
    fitted = C.Claim("x", "headline", "s", "Fig. 1", "p", "t", lambda views: ev, fitted=("lr",))
    assert C.judge(fitted, {}).status == C.ILLUSTRATED and C.judge(fitted, {}).rule == "superiority"
    missing = C.Claim("x", "headline", "s", "Fig. 1", "p", "t", lambda views: views["nope"])
    assert C.judge(missing, {}).rule == "missing"


# --------------------------------------------------------------------------- every topic uses the rules

STATUS_NAMES = {"REPRODUCED", "NOT_REPRODUCED", "NOT_TESTABLE", "ILLUSTRATED"}
#: Topics whose claims still map statuses by hand: each must leave this set as it is converted (the test fails
#: when a listed topic no longer needs to be here, and when an unlisted one maps by hand). Issue 41.
NOT_YET_CONVERTED: set[str] = set()


def _package_dir(topic: str) -> Path:
    return ROOT / "toymodels" / topic.replace("-", "_")


def _statuses_in(node) -> list[str]:
    """Status strings ``node`` evaluates to: a constant, or a branch of a conditional (``a if c else b``, ``a or
    b``); a comparison with a status (reading it) does not count."""
    if isinstance(node, ast.Constant):
        return [node.value] if node.value in C.STATUSES else []
    if isinstance(node, ast.IfExp):
        return _statuses_in(node.body) + _statuses_in(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [v for x in node.values for v in _statuses_in(x)]
    return []


def hand_mapping(topic: str) -> list[str]:
    """Where a topic's package maps to a status by hand: a status string given to ``Evidence`` or returned, assigned
    or put in a dict's values (a status chosen by an if/else), a status constant imported from (or read off)
    ``toymodels.claims``, or a ``Decision`` built directly instead of by a rule. Reading a status (a dict keyed by
    status, a comparison) is not mapping."""
    found = []
    for path in sorted(_package_dir(topic).rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Evidence":
                status = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "status"), None)
                if status is not None and _statuses_in(status):
                    found.append(f"{where}:{node.lineno} Evidence given the status {_statuses_in(status)} by hand")
            elif isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign)) and node.value is not None and \
                    _statuses_in(node.value) and not isinstance(node.value, ast.Dict):
                found.append(f"{where}:{node.lineno} the status {_statuses_in(node.value)} chosen by hand")
            elif isinstance(node, ast.Dict) and any(v is not None and _statuses_in(v) for v in node.values):
                found.append(f"{where}:{node.lineno} a dict whose values are statuses")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("claims"):
                for a in node.names:
                    if a.name in STATUS_NAMES or a.name == "Decision":
                        found.append(f"{where}:{node.lineno} imports {a.name}")
            elif isinstance(node, ast.Attribute) and (node.attr in STATUS_NAMES or node.attr == "Decision"):
                found.append(f"{where}:{node.lineno} reads {node.attr}")
    return found


def test_no_topic_maps_intervals_to_statuses_by_hand():
    by_hand = {t for t in TOPICS if _package_dir(t).is_dir() and hand_mapping(t)}
    assert not (by_hand - NOT_YET_CONVERTED), {t: hand_mapping(t) for t in by_hand - NOT_YET_CONVERTED}
    assert not (NOT_YET_CONVERTED - by_hand), f"converted: remove {NOT_YET_CONVERTED - by_hand} from the list"


def test_the_static_check_finds_a_hand_mapping(tmp_path, monkeypatch):
    fake = tmp_path / "toymodels" / "fake_topic"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "from toymodels.claims import Evidence, REPRODUCED\n"
        "def f(lo):\n    return Evidence('x', 'reproduced' if lo > 0 else 'x')\n"
        "def _status(ok):\n    return 'reproduced' if ok else 'not reproduced'\n"
        "def g(ok):\n    s = 'illustrated'\n    return s\n"
        "WHY = {('a', 'reproduced'): 'prose'}\n"            # reading a status: allowed
        "def h(j):\n    return j.status == 'not reproduced'\n")
    import sys

    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = hand_mapping("fake-topic")
    assert any("imports REPRODUCED" in f for f in found)
    assert any(":3 Evidence given" in f for f in found)
    assert any(":5 the status" in f for f in found) and any(":7 the status" in f for f in found)
    assert not any(":9 " in f or ":11 " in f for f in found), found


@pytest.mark.parametrize("topic", sorted(set(TOPICS) - NOT_YET_CONVERTED))
def test_every_judged_claim_names_its_rule(topic):
    from toymodels.shipped import verdict_of

    module = importlib.import_module(f"toymodels.{topic.replace('-', '_')}")
    for j in verdict_of(module).claims:
        assert j.rule in C.RULES and j.reason, (topic, j.id, j.rule)


def _pairs(metrics: dict):
    """(name, estimate, (lo, hi)) for every metric ``x`` shown with an interval ``x_ci`` (or ``x_lo``/``x_hi``)."""
    for key, value in metrics.items():
        if key.endswith("_ci") and key[:-3] in metrics and isinstance(value, list) and len(value) == 2:
            yield key[:-3], metrics[key[:-3]], value
        if key.endswith("_lo") and key[:-3] + "_hi" in metrics and key[:-3] in metrics:
            yield key[:-3], metrics[key[:-3]], [value, metrics[key[:-3] + "_hi"]]


def test_every_interval_shown_contains_its_point_estimate():
    """Across all topics: every claim's metrics and every topic's verdict metrics that pair an estimate with its
    interval (``x`` with ``x_ci`` or ``x_lo``/``x_hi``) have the estimate inside the interval."""
    from toymodels.shipped import verdict_of

    bad = []
    for topic in TOPICS:
        if not _package_dir(topic).is_dir():
            continue
        verdict = verdict_of(importlib.import_module(f"toymodels.{topic.replace('-', '_')}"))
        sources = [("verdict", dict(verdict.metrics))] + [(j.id, dict(j.metrics)) for j in verdict.claims]
        for where, metrics in sources:
            for name, est, (lo, hi) in _pairs(metrics):
                if not all(isinstance(v, (int, float)) for v in (est, lo, hi)):
                    continue
                if any(map(math.isnan, (est, lo, hi))):
                    continue
                if not lo - 1e-9 <= est <= hi + 1e-9:
                    bad.append(f"{topic} {where}: {name} = {est} outside [{lo}, {hi}]")
    assert not bad, bad


def test_the_verdict_index_names_each_claims_rule():
    index = json.loads((ROOT / "toymodels" / "results" / "verdicts.json").read_text())
    for topic, record in index.items():
        if topic in NOT_YET_CONVERTED:
            continue
        for c in record.get("claims", []):
            assert c.get("rule") in C.RULES, (topic, c["id"])
