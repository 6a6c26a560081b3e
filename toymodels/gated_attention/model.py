"""Gated attention (Qiu et al., NeurIPS 2025): the gated layer, the toy LM and the sink metrics.

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

The LM is a small pre-norm (RMSNorm) decoder with RoPE or learned positions and a SwiGLU MLP. The sink is
measured with

* F-Attn (this paper): mean attention from queries i ≥ 1 to the first token, per layer and averaged, beside the
  uniform floor mean_{i≥1} 1/(i+1) that a head attending uniformly to its visible prefix would give;
* the sink rate of Gu et al. (ICLR 2025): α^{l,h} = (1/T) Σ_i A^{l,h}[i, 0], share of heads with α > ε = 0.3;
* massive activations (Sun et al. 2024; paper App. A.4): per layer, the largest |h| in the residual stream
  (each layer's output hidden state), its ratio to the median |h| of that layer, the position and token
  holding it, and the first token's largest |h|. Sun et al. call an activation massive when it is about a
  thousand times the median (and above 100 in absolute value); the paper's M-Act is the largest |h| averaged
  over layers.

Every weight carries a leading *instance* dimension E, so E copies of one architecture (different learning rates)
train as one batched model; all instances see the same batches.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from toymodels.device import get_device

from .config import SINK_EPS, Config, ConfigError


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
