"""The paper's experiments: the generalisation window τ_gen ≪ τ_mem ∝ n (§2, SM B) and the random-features
timescales (§3).

``train_window``: the SM B network (``network``) trained **full batch** (all n points every step, fresh (t′, ε)
per point) with Adam on the GMM of SM B, many (n, seed) models at once as one stacked ensemble. Smaller training
sets are padded to the largest n and masked out of their loss; a model stops (is frozen) after its own
S = steps_per_n · n steps. At log-spaced checkpoints: DDIM samples, f_mem (Eq. 6), the score error against the
exact GMM score, MMD², and train/test denoising losses.

``run_rf``: the random-features model (``rf``) solved exactly for several ψ_n.
"""
from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.topic import InputError, as_progress, bounded

from . import core
from .config import (
    KNOBS,
    RF_STUDY,
    STUDY_WINDOW,
    RFConfig,
    WindowConfig,
    _rf_budget,
    _rf_study_budget,
    _study_budget,
    _window_budget,
)
from .network import Denoiser, forward, init_params, n_params, time_embedding
from .rf import bulk_edges, feature_moments, rf_constants, rf_losses, tau_mem_theory
from .summaries import GAP_THRESHOLD, MEM_THRESHOLD, model_times, model_times_table  # noqa: F401


def checkpoint_steps(total: int, per_decade: int = 8) -> list[int]:
    """0, then 50·10^(k/per_decade) up to ``total``."""
    out = [0]
    k = 0
    while True:
        s = int(round(50 * 10 ** (k / per_decade)))
        if s >= total:
            break
        if s > out[-1]:
            out.append(s)
        k += 1
    return out + [int(total)]


@bounded(cfg=KNOBS.fields(WindowConfig, group="window"), _budget=_window_budget)
def train_window(cfg: WindowConfig, device=None, progress=None) -> dict:
    """Train every (n, seed) model, evaluating f_mem, quality and losses at log-spaced checkpoints.

    Returns a bundle: ``curves`` (one row per model and checkpoint), ``summary`` (τ_gen, τ_mem per n),
    the fitted slopes, and the closed-form sampler's f_mem on the same training sets.
    """
    cfg = cfg.normalised()
    if len(cfg.ns) < 2:
        raise InputError("pick at least two different training-set sizes n (the slopes need two)")
    models = [(n, s) for n in cfg.ns for s in range(cfg.seeds)]
    curves, cf = train_models(cfg, models, device=device, progress=progress)
    summary, fits = summarise(curves, cfg.ns, cfg.steps_per_n)
    return {"config": asdict(cfg), "curves": curves, "summary": summary, "closed_form_fmem": cf,
            "closed_form_fmem_min": float(min(cf)), **fits, "n_params": n_params(cfg.width, cfg.d)}


