"""The attention-only transformer of Elhage et al. (2021), batched over seeds, and its measurement pass.

Row-vector convention (a token's residual stream is a row ``x`` of width d):

    x_0 = W_E[token] + W_pos[position]
    for each layer l:   x_{l+1} = x_l + sum_h  A^{l,h} (x_l W_V^{l,h}) W_O^{l,h}
                        A^{l,h} = softmax(causal((x_l W_Q^{l,h}) (x_l W_K^{l,h})^T / sqrt(d_head)))
    logits = x_L W_U

No MLP, no LayerNorm, no biases: every path from a token to a logit is a product of these matrices, and the
residual stream has no privileged basis (``circuits.rotate``). Every weight carries a leading *instance* dimension
E: E seeds train as one batched model (Adam is elementwise, so each instance follows exactly its own run; the
summed loss only batches the work). A head may also be given as its two circuits, ``QK{l}`` = W_Q W_K^T and
``OV{l}`` = W_V W_O (each d x d), the form in which Theus et al. interpolate two models (``lmc``).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

#: elementwise operations the symmetry test puts on the residual stream (``forward(..., resid_op=...)``)
RESID_OPS = ("none", "tanh", "rms", "rms_gain")


def param_names(n_layers: int) -> list[str]:
    names = ["W_E", "W_pos"]
    for layer in range(n_layers):
        names += [f"W_Q{layer}", f"W_K{layer}", f"W_V{layer}", f"W_O{layer}"]
    return names + ["W_U"]


def param_shapes(cfg) -> dict[str, tuple]:
    d, dh, H = cfg.d_model, cfg.d_head, cfg.n_heads
    shapes = {"W_E": (cfg.vocab, d), "W_pos": (cfg.n_ctx, d), "W_U": (d, cfg.vocab)}
    for layer in range(cfg.n_layers):
        shapes.update({f"W_Q{layer}": (H, d, dh), f"W_K{layer}": (H, d, dh), f"W_V{layer}": (H, d, dh),
                       f"W_O{layer}": (H, dh, d)})
    return {k: shapes[k] for k in param_names(cfg.n_layers)}


def init_params(cfg, seeds: list[int], device=None, dtype=torch.float32) -> dict[str, torch.Tensor]:
    """One independent draw per seed (a CPU generator seeded with the seed, so an instance's initialisation does
    not depend on the other seeds of the batch or on the device). ``cfg.init`` "torch": PyTorch's defaults for
    ``nn.Embedding`` (W_E, W_pos ~ N(0, 1)) and ``nn.Linear`` without bias (U(±1/sqrt(fan_in)): fan-in d for
    W_Q, W_K, W_V, W_U; H·d_head for W_O); "normal": every weight N(0, ``init_std``²)."""
    out: dict[str, list] = {k: [] for k in param_shapes(cfg)}
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        for k, shape in param_shapes(cfg).items():
            if cfg.init == "normal":
                w = torch.randn(shape, generator=g, dtype=torch.float64) * cfg.init_std
            elif k in ("W_E", "W_pos"):
                w = torch.randn(shape, generator=g, dtype=torch.float64)
            else:
                fan_in = cfg.d_model if not k.startswith("W_O") else cfg.n_heads * cfg.d_head
                w = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) / math.sqrt(fan_in)
            out[k].append(w)
    return {k: torch.stack(v).to(device=device, dtype=dtype).requires_grad_() for k, v in out.items()}


def n_layers_of(params) -> int:
    return sum(1 for k in params if k.startswith(("W_Q", "QK")))


def _heads(params, layer: int):
    """(QK-side, OV-side) of a layer as callables of x: q·kᵀ scores and per-head outputs."""
    if f"QK{layer}" in params:
        QK, OV = params[f"QK{layer}"], params[f"OV{layer}"]            # (E, H, d, d)
        return ("circuit", QK, OV)
    return ("factored", (params[f"W_Q{layer}"], params[f"W_K{layer}"]), (params[f"W_V{layer}"], params[f"W_O{layer}"]))


def _resid(x: torch.Tensor, op: str, gain: torch.Tensor | None) -> torch.Tensor:
    if op == "none":
        return x
    if op == "tanh":
        return torch.tanh(x)
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-12)
    return y if op == "rms" else y * gain


def forward(params: dict, tokens: torch.Tensor, d_head: int, want_attn: bool = False,
            knockout: tuple = (), resid_op: str = "none", gain: torch.Tensor | None = None):
    """Logits (E, B, T, V) for ``tokens`` (B, T) shared by every instance or (E, B, T); with ``want_attn`` also the
    attention maps, one (E, B, H, T, T) tensor per layer. ``knockout``: (layer, head) pairs whose output is zeroed.
    ``resid_op``: an elementwise operation applied to the residual stream after the embedding and after every
    layer ("tanh"; "rms": x / rms(x); "rms_gain": a LayerNorm-style gain, ``gain`` ⊙ x / rms(x)); "none" is the
    model as trained."""
    W_E, W_pos, W_U = params["W_E"], params["W_pos"], params["W_U"]
    E, T = W_E.shape[0], tokens.shape[-1]
    if tokens.dim() == 2:
        tokens = tokens.unsqueeze(0).expand(E, -1, -1)
    x = W_E[torch.arange(E, device=W_E.device)[:, None, None], tokens] + W_pos[:, None, :T]
    x = _resid(x, resid_op, gain)
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    attns = []
    scale = 1.0 / math.sqrt(d_head)
    B = x.shape[1]
    for layer in range(n_layers_of(params)):
        kind, qk, ov = _heads(params, layer)
        if kind == "factored":
            H, dh = qk[0].shape[1], qk[0].shape[3]
            w = torch.cat([w_.permute(0, 2, 1, 3).reshape(E, -1, H * dh) for w_ in (qk[0], qk[1], ov[0])], -1)
            qkv = torch.bmm(x.reshape(E, B * T, -1), w).reshape(E, B, T, 3, H, dh).permute(3, 0, 1, 4, 2, 5)
            q, k, v = qkv[0], qkv[1], qkv[2]                                # (E, B, H, T, dh)
            scores = q @ k.transpose(-1, -2)
        else:
            H = qk.shape[1]
            scores = torch.einsum("ebtd,ehdf,ebsf->ebhts", x, qk, x)
        scores = (scores * scale).masked_fill(~causal, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        if kind == "factored":
            z = attn @ v                                                     # (E, B, H, T, dh)
            if knockout:
                z = _knock(z, layer, knockout)
            z = z.permute(0, 1, 3, 2, 4).reshape(E, B * T, H * dh)
            out = torch.bmm(z, ov[1].reshape(E, H * dh, -1)).reshape(E, B, T, -1)
        else:
            mixed = torch.einsum("ebhts,ebsd->ebhtd", attn, x)
            if knockout:
                mixed = _knock(mixed, layer, knockout)
            out = torch.einsum("ebhtd,ehdf->ebtf", mixed, ov)
        x = _resid(x + out, resid_op, gain)
        if want_attn:
            attns.append(attn)
    logits = torch.bmm(x.reshape(E, B * T, -1), W_U).reshape(E, B, T, -1)
    return (logits, attns) if want_attn else logits


def _knock(z: torch.Tensor, layer: int, knockout: tuple) -> torch.Tensor:
    heads = [h for (layer_, h) in knockout if layer_ == layer]
    if not heads:
        return z
    keep = torch.ones(z.shape[2], dtype=z.dtype, device=z.device)
    keep[heads] = 0
    return z * keep[None, None, :, None, None]


def copy_loss(logits: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(E,) mean cross-entropy of the next token over the counted targets (``mask``: (B, T-1) or (E, B, T-1)), per
    instance: the in-context copy loss."""
    E, B, T, V = logits.shape
    if tokens.dim() == 2:
        tokens = tokens.unsqueeze(0).expand(E, -1, -1)
    if mask.dim() == 2:
        mask = mask.unsqueeze(0).expand(E, -1, -1)
    ce = F.cross_entropy(logits[:, :, :-1].reshape(-1, V), tokens[:, :, 1:].reshape(-1), reduction="none")
    ce = ce.reshape(E, B, T - 1)
    m = mask.to(ce.dtype)
    return (ce * m).sum((1, 2)) / m.sum((1, 2))


