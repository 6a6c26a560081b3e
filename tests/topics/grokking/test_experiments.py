"""The bounded runs: their bookkeeping against a from-scratch loop on the dense definitions, their controls,
seeding, bounds and budget, and the shipped cheap view recomputed bit for bit."""
import dataclasses

import numpy as np
import pytest

import toymodels.grokking as G
from tests.exact import assert_same, verify_shipped
from toymodels import store
from toymodels.errors import InputError
from toymodels.grokking import rfm
from toymodels.grokking.config import Config, SeedsConfig, expected_seconds
from toymodels.grokking.experiments import run, run_seeds

SMALL = Config(p=7, iters=4, train_frac=0.6, seed=3)


def _from_scratch(cfg):
    """RFM written out with the dense gradient tensor (``predictor_gradients``) and scipy's sqrtm, no chunks."""
    import scipy.linalg

    s = rfm.split(cfg.p, cfg.op, cfg.train_frac, cfg.seed)
    X, Y = rfm.one_hot_inputs(s["train_pairs"], cfg.p), rfm.one_hot_targets(s["train_labels"], cfg.p)
    Xt, Yt = rfm.one_hot_inputs(s["test_pairs"], cfg.p), rfm.one_hot_targets(s["test_labels"], cfg.p)
    M = np.eye(2 * cfg.p)
    out = {"test_acc": [], "test_mse": [], "circulant_deviation": []}
    for _ in range(cfg.iters):
        A = np.linalg.solve(rfm.gaussian_kernel(X, X, M, cfg.bandwidth), Y)
        pred = rfm.gaussian_kernel(Xt, X, M, cfg.bandwidth) @ A
        out["test_acc"].append(np.mean(pred.argmax(1) == Yt.argmax(1)))
        out["test_mse"].append(np.mean((pred - Yt) ** 2))
        Gr = rfm.predictor_gradients(X, X, A, M, cfg.bandwidth)
        Gr = Gr - Gr.mean(0)
        M = np.real(scipy.linalg.sqrtm(np.einsum("icd,ice->de", Gr, Gr) / len(X)))
        p = cfg.p
        B = M[:p, p:]
        k = np.arange(p)
        circ = np.array([[B[k, (k + (jj - ii)) % p].mean() for jj in range(p)] for ii in range(p)])
        out["circulant_deviation"].append(np.linalg.norm(B - circ) / np.linalg.norm(B - B.mean()))
    return out


def test_run_matches_a_from_scratch_loop():
    res = run(SMALL)
    want = _from_scratch(SMALL)
    assert res["iteration"] == list(range(SMALL.iters)) and res["M"].shape == (SMALL.iters, 14, 14)
    for key in want:
        assert np.allclose(res[key], want[key], rtol=1e-6, atol=1e-9), key
    assert all(a == 1.0 for a in res["train_acc"])


def test_same_seed_same_numbers_and_another_seed_differs():
    a, b = run(SMALL), run(SMALL)
    assert_same(store.normalise(a), store.normalise(b), rtol=0, atol=0)
    c = run(dataclasses.replace(SMALL, seed=4))
    assert c["test_mse"] != a["test_mse"]


def test_controls_are_one_fixed_metric():
    rfm_run = run(SMALL)
    ident = run(dataclasses.replace(SMALL, control="identity"))
    circ = run(dataclasses.replace(SMALL, control="random_circulant"))
    assert len(ident["test_acc"]) == 1 and len(circ["test_acc"]) == 1
    # M = I is RFM's iteration 0, and the control the run reports on the same split.
    assert ident["test_acc"][0] == rfm_run["test_acc"][0] == rfm_run["identity_test_acc"]
    assert np.array_equal(ident["M"][0], np.eye(14, dtype=np.float32))
    assert circ["test_acc"][0] == rfm_run["random_circulant_test_acc"]
    assert np.allclose(circ["M"][0], rfm.random_circulant_metric(7, "x+y", 3).astype(np.float32))


@pytest.mark.parametrize("field,value", [("p", 4), ("p", 67), ("train_frac", 0.95), ("op", "x*y"), ("iters", 0),
                                         ("iters", 2.5), ("bandwidth", 0.0), ("power", 2.0), ("control", "none")])
