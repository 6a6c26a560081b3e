"""Training loops: one ε-prediction network (the SM B MLP) on a training set, full batch, Adam, DDPM schedule."""
from __future__ import annotations

import numpy as np
import torch

from toymodels.device import get_device, seed_everything
from toymodels.topic import as_progress

from . import core, network


def fit_denoiser(x: np.ndarray, width: int = 64, steps: int = 3000, lr: float = 6e-4, seed: int = 0,
                 device=None, progress=None, batch: int | None = None) -> network.Denoiser:
    """Train one ε-prediction MLP (the SM B network) on the rows of x, full batch, Adam, DDPM schedule.

    Random draws come from a CPU generator and are then moved to the device (same noise on every device)."""
    p = as_progress(progress)
    dev = get_device(device)
    seed_everything(seed)
    data = torch.from_numpy(np.asarray(x, np.float32)).to(dev)[None]            # (1, n, d)
    n, d = data.shape[1:]
    params = {k: v.to(dev).requires_grad_(True) for k, v in network.init_params(1, d, width, [seed]).items()}
    opt = torch.optim.Adam(list(params.values()), lr=lr, foreach=True)
    sched = core.Schedule("ddpm")
    ab = torch.tensor(sched.alpha_bar(), dtype=torch.float32, device=dev)
    emb = network.time_embedding(sched.T, width).to(dev)
    gen = torch.Generator().manual_seed(seed + 1)
    for k in range(steps):
        rows = data if batch is None or batch >= n else data[:, torch.randint(0, n, (batch,), generator=gen).to(dev)]
        t = torch.randint(1, sched.T, rows.shape[:2], generator=gen).to(dev)
        eps = torch.randn(rows.shape, generator=gen).to(dev)
        xt = ab[t].sqrt()[..., None] * rows + (1 - ab[t]).sqrt()[..., None] * eps
        loss = ((network.forward(params, xt, emb[t]) - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if k % 200 == 0:
            p(k / steps, f"training step {k:,}/{steps:,}")
    return network.Denoiser({k: v.detach() for k, v in params.items()}, width)
