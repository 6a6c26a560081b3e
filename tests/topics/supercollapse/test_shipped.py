"""The shipped views: one recomputed bit for bit on the CPU, every claim decided by them, and the page's numbers
read from the same views the ledger reads."""
import toymodels.supercollapse as M
from toymodels import shipped, store


def test_the_check_view_recomputes_bit_for_bit():
    store.verify_shipped(M.TOPIC, "check", M.exact_check, cfg=M.CheckConfig(), rtol=0)


def test_the_schedule_view_recomputes_bit_for_bit():
    store.verify_shipped(M.TOPIC, "schedules", M.schedule_model, cfg=M.CurveConfig(mults=(1.0,)), rtol=0)


def test_every_view_is_shipped_fresh_and_every_claim_is_decided():
    assert not shipped.stale_views(M), shipped.stale_views(M)
    verdict, fresh = shipped.shipped_verdict(M)
    assert fresh
    assert all(j.status != "not testable here" for j in verdict.claims), [(j.id, j.note) for j in verdict.claims]
    assert shipped.verdict_index_problem(M) is None
