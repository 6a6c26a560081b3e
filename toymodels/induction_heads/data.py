"""Repeated random tokens (numpy, seeded): the task on which induction heads form.

A sequence of ``n_ctx`` tokens is a block of ``p`` random tokens (uniform over the vocabulary, with replacement)
repeated to fill the sequence: ``tokens[t] = block[t mod p]``. The period ``p`` is fixed (``period_max``) or drawn
per sequence, uniformly in [``period_min``, ``period_max``]. From position ``p`` on every token is a copy of the
token one period back, so a model that finds the current token's previous occurrence and reads the token after it
(an induction head, Olsson et al. 2022) predicts it; the loss counts those positions only.

With a fixed period the copy is also a fixed positional offset (read the token at ``t - p + 1``): one attention
layer suffices and no induction is needed. With a variable period the offset is unknown: a one-layer model can at
best spread its guess over the ``n_periods`` candidate offsets (loss about log 13 for periods 4-16).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Batch:
    """``tokens`` (B, T) int64, ``period`` (B,) and ``mask`` (B, T - 1) bool: which next-token targets count
    (target position ``s = t + 1 >= period``)."""

    tokens: np.ndarray
    period: np.ndarray
    mask: np.ndarray


def sample(rng: np.random.Generator, n: int, n_ctx: int, vocab: int, period_min: int, period_max: int,
           period_mode: str) -> Batch:
    """``n`` sequences of repeated random tokens (see the module docstring)."""
    if period_mode == "fixed":
        period = np.full(n, period_max, dtype=np.int64)
    else:
        period = rng.integers(period_min, period_max + 1, size=n)
    block = rng.integers(0, vocab, size=(n, period_max))
    t = np.arange(n_ctx)
    tokens = np.take_along_axis(block, t[None, :] % period[:, None], axis=1)
    mask = (t[None, 1:] >= period[:, None])
    return Batch(tokens.astype(np.int64), period.astype(np.int64), mask)


def sample_for(cfg, rng: np.random.Generator, n: int) -> Batch:
    """``sample`` with the data settings of a ``Config``."""
    return sample(rng, n, cfg.n_ctx, cfg.vocab, cfg.period_min, cfg.period_max, cfg.period_mode)


def train_rng(seed: int) -> np.random.Generator:
    """The training batches of seed ``seed`` (independent of its initialisation's stream)."""
    return np.random.default_rng([int(seed), 1])


def eval_rng(period_mode: str) -> np.random.Generator:
    """The held-out set: one per period mode, the same for every seed and depth, never a training seed's."""
    return np.random.default_rng([2**31 + 7, 0 if period_mode == "variable" else 1])


def prefix_match_mask(tokens: np.ndarray, period: np.ndarray) -> np.ndarray:
    """(B, T, T) bool: query t, key j is a *prefix match* when the key's previous token equals the query's token
    (``tokens[j - 1] == tokens[t]``, 1 <= j <= t), for queries from the second period on (t >= period). An
    induction head attends to these keys: the token after an earlier occurrence of the current token."""
    B, T = tokens.shape
    t = np.arange(T)
    same = tokens[:, :, None] == np.concatenate([np.full((B, 1), -1), tokens[:, :-1]], axis=1)[:, None, :]
    causal = (t[None, :] <= t[:, None]) & (t[None, :] >= 1)
    query = t[None, :] >= period[:, None]
    return same & causal[None] & query[:, :, None]


def query_mask(tokens: np.ndarray, period: np.ndarray) -> np.ndarray:
    """(B, T) bool: the queries an induction score averages over (t >= period: the token occurred before)."""
    return np.arange(tokens.shape[1])[None, :] >= period[:, None]
