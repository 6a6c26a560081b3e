"""Training the attention-only transformers, many seeds at once, with the measurement curves of Olsson et al.

``train(cfg, seeds)`` trains one batched model whose instance e is seed ``seeds[e]``: its own initialisation
(``model.init_params``) and its own training batches (``data.train_rng``). Every ``eval_every`` steps it measures,
on the held-out set of the run's period mode, each instance's copy loss and each head's induction
(prefix-matching) and previous-token scores: the curves in which the phase change shows.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from toymodels.device import get_device
from toymodels.topic import as_progress

from . import data as D
from .model import copy_loss, forward, induction_scores, init_params, previous_token_scores, to_numpy


class HeldOut:
    """A held-out set on a device: tokens, periods, the loss mask, and the masks of the induction score."""

    def __init__(self, cfg, batch: D.Batch, device):
        self.batch = batch
        self.tokens = torch.as_tensor(batch.tokens, device=device)
        self.mask = torch.as_tensor(batch.mask, device=device)
        self.match = torch.as_tensor(D.prefix_match_mask(batch.tokens, batch.period), device=device)
        self.queries = torch.as_tensor(D.query_mask(batch.tokens, batch.period), device=device)


def held_out(cfg, device, period_mode: str | None = None, n: int | None = None) -> HeldOut:
    """The held-out set of ``period_mode`` (default: the run's own), ``n`` sequences (default ``eval_batch``)."""
    from dataclasses import replace

    mode = period_mode or cfg.period_mode
    c = replace(cfg, period_mode=mode)
    return HeldOut(c, D.sample_for(c, D.eval_rng(mode), n or cfg.eval_batch), device)


@torch.no_grad()
def measure(params: dict, cfg, ho: HeldOut, chunk: int | None = None, **kwargs) -> dict:
    """Per instance: copy loss (E,), induction and previous-token scores (E, L, H) on a held-out set, computed in
    chunks of ``chunk`` sequences (bounded memory; default 64 on a CPU, 256 on a GPU)."""
    E = params["W_E"].shape[0]
    n = ho.tokens.shape[0]
    chunk = chunk or (256 if ho.tokens.device.type == "cuda" else 64)
    loss_sum = torch.zeros(E, dtype=torch.float64, device=ho.tokens.device)
    count = 0.0
    ind, prev, qsum = 0.0, 0.0, 0.0
    for s in range(0, n, chunk):
        tok, mask = ho.tokens[s:s + chunk], ho.mask[s:s + chunk]
        logits, attns = forward(params, tok, cfg.d_head, want_attn=True, **kwargs)
        m = float(mask.sum())
        loss_sum += copy_loss(logits, tok, mask).double() * m
        count += m
        if attns:
            q = float(ho.queries[s:s + chunk].sum())
            ind = ind + induction_scores(attns, ho.match[s:s + chunk], ho.queries[s:s + chunk]) * q
            qsum += q
            prev = prev + previous_token_scores(attns) * tok.shape[0]
    L = cfg.n_layers
    empty = np.zeros((E, L, cfg.n_heads))
    return {"loss": (loss_sum / count).cpu().numpy(),
            "induction": ind / qsum if L else empty, "prev_token": prev / n if L else empty}


def train(cfg, seeds: list[int], device=None, progress=None, keep_params: bool = True) -> dict:
    """Train ``len(seeds)`` instances of ``cfg`` (one per seed) side by side.

    Returns ``seeds``; ``train_loss`` (E, steps) float32; ``eval_step`` (n_evals,); ``eval_loss`` (E, n_evals);
    ``induction`` and ``prev_token`` (E, n_evals, L, H); ``params`` (numpy float32, E leading) when
    ``keep_params``; ``seconds``; ``device``."""
    prog = as_progress(progress)
    dev = get_device(device)
    params = init_params(cfg, seeds, dev)
    opt = torch.optim.Adam(list(params.values()), lr=cfg.lr, betas=(0.9, 0.999))
    rngs = [D.train_rng(s) for s in seeds]
    ho = held_out(cfg, dev)
    E = len(seeds)
    train_loss = np.zeros((E, cfg.steps), np.float32)
    steps, losses, inds, prevs = [], [], [], []

    def evaluate(step: int) -> None:
        m = measure(params, cfg, ho)
        steps.append(step)
        losses.append(m["loss"])
        inds.append(m["induction"])
        prevs.append(m["prev_token"])

    t0 = time.perf_counter()
    evaluate(0)
    for step in range(cfg.steps):
        batches = [D.sample_for(cfg, r, cfg.batch) for r in rngs]
        tok = torch.as_tensor(np.stack([b.tokens for b in batches]), device=dev)
        mask = torch.as_tensor(np.stack([b.mask for b in batches]), device=dev)
        loss = copy_loss(forward(params, tok, cfg.d_head), tok, mask)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        train_loss[:, step] = loss.detach().cpu().numpy()
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            evaluate(step + 1)
            prog((step + 1) / cfg.steps, f"{cfg.n_layers} layer(s), {cfg.period_mode} period: step {step + 1}/"
                                         f"{cfg.steps}, copy loss {float(np.median(losses[-1])):.3f}")
    if dev.type == "cuda":
        torch.cuda.synchronize()
    out = {"seeds": [int(s) for s in seeds], "train_loss": train_loss, "eval_step": np.array(steps),
           "eval_loss": np.stack(losses, 1), "induction": np.stack(inds, 1), "prev_token": np.stack(prevs, 1),
           "seconds": time.perf_counter() - t0, "device": str(dev)}
    if keep_params:
        out["params"] = to_numpy(params)
    return out
