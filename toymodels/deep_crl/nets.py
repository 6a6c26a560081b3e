"""The paper's networks and objectives (Wang et al., NeurIPS 2025, §3 and Fig. 2), batched over seeds.

* ``ResMLP``: Dense(w) → LN → Swish, then depth/4 residual blocks h + [Dense → LN → Swish]×4 (h) (the skip added
  after the fourth Swish, no LN after the add), then a final Dense. "Depth" counts only the Dense layers inside
  blocks (depth 4 = one block, six Dense layers in all). Init U(±1/√fan_in), zero biases (the code's
  ``variance_scaling(1/3, fan_in, uniform)``). Every layer carries a leading instance (seed) dimension.
* Critic: φ(s, a), ψ(g), energy f(s, a, g) = −‖φ(s, a) − ψ(g)‖₂ (negative, not squared: the code's sign), trained
  with forward InfoNCE plus a logsumexp penalty,
      𝓛 = −(1/B) Σ_i [L_ii − logsumexp_j L_ij] + 0.1·(1/B) Σ_i (logsumexp_j L_ij)²,   L_ij = f(s_i, a_i, g_j).
* Actor: tanh-Gaussian, log σ = −5 + 3.5·(tanh(raw) + 1) ∈ [−5, 2]; its loss E[α log π(a|s,g) − f(s, a, g)] uses
  the tanh change-of-variables correction.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from toymodels.topic import InputError

from .config import Config

# --------------------------------------------------------------------------- networks (instance-batched)


class BLinear(nn.Module):
    """A Dense layer for I independent instances: x (I, B, fan_in) → (I, B, fan_out).

    Init as the paper's variance_scaling(1/3, fan_in, uniform) = U(±1/√fan_in), zero bias. Instance k draws its
    weights from its own generator, so a seed's network does not depend on how many seeds train beside it.
    """

    def __init__(self, fan_in: int, fan_out: int, gens: list[torch.Generator]):
        super().__init__()
        bound = 1 / math.sqrt(fan_in)
        w = torch.stack([(torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * bound for g in gens])
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(len(gens), 1, fan_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class BLayerNorm(nn.Module):
    def __init__(self, width: int, instances: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(instances, 1, width))
        self.bias = nn.Parameter(torch.zeros(instances, 1, width))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:]) * self.weight + self.bias


class ResMLP(nn.Module):
    """Dense → LN → act, then depth/4 blocks h + [Dense → LN → act]×4 (h), then a final Dense.

    ``depth`` counts only the Dense layers inside blocks (the paper's convention: depth 4 = one block, six Dense
    layers in all). Ablations: residual=False drops the skips, layernorm=False the LayerNorms, act='relu'.
    """

    def __init__(self, fan_in: int, fan_out: int, depth: int, width: int, gens: list[torch.Generator],
                 residual: bool = True, layernorm: bool = True, act: str = "swish"):
        super().__init__()
        if depth % 4 or depth < 4:
            raise InputError("depth must be a positive multiple of 4")
        n = len(gens)
        self.residual = residual
        self.act = F.silu if act == "swish" else F.relu
        norm = (lambda: BLayerNorm(width, n)) if layernorm else (lambda: nn.Identity())
        self.inp, self.inp_norm = BLinear(fan_in, width, gens), norm()
        self.blocks = nn.ModuleList(
            nn.ModuleList(nn.ModuleList([BLinear(width, width, gens), norm()]) for _ in range(4))
            for _ in range(depth // 4))
        self.out = BLinear(width, fan_out, gens)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.inp_norm(self.inp(x)))
        for block in self.blocks:
            z = h
            for dense, norm in block:
                z = self.act(norm(dense(z)))
            h = h + z if self.residual else z     # skip added after the 4th activation, no LN after the add
        return self.out(h)

    def n_dense(self) -> tuple[int, int]:
        """(Dense layers inside blocks, Dense layers in all)."""
        inside = sum(len(b) for b in self.blocks)
        return inside, inside + 2


def tanh_gaussian_sample(mean: torch.Tensor, log_std: torch.Tensor, gen: torch.Generator | None):
    """a = tanh(u), u ~ N(mean, σ²); returns (a, log π(a)) with the change-of-variables correction
    log π(a) = Σ_k [log N(u_k) − log(1 − tanh²(u_k))], the log-det in the stable form 2(log 2 − u − softplus(−2u))."""
    std = log_std.exp()
    eps = torch.randn(mean.shape, generator=gen, device=mean.device)
    u = mean + std * eps
    log_n = -0.5 * eps ** 2 - log_std - 0.5 * math.log(2 * math.pi)
    log_det = 2 * (math.log(2) - u - F.softplus(-2 * u))
    return torch.tanh(u), (log_n - log_det).sum(-1)


class Agent(nn.Module):
    """Actor π(a | s, g) and the two critic encoders φ(s, a), ψ(g), all with the same depth and width."""

    def __init__(self, obs_dim: int, act_dim: int, cfg: Config, instances: int, seed: int):
        super().__init__()
        gens = [torch.Generator().manual_seed(seed + k) for k in range(instances)]
        kw = dict(depth=cfg.depth, width=cfg.width, gens=gens, residual=cfg.ablation != "no_residual",
                  layernorm=cfg.ablation != "no_layernorm", act="relu" if cfg.ablation == "relu" else "swish")
        self.actor = ResMLP(2 * obs_dim, 2 * act_dim, **kw)       # mean and log-std heads (one Dense, 2|A| outputs)
        self.phi = ResMLP(obs_dim + act_dim, cfg.repr_dim, **kw)
        self.psi = ResMLP(obs_dim, cfg.repr_dim, **kw)
        self.log_alpha = nn.Parameter(torch.full((instances,), math.log(cfg.alpha_init)))
        self.act_dim = act_dim

    def policy(self, obs, goal):
        mean, raw = self.actor(torch.cat([obs, goal], -1)).chunk(2, -1)
        log_std = -5 + 3.5 * (torch.tanh(raw) + 1)            # ∈ [−5, 2]
        return mean, log_std

    def energy_matrix(self, obs, act, goal):
        """L[i, j] = f(s_i, a_i, g_j) = −‖φ(s_i, a_i) − ψ(g_j)‖₂, shape (I, B, B)."""
        sa = self.phi(torch.cat([obs, act], -1))
        g = self.psi(goal)
        return -pairwise_l2(sa, g)

    def energy(self, obs, act, goal, goal_grad: bool = True):
        """f(s_i, a_i, g_i) for matched rows, shape (I, B). goal_grad=False skips ψ's backward (actor loss)."""
        with torch.set_grad_enabled(goal_grad and torch.is_grad_enabled()):
            g = self.psi(goal)
        return -torch.linalg.vector_norm(self.phi(torch.cat([obs, act], -1)) - g, dim=-1)


