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


def closed_form_targets(xt: torch.Tensor, t: torch.Tensor, train: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Bertrand et al.'s closed-form target û*(x_t, t) = Σ_i λ_i (x⁽ⁱ⁾ − x_t)/(1 − t), λ = softmax_i(−‖x_t − t x⁽ⁱ⁾‖²/
    2(1 − t)²), over each model's whole training set (EFM with M ≥ n: the exact empirical-optimal velocity).

    xt: (M, B, d), t: (M, B, 1), train: (M, N, d) padded, mask: (M, N) with 1 for real points → (M, B, d)."""
    s2 = 2 * (1 - t) ** 2                                                     # (M, B, 1)
    # −‖x − t x_i‖²/2(1−t)² without the ‖x‖² term (constant in i): (2t x·x_i − t²‖x_i‖²)/2(1−t)²
    logits = (2 * t * (xt @ train.mT) - t * t * (train * train).sum(-1)[:, None, :]) / s2
    logits = logits.masked_fill(mask[:, None, :] == 0, float("-inf"))
    lam = torch.softmax(logits, -1)                                           # (M, B, N)
    return (lam @ train - xt) / (1 - t)


def train_flows(train: torch.Tensor, mask: torch.Tensor, closed_form: torch.Tensor, group: torch.Tensor, width: int,
                steps: int, batch: int, lr: float, init_seeds: list, seed: int, checkpoints: list, evaluate,
                device=None, progress=None) -> list:
    """Flow matching for M models at once (a stacked ensemble of the SM B network), x_t = (1 − t)x₀ + t x₁,
    x₀ ~ N(0, I), t ~ U(0, 1), a minibatch of ``batch`` training points per model and step, Adam.

    Model m regresses on the conditional target x₁ − x₀ (CFM) or, where ``closed_form[m]``, on the closed-form
    target û*(x_t, t) over its whole training set (EFM). Models of the same ``group`` (the same training set and
    initialisation) draw the same x₀, t and batch positions, so a CFM and an EFM model of one group differ only in
    their target (a paired design); each group has its own draws. ``evaluate(step, params)`` runs at step 0 and
    at each step of ``checkpoints`` (and the last); its rows are returned."""
    p = as_progress(progress)
    dev = get_device(device)
    M, N, d = train.shape
    G = int(group.max()) + 1
    counts = mask.sum(1).to(dev)                                                # (M,)
    train, mask, closed_form, group = train.to(dev), mask.to(dev), closed_form.to(dev), group.to(dev)
    params = {k: v.to(dev).requires_grad_(True) for k, v in network.init_params(M, d, width, init_seeds).items()}
    opt = torch.optim.Adam(list(params.values()), lr=lr, foreach=True)
    gen = torch.Generator().manual_seed(seed)                                  # CPU draws, then moved
    rows = list(evaluate(0, params))
    targets = sorted({int(c) for c in checkpoints if 0 < int(c) <= steps} | {int(steps)})
    step = 0
    for target in targets:
        while step < target:
            u = torch.rand(G, batch, generator=gen).to(dev)[group]                # (M, B): the group's draws
            x0 = torch.randn(G, batch, d, generator=gen).to(dev)[group]
            t = torch.rand(G, batch, 1, generator=gen).to(dev)[group]
            idx = (u * counts[:, None]).long().clamp_max(N - 1)                  # batch positions in each set
            x1 = torch.gather(train, 1, idx[..., None].expand(-1, -1, d))
            xt = (1 - t) * x0 + t * x1
            with torch.no_grad():
                target_u = torch.where(closed_form[:, None, None], closed_form_targets(xt, t, train, mask), x1 - x0)
            loss = ((network.velocity(params, xt, t) - target_u) ** 2).mean((-1, -2)).sum()
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            step += 1
        rows += evaluate(step, params)
        p(step / steps, f"step {step:,}/{steps:,}")
    return rows
