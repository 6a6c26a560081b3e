"""The paper's neural-network comparison (Abstract: "neural networks that solve modular arithmetic also learn
block-circulant features"): a two-layer network f(x) = W₂ σ(W₁ x) with a quadratic activation, on the same one-hot
inputs and random split as the kernel machine, trained full batch with AdamW and weight decay until it groks; its
neural feature matrix W₁ᵀW₁ is scored with the kernel machine's circulant deviation (``rfm.circulant_deviation``).

Torch lives here; the claim reads the stored result (``analysis``-style numbers) without it.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from toymodels.topic import bounded

from .config import KNOBS, NNConfig
from .rfm import circulant_deviation, one_hot_inputs, split


def _act(h: torch.Tensor, kind: str) -> torch.Tensor:
    return h * h if kind == "quadratic" else torch.relu(h)


def network_agop(W1: torch.Tensor, W2: torch.Tensor, X: torch.Tensor, activation: str) -> np.ndarray:
    """The network's average gradient outer product over the inputs X: (1/n) Σ_i J_iᵀ J_i with J_i = ∂f(x_i)/∂x =
    W₂ diag(σ'(W₁ x_i)) W₁ (p × 2p): the object RFM iterates (its M is AGOP^s), for the network (2p × 2p, float64).
    Uncentred, as the neural feature ansatz compares it with W₁ᵀW₁."""
    with torch.no_grad():
        W1, W2, X = W1.double(), W2.double(), X.double()
        h = X @ W1.T
        slope = 2 * h if activation == "quadratic" else (h > 0).double()
        out = torch.zeros(W1.shape[1], W1.shape[1], dtype=torch.float64, device=W1.device)
        for i in range(0, len(X), 256):                     # (chunk, p, 2p) at a time: bounded memory
            J = torch.einsum("ck,ik,kd->icd", W2, slope[i:i + 256], W1)
            out += torch.einsum("icd,ice->de", J, J)
        return (out / len(X)).cpu().numpy()


@bounded(cfg=KNOBS.fields(NNConfig, group="nn"))
def train_nn(cfg: NNConfig = NNConfig(), device=None) -> dict:  # noqa: B008
    """Train one network. Returns its curves (step, train and test accuracy and loss, D of W₁ᵀW₁); D of W₁ᵀW₁ and
    of the network's AGOP (over the training inputs) at initialisation and at the end; W₁ᵀW₁'s deviation from the
    other wrapped diagonals (Hankel for x + y) at the end; whether it grokked (test accuracy ≥ ``stop_at`` at the
    end); the steps where test accuracy first reached 0.5 and ``stop_at``; W₁ᵀW₁ at the end (2p × 2p, float32)."""
    from toymodels.device import get_device

    dev = get_device(device)
    g = torch.Generator().manual_seed(cfg.seed)       # drawn on the CPU, then moved: the same init on any device
    data = split(cfg.p, cfg.op, cfg.train_frac, cfg.seed)
    Xtr = torch.as_tensor(one_hot_inputs(data["train_pairs"], cfg.p), dtype=torch.float32, device=dev)
    Xte = torch.as_tensor(one_hot_inputs(data["test_pairs"], cfg.p), dtype=torch.float32, device=dev)
    ytr = torch.as_tensor(data["train_labels"], dtype=torch.long, device=dev)
    yte = torch.as_tensor(data["test_labels"], dtype=torch.long, device=dev)
    d, h = 2 * cfg.p, cfg.width
    W1 = (torch.randn(h, d, generator=g) / np.sqrt(d)).to(dev).requires_grad_()
    W2 = (torch.randn(cfg.p, h, generator=g) / np.sqrt(h)).to(dev).requires_grad_()
    opt = torch.optim.AdamW([W1, W2], lr=cfg.lr, weight_decay=cfg.weight_decay)

    def forward(X):
        return _act(X @ W1.T, cfg.activation) @ W2.T

    def nfm() -> np.ndarray:
        w = W1.detach().double()
        return (w.T @ w).cpu().numpy()

    d0 = circulant_deviation(nfm(), cfg.op)
    a0 = circulant_deviation(network_agop(W1, W2, Xtr, cfg.activation), cfg.op)
    rows, above = [], 0
    for step in range(1, cfg.max_steps + 1):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(Xtr), ytr)
        loss.backward()
        opt.step()
        if step % cfg.eval_every == 0 or step == cfg.max_steps:
            with torch.no_grad():
                out_tr, out_te = forward(Xtr), forward(Xte)
                row = {"step": step, "train_loss": float(torch.nn.functional.cross_entropy(out_tr, ytr)),
                       "test_loss": float(torch.nn.functional.cross_entropy(out_te, yte)),
                       "train_acc": float((out_tr.argmax(1) == ytr).float().mean()),
                       "test_acc": float((out_te.argmax(1) == yte).float().mean()),
                       "deviation": circulant_deviation(nfm(), cfg.op)}
            rows.append(row)
            above = above + 1 if row["test_acc"] >= cfg.stop_at else 0
            if above >= cfg.patience:
                break
    curves = {k: [r[k] for r in rows] for k in rows[0]}
    test = np.asarray(curves["test_acc"])

    def first(level):
        hit = np.flatnonzero(test >= level)
        return int(curves["step"][hit[0]]) if hit.size else None

    agop_end = network_agop(W1, W2, Xtr, cfg.activation)
    return {"config": asdict(cfg), "curves": curves, "deviation_init": d0, "deviation_end": curves["deviation"][-1],
            "agop_deviation_init": a0, "agop_deviation_end": circulant_deviation(agop_end, cfg.op),
            "nfm_hankel_deviation_end": circulant_deviation(nfm(), "x-y" if cfg.op == "x+y" else "x+y"),
            "grokked": bool(test[-1] >= cfg.stop_at), "train_acc_end": curves["train_acc"][-1],
            "test_acc_end": float(test[-1]), "step_half": first(0.5), "step_grokked": first(cfg.stop_at),
            "steps": int(curves["step"][-1]), "nfm": nfm().astype(np.float32), "device": str(dev)}


@bounded(cfg=KNOBS.fields(NNConfig, group="nn"), **KNOBS.specs(group="nn_study"))
def nn_seeds(cfg: NNConfig, first_seed: int, seeds: int, device=None) -> dict:
    """``seeds`` networks on splits ``first_seed`` … (each its own split and initialisation): per seed, whether it
    grokked, D of W₁ᵀW₁ at initialisation and at the end, and the steps; the curves of every seed; the first seed's
    W₁ᵀW₁ for the page."""
    from dataclasses import replace

    per, curves, first_nfm = [], [], None
    for s in range(first_seed, first_seed + seeds):
        r = train_nn.__wrapped__(replace(cfg, seed=s), device=device)
        per.append({"seed": s, "grokked": r["grokked"], "deviation_init": r["deviation_init"],
                    "deviation_end": r["deviation_end"], "agop_deviation_init": r["agop_deviation_init"],
                    "agop_deviation_end": r["agop_deviation_end"],
                    "nfm_hankel_deviation_end": r["nfm_hankel_deviation_end"], "test_acc_end": r["test_acc_end"],
                    "train_acc_end": r["train_acc_end"], "step_half": r["step_half"],
                    "step_grokked": r["step_grokked"], "steps": r["steps"]})
        curves += [{"seed": s, **{k: v[i] for k, v in r["curves"].items()}} for i in range(len(r["curves"]["step"]))]
        if first_nfm is None:
            first_nfm = r["nfm"]
    import pandas as pd

    from toymodels.device import environment

    return {"config": asdict(cfg), "first_seed": first_seed, "per_seed": pd.DataFrame(per),
            "curves": pd.DataFrame(curves), "nfm_first": first_nfm, "environment": environment(r["device"])}
