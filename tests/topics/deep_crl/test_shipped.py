"""The shipped views: fresh, one of them recomputed bit for bit, and the verdict's keys (issue 29)."""
import toymodels.deep_crl as M
from toymodels import shipped, store


def test_the_maze_view_recomputes_bit_for_bit():
    fn, kwargs = shipped.view_call(M, "maze_u")
    store.verify_shipped(M.TOPIC, "maze_u", fn, rtol=0, **kwargs)


def test_every_declared_view_is_shipped_and_fresh():
    assert shipped.stale_views(M) == {}, "run python -m toymodels precompute deep-crl"


def test_the_shipped_verdict_has_the_issue_keys():
    v, fresh = shipped.shipped_verdict(M)
    assert fresh and v.reproduced in (True, False, None)
    m = v.metrics
    assert m["online_depths"] == [4, 8, 16] and m["online_seeds"] == [20, 20, 20]
    assert len(m["online_success"]) == len(m["online_solved"]) == 3 and len(m["online_diff_ci"]) == 2
    assert m["online_test"].startswith("Fisher") and 0 <= m["online_p_value"] <= 1
    assert len(m["critic_depths"]) == 3 and {c.id for c in v.claims} >= {"depth-online", "offline-depth"}
