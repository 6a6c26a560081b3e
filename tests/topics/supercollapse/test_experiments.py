"""The views on small configurations: shapes, agreement with the functions they are built from, the page's
read-outs, bounds and budgets (refused before any work), and the cost model."""
import time
from dataclasses import replace

import numpy as np
import pytest

import toymodels.supercollapse as M
from toymodels.errors import InputError
from toymodels.supercollapse import config as K
from toymodels.supercollapse import powerlaw as P
from toymodels.supercollapse.sgd import simulate

SMALL_CURVES = M.CurveConfig(sizes=(32, 64, 128), mults=(0.8, 1.0, 1.2), schedules=("constant", "linear"), t0=100)
SMALL_SIM = M.SimConfig(sizes=(32, 64), mults=(1.0,), schedules=("constant", "linear"), seeds=6, seed=5, t0=100)


@pytest.fixture(scope="module")
def grid():
    return M.collapse_grid(SMALL_CURVES)


@pytest.fixture(scope="module")
def seeded():
    return M.seeded_grid(SMALL_SIM)


def test_collapse_grid_is_the_recursion_read_at_x(grid):
    assert grid["loss_x"].shape == (3, 2, 3, 50) and grid["spread_median"].shape == (3, 2)
    i, k, j = 2, 1, 1                                   # γ = 1.2 γ*, linear decay, p = 64
    steps = P.horizon(64, 1.2 * 1.5, 100, 64)
    assert grid["horizons"][i, j] == steps
    loss = P.expected_loss(64, P.lr_schedule("linear", steps, 0.2)[None], 16, 1.5, 1.5)["loss"][0]
    assert grid["loss_final"][i, k, j] == loss[-1]
    xt = 0.5 * steps
    lo = int(np.floor(xt))
    want = loss[lo] + (xt - lo) * (loss[min(lo + 1, steps)] - loss[lo])
    assert grid["loss_x"][i, k, j, 24] == pytest.approx(want, rel=1e-12)      # x = 0.50
    ell = grid["loss_x"][i, k] / grid["loss_final"][i, k][:, None]
    assert np.allclose(grid["spread"][i, k], ell.std(axis=0))
    assert np.allclose(grid["loss_x"][:, :, :, -1], grid["loss_final"])         # x = 1 is the end


def test_seeded_grid_is_simulate_read_at_x(seeded):
    assert seeded["loss_x"].shape == (1, 2, 2, 6, 50) and seeded["loss_x"].dtype == np.float32
    steps = P.horizon(64, 1.5, 100, 64)
    out = simulate([64], [steps], "linear", 0.2, 16, 1.5, 1.5, [7], [np.array([0, steps])])["loss"][0]
    assert seeded["loss_final"][0, 1, 1, 2] == out[0, -1]                          # seed 7 is the third (5, 6, 7)
    for name in ("ratio", "noise", "systematic", "exact_over_noise"):
        lo, hi = seeded[f"{name}_ci"][0, 1]
        assert np.isfinite(seeded[name][0, 1]) and lo <= hi
    misfit = seeded["misfit"]
    assert sorted(misfit["frac"].unique()) == [-0.1, 0.1] and set(misfit["schedule"]) == {"constant", "linear"}
    assert list(seeded["noise_vs_constant"]["schedule"]) == ["linear"]


def test_the_page_readouts(grid, seeded):
    base = M.normalised_curves(grid, 1.0, "linear")
    assert base["median"] == pytest.approx(grid["spread_median"][1, 1])
    assert set(base["table"]["size"]) == {32, 64, 128} and base["l0"] == 0
    off = M.normalised_curves(grid, 1.0, "linear", l0_frac=0.1)
    assert off["l0"] == pytest.approx(0.1 * grid["loss_final"][1, 1, -1])
    assert off["median"] > base["median"]                                          # a misfit L0 spreads the curves
    table = M.spread_vs_gamma(grid)
    assert len(table) == 6 and set(table["schedule"]) == {"constant", "linear"}
    n = M.noise_curves(seeded, 1.0, "linear")
    assert len(n["supercollapse"]) == 49 and n["n_seeds"] == 6                   # x = 1 (Δ = σ = 0) is left out
    assert n["curves"]["x"].max() < 1 and n["curves"]["x"].nunique() == 49
    assert set(n["curves"]["quantity"]) == {"spread Δ (seed means)", "seed noise σ", "systematic Δ (floor removed)",
                                            "exact Δ (expected curves)"}
    assert n["summary"]["ratio"] == pytest.approx(seeded["ratio"][0, 1])
    sel = M.exponent_selection(grid, "constant")
    assert sel["best_mult"] in (0.8, 1.0, 1.2) and sel["opt_over_off"] > 0


