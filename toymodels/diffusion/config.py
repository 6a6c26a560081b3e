"""Configurations, bounds and cost models of the diffusion topic: light (no torch), so the page reads them.

Every live knob's limits are declared once here (``WindowConfig``, ``RFConfig`` and their budgets) and checked
by the ``@bounded`` declarations of the functions that take them (``experiments``, ``explore``, ``flows``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from toymodels.topic import InputError, Range

#: Dimension of the paper's GMM check (SM B).
GMM_D = 8
SEED = Range(0, 2**31 - 1, integer=True)
#: The visualiser's 2-D training sets: stable ids (links store these) and their labels.
DATASETS_2D = {"moons": "2-D: two moons", "ring": "2-D: ring of 8 Gaussians", "gmm2": "2-D: the SM B mixture (d = 2)"}


def ddpm_coeffs(u: float, T: int = 1000, beta_min: float = 1e-4, beta_max: float = 2e-2) -> tuple[float, float]:
    """(a, σ) of the DDPM forward process at u ∈ [0, 1] (u = t′/(T − 1)): a = √ᾱ, σ = √(1 − ᾱ), ᾱ = ∏(1 − β), with
    ᾱ interpolated between integer t′ (as ``core.Schedule("ddpm").coeffs``; light: for the page's captions)."""
    import numpy as np

    if not 0.0 <= float(u) <= 1.0:
        raise InputError(f"diffusion time u must lie in [0, 1], got {u!r}")
    ab = np.cumprod(1.0 - np.linspace(beta_min, beta_max, T))
    a2 = float(np.interp(float(u) * (T - 1), np.arange(T), ab))
    return a2 ** 0.5, (1.0 - a2) ** 0.5


@dataclass
class WindowConfig:
    """The generalisation-window experiment (SM B's GMM, CPU-sized; defaults are the page's)."""

    ns: list = field(default_factory=lambda: [16, 32, 64, 128])
    seeds: int = 1
    width: int = 64
    d: int = GMM_D
    mu: float = 1.0
    steps_per_n: float = 150.0     # S = steps_per_n · n (full batch; the notes: 200 n)
    lr: float = 6e-4               # Adam (the repo's GMM setting)
    n_samples: int = 500           # DDIM samples per checkpoint (same starting noise at every checkpoint)
    ddim_steps: int = 50           # (the notes: 1,000 samples and 100 steps; halved for a 2-core CPU)
    ckpt_per_decade: int = 6       # checkpoints at 50·10^(k/6) steps
    k: float = 1 / 3               # memorisation threshold
    seed: int = 0

    def normalised(self) -> "WindowConfig":
        """A copy with the n sorted and de-duplicated (bounds are checked by ``train_window``'s declaration)."""
        return WindowConfig(**{**asdict(self), "ns": sorted({int(n) for n in self.ns})})


#: Live compute budget of one ``train_window`` call, in row-steps of the padded ensemble: models × n_max × S_max
#: × (W/64)², S_max = (S/n)·n_max. The page's default (≈ 10⁷) trains in about a minute on 2 idle cores; the
#: command line's larger reproduction calls ``train_window.__wrapped__`` (no live budget).
WINDOW_BUDGET = 1e7


def window_cost(cfg: "WindowConfig") -> float:
    """Row-steps of ``train_window(cfg)`` (the unit of ``WINDOW_BUDGET``)."""
    ns = {int(n) for n in cfg.ns}
    return len(ns) * cfg.seeds * max(ns) ** 2 * cfg.steps_per_n * (cfg.width / 64) ** 2


def _window_budget(cfg, **_):
    cost = window_cost(cfg)
    if cost > WINDOW_BUDGET:
        raise InputError(f"that run is {cost / WINDOW_BUDGET:.1f}× this demo's live budget (about a minute of "
                         "CPU): use fewer or smaller n, fewer seeds, a smaller width or fewer steps")


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
