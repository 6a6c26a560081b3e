"""Each claim's test, run on hand-made results on both sides of its thresholds: the rule decides as written."""
import numpy as np
import pandas as pd
import pytest

import toymodels.supercollapse as M
from toymodels.claims import judge

MULTS = [round(0.6 + 0.05 * i, 2) for i in range(17)]


def _claim(cid):
    return next(c for c in M.CLAIMS if c.id == cid)


def _grid(const_med, lin_med):
    """A collapse view whose windowed spreads over γ/γ* are the given functions of the multiplier."""
    med = np.array([[const_med(m), lin_med(m)] for m in MULTS])
    return {"mults": MULTS, "schedules": ["constant", "linear"], "spread_median": med, "sizes": [64, 2048],
            "config": {"a": 1.5, "t0": 830.0}}


def _noise(ratio_hi=0.3, exact_hi=0.2, noise_ratio_hi=0.35, misfit_lo=(1.5, 2.0), ratio=0.2, ratio_lo=0.15,
           noise_ratio=0.3, noise_ratio_lo=0.25):
    return {"mults": [1.0], "schedules": ["constant", "linear"], "sizes": [64, 512], "seeds": list(range(20)),
            "ratio": np.array([[0.3, ratio]]), "ratio_ci": np.array([[[0.2, 0.4], [ratio_lo, ratio_hi]]]),
            "exact_over_noise": np.array([[0.01, 0.1]]),
            "exact_over_noise_ci": np.array([[[0.0, 0.02], [0.05, exact_hi]]]),
            "noise_vs_constant": pd.DataFrame([{"schedule": "linear", "ratio": noise_ratio, "ratio_lo": noise_ratio_lo,
                                                "ratio_hi": noise_ratio_hi}]),
            "misfit": pd.DataFrame([{"schedule": "linear", "frac": f, "ratio": lo + 0.5, "ratio_lo": lo,
                                     "ratio_hi": lo + 1} for f, lo in zip((-0.1, 0.1), misfit_lo)])}


def _status(cid, views):
    return judge(_claim(cid), views).status


def test_collapse():
    assert _status("collapse", {"collapse": _grid(lambda m: 1e-4, lambda m: 1e-3)}) == "reproduced"
    assert _status("collapse", {"collapse": _grid(lambda m: 1e-4, lambda m: 6e-3)}) == "not reproduced"


def test_supercollapse():
    assert _status("supercollapse", {"noise": _noise()}) == "reproduced"
    # an upper bound straddling 1: not testable here (the shared rule), never "not reproduced"
    assert _status("supercollapse", {"noise": _noise(ratio_hi=1.05)}) == "not testable here"
    assert _status("supercollapse", {"noise": _noise(exact_hi=1.2)}) == "not testable here"
    assert _status("supercollapse", {"noise": _noise(ratio=1.5, ratio_lo=1.2, ratio_hi=1.8)}) == "not reproduced"
    j = judge(_claim("supercollapse"), {"noise": _noise()})
    assert j.seeds == 20 and j.rule == "equivalence"


def test_exponent():
    sharp = _grid(lambda m: 1e-4 + abs(m - 1), lambda m: 1e-3 + abs(m - 1.05))
    assert _status("exponent", {"collapse": sharp}) == "reproduced"
    shifted = _grid(lambda m: 1e-4 + abs(m - 1.2), lambda m: 1e-3 + abs(m - 1))
    assert _status("exponent", {"collapse": shifted}) == "not reproduced"
    shallow = _grid(lambda m: 0.01 + 0.01 * abs(m - 1), lambda m: abs(m - 1))   # minimum at γ*, ratio 0.01/0.012
    assert _status("exponent", {"collapse": shallow}) == "not reproduced"


def test_decay_noise_and_the_l0_probe():
    assert _status("decay-noise", {"noise": _noise()}) == "reproduced"
    assert _status("decay-noise", {"noise": _noise(noise_ratio_hi=0.55)}) == "not testable here"
    assert _status("decay-noise", {"noise": _noise(noise_ratio=0.7, noise_ratio_lo=0.6, noise_ratio_hi=0.8)}) == \
        "not reproduced"
    # issue 41: the L0 misfit is the page's own probe, not one of the paper's claims
    assert "l0-misfit" not in {c.id for c in M.CLAIMS}
    probe = M.l0_probe(_noise())
    assert [r["l0_frac"] for r in probe] == [-0.1, 0.1] and probe[0]["ratio_lo"] == 1.5


def test_the_bootstrap_interval_contains_its_estimate():
    """The normal bootstrap interval (issue 41) is point ± z sd of the resampled statistic: it contains the point
    even where every resample lies above it, which the percentile interval then excludes."""
    from scipy.stats import norm

    from toymodels.supercollapse.collapse import seed_bootstrap

    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 0.3, 20)

    def biased(idx):          # a statistic whose resamples sit above the point: the mean plus the resample's spread
        return x[idx].mean(axis=1) + 0.5 * x[idx].std(axis=1)

    point = float(x.mean())
    lo, hi = seed_bootstrap(biased, 20, 2000, 0, point=point)
    plo, phi = seed_bootstrap(biased, 20, 2000, 0)
    assert lo <= point <= hi and not plo <= point <= phi
    vals = biased(np.random.default_rng(0).integers(0, 20, size=(2000, 20)))
    assert hi - point == pytest.approx(norm.ppf(0.975) * vals.std(ddof=1))


def test_schedule_model():
    def view(err):
        return {"schedules": {"alpha": 0.4, "fit_on": "linear", "errors": pd.DataFrame(
            [{"size": 64, "schedule": "linear", "error": 0.05, "alpha_own": 0.4},
             {"size": 64, "schedule": "cosine", "error": err, "alpha_own": 0.41}])}}
    assert _status("schedule-model", view(0.1)) == "reproduced"
    assert _status("schedule-model", view(0.5)) == "not reproduced"


def test_frontier():
    grid = _grid(lambda m: 1e-4 + abs(m - 1), lambda m: 1e-3 + abs(m - 1))
    ok = {"gamma_hat": 1.48, "n_fitted": 20, "t_opt_p0": 829.0}
    assert _status("frontier", {"collapse": grid, "frontier": ok}) == "reproduced"
    assert _status("frontier", {"collapse": grid, "frontier": {**ok, "gamma_hat": 1.8}}) == "not reproduced"


def test_missing_results_are_not_testable():
    for claim in M.CLAIMS:
        assert judge(claim, {}).status == "not testable here"


def test_metrics_are_the_issues_names():
    grid = _grid(lambda m: 1e-4 + abs(m - 1), lambda m: 1e-3 + abs(m - 1))
    views = {"collapse": grid, "noise": _noise(), "check": {"max_abs_z": 2.1},
             "frontier": {"gamma_hat": 1.48}, "schedules": {"alpha": 0.4}}
    out = M.metrics(views)
    assert {"exact_vs_sim_max_z", "spread_over_noise_decay", "spread_over_noise_constant", "spread_at_opt_over_off",
            "noise_decay_over_constant"} <= set(out)
    assert out["spread_over_noise_decay"] == pytest.approx(0.2)
    assert out["spread_at_opt_over_off"] == pytest.approx(1e-4 / (1e-4 + 0.2))