def train_models(cfg: WindowConfig, models: list, extra_steps=(), device=None, progress=None):
    """Train the (n, seed) ``models`` of ``cfg`` as one stacked ensemble (padded to the largest n) and evaluate them
    at log-spaced checkpoints (plus ``extra_steps``). Returns (curves, closed-form f_mem per model).

    Model (n, s) trains on its own GMM set (data seed 10⁴·cfg.seed + 97n + s) from its own initialisation
    (seed 10³·cfg.seed + 13n + s) for S = steps_per_n · n full-batch steps; every checkpoint draws DDIM samples
    from the same starting noise."""
    p_ = as_progress(progress)
    dev = get_device(device)
    d, W = cfg.d, cfg.width
    M, n_max = len(models), max(n for n, _ in models)
    # each (n, seed) its own training set, balanced halves
    data = torch.zeros(M, n_max, d)
    mask = torch.zeros(M, n_max)
    for m, (n, s) in enumerate(models):
        data[m, :n] = torch.from_numpy(core.gmm_sample(n, d, cfg.mu, seed=10_000 * cfg.seed + 97 * n + s))
        mask[m, :n] = 1.0
    data, mask = data.to(dev), mask.to(dev)
    counts = mask.sum(1)                                                         # (M,)
    stop = torch.tensor([int(cfg.steps_per_n * n) for n, _ in models], device=dev)
    params = {k: v.to(dev).requires_grad_(True) for k, v in
              init_params(M, d, W, [1000 * cfg.seed + 13 * n + s for n, s in models]).items()}
    opt = torch.optim.Adam(list(params.values()), lr=cfg.lr, foreach=True)
    sched = core.Schedule("ddpm")
    ab = torch.tensor(sched.alpha_bar(), dtype=torch.float32, device=dev)
    emb_table = time_embedding(sched.T, W).to(dev)

    # fixed evaluation material
    gen = torch.Generator().manual_seed(cfg.seed + 12345)
    z0 = torch.randn(cfg.n_samples, d, generator=gen).to(dev)                  # sampler noise, same every time
    fresh = torch.from_numpy(core.gmm_sample(1000, d, cfg.mu, seed=cfg.seed + 777)).to(dev)
    ref = torch.from_numpy(core.gmm_sample(1000, d, cfg.mu, seed=cfg.seed + 778)).to(dev)
    se_t = list(range(100, 1000, 100))
    se_eps = torch.randn(len(se_t), 1000, d, generator=gen).to(dev)
    t_small = int(np.argmin(np.abs(sched.alpha_bar() - np.exp(-0.02))))    # OU time t = 0.01
    loss_eps_train = torch.randn(5, n_max, d, generator=gen).to(dev)
    loss_eps_test = torch.randn(5, 1000, d, generator=gen).to(dev)
    big = torch.finfo(torch.float32).max

    def evaluate(step: int) -> list[dict]:
        with torch.no_grad():
            den = Denoiser({k: v.detach() for k, v in params.items()}, W)
            x = core.sample(den.denoise, z0.expand(M, -1, -1).contiguous(), sched, cfg.ddim_steps)
            dist = torch.cdist(x, data)                                          # (M, S, n_max)
            dist = dist.masked_fill(mask[:, None, :] == 0, big)
            two = torch.topk(dist, 2, dim=-1, largest=False).values
            mem = (two[..., 0] < cfg.k * two[..., 1]).cpu().numpy()
            # score error: per-dimension MSE of ε̂ against the ε implied by the exact GMM score
            se = torch.zeros(M, device=dev)
            for i, t in enumerate(se_t):
                a, s = float(ab[t].sqrt()), float((1 - ab[t]).sqrt())
                xt = a * fresh + s * se_eps[i]
                eps_true = -s * core.gmm_score(xt, a, s, cfg.mu)
                se += ((den.eps(xt.expand(M, -1, -1), t) - eps_true) ** 2).mean((-1, -2))
            se /= len(se_t)
            mm = core.mmd2(x, ref.expand(M, -1, -1))
            finite = torch.isfinite(x).all(-1).all(-1)
            a, s = float(ab[t_small].sqrt()), float((1 - ab[t_small]).sqrt())
            tr = torch.stack([((den.eps(a * data + s * e, t_small) - e) ** 2).mean(-1) for e in loss_eps_train])
            train_loss = (tr.mean(0) * mask).sum(1) / counts
            te = torch.stack([((den.eps((a * fresh + s * e).expand(M, -1, -1), t_small) - e) ** 2).mean((-1, -2))
                              for e in loss_eps_test]).mean(0)
        rows = []
        for m, (n, s_) in enumerate(models):
            if step > int(stop[m]):
                continue
            f, lo, hi = core.fmem_ci(mem[m], n_boot=300, seed=step + m)
            rows.append(dict(n=n, seed=s_, step=step, f_mem=f, f_lo=lo, f_hi=hi, score_err=float(se[m]),
                             mmd2=float(mm[m]) if bool(finite[m]) else float("nan"),
                             train_loss=float(train_loss[m]), test_loss=float(te[m])))
        return rows

    total = int(stop.max())
    ckpts = sorted(set(checkpoint_steps(total, cfg.ckpt_per_decade)) | {int(v) for v in stop.tolist()}
                   | {int(v) for v in extra_steps if 0 < int(v) <= total})
    gen_train = torch.Generator().manual_seed(cfg.seed + 1)   # CPU draws, then moved: any device, same noise
    rows = evaluate(0)
    step = 0
    for target in ckpts[1:]:
        while step < target:
            active = (step < stop).float()
            t = torch.randint(1, sched.T, (M, n_max), generator=gen_train).to(dev)
            eps = torch.randn(M, n_max, d, generator=gen_train).to(dev)
            a = ab[t].sqrt()[..., None]
            xt = a * data + (1 - ab[t]).sqrt()[..., None] * eps
            out = forward(params, xt, emb_table[t])
            # Σ_m of each active model's MSE: the models' gradients are independent; a frozen model gets 0
            loss = ((((out - eps) ** 2).mean(-1) * mask).sum(1) / counts * active).sum()
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            step += 1
            for m in torch.nonzero(stop == step).flatten().tolist():
                # model m has had its S steps: zero its Adam moments so that (zero gradient) it never moves again
                for p in params.values():
                    opt.state[p]["exp_avg"][m].zero_()
                    opt.state[p]["exp_avg_sq"][m].zero_()
        rows += evaluate(step)
        p_(step / total, f"step {step:,}/{total:,}")

    curves = pd.DataFrame(rows)
    # the closed-form (empirical-optimal) sampler on the same training sets, same noise
    cf = []
    with torch.no_grad():
        for m, (n, _) in enumerate(models):
            tr = data[m, :n]
            x = core.sample(core.closed_form_denoiser(tr), z0, sched, cfg.ddim_steps)
            cf.append(float(core.memorised(x, tr, cfg.k).float().mean()))
    return curves, cf