def test_out_of_bounds_is_refused(field, value):
    with pytest.raises(InputError):
        run(dataclasses.replace(SMALL, **{field: value}))


def test_the_budget_refuses_a_long_run_and_names_its_cost():
    big = Config(p=61, train_frac=0.9, iters=60)
    assert expected_seconds(big) > 90
    with pytest.raises(InputError, match="about .* s"):
        run(big)
    with pytest.raises(InputError):
        run_seeds(SeedsConfig(run=Config(p=61, train_frac=0.9, iters=60), n_seeds=20))
    with pytest.raises(InputError):
        run_seeds(SeedsConfig(run=dataclasses.replace(SMALL, control="identity"), n_seeds=2))


def test_cost_model_grows_with_the_problem():
    costs = [expected_seconds(Config(p=p)) for p in (11, 31, 61)]
    assert costs == sorted(costs) and costs[-1] < 90
    assert expected_seconds(Config(p=31, control="identity")) < expected_seconds(Config(p=31))


def test_run_seeds_rows_are_the_single_runs():
    study = run_seeds(SeedsConfig(run=SMALL, n_seeds=2, first_seed=5))
    assert study["seeds"] == [5, 6] and study["test_acc"].shape == (2, SMALL.iters)
    one = run(dataclasses.replace(SMALL, seed=6))
    assert np.array_equal(study["test_acc"][1], one["test_acc"])
    assert study["random_circulant_test_acc"][1] == one["random_circulant_test_acc"]


def test_the_shipped_cheap_view_is_recomputed_bit_for_bit():
    """Under the app's thread policy (one BLAS thread, as precompute ran): a different thread count changes the
    order of BLAS sums, so the last bits (and float32 roundings of the snapshots) may differ."""
    from threadpoolctl import threadpool_limits

    fn, kwargs = G.VIEWS["p31"].resolve(G.__name__), G.VIEWS["p31"].arguments()
    with threadpool_limits(1):
        verify_shipped(G.TOPIC, "p31", fn, rtol=0, **kwargs)
        fresh, shipped = store.normalise(fn(**kwargs)), store.load_shipped(G.TOPIC, "p31")
    assert_same(fresh, shipped, rtol=0, atol=0)


def test_a_sweep_is_the_single_runs_and_refuses_what_it_cannot_do():
    from toymodels.grokking.experiments import sweep

    res = sweep(SMALL, "bandwidth", [1.5, 2.5])
    assert res["values"] == [1.5, 2.5] and len(res["runs"]) == 2 and "M" not in res["runs"][0]
    one = run(dataclasses.replace(SMALL, bandwidth=1.5))
    assert res["runs"][0]["test_acc"] == one["test_acc"]
    assert list(G.sweep_table(res)["bandwidth"]) == [1.5, 2.5]
    for bad in [dict(param="seed", values=[1.0]), dict(param="power", values=[5.0]), dict(param="power", values=[]),
                dict(param="train_frac", values=[0.95])]:
        with pytest.raises(InputError):
            sweep(SMALL, **bad)
    with pytest.raises(InputError, match="sweep would take"):
        sweep(Config(p=61), "train_frac", [0.5, 0.6, 0.7, 0.8])
    with pytest.raises(InputError):
        sweep(dataclasses.replace(SMALL, control="identity"), "bandwidth", [1.5])


def test_quick_reproduce_prints_the_issue_keys(tmp_path):
    rec = G.reproduce(quick=True, seed=0, out=tmp_path)
    assert rec["topic"] == "grokking" and rec["quick"] is True and rec["p"] == 31
    for key in ("train_acc", "test_acc", "test_mse", "circulant_deviation"):
        assert isinstance(rec[key], list) and len(rec[key]) == 40
    assert rec["test_acc"] == list(store.load_shipped(G.TOPIC, "p31")["test_acc"])   # the same run as the view
    assert 0 <= rec["random_circulant_test_acc"] <= 1 and "claims" in rec
    assert (tmp_path / "iterations.csv").read_text().startswith("iteration,train_acc,test_acc")
