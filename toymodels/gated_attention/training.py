"""Gated attention: training the toy LM (AdamW, warmup and cosine decay) and the measurement pass."""
from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from toymodels.device import get_device
from toymodels.topic import InputError, Progress, as_progress

from .config import HIST_BINS, Config
from .data import make_data
from .model import GatedLM, _uniform_floor, first_token_attention, massive_activation, massive_stats, sink_rate


def _adamw_step(params: dict, state: dict, lr: torch.Tensor, step: int, wd: float,
                betas=(0.9, 0.95), eps: float = 1e-8, no_decay: tuple = ()) -> None:
    """AdamW (decoupled weight decay on matrices only, not on the names in ``no_decay``) with a
    per-instance learning rate lr (E,)."""
    b1, b2 = betas
    c1, c2 = 1 - b1 ** step, 1 - b2 ** step
    with torch.no_grad():
        for k, p in params.items():
            if p.grad is None:
                continue
            m, v = state.setdefault(k, (torch.zeros_like(p), torch.zeros_like(p)))
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            lr_e = lr.reshape(-1, *([1] * (p.dim() - 1)))
            if wd and p.dim() == 3 and k not in no_decay:      # (E, in, out) matrices and embeddings
                p.mul_(1 - lr_e * wd)
            p.sub_(lr_e * (m / c1) / ((v / c2).sqrt() + eps))
            p.grad = None


def _lr_factor(step: int, cfg: Config) -> float:
    """Linear warmup, then cosine decay to 10% (the paper's schedule, shortened)."""
    if step < cfg.warmup:
        return (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t)))


@torch.no_grad()
def measure(model: GatedLM, tokens: torch.Tensor) -> dict:
    """The measurement pass: per instance and layer, F-Attn, sink rate, M-Act, gate mean and histogram."""
    logits, tr = model.forward(tokens[:, :-1], trace=True)
    V = logits.shape[-1]
    ce = F.cross_entropy(logits.reshape(-1, V), tokens[:, 1:].reshape(-1).repeat(model.E), reduction="none")
    out = {"loss": ce.reshape(model.E, -1).mean(1).cpu().numpy(),
           "fattn": np.stack([first_token_attention(a) for a in tr["attn"]], 1),      # (E, L, H)
           "sink": np.stack([sink_rate(a) for a in tr["attn"]], 1),                   # (E, L, H)
           "mact": np.stack([massive_activation(h) for h in tr["hidden"]], 1)}        # (E, L)
    ms = [massive_stats(h, tokens[:, :-1]) for h in tr["hidden"]]
    for key in ("median", "ratio", "pos", "token", "dim", "first"):
        out[f"mact_{key}"] = np.stack([m[key] for m in ms], 1)                       # (E, L)
    if tr["gate"][0] is not None:
        g = [gt.detach().reshape(model.E, -1) for gt in tr["gate"]]
        out["gate_mean"] = np.stack([x.mean(1).cpu().numpy() for x in g], 1)        # (E, L)
        edges = torch.linspace(0, 1, HIST_BINS + 1)
        out["gate_hist"] = np.stack([np.stack([np.histogram(x[e].float().cpu().numpy(), bins=edges.numpy())[0]
                                               for e in range(model.E)]) for x in g], 1)   # (E, L, bins)
    out["attn"] = [a.cpu() for a in tr["attn"]]
    return out


def _add_gate(old: GatedLM, cfg: Config) -> GatedLM:
    """The gated model whose non-gate weights are those of ``old`` (an ungated model): paper App. A.7."""
    new = GatedLM(cfg, old.E, old.device)
    with torch.no_grad():
        for k, p in old.params.items():
            q = new.params[k]
            if q.shape == p.shape:
                q.copy_(p)
            else:                                   # fused [query | gate]: keep the query columns
                q[..., : p.shape[-1]].copy_(p)
    return new