def test_frontier_schedule_model_and_check_on_small_settings():
    f = M.frontier_view(M.FrontierConfig(p_min=32, p_max=256, t0=830))
    assert f["n_fitted"] >= 8 and 1.3 < f["gamma_hat"] < 1.7
    assert set(f["curves"]["size"]) == {32, 64, 128, 256}
    s = M.schedule_model(M.CurveConfig(sizes=(32, 64), mults=(1.0,), t0=100))
    assert s["fit_on"] == "linear" and set(s["errors"]["schedule"]) == {"linear", "cosine"}
    assert 0 < s["alpha"] < 1
    c = M.exact_check(M.CheckConfig(p=32, steps=200, seeds=64))
    assert list(c["table"]["schedule"].unique()) == ["constant", "linear"] and len(c["table"]) >= 20
    assert c["max_abs_z"] < 5


def test_the_configured_horizon_is_the_frontier_s():
    # t0 is the constant-rate frontier's optimal horizon at p0 (the paper's procedure), to 2%
    f = M.frontier_view(M.FrontierConfig(p_min=32, p_max=256))
    assert f["t_opt_p0"] == pytest.approx(K.DEFAULT_CURVES.t0, rel=0.02)


@pytest.mark.parametrize("fn, cfg", [
    (M.seeded_grid, replace(K.DEFAULT_SIM, seeds=100)),
    (M.seeded_grid, replace(K.DEFAULT_SIM, sizes=(64, 96))),
    (M.collapse_grid, replace(K.DEFAULT_CURVES, schedules=("step",))),
    (M.collapse_grid, replace(K.DEFAULT_CURVES, sizes=(4096,), mults=(1.6,))),   # over the time budget
    (M.seeded_grid, replace(K.DEFAULT_SIM, sizes=(1024,), mults=(1.6,), seeds=32)),
    (M.exact_check, replace(K.DEFAULT_CHECK, steps=20000, seeds=256, sampler="plain", p=1024)),
])
def test_out_of_bounds_or_over_budget_is_refused_before_any_work(fn, cfg):
    start = time.perf_counter()
    with pytest.raises(InputError):
        fn(cfg)
    assert time.perf_counter() - start < 2.0


def test_the_stability_guard():
    assert K.stable(K.DEFAULT_CURVES) and K.stable(K.DEFAULT_SIM)
    assert not K.stable(replace(K.DEFAULT_CURVES, peak_lr=1.9, batch=1))
    # with a = 1.05 the noise feedback Σ λ_j grows with p: at η/B = 0.5 it diverges although each mode contracts
    assert not K.stable(replace(K.DEFAULT_CURVES, a=1.05, peak_lr=1.0, batch=2, sizes=(4096,)))
    with pytest.raises(InputError):
        K.check_budget(replace(K.DEFAULT_CURVES, peak_lr=1.9, batch=1, sizes=(64,), mults=(1.0,)))


def test_expected_seconds_does_not_underestimate_much():
    for fn, cfg in [(M.collapse_grid, replace(SMALL_CURVES, sizes=(256,), mults=(1.0,))),
                    (M.seeded_grid, replace(SMALL_SIM, sizes=(64, 128), schedules=("linear",), t0=300))]:
        start = time.process_time()
        fn(cfg)
        took = time.process_time() - start
        assert took <= 5 * K.expected_seconds(cfg) + 1.0, (took, K.expected_seconds(cfg))


def test_views_declare_their_costs_and_stay_under_the_limits():
    for view in M.VIEWS.values():
        cfg = view.arguments()["cfg"]
        assert view.seconds == pytest.approx(K.expected_seconds(cfg))
        K.check_budget(cfg)                                                        # raises if over
    assert M.expected_seconds(M.QUICK["noise"]) < 60
