"""Gated attention (Qiu et al., NeurIPS 2025), the science: data, model, metrics and training.

(``toymodels.attention`` holds the experiments, views and verdict built on this module. The split keeps the
disk cache of trainings valid while the presentation code changes: a training's cache key is its arguments and
the source of this module.)

A sigmoid output gate after SDPA removes the attention sink.

The layer (paper Eq. 5, position G1):

    Y  = SDPA(Q, K, V) = softmax(Q Kᵀ / √d_h + causal mask) V          per head, shape (T, d_h)
    Y' = Y ⊙ σ(X W_θ)                                                 X = the pre-norm hidden state
    O  = concat_h(Y'_h) W_O

X is the *normalised* input of the attention block (the output of ``input_layernorm``), so the gate of query
position i depends on X_i only ("query-dependent"). As in the official code, W_θ is fused into the query
projection: ``q_proj: d → H·d_h·2`` (elementwise) or ``d → H·d_h + H`` (headwise), split per head into
``[query | gate]``. There is no special gate init: every weight is N(0, 0.02²), so σ starts at ≈ 0.5 and any
sparsity is learned.

Variants (selectable by name, paper Tables 1 and 4):

=======================  ===============================================================================
``baseline``             no gate
``g1_elementwise``       Y ⊙ σ(X W_θ), W_θ ∈ R^{d × H·d_h} (head-specific, elementwise) — the paper's winner
``g1_headwise``          Y_h · σ(X w_h), one scalar per head and token, W_θ ∈ R^{d × H}
``g1_headshared``        elementwise gate whose logits are averaged over the heads, so every head gets the same
                         d_h-vector of gate scores
``g2_elementwise``       gate on the value projection instead: V' = V ⊙ σ(X W_θ) (key positions' X)
``g1_input_independent`` Y ⊙ σ(θ), θ ∈ R^{H × d_h} learned, zero-initialised (no dependence on X)
``g1_ns_sigmoid``        Y ⊙ (0.5 + 0.5 σ(X W_θ)) — a non-sparse gate in [0.5, 1]
=======================  ===============================================================================

The experiment is the Bigram-Backcopy task (Guo et al. 2024): a Markov bigram chain that starts with <s>, except
that after each of the 3 most frequent "trigger" tokens the next token copies the token before the trigger. A
small pre-norm (RMSNorm) decoder-only LM with RoPE and a SwiGLU MLP is trained on it, with and without the gate,
and the sink is measured with

* F-Attn (this paper): mean attention from queries i ≥ 1 to the first token, per layer and averaged, beside the
  uniform floor mean_{i≥1} 1/(i+1) that a head attending uniformly to its visible prefix would give;
* the sink rate of Gu et al. (ICLR 2025): α^{l,h} = (1/T) Σ_i A^{l,h}[i, 0], share of heads with α > ε = 0.3;
* massive activations (Sun et al. 2024; paper App. A.4): per layer, the largest |h| in the residual stream
  (each layer's output hidden state), its ratio to the median |h| of that layer, the position and token
  holding it, and the first token's largest |h|. Sun et al. call an activation massive when it is about a
  thousand times the median (and above 100 in absolute value); the paper's M-Act is the largest |h| averaged
  over layers;
* the gate-score mean and histogram.

Every weight carries a leading *instance* dimension E, so E copies of one architecture (different learning rates
or seeds) train as one batched model; all instances see the same batches.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from toymodels.device import get_device
from toymodels.topic import InputError, Progress, as_progress

TOPIC = "gated-attention"

VARIANTS: dict[str, str] = {
    "baseline": "Baseline (no gate)",
    "g1_elementwise": "G1 elementwise (SDPA output, head-specific)",
    "g1_headwise": "G1 headwise (one scalar per head)",
    "g1_headshared": "G1 elementwise, head-shared",
    "g2_elementwise": "G2 elementwise (value projection)",
    "g1_input_independent": "G1 input-independent σ(θ)",
    "g1_ns_sigmoid": "G1 NS-sigmoid 0.5 + 0.5σ",
}

#: Paper Table 4 (15A2B MoE, 400B tokens): gate-score mean, M-Act, F-Attn, PPL. References only.
PAPER_TABLE4: dict[str, dict] = {
    "baseline": {"gate_mean": None, "mact": 1053, "fattn": 0.467, "ppl": 6.026},
    "g1_elementwise": {"gate_mean": 0.116, "mact": 94, "fattn": 0.048, "ppl": 5.761},
    "g1_headwise": {"gate_mean": 0.172, "mact": 98, "fattn": 0.073, "ppl": 5.792},
    "g1_headshared": {"gate_mean": 0.271, "mact": 286, "fattn": 0.301, "ppl": 5.801},
    "g2_elementwise": {"gate_mean": 0.221, "mact": 125, "fattn": 0.297, "ppl": 5.820},
    "g1_input_independent": {"gate_mean": 0.335, "mact": 471, "fattn": 0.364, "ppl": 5.917},
    "g1_ns_sigmoid": {"gate_mean": 0.653, "mact": 892, "fattn": 0.451, "ppl": 5.900},
}

COPY_RULES = ("back", "induction")   # what follows a trigger (see BigramBackcopy)
AFTER_DELIMITER = ("restart", "bigram")   # what follows a delimiter (see BigramBackcopy)
SINK_EPS = 0.3          # Gu et al.'s threshold ε
HIST_BINS = 20          # gate-score histogram bins on [0, 1]

# Bounds on every knob, so one live run stays around a minute on 2 CPU cores.
LIMITS = {
    "n_layers": (1, 4), "n_heads": (1, 8), "d_model": (16, 128), "seq_len": (32, 256), "steps": (50, 3000),
    "batch_size": (4, 64), "ffn_mult": (0, 4), "lr": (1e-4, 3e-2), "weight_decay": (0.0, 0.5), "vocab": (8, 128),
    "n_triggers": (1, 8), "seed": (0, 2**31 - 1), "delimiter": (0.0, 0.25),
}
#: budget on steps × batch × T × (d/64)² × layers (the knobs that set the cost of one training run):
#: 4× the default run, about a minute per model on 2 idle CPU cores
MAX_WORK = 4 * 400 * 32 * 128 * 2


ConfigError = InputError   # the old name (one error class for the package: toymodels.topic.InputError)


@dataclass(frozen=True)
class Config:
    """One training run. Defaults are the page's default view (2 layers, 2 heads, T = 128; notes §6)."""
    variant: str = "g1_elementwise"
    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 64
    seq_len: int = 128
    steps: int = 400
    batch_size: int = 32
    lr: float = 2e-2
    weight_decay: float = 0.1
    warmup: int = 50
    qk_norm: bool = True        # per-head RMSNorm on q and k, as Qwen3 (the paper's base model)
    pos: str = "learned"        # "rope" (rotary, as Qwen) or "learned" (absolute position embeddings, GPT-2)
    ffn_mult: int = 2        # SwiGLU hidden width = ffn_mult · d; 0 = attention-only blocks
    vocab: int = 64          # bigram tokens; <s> is token id `vocab`
    n_triggers: int = 3
    dirichlet: float = 0.1   # concentration of each bigram row
    seed: int = 0            # model init and batch sampling
    data_seed: int = 0       # the bigram chain itself
    eval_every: int = 50
    eval_batch: int = 32
    delimiter: float = 0.0   # probability of a delimiter token after a non-trigger (0 = plain Bigram-Backcopy)
    decay_embeddings: bool = True   # weight decay also on the token embedding (False: on the other matrices only)
    copy_rule: str = "back"  # after a trigger: "back" copies x_{t-2}; "induction" repeats what followed it before
    after_delimiter: str = "restart"   # the token after a delimiter: "restart" (uniform) or "bigram" (of x_{t-2})

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def _work(cfg: Config) -> float:
    return cfg.steps * cfg.batch_size * cfg.seq_len * (cfg.d_model / 64) ** 2 * cfg.n_layers


