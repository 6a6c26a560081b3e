"""The paper's GMM network (SM B, ``SimpleTimeModel``) as a stacked ensemble of M independent models.

Linear d→W; three blocks, each h ← LayerNorm(z + Linear(GELU(Linear(z)))) with z = h + e(t) a fixed sinusoidal
time embedding; Linear W→d. It has p = W(2d + 13) + d + 6W² parameters (W = 128, d = 8: 102 024). It predicts
the noise ε of a DDPM (T = 1000, β linear 1e-4 → 2e-2).

Every weight has a leading model dimension and the forward pass is batched matrix products, so many models
(several n, several seeds) train together; Adam is elementwise, so this is identical to training them one by one.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

# --------------------------------------------------------------------------- the model


def n_params(width: int, d: int) -> int:
    """p = W(2d + 13) + d + 6W² (SM B)."""
    return width * (2 * d + 13) + d + 6 * width * width


def time_embedding(T: int, width: int) -> torch.Tensor:
    """Fixed sinusoidal embedding e(t′) ∈ R^W for t′ = 0 … T − 1 (Vaswani et al.)."""
    half = width // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freqs[None]
    emb = torch.cat([torch.sin(ang), torch.cos(ang)], 1)
    if width % 2:
        emb = torch.cat([emb, torch.zeros(T, 1, dtype=torch.float64)], 1)
    return emb.float()


def _linear(M, fan_in, fan_out, gen):
    """PyTorch's default nn.Linear init, U(−1/√fan_in, 1/√fan_in), for M models at once."""
    bound = 1.0 / math.sqrt(fan_in)
    w = (torch.rand(M, fan_in, fan_out, generator=gen) * 2 - 1) * bound
    b = (torch.rand(M, 1, fan_out, generator=gen) * 2 - 1) * bound
    return w, b


def init_params(M: int, d: int, width: int, seeds: list[int]) -> dict[str, torch.Tensor]:
    """Parameters of M independent networks, model m initialised from its own seed."""
    per = []
    for s in seeds:
        gen = torch.Generator().manual_seed(int(s))
        p = {}
        p["w_in"], p["b_in"] = _linear(1, d, width, gen)
        for j in range(3):
            p[f"w1_{j}"], p[f"b1_{j}"] = _linear(1, width, width, gen)
            p[f"w2_{j}"], p[f"b2_{j}"] = _linear(1, width, width, gen)
            p[f"g_{j}"], p[f"be_{j}"] = torch.ones(1, 1, width), torch.zeros(1, 1, width)
        p["w_out"], p["b_out"] = _linear(1, width, d, gen)
        per.append(p)
    assert len(per) == M
    return {k: torch.cat([p[k] for p in per], 0) for k in per[0]}


def forward(params: dict, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
    """ε̂ for a batch per model. x: (M, B, d), emb: (M, B, W) or (B, W) → (M, B, d)."""
    h = torch.baddbmm(params["b_in"], x, params["w_in"])                     # (M, B, W)
    for j in range(3):
        z = h + emb
        y = torch.baddbmm(params[f"b1_{j}"], z, params[f"w1_{j}"])
        y = torch.baddbmm(params[f"b2_{j}"], F.gelu(y), params[f"w2_{j}"])
        h = F.layer_norm(z + y, (z.shape[-1],)) * params[f"g_{j}"] + params[f"be_{j}"]
    return torch.baddbmm(params["b_out"], h, params["w_out"])


def flatten(params: dict) -> tuple[torch.Tensor, list]:
    """All of a model's weights as one row of an (M, P) tensor, and the shapes to cut it back."""
    shapes = [(k, tuple(v.shape[1:])) for k, v in params.items()]
    return torch.cat([v.reshape(v.shape[0], -1) for v in params.values()], 1), shapes


def unflatten(flat: torch.Tensor, shapes: list) -> dict:
    out, i = {}, 0
    for k, shp in shapes:
        size = math.prod(shp)
        out[k] = flat[:, i:i + size].view(flat.shape[0], *shp)
        i += size
    return out


class Denoiser:
    """A trained stacked ensemble as a noise predictor / denoiser for the samplers (DDPM time)."""

    def __init__(self, params: dict, width: int, T: int = 1000):
        self.params, self.emb = params, time_embedding(T, width).to(params["w_in"].device)
        self.T = T

    def eps(self, x: torch.Tensor, t_idx: int) -> torch.Tensor:
        return forward(self.params, x, self.emb[t_idx])

    def denoise(self, x, a, s, u):
        """x̂_0 = (x − σ ε̂)/a, with the DDPM index t′ = round(u (T − 1))."""
        t_idx = int(round(u * (self.T - 1)))
        return (x - s * self.eps(x, t_idx)) / a


def flow_embedding(t: torch.Tensor, width: int) -> torch.Tensor:
    """The sinusoidal embedding of a continuous flow time t ∈ [0, 1], at position 999·t (so it matches
    ``time_embedding`` on the DDPM grid). t: (..., 1) → (..., W)."""
    half = width // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    ang = (999.0 * t) * freqs                                                  # (..., W/2)
    emb = torch.cat([torch.sin(ang), torch.cos(ang)], -1)
    if width % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[..., :1])], -1)
    return emb


def velocity(params: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """The flow-matching velocity field v_θ(x, t) of every model: the SM B network with the flow-time embedding.
    x: (M, B, d), t: (M, B, 1) → (M, B, d)."""
    return forward(params, x, flow_embedding(t, params["w_in"].shape[-1]))
