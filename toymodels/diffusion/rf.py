"""The random-features score model of the paper's §3, solved exactly.

s_A(x) = (A/√p) σ(Wx/√d), W ∈ R^{p×d} frozen Gaussian, σ = tanh, A ∈ R^{d×p} trained from A = 0 on the
DSM loss at one diffusion time t (OU process, x_t = e^{−t} x + √Δ_t ξ, x ~ N(0, I_d)), losses divided by d:

    L(A) = (1/d) E‖√Δ_t s_A(x_t) + ξ‖² = 1 + (1/d)[Tr(B U Bᵀ) + 2 Tr(B V)],   B = √Δ_t A/√p,

U = (1/n) Σ_ν E_ξ[σσᵀ] (p×p), V = (1/n) Σ_ν E_ξ[σ ξᵀ] (p×d). Gradient flow in τ = kη/d² gives
Ḃ = −(2Δ_t/ψ_p)(B U + Vᵀ), so B(τ) = VᵀU⁻¹(e^{−cUτ} − I) with c = 2Δ_t/ψ_p. In U's eigenbasis (U = QΛQᵀ,
C = VᵀQ, f_k = (1 − e^{−cλ_kτ})/λ_k):

    L_train(τ) = 1 + (1/d) Σ_k ‖C_k‖² (λ_k f_k² − 2 f_k),

and the test loss uses population Ũ, Ṽ in the same formula with B(τ). Mode λ relaxes at rate cλ: the
small eigenvalues of the ρ₁ bulk (Thm 3.2, its lower edge s_t² + v_t²(1 − √(ψ_p/ψ_n))²) set
τ_mem = ψ_p/(Δ_t λ_min) ∝ ψ_n, the population bulk ρ₂ (scale ψ_p) sets τ_gen ~ 1/Δ_t.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.diffusion import core
from toymodels.topic import Each, Fields, InputError, Range, as_progress, bounded


# --------------------------------------------------------------------------- Gaussian constants (Eq. 12-14)


def rf_constants(t: float, sigma_x: float = 1.0, order: int = 120) -> dict:
    """a_t, b_t, v_t², s_t² for σ = tanh by Gauss–Hermite quadrature (u, v, w iid N(0, 1))."""
    x, w = np.polynomial.hermite_e.hermegauss(order)
    w = w / w.sum()
    e, delta = math.exp(-t), -math.expm1(-2 * t)
    u, v = np.meshgrid(x, x, indexing="ij")
    ww = w[:, None] * w[None, :]
    f = np.tanh(e * sigma_x * u + math.sqrt(delta) * v)
    b = float((ww * v * f).sum())
    a = float((ww * u * f).sum() / (e * sigma_x))
    inner = (f * w[None, :]).sum(1)                         # E_v σ(e σ_x u + √Δ v) for each u
    v2 = float((w * inner ** 2).sum() - a * a * e * e * sigma_x ** 2)
    gamma = math.sqrt(e * e * sigma_x ** 2 + delta)
    s2 = float((w * np.tanh(gamma * x) ** 2).sum() - a * a * e * e * sigma_x ** 2 - v2 - b * b)
    return {"t": t, "delta": delta, "a": a, "b": b, "v2": v2, "s2": s2}


def bulk_edges(c: dict, psi_p: float, psi_n: float) -> tuple[float, float]:
    """Support of ρ₁ (Thm 3.2): s_t² + v_t²(1 ∓ √(ψ_p/ψ_n))²."""
    r = math.sqrt(psi_p / psi_n)
    return c["s2"] + c["v2"] * (1 - r) ** 2, c["s2"] + c["v2"] * (1 + r) ** 2


def tau_mem_theory(c: dict, psi_p: float, psi_n: float) -> float:
    """τ_mem = ψ_p/(Δ_t λ_min), λ_min the lower edge of ρ₁."""
    return psi_p / (c["delta"] * bulk_edges(c, psi_p, psi_n)[0])


# --------------------------------------------------------------------------- U, V and the exact dynamics


def feature_moments(x: torch.Tensor, W: torch.Tensor, t: float, draws: int, gen: torch.Generator,
                    chunk: int = 8192) -> tuple[torch.Tensor, torch.Tensor]:
    """U = (1/n) Σ_ν E_ξ[σσᵀ], V = (1/n) Σ_ν E_ξ[σξᵀ], E_ξ by ``draws`` noise samples per point.

    The features and each chunk's products are computed where x lives (float32 on a GPU); the running sums are
    float64 **on the CPU** (float64 is slow on consumer GPUs and missing on Apple MPS). The noise is drawn
    from the CPU generator ``gen`` and then moved, so every device sees the same noise.
    """
    n, d = x.shape
    p = W.shape[0]
    e, sd = math.exp(-t), math.sqrt(-math.expm1(-2 * t))
    U = torch.zeros(p, p, dtype=torch.float64)
    V = torch.zeros(p, d, dtype=torch.float64)
    rows = x.repeat_interleave(draws, 0)
    for i in range(0, rows.shape[0], chunk):
        xi = torch.randn(rows[i:i + chunk].shape, generator=gen, dtype=x.dtype).to(x.device)
        feat = torch.tanh((e * rows[i:i + chunk] + sd * xi) @ W.T / math.sqrt(d))
        U += (feat.T @ feat).cpu().double()
        V += (feat.T @ xi).cpu().double()
    m = rows.shape[0]
    return U / m, V / m


def rf_losses(U, V, Ut, Vt, delta: float, psi_p: float, taus: np.ndarray, d: int) -> dict:
    """Exact L_train(τ), L_test(τ) under gradient flow from A = 0 (eigen-form), in float64 on the CPU."""
    U, V, Ut, Vt = (m.detach().to("cpu", torch.float64) for m in (U, V, Ut, Vt))
    lam, Q = torch.linalg.eigh(U)
    lam = lam.clamp_min(1e-12)
    C = V.T @ Q                                              # (d, p)
    cn = (C * C).sum(0)                                      # ‖C_k‖²
    G = Q.T @ Ut @ Q
    H = C.T @ C
    Mx = G * H                                               # Tr(B Ũ Bᵀ) = fᵀ (G∘H) f
    r = ((Q.T @ Vt) * C.T).sum(1)                            # Tr(B Ṽ) = −Σ_k f_k r_k
    c = 2 * delta / psi_p
    tau = torch.as_tensor(np.asarray(taus, float), dtype=torch.float64)
    f = -torch.expm1(-c * lam[None, :] * tau[:, None]) / lam[None, :]   # (n_tau, p)
    train = 1 + ((cn * (lam * f * f - 2 * f)).sum(1)) / d
    test = 1 + (((f @ Mx) * f).sum(1) - 2 * (f * r).sum(1)) / d
    train_inf = 1 - float((cn / lam).sum()) / d
    return {"train": train.numpy(), "test": test.numpy(), "train_inf": train_inf, "eigvals": lam.numpy()}


@dataclass
class RFConfig:
    """§3 numerics, CPU-sized (the paper: d = 100, ψ_p = 64, ψ_n ∈ {4, 8, 16, 32}, t = 0.1)."""

    d: int = 20
    psi_p: float = 64.0
    psi_ns: list = field(default_factory=lambda: [4, 8, 16, 32])
    t: float = 0.1
    samples: int = 40_000       # n · N noise draws for U, V
    n_test: int = 2000          # fresh points for the population Ũ, Ṽ
    test_draws: int = 20
    seed: int = 0

    def normalised(self) -> "RFConfig":
        """A copy with ψ_n sorted and de-duplicated (bounds are checked by ``run_rf``'s declaration)."""
        return RFConfig(**{**asdict(self), "psi_ns": sorted({float(v) for v in self.psi_ns})})


#: Live compute budget of one ``run_rf`` call, in multiply-adds: the moments (n·draws rows of p features, each
#: an outer product p²) for every ψ_n and the population, plus three p³ eigen-products per ψ_n. The limit keeps
#: one run under about a minute on one core of the 2-core demo machine (the default, d = 20 and p = 1,280, is
#: 3.6 × 10¹¹ and took 14 s of CPU; see ``rf_cost``).
RF_BUDGET = 1.2e12


def rf_cost(cfg: "RFConfig") -> float:
    """The multiply-adds of ``run_rf(cfg)`` (the model behind ``RF_BUDGET``)."""
    p = float(round(cfg.psi_p * cfg.d))
    psi_ns = sorted({float(v) for v in cfg.psi_ns})
    rows = cfg.n_test * cfg.test_draws
    for psi_n in psi_ns:
        n = max(2, int(round(psi_n * cfg.d)))
        rows += n * max(4, cfg.samples // n)
    return rows * p * (p + cfg.d) + 3 * len(psi_ns) * p ** 3


def _rf_budget(cfg, **_):
    p = int(round(cfg.psi_p * cfg.d))
    if p > 4096:
        raise InputError(f"p = ψ_p·d = {p:,} features is more than this demo's 4,096: lower ψ_p or d")
    cost = rf_cost(cfg)
    if cost > RF_BUDGET:
        raise InputError(f"that run is {cost / RF_BUDGET:.1f}× this demo's live budget (about a minute of CPU): "
                         "lower ψ_p or d, or pick fewer or smaller ψ_n")


@bounded(cfg=Fields(d=Range(4, 64, integer=True), psi_p=Range(2, 128), t=Range(0.01, 2.0),
                    psi_ns=Each(Range(0.5, 64), max_len=8, min_len=2), samples=Range(5_000, 200_000, integer=True),
                    n_test=Range(100, 20_000, integer=True), test_draws=Range(1, 100, integer=True),
                    seed=Range(0, 2**31 - 1, integer=True)),
         _budget=_rf_budget)
def run_rf(cfg: RFConfig, device=None, progress=None) -> dict:
    """Losses, spectra and timescales of the random-features model for each ψ_n (bounds and the live budget:
    see the declaration; ``run_rf.__wrapped__`` runs the command line's larger settings unchecked)."""
    cfg = cfg.normalised()
    if len(cfg.psi_ns) < 2:
        raise InputError("pick at least two different values of ψ_n (the slopes need two)")
    p_ = as_progress(progress)
    dev = get_device(device)
    d, p = cfg.d, int(round(cfg.psi_p * cfg.d))
    psi_p = p / d
    gen = torch.Generator().manual_seed(cfg.seed)
    W = torch.randn(p, d, generator=gen).to(dev)
    consts = rf_constants(cfg.t)
    delta = consts["delta"]
    xt = torch.randn(cfg.n_test, d, generator=gen).to(dev)
    Ut, Vt = feature_moments(xt, W, cfg.t, cfg.test_draws, gen)
    taus = np.logspace(-1, 6.5, 121)
    curves, spectra, rows = [], [], []
    for i, psi_n in enumerate(cfg.psi_ns):
        n = max(2, int(round(psi_n * d)))
        x = torch.randn(n, d, generator=gen).to(dev)
        draws = max(4, cfg.samples // n)
        U, V = feature_moments(x, W, cfg.t, draws, gen)
        out = rf_losses(U, V, Ut, Vt, delta, psi_p, taus, d)
        lam = np.sort(out["eigvals"])
        lo, hi = bulk_edges(consts, psi_p, n / d)
        k0 = max(0, p - n - d)                               # the δ peak holds p − n − d eigenvalues
        lam_min = float(lam[k0]) if n + d < p else float("nan")
        gap = out["test"] - out["train"]
        gap_inf = gap[-1]
        test_min = float(out["test"].min())
        tau_gen = core.first_crossing(taus, out["test"], 1 - 0.9 * (1 - test_min), above=False)
        rows.append(dict(psi_n=n / d, n=n, draws=draws, lambda_min=lam_min, lambda_min_theory=lo,
                         rho1_upper_theory=hi,
                         tau_mem=psi_p / (delta * lam_min), tau_mem_theory=tau_mem_theory(consts, psi_p, n / d),
                         tau_mem_gap=core.first_crossing(taus, gap, 0.5 * gap_inf), tau_gen=tau_gen,
                         loss_train_10=float(np.interp(np.log(10), np.log(taus), out["train"])),
                         loss_test_10=float(np.interp(np.log(10), np.log(taus), out["test"])),
                         loss_train_inf=out["train_inf"], test_min=test_min,
                         mass_delta=float(np.mean(lam < math.sqrt(consts["s2"] * lo))),
                         mass_rho1=float(np.mean((lam >= math.sqrt(consts["s2"] * lo)) & (lam <= 3 * hi))),
                         mass_rho2=float(np.mean(lam > 3 * hi))))
        curves.append(pd.DataFrame({"psi_n": n / d, "tau": taus, "train": out["train"], "test": out["test"]}))
        spectra.append(pd.DataFrame({"psi_n": n / d, "eigenvalue": lam}))
        p_((i + 1) / len(cfg.psi_ns), f"ψ_n = {psi_n:g}")
    summary = pd.DataFrame(rows)
    return {"config": asdict(cfg), "p": p, "constants": consts, "summary": summary,
            "curves": pd.concat(curves, ignore_index=True), "spectra": pd.concat(spectra, ignore_index=True),
            "tau_mem_slope": core.loglog_slope(summary.psi_n, summary.tau_mem),
            "tau_mem_gap_slope": core.loglog_slope(summary.psi_n, summary.tau_mem_gap),
            "tau_mem_theory_slope": core.loglog_slope(summary.psi_n, summary.tau_mem_theory),
            "tau_gen_slope": core.loglog_slope(summary.psi_n, summary.tau_gen)}