def validate(cfg: Config) -> Config:
    """Check a config; raise ConfigError with a plain message if it cannot work or exceeds the bounds."""
    if cfg.variant not in VARIANTS:
        raise ConfigError(f"unknown variant {cfg.variant!r}; choose one of {', '.join(VARIANTS)}")
    for name, (lo, hi) in LIMITS.items():
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ConfigError(f"{name} must be a finite number, got {v!r}")
        if not (lo <= v <= hi):
            raise ConfigError(f"{name} = {v} is outside the allowed range [{lo}, {hi}]")
    if cfg.variant not in VARIANTS:
        raise ConfigError(f"unknown variant {cfg.variant!r}; choose one of {', '.join(VARIANTS)}")
    if cfg.copy_rule not in COPY_RULES:
        raise ConfigError(f"copy_rule must be one of {', '.join(COPY_RULES)}, got {cfg.copy_rule!r}")
    if cfg.after_delimiter not in AFTER_DELIMITER:
        raise ConfigError(f"after_delimiter must be one of {', '.join(AFTER_DELIMITER)}, got {cfg.after_delimiter!r}")
    if cfg.pos not in ("rope", "learned"):
        raise ConfigError(f"pos must be 'rope' or 'learned', got {cfg.pos!r}")
    if cfg.d_model % cfg.n_heads:
        raise ConfigError(f"width {cfg.d_model} is not divisible by {cfg.n_heads} heads")
    if cfg.head_dim % 2:
        raise ConfigError(f"head dimension {cfg.head_dim} must be even (RoPE rotates pairs of dimensions)")
    if cfg.n_triggers >= cfg.vocab // 2:
        raise ConfigError("n_triggers must be below half the vocabulary")
    return cfg