def _gmean(v) -> float:
    v = np.asarray(v, float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else float("nan")


def summarise(curves: pd.DataFrame, ns, steps_per_n) -> tuple[pd.DataFrame, dict]:
    per = pd.DataFrame([dict(n=n, seed=s, **model_times(g)) for (n, s), g in curves.groupby(["n", "seed"])])
    cols = ["tau_gen", "tau_gen_mmd", "tau_mem", "tau_mem_half", "tau_gap", "f_final"]
    summary = per.groupby("n")[cols].agg(_gmean).reset_index()
    summary["f_final"] = per.groupby("n")["f_final"].mean().to_numpy()
    fits = {
        "tau_mem_slope": core.loglog_slope(summary.n, summary.tau_mem),
        "tau_mem_half_slope": core.loglog_slope(summary.n, summary.tau_mem_half),
        "tau_gen_slope": core.loglog_slope(summary.n, summary.tau_gen),
        "tau_gen_mmd_slope": core.loglog_slope(summary.n, summary.tau_gen_mmd),
        "tau_gap_slope": core.loglog_slope(summary.n, summary.tau_gap),
    }
    return summary, fits


# --------------------------------------------------------------------------- random features (§3)


@bounded(cfg=KNOBS.fields(RFConfig, group="rf"), _budget=_rf_budget)
def run_rf(cfg: RFConfig, device=None, progress=None) -> dict:
    """Losses, spectra and timescales of the random-features model for each ψ_n (bounds and the live budget:
    see the declaration; ``run_rf.__wrapped__`` runs the command line's larger settings unchecked)."""
    cfg = cfg.normalised()
    if len(cfg.psi_ns) < 2:
        raise InputError("pick at least two different values of ψ_n (the slopes need two)")
    p_ = as_progress(progress)
    dev = get_device(device)
    d, p = cfg.d, int(round(cfg.psi_p * cfg.d))
    psi_p = p / d
    gen = torch.Generator().manual_seed(cfg.seed)
    W = torch.randn(p, d, generator=gen).to(dev)
    consts = rf_constants(cfg.t)
    delta = consts["delta"]
    xt = torch.randn(cfg.n_test, d, generator=gen).to(dev)
    Ut, Vt = feature_moments(xt, W, cfg.t, cfg.test_draws, gen)
    taus = np.logspace(-1, 6.5, 121)
    curves, spectra, rows = [], [], []
    for i, psi_n in enumerate(cfg.psi_ns):
        n = max(2, int(round(psi_n * d)))
        x = torch.randn(n, d, generator=gen).to(dev)
        draws = max(4, cfg.samples // n)
        U, V = feature_moments(x, W, cfg.t, draws, gen)
        out = rf_losses(U, V, Ut, Vt, delta, psi_p, taus, d)
        lam = np.sort(out["eigvals"])
        lo, hi = bulk_edges(consts, psi_p, n / d)
        k0 = max(0, p - n - d)                               # the δ peak holds p − n − d eigenvalues
        lam_min = float(lam[k0]) if n + d < p else float("nan")
        gap = out["test"] - out["train"]
        gap_inf = gap[-1]
        test_min = float(out["test"].min())
        tau_gen = core.first_crossing(taus, out["test"], 1 - 0.9 * (1 - test_min), above=False)
        rows.append(dict(psi_n=n / d, n=n, draws=draws, lambda_min=lam_min, lambda_min_theory=lo,
                         rho1_upper_theory=hi,
                         tau_mem=psi_p / (delta * lam_min), tau_mem_theory=tau_mem_theory(consts, psi_p, n / d),
                         tau_mem_gap=core.first_crossing(taus, gap, 0.5 * gap_inf), tau_gen=tau_gen,
                         loss_train_10=float(np.interp(np.log(10), np.log(taus), out["train"])),
                         loss_test_10=float(np.interp(np.log(10), np.log(taus), out["test"])),
                         loss_train_inf=out["train_inf"], test_min=test_min,
                         mass_delta=float(np.mean(lam < math.sqrt(consts["s2"] * lo))),
                         mass_rho1=float(np.mean((lam >= math.sqrt(consts["s2"] * lo)) & (lam <= 3 * hi))),
                         mass_rho2=float(np.mean(lam > 3 * hi))))
        curves.append(pd.DataFrame({"psi_n": n / d, "tau": taus, "train": out["train"], "test": out["test"]}))
        spectra.append(pd.DataFrame({"psi_n": n / d, "eigenvalue": lam}))
        p_((i + 1) / len(cfg.psi_ns), f"ψ_n = {psi_n:g}")
    summary = pd.DataFrame(rows)
    return {"config": asdict(cfg), "p": p, "constants": consts, "summary": summary,
            "curves": pd.concat(curves, ignore_index=True), "spectra": pd.concat(spectra, ignore_index=True),
            "tau_mem_slope": core.loglog_slope(summary.psi_n, summary.tau_mem),
            "tau_mem_gap_slope": core.loglog_slope(summary.psi_n, summary.tau_mem_gap),
            "tau_mem_theory_slope": core.loglog_slope(summary.psi_n, summary.tau_mem_theory),
            "tau_gen_slope": core.loglog_slope(summary.psi_n, summary.tau_gen)}


# --------------------------------------------------------------------------- the window over seeds (issue #32)

#: f_mem is read off at these multiples of n (the collapse test: f_mem at fixed τ/n should not depend on n).
FIXED_TAU_OVER_N = (100, 200, 300)
#: Secondary memorisation thresholds reported beside the 2% one (never deciding).
SECONDARY_THRESHOLDS = (0.05, 0.10)


def sustained_crossing(steps, f, threshold: float) -> float:
    """The step where f_mem crosses ``threshold`` for the last time from below (log-linear between checkpoints);
    NaN when it ends below (``model_times``' τ_mem rule, for any threshold)."""
    steps, f = np.asarray(steps, float), np.asarray(f, float)
    if f[-1] < threshold:
        return float("nan")
    below = np.flatnonzero(f < threshold)
    j = int(below[-1]) if below.size else 0
    return core.first_crossing(steps[j:], f[j:], threshold)


def slope_interval(per: pd.DataFrame, col: str, n_boot: int = 2000, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float, float]:
    """Log-log slope of ``col`` against n (through the geometric mean over seeds at each n) and its stratified
    bootstrap interval: seeds resampled with replacement within each n, ``n_boot`` times (percentile interval).
    Models whose time is missing (NaN) are left out; NaN when an n has none."""
    ns = sorted(per.n.unique())
    logs = []
    for n in ns:
        v = per.loc[per.n == n, col].to_numpy(float)
        v = v[np.isfinite(v) & (v > 0)]
        if not v.size:
            return float("nan"), float("nan"), float("nan")
        logs.append(np.log(v))
    x = np.log(np.asarray(ns, float))
    xc = x - x.mean()

    def fit(y):
        return float((xc * (np.asarray(y) - np.mean(y))).sum() / (xc * xc).sum())

    rng = np.random.default_rng(seed)
    boots = np.array([fit([lg[rng.integers(0, lg.size, lg.size)].mean() for lg in logs]) for _ in range(n_boot)])
    lo, hi = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return fit([lg.mean() for lg in logs]), float(lo), float(hi)


def analyse_window(curves: pd.DataFrame, steps_per_n: float, seed: int = 0) -> dict:
    """Per model: τ_gen, τ_mem (``model_times``), τ_mem at the secondary thresholds, the crossing's place in its run
    (τ_mem / S), and f_mem at τ = 100 n, 200 n, 300 n. Per n: geometric means of the times, mean and spread of the
    fractions. The slopes of τ_mem, τ_gen (and the secondary definitions) against n with stratified bootstrap
    intervals."""
    rows = []
    for (n, s), g in curves.groupby(["n", "seed"]):
        g = g.sort_values("step")
        row = dict(n=int(n), seed=int(s), run=float(steps_per_n * n), **model_times(g))
        for thr in SECONDARY_THRESHOLDS:
            row[f"tau_mem_{round(100 * thr)}"] = sustained_crossing(g.step, g.f_mem, thr)
        row["fraction_of_run"] = row["tau_mem"] / row["run"]
        for r in FIXED_TAU_OVER_N:
            at = g.loc[g.step == int(round(r * n)), "f_mem"]
            row[f"f_at_{r}n"] = float(at.iloc[0]) if len(at) else float("nan")
        rows.append(row)
    per = pd.DataFrame(rows)
    times = ["tau_gen", "tau_gen_mmd", "tau_mem", "tau_mem_half", "tau_gap"] + \
        [f"tau_mem_{round(100 * t)}" for t in SECONDARY_THRESHOLDS]
    fracs = ["fraction_of_run", "f_final"] + [f"f_at_{r}n" for r in FIXED_TAU_OVER_N]
    summary = per.groupby("n")[times].agg(_gmean).reset_index()
    for col in fracs:
        summary[col] = per.groupby("n")[col].mean().to_numpy()
        summary[f"{col}_sd"] = per.groupby("n")[col].std(ddof=1).to_numpy()
    summary["fraction_of_run_max"] = per.groupby("n")["fraction_of_run"].max().to_numpy()
    summary["memorised"] = per.groupby("n")["tau_mem"].apply(lambda v: int(np.isfinite(v).sum())).to_numpy()
    summary["seeds"] = per.groupby("n").size().to_numpy()
    fits = {}
    for col in times:
        slope, lo, hi = slope_interval(per, col, seed=seed)
        fits[f"{col}_slope"], fits[f"{col}_slope_ci"] = slope, [lo, hi]
    return {"per_model": per, "summary": summary, **fits}


@bounded(cfg=KNOBS.fields(WindowConfig, group="window_study"), _budget=_study_budget)
def window_study(cfg: WindowConfig = STUDY_WINDOW, device=None, progress=None) -> dict:
    """The memorisation window over sizes and seeds (issue #32): each n trains its seeds as one stacked ensemble
    (no padding) for S = steps_per_n · n steps, with checkpoints at 100 n, 200 n, 300 n added to the log-spaced
    ones; ``analyse_window`` gives τ_mem per seed and size, the slopes with bootstrap intervals, where each
    crossing falls in its run, and f_mem at fixed τ/n. The closed-form sampler runs on every training set."""
    cfg = cfg.normalised()
    if len(cfg.ns) < 2:
        raise InputError("pick at least two different training-set sizes n (the slopes need two)")
    p = as_progress(progress)
    weight = np.cumsum([0] + [n * n for n in cfg.ns]) / sum(n * n for n in cfg.ns)    # cost ∝ n · S ∝ n²
    parts, cf = [], []
    for i, n in enumerate(cfg.ns):
        curves, cf_n = train_models(cfg, [(n, s) for s in range(cfg.seeds)],
                                    extra_steps=[int(round(r * n)) for r in FIXED_TAU_OVER_N], device=device,
                                    progress=p.sub(weight[i], weight[i + 1], f"n = {n}: "))
        parts.append(curves)
        cf += [dict(n=n, seed=s, f_mem=f) for s, f in enumerate(cf_n)]
    curves = pd.concat(parts, ignore_index=True)
    return {"config": asdict(cfg), "curves": curves, "closed_form": pd.DataFrame(cf),
            "n_params": n_params(cfg.width, cfg.d), **analyse_window(curves, cfg.steps_per_n, cfg.seed)}


# --------------------------------------------------------------------------- random features over seeds


def seed_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean over seeds and its Student-t interval (NaN with fewer than two finite values)."""
    from scipy import stats

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float(v.mean()) if v.size else float("nan"), float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


@bounded(cfg=KNOBS.fields(RFConfig, group="rf_study"), **KNOBS.specs(group="rf_study_seeds"),
         _budget=_rf_study_budget)
def rf_study(cfg: RFConfig = RF_STUDY, seeds: int = 3, device=None, progress=None) -> dict:
    """``run_rf`` for seeds cfg.seed, …, cfg.seed + seeds − 1 (new W, data and noise each): the slopes of the
    measured τ_mem (spectrum), the loss-gap τ_mem, the Thm 3.2 edge and τ_gen against ψ_n, per seed and as a mean
    with its Student-t interval; the first seed's curves and spectra for the page."""
    p = as_progress(progress)
    runs = [run_rf.__wrapped__(RFConfig(**{**asdict(cfg), "seed": cfg.seed + i}), device=device,
                               progress=p.part(i, seeds, f"seed {cfg.seed + i}: ")) for i in range(seeds)]
    per_seed = pd.DataFrame([dict(seed=cfg.seed + i, **{k: r[k] for k in RF_SLOPES}) for i, r in enumerate(runs)])
    summary = pd.concat([r["summary"].assign(seed=cfg.seed + i) for i, r in enumerate(runs)], ignore_index=True)
    fits = {}
    for k in RF_SLOPES:
        mean, lo, hi = seed_interval(per_seed[k])
        fits[k], fits[f"{k}_ci"] = mean, [lo, hi]
    return {"config": asdict(cfg), "seeds": seeds, "p": runs[0]["p"], "constants": runs[0]["constants"],
            "per_seed": per_seed, "summary": summary, "curves": runs[0]["curves"], "spectra": runs[0]["spectra"],
            **fits}


RF_SLOPES = ("tau_mem_slope", "tau_mem_gap_slope", "tau_mem_theory_slope", "tau_gen_slope")
