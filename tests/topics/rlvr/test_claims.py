"""RLVR's ledger: each claim's test on hand-made seed tables just inside and just outside its thresholds (so a test
that cannot fail would show here), the metrics the issue names, and the ledger's rules on the shipped views."""
import numpy as np
import pandas as pd
import pytest

from toymodels import claims as C
from toymodels import rlvr as M
from toymodels import shipped

STEPS = (50, 150, 300, 450)


def _view(n=20, gain=3.0, transfer=0.95, drops=(0.005, 0.02, 0.03, 0.04), cross=60.0, crossed=None, above=None,
          noise=0.002, seed=0):
    """A typed_seeds result with n seeds: gains, drops (per length) and crossovers as asked, plus small noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n):
        for split in ("train", "held-out"):
            for L, d in zip(STEPS, drops):
                g = gain * (transfer if split == "held-out" else 1.0) + rng.normal(0, 0.05)
                x = cross if (crossed is None or s < crossed) else np.nan
                rows.append({"seed": s, "split": split, "steps": L, "pass1_base": 0.06, "pass1_rl": 0.06 * g,
                             "pass1_gain": g, "pass256_base": 0.8, "pass256_rl": 0.8 - d, "pass256_drop":
                             d + rng.normal(0, noise), "crossover_k": x, "p_atypical_base": 0.05,
                             "p_atypical_rl": 0.01, "p_typical_base": 0.06, "p_typical_rl": 0.3})
    summary = pd.DataFrame(rows)
    above = [True] * n if above is None else above
    distill = pd.DataFrame([{"seed": s, "split": sp, "above_base_all_k": above[s]} for s in range(n)
                            for sp in ("train", "held-out")])
    return {"typed_seeds": {"summary": summary, "distill": distill, "seeds": list(range(n)),
                            "table": M.seed_table(summary)}}


def _decide(cid, views):
    return next(c for c in M.CLAIMS if c.id == cid).decide(views)


def test_the_pass1_gain_claim_reads_its_interval():
    assert _decide("pass1-gain", _view(gain=2.6)).status == C.REPRODUCED
    assert _decide("pass1-gain", _view(gain=1.9)).status == C.NOT_REPRODUCED
    ev = _decide("pass1-gain", _view(n=2))
    assert ev.status == C.NOT_TESTABLE and ev.rule == "precondition" and "at least 3" in ev.reason


def test_the_pass256_claim_wants_a_slight_loss():
    assert _decide("pass256-loss", _view()).status == C.REPRODUCED
    assert _decide("pass256-loss", _view(drops=(0, 0.0, 0, 0), noise=0.01)).status == C.NOT_REPRODUCED  # no loss
    assert _decide("pass256-loss", _view(drops=(0, 0.15, 0.2, 0.2))).status == C.NOT_REPRODUCED        # a collapse
    assert _decide("pass256-loss", _view(drops=(0, -0.02, 0, 0))).status == C.NOT_REPRODUCED           # a gain


def test_the_transfer_claim_is_illustrated_by_construction():
    """Issue 41: the typed toy has no per-problem parameters, so the ratio is 1 by construction: the claim reads
    illustrated whatever the numbers, which it still shows."""
    for t in (0.93, 0.5):
        ev = _decide("transfer", _view(transfer=t))
        assert (ev.status, ev.rule) == (C.ILLUSTRATED, "illustration") and "by construction" in ev.reason
    assert float(_decide("transfer", _view(transfer=0.5)).ours) == pytest.approx(0.5, abs=0.02)


def test_the_loss_must_grow_with_training():
    assert _decide("loss-grows", _view(drops=(0.0, 0.01, 0.02, 0.03))).status == C.REPRODUCED
    assert _decide("loss-grows", _view(drops=(0.0, 0.02, 0.03, 0.025))).status == C.NOT_REPRODUCED  # not monotone
    assert _decide("loss-grows", _view(drops=(0.0, 0.02, 0.021, 0.0205), noise=0.01)).status == C.NOT_REPRODUCED


def test_the_crossover_claim_counts_seeds_and_reads_the_median():
    # the share rule (issue 41): 95% Clopper-Pearson of k/20 excludes 1/2 upwards, or 0.9 downwards
    assert _decide("crossover", _view(crossed=18)).status == C.REPRODUCED
    assert _decide("crossover", _view(crossed=17)).status == C.REPRODUCED      # [0.62, 0.97]: most seeds cross
    assert _decide("crossover", _view(crossed=10)).status == C.NOT_REPRODUCED  # [0.27, 0.73]
    assert _decide("crossover", _view(cross=5.0)).status == C.NOT_REPRODUCED
    ev = _decide("crossover", _view(crossed=5))
    assert ev.status == C.NOT_REPRODUCED and "none" in ev.ours


def test_distillation_is_illustrated_by_construction():
    """Issue 41: the teacher is handed the novel strategies, so the distilled policy cannot fall below base."""
    for above in ([True] * 20, [True] * 19 + [False]):
        ev = _decide("distill-above-base", _view(above=above))
        assert (ev.status, ev.rule) == (C.ILLUSTRATED, "illustration") and "teacher" in ev.reason


def test_metrics_are_the_issues_names_in_probability_units():
    v = _view()
    m = M.metrics(v)
    for key in ("pass1_gain_train", "pass1_gain_heldout", "pass256_drop_train", "pass256_drop_heldout",
                "drop_by_steps", "crossover_k"):
        assert key in m, key
    assert m["pass256_drop_train"] == pytest.approx(0.02, abs=0.002)
    assert [d["steps"] for d in m["drop_by_steps"]] == list(STEPS)
    assert all(set(d) == {"steps", "drop", "lo", "hi"} for d in m["drop_by_steps"])
    assert m["crossover_k"] == 60.0 and m["pass1_gain_heldout"] == pytest.approx(0.95 * 3.0, abs=0.05)
    C.flat_metrics(m)                                              # JSON lists, never comma-joined strings


def test_the_ledger_on_the_shipped_views():
    verdict = shipped.verdict_of(M)
    by_id = {j.id: j for j in verdict.claims}
    assert set(by_id) == {"pass1-gain", "pass256-loss", "transfer", "loss-grows", "crossover", "distill-above-base",
                          "rho-contrast"}
    assert by_id["rho-contrast"].status == C.ILLUSTRATED and by_id["rho-contrast"].fitted == ("rho",)
    assert verdict.reproduced == C.topic_reproduced(verdict.claims)