def check_budget(cfg: Config, factor: float = 1.0) -> None:
    """Raise InputError when ``factor`` trainings of ``cfg`` exceed the compute budget of one live run."""
    work = _work(cfg) * factor
    if work > MAX_WORK:
        raise ConfigError(f"this run is {work / MAX_WORK:.1f}× over the compute budget of one live run: "
                          "lower steps, batch, sequence length, width or layers")


# =========================================================================== data: Bigram-Backcopy


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


def make_data(cfg: Config) -> BigramBackcopy:
    """The task of a config (its chain is set by ``data_seed``)."""
    return BigramBackcopy(cfg.vocab, cfg.n_triggers, cfg.dirichlet, cfg.data_seed, cfg.delimiter, cfg.copy_rule,
                          cfg.after_delimiter)


# =========================================================================== the model


def _uniform_floor(T: int) -> float:
    """mean_{i=1}^{T-1} 1/(i+1): the F-Attn of a head that attends uniformly to its visible prefix."""
    return float(np.mean(1.0 / (np.arange(1, T) + 1)))


def _init(E: int, *shape: int, gen: torch.Generator, std: float = 0.02) -> torch.Tensor:
    """N(0, std²) weights, the same for every instance (a sweep then differs only in what is swept)."""
    return (torch.randn(1, *shape, generator=gen) * std).repeat(E, *([1] * len(shape))).requires_grad_()


def _rms(x: torch.Tensor, w: torch.Tensor | None, eps: float = 1e-6) -> torch.Tensor:
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w


