"""Closed-form flow matching (Bertrand, Gagneux, Massias, Emonet, arXiv 2506.03719).

* ``flow_alignment``: Finding 1, cos(û*(x_t, t), x₁ − x₀) against t in low and high dimension.
* ``hybrid_sampling``: Finding 3, the closed-form velocity for t ≤ τ, a learned one after.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from toymodels.topic import Range, as_progress, bounded

from . import core
from .config import SEED
from .training import fit_denoiser


@bounded(n=Range(10, 2000, integer=True), draws=Range(50, 2000, integer=True), seed=SEED)
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


@bounded(n=Range(8, 512, integer=True), train_steps=Range(100, 20_000, integer=True),
         width=Range(8, 256, integer=True), n_samples=Range(100, 2000, integer=True),
         steps=Range(10, 500, integer=True), seed=SEED)
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
