"""Gated attention: the shipped views, their freshness, the search table and the reproduction."""
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

import toymodels.gated_attention as M
from tests.exact import verify_shipped
from tests.topics.gated_attention.test_model import TINY
from toymodels import store
from toymodels.gated_attention import notebook as N


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_search_table_bands():
    rows = [dict(config="x", what="", ratio_baseline=150.0, where_baseline="<s> (layer 2, pos 0)", ratio_g1=20.0,
                 first_max_baseline=1, first_max_g1=1, fattn_baseline=0, fattn_g1=0, val_loss_baseline=0,
                 val_loss_g1=0, bayes_ce=0, wall_seconds=0)]
    rows.append({**rows[0], "config": "y", "ratio_g1": 40.0})                        # cut only 3.75x
    rows.append({**rows[0], "config": "z", "where_baseline": "other (layer 2, pos 7)"})  # not on <s>
    rows.append({**rows[0], "config": "w", "ratio_baseline": 90.0, "ratio_g1": 1.0})  # not massive
    # the first token's own ratio: massive on <s> and cut 7.5x, though a larger ratio sits elsewhere
    rows.append({**rows[2], "config": "v", "bos_ratio_baseline": 150.0, "bos_ratio_g1": 20.0})
    rows.append({**rows[2], "config": "u", "bos_ratio_baseline": 150.0, "bos_ratio_g1": 40.0})   # cut 3.75x
    rows.append({**rows[2], "config": "t", "bos_ratio_baseline": 90.0, "bos_ratio_g1": 1.0})     # not massive
    rows.append({"config": "s", "what": "", "note": "not run"})                                 # not run
    old = N.MACT_SEARCH
    try:
        N.MACT_SEARCH = rows
        assert M.search_table().meets_bands.tolist() == [True, False, False, False, True, False, False, False]
    finally:
        N.MACT_SEARCH = old


def test_shipped_massive_view_is_its_search_row():
    """The shipped massive-activation models are the search table's configuration MACT_NAME, and they meet the
    search's bands as its row does (the verdict's ``massive_found`` and the row's ``meets_bands`` agree).

    Numbers are not compared: the search row was measured on the CPU that ran the search, and the shipped view was
    recomputed on another (issue 39, validation out of the training code). Training is sensitive to the float path:
    the recomputed baseline's <s> ratio is 337x against the row's 220x, G1's 28.6x against 15.6x (both far from the
    bands' 100x and 5x cut). The bands are what the claim reads, and they must agree."""
    result = store.load_shipped(M.TOPIC, M.HEADLINE)
    mm = M.mact_metrics(result["mact"])
    assert M.search_config(M.MACT_NAME) == M.MACT_CFG
    table = M.search_table().set_index("config")
    assert bool(table.loc[M.MACT_NAME, "meets_bands"]) and bool(mm["massive_found"])
    assert N.meets_bands(mm["mact_ratio_baseline"], "<s>", mm["mact_ratio_g1"],
                         mm["bos_ratio_baseline"], mm["bos_ratio_g1"])


def test_views_are_declared_and_shipped_fresh():
    from toymodels.shipped import stale_views
    assert M.HEADLINE in M.VIEWS
    assert set(M.VIEWS) >= {"compare_all", "layer_demo", "gate_midway"}
    assert stale_views(M) == {}, "run: python -m toymodels precompute gated-attention"


def test_shipped_layer_demo_is_recomputed_bit_for_bit():
    """The cheap view, recomputed on the CPU, equals the shipped bundle exactly (the package move changed no
    number: same definitions, same results)."""
    verify_shipped(M.TOPIC, "layer_demo", M.layer_demo, M.DEFAULT, rtol=0)
    shipped = store.load_shipped(M.TOPIC, "layer_demo")
    again = store.normalise(M.layer_demo(M.DEFAULT))
    for col in ("gate_mean_init", "loss_init", "params_added"):
        assert np.array_equal(shipped[col].to_numpy(dtype=float), again[col].to_numpy(dtype=float), equal_nan=True)


def test_the_shipped_metrics_have_the_issue_keys():
    """Issue 30's verdict metrics, from the shipped views (lists per layer for the real model)."""
    from toymodels.shipped import verdict_of

    m = verdict_of(M).metrics
    keys = ["fattn_excess_g1", "fattn_headshared", "fattn_g2", "real_uniform"]
    hsd = ["hsd_fattn_baseline", "hsd_fattn_headshared", "hsd_fattn_headspecific", "hsd_floor"]
    mact = ["mact_seeds", "mact_seeds_meeting"]
    keys += (hsd if not M.VIEWS["hsd_seeds"].pending else []) + (mact if not M.VIEWS["mact_seeds"].pending else [])
    for k in keys:
        assert isinstance(m[k], (int, float)) and math.isfinite(m[k]), k
    for k in (hsd if M.VIEWS["hsd_seeds"].pending else []) + (mact if M.VIEWS["mact_seeds"].pending else []):
        assert k not in m, k                       # a run not yet run has no number, never a placeholder
    assert len(m["real_first_token_attention"]) == len(m["real_max_over_median"]) == 6
    if not M.VIEWS["mact_seeds"].pending:
        assert m["mact_seeds"] >= 5 and 0 <= m["mact_seeds_meeting"] <= m["mact_seeds"]
    if not M.VIEWS["hsd_seeds"].pending:
        assert m["hsd_floor"] == pytest.approx(M._uniform_floor(M.hsd_config(M.HSD_NAME).seq_len))
    # the excess over the floor: (F_G1 - floor) / (F_baseline - floor), mean over the seeds with a sink
    t = M.removal_table(verdict_of_views()["sink_seeds"])
    g = t[(t.variant == "g1_elementwise") & t.sink]
    assert m["fattn_excess_g1"] == pytest.approx(((g.fattn - g.floor) / (g.fattn_baseline - g.floor)).mean())