def _lin(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Batched linear map: x (E, ..., i) @ w (E, i, o) → (E, ..., o)."""
    E = x.shape[0]
    return torch.bmm(x.reshape(E, -1, x.shape[-1]), w).reshape(*x.shape[:-1], w.shape[-1])


def _rope(T: int, dh: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (10000 ** (torch.arange(0, dh, 2, device=device, dtype=torch.float32) / dh))
    ang = torch.arange(T, device=device, dtype=torch.float32)[:, None] * inv[None]
    ang = torch.cat([ang, ang], -1)                      # (T, dh), rotate-half convention
    return ang.cos(), ang.sin()


def _apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    rot = torch.cat([-x[..., h:], x[..., :h]], -1)
    return x * cos + rot * sin


def explicit_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ/√d_h + causal mask) V, returning the output *and* the attention weights A (…, T, T).

    Used by the measurement pass (SDPA does not expose A); a test checks it equals SDPA's output.
    """
    T = q.shape[-2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    a = torch.softmax(s.masked_fill(mask, float("-inf")), -1)
    return a @ v, a


class GatedLM:
    """E instances of a pre-norm decoder-only LM with (optionally gated) multi-head causal attention.

    Plain tensors with a leading instance dimension (like the batched models of *Toy Models of
    Superposition*), so one forward pass trains E models. ``forward(tokens)`` uses
    ``F.scaled_dot_product_attention``; ``forward(tokens, trace=True)`` uses the explicit softmax path and
    also returns the attention weights, gate scores and each layer's output hidden state.
    """

    def __init__(self, cfg: Config, n_instances: int = 1, device=None):
        validate(cfg)
        self.cfg, self.E, self.device = cfg, int(n_instances), get_device(device)
        E, d, H, dh, L = self.E, cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.n_layers
        V = cfg.vocab + 1 + (cfg.delimiter > 0)          # tokens, <s> [, delimiter]
        gen = torch.Generator().manual_seed(int(cfg.seed))
        v = cfg.variant
        q_out = H * dh + {"g1_elementwise": H * dh, "g1_headshared": H * dh, "g1_ns_sigmoid": H * dh,
                          "g1_headwise": H}.get(v, 0)
        v_out = H * dh * (2 if v == "g2_elementwise" else 1)
        p: dict[str, torch.Tensor] = {"emb": _init(E, V, d, gen=gen)}
        if cfg.pos == "learned":
            p["pos"] = _init(E, 1, cfg.seq_len, d, gen=gen)
        for l in range(L):
            p[f"{l}.ln1"] = torch.ones(E, 1, 1, d).requires_grad_()
            p[f"{l}.q"] = _init(E, d, q_out, gen=gen)       # [query | gate] fused, as the official code
            p[f"{l}.k"] = _init(E, d, H * dh, gen=gen)
            p[f"{l}.v"] = _init(E, d, v_out, gen=gen)       # [value | gate] for G2
            p[f"{l}.o"] = _init(E, H * dh, d, gen=gen)
            if v == "g1_input_independent":
                p[f"{l}.theta"] = torch.zeros(E, 1, 1, H, dh).requires_grad_()
            if cfg.qk_norm:
                p[f"{l}.qn"] = torch.ones(E, 1, 1, 1, dh).requires_grad_()
                p[f"{l}.kn"] = torch.ones(E, 1, 1, 1, dh).requires_grad_()
            if cfg.ffn_mult:
                p[f"{l}.ln2"] = torch.ones(E, 1, 1, d).requires_grad_()
                p[f"{l}.up"] = _init(E, d, 2 * cfg.ffn_mult * d, gen=gen)   # SwiGLU: [gate | up]
                p[f"{l}.down"] = _init(E, cfg.ffn_mult * d, d, gen=gen)
        p["lnf"] = torch.ones(E, 1, 1, d).requires_grad_()
        p["head"] = _init(E, d, V, gen=gen)
        self.params = {k: t.detach().to(self.device).requires_grad_() for k, t in p.items()}

    # ------------------------------------------------------------------ the gated attention layer

    def gate_scores(self, l: int, x: torch.Tensor, g_logits: torch.Tensor | None) -> torch.Tensor | None:
        """σ(X W_θ) for layer l in the shape that multiplies Y (E, B, T, H, d_h or 1), or None (baseline)."""
        v, p = self.cfg.variant, self.params
        if v in ("baseline",):
            return None
        if v == "g1_input_independent":
            return torch.sigmoid(p[f"{l}.theta"]).expand(*x.shape[:3], *p[f"{l}.theta"].shape[-2:])
        if v == "g1_headshared":
            g_logits = g_logits.mean(-2, keepdim=True).expand_as(g_logits)   # same gate for every head
        s = torch.sigmoid(g_logits)
        return 0.5 + 0.5 * s if v == "g1_ns_sigmoid" else s

    def attention(self, l: int, x: torch.Tensor, cos, sin, trace: bool = False):
        """Multi-head causal self-attention with the output gate. x: normalised input (E, B, T, d)."""
        cfg, p = self.cfg, self.params
        E, B, T, _ = x.shape
        H, dh = cfg.n_heads, cfg.head_dim
        qg = _lin(x, p[f"{l}.q"])
        q, g_logits = qg[..., : H * dh], None
        if cfg.variant == "g1_headwise":
            g_logits = qg[..., H * dh:].reshape(E, B, T, H, 1)
        elif qg.shape[-1] > H * dh:
            g_logits = qg[..., H * dh:].reshape(E, B, T, H, dh)
        vg = _lin(x, p[f"{l}.v"])
        q = q.reshape(E, B, T, H, dh)
        k = _lin(x, p[f"{l}.k"]).reshape(E, B, T, H, dh)
        val = vg[..., : H * dh].reshape(E, B, T, H, dh)
        gate = None
        if cfg.variant == "g2_elementwise":
            gate = torch.sigmoid(vg[..., H * dh:].reshape(E, B, T, H, dh))
            val = val * gate                                           # G2: gate the values
        if cfg.qk_norm:
            q, k = _rms(q, p[f"{l}.qn"]), _rms(k, p[f"{l}.kn"])
        # (E·B, H, T, dh) for SDPA
        q, k, val = (t.transpose(2, 3).reshape(E * B, H, T, dh) for t in (q, k, val))
        q, k = _apply_rope(q, cos, sin), _apply_rope(k, cos, sin)
        if trace:
            y, a = explicit_attention(q, k, val)
        else:
            y, a = F.scaled_dot_product_attention(q, k, val, is_causal=True), None
        y = y.reshape(E, B, H, T, dh).transpose(2, 3)                  # (E, B, T, H, dh)
        if cfg.variant != "g2_elementwise":
            gate = self.gate_scores(l, x, g_logits)
            if gate is not None:
                y = y * gate                                           # G1: Y' = Y ⊙ σ(X W_θ)
        out = _lin(y.reshape(E, B, T, H * dh), p[f"{l}.o"])
        return out, a, gate, y

    # ------------------------------------------------------------------ the LM

    def forward(self, tokens: torch.Tensor, trace: bool = False):
        """tokens (B, T) shared by all instances → logits (E, B, T, V) [, trace dict]."""
        cfg, p = self.cfg, self.params
        B, T = tokens.shape
        cos, sin = _rope(T, cfg.head_dim, tokens.device)
        h = p["emb"][:, tokens.reshape(-1)].reshape(self.E, B, T, cfg.d_model)
        if cfg.pos == "learned":
            if T > cfg.seq_len:
                raise ConfigError(f"learned positions stop at {cfg.seq_len}; use RoPE to evaluate longer")
            h = h + p["pos"][:, :, :T]
            cos, sin = torch.ones_like(cos), torch.zeros_like(sin)
        tr = {"attn": [], "gate": [], "hidden": []}
        for l in range(cfg.n_layers):
            x = _rms(h, p[f"{l}.ln1"])                                 # X: the pre-norm hidden state
            a_out, a, gate, _ = self.attention(l, x, cos, sin, trace)
            h = h + a_out
            if cfg.ffn_mult:
                u = _lin(_rms(h, p[f"{l}.ln2"]), p[f"{l}.up"])
                g, up = u.chunk(2, -1)
                h = h + _lin(F.silu(g) * up, p[f"{l}.down"])
            if trace:
                tr["attn"].append(a.reshape(self.E, B, cfg.n_heads, T, T))
                tr["gate"].append(gate)
                tr["hidden"].append(h)
        logits = _lin(_rms(h, p["lnf"]), p["head"])
        return (logits, tr) if trace else logits

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Per-instance mean next-token cross-entropy, shape (E,)."""
        logits = self.forward(tokens[:, :-1])
        V = logits.shape[-1]
        tgt = tokens[:, 1:].reshape(-1).repeat(self.E)
        ce = F.cross_entropy(logits.reshape(-1, V), tgt, reduction="none")
        return ce.reshape(self.E, -1).mean(1)


# =========================================================================== metrics


def first_token_attention(attn: torch.Tensor | np.ndarray) -> np.ndarray:
    """F-Attn per head: mean over queries i ≥ 1 (and over the batch) of A[..., i, 0].

    attn: (..., B, H, T, T) attention weights → (..., H). Query 0 is excluded (A[0, 0] = 1 trivially).
    """
    a = torch.as_tensor(attn)
    return a[..., 1:, 0].mean(-1).mean(-2).cpu().numpy()


def sink_rate(attn: torch.Tensor | np.ndarray, eps: float = SINK_EPS) -> np.ndarray:
    """Gu et al.'s sink indicator on token 0, averaged over sequences: (..., B, H, T, T) → (..., H) in [0, 1].

    α^{h} = (1/T) Σ_{i≥0} A^{h}[i, 0] (the mean attention to key 0 over all queries that can see it), and the
    head counts as a sink on a sequence when α > ε. Multiply the mean over layers and heads by 100 for Sink₀^ε.
    """
    a = torch.as_tensor(attn)
    alpha = a[..., :, 0].mean(-1)                                     # (..., B, H)
    return (alpha > eps).float().mean(-2).cpu().numpy()


def massive_activation(hidden: torch.Tensor) -> np.ndarray:
    """M-Act: the largest |activation| of a layer's output hidden state, (E, B, T, d) → (E,)."""
    return hidden.detach().abs().flatten(1).amax(1).cpu().numpy()


def massive_stats(hidden: torch.Tensor, tokens: torch.Tensor | np.ndarray) -> dict:
    """Massive-activation statistics of one layer's residual stream, as Sun et al. (2024) define them.

    hidden (E, B, T, d), tokens (B, T) → per instance (E,): ``max`` = max |h| over batch, positions and
    dimensions; ``median`` = the median |h| over the same entries; ``ratio`` = max / median; ``pos``, ``token``
    and ``dim`` of the largest entry (the first such entry); ``first`` = the largest |h| at position 0
    (the <s> token) over the batch and dimensions. Computed in float64 on the CPU.
    """
    a = hidden.detach().abs().to("cpu", torch.float64).numpy()
    E, B, T, d = a.shape
    flat = a.reshape(E, -1)
    idx = flat.argmax(1)
    b, t, k = np.unravel_index(idx, (B, T, d))
    mx = flat.max(1)
    med = np.median(flat, 1)
    tok = np.asarray(tokens.cpu() if isinstance(tokens, torch.Tensor) else tokens)
    return {"max": mx, "median": med, "ratio": mx / np.maximum(med, 1e-30), "pos": t.astype(np.int64),
            "token": tok[b, t].astype(np.int64), "dim": k.astype(np.int64),
            "first": a[:, :, 0, :].reshape(E, -1).max(1)}


# =========================================================================== training


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
            if wd and p.dim() == 3 and k not in no_decay:                                   # (E, in, out) matrices and embeddings
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
    validate(cfg)
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
                             "mact_ratio": float(m["mact_ratio"][e].max()), "first_max": float(m["mact_first"][e].max()),
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


