"""Closed-form flow matching (Bertrand, Gagneux, Massias, Emonet, arXiv 2506.03719).

* ``flow_alignment``: Finding 1, cos(û*(x_t, t), x₁ − x₀) against t in low and high dimension.
* ``hybrid_sampling``: Finding 3, the closed-form velocity for t ≤ τ, a learned one after.
"""
from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.topic import InputError, as_progress, bounded

from . import core, network, training
from .config import FLOW_STUDY, FLOW_STUDY_BUDGET, KNOBS, N_FRESH, FlowConfig, _flow_budget
from .training import fit_denoiser


@bounded(**KNOBS.specs(group="flow_alignment"))
def flow_alignment(n: int = 1000, ts: list | None = None, draws: int = 400, seed: int = 0) -> pd.DataFrame:
    """cos(û*(x_t, t), x₁ − x₀) against t for 2-moons (d = 2), digits (d = 64) and Gaussian data (d = 1024).

    x₁ is a training point, x₀ ~ N(0, I), x_t = (1 − t)x₀ + t x₁ (Bertrand et al.'s convention).
    """
    ts = list(np.round(np.linspace(0.02, 0.98, 25), 3)) if ts is None else ts
    rng = np.random.default_rng(seed)
    X_dig, _ = core.digits()
    sets = {"2-moons (d = 2)": core.two_d_data("moons", n, seed),
            "digits (d = 64)": X_dig[rng.choice(len(X_dig), min(n, len(X_dig)), replace=False)],
            "Gaussian (d = 1024)": rng.standard_normal((n, 1024)).astype(np.float32)}
    rows = []
    gen = torch.Generator().manual_seed(seed)
    for name, X in sets.items():
        train = torch.from_numpy(X)
        i = torch.randint(0, len(X), (draws,), generator=gen)
        x1 = train[i]
        x0 = torch.randn(x1.shape, generator=gen)
        for t in ts:
            xt = (1 - t) * x0 + t * x1
            u = core.flow_velocity(xt, train, float(t))
            cos = torch.nn.functional.cosine_similarity(u, x1 - x0, dim=-1).numpy()
            q = np.quantile(cos, [0.1, 0.5, 0.9])
            rows.append(dict(data=name, d=X.shape[1], t=float(t), cos_mean=float(cos.mean()), cos_q10=q[0],
                             cos_median=q[1], cos_q90=q[2]))
    return pd.DataFrame(rows)


@bounded(**KNOBS.specs(group="hybrid_sampling"))
def hybrid_sampling(n: int = 128, train_steps: int = 4000, width: int = 64, taus: list | None = None,
                    n_samples: int = 500, steps: int = 100, seed: int = 0, progress=None) -> dict:
    """Bertrand et al. Finding 3 on the GMM (d = 8): û* for t ≤ τ, the learned velocity for t > τ.

    The learned velocity comes from the SM B network trained as a DDPM denoiser (early-stopped, so it
    generalises): at flow time t, x_t = t x₁ + (1 − t) x₀ has the DDPM signal level √ᾱ = t/√(t² + (1−t)²),
    so D(x, t) = D_DDPM(x/√(t² + (1−t)²)) and u = (D − x)/(1 − t).
    """
    p = as_progress(progress)
    taus = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] if taus is None else taus
    x = core.gmm_sample(n, 8, 1.0, seed)
    train = torch.from_numpy(x)
    den = fit_denoiser(x, width=width, steps=train_steps, seed=seed, device="cpu", progress=p.sub(0.0, 0.6))
    ab = core.Schedule("ddpm").alpha_bar()

    def learned_v(v, t):
        r = math.sqrt(t * t + (1 - t) ** 2)
        a = t / r
        t_idx = int(np.argmin(np.abs(np.sqrt(ab) - a)))
        a_d, s_d = math.sqrt(ab[t_idx]), math.sqrt(1 - ab[t_idx])
        x0 = den.denoise((v / r)[None], a_d, s_d, t_idx / 999)[0]
        return (x0 - v) / (1 - t)

    z = torch.randn(n_samples, 8, generator=torch.Generator().manual_seed(seed + 5))
    rows = []
    ref = torch.from_numpy(core.gmm_sample(1000, 8, 1.0, seed + 99))
    with torch.no_grad():
        for j, tau in enumerate(taus):
            def vel(v, t, tau=tau):
                return core.flow_velocity(v, train, t) if t < tau else learned_v(v, t)

            xs = core.flow_sample(vel, z, steps=steps)
            d = torch.cdist(xs, train).min(1).values
            rows.append(dict(tau=float(tau), f_mem=float(core.memorised(xs, train).float().mean()),
                             nn_dist=float(d.median()), mmd2=float(core.mmd2(xs, ref))))
            p(0.6 + 0.4 * (j + 1) / len(taus), f"τ = {tau:g}")
    return {"table": pd.DataFrame(rows), "n": n, "train_steps": train_steps}


# --------------------------------------------------------------------------- CFM against EFM (target stochasticity)


