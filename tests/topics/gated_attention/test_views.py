"""Gated attention: the shipped views, their freshness, the search table and the reproduction."""
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

import toymodels.gated_attention as M
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
    """The shipped massive-activation models are the search table's row for MACT_NAME (same numbers), and the
    row's bands agree with the verdict's."""
    result = store.load_shipped(M.TOPIC, M.HEADLINE)
    mm = M.mact_metrics(result["mact"])
    row = next(r for r in M.MACT_SEARCH if r["config"] == M.MACT_NAME)
    assert M.search_config(M.MACT_NAME) == M.MACT_CFG
    for ours, key in (("bos_ratio_baseline", "bos_ratio_baseline"), ("bos_ratio_g1", "bos_ratio_g1"),
                      ("mact_ratio_baseline", "ratio_baseline"), ("mact_ratio_g1", "ratio_g1")):
        assert mm[ours] == pytest.approx(row[key], abs=0.051), key
    table = M.search_table().set_index("config")
    assert bool(table.loc[M.MACT_NAME, "meets_bands"]) == bool(mm["massive_found"])


def test_verdict_needs_every_seed_replicate(monkeypatch):
    """A massive activation that meets the bands in the shipped run but not in a seed replicate of the same
    configuration (a row of the search table) is 'partly', not 'reproduced'."""
    result = store.load_shipped(M.TOPIC, M.HEADLINE)
    summ = result["mact"]["summary"].copy()
    summ.loc[summ.variant == "baseline", ["bos_ratio", "mact_ratio"]] = 300.0
    summ.loc[summ.variant == "g1_elementwise", ["bos_ratio", "mact_ratio"]] = 10.0
    forced = {**result, "mact": {**result["mact"], "summary": summ}}
    if not M.verdict(forced).metrics["sink_reproduced"]:
        pytest.skip("the shipped sink is not reproduced, so the massive part does not decide")
    rep = next(n for n in M.SEARCH_CONFIGS if n != M.MACT_NAME
               and replace(M.search_config(n), seed=0) == replace(M.MACT_CFG, seed=0))
    row = dict(what="", where_baseline="<s> (layer 2, pos 0)", where_g1="<s> (layer 2, pos 0)",
               ratio_baseline=300.0, ratio_g1=10.0, bos_ratio_baseline=300.0, bos_ratio_g1=10.0)
    good = {**row, "config": rep, "seed": 1}
    bad = {**good, "ratio_g1": 200.0, "bos_ratio_g1": 200.0}
    monkeypatch.setattr(N, "MACT_SEARCH", [{**row, "config": M.MACT_NAME, "seed": 0}, good])
    v = M.verdict(forced)
    assert v.reproduced is True and v.metrics["mact_seeds_meeting"] == v.metrics["mact_seeds_run"] == 2
    monkeypatch.setattr(N, "MACT_SEARCH", [{**row, "config": M.MACT_NAME, "seed": 0}, bad])
    v = M.verdict(forced)
    assert v.reproduced is None and (v.metrics["mact_seeds_meeting"], v.metrics["mact_seeds_run"]) == (1, 2)
    assert "300× → 200×" in v.summary


def test_views_are_declared_and_shipped_fresh():
    from toymodels.topic import stale_views
    assert M.HEADLINE in M.VIEWS
    assert set(M.VIEWS) >= {"compare_all", "layer_demo", "gate_midway"}
    assert stale_views(M) == {}, "run: python -m toymodels precompute gated-attention"


def test_shipped_layer_demo_is_recomputed_bit_for_bit():
    """The cheap view, recomputed on the CPU, equals the shipped bundle exactly (the package move changed no
    number: same definitions, same results)."""
    store.verify_shipped(M.TOPIC, "layer_demo", M.layer_demo, M.DEFAULT, rtol=0)
    shipped = store.load_shipped(M.TOPIC, "layer_demo")
    again = store.normalise(M.layer_demo(M.DEFAULT))
    for col in ("gate_mean_init", "loss_init", "params_added"):
        assert np.array_equal(shipped[col].to_numpy(dtype=float), again[col].to_numpy(dtype=float), equal_nan=True)


def test_verdict_of_the_shipped_headline_has_the_issue_keys():
    result = store.load_shipped(M.TOPIC, M.HEADLINE)
    v = M.verdict(result)
    for k in ["mact_ratio_baseline", "mact_ratio_g1", "mact_token_baseline", "first_token_max_baseline",
              "first_token_max_g1", "bayes_ce", "n_heads", "val_loss_baseline", "fattn_baseline", "fattn_g1"]:
        assert k in v.metrics, k
    assert v.metrics["n_heads"] >= 4
    # the first token's ratio, recomputed from the per-layer table (largest |h| at <s> over the layer's median)
    lay = result["mact"]["layers"]
    for variant, key in (("baseline", "bos_ratio_baseline"), ("g1_elementwise", "bos_ratio_g1")):
        lv = lay[lay.variant == variant]
        assert v.metrics[key] == pytest.approx(float((lv.first_token_max / lv.mact_median).max()), rel=1e-6)
    assert v.metrics["massive_found"] == M.meets_bands(
        v.metrics["mact_ratio_baseline"], v.metrics["mact_where_baseline"].split(",")[0], v.metrics["mact_ratio_g1"],
        v.metrics["bos_ratio_baseline"], v.metrics["bos_ratio_g1"])
    # the verdict follows its bands: recompute the sink decision by hand
    s = result["sink"]["summary"].set_index("variant")
    cut = s.loc["baseline", "fattn"] / s.loc["g1_elementwise", "fattn"]
    assert v.metrics["sink_reproduced"] == bool(cut >= 2 and s.loc["baseline", "fattn"] >= 2 * result["sink"]["floor"])
    assert (v.reproduced is False) == (not v.metrics["sink_reproduced"])
    assert v.metrics["bayes_ce"] == pytest.approx(
        M.make_data(M.MACT_CFG).bayes_ce(M.make_data(M.MACT_CFG).sample(
            M.MACT_CFG.eval_batch, M.MACT_CFG.seq_len + 1, np.random.default_rng([M.MACT_CFG.data_seed, 99]))))


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
