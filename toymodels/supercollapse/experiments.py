"""Every bounded call the page and the command line make: the shipped views and the page's read-outs of them.

Views (``__init__.VIEWS``):

* ``collapse_grid``: exact expected curves for sizes 64..2048, γ = (0.6..1.4) γ*, three schedules (Fig. 1b, d);
* ``seeded_grid``: seeded SGD, sizes 64..512, 20 seeds, the same schedules, γ = (0.6..1.4) γ* (Fig. 1c);
* ``frontier_view``: constant-rate curves of 21 sizes and their lower envelope, the compute-optimal frontier
  (Fig. 1a);
* ``schedule_model``: the schedule model L_sched ≈ L_const(τ) + α (η/η_peak - 1) tr(PΣ) (Fig. 1e);
* ``exact_check``: the exact recursion against seeded SGD.

The read-outs (``normalised_curves``, ``noise_curves``, ``spread_vs_gamma``, ...) turn a shipped view and the
page's knobs (γ multiplier, schedule, L0 misfit) into tables; they are cheap (milliseconds).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from toymodels.topic import as_progress, bounded

from .collapse import (
    at_fractions,
    fit_power,
    frontier,
    misfit_l0,
    noise_ratio,
    normalise,
    ratio_summary,
    record_steps,
    seed_collapse,
    spread,
    window_median,
    x_grid,
)
from .config import (
    DEFAULT_CHECK,
    DEFAULT_CURVES,
    DEFAULT_FRONTIER,
    DEFAULT_SCHEDULES,
    DEFAULT_SIM,
    KNOBS,
    CheckConfig,
    CurveConfig,
    FrontierConfig,
    SimConfig,
    check_budget,
    expected_seconds,
    frontier_sizes,
)
from .noise_model import deformation, fit_alpha, noise_term, relative_error
from .powerlaw import expected_loss, horizon, lr_schedule
from .sgd import simulate

#: The L0 misfits the control claim uses (fractions of the largest size's final loss; the true L0 is 0).
MISFITS = (-0.1, 0.1)
#: A wider scan of misfits at γ*, for the lab notebook (exploratory: added after the quick run showed ±10% too
#: small to break the supercollapse; it decides no claim).
MISFIT_SCAN = (-0.3, -0.2, -0.15, -0.1, -0.05, 0.05, 0.1, 0.15, 0.2, 0.3)
#: The schedule model is fitted and judged on t in [0.1 T, T] (the official notebook skips warm-up; we have none).
FIT_FROM = 0.1
BOOT_RESAMPLES = 2000


def _budget(cfg, progress=None):
    check_budget(cfg)


def _index(values, value) -> int:
    """The position of ``value`` in ``values`` (numbers compared to 1e-9, names exactly)."""
    for i, v in enumerate(values):
        if v == value if isinstance(value, str) else abs(float(v) - float(value)) < 1e-9:
            return i
    raise KeyError(f"{value!r} is not one of {list(values)}")


def _log_steps(steps: int, n: int) -> np.ndarray:
    """About ``n`` whole steps from 1 to ``steps``, spaced evenly in log, with 0 (distinct, sorted)."""
    return np.unique(np.concatenate([[0], np.round(np.geomspace(1, steps, n)).astype(int)]))


# --------------------------------------------------------------------------- exact expected curves


@bounded(cfg=KNOBS.fields(CurveConfig, group="curves"), _budget=_budget)
def collapse_grid(cfg: CurveConfig = DEFAULT_CURVES, progress=None) -> dict:
    """Exact expected loss curves of every size, γ multiplier and schedule, read at the x grid: ``loss_x``
    (mults, schedules, sizes, n_x), ``loss_final`` (mults, schedules, sizes), ``horizons`` (mults, sizes), and the
    spread across sizes at the true L0 = 0, ``spread`` (mults, schedules, n_x) and its windowed median
    ``spread_median`` (mults, schedules)."""
    p_bar = as_progress(progress)
    xs = x_grid()
    sizes, mults, scheds = list(cfg.sizes), list(cfg.mults), list(cfg.schedules)
    loss_x = np.empty((len(mults), len(scheds), len(sizes), len(xs)))
    loss_final = np.empty((len(mults), len(scheds), len(sizes)))
    horizons = np.empty((len(mults), len(sizes)), dtype=int)
    total, done = expected_seconds(cfg), 0.0
    for i, m in enumerate(mults):
        for j, p in enumerate(sizes):
            steps = horizon(p, m * cfg.a, cfg.t0, cfg.p0)
            horizons[i, j] = steps
            lrs = np.stack([lr_schedule(s, steps, cfg.peak_lr) for s in scheds])
            loss = expected_loss(p, lrs, cfg.batch, cfg.a, cfg.b)["loss"]               # (R, T + 1)
            loss_x[i, :, j] = at_fractions(loss, np.arange(steps + 1), steps, xs)
            loss_final[i, :, j] = loss[:, -1]
            done += expected_seconds(CurveConfig(**{**cfg.__dict__, "sizes": (p,), "mults": (m,)}))
            p_bar(done / total, f"γ = {m:g} γ*, p = {p}")
    ell = normalise(loss_x, loss_final)
    sp = ell.std(axis=2)
    return {"xs": xs, "sizes": sizes, "mults": mults, "schedules": scheds, "loss_x": loss_x, "loss_final": loss_final,
            "horizons": horizons, "spread": sp, "spread_median": np.array([[window_median(sp[i, k], xs)
                                                                             for k in range(len(scheds))]
                                                                            for i in range(len(mults))]),
            "config": dict(cfg.__dict__)}


def exponent_selection(grid: dict, schedule: str) -> dict:
    """How sharply the collapse selects the exponent, from ``collapse_grid``: the multiplier with the smallest
    spread, the spread at γ*, and ``opt_over_off``: the spread at γ* over the smaller of those at 0.8 γ* and
    1.2 γ* (the issue's ``spread_at_opt_over_off``)."""
    k = _index(grid["schedules"], schedule)
    med = np.asarray(grid["spread_median"])[:, k]
    mults = [float(m) for m in grid["mults"]]
    at = med[_index(mults, 1.0)]
    off = min(med[_index(mults, 0.8)], med[_index(mults, 1.2)])
    return {"best_mult": mults[int(np.argmin(med))], "spread_at_opt": float(at), "spread_off": float(off),
            "opt_over_off": float(at / off)}


# --------------------------------------------------------------------------- seeded SGD


@bounded(cfg=KNOBS.fields(SimConfig, group="sim"), _budget=_budget)
def seeded_grid(cfg: SimConfig = DEFAULT_SIM, progress=None) -> dict:
    """Seeded SGD for every γ multiplier and schedule (sizes and seeds at once), each run read at the x grid:
    ``loss_x`` (mults, schedules, sizes, seeds, n_x, float32), ``loss_final`` (mults, schedules, sizes, seeds); the
    exact expected curves of the same runs, ``exact_x`` and ``exact_final``; and the summaries at L0 = 0:
    ``ratio`` Δ/σ, ``noise`` σ, ``systematic`` (Δ with the finite-seed floor removed) over σ, and
    ``exact_over_noise`` (the exact Δ of the expected curves over the measured σ), each a windowed median with a
    95% bootstrap interval over seeds (``*_ci``). At γ* also the noise of each schedule over the constant one
    (``noise_vs_constant``), Δ/σ at the misfit L0 of ``MISFITS`` (``misfit``) and of ``MISFIT_SCAN``
    (``misfit_scan``)."""
    p_bar = as_progress(progress)
    xs = x_grid()
    sizes, mults, scheds = list(cfg.sizes), list(cfg.mults), list(cfg.schedules)
    seeds = list(range(cfg.seed, cfg.seed + cfg.seeds))
    shape = (len(mults), len(scheds), len(sizes))
    loss_x = np.empty(shape + (len(seeds), len(xs)), dtype=np.float32)
    loss_final = np.empty(shape + (len(seeds),))
    exact_x, exact_final = np.empty(shape + (len(xs),)), np.empty(shape)
    total, done = expected_seconds(cfg), 0.0
    for i, m in enumerate(mults):
        steps = [horizon(p, m * cfg.a, cfg.t0, cfg.p0) for p in sizes]
        rec = [record_steps(t, xs) for t in steps]
        for k, sched in enumerate(scheds):
            one = SimConfig(**{**cfg.__dict__, "mults": (m,), "schedules": (sched,)})
            sub = p_bar.sub(done / total, (done + expected_seconds(one)) / total, f"γ = {m:g} γ*, {sched}: ")
            out = simulate(sizes, steps, sched, cfg.peak_lr, cfg.batch, cfg.a, cfg.b, seeds, rec,
                           sampler=cfg.sampler, progress=sub)
            done += expected_seconds(one)
            for j, (p, t) in enumerate(zip(sizes, steps)):
                loss_x[i, k, j] = at_fractions(out["loss"][j], rec[j], t, xs)
                loss_final[i, k, j] = out["loss"][j][:, -1]
                ex = expected_loss(p, lr_schedule(sched, t, cfg.peak_lr)[None], cfg.batch, cfg.a, cfg.b)["loss"][0]
                exact_x[i, k, j] = at_fractions(ex, np.arange(t + 1), t, xs)
                exact_final[i, k, j] = ex[-1]
    result = {"xs": xs, "sizes": sizes, "mults": mults, "schedules": scheds, "seeds": seeds,
              "loss_x": loss_x, "loss_final": loss_final, "exact_x": exact_x, "exact_final": exact_final,
              "config": dict(cfg.__dict__)}
    result.update(_seeded_summaries(result))
    p_bar(1.0, "done")
    return result


def _seeded_summaries(res: dict) -> dict:
    xs, mults, scheds = res["xs"], res["mults"], res["schedules"]
    n_m, n_s = len(mults), len(scheds)
    names = {"ratio": "ratio", "noise": "noise", "systematic": "systematic", "exact": "exact_over_noise"}
    out = {name: np.empty((n_m, n_s)) for name in names.values()}
    out.update({f"{name}_ci": np.empty((n_m, n_s, 2)) for name in names.values()})
    for i in range(n_m):
        for k in range(n_s):
            lx, lf = res["loss_x"][i, k], res["loss_final"][i, k]
            exact = spread(normalise(res["exact_x"][i, k], res["exact_final"][i, k]))
            s = ratio_summary(lx, lf, xs, resamples=BOOT_RESAMPLES, seed=0, exact=exact)
            for key, name in names.items():
                out[name][i, k] = s[key]
                out[f"{name}_ci"][i, k] = s[f"{key}_ci"]
    misfit, versus, scan = [], [], []
    if any(abs(float(m) - 1.0) < 1e-9 for m in mults):
        i = _index(mults, 1.0)
        for k, sched in enumerate(scheds):
            lx, lf = res["loss_x"][i, k], res["loss_final"][i, k]
            for frac in sorted(set(MISFITS) | set(MISFIT_SCAN)):
                s = ratio_summary(lx, lf, xs, l0=misfit_l0(lf, frac), resamples=BOOT_RESAMPLES, seed=0)
                row = {"schedule": sched, "frac": frac, "ratio": s["ratio"], "ratio_lo": s["ratio_ci"][0],
                       "ratio_hi": s["ratio_ci"][1]}
                scan.append(row)
                if frac in MISFITS:
                    misfit.append(row)
            if "constant" in scheds and sched != "constant":
                c = _index(scheds, "constant")
                r = noise_ratio(lx, lf, res["loss_x"][i, c], res["loss_final"][i, c], xs,
                                resamples=BOOT_RESAMPLES, seed=0)
                versus.append({"schedule": sched, "ratio": r["ratio"], "ratio_lo": r["ratio_ci"][0],
                               "ratio_hi": r["ratio_ci"][1]})
    out["misfit"] = pd.DataFrame(misfit, columns=["schedule", "frac", "ratio", "ratio_lo", "ratio_hi"])
    out["misfit_scan"] = pd.DataFrame(scan, columns=["schedule", "frac", "ratio", "ratio_lo", "ratio_hi"])
    out["noise_vs_constant"] = pd.DataFrame(versus, columns=["schedule", "ratio", "ratio_lo", "ratio_hi"])
    return out


# --------------------------------------------------------------------------- the compute-optimal frontier


@bounded(cfg=KNOBS.fields(FrontierConfig, group="frontier"), _budget=_budget)
def frontier_view(cfg: FrontierConfig = DEFAULT_FRONTIER, progress=None) -> dict:
    """Constant-rate expected curves of sizes p0 · 2^(k/per_octave) up to p_max, each run to ``overtrain`` times
    its γ* horizon, their lower envelope (the compute-optimal frontier), and the exponent γ̂ of the optimal
    horizon t_opt(p) ∝ p^γ̂ read off it (theory: γ* = a). ``curves``: a table of the octave sizes' curves
    (size, step, compute, loss) for the page; ``horizon_points``: each octave size's loss at its γ* horizon."""
    p_bar = as_progress(progress)
    sizes = frontier_sizes(cfg)
    curves, rows, points = [], [], []
    total, done = expected_seconds(cfg), 0.0
    for p in sizes:
        t_star = horizon(p, cfg.a, cfg.t0, cfg.p0)
        steps = int(round(cfg.overtrain * t_star))
        loss = expected_loss(p, lr_schedule("constant", steps, cfg.peak_lr)[None], cfg.batch, cfg.a, cfg.b)["loss"][0]
        at = _log_steps(steps, 240)
        curves.append((p, at[1:], loss[at[1:]]))
        if (p & (p - 1)) == 0:                                                  # octave sizes: for the chart
            rows += [{"size": p, "step": int(t), "compute": float(p * t), "loss": float(loss[t])} for t in at[1:]]
            points.append({"size": p, "step": t_star, "compute": float(p * t_star), "loss": float(loss[t_star])})
        done += steps * (5e-6 + 4e-9 * p)
        p_bar(done / total, f"p = {p}")
    env = frontier(curves)
    ok = np.isfinite(env["optimal_steps"])
    gamma_hat, scale = fit_power(env["sizes"][ok], env["optimal_steps"][ok])
    return {"curves": pd.DataFrame(rows), "horizon_points": pd.DataFrame(points),
            "envelope": pd.DataFrame({"compute": env["compute"], "loss": env["loss"], "best": env["best"]}),
            "optimal": pd.DataFrame({"size": env["sizes"], "optimal_steps": env["optimal_steps"]}),
            "gamma_hat": gamma_hat, "t_opt_p0": scale * cfg.p0 ** gamma_hat, "n_fitted": int(ok.sum()),
            "config": dict(cfg.__dict__)}


# --------------------------------------------------------------------------- the schedule model


@bounded(cfg=KNOBS.fields(CurveConfig, group="curves"), _budget=_budget)
def schedule_model(cfg: CurveConfig = DEFAULT_SCHEDULES, progress=None) -> dict:
    """The schedule model on exact expected curves at each size's horizon (the first γ multiplier of ``cfg``):
    α fitted by least squares on the first decaying schedule of ``cfg.schedules`` (pooled over sizes,
    t in [0.1 T, T]), and the relative error with which it predicts every schedule (``errors``). ``curves``:
    a table (size, schedule, x, loss, predicted, constant_at_tau) for the page."""
    p_bar = as_progress(progress)
    decaying = [s for s in cfg.schedules if s != "constant"]
    if not decaying:
        raise ValueError("the schedule model needs a decaying schedule")
    fit_on = decaying[0]
    m = cfg.mults[0]
    store = {}
    for j, p in enumerate(cfg.sizes):
        steps = horizon(p, m * cfg.a, cfg.t0, cfg.p0)
        const = expected_loss(p, lr_schedule("constant", steps, cfg.peak_lr)[None], cfg.batch, cfg.a, cfg.b)["loss"][0]
        for s in decaying:
            lrs = lr_schedule(s, steps, cfg.peak_lr)
            run = expected_loss(p, lrs[None], cfg.batch, cfg.a, cfg.b, with_noise_trace=True)
            d = deformation(run["loss"][0], const, lrs, cfg.peak_lr)
            n = noise_term(lrs, run["grad_cov_trace"][0], cfg.peak_lr)
            store[(p, s)] = (steps, run["loss"][0], d, n)
        p_bar((j + 1) / len(cfg.sizes), f"p = {p}")
    lo = {p: int(np.ceil(FIT_FROM * store[(p, fit_on)][0])) for p in cfg.sizes}
    alpha = fit_alpha([store[(p, fit_on)][2][lo[p]:] for p in cfg.sizes],
                      [store[(p, fit_on)][3][lo[p]:] for p in cfg.sizes])
    errors, rows = [], []
    for (p, s), (steps, loss, d, n) in store.items():
        errors.append({"size": p, "schedule": s, "error": relative_error(d[lo[p]:], n[lo[p]:], alpha),
                       "alpha_own": fit_alpha([d[lo[p]:]], [n[lo[p]:]])})
        at = np.unique(np.round(np.linspace(0, steps, 101)).astype(int))
        rows += [{"size": p, "schedule": s, "x": t / steps, "loss": loss[t], "predicted": loss[t] - d[t] + alpha * n[t],
                  "constant_at_tau": loss[t] - d[t]} for t in at]
    return {"alpha": alpha, "fit_on": fit_on, "errors": pd.DataFrame(errors), "curves": pd.DataFrame(rows),
            "config": dict(cfg.__dict__)}


# --------------------------------------------------------------------------- the recursion against SGD


@bounded(cfg=KNOBS.fields(CheckConfig, group="check"), _budget=_budget)
def exact_check(cfg: CheckConfig = DEFAULT_CHECK, progress=None) -> dict:
    """The exact expected loss against the mean of ``cfg.seeds`` seeded SGD runs at about 12 log-spaced steps
    per schedule: a table (schedule, step, exact, mean, sem, z) and ``max_abs_z``."""
    p_bar = as_progress(progress)
    at = np.unique(np.round(np.geomspace(10, cfg.steps, 12)).astype(int))
    rows = []
    for k, s in enumerate(cfg.schedules):
        lrs = lr_schedule(s, cfg.steps, cfg.peak_lr)
        exact = expected_loss(cfg.p, lrs[None], cfg.batch, cfg.a, cfg.b)["loss"][0]
        sim = simulate([cfg.p], [cfg.steps], s, cfg.peak_lr, cfg.batch, cfg.a, cfg.b,
                       list(range(cfg.seed, cfg.seed + cfg.seeds)), [at], sampler=cfg.sampler,
                       progress=p_bar.part(k, len(cfg.schedules), f"{s}: "))["loss"][0]   # (S, len(at))
        mean, sem = sim.mean(axis=0), sim.std(axis=0, ddof=1) / np.sqrt(cfg.seeds)
        rows += [{"schedule": s, "step": int(t), "exact": float(exact[t]), "mean": float(mu), "sem": float(se),
                  "z": float((mu - exact[t]) / se)} for t, mu, se in zip(at, mean, sem)]
    table = pd.DataFrame(rows)
    return {"table": table, "max_abs_z": float(table["z"].abs().max()), "config": dict(cfg.__dict__)}


# --------------------------------------------------------------------------- the page's read-outs


def normalised_curves(grid: dict, mult: float, schedule: str, l0_frac: float = 0.0) -> dict:
    """Expected curves at one γ multiplier and schedule, normalised with L0 = ``l0_frac`` times the largest
    size's final loss: ``table`` (size, x, ell, and ``residual``: ℓ_p minus the mean over sizes, the differences the
    spread measures), the spread ``spread`` (x, spread) and its windowed median."""
    i, k = _index(grid["mults"], mult), _index(grid["schedules"], schedule)
    lf = np.asarray(grid["loss_final"])[i, k]
    l0 = misfit_l0(lf, l0_frac)
    ell = normalise(np.asarray(grid["loss_x"])[i, k], lf, l0)
    xs = np.asarray(grid["xs"])
    resid = ell - ell.mean(axis=0)
    table = pd.DataFrame([{"size": int(p), "x": float(x), "ell": float(v), "residual": float(r)}
                          for p, row, rrow in zip(grid["sizes"], ell, resid) for x, v, r in zip(xs, row, rrow)])
    sp = spread(ell)
    return {"table": table, "spread": pd.DataFrame({"x": xs, "spread": sp}), "median": window_median(sp, xs),
            "l0": l0}


def spread_vs_gamma(grid: dict, l0_frac: float = 0.0) -> pd.DataFrame:
    """The windowed median spread of the expected curves at every γ multiplier and schedule (mult, schedule,
    spread), with L0 misfit by ``l0_frac``."""
    rows = []
    for i, m in enumerate(grid["mults"]):
        for k, s in enumerate(grid["schedules"]):
            lf = np.asarray(grid["loss_final"])[i, k]
            ell = normalise(np.asarray(grid["loss_x"])[i, k], lf, misfit_l0(lf, l0_frac))
            rows.append({"mult": float(m), "schedule": s, "spread": window_median(spread(ell), grid["xs"])})
    return pd.DataFrame(rows)


def noise_curves(seeded: dict, mult: float, schedule: str, l0_frac: float = 0.0) -> dict:
    """Seeded runs at one γ multiplier and schedule (Fig. 1c): ``curves`` (x, quantity, value) for Δ, σ, the
    systematic Δ and the exact Δ; ``bands`` (size, x, mean, lo, hi: the seed mean ± one standard deviation);
    ``supercollapse``: the x where Δ < σ; and the windowed summary (``summary``, with 95% bootstrap intervals)."""
    i, k = _index(seeded["mults"], mult), _index(seeded["schedules"], schedule)
    lx, lf = np.asarray(seeded["loss_x"])[i, k], np.asarray(seeded["loss_final"])[i, k]
    l0 = misfit_l0(lf, l0_frac)
    xs = np.asarray(seeded["xs"])
    st = seed_collapse(lx, lf, l0)
    exact_final = np.asarray(seeded["exact_final"])[i, k]
    exact = spread(normalise(np.asarray(seeded["exact_x"])[i, k], exact_final, misfit_l0(exact_final, l0_frac)))
    inner = xs < 1 - 1e-9      # at x = 1 every normalised curve is 1 by construction: Δ = σ = 0 there
    curves = pd.DataFrame({"x": np.tile(xs[inner], 4), "quantity": np.repeat(
        ["spread Δ (seed means)", "seed noise σ", "systematic Δ (floor removed)", "exact Δ (expected curves)"],
        inner.sum()), "value": np.concatenate([v[inner] for v in (st["spread"], st["noise"], st["systematic"],
                                                                  exact)])})
    bands = pd.DataFrame([{"size": int(p), "x": float(x), "mean": float(mu), "lo": float(mu - sd),
                           "hi": float(mu + sd)} for p, m_row, s_row in zip(seeded["sizes"], st["mean"], st["sd"])
                          for x, mu, sd in zip(xs, m_row, s_row)])
    if l0_frac == 0:    # the view's own summary (the numbers the claims read)
        summary = {name: float(np.asarray(seeded[name])[i, k]) for name in ("ratio", "noise", "systematic")}
        summary.update({f"{name}_ci": [float(v) for v in np.asarray(seeded[f"{name}_ci"])[i, k]]
                        for name in ("ratio", "noise", "systematic")})
        summary["spread"] = window_median(st["spread"], xs)
    else:               # the same bootstrap (resamples and seed) as the view's
        summary = ratio_summary(lx, lf, xs, l0=l0, resamples=BOOT_RESAMPLES, seed=0)
    lo, hi = summary["ratio_ci"]
    reading = "supercollapse (Δ < σ)" if hi < 1 else "no supercollapse (Δ > σ)" if lo > 1 else \
        "undecided at these seeds (the interval straddles Δ = σ)"
    return {"curves": curves, "bands": bands, "supercollapse": (st["spread"] < st["noise"])[inner].tolist(),
            "reading": reading,
            "summary": summary, "l0": l0, "n_seeds": int(lx.shape[1])}


def schedule_curves(model: dict, size: int) -> pd.DataFrame:
    """The schedule model at one size, for a chart: for each decaying schedule the actual deformation
    L_sched(t) - L_const(τ(t)) and the predicted α (η/η_peak - 1) tr(PΣ_t), against t / T (long format: schedule,
    x, curve, value)."""
    c = model["curves"]
    c = c[c["size"] == size]
    actual = c["loss"] - c["constant_at_tau"]
    predicted = c["predicted"] - c["constant_at_tau"]
    fit = model["fit_on"]
    return pd.concat([
        pd.DataFrame({"schedule": c["schedule"], "x": c["x"], "curve": "actual", "value": actual}),
        pd.DataFrame({"schedule": c["schedule"], "x": c["x"], "value": predicted,
                      "curve": np.where(c["schedule"] == fit, f"α fitted here ({fit})", "predicted with that α")}),
    ], ignore_index=True)


def headline_numbers(grid: dict, seeded: dict, check: dict) -> dict:
    """The issue's headline metrics: ``exact_vs_sim_max_z``, ``spread_over_noise_decay`` and ``..._constant``
    (seeded Δ/σ at γ*), ``spread_at_opt_over_off`` (expected curves, constant rate) and
    ``noise_decay_over_constant`` (σ of linear decay over σ of constant rate, at γ*)."""
    i = _index(seeded["mults"], 1.0)
    lin, con = _index(seeded["schedules"], "linear"), _index(seeded["schedules"], "constant")
    versus = seeded["noise_vs_constant"]
    row = versus[versus["schedule"] == "linear"].iloc[0]
    return {"exact_vs_sim_max_z": float(check["max_abs_z"]),
            "spread_over_noise_decay": float(np.asarray(seeded["ratio"])[i, lin]),
            "spread_over_noise_constant": float(np.asarray(seeded["ratio"])[i, con]),
            "spread_at_opt_over_off": exponent_selection(grid, "constant")["opt_over_off"],
            "noise_decay_over_constant": float(row["ratio"])}


def seeded_table(n: dict) -> pd.DataFrame:
    """One row per γ multiplier and schedule of ``seeded_grid``: Δ/σ, σ, the systematic and the exact Δ over σ,
    with their 95% bootstrap intervals."""
    rows = []
    for i, m in enumerate(n["mults"]):
        for k, s in enumerate(n["schedules"]):
            row = {"γ / γ*": float(m), "schedule": s}
            for name, label in (("ratio", "Δ/σ"), ("noise", "σ"), ("systematic", "systematic Δ/σ"),
                                ("exact_over_noise", "exact Δ/σ")):
                row[label] = float(n[name][i][k])
                row[f"{label} CI"] = f"[{float(n[name + '_ci'][i][k][0]):.3g}, {float(n[name + '_ci'][i][k][1]):.3g}]"
            rows.append(row)
    return pd.DataFrame(rows)


def reproduce_tables(computed: dict) -> dict:
    """The CSV tables ``reproduce --out`` writes: spreads over γ, the seeded summaries, the frontier, the schedule
    model's errors and the recursion check."""
    tables = {}
    if "collapse" in computed:
        tables["spread_vs_gamma"] = spread_vs_gamma(computed["collapse"])
    if "noise" in computed:
        n = computed["noise"]
        tables["seeded_summary"] = seeded_table(n)
        tables["misfit"] = n["misfit"]
        tables["noise_vs_constant"] = n["noise_vs_constant"]
    if "frontier" in computed:
        tables["frontier_optimal"] = computed["frontier"]["optimal"]
    if "schedules" in computed:
        tables["schedule_errors"] = computed["schedules"]["errors"]
    if "check" in computed:
        tables["exact_vs_sim"] = computed["check"]["table"]
    return tables