def digit_split(seed: int, n_test: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits (centred, d = 64) split once: (X, held-out indices, fresh reference indices, training pool)."""
    X, _ = core.digits()
    perm = np.random.default_rng(seed + 2025).permutation(len(X))
    return X, perm[:n_test], perm[n_test:n_test + N_FRESH], perm[n_test + N_FRESH:]


def _fm_evaluate(cfg: FlowConfig, labels: list, train, mask, test, z, pairs, dev):
    """The evaluation at a checkpoint: Euler samples from the same noise z, their f_mem (Eq. 6) against each
    model's own training set, the median distance to the nearest held-out and training digit, and the fit on fixed
    (x_t, t) pairs: MSE per dimension against the closed-form target (VM) and against the conditional one (CFM)."""
    x0e, t_e, x1e = pairs
    big = torch.finfo(torch.float32).max
    M = train.shape[0]

    def evaluate(step, params):
        with torch.no_grad():
            P = {k: v.detach() for k, v in params.items()}
            x = z.expand(M, -1, -1).contiguous()
            for i in range(cfg.euler_steps):
                t = torch.full((M, x.shape[1], 1), i / cfg.euler_steps, device=dev)
                x = x + network.velocity(P, x, t) / cfg.euler_steps
            dist = torch.cdist(x, train).masked_fill(mask[:, None, :] == 0, big)
            two = torch.topk(dist, 2, dim=-1, largest=False).values
            mem = (two[..., 0] < cfg.k * two[..., 1]).cpu().numpy()
            nn_train = two[..., 0].median(-1).values
            nn_test = torch.cdist(x, test.expand(M, -1, -1)).min(-1).values.median(-1).values
            xt = (1 - t_e) * x0e + t_e * x1e
            v = network.velocity(P, xt, t_e)
            vm = ((v - training.closed_form_targets(xt, t_e, train, mask)) ** 2).mean((-1, -2))
            cfm = ((v - (x1e - x0e)) ** 2).mean((-1, -2))
        rows = []
        for m, (n, s, arm) in enumerate(labels):
            f, lo, hi = core.fmem_ci(mem[m], n_boot=300, seed=step + m)
            rows.append(dict(n=n, seed=s, arm=arm, step=step, f_mem=f, f_lo=lo, f_hi=hi,
                             nn_test=float(nn_test[m]), nn_train=float(nn_train[m]), vm_loss=float(vm[m]),
                             cfm_loss=float(cfm[m])))
        return rows

    return evaluate


@bounded(cfg=KNOBS.fields(FlowConfig, group="flow"), _budget=lambda cfg, **_: _flow_budget(cfg, FLOW_STUDY_BUDGET))
def cfm_vs_efm(cfg: FlowConfig = FLOW_STUDY, device=None, progress=None) -> dict:
    """Bertrand et al.: does generalisation come from the stochastic target? Train the same network with the
    conditional target (CFM) and the closed-form one (EFM) on the same digits, paired, and measure f_mem and the
    distance of samples to held-out digits at log-spaced checkpoints; the exact closed-form sampler (Euler on
    û*, t ≤ 0.999) on each training set is the memorising reference, fresh real digits the generalising one."""
    cfg = cfg.normalised()
    if not cfg.arms:
        raise InputError("pick at least one of the two targets, cfm or efm")
    p = as_progress(progress)
    dev = get_device(device)
    X, test_idx, fresh_idx, pool = digit_split(cfg.seed, cfg.n_test)
    sets = {(n, s): np.random.default_rng(1000 * cfg.seed + 17 * n + s).choice(pool, n, replace=False)
            for n in cfg.ns for s in range(cfg.seeds)}
    labels = [(n, s, arm) for n in cfg.ns for s in range(cfg.seeds) for arm in cfg.arms]
    M, N, d = len(labels), max(cfg.ns), X.shape[1]
    train, mask = torch.zeros(M, N, d), torch.zeros(M, N)
    for m, (n, s, _) in enumerate(labels):
        train[m, :n] = torch.from_numpy(X[sets[(n, s)]])
        mask[m, :n] = 1.0
    train, mask = train.to(dev), mask.to(dev)
    test = torch.from_numpy(X[test_idx]).to(dev)
    gen = torch.Generator().manual_seed(cfg.seed + 4242)
    z = torch.randn(cfg.n_samples, d, generator=gen).to(dev)                  # sampler noise, same every time
    E = 256                                                                    # fixed (x_t, t) pairs for the fit
    u = torch.rand(E, generator=gen).to(dev)
    idx = (u[None, :] * mask.sum(1)[:, None]).long().clamp_max(N - 1)
    x1e = torch.gather(train, 1, idx[..., None].expand(-1, -1, d))
    x0e = torch.randn(E, d, generator=gen).to(dev).expand(M, -1, -1)
    t_e = torch.rand(E, 1, generator=gen).to(dev).expand(M, -1, -1)
    evaluate = _fm_evaluate(cfg, labels, train, mask, test, z, (x0e, t_e, x1e), dev)
    ckpts = [int(round(100 * 10 ** (j / cfg.ckpt_per_decade))) for j in range(40)]
    groups = list(sets)
    rows = training.train_flows(train, mask, torch.tensor([arm == "efm" for *_, arm in labels]),
                                torch.tensor([groups.index((n, s)) for n, s, _ in labels]), cfg.width, cfg.steps,
                                cfg.batch, cfg.lr, [1000 * cfg.seed + 13 * n + s for n, s, _ in labels],
                                cfg.seed + 1, [c for c in ckpts if c < cfg.steps], evaluate, device=dev,
                                progress=p.sub(0.0, 0.9, "training: "))
    curves = pd.DataFrame(rows)
    # references: the exact closed-form sampler on each training set, and fresh real digits
    ref, fresh = [], torch.from_numpy(X[fresh_idx]).to(dev)
    with torch.no_grad():
        for (n, s), ids in sets.items():
            tr = torch.from_numpy(X[ids]).to(dev)
            x = core.flow_sample(lambda v, t, tr=tr: core.flow_velocity(v, tr, t), z, steps=cfg.euler_steps)
            ref.append(dict(n=n, seed=s, source="closed-form sampler",
                            f_mem=float(core.memorised(x, tr, cfg.k).float().mean()),
                            nn_test=float(torch.cdist(x, test).min(-1).values.median()),
                            nn_train=float(torch.cdist(x, tr).min(-1).values.median())))
            ref.append(dict(n=n, seed=s, source="fresh real digits",
                            f_mem=float(core.memorised(fresh, tr, cfg.k).float().mean()),
                            nn_test=float(torch.cdist(fresh, test).min(-1).values.median()),
                            nn_train=float(torch.cdist(fresh, tr).min(-1).values.median())))
        p(1.0, "references")
    return {"config": asdict(cfg), "curves": curves, "references": pd.DataFrame(ref),
            "n_params": network.n_params(cfg.width, d), **compare_arms(curves)}


def paired_interval(diffs, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of paired differences and its Student-t interval over the pairs (NaN with fewer than two pairs)."""
    from scipy import stats

    d = np.asarray(diffs, float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return float(d.mean()) if d.size else float("nan"), float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + level / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def compare_arms(curves: pd.DataFrame) -> dict:
    """CFM against EFM at the last checkpoint, pair by pair (same n, same seed): f_mem (EFM − CFM) and the median
    distance to held-out digits (EFM − CFM)/CFM, with Student-t intervals over the pairs (all n pooled, and per n);
    and how much each arm's VM loss still moved over the second half of training (convergence)."""
    if set(curves.arm) != {"cfm", "efm"}:
        return {}
    last = curves[curves.step == curves.step.max()]
    wide = last.pivot_table(index=["n", "seed"], columns="arm", values=["f_mem", "nn_test", "vm_loss"])
    pairs = pd.DataFrame({"n": wide.index.get_level_values(0), "seed": wide.index.get_level_values(1),
                          "f_cfm": wide["f_mem"]["cfm"].to_numpy(), "f_efm": wide["f_mem"]["efm"].to_numpy(),
                          "nn_cfm": wide["nn_test"]["cfm"].to_numpy(), "nn_efm": wide["nn_test"]["efm"].to_numpy(),
                          "vm_cfm": wide["vm_loss"]["cfm"].to_numpy(), "vm_efm": wide["vm_loss"]["efm"].to_numpy()})
    pairs["f_diff"] = pairs.f_efm - pairs.f_cfm
    pairs["nn_rel_diff"] = (pairs.nn_efm - pairs.nn_cfm) / pairs.nn_cfm
    per_n = []
    for n, g in pairs.groupby("n"):
        f, f_lo, f_hi = paired_interval(g.f_diff)
        r, r_lo, r_hi = paired_interval(g.nn_rel_diff)
        per_n.append(dict(n=int(n), pairs=len(g), f_cfm=g.f_cfm.mean(), f_efm=g.f_efm.mean(), f_diff=f,
                          f_diff_lo=f_lo, f_diff_hi=f_hi, nn_cfm=g.nn_cfm.mean(), nn_efm=g.nn_efm.mean(),
                          nn_rel_diff=r, nn_rel_lo=r_lo, nn_rel_hi=r_hi))
    f, f_lo, f_hi = paired_interval(pairs.f_diff)
    r, r_lo, r_hi = paired_interval(pairs.nn_rel_diff)
    steps = np.array(sorted(curves.step.unique()))
    half = steps[np.argmin(np.abs(steps - steps[-1] / 2))]
    vm = curves.groupby(["arm", "step"]).vm_loss.mean()
    moved = {arm: float(abs(vm[(arm, steps[-1])] - vm[(arm, half)]) / vm[(arm, half)]) for arm in ("cfm", "efm")}
    return {"fm_pairs": pairs, "fm_per_n": pd.DataFrame(per_n), "fm_diff": f, "fm_diff_ci": [f_lo, f_hi],
            "fm_nn_rel_diff": r, "fm_nn_rel_ci": [r_lo, r_hi], "fm_vm_change_second_half": moved,
            "fm_half_step": int(half)}
