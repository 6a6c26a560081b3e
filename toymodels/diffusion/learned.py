"""A learned denoiser and the generalisation window τ_gen ≪ τ_mem ∝ n (paper §2, SM B).

The network is the paper's GMM model (SM B, ``SimpleTimeModel``): Linear d→W; three blocks, each
h ← LayerNorm(z + Linear(GELU(Linear(z)))) with z = h + e(t) a fixed sinusoidal time embedding; Linear W→d.
It has p = W(2d + 13) + d + 6W² parameters (W = 128, d = 8: 102 024). It predicts the noise ε of a DDPM
(T = 1000, β linear 1e-4 → 2e-2), trained on MSE(ε, ε̂) with t′ ~ U{1, …, 999}, **full batch** (all n points
every step, fresh (t′, ε) per point), Adam.

Many models (several n, several seeds) train together as one *stacked ensemble*: every weight has a leading
model dimension and the forward pass is batched matrix products. Smaller training sets are padded to the
largest n and masked out of their loss; a model stops (is frozen) after its own S = steps_per_n · n steps.
Adam is elementwise, so this is identical to training the models one by one.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from toymodels.device import get_device
from toymodels.diffusion import core
from toymodels.topic import Each, Fields, InputError, Range, as_progress, bounded

GMM_D = 8


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


# --------------------------------------------------------------------------- the experiment


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


def checkpoint_steps(total: int, per_decade: int = 8) -> list[int]:
    """0, then 50·10^(k/per_decade) up to ``total``."""
    out = [0]
    k = 0
    while True:
        s = int(round(50 * 10 ** (k / per_decade)))
        if s >= total:
            break
        if s > out[-1]:
            out.append(s)
        k += 1
    return out + [int(total)]


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


@bounded(cfg=Fields(ns=Each(Range(4, 1024, integer=True), max_len=8, min_len=2), seeds=Range(1, 8, integer=True),
                    width=Range(8, 256, integer=True), d=Range(1, 64, integer=True), mu=Range(0.0, 10.0),
                    steps_per_n=Range(10, 1000), lr=Range(1e-5, 1e-2), n_samples=Range(100, 4000, integer=True),
                    ddim_steps=Range(10, 200, integer=True), ckpt_per_decade=Range(1, 20, integer=True),
                    k=Range(0.01, 1.0), seed=Range(0, 2**31 - 1, integer=True)),
         _budget=_window_budget)
def train_window(cfg: WindowConfig, device=None, progress=None) -> dict:
    """Train every (n, seed) model, evaluating f_mem, quality and losses at log-spaced checkpoints.

    Returns a bundle: ``curves`` (one row per model and checkpoint), ``summary`` (τ_gen, τ_mem per n),
    the fitted slopes, and the closed-form sampler's f_mem on the same training sets.
    """
    cfg = cfg.normalised()
    if len(cfg.ns) < 2:
        raise InputError("pick at least two different training-set sizes n (the slopes need two)")
    p_ = as_progress(progress)
    dev = get_device(device)
    d, W = cfg.d, cfg.width
    models = [(n, s) for n in cfg.ns for s in range(cfg.seeds)]
    M, n_max = len(models), max(cfg.ns)
    # each (n, seed) its own training set, balanced halves
    data = torch.zeros(M, n_max, d)
    mask = torch.zeros(M, n_max)
    for m, (n, s) in enumerate(models):
        data[m, :n] = torch.from_numpy(core.gmm_sample(n, d, cfg.mu, seed=10_000 * cfg.seed + 97 * n + s))
        mask[m, :n] = 1.0
    data, mask = data.to(dev), mask.to(dev)
    counts = mask.sum(1)                                                         # (M,)
    stop = torch.tensor([int(cfg.steps_per_n * n) for n, _ in models], device=dev)
    params = {k: v.to(dev).requires_grad_(True) for k, v in
              init_params(M, d, W, [1000 * cfg.seed + 13 * n + s for n, s in models]).items()}
    opt = torch.optim.Adam(list(params.values()), lr=cfg.lr, foreach=True)
    sched = core.Schedule("ddpm")
    ab = torch.tensor(sched.alpha_bar(), dtype=torch.float32, device=dev)
    emb_table = time_embedding(sched.T, W).to(dev)

    # fixed evaluation material
    gen = torch.Generator().manual_seed(cfg.seed + 12345)
    z0 = torch.randn(cfg.n_samples, d, generator=gen).to(dev)                  # sampler noise, same every time
    fresh = torch.from_numpy(core.gmm_sample(1000, d, cfg.mu, seed=cfg.seed + 777)).to(dev)
    ref = torch.from_numpy(core.gmm_sample(1000, d, cfg.mu, seed=cfg.seed + 778)).to(dev)
    se_t = list(range(100, 1000, 100))
    se_eps = torch.randn(len(se_t), 1000, d, generator=gen).to(dev)
    t_small = int(np.argmin(np.abs(sched.alpha_bar() - np.exp(-0.02))))    # OU time t = 0.01
    loss_eps_train = torch.randn(5, n_max, d, generator=gen).to(dev)
    loss_eps_test = torch.randn(5, 1000, d, generator=gen).to(dev)
    big = torch.finfo(torch.float32).max

    def evaluate(step: int) -> list[dict]:
        with torch.no_grad():
            den = Denoiser({k: v.detach() for k, v in params.items()}, W)
            x = core.sample(den.denoise, z0.expand(M, -1, -1).contiguous(), sched, cfg.ddim_steps)
            dist = torch.cdist(x, data)                                          # (M, S, n_max)
            dist = dist.masked_fill(mask[:, None, :] == 0, big)
            two = torch.topk(dist, 2, dim=-1, largest=False).values
            mem = (two[..., 0] < cfg.k * two[..., 1]).cpu().numpy()
            # score error: per-dimension MSE of ε̂ against the ε implied by the exact GMM score
            se = torch.zeros(M, device=dev)
            for i, t in enumerate(se_t):
                a, s = float(ab[t].sqrt()), float((1 - ab[t]).sqrt())
                xt = a * fresh + s * se_eps[i]
                eps_true = -s * core.gmm_score(xt, a, s, cfg.mu)
                se += ((den.eps(xt.expand(M, -1, -1), t) - eps_true) ** 2).mean((-1, -2))
            se /= len(se_t)
            mm = core.mmd2(x, ref.expand(M, -1, -1))
            finite = torch.isfinite(x).all(-1).all(-1)
            a, s = float(ab[t_small].sqrt()), float((1 - ab[t_small]).sqrt())
            tr = torch.stack([((den.eps(a * data + s * e, t_small) - e) ** 2).mean(-1) for e in loss_eps_train])
            train_loss = (tr.mean(0) * mask).sum(1) / counts
            te = torch.stack([((den.eps((a * fresh + s * e).expand(M, -1, -1), t_small) - e) ** 2).mean((-1, -2))
                              for e in loss_eps_test]).mean(0)
        rows = []
        for m, (n, s_) in enumerate(models):
            if step > int(stop[m]):
                continue
            f, lo, hi = core.fmem_ci(mem[m], n_boot=300, seed=step + m)
            rows.append(dict(n=n, seed=s_, step=step, f_mem=f, f_lo=lo, f_hi=hi, score_err=float(se[m]),
                             mmd2=float(mm[m]) if bool(finite[m]) else float("nan"),
                             train_loss=float(train_loss[m]), test_loss=float(te[m])))
        return rows

    total = int(stop.max())
    ckpts = sorted(set(checkpoint_steps(total, cfg.ckpt_per_decade)) | {int(v) for v in stop.tolist()})
    gen_train = torch.Generator().manual_seed(cfg.seed + 1)   # CPU draws, then moved: any device, same noise
    rows = evaluate(0)
    step = 0
    for target in ckpts[1:]:
        while step < target:
            active = (step < stop).float()
            t = torch.randint(1, sched.T, (M, n_max), generator=gen_train).to(dev)
            eps = torch.randn(M, n_max, d, generator=gen_train).to(dev)
            a = ab[t].sqrt()[..., None]
            xt = a * data + (1 - ab[t]).sqrt()[..., None] * eps
            out = forward(params, xt, emb_table[t])
            # Σ_m of each active model's MSE: the models' gradients are independent; a frozen model gets 0
            loss = ((((out - eps) ** 2).mean(-1) * mask).sum(1) / counts * active).sum()
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            step += 1
            for m in torch.nonzero(stop == step).flatten().tolist():
                # model m has had its S steps: zero its Adam moments so that (zero gradient) it never moves again
                for p in params.values():
                    opt.state[p]["exp_avg"][m].zero_()
                    opt.state[p]["exp_avg_sq"][m].zero_()
        rows += evaluate(step)
        p_(step / total, f"step {step:,}/{total:,}")

    curves = pd.DataFrame(rows)
    # the closed-form (empirical-optimal) sampler on the same training sets, same noise
    cf = []
    with torch.no_grad():
        for m, (n, s_) in enumerate(models):
            tr = data[m, :n]
            x = core.sample(core.closed_form_denoiser(tr), z0, sched, cfg.ddim_steps)
            cf.append(float(core.memorised(x, tr, cfg.k).float().mean()))
    summary, fits = summarise(curves, cfg.ns, cfg.steps_per_n)
    return {"config": asdict(cfg), "curves": curves, "summary": summary, "closed_form_fmem": cf,
            "closed_form_fmem_min": float(min(cf)), **fits, "n_params": n_params(W, d)}


MEM_THRESHOLD = 0.02   # f_mem ≥ 2% (10 of 500 samples); fresh GMM samples score ≈ 1e-4
GAP_THRESHOLD = 0.2    # test − train denoising loss at t = 0.01


def model_times(g: pd.DataFrame) -> dict:
    """Timescales of one model from its checkpoints.

    τ_gen: the score error has made 90% of its drop (MMD² ≤ 0.05 as a second definition).
    τ_mem: onset of *sustained* memorisation, the crossing of f_mem ≥ 2% after which it never falls back below
    (an untrained network can pile its samples onto a few points of a tiny training set, a transient that is not
    memorisation); NaN if f_mem ends below 2%. Also the first time f_mem reaches half its final value, and the
    onset of the train/test loss gap (≥ 0.2).
    """
    g = g.sort_values("step")
    st, f, se, mm = g.step.to_numpy(), g.f_mem.to_numpy(), g.score_err.to_numpy(), g.mmd2.to_numpy()
    gap = g.test_loss.to_numpy() - g.train_loss.to_numpy()
    i_min = int(np.nanargmin(se))
    se_min = se[i_min]
    tau_gen = core.first_crossing(st, se, se[0] - 0.9 * (se[0] - se_min), above=False)
    tau_gen_mmd = core.first_crossing(st, mm, 0.05, above=False)
    below = np.flatnonzero(f < MEM_THRESHOLD)
    j = int(below[-1]) if below.size else 0
    tau_mem = core.first_crossing(st[j:], f[j:], MEM_THRESHOLD) if f[-1] >= MEM_THRESHOLD else float("nan")
    tau_mem_half = core.first_crossing(st[i_min:], f[i_min:], 0.5 * f[-1]) if f[-1] >= MEM_THRESHOLD else float("nan")
    tau_gap = core.first_crossing(st, gap, GAP_THRESHOLD)
    return dict(tau_gen=tau_gen, tau_gen_mmd=tau_gen_mmd, tau_mem=tau_mem, tau_mem_half=tau_mem_half,
                tau_gap=tau_gap, f_final=float(f[-1]), se_min=float(se_min))


def _gmean(v) -> float:
    v = np.asarray(v, float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else float("nan")


def summarise(curves: pd.DataFrame, ns, steps_per_n) -> tuple[pd.DataFrame, dict]:
    per = pd.DataFrame([dict(n=n, seed=s, **model_times(g)) for (n, s), g in curves.groupby(["n", "seed"])])
    cols = ["tau_gen", "tau_gen_mmd", "tau_mem", "tau_mem_half", "tau_gap", "f_final"]
    summary = per.groupby("n")[cols].agg(_gmean).reset_index()
    summary["f_final"] = per.groupby("n")["f_final"].mean().to_numpy()
    fits = {
        "tau_mem_slope": core.loglog_slope(summary.n, summary.tau_mem),
        "tau_mem_half_slope": core.loglog_slope(summary.n, summary.tau_mem_half),
        "tau_gen_slope": core.loglog_slope(summary.n, summary.tau_gen),
        "tau_gen_mmd_slope": core.loglog_slope(summary.n, summary.tau_gen_mmd),
        "tau_gap_slope": core.loglog_slope(summary.n, summary.tau_gap),
    }
    return summary, fits