def train(cfg: Config, lrs: list[float] | None = None, device=None, progress: Progress | None = None,
          gate_from_step: int = 0, return_model: bool = False) -> dict:
    """Train E = len(lrs) instances of one variant side by side (same init, same batches).

    With ``gate_from_step`` > 0 the model trains *without* the gate until that step, then the gate is
    added (its weights freshly initialised, the others kept) and training continues (paper App. A.7).
    Returns curves (DataFrame: instance, step, train_loss, val_loss, fattn, gate_mean), the final
    measurement on a held-out batch, the sample sequence's attention maps and timing.
    """
    p = as_progress(progress)
    if not 0 <= gate_from_step < cfg.steps:
        raise InputError(f"gate_from_step must be in [0, {cfg.steps})")
    lrs = [cfg.lr] if lrs is None else [float(x) for x in lrs]
    dev = get_device(device)
    model = GatedLM(replace(cfg, variant="baseline") if gate_from_step else cfg, len(lrs), dev)
    data = make_data(cfg)
    rng = np.random.default_rng([cfg.seed, 1])
    T1 = cfg.seq_len + 1                                               # T inputs, T targets
    val = torch.as_tensor(data.sample(cfg.eval_batch, T1, np.random.default_rng([cfg.data_seed, 99])), device=dev)
    lr0 = torch.tensor(lrs, device=dev)
    state: dict = {}
    rows, t0, diverged = [], time.perf_counter(), np.zeros(len(lrs), bool)
    for step in range(cfg.steps):
        if gate_from_step and step == gate_from_step:
            model, state = _add_gate(model, cfg), {}
        batch = torch.as_tensor(data.sample(cfg.batch_size, T1, rng), device=dev)
        loss = model.loss(batch)
        finite = torch.isfinite(loss)
        loss.where(finite, torch.zeros_like(loss)).sum().backward()
        for w in model.params.values():                               # a diverged instance stays frozen
            if w.grad is not None:
                w.grad.nan_to_num_(0.0, 0.0, 0.0)
        diverged |= ~finite.cpu().numpy() | (loss.detach().cpu().numpy() > 20)
        _adamw_step(model.params, state, lr0 * _lr_factor(step, cfg), step + 1, cfg.weight_decay,
                    no_decay=() if cfg.decay_embeddings else ("emb",))
        if (step + 1) % cfg.eval_every == 0 or step == 0 or step + 1 == cfg.steps:
            m = measure(model, val)
            for e in range(model.E):
                rows.append({"instance": e, "lr": lrs[e], "step": step + 1,
                             "train_loss": float(loss[e].detach()), "val_loss": float(m["loss"][e]),
                             "fattn": float(m["fattn"][e].mean()),
                             "mact_ratio": float(m["mact_ratio"][e].max()),
                             "first_max": float(m["mact_first"][e].max()),
                             "gate_mean": float(m["gate_mean"][e].mean()) if "gate_mean" in m else float("nan")})
            p((step + 1) / cfg.steps, f"{cfg.variant} step {step + 1}/{cfg.steps}")
    seconds = time.perf_counter() - t0
    final = measure(model, val)
    # the same model at twice the training length (RoPE extrapolation)
    long = torch.as_tensor(data.sample(cfg.eval_batch // 2 or 1, 2 * cfg.seq_len + 1,
                                       np.random.default_rng([cfg.data_seed, 98])), device=dev)
    if cfg.pos == "rope":
        final2 = measure(model, long)
    else:
        nan = np.full((model.E, cfg.n_layers, cfg.n_heads), np.nan)
        final2 = {"loss": nan[:, 0, 0], "fattn": nan}
    out = {"curves": pd.DataFrame(rows), "final": {k: v for k, v in final.items() if k != "attn"},
           "long": {"loss": final2["loss"], "fattn": final2["fattn"]},
           "sample_tokens": val[0, :-1].cpu().numpy(),
           "sample_attn": np.stack([a[:, 0] for a in final["attn"]], 1).astype(np.float16),  # (E, L, H, T, T)
           "diverged": diverged, "seconds": seconds,
           "bayes_ce": data.bayes_ce(val.cpu().numpy()), "expected_entropy": data.expected_entropy(val.cpu().numpy()),
           "triggers": data.triggers, "delimiter_token": -1 if data.delim is None else int(data.delim),
           "floor": _uniform_floor(cfg.seq_len), "floor_2x": _uniform_floor(2 * cfg.seq_len)}
    if return_model:
        out["model"] = model
    return out


