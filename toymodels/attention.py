"""Gated attention (Qiu et al., NeurIPS 2025): a sigmoid output gate after SDPA removes the attention sink.

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
* M-Act: the largest |activation| of each layer's output hidden state, averaged over layers;
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

from toymodels import Progress, report, store
from toymodels.device import get_device

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

SINK_EPS = 0.3          # Gu et al.'s threshold ε
HIST_BINS = 20          # gate-score histogram bins on [0, 1]

# Bounds on every knob, so one live run stays around a minute on 2 CPU cores.
LIMITS = {
    "n_layers": (1, 4), "n_heads": (1, 8), "d_model": (16, 128), "seq_len": (32, 256), "steps": (50, 3000),
    "batch_size": (4, 64), "ffn_mult": (0, 4), "lr": (1e-4, 3e-2), "weight_decay": (0.0, 0.5), "vocab": (8, 128),
    "n_triggers": (1, 8), "seed": (0, 2**31 - 1),
}
#: budget on steps × batch × T × (d/64)² × layers (the knobs that set the cost of one training run):
#: 4× the default run, about a minute per model on 2 idle CPU cores
MAX_WORK = 4 * 400 * 32 * 128 * 2


class ConfigError(ValueError):
    """A knob combination that cannot work (the page shows the message)."""


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
        if not (lo <= v <= hi):
            raise ConfigError(f"{name} = {v} is outside the allowed range [{lo}, {hi}]")
    if cfg.pos not in ("rope", "learned"):
        raise ConfigError(f"pos must be 'rope' or 'learned', got {cfg.pos!r}")
    if cfg.d_model % cfg.n_heads:
        raise ConfigError(f"width {cfg.d_model} is not divisible by {cfg.n_heads} heads")
    if cfg.head_dim % 2:
        raise ConfigError(f"head dimension {cfg.head_dim} must be even (RoPE rotates pairs of dimensions)")
    if cfg.n_triggers >= cfg.vocab // 2:
        raise ConfigError("n_triggers must be below half the vocabulary")
    work = _work(cfg)
    if work > MAX_WORK:
        raise ConfigError(f"this run is {work / MAX_WORK:.1f}× over the compute budget of one live run: "
                          "lower steps, batch, sequence length, width or layers")
    return cfg


# =========================================================================== data: Bigram-Backcopy


class BigramBackcopy:
    """The Bigram-Backcopy task (Guo et al. 2024, ``BBM/data.py``), over a random sparse bigram chain.

    Rows of the transition matrix P are Dirichlet(α) draws (α = 0.1: peaked, like character bigrams). The
    triggers are the ``n_triggers`` most frequent tokens under P's stationary distribution. A sequence is
    ``<s>, x_1, x_2, …``: x_1 is drawn uniformly from the non-triggers, and for t ≥ 2

        x_t = x_{t-2}                 if x_{t-1} is a trigger       (the back-copy)
        x_t ~ P[x_{t-1}, ·]           otherwise                     (the bigram)

    Since x_1 is no trigger, two triggers never follow each other and a copied token is never a trigger.
    """

    def __init__(self, vocab: int = 64, n_triggers: int = 3, dirichlet: float = 0.1, seed: int = 0):
        g = np.random.default_rng(seed)
        self.vocab, self.bos = vocab, vocab
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
        for t in range(2, length):
            prev = x[:, t - 1]
            nxt = (u[:, t, None] > self._cdf[prev]).sum(1)     # inverse-CDF draw from P[prev]
            x[:, t] = np.where(self.is_trigger[prev], x[:, t - 2], np.minimum(nxt, self.vocab - 1))
        return x

    def bayes_loss(self, x: np.ndarray) -> float:
        """Expected next-token loss of the true process on the targets x[:, 1:] (copies cost 0 nats)."""
        prev = x[:, 1:-1]                                  # predicting x_t from x_{t-1} for t = 2..T-1
        ent = np.where(self.is_trigger[prev], 0.0, self.row_entropy[prev])
        first = math.log(len(self.non_triggers))            # x_1 uniform over non-triggers
        return float((ent.sum() + first * x.shape[0]) / (x.shape[0] * (x.shape[1] - 1)))


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
        V = cfg.vocab + 1
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


# =========================================================================== training


def _adamw_step(params: dict, state: dict, lr: torch.Tensor, step: int, wd: float,
                betas=(0.9, 0.95), eps: float = 1e-8) -> None:
    """AdamW (decoupled weight decay on matrices only) with a per-instance learning rate lr (E,)."""
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
            if wd and p.dim() == 3:                                   # (E, in, out) matrices and embeddings
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
    if tr["gate"][0] is not None:
        g = [gt.detach().reshape(model.E, -1) for gt in tr["gate"]]
        out["gate_mean"] = np.stack([x.mean(1).cpu().numpy() for x in g], 1)        # (E, L)
        edges = torch.linspace(0, 1, HIST_BINS + 1)
        out["gate_hist"] = np.stack([np.stack([np.histogram(x[e].float().cpu().numpy(), bins=edges.numpy())[0]
                                               for e in range(model.E)]) for x in g], 1)   # (E, L, bins)
    out["attn"] = [a.cpu() for a in tr["attn"]]
    return out


def _dev_key(device) -> str | None:
    """A device as a plain string, so it can be part of a cache key."""
    return None if device is None else str(get_device(device))


def _scaled(progress: Progress, p0: float, p1: float) -> Progress:
    return None if progress is None else (lambda f, m="": progress(p0 + (p1 - p0) * f, m))


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


def train(cfg: Config, lrs: list[float] | None = None, device=None, progress: Progress = None,
          gate_from_step: int = 0, return_model: bool = False) -> dict:
    """Train E = len(lrs) instances of one variant side by side (same init, same batches).

    With ``gate_from_step`` > 0 the model trains *without* the gate until that step, then the gate is
    added (its weights freshly initialised, the others kept) and training continues (paper App. A.7).
    Returns curves (DataFrame: instance, step, train_loss, val_loss, fattn, gate_mean), the final
    measurement on a held-out batch, the sample sequence's attention maps and timing.
    """
    validate(cfg)
    if not 0 <= gate_from_step < cfg.steps:
        raise ConfigError(f"gate_from_step must be in [0, {cfg.steps})")
    lrs = [cfg.lr] if lrs is None else [float(x) for x in lrs]
    dev = get_device(device)
    model = GatedLM(replace(cfg, variant="baseline") if gate_from_step else cfg, len(lrs), dev)
    data = BigramBackcopy(cfg.vocab, cfg.n_triggers, cfg.dirichlet, cfg.data_seed)
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
        for p in model.params.values():                               # a diverged instance stays frozen
            if p.grad is not None:
                p.grad.nan_to_num_(0.0, 0.0, 0.0)
        diverged |= ~finite.cpu().numpy() | (loss.detach().cpu().numpy() > 20)
        _adamw_step(model.params, state, lr0 * _lr_factor(step, cfg), step + 1, cfg.weight_decay)
        if (step + 1) % cfg.eval_every == 0 or step == 0 or step + 1 == cfg.steps:
            m = measure(model, val)
            for e in range(model.E):
                rows.append({"instance": e, "lr": lrs[e], "step": step + 1,
                             "train_loss": float(loss[e].detach()), "val_loss": float(m["loss"][e]),
                             "fattn": float(m["fattn"][e].mean()),
                             "gate_mean": float(m["gate_mean"][e].mean()) if "gate_mean" in m else float("nan")})
            report(progress, (step + 1) / cfg.steps, f"{cfg.variant} step {step + 1}/{cfg.steps}")
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
           "bayes_loss": data.bayes_loss(val.cpu().numpy()), "triggers": data.triggers,
           "floor": _uniform_floor(cfg.seq_len), "floor_2x": _uniform_floor(2 * cfg.seq_len)}
    if return_model:
        out["model"] = model
    return out


# =========================================================================== experiments (page + CLI)


def _summary(variant: str, res: dict, e: int = 0) -> dict:
    f = res["final"]
    return {"variant": variant, "label": VARIANTS[variant],
            "fattn": float(f["fattn"][e].mean()), "floor": res["floor"],
            "sink_rate": float(100 * f["sink"][e].mean()),
            "mact": float(f["mact"][e].mean()),
            "gate_mean": float(f["gate_mean"][e].mean()) if "gate_mean" in f else None,
            "val_loss": float(f["loss"][e]), "bayes_loss": res["bayes_loss"],
            "val_loss_2x": float(res["long"]["loss"][e]), "fattn_2x": float(res["long"]["fattn"][e].mean()),
            "diverged": bool(res["diverged"][e]), "train_seconds": res["seconds"]}


def compare(cfg: Config, variants: list[str], device=None, progress: Progress = None) -> dict:
    """Train each variant (same seed, same data) and gather everything the page draws.

    Returns ``summary`` (one row per variant), ``layers`` (variant × layer: F-Attn, sink rate, M-Act, gate
    mean), ``curves``, ``hist`` (variant × layer × bin), the sample sequence, its attention maps
    ``maps[variant]`` (L, H, T, T) and the trigger positions.
    """
    variants = list(dict.fromkeys(variants))
    if not variants:
        raise ConfigError("pick at least one variant")
    for v in variants:
        validate(replace(cfg, variant=v))
    summ, layers, curves, hist, maps = [], [], [], [], {}
    res = None
    for i, v in enumerate(variants):
        # each variant's run is cached on its own, so a second comparison reuses the baseline
        res = store.cached(train, replace(cfg, variant=v), device=_dev_key(device),
                           progress=_scaled(progress, i / len(variants), (i + 1) / len(variants)))
        summ.append(_summary(v, res))
        f = res["final"]
        for l in range(cfg.n_layers):
            layers.append({"variant": v, "layer": l + 1, "fattn": float(f["fattn"][0, l].mean()),
                           "sink_rate": float(100 * f["sink"][0, l].mean()), "mact": float(f["mact"][0, l]),
                           "gate_mean": float(f["gate_mean"][0, l]) if "gate_mean" in f else None})
            if "gate_hist" in f:
                h = f["gate_hist"][0, l]
                for b in range(HIST_BINS):
                    hist.append({"variant": v, "layer": l + 1, "bin_lo": b / HIST_BINS,
                                 "bin_hi": (b + 1) / HIST_BINS, "share": float(h[b] / h.sum())})
        c = res["curves"].drop(columns=["instance", "lr"])
        c.insert(0, "variant", v)
        curves.append(c)
        maps[v] = res["sample_attn"][0]
    tokens = res["sample_tokens"]
    trig = np.isin(tokens, res["triggers"])
    return {"config": asdict(cfg), "summary": pd.DataFrame(summ), "layers": pd.DataFrame(layers),
            "curves": pd.concat(curves, ignore_index=True),
            "hist": pd.DataFrame(hist, columns=["variant", "layer", "bin_lo", "bin_hi", "share"]),
            "tokens": tokens, "trigger_positions": np.flatnonzero(trig), "maps": maps,
            "floor": res["floor"], "bayes_loss": res["bayes_loss"]}


def lr_sweep(cfg: Config, lrs: list[float], variants: list[str] = ("baseline", "g1_elementwise"),
             device=None, progress: Progress = None) -> pd.DataFrame:
    """For each variant, train one batched model whose instances use the learning rates ``lrs``."""
    lrs = sorted({float(x) for x in lrs})
    if not lrs or len(lrs) > 8:
        raise ConfigError("give between 1 and 8 learning rates")
    for x in lrs:
        if not LIMITS["lr"][0] <= x <= LIMITS["lr"][1]:
            raise ConfigError(f"learning rate {x:g} outside [{LIMITS['lr'][0]:g}, {LIMITS['lr'][1]:g}]")
    validate(cfg)
    if _work(cfg) * len(lrs) > 1.5 * MAX_WORK:
        raise ConfigError(f"{len(lrs)} learning rates at these settings exceed the compute budget of a live "
                          "sweep: pick fewer learning rates, or fewer steps / a smaller model")
    rows = []
    for i, v in enumerate(variants):
        res = store.cached(train, replace(cfg, variant=v), lrs=lrs, device=_dev_key(device),
                           progress=_scaled(progress, i / len(variants), (i + 1) / len(variants)))
        for e, lr in enumerate(lrs):
            rows.append({"lr": lr, **_summary(v, res, e)})
    return pd.DataFrame(rows)


def n_params(model: GatedLM) -> int:
    """Parameters of one instance."""
    return int(sum(p[0].numel() for p in model.params.values()))


def layer_demo(cfg: Config, device=None) -> pd.DataFrame:
    """Each variant at initialisation: where the gate sits, its shape, parameters added and gate mean (≈ 0.5).

    Untrained and cheap (one forward pass on 4 sequences); the page's table of variants.
    """
    validate(cfg)
    dev = get_device(device)
    data = BigramBackcopy(cfg.vocab, cfg.n_triggers, cfg.dirichlet, cfg.data_seed)
    x = torch.as_tensor(data.sample(4, cfg.seq_len + 1, np.random.default_rng([cfg.data_seed, 7])), device=dev)
    H, dh = cfg.n_heads, cfg.head_dim
    where = {"baseline": ("—", "—", "—"),
             "g1_elementwise": ("after SDPA", f"(T, H={H}, d_h={dh})", "q_proj: d→2·H·d_h"),
             "g1_headwise": ("after SDPA", f"(T, H={H}, 1)", "q_proj: d→H·d_h+H"),
             "g1_headshared": ("after SDPA", f"(T, 1, d_h={dh}) shared", "q_proj: d→2·H·d_h, mean over heads"),
             "g2_elementwise": ("after v_proj", f"(T, H={H}, d_h={dh})", "v_proj: d→2·H·d_h"),
             "g1_input_independent": ("after SDPA", f"(H={H}, d_h={dh}), no X", "θ ∈ R^{H×d_h}, zero init"),
             "g1_ns_sigmoid": ("after SDPA", f"(T, H={H}, d_h={dh}) in [0.5, 1]", "q_proj: d→2·H·d_h")}
    base = n_params(GatedLM(replace(cfg, variant="baseline"), 1, dev))
    rows = []
    for v in VARIANTS:
        m = GatedLM(replace(cfg, variant=v), 1, dev)
        r = measure(m, x)
        rows.append({"variant": v, "label": VARIANTS[v], "position": where[v][0], "gate_shape": where[v][1],
                     "projection": where[v][2], "params_added": n_params(m) - base,
                     "params_added_per_layer": (n_params(m) - base) // cfg.n_layers,
                     "gate_mean_init": float(r["gate_mean"].mean()) if "gate_mean" in r else None,
                     "loss_init": float(r["loss"][0])})
    return pd.DataFrame(rows)


def gate_midway(cfg: Config, switch: int, device=None, progress: Progress = None) -> dict:
    """Train ungated until step ``switch``, then add the gate ``cfg.variant`` and continue (paper App. A.7).

    Compare its curves with ``compare(cfg, ["baseline", cfg.variant])``: same seed, same batches.
    """
    res = train(cfg, device=device, progress=progress, gate_from_step=int(switch))
    return {"curves": res["curves"].drop(columns=["instance", "lr"]), "summary": _summary(cfg.variant, res),
            "switch": int(switch)}


#: The page's default comparison (and the quick reproduction).
DEFAULT = Config()
DEFAULT_VARIANTS = ["baseline", "g1_elementwise", "g1_headwise"]
ALL_VARIANTS = list(VARIANTS)
DEFAULT_LRS = [3e-3, 1e-2, 3e-2]


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress = None) -> dict:
    """Baseline vs G1 elementwise vs G1 headwise on Bigram-Backcopy (all seven variants without ``quick``)."""
    cfg = replace(DEFAULT, seed=seed)
    variants = DEFAULT_VARIANTS if quick else ALL_VARIANTS
    res = compare(cfg, variants, device=device, progress=progress)
    s = res["summary"].set_index("variant")
    m = {"fattn_floor": res["floor"]}
    for v in variants:
        m[f"fattn_{v}"] = s.loc[v, "fattn"]
    for v in variants:
        if v != "baseline":
            m[f"gate_mean_{v}"] = s.loc[v, "gate_mean"]
    for v in variants:
        m[f"mact_{v}"] = s.loc[v, "mact"]
    for v in variants:
        m[f"val_loss_{v}"] = s.loc[v, "val_loss"]
    m["sink_rate_baseline"] = s.loc["baseline", "sink_rate"]
    m["sink_rate_g1_elementwise"] = s.loc["g1_elementwise", "sink_rate"]
    m["bayes_loss"] = res["bayes_loss"]
    m["sink_reduction_g1_elementwise"] = s.loc["baseline", "fattn"] / s.loc["g1_elementwise", "fattn"]
    m["baseline_sink_over_floor"] = s.loc["baseline", "fattn"] / res["floor"]
    m["config"] = {k: v for k, v in res["config"].items() if k != "variant"}
    if out is not None:
        store.write_tables(out, {"gated_attention_summary": res["summary"], "gated_attention_layers": res["layers"],
                                 "gated_attention_curves": res["curves"]})
    return m


def _shipped_views() -> dict:
    """name → (fn, args): the page's default calls, shipped by precompute."""
    return {"layer_demo": (layer_demo, (DEFAULT,)),
            "compare_all": (compare, (DEFAULT, ALL_VARIANTS)),
            "lr_sweep_default": (lr_sweep, (DEFAULT, DEFAULT_LRS)),
            "gate_midway": (gate_midway, (DEFAULT, DEFAULT.steps // 2))}


def precompute(progress: Progress = None, only: list[str] | None = None) -> None:
    """Ship the page's default views (exactly the calls the page makes through ui.compute)."""
    views = _shipped_views()
    names = [n for n in views if only is None or n in only]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)      # one thread: the summation order the freshness tests reproduce
    try:
        for i, name in enumerate(names):
            fn, args = views[name]
            store.ship(TOPIC, name, fn, *args,
                       progress=lambda f, m="", i=i: report(progress, (i + f) / len(names), f"{name}: {m}"))
    finally:
        torch.set_num_threads(threads)
