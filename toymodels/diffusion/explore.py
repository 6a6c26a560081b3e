"""The page's smaller views: the diffusion visualiser, closed-form flow matching and hybrid sampling.

* ``process_2d`` / ``process_digits``: forward noising with a time slider, and the reverse process run
  with the closed-form denoiser (it lands on a training point) and with a learned MLP (it can land between).
* ``flow_alignment``: Bertrand et al. Finding 1, cos(û*(x_t, t), x₁ − x₀) against t in low and high dimension.
* ``hybrid_sampling``: Bertrand et al. Finding 3, the closed-form velocity for t ≤ τ, a learned one after.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device, seed_everything
from toymodels.diffusion import core, learned
from toymodels.topic import OneOf, Range, as_progress, bounded

SEED = Range(0, 2**31 - 1, integer=True)
#: The visualiser's 2-D training sets: stable ids (links store these) and their labels.
DATASETS_2D = {"moons": "2-D: two moons", "ring": "2-D: ring of 8 Gaussians", "gmm2": "2-D: the SM B mixture (d = 2)"}


def fit_denoiser(x: np.ndarray, width: int = 64, steps: int = 3000, lr: float = 6e-4, seed: int = 0,
                 device=None, progress=None, batch: int | None = None) -> learned.Denoiser:
    """Train one ε-prediction MLP (the SM B network) on the rows of x, full batch, Adam, DDPM schedule.

    Random draws come from a CPU generator and are then moved to the device (same noise on every device)."""
    p = as_progress(progress)
    dev = get_device(device)
    seed_everything(seed)
    data = torch.from_numpy(np.asarray(x, np.float32)).to(dev)[None]            # (1, n, d)
    n, d = data.shape[1:]
    params = {k: v.to(dev).requires_grad_(True) for k, v in learned.init_params(1, d, width, [seed]).items()}
    opt = torch.optim.Adam(list(params.values()), lr=lr, foreach=True)
    sched = core.Schedule("ddpm")
    ab = torch.tensor(sched.alpha_bar(), dtype=torch.float32, device=dev)
    emb = learned.time_embedding(sched.T, width).to(dev)
    gen = torch.Generator().manual_seed(seed + 1)
    for k in range(steps):
        rows = data if batch is None or batch >= n else data[:, torch.randint(0, n, (batch,), generator=gen).to(dev)]
        t = torch.randint(1, sched.T, rows.shape[:2], generator=gen).to(dev)
        eps = torch.randn(rows.shape, generator=gen).to(dev)
        xt = ab[t].sqrt()[..., None] * rows + (1 - ab[t]).sqrt()[..., None] * eps
        loss = ((learned.forward(params, xt, emb[t]) - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if k % 200 == 0:
            p(k / steps, f"training step {k:,}/{steps:,}")
    return learned.Denoiser({k: v.detach() for k, v in params.items()}, width)


def _fmem_np(samples: np.ndarray, train: np.ndarray) -> float:
    return float(core.memorised(torch.from_numpy(samples), torch.from_numpy(train)).float().mean())


@bounded(dataset=OneOf(*DATASETS_2D), n=Range(4, 512, integer=True), train_steps=Range(0, 20_000, integer=True),
         width=Range(8, 256, integer=True), n_samples=Range(50, 2000, integer=True),
         sampler_steps=Range(10, 200, integer=True), seed=SEED)
def process_2d(dataset: str = "moons", n: int = 32, train_steps: int = 3000, width: int = 64,
               n_samples: int = 300, sampler_steps: int = 100, seed: int = 0, device=None,
               progress=None) -> dict:
    """Forward noising of a 2-D training set and the reverse process with both denoisers (DDPM, DDIM).

    Returns frames for a time slider: the noised training points at 11 times, and the reverse trajectories
    (samples at every sampler step) of the closed-form and the learned denoiser from the same noise.
    """
    dev = get_device(device)
    x = core.two_d_data(dataset, n, seed)
    train = torch.from_numpy(x)
    sched = core.Schedule("ddpm")
    gen = torch.Generator().manual_seed(seed + 7)
    # forward process: x_u = a(u) x_0 + σ(u) ε with one ε per point (a continuous path as u moves)
    eps = torch.randn(train.shape, generator=gen)
    us = np.linspace(0, 1, 11)
    fwd = []
    for u in us:
        a, s = (float(v) for v in sched.coeffs(u))
        pts = (a * train + s * eps).numpy()
        fwd.append(pd.DataFrame({"u": round(float(u), 2), "x": pts[:, 0], "y": pts[:, 1], "id": np.arange(n)}))
    z = torch.randn(n_samples, 2, generator=gen).to(dev)
    with torch.no_grad():
        cf_x, cf_path = core.sample(core.closed_form_denoiser(train.to(dev)), z, sched, sampler_steps,
                                    return_path=True)
    den = fit_denoiser(x, width=width, steps=train_steps, seed=seed, device=dev, progress=progress)
    with torch.no_grad():
        lx, l_path = core.sample(lambda v, a, s, u: den.denoise(v[None], a, s, u)[0], z, sched, sampler_steps,
                                 return_path=True)
    cf_x, cf_path, lx, l_path = (t.cpu() for t in (cf_x, cf_path, lx, l_path))
    grid = core.sampling_grid(sched, sampler_steps)
    keep = np.unique(np.round(np.linspace(0, sampler_steps, 11)).astype(int))
    rev = []
    for name, path in (("closed form", cf_path), ("learned MLP", l_path)):
        for k in keep:
            pts = path[k].numpy()
            rev.append(pd.DataFrame({"denoiser": name, "u": round(float(grid[k]), 3), "step": int(k),
                                     "x": pts[:, 0], "y": pts[:, 1], "id": np.arange(n_samples)}))
    return {"train": pd.DataFrame({"x": x[:, 0], "y": x[:, 1]}), "forward": pd.concat(fwd, ignore_index=True),
            "reverse": pd.concat(rev, ignore_index=True),
            "fmem_closed_form": _fmem_np(cf_x.numpy(), x), "fmem_learned": _fmem_np(lx.numpy(), x)}


@bounded(n=Range(2, 1797, integer=True), n_samples=Range(1, 64, integer=True),
         sampler_steps=Range(10, 200, integer=True), seed=SEED)
def process_digits(n: int = 200, n_samples: int = 16, sampler_steps: int = 100, seed: int = 0,
                   device=None) -> dict:
    """Forward noising of digits and closed-form DDIM sampling on n training digits (d = 64)."""
    dev = get_device(device)
    X, mean = core.digits()
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(X), n, replace=False)
    train = torch.from_numpy(X[idx])
    sched = core.Schedule("ddpm")
    gen = torch.Generator().manual_seed(seed + 3)
    eps = torch.randn(64, generator=gen)
    us = np.linspace(0, 1, 11)
    frames = np.stack([(float(sched.coeffs(u)[0]) * train[0] + float(sched.coeffs(u)[1]) * eps).numpy()
                       for u in us]) + mean
    z = torch.randn(n_samples, 64, generator=gen).to(dev)
    with torch.no_grad():
        x = core.sample(core.closed_form_denoiser(train.to(dev)), z, sched, sampler_steps).cpu()
    dist = torch.cdist(x, train)
    nearest = train[dist.argmin(1)]
    return {"u": us, "forward": frames, "samples": x.numpy() + mean, "nearest": nearest.numpy() + mean,
            "fmem": float(core.memorised(x, train).float().mean()),
            "nearest_dist": dist.min(1).values.numpy()}


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


# --------------------------------------------------------------------------- Kamb & Ganguli's ELS machine


def image_patches(imgs: torch.Tensor, P: int) -> torch.Tensor:
    """Every P×P patch (circular boundary) of images (B, H, W): (B, H·W, P²), row-major over pixels."""
    r = P // 2
    padded = torch.nn.functional.pad(imgs[:, None], (r, r, r, r), mode="circular")
    return torch.nn.functional.unfold(padded, P).transpose(1, 2)


def els_denoiser(train_imgs: torch.Tensor, P: int = 3):
    """Equivariant local score machine (Kamb & Ganguli Eq. 9-10) as a denoiser for ``core.sample``.

    Each pixel's x̂_0 is the posterior-weighted centre of *all* P×P training patches from any location,
    weights softmax(−‖x_Ω − a φ‖²/2σ²) computed from the pixel's own P×P neighbourhood Ω only.
    """
    H, W = train_imgs.shape[-2:]
    phi = image_patches(train_imgs, P).reshape(-1, P * P)                     # (N·H·W, P²)
    centres = phi[:, (P * P) // 2].contiguous()
    phi_sq = (phi * phi).sum(1)

    def denoise(x, a, s, u):
        B = x.shape[0]
        q = image_patches(x.view(B, H, W), P).reshape(-1, P * P)              # (B·H·W, P²)
        w = torch.softmax(core.posterior_logits(q, phi, a, s, phi_sq), dim=-1)
        return (w @ centres).view(B, H * W)

    return denoise


@bounded(n=Range(2, 500, integer=True), P=OneOf(3, 5, 7), n_samples=Range(1, 16, integer=True),
         sampler_steps=Range(10, 200, integer=True), seed=SEED)
def els_digits(n: int = 100, P: int = 3, n_samples: int = 8, sampler_steps: int = 50, seed: int = 0) -> dict:
    """ELS vs ideal (closed-form) sampling on n digits from the same noise: the ELS machine makes patch mosaics."""
    X, mean = core.digits()
    idx = np.random.default_rng(seed).choice(len(X), n, replace=False)
    train = torch.from_numpy(X[idx])
    sched = core.Schedule("ddpm")
    z = torch.randn(n_samples, 64, generator=torch.Generator().manual_seed(seed + 11))
    with torch.no_grad():
        ideal = core.sample(core.closed_form_denoiser(train), z, sched, sampler_steps)
        els = core.sample(els_denoiser(train.view(n, 8, 8), P), z, sched, sampler_steps)
    d = torch.cdist(els, train)
    return {"ideal": ideal.numpy() + mean, "els": els.numpy() + mean, "els_nearest": train[d.argmin(1)].numpy() + mean,
            "fmem_ideal": float(core.memorised(ideal, train).float().mean()),
            "fmem_els": float(core.memorised(els, train).float().mean()),
            "els_nn_dist": d.min(1).values.numpy(), "P": P, "n": n}
