"""Tables for the page's charts, computed from shipped results: means over seeds, long formats, the collapse table.

Light (numpy and pandas, no torch): the page calls these on results read from the store, so every aggregation a
chart shows is made here, not on the page.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: f_mem = 0 is drawn at this floor on a log axis.
FMEM_FLOOR = 1e-3


def window_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Checkpoint curves averaged over seeds, per n and step (f_mem with its interval, the score error, the
    train/test gap at t = 0.01), with τ/n and the log-axis value of f_mem (0 drawn at ``FMEM_FLOOR``)."""
    mean = curves.groupby(["n", "step"], as_index=False).agg(
        f_mem=("f_mem", "mean"), f_lo=("f_lo", "mean"), f_hi=("f_hi", "mean"), score_err=("score_err", "mean"),
        mmd2=("mmd2", "mean"), train_loss=("train_loss", "mean"), test_loss=("test_loss", "mean"),
        seeds=("seed", "nunique"))
    mean["steps_over_n"] = mean.step / mean.n
    mean["gap"] = mean.test_loss - mean.train_loss
    mean["n_label"] = "n = " + mean.n.astype(str)
    for col in ("f_mem", "f_lo", "f_hi"):
        mean[f"{col}_plot"] = mean[col].clip(lower=FMEM_FLOOR)
    return mean[mean.step > 0].reset_index(drop=True)


def seed_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Every model's own f_mem curve against τ/n (one line per n and seed), for the collapse chart."""
    out = curves[curves.step > 0][["n", "seed", "step", "f_mem"]].copy()
    out["steps_over_n"] = out.step / out.n
    out["f_plot"] = out.f_mem.clip(lower=FMEM_FLOOR)
    out["n_label"] = "n = " + out.n.astype(str)
    out["model"] = out.n_label + ", seed " + out.seed.astype(str)
    return out.reset_index(drop=True)