# --------------------------------------------------------------------------- scores from attention maps


def induction_scores(attns: list[torch.Tensor], match: torch.Tensor, queries: torch.Tensor) -> np.ndarray:
    """(E, L, H): per head, the attention paid to prefix-matching keys (``data.prefix_match_mask``: keys whose
    previous token is the query's token), averaged over the queries that have an earlier occurrence
    (``data.query_mask``). Olsson et al.'s prefix-matching score on repeated random tokens."""
    m, q = match.to(attns[0].dtype), queries.to(attns[0].dtype)
    out = [((a * m[None, :, None]).sum(-1) * q[None, :, None]).sum((1, 3)) / q.sum() for a in attns]
    return torch.stack(out, 1).detach().cpu().double().numpy()


def previous_token_scores(attns: list[torch.Tensor]) -> np.ndarray:
    """(E, L, H): per head, the mean attention from each position t >= 1 to t - 1."""
    out = [a.diagonal(offset=-1, dim1=-2, dim2=-1).mean((1, 3)) for a in attns]
    return torch.stack(out, 1).detach().cpu().double().numpy()


def to_numpy(params: dict, dtype=np.float32) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(dtype) for k, v in params.items()}


def to_torch(params: dict, device=None, dtype=torch.float32) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v), dtype=dtype, device=device) for k, v in params.items()}