def verdict_of_views():
    from toymodels.shipped import ViewSet
    return ViewSet(M)


def test_pending_views_are_registered_runs_the_claims_name():
    """A pending view is a declared run (``View(pending=why)``); the claims that read it are "not testable here"
    with the reason, and the CLI check (stale_views) does not count it."""
    from toymodels.shipped import stale_views, verdict_of

    pending = {n: v.pending for n, v in M.VIEWS.items() if v.pending}
    assert {"hsd_seeds"} <= set(pending)  # the second pilot picked no configuration (notebook.HSD_RULE2)
    assert not set(stale_views(M)) & set(pending)
    ledger = {j.id: j for j in verdict_of(M).claims}
    for name in pending:
        ids = {"mact_seeds": ["massive-removed"], "ii_seeds": ["input-independent-keeps-bb"]}.get(
            name, [c.id for c in M.CLAIMS if c.id.endswith("-hsd")] if name == "hsd_seeds" else [])
        for i in ids:
            assert ledger[i].status == "not testable here" and ledger[i].reason == pending[name], i


def test_the_search_seed_table_judges_seen_seeds_by_the_claims_criterion():
    """Config T's three search seeds, by hand from MACT_SEARCH: 220.2/15.6 = 14.1 (meets), 208.9/114.1 = 1.8,
    12.8 (not massive)."""
    t = M.search_seed_table()
    assert t.seed.tolist() == [0, 1, 2] and t.meets.tolist() == [True, False, False]
    assert t.cut.iloc[0] == pytest.approx(220.2 / 15.6)


def test_the_first_token_ratio_is_the_largest_first_token_value_over_the_median():
    result = store.load_shipped(M.TOPIC, M.HEADLINE)
    mm = M.mact_metrics(result["mact"])
    lay = result["mact"]["layers"]
    for variant, key in (("baseline", "bos_ratio_baseline"), ("g1_elementwise", "bos_ratio_g1")):
        lv = lay[lay.variant == variant]
        assert mm[key] == pytest.approx(float((lv.first_token_max / lv.mact_median).max()), rel=1e-6)


def test_a_seed_sweep_trains_every_variant_and_seed():
    r = M.seed_sweep(replace(TINY, steps=50, eval_every=25), ["baseline", "g1_headshared"], [3, 4])
    assert sorted(zip(r["summary"].variant, r["summary"].seed)) == [("baseline", 3), ("baseline", 4),
                                                                    ("g1_headshared", 3), ("g1_headshared", 4)]
    assert len(r["layers"]) == 4 * TINY.n_layers and set(r["first"]["maps"]) == {"baseline", "g1_headshared"}
    one = M.compare(replace(TINY, steps=50, eval_every=25, seed=4), ["g1_headshared"])
    got = r["summary"].set_index(["variant", "seed"]).loc[("g1_headshared", 4)]
    assert got.fattn == one["summary"].fattn.iloc[0] and got.val_loss == one["summary"].val_loss.iloc[0]
    t = M.removal_table(r)
    assert list(t.variant) == ["g1_headshared", "g1_headshared"]
    with pytest.raises(M.InputError, match="budget of a seed sweep"):
        M.seed_sweep(replace(M.MACT_CFG, steps=3000), list(M.VARIANTS), [0, 1, 2, 3, 4, 5, 6, 7])


def test_reproduce_quick_keys_and_csv(monkeypatch, tmp_path):
    monkeypatch.setattr(M, "SINK_CFG", TINY)
    m = M.reproduce(quick=True, out=tmp_path)
    for k in ["fattn_baseline", "fattn_g1_elementwise", "fattn_g1_headwise", "fattn_floor", "gate_mean_g1_elementwise",
              "val_loss_baseline", "val_loss_g1_elementwise", "mact_ratio_baseline", "mact_ratio_g1",
              "first_token_max_baseline", "first_token_max_g1", "bayes_ce"]:
        assert isinstance(m[k], float) and math.isfinite(m[k]), k
    assert m["n_heads"] == TINY.n_heads and isinstance(m["mact_token_baseline"], int)
    assert m["fattn_floor"] == pytest.approx(M._uniform_floor(TINY.seq_len))
    assert (tmp_path / "gated_attention_layers.csv").read_text().count("\n") == 1 + 3 * TINY.n_layers


@pytest.mark.slow
def test_quick_reproduction_shows_the_sink_and_the_gate():
    """What the default toy shows (measured): a clear baseline sink, a sparse gate, a lower sink with G1,
    far fewer sink heads (Gu et al.), a loss within a few hundredths of the realised Bayes CE."""
    m = M.reproduce(quick=True)
    assert m["fattn_baseline"] >= 2 * m["fattn_floor"]
    assert m["fattn_g1_elementwise"] < m["fattn_baseline"] and m["fattn_g1_headwise"] < m["fattn_baseline"]
    assert m["sink_cut_g1"] >= 2
    assert m["sink_rate_g1"] <= m["sink_rate_baseline"] / 3
    assert m["gate_mean_g1_elementwise"] < 0.4
    assert m["val_loss_g1_elementwise"] <= m["val_loss_baseline"] + 0.02
    assert m["val_loss_baseline"] >= m["bayes_ce"] - 0.01


def test_compare_accepts_a_torch_device():
    r = M.compare(replace(TINY, steps=100), ["baseline"], device=torch.device("cpu"))
    assert list(r["summary"].variant) == ["baseline"]