def pairwise_l2(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """‖x_i − y_j‖₂ for (I, B, D) × (I, B', D) → (I, B, B'), via ‖x‖² + ‖y‖² − 2x·y (a B×B×D difference tensor
    and its backward pass would cost 10× more); clamped at 1e-12 before the square root."""
    d2 = (x * x).sum(-1)[..., :, None] + (y * y).sum(-1)[..., None, :] - 2 * torch.bmm(x, y.transpose(1, 2))
    return d2.clamp_min(1e-12).sqrt()


def infonce_loss(logits: torch.Tensor, logsumexp_coef: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward InfoNCE with the logsumexp penalty, per instance. logits: (I, B, B) → (loss (I,), accuracy (I,))."""
    lse = torch.logsumexp(logits, dim=-1)                                  # (I, B)
    diag = torch.diagonal(logits, dim1=-2, dim2=-1)
    loss = -(diag - lse).mean(-1) + logsumexp_coef * (lse ** 2).mean(-1)
    target = torch.arange(logits.shape[-1], device=logits.device)
    acc = (logits.argmax(-1) == target).float().mean(-1)
    return loss, acc


class Lift:
    """A fixed random map (x, y) ↦ 2·tanh(tanh(x W₁ + b₁) W₂) to a high-dimensional observation."""

    def __init__(self, dim: int, device):
        g = torch.Generator().manual_seed(12345)
        self.w1 = (torch.randn(2, 128, generator=g) * 2).to(device)
        self.b1 = torch.randn(128, generator=g).to(device)
        self.w2 = (torch.randn(128, dim, generator=g) / math.sqrt(128)).to(device)

    def __call__(self, x):
        return 2 * torch.tanh(torch.tanh(x @ self.w1 + self.b1) @ self.w2)