def timescales(per_model: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """τ_gen and τ_mem per model and their geometric means per n, long: (n, seed or None, time, steps, kind)."""
    rows = []
    for name, label in (("tau_gen", "τ_gen"), ("tau_mem", "τ_mem")):
        for r in per_model.itertuples():
            rows.append(dict(n=int(r.n), seed=int(r.seed), time=label, steps=float(getattr(r, name)), kind="seed"))
        for r in summary.itertuples():
            rows.append(dict(n=int(r.n), seed=-1, time=label, steps=float(getattr(r, name)),
                             kind="geometric mean"))
    out = pd.DataFrame(rows)
    return out[np.isfinite(out.steps)].reset_index(drop=True)


def collapse_table(summary: pd.DataFrame, fixed=(100, 200, 300)) -> pd.DataFrame:
    """f_mem at τ = 100 n, 200 n, 300 n per n (mean ± sd over seeds), long, for the collapse test."""
    rows = []
    for r in summary.itertuples():
        for k in fixed:
            rows.append(dict(n=int(r.n), tau_over_n=k, f_mem=float(getattr(r, f"f_at_{k}n")),
                             sd=float(getattr(r, f"f_at_{k}n_sd"))))
    out = pd.DataFrame(rows)
    out["lo"], out["hi"] = (out.f_mem - out.sd).clip(lower=0), out.f_mem + out.sd
    out["when"] = "τ = " + out.tau_over_n.astype(str) + " n"
    return out


def per_seed_table(per_model: pd.DataFrame) -> pd.DataFrame:
    """The per-model table a reader checks: τ_mem, its place in the run, τ_gen, f_mem at fixed τ/n."""
    cols = {"n": "n", "seed": "seed", "tau_mem": "τ_mem (2%)", "fraction_of_run": "τ_mem / S",
            "tau_mem_5": "τ_mem (5%)", "tau_mem_10": "τ_mem (10%)", "tau_gen": "τ_gen", "f_at_100n": "f(100 n)",
            "f_at_200n": "f(200 n)", "f_at_300n": "f(300 n)"}
    return per_model[[c for c in cols if c in per_model]].rename(columns=cols)


def fm_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """CFM and EFM curves averaged over seeds per n, arm and step (f_mem, its spread over seeds, the distance to
    held-out digits, the VM and CFM losses)."""
    g = curves.groupby(["n", "arm", "step"])
    out = g.agg(f_mem=("f_mem", "mean"), f_sd=("f_mem", "std"), nn_test=("nn_test", "mean"),
                nn_train=("nn_train", "mean"), vm_loss=("vm_loss", "mean"), cfm_loss=("cfm_loss", "mean"),
                seeds=("seed", "nunique")).reset_index()
    out["f_sd"] = out.f_sd.fillna(0.0)
    out["lo"], out["hi"] = (out.f_mem - out.f_sd).clip(lower=0), (out.f_mem + out.f_sd).clip(upper=1)
    out["target"] = out.arm.map({"cfm": "CFM (stochastic target)", "efm": "EFM (closed-form target)"})
    out["n_label"] = "n = " + out.n.astype(str)
    return out[out.step > 0].reset_index(drop=True)


def fm_references(references: pd.DataFrame) -> pd.DataFrame:
    """The references averaged per n: the closed-form sampler (memorises) and fresh real digits (generalise)."""
    return references.groupby(["n", "source"], as_index=False).agg(f_mem=("f_mem", "mean"),
                                                                   nn_test=("nn_test", "mean"),
                                                                   nn_train=("nn_train", "mean"))


def fm_table(per_n: pd.DataFrame, references: pd.DataFrame) -> pd.DataFrame:
    """The CFM/EFM table of the page (and the closing note): per n, f_mem and the median distance to held-out
    digits for both arms and both references, and the paired difference with its interval."""
    refs = fm_references(references).set_index(["n", "source"])
    rows = []
    for r in per_n.itertuples():
        cf, fresh = refs.loc[(r.n, "closed-form sampler")], refs.loc[(r.n, "fresh real digits")]
        rows.append({"n": int(r.n), "pairs": int(r.pairs), "f_mem CFM": r.f_cfm, "f_mem EFM": r.f_efm,
                     "Δf_mem (EFM − CFM)": r.f_diff, "95% CI": f"[{r.f_diff_lo:+.3f}, {r.f_diff_hi:+.3f}]",
                     "f_mem closed form": float(cf.f_mem), "d_test CFM": r.nn_cfm, "d_test EFM": r.nn_efm,
                     "d_test closed form": float(cf.nn_test), "d_test real digits": float(fresh.nn_test)})
    return pd.DataFrame(rows)


def _iv(lo: float, hi: float, fmt: str) -> str:
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


def fm_reading(res: dict) -> str:
    """One sentence of what the CFM/EFM comparison shows, read from its result (the page's "What to notice"):
    the direction of the paired f_mem difference (beyond seed noise or not, by its 95% interval), which arm fits
    the closed-form velocity better, and whether the samples' distance to held-out digits differs."""
    pairs = res["fm_pairs"]
    d, (lo, hi) = float(res["fm_diff"]), res["fm_diff_ci"]
    r, (r_lo, r_hi) = float(res["fm_nn_rel_diff"]), res["fm_nn_rel_ci"]
    f_c, f_e = float(pairs.f_cfm.mean()), float(pairs.f_efm.mean())
    if lo > 0:
        which = "the noiseless target does not hold memorisation back: EFM memorises slightly more than CFM"
    elif hi < 0:
        which = "EFM memorises less than CFM"
    else:
        which = "EFM and CFM memorise alike within seed noise"
    vm_c, vm_e = float(pairs.vm_cfm.mean()), float(pairs.vm_efm.mean())
    fit = (f"EFM fits û* more closely (VM loss {vm_e:.3f} against {vm_c:.3f})" if vm_e < vm_c else
           f"CFM fits û* more closely (VM loss {vm_c:.3f} against {vm_e:.3f})")
    if r_lo <= 0 <= r_hi:
        dist = (f"the samples of both lie as far from held-out digits (EFM − CFM {100 * r:+.1f}%, 95% CI "
                f"{_iv(100 * r_lo, 100 * r_hi, '+.1f')}%)")
    else:
        dist = (f"EFM's samples lie {'farther from' if r > 0 else 'closer to'} held-out digits ({100 * r:+.1f}%, "
                f"95% CI {_iv(100 * r_lo, 100 * r_hi, '+.1f')}%)")
    return (f"{which}, f_mem {f_e:.3f} against {f_c:.3f} at the last checkpoint (Δ = {d:+.3f}, 95% CI "
            f"{_iv(lo, hi, '+.3f')} over {len(pairs)} paired seeds); {fit}, and {dist}.")


def rf_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Random-features train/test losses, long (ψ_n, τ, loss, value) with a label per ψ_n."""
    out = curves.melt(id_vars=["psi_n", "tau"], value_vars=["train", "test"], var_name="loss", value_name="value")
    out["psi"] = "ψ_n = " + out.psi_n.map("{:g}".format)
    return out


def rf_spectra(spectra: pd.DataFrame) -> pd.DataFrame:
    """Eigenvalues of U on a log₁₀ scale (floored at 10⁻⁶) with a label per ψ_n."""
    out = spectra.copy()
    out["log10"] = np.log10(np.clip(out.eigenvalue.to_numpy(), 1e-6, None))
    out["psi"] = "ψ_n = " + out.psi_n.map("{:g}".format)
    return out


def rf_timescales(summary: pd.DataFrame) -> pd.DataFrame:
    """Random-features timescales per ψ_n (and seed when there are several), long."""
    names = {"tau_mem": "τ_mem, measured spectrum", "tau_mem_theory": "τ_mem, Thm 3.2 edge",
             "tau_mem_gap": "train/test gap at ½ its final value", "tau_gen": "τ_gen: test loss 90% of its drop"}
    ids = ["psi_n"] + (["seed"] if "seed" in summary else [])
    out = summary.melt(id_vars=ids, value_vars=list(names), var_name="which", value_name="tau")
    out["which"] = out.which.map(names)
    if "seed" not in out:
        out["seed"] = 0
    return out[np.isfinite(out.tau)].reset_index(drop=True)


def hybrid_long(table: pd.DataFrame) -> pd.DataFrame:
    """Hybrid sampling's table (one row per switch time τ) as is, sorted by τ."""
    return table.sort_values("tau").reset_index(drop=True)


def power_fit(summary: pd.DataFrame, col: str, x: str = "n", points: int = 20) -> pd.DataFrame:
    """The least-squares line of log ``col`` against log ``x`` through the rows (as ``core.loglog_slope``), sampled
    between the smallest and largest ``x`` for drawing."""
    xs, ys = summary[x].to_numpy(float), summary[col].to_numpy(float)
    ok = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
    if ok.sum() < 2:
        return pd.DataFrame({x: [], col: []})
    b, a = np.polyfit(np.log(xs[ok]), np.log(ys[ok]), 1)
    grid = np.exp(np.linspace(np.log(xs[ok].min()), np.log(xs[ok].max()), points))
    return pd.DataFrame({x: grid, col: np.exp(a + b * np.log(grid))})


def rf_edges(summary: pd.DataFrame) -> pd.DataFrame:
    """The lower edge of ρ₁ per ψ_n: measured λ_min (mean and range over seeds) against Thm 3.2's formula, and the
    spectrum's three masses against their predicted values (1 − (1 + ψ_n)/ψ_p, ψ_n/ψ_p, 1/ψ_p)."""
    g = summary.groupby("psi_n")
    out = g.agg(lambda_min=("lambda_min", "mean"), lambda_min_lo=("lambda_min", "min"),
                lambda_min_hi=("lambda_min", "max"), lambda_edge_theory=("lambda_min_theory", "first"),
                mass_delta=("mass_delta", "mean"), mass_rho1=("mass_rho1", "mean"),
                mass_rho2=("mass_rho2", "mean")).reset_index()
    out["ratio"] = out.lambda_min / out.lambda_edge_theory
    return out


# --------------------------------------------------------------------------- one model's timescales (no torch)


def first_crossing(steps, values, threshold: float, above: bool = True) -> float:
    """First step where ``values`` crosses ``threshold`` (log-linear interpolation in steps); NaN if never."""
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    hit = values >= threshold if above else values <= threshold
    idx = np.flatnonzero(hit)
    if idx.size == 0:
        return float("nan")
    i = int(idx[0])
    if i == 0 or steps[i - 1] <= 0:
        return float(steps[i])
    v0, v1 = values[i - 1], values[i]
    frac = 0.0 if v1 == v0 else (threshold - v0) / (v1 - v0)
    frac = min(1.0, max(0.0, frac))
    return float(np.exp(np.log(steps[i - 1]) + frac * (np.log(steps[i]) - np.log(steps[i - 1]))))


MEM_THRESHOLD = 0.02   # f_mem ≥ 2% (10 of 500 samples); fresh GMM samples score ≈ 1e-4
GAP_THRESHOLD = 0.2    # test − train denoising loss at t = 0.01


def model_times(g: pd.DataFrame) -> dict:
    """Timescales of one model from its checkpoints.

    τ_gen: the score error has made 90% of its drop (MMD² ≤ 0.05 as a second definition).
    τ_mem: onset of *sustained* memorisation, the crossing of f_mem ≥ 2% after which it never falls back below
    (an untrained network can pile its samples onto a few points of a tiny training set, a transient that is not
    memorisation); NaN if f_mem ends below 2%. Also the first time f_mem reaches half its final value, and the
    onset of the train/test loss gap (≥ 0.2).
    """
    g = g.sort_values("step")
    st, f, se, mm = g.step.to_numpy(), g.f_mem.to_numpy(), g.score_err.to_numpy(), g.mmd2.to_numpy()
    gap = g.test_loss.to_numpy() - g.train_loss.to_numpy()
    i_min = int(np.nanargmin(se))
    se_min = se[i_min]
    tau_gen = first_crossing(st, se, se[0] - 0.9 * (se[0] - se_min), above=False)
    tau_gen_mmd = first_crossing(st, mm, 0.05, above=False)
    below = np.flatnonzero(f < MEM_THRESHOLD)
    j = int(below[-1]) if below.size else 0
    tau_mem = first_crossing(st[j:], f[j:], MEM_THRESHOLD) if f[-1] >= MEM_THRESHOLD else float("nan")
    tau_mem_half = first_crossing(st[i_min:], f[i_min:], 0.5 * f[-1]) if f[-1] >= MEM_THRESHOLD else float("nan")
    tau_gap = first_crossing(st, gap, GAP_THRESHOLD)
    return dict(tau_gen=tau_gen, tau_gen_mmd=tau_gen_mmd, tau_mem=tau_mem, tau_mem_half=tau_mem_half,
                tau_gap=tau_gap, f_final=float(f[-1]), se_min=float(se_min))


def model_times_table(curves: pd.DataFrame) -> pd.DataFrame:
    """``model_times`` of every (n, seed) model of a run's checkpoint curves, one row each."""
    return pd.DataFrame([dict(n=n, seed=s, **model_times(g)) for (n, s), g in curves.groupby(["n", "seed"])])
