"""Width sweeps trained to convergence: the shipped experiments of the superposition toy.

``sweep`` trains every (regime, seed) model at every width (one batched model per width, all widths in one
step loop sharing data) and returns one row per model; ``fits`` the exponent α_m per regime; ``scaling`` and
``neff_sweep`` are the shipped views (the headline, and where the exponent breaks as N_eff nears m).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from toymodels.topic import as_progress

from .config import CONV_TOL, CONV_WINDOW, HEADLINE_REGIMES, M10_RECIPES, NEFF_RATIOS
from .data import feature_probs, n_eff, param_for_neff
from .measure import fit_exponent, measure, selection_share
from .training import train_alone, train_groups


def regime_probs(n: int, regimes: list[dict], E: float = 1.0) -> tuple[np.ndarray, list[int]]:
    """Distinct frequency rows for the regimes (regimes with the same profile share a row and their data)."""
    rows, index = [], []
    for rg in regimes:
        p = feature_probs(n, rg.get("alpha", 1.0), E, rg.get("profile", "power"), rg.get("tau"))
        for j, q in enumerate(rows):
            if q.shape == p.shape and np.array_equal(q, p):
                index.append(j)
                break
        else:
            rows.append(p)
            index.append(len(rows) - 1)
    return np.stack(rows), index




def sweep(n: int, ms, regimes: list[dict], steps: int, batch: int, lr: float = 1e-2, E: float = 1.0, seeds=(0,),
          lr_recipe: str = "paper-large", warmup: float = 0.05, max_steps: int | None = None, tol: float = CONV_TOL,
          device=None, progress=None, one_by_one: bool = False) -> pd.DataFrame:
    """Loss and geometry against width m for several regimes (dicts: name, gamma, profile, alpha, tau).

    All (regime, seed) models of one width form one batched model, all widths train in one loop and share data.
    ``one_by_one=True`` trains every model alone with ``train_alone`` instead (the honest loop the benchmark
    compares against; the same numbers up to float rounding). One row per (regime, seed, m) with N_eff, drift,
    convergence, the steps each model ran, and ``top_share``: of the features it represents (‖W_i‖ > 1/2), the
    share among as many most frequent ones (1 when it keeps the top ones, Eq. 4's ideal).
    """
    probs, index = regime_probs(n, regimes, E)
    ms, seeds = [int(m) for m in ms], [int(s) for s in seeds]
    combos = [(j, s) for j in range(len(regimes)) for s in seeds]
    groups = [(m, [dict(gamma=float(regimes[j]["gamma"]), seed=s, data=index[j]) for j, s in combos]) for m in ms]
    kw = dict(lr=lr, lr_recipe=lr_recipe, warmup=warmup, max_steps=max_steps, tol=tol, device=device)
    p = as_progress(progress)
    if one_by_one:
        res, total = [], len(groups) * len(combos)
        for i, (m, models) in enumerate(groups):
            per = []
            for k, md in enumerate(models):
                p((i * len(models) + k) / total, f"m = {m}: model {k + 1} of {len(models)}")
                one = train_alone(n, m, md["gamma"], md["seed"], probs[md["data"]], steps, batch, **kw)
                per.append({**one, **measure(one["W"], probs[md["data"]])})
            res.append({key: np.asarray([q[key] for q in per]) for key in
                        ("loss", "drift", "converged", "steps_run", "phi_half", "phi_one", "overlap", "overlap_rep",
                         "welch", "weak_pred", "norms")})
            res[-1]["ms_per_step"] = 1e3 * sum(q["cpu_seconds"] for q in per) / max(q["steps_run"] for q in per)
        p(1.0, "done")
    else:
        res = train_groups(n, groups, probs, steps, batch, progress=p, **kw)
    rows = []
    for (m, _), out in zip(groups, res):
        for k, (j, s) in enumerate(combos):
            rg = regimes[j]
            rows.append({"regime": rg["name"], "profile": rg.get("profile", "power"), "gamma": rg["gamma"],
                         "alpha": rg.get("alpha", float("nan")), "tau": rg.get("tau") or float("nan"),
                         "n_eff": n_eff(probs[index[j]]), "seed": s, "m": m, "loss": float(out["loss"][k]),
                         "drift": float(out["drift"][k]), "converged": bool(out["converged"][k]),
                         "steps_run": int(out["steps_run"][k]),
                         "phi_half": float(out["phi_half"][k]), "phi_one": float(out["phi_one"][k]),
                         "overlap": float(out["overlap"][k]), "overlap_rep": float(out["overlap_rep"][k]),
                         "inv_m": 1.0 / m, "welch": float(out["welch"][k]), "weak_pred": float(out["weak_pred"][k]),
                         "top_share": selection_share(out["norms"][k], probs[index[j]]),
                         "ms_per_step": float(out["ms_per_step"])})
    return pd.DataFrame(rows)


def fits(df: pd.DataFrame, min_m: float = 0) -> pd.DataFrame:
    """α_m (and R²) per regime from a width sweep, averaging seeds first, using widths ≥ ``min_m``.
    ``converged``: every run of the regime met the criterion; else the fit is a lower bound (not converged)."""
    rows = []
    for name, g in df.groupby("regime", sort=False):
        g = g[g["m"] >= min_m]
        conv = bool(g["converged"].all()) if "converged" in g else False
        a = g.groupby("m", as_index=False)[["loss", "overlap"]].mean()
        f = fit_exponent(a["m"], a["loss"])
        o = fit_exponent(a["m"], a["overlap"])
        rows.append({"regime": name, "profile": g["profile"].iloc[0], "gamma": float(g["gamma"].iloc[0]),
                     "n_eff": float(g["n_eff"].iloc[0]) if "n_eff" in g else float("nan"),
                     "max_width": int(a["m"].max()), "alpha_m": f["alpha_m"], "stderr": f["stderr"], "r2": f["r2"],
                     "C": f["C"], "overlap_slope": -o["alpha_m"], "overlap_r2": o["r2"], "converged": conv,
                     "max_drift": float(g["drift"].max()) if "drift" in g else float("nan"),
                     "label": "converged" if conv else "lower bound (not converged)"})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the shipped experiments


NEFF_FACTOR = 5.0     # default profiles: N_eff = 5 × the largest width (the issue asks for at least 4×)


def profile_regimes(n: int, max_width: int, factor: float = NEFF_FACTOR, weak: bool = True) -> list[dict]:
    """Strong (γ = −1) and weak (γ = 0.1) runs for the three profiles, each parameterised so that
    N_eff ≥ ``factor`` × the largest width (power: its exponent; exponential: τ; linear: N_eff ≈ 3n/4)."""
    target = factor * max_width
    shapes = [dict(profile="power", alpha=param_for_neff("power", n, target)),
              dict(profile="exponential", tau=param_for_neff("exponential", n, target)),
              dict(profile="linear")]
    out = []
    for sh in shapes:
        out.append(dict(name=f"strong · {sh['profile']}", gamma=-1.0, **sh))
        if weak:
            out.append(dict(name=f"weak · {sh['profile']}", gamma=0.1, **sh))
    return out


def scaling(n: int = 1000, ms=(10, 20, 40, 80, 160), steps: int = 12000, batch: int = 128,
            max_steps: int = 24000, seeds=(1, 2, 3, 4, 5), weak_profiles: bool = False, lr_recipe: str = "paper-large",
            warmup: float = 0.05, device=None, progress=None) -> dict:
    """The headline experiment, trained to convergence: strong (γ = −1, α = 1) vs weak (γ = 0.1, α = 1.5)
    superposition, and the strong (and, with ``weak_profiles``, weak) regime for three frequency profiles with
    N_eff ≥ 4 × max(m) (5× for the power law and the exponential; the linear profile's is 3n/4), every model
    for every seed. All models of one width are one batched model; each trains until the criterion holds. The
    fits and judgements are read from the table (``analysis``), not stored with it."""
    regimes = HEADLINE_REGIMES + profile_regimes(n, max(ms), weak=weak_profiles)
    df = sweep(n, ms, regimes, steps, batch, seeds=tuple(seeds), lr_recipe=lr_recipe, warmup=warmup,
               max_steps=max_steps, device=device, progress=progress)
    return {"table": df,
            "settings": {"n": n, "ms": list(ms), "steps": steps, "batch": batch, "max_steps": max_steps,
                         "seeds": [int(s) for s in seeds], "lr_recipe": lr_recipe, "warmup": warmup, "tol": CONV_TOL,
                         "window": CONV_WINDOW}}


def small_width_recipes(n: int = 1000, m: int = 10, seeds=(1, 2, 3, 4, 5), recipes=M10_RECIPES, device=None,
                        progress=None) -> dict:
    """The strong regime (γ = −1, α = 1) at one small width under several training recipes (``M10_RECIPES``):
    the paper's large-model rates (lr_b = 2/m, 0.2 at m = 10) trained briefly and to convergence, and its
    small-model rates (lr 1e-2 on W and b). One row per (recipe, seed), with the overlap beside the Welch bound."""
    p = as_progress(progress)
    parts = []
    for i, rc in enumerate(recipes):
        df = sweep(n, [m], HEADLINE_REGIMES[:1], rc["steps"], rc["batch"], seeds=tuple(seeds),
                   lr_recipe=rc["lr_recipe"], warmup=rc["warmup"], max_steps=rc["max_steps"], device=device,
                   progress=p.part(i, len(recipes), f"{rc['name']}: "))
        parts.append(df.assign(recipe=rc["name"], lr_recipe=rc["lr_recipe"], steps=rc["steps"], batch=rc["batch"]))
    return {"table": pd.concat(parts, ignore_index=True),
            "settings": {"n": n, "m": m, "seeds": [int(s) for s in seeds], "recipes": [dict(r) for r in recipes]}}


def neff_sweep(n: int = 1000, ms=(10, 20, 40, 80), ratios=NEFF_RATIOS, steps: int = 12000, batch: int = 128,
               max_steps: int = 24000, seed: int = 0, lr_recipe: str = "paper-large", warmup: float = 0.05,
               device=None, progress=None) -> dict:
    """Strong superposition (γ = −1) with the exponential profile at N_eff = ratio × max(m): where the exponent
    breaks. At N_eff ≈ m (the paper's τ = 400 rescaled to n = 1000 gives τ = 39, N_eff ≈ 78 at m ≤ 80), the few
    features that carry the mass get almost orthogonal directions and the loss falls faster than 1/m."""
    regimes = [dict(name=f"N_eff = {r:g}×{max(ms)}", gamma=-1.0, profile="exponential",
                    tau=param_for_neff("exponential", n, r * max(ms)), ratio=r) for r in ratios]
    df = sweep(n, ms, regimes, steps, batch, seeds=(seed,), lr_recipe=lr_recipe, warmup=warmup,
               max_steps=max_steps, device=device, progress=progress)
    f = fits(df)
    f.insert(1, "ratio", [r["ratio"] for r in regimes])
    f.insert(2, "tau", [r["tau"] for r in regimes])
    return {"table": df, "fits": f,
            "settings": {"n": n, "ms": list(ms), "steps": steps, "batch": batch, "max_steps": max_steps,
                         "lr_recipe": lr_recipe, "warmup": warmup, "seed": seed}}
