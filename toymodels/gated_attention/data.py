"""Gated attention: the toy's data, the Bigram-Backcopy task of Guo et al. (2024) and its variants.

Each task samples seeded token sequences that start with <s> and knows its own law: ``log_prob`` gives the true
next-token log-probabilities, so ``bayes_ce`` is the loss of the true process on exactly the tokens a model is
evaluated on.
"""
from __future__ import annotations

import math

import numpy as np

from .config import AFTER_DELIMITER, COPY_RULES, Config, ConfigError


class BigramBackcopy:
    """The Bigram-Backcopy task (Guo et al. 2024, ``BBM/data.py``), over a random sparse bigram chain.

    Rows of the transition matrix P are Dirichlet(α) draws (α = 0.1: peaked, like character bigrams). The
    triggers are the ``n_triggers`` most frequent tokens under P's stationary distribution. A sequence is
    ``<s>, x_1, x_2, …``: x_1 is drawn uniformly from the non-triggers, and for t ≥ 2

        x_t = x_{t-2}                 if x_{t-1} is a trigger       (the back-copy)
        x_t ~ P[x_{t-1}, ·]           otherwise                     (the bigram)

    Since x_1 is no trigger, two triggers never follow each other and a copied token is never a trigger.

    With ``delimiter`` = q > 0, a delimiter token (id ``vocab + 1``, like "." or "\\n" in text) follows a
    non-trigger with probability q instead of the bigram draw, and the token after a delimiter is drawn
    uniformly from the non-triggers (a new "sentence"): x_t = <d> with probability q, else ~ (1 - q) P.

    With ``copy_rule="induction"`` the copy needs two steps (an induction head, so a head with nothing to do on
    most tokens can only form after layer 1): the token after a trigger k is the token that followed k's first
    occurrence in the sequence (and after that first occurrence, a bigram draw from P[k, ·], never a delimiter).
    Finding it takes a previous-token head (layer 1 writes "my previous token is k" into the position after each
    k) and a head in a later layer whose query "I am k" matches that key and copies its token.

    With ``after_delimiter="bigram"`` the token after a delimiter is a bigram draw from the token before it
    (P[x_{t-2}, ·], the delimiter is transparent), instead of a uniform restart: no position but <s> then has a
    next-token law that is the same in every context, so no token has an output-side reason for a large fixed
    value in the residual stream.
    """

    def __init__(self, vocab: int = 64, n_triggers: int = 3, dirichlet: float = 0.1, seed: int = 0,
                 delimiter: float = 0.0, copy_rule: str = "back", after_delimiter: str = "restart"):
        if copy_rule not in COPY_RULES:
            raise ConfigError(f"copy_rule must be one of {', '.join(COPY_RULES)}, got {copy_rule!r}")
        if after_delimiter not in AFTER_DELIMITER:
            raise ConfigError(f"after_delimiter must be one of {', '.join(AFTER_DELIMITER)}, got {after_delimiter!r}")
        self.copy_rule, self.after_delimiter = copy_rule, after_delimiter
        g = np.random.default_rng(seed)
        self.vocab, self.bos = vocab, vocab
        self.q = float(delimiter)
        self.delim = vocab + 1 if self.q > 0 else None
        self.n_tokens = vocab + 1 + (self.q > 0)          # embedding rows: tokens, <s> [, <d>]
        P = g.dirichlet(np.full(vocab, dirichlet), size=vocab)
        P = 0.999 * P + 0.001 / vocab            # keep the chain irreducible
        self.P = P / P.sum(1, keepdims=True)
        w, vecs = np.linalg.eig(self.P.T)
        pi = np.abs(np.real(vecs[:, np.argmin(np.abs(w - 1))]))
        self.stationary = pi / pi.sum()
        self.triggers = np.sort(np.argsort(-self.stationary, kind="stable")[:n_triggers])
        self.is_trigger = np.zeros(vocab, bool)
        self.is_trigger[self.triggers] = True
        self.non_triggers = np.flatnonzero(~self.is_trigger)
        self._cdf = np.cumsum(self.P, 1)
        self._cdf[:, -1] = 1.0
        self.row_entropy = -(self.P * np.log(self.P)).sum(1)

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` sequences of ``length`` tokens (the first is <s>), as an int64 array (n, length)."""
        x = np.empty((n, length), np.int64)
        x[:, 0] = self.bos
        if length > 1:
            x[:, 1] = rng.choice(self.non_triggers, size=n)
        u = rng.random((n, length))
        if self.q > 0:
            ud = rng.random((n, length))                      # delimiter coin
            restart = rng.choice(self.non_triggers, size=(n, length))
        bound = np.full((n, self.vocab), -1, np.int64)         # induction: what followed each trigger first
        rows = np.arange(n)
        for t in range(2, length):
            prev = x[:, t - 1]
            if self.q > 0:
                after_delim = prev == self.delim
                prev_tok = np.where(after_delim, x[:, t - 2] if self.after_delimiter == "bigram" else 0, prev)
            else:
                prev_tok = prev
            nxt = np.minimum((u[:, t, None] > self._cdf[prev_tok]).sum(1), self.vocab - 1)  # inverse-CDF draw
            trig = self.is_trigger[prev_tok]
            bigram = nxt
            if self.q > 0:
                trig = trig & ~after_delim
                nxt = np.where(after_delim, bigram if self.after_delimiter == "bigram" else restart[:, t],
                               np.where(ud[:, t] < self.q, self.delim, nxt))
            if self.copy_rule == "induction":
                seen = bound[rows, prev_tok]
                x[:, t] = np.where(trig, np.where(seen >= 0, seen, bigram), nxt)
                first = trig & (seen < 0)
                bound[rows[first], prev_tok[first]] = x[first, t]
            else:
                x[:, t] = np.where(trig, x[:, t - 2], nxt)
        return x

    def needed_key(self, x: np.ndarray) -> np.ndarray:
        """For each query position i (the token x_i), the key its next token copies: i - 1 when x_i is a trigger
        (the back-copy), else -1 (none; also for every query under the induction rule). Same shape as x."""
        i = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
        trig = (x < self.vocab) & self.is_trigger[np.minimum(x, self.vocab - 1)]
        return np.where(trig & (self.copy_rule == "back"), i - 1, -1)

    def log_prob(self, x: np.ndarray) -> np.ndarray:
        """log p(x_t | x_{<t}) under the true process for t = 1..T-1: shape (n, T-1) (copies are certain)."""
        n_non = len(self.non_triggers)
        lp = np.empty((x.shape[0], x.shape[1] - 1))
        lp[:, 0] = -math.log(n_non)                           # x_1 uniform over the non-triggers
        prev, cur = x[:, 1:-1], x[:, 2:]
        if self.q > 0:
            is_d, prev_d = cur == self.delim, prev == self.delim
            pv, cv = np.where(prev_d, 0, prev), np.where(is_d | (cur == self.bos), 0, cur)
            bigram = np.log((1 - self.q) * self.P[pv, cv])
            rest = np.where(is_d, math.log(self.q), bigram)
            if self.after_delimiter == "bigram":     # a bigram draw from the token before the delimiter
                p2 = np.minimum(x[:, :-2], self.vocab - 1)
                rest = np.where(prev_d, np.log(self.P[p2, cv]), rest)
            else:
                rest = np.where(prev_d, -math.log(n_non), rest)
            trig = self.is_trigger[pv] & ~prev_d
        else:
            rest = np.log(self.P[prev, cur])
            trig = self.is_trigger[prev]
        if self.copy_rule == "induction":
            # a trigger's first occurrence is followed by a bigram draw (no delimiter); later ones by a certain copy
            pv = np.where(prev >= self.vocab, 0, prev)
            cv = np.where(cur >= self.vocab, 0, cur)
            bound = np.zeros((x.shape[0], self.vocab), bool)
            rows = np.arange(x.shape[0])
            draw = np.log(self.P[pv, cv])
            for j in range(prev.shape[1]):
                tj = trig[:, j]
                seen = bound[rows, pv[:, j]]
                rest[:, j] = np.where(tj, np.where(seen, 0.0, draw[:, j]), rest[:, j])
                bound[rows[tj], pv[tj, j]] = True
            trig = np.zeros_like(trig)
        lp[:, 1:] = np.where(trig, 0.0, rest)
        return lp

    def bayes_ce(self, x: np.ndarray) -> float:
        """The realised Bayes cross-entropy on these tokens: mean over targets x[:, 1:] of -log p_true(x_t | x_<t).

        The loss of the true process on exactly the tokens a model is evaluated on (its sampling noise
        included), so a model's loss minus it is the model's excess loss on the same tokens.
        """
        return float(-self.log_prob(x).mean())

    def expected_entropy(self, x: np.ndarray) -> float:
        """Expected next-token entropy of the true process along x (plain Bigram-Backcopy; copies cost 0).

        Not the loss on the realised targets: a model's loss on a finite batch can fall below it by chance.
        """
        prev = x[:, 1:-1]
        ent = np.where(self.is_trigger[np.minimum(prev, self.vocab - 1)] & (prev < self.vocab), 0.0,
                       self.row_entropy[np.minimum(prev, self.vocab - 1)])
        first = math.log(len(self.non_triggers))
        return float((ent.sum() + first * x.shape[0]) / (x.shape[0] * (x.shape[1] - 1)))


class HeadSpecificDormancy:
    """Head-specific dormancy: two heads, each needed on its own half of the queries (this project's task for the
    paper's head-shared control, §4.3 and Table 4).

    The paper explains why a gate shared by the heads keeps the sink (F-Attn 0.301) where a head-specific one
    removes it (0.048): heads go dormant on different queries, and one gate cannot close one head while another
    is open. In Bigram-Backcopy every head is dormant on the same queries (the non-triggers), so a shared gate
    loses nothing there. Here each query needs exactly one of two heads:

    The vocabulary is split at random (by the data seed) into halves A and B, each with its own sparse transition
    matrix (rows Dirichlet(α)), P_A and P_B. A sequence is ``<s>, x_1, x_2, x_3`` (uniform), then for t ≥ 4

        x_t ~ P_A[x_{t-2}, ·]      if x_{t-1} ∈ A        (needs the token one before the query x_{t-1})
        x_t ~ P_B[x_{t-3}, ·]      if x_{t-1} ∈ B        (needs the token two before it)

    A head that fetches the previous token is useful exactly on A-queries, one that fetches the token two back
    exactly on B-queries, and each has nothing to do on the other half. ``triggers`` are the A tokens (the queries
    of the first head); ``needed_key`` gives the key each query's next token depends on.
    """

    def __init__(self, vocab: int = 32, dirichlet: float = 0.1, seed: int = 0):
        g = np.random.default_rng([seed, 7])
        self.vocab, self.bos, self.delim, self.n_tokens = vocab, vocab, None, vocab + 1
        perm = g.permutation(vocab)
        self.set_a, self.set_b = np.sort(perm[: vocab // 2]), np.sort(perm[vocab // 2:])
        self.is_a = np.zeros(vocab, bool)
        self.is_a[self.set_a] = True
        self.triggers = self.set_a
        P = g.dirichlet(np.full(vocab, dirichlet), size=(2, vocab))
        P = 0.999 * P + 0.001 / vocab
        self.P_a, self.P_b = P / P.sum(-1, keepdims=True)
        self._cdf = np.cumsum(np.stack([self.P_a, self.P_b]), -1)
        self._cdf[..., -1] = 1.0
        self.row_entropy = -(np.stack([self.P_a, self.P_b]) * np.log(np.stack([self.P_a, self.P_b]))).sum(-1)

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` sequences of ``length`` tokens (the first is <s>), as an int64 array (n, length)."""
        x = np.empty((n, length), np.int64)
        x[:, 0] = self.bos
        x[:, 1:min(length, 4)] = rng.integers(0, self.vocab, size=(n, min(length, 4) - 1))
        u = rng.random((n, length))
        for t in range(4, length):
            b = ~self.is_a[x[:, t - 1]]                                   # which head the query needs
            ctx = np.where(b, x[:, t - 3], x[:, t - 2])
            x[:, t] = np.minimum((u[:, t, None] > self._cdf[b.astype(int), ctx]).sum(1), self.vocab - 1)
        return x

    def needed_key(self, x: np.ndarray) -> np.ndarray:
        """For each query position i (the token x_i), the key position its next token depends on: i - 1 when
        x_i ∈ A, i - 2 when x_i ∈ B, -1 for positions 0-2 (whose successors are uniform). Same shape as x."""
        i = np.arange(x.shape[-1])
        out = np.where(self.is_a[np.minimum(x, self.vocab - 1)], i - 1, i - 2)
        out[..., :3] = -1
        return out

    def log_prob(self, x: np.ndarray) -> np.ndarray:
        """log p(x_t | x_{<t}) under the true process for t = 1..T-1: shape (n, T-1)."""
        lp = np.full((x.shape[0], x.shape[1] - 1), -math.log(self.vocab))   # x_1, x_2, x_3 uniform
        prev, cur = x[:, 3:-1], x[:, 4:]
        b = ~self.is_a[prev]
        ctx = np.where(b, x[:, 1:-3], x[:, 2:-2])
        lp[:, 3:] = np.log(np.where(b, self.P_b[ctx, cur], self.P_a[ctx, cur]))
        return lp

    def bayes_ce(self, x: np.ndarray) -> float:
        """The realised Bayes cross-entropy on these tokens (see ``BigramBackcopy.bayes_ce``)."""
        return float(-self.log_prob(x).mean())

    def expected_entropy(self, x: np.ndarray) -> float:
        """Expected next-token entropy of the true process along x (mean over its targets)."""
        prev = x[:, 3:-1]
        b = ~self.is_a[prev]
        ctx = np.where(b, x[:, 1:-3], x[:, 2:-2])
        ent = np.where(b, self.row_entropy[1][ctx], self.row_entropy[0][ctx])
        first = min(3, x.shape[1] - 1) * math.log(self.vocab)
        return float((ent.sum() + first * x.shape[0]) / (x.shape[0] * (x.shape[1] - 1)))


def make_data(cfg: Config) -> BigramBackcopy | HeadSpecificDormancy:
    """The task of a config (its transition matrices are set by ``data_seed``)."""
    if cfg.task == "head_specific":
        return HeadSpecificDormancy(cfg.vocab, cfg.dirichlet, cfg.data_seed)
    return BigramBackcopy(cfg.vocab, cfg.n_triggers, cfg.dirichlet, cfg.data_seed, cfg.delimiter, cfg.copy_rule,
                          cfg.after_delimiter)
