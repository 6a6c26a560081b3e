"""Diffusion basics: schedules, data, the closed-form (empirical-optimal) denoiser, samplers and metrics.

Bonnaire, Urfin, Biroli, Mézard (NeurIPS 2025), §2 and Eq. 5; Bertrand et al. (arXiv 2506.03719) Prop. 1.

Every forward process here is written x_t = a_t x_0 + σ_t ε with ε ~ N(0, I):

* ``ddpm`` (VP): a = √ᾱ, σ² = 1 − ᾱ, ᾱ = ∏(1 − β) with T = 1000 and β linear from 1e-4 to 2e-2;
* ``ou``: the paper's dx = −x dt + dB, a = e^{−t}, σ² = Δ_t = 1 − e^{−2t} (t = −½ log ᾱ maps it onto DDPM);
* ``ve``: a = 1, σ = σ_min (σ_max/σ_min)^u.

A schedule is evaluated at u ∈ [0, 1] (u = 0 clean, u = 1 pure noise); for DDPM u = t′/(T − 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from toymodels.topic import InputError

from .summaries import first_crossing  # noqa: F401 - core.first_crossing: the rule lives with the tables (no torch)

SCHEDULES = ("ddpm", "ou", "ve")


# --------------------------------------------------------------------------- schedules


@dataclass(frozen=True)
class Schedule:
    """A forward process x_u = a(u) x_0 + σ(u) ε, u ∈ [0, 1]."""

    kind: str = "ddpm"
    T: int = 1000
    beta_min: float = 1e-4
    beta_max: float = 2e-2
    t_max: float = 5.0       # OU: u = 1 is t = t_max
    sigma_min: float = 0.01  # VE
    sigma_max: float = 20.0  # VE

    def __post_init__(self):
        if self.kind not in SCHEDULES:
            raise InputError(f"unknown schedule {self.kind!r}: use one of {', '.join(SCHEDULES)}")

    def alpha_bar(self) -> np.ndarray:
        """DDPM ᾱ(t′) for t′ = 0 … T − 1 (float64)."""
        betas = np.linspace(self.beta_min, self.beta_max, self.T)
        return np.cumprod(1.0 - betas)

    def coeffs(self, u) -> tuple[np.ndarray, np.ndarray]:
        """(a, σ) at u (scalar or array in [0, 1])."""
        u = np.asarray(u, dtype=np.float64)
        if not np.all(np.isfinite(u)) or np.any(u < -1e-9) or np.any(u > 1 + 1e-9):
            raise InputError(f"diffusion time u must lie in [0, 1], got {u.min() if u.size else u!r}–"
                             f"{u.max() if u.size else u!r}")
        u = np.clip(u, 0.0, 1.0)  # rounding noise only (|excess| ≤ 1e-9)
        if self.kind == "ddpm":
            ab = np.interp(u * (self.T - 1), np.arange(self.T), self.alpha_bar())
            return np.sqrt(ab), np.sqrt(1.0 - ab)
        if self.kind == "ou":
            t = u * self.t_max
            return np.exp(-t), np.sqrt(-np.expm1(-2.0 * t))
        sig = self.sigma_min * (self.sigma_max / self.sigma_min) ** u
        return np.ones_like(sig), sig

    def marginal_var(self, u, data_var: float) -> np.ndarray:
        """Per-coordinate variance of x_u for data of per-coordinate variance ``data_var``: a² v + σ²."""
        a, s = self.coeffs(u)
        return a * a * data_var + s * s


def forward_noise(x0: torch.Tensor, a: float, sigma: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """x_t = a x_0 + σ ε."""
    eps = torch.randn(x0.shape, generator=generator, dtype=x0.dtype).to(x0.device)
    return a * x0 + sigma * eps


# --------------------------------------------------------------------------- data (no downloads)


def gmm_sample(n: int, d: int = 8, mu: float = 1.0, seed: int = 0, balanced: bool = True) -> np.ndarray:
    """The paper's SM B mixture ½N(μ1_d, I) + ½N(−μ1_d, I). ``balanced`` gives exactly n/2 per component."""
    rng = np.random.default_rng(seed)
    if balanced:
        signs = np.where(np.arange(n) < n // 2, 1.0, -1.0)
        rng.shuffle(signs)
    else:
        signs = rng.choice([-1.0, 1.0], size=n)
    return (signs[:, None] * mu + rng.standard_normal((n, d))).astype(np.float32)


def gmm_score(x: np.ndarray | torch.Tensor, a, sigma, mu: float = 1.0):
    """Exact score of the noised GMM (SM Eq. 24 generalised to any (a, σ)).

    x_t ~ ½N(aμ, v I) + ½N(−aμ, v I), v = a² + σ², so ∇log p = (aμ tanh(aμ·x/v) − x)/v.
    With a² + σ² = 1 (DDPM) this is m tanh(m·x) − x, m = √ᾱ μ.
    """
    m = a * mu
    v = a * a + sigma * sigma
    if isinstance(x, torch.Tensor):
        proj = x.sum(-1, keepdim=True) * m
        return (m * torch.tanh(proj / v) - x) / v
    proj = np.asarray(x).sum(-1, keepdims=True) * m
    return (m * np.tanh(proj / v) - x) / v


def two_d_data(name: str, n: int, seed: int = 0) -> np.ndarray:
    """Small 2-D training sets: ``moons``, ``ring`` (8 Gaussians) or ``gmm2`` (the d=2 version of SM B)."""
    rng = np.random.default_rng(seed)
    if name == "moons":
        from sklearn.datasets import make_moons

        x, _ = make_moons(n, noise=0.06, random_state=seed)
        x = (x - np.array([0.5, 0.25])) * 1.6
    elif name == "ring":
        k = rng.integers(0, 8, n)
        ang = 2 * np.pi * k / 8
        x = 2.0 * np.stack([np.cos(ang), np.sin(ang)], 1) + 0.15 * rng.standard_normal((n, 2))
    elif name == "gmm2":
        x = gmm_sample(n, 2, 1.0, seed)
    else:
        raise InputError(f"unknown 2-D dataset {name!r}: use moons, ring or gmm2")
    return x.astype(np.float32)


def digits(scale: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 8×8 digits (d = 64), scaled to [−1, 1] and centred by their mean.

    Returns (X, mean) with X = (x/8 − 1) − mean: the paper centres by the training mean, no standardisation.
    """
    from sklearn.datasets import load_digits

    x = load_digits().data.astype(np.float32)
    if scale:
        x = x / 8.0 - 1.0
    mean = x.mean(0)
    return (x - mean).astype(np.float32), mean.astype(np.float32)


# --------------------------------------------------------------------------- the closed-form denoiser (Eq. 5)


def posterior_logits(x: torch.Tensor, train: torch.Tensor, a: float, sigma: float,
                     train_sq: torch.Tensor | None = None) -> torch.Tensor:
    """−‖x − a x_μ‖²/(2σ²) for every query (rows of x) and training point μ, with one matrix product.

    ‖x − a x_μ‖² = ‖x‖² − 2a x·x_μ + a²‖x_μ‖²; the ‖x‖² term is constant in μ and cancels in the softmax,
    so it is dropped (the softmax is then taken with log-sum-exp, i.e. subtracting the max logit).
    """
    if train_sq is None:
        train_sq = (train * train).sum(-1)
    inv = 1.0 / (2.0 * sigma * sigma)
    bias = train_sq * (-(a * a) * inv)                       # (N,), folded into one fused matrix product
    if x.dim() == 2 and train.dim() == 2:
        return torch.addmm(bias, x, train.T, alpha=2.0 * a * inv)
    return (x @ train.mT) * (2.0 * a * inv) + bias[..., None, :]


def empirical_denoiser(x: torch.Tensor, train: torch.Tensor, a: float, sigma: float) -> torch.Tensor:
    """D(x, t) = E[x_0 | x_t = x] under the empirical measure: Σ_μ softmax_μ(−‖x − a x_μ‖²/2σ²) x_μ.

    Batched over queries (x: (B, d)), no loop over training points; stable for tiny σ (softmax subtracts the
    largest logit, i.e. the nearest training point's distance).
    """
    w = torch.softmax(posterior_logits(x, train, a, sigma), dim=-1)
    return w @ train


def empirical_score(x, train, a, sigma):
    """∇ log p_t(x) of the noised empirical measure: (a D − x)/σ²."""
    return (a * empirical_denoiser(x, train, a, sigma) - x) / (sigma * sigma)


def empirical_eps(x, train, a, sigma):
    """The optimal noise prediction ε̂ = (x − a D)/σ."""
    return (x - a * empirical_denoiser(x, train, a, sigma)) / sigma


def flow_velocity(x: torch.Tensor, train: torch.Tensor, t: float) -> torch.Tensor:
    """Closed-form flow-matching velocity (Bertrand et al. Prop. 1), x_t = (1 − t) x_0 + t x_1, x_0 ~ N(0, I).

    û*(x, t) = Σ_i λ_i (x⁽ⁱ⁾ − x)/(1 − t), λ = softmax_i(−‖x − t x⁽ⁱ⁾‖²/(2(1 − t)²)).
    This is the empirical denoiser with a = t, σ = 1 − t.
    """
    if not 0.0 <= t < 1.0:
        raise InputError(f"flow-matching time must be in [0, 1), got {t!r}")
    return (empirical_denoiser(x, train, t, 1.0 - t) - x) / (1.0 - t)


# --------------------------------------------------------------------------- samplers


def sampling_grid(schedule: Schedule, steps: int, u_min: float = 0.0) -> np.ndarray:
    """Decreasing u from 1 to u_min in ``steps`` steps (DDPM: integer t′ from 999 down to 0, as DDIM does)."""
    if steps < 1:
        raise InputError(f"sampler steps must be at least 1, got {steps!r}")
    if schedule.kind == "ddpm":
        t = np.round(np.linspace(schedule.T - 1, 0, steps + 1)).astype(int)
        return t / (schedule.T - 1)
    if schedule.kind == "ou":  # quadratic in u: small steps near the data, where σ_t ≈ √(2t) changes fastest
        return u_min + (1.0 - u_min) * np.linspace(1.0, 0.0, steps + 1) ** 2
    return np.linspace(1.0, u_min, steps + 1)  # VE: uniform in log σ


def sample(denoise, z: torch.Tensor, schedule: Schedule, steps: int = 100, method: str = "ddim",
           generator: torch.Generator | None = None, return_path: bool = False):
    """Run the reverse process from noise z with a denoiser ``denoise(x, a, σ, u) -> x̂_0``.

    ``ddim`` (η = 0): x_s = a_s x̂_0 + σ_s ε̂, ε̂ = (x_t − a_t x̂_0)/σ_t.
    ``sde``: ancestral sampling of the reverse SDE, x_s ~ q(x_s | x_t, x̂_0) (the Gaussian posterior of the
    forward process; for DDPM this is Ho et al.'s sampler, for any schedule a discretised reverse SDE).
    The output is x̂_0 at the last (smallest-noise) grid point. For VE, z is scaled by σ_max.
    """
    if method not in ("ddim", "sde"):
        raise InputError(f"sampler method must be 'ddim' or 'sde', got {method!r}")
    grid = sampling_grid(schedule, steps)
    a_all, s_all = schedule.coeffs(grid)
    x = z * float(s_all[0]) if schedule.kind == "ve" else z
    path = [x.clone()] if return_path else None
    for k in range(steps):
        a_t, s_t, a_s, s_s = (float(v) for v in (a_all[k], s_all[k], a_all[k + 1], s_all[k + 1]))
        x0 = denoise(x, a_t, s_t, float(grid[k]))
        if s_s <= 1e-8:
            x = x0
        elif method == "ddim":
            eps = (x - a_t * x0) / s_t
            x = a_s * x0 + s_s * eps
        else:
            a_ts = a_t / a_s
            var_ts = max(s_t * s_t - a_ts * a_ts * s_s * s_s, 1e-20)
            mean = (a_ts * s_s * s_s * x + a_s * var_ts * x0) / (s_t * s_t)
            std = math.sqrt(var_ts * s_s * s_s / (s_t * s_t))
            noise = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
            x = mean + std * noise
        if return_path:
            path.append(x.clone())
    if float(s_all[-1]) > 1e-8:  # end on the denoiser's estimate at the smallest noise level
        x = denoise(x, float(a_all[-1]), float(s_all[-1]), float(grid[-1]))
        if return_path:
            path[-1] = x.clone()
    return (x, torch.stack(path)) if return_path else x


def closed_form_denoiser(train: torch.Tensor):
    """Wrap the empirical denoiser for ``sample``."""
    return lambda x, a, s, u: empirical_denoiser(x, train, a, s)


def flow_sample(velocity, z: torch.Tensor, steps: int = 100, t_end: float = 0.999):
    """Euler integration of dx/dt = u(x, t) from t = 0 (noise) to t_end."""
    ts = np.linspace(0.0, t_end, steps + 1)
    x = z
    for k in range(steps):
        x = x + (ts[k + 1] - ts[k]) * velocity(x, float(ts[k]))
    return x


# --------------------------------------------------------------------------- metrics


def memorised(samples: torch.Tensor, train: torch.Tensor, k: float = 1 / 3) -> torch.Tensor:
    """Eq. 6: a sample is memorised when ‖x − a^{μ1}‖ / ‖x − a^{μ2}‖ < k (nearest / second-nearest)."""
    if train.shape[0] < 2:
        raise InputError("the memorisation test needs at least two training points")
    d = torch.cdist(samples, train)
    two = torch.topk(d, 2, dim=-1, largest=False).values
    return two[..., 0] < k * two[..., 1]


def fmem_ci(flags, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """f_mem and its bootstrap (percentile) interval over samples, as in the paper (1000 resamples)."""
    f = np.asarray(flags, dtype=np.float64).ravel()
    if f.size == 0:
        raise InputError("f_mem needs at least one sample")
    rng = np.random.default_rng(seed)
    boots = f[rng.integers(0, f.size, (n_boot, f.size))].mean(1)
    lo, hi = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(f.mean()), float(lo), float(hi)


def mmd2(x: torch.Tensor, y: torch.Tensor, bandwidth2: float = 16.0) -> torch.Tensor:
    """Unbiased MMD² with kernel exp(−‖Δ‖²/bandwidth2). Batched over leading dimensions."""
    def k(a, b):
        return torch.exp(-torch.cdist(a, b).pow(2) / bandwidth2)

    n, m = x.shape[-2], y.shape[-2]
    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    sxx = (kxx.sum((-1, -2)) - kxx.diagonal(dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))
    syy = (kyy.sum((-1, -2)) - kyy.diagonal(dim1=-2, dim2=-1).sum(-1)) / (m * (m - 1))
    return sxx + syy - 2 * kxy.mean((-1, -2))


def frechet(x: np.ndarray, y: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to two sample sets (FID without the Inception network)."""
    from scipy import linalg

    mx, my = x.mean(0), y.mean(0)
    cx, cy = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = linalg.sqrtm(cx @ cy)
    covmean = np.real(covmean)
    return float(((mx - my) ** 2).sum() + np.trace(cx + cy - 2 * covmean))


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (NaN when fewer than two finite points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])
