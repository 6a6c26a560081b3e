"""The page's visualiser: forward noising and the reverse process, closed form against learned, and the ELS machine.

* ``process_2d`` / ``process_digits``: forward noising with a time slider, and the reverse process run
  with the closed-form denoiser (it lands on a training point) and with a learned MLP (it can land between).
* ``els_digits``: Kamb & Ganguli's ELS machine against the ideal (closed-form) one on digits.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.topic import bounded

from . import core
from .config import KNOBS
from .els import els_denoiser
from .training import fit_denoiser


def _fmem_np(samples: np.ndarray, train: np.ndarray) -> float:
    return float(core.memorised(torch.from_numpy(samples), torch.from_numpy(train)).float().mean())


@bounded(**KNOBS.specs(group="process_2d"))
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


@bounded(**KNOBS.specs(group="process_digits"))
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


@bounded(**KNOBS.specs(group="els_digits"))
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
