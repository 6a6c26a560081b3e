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

import numpy as np
import torch

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
