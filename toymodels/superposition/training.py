"""The training engine of the superposition toy (Liu, Liu & Gore 2025): the model, Eq. 2, and the loops.

Model     y = ReLU(W Wᵀ x + b),  W ∈ R^{n×m},  b ∈ R^n  (paper Eq. 1; data in ``data``)
Loss      L = ⟨‖y − x‖²⟩ (a sum over features: n × the mean squared error the official code trains on)
Optimiser Adam(0.9, 0.999), linear warmup, cosine decay to 0.05·lr, and before each Adam update the decoupled
          Eq. 2 step on W only: γ ≥ 0: W_i ← W_i − η_t γ W_i; γ < 0: W_i ← W_i − η_t γ W_i (1/(‖W_i‖+ε) − 1).

Engine. Models of one width form one batched model (a leading instance axis over regime, profile, seed); all
widths of a sweep train in the same step loop and share each step's data: one block of uniforms per seed and
one list of active entries per (seed, profile), so no model is padded and no datum is drawn twice. Gradients
are written by hand (x is sparse: ≈ E·B active entries of B·n, so x W is a gather of active rows and the
input side of ∂L/∂W an index_add); Adam is PyTorch's fused kernel; the fixed evaluation sample is kept as
active entries. Each model stops on its own (its rows leave the batched model), so every model gets what
``train_alone`` (plain PyTorch, one model, the benchmark's honest loop) gives it, up to float rounding.

Convergence. Training follows the schedule for ``steps`` steps; the loss L (on a fixed evaluation sample,
the same at every checkpoint) is recorded every 5 % of ``steps``. A model has converged when L changed by
less than ``tol`` (2 %) over the last 20 % of its training. If it has not, it trains on at the floor
learning rate, checked every 5 % of ``steps``, until it has or until ``max_steps``; a model that hits the cap
unconverged is reported so, and fits that use it are labelled "lower bound (not converged)".
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from toymodels.device import get_device
from toymodels.topic import InputError, as_progress

from .config import CONV_TOL, CONV_WINDOW
from .measure import measure

EPS = 1e-8                         # Eq. 2's ε, added to the row norm
LR_FLOOR = 0.05                    # cosine decay ends at 5 % of the peak learning rate
CHECK_EVERY = 0.05                 # checkpoints (and, past the scheduled steps, decisions) every 5 % of them


# --------------------------------------------------------------------------- data (Eq. 1)


def sample_x(r: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Exact sampler of x_i = u_i v_i from ONE uniform r ~ U(0,1) per entry (the official code draws two).

    u = [r < p] is Bernoulli(p); given u = 1, r/p ~ U(0,1) independently of u, so v = 2r/p ~ U(0,2).
    """
    return torch.where(r < p, r * (2.0 / p), torch.zeros((), dtype=r.dtype, device=r.device))


# --------------------------------------------------------------------------- optimiser pieces


def lr_at(step: int, steps: int, lr: float, warmup: float = 0.1) -> float:
    """Peak ``lr``: linear warmup over ``warmup·steps`` steps, then cosine decay to 0.05·lr (and the floor
    after ``steps``, where convergence continuation trains)."""
    w = int(round(warmup * steps))
    if step < w:
        return lr * (step + 1) / w
    t = (step - w) / max(1, steps - w)
    return lr * (LR_FLOOR + (1 - LR_FLOOR) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def lr_for(m: int, lr: float = 1e-2, recipe: str = "constant") -> tuple[float, float]:
    """(peak lr of W, peak lr of b) at width m: "constant" (the paper's small-model runs, exp-10) or
    "paper-large" (App. B.1, exp-17): lr_W = 0.02·(8/m)^0.25, lr_b = 2/m."""
    if recipe == "constant":
        return lr, lr
    if recipe == "paper-large":
        return 0.02 * (8.0 / m) ** 0.25, 2.0 / m
    raise InputError(f"lr_recipe must be 'constant' or 'paper-large', got {recipe!r}")


def eq2_step(W: torch.Tensor, gamma: torch.Tensor, lr_t: float, eps: float = EPS) -> torch.Tensor:
    """The paper's Eq. 2 decoupled step, in place, on W of shape (I, n, M) with one γ per instance."""
    g = gamma.view(-1, 1, 1).to(W)
    norm = W.norm(dim=2, keepdim=True)
    factor = torch.where(g >= 0, torch.ones_like(norm), 1.0 / (norm + eps) - 1.0)
    W.sub_(lr_t * g * W * factor)
    return W


def _gen(seed: int, stream: int, device: torch.device) -> torch.Generator:
    """Independent generators per (seed, stream): 0 = init, 1 = training data, 2 = evaluation data."""
    return torch.Generator(device=device).manual_seed(int(seed) * 3 + stream)


SPARSE_BELOW = 0.02                # the output side goes sparse when fewer than 2 % of the pre-activations are > 0


def _positive(z: torch.Tensor) -> torch.Tensor:
    """Flat indices of the entries of z that are > 0 (NumPy's scan is several times faster than torch's
    nonzero on the CPU at this size; the sparse path runs on the CPU only)."""
    return torch.from_numpy(np.flatnonzero(z.numpy() > 0))


@torch.no_grad()
def grads_sparse(W: torch.Tensor, b: torch.Tensor, k_i, b_i, f_i, v, B: int, z: torch.Tensor | None = None,
                 with_loss: bool = True, sparse_below: float = SPARSE_BELOW):
    """Hand-written gradients of the mean squared error of y = ReLU(W Wᵀx + b) for a batch of I models.

    x is given by its active entries (model k_i, row b_i, feature f_i, value v) of an (I, B, n) batch, so
    h = Wᵀx is a sum of ≈ E active rows of W per sample. The residual (y − x)·1[z > 0] (∂L/∂z up to a scale)
    is nonzero only where z > 0: after the first steps the bias has gone negative and that is well under 1 % of
    the entries, so on the CPU the output side (res W and resᵀ h) is a gather/index_add over those entries
    instead of two dense products; above ``sparse_below`` of the entries (early training) it is dense. Both
    paths give the same numbers up to float rounding.
    Returns (∂MSE/∂W, ∂MSE/∂b, n × MSE per model or None). ``z``: an optional (I, B, n) work buffer.
    """
    I, n, M = W.shape
    Wf = W.reshape(I * n, M)
    a_row = k_i * B + b_i                                            # row of the (I·B) samples, per active entry
    a_flat = a_row * n + f_i                                         # its index in the flattened (I, B, n)
    a_w = k_i * n + f_i                                              # its feature's row of the (I·n) rows of W
    h = torch.zeros(I * B, M, device=W.device, dtype=W.dtype).index_add_(
        0, a_row, v[:, None] * Wf.index_select(0, a_w)).view(I, B, M)  # (I, B, M)   h = Wᵀx
    WT = W.transpose(1, 2)
    z = torch.baddbmm(b.unsqueeze(1), h, WT, out=z)                  # (I, B, n)   z = W h + b
    zf = z.view(-1)
    z_act = zf.index_select(0, a_flat)
    scale = 2.0 / (B * n)                                            # d(mean over B·n)/d(residual²)
    pos = _positive(z) if z.device.type == "cpu" else None
    if pos is not None and pos.numel() < sparse_below * zf.numel():
        zf.index_add_(0, a_flat, -v * (z_act > 0))                   # z − x where x is active and z > 0
        res = zf.index_select(0, pos)                                # (y − x) on the entries with z > 0
        row = pos // n                                               # sample row k·B + b
        w_row = (row // B) * n + (pos - row * n)                     # W row k·n + i
        val = res * scale
        dh = torch.zeros(I * B, M, dtype=W.dtype).index_add_(0, row, val[:, None] * Wf.index_select(0, w_row))
        gW = torch.zeros(I * n, M, dtype=W.dtype).index_add_(      # output side: resᵀ h
            0, w_row, val[:, None] * h.view(I * B, M).index_select(0, row))
        gW.index_add_(0, a_w, v[:, None] * dh.index_select(0, a_row))  # input side: xᵀ dh
        gb = torch.zeros(I * n, dtype=W.dtype).index_add_(0, w_row, val).view(I, n)
        gW = gW.view(I, n, M)
        sq = torch.zeros(I, dtype=W.dtype).index_add_(0, row // B, res * res) if with_loss else None
    else:
        res = z.relu_()                                              # y, then (y − x)·1[z > 0]
        res.index_put_((k_i, b_i, f_i), -v * (z_act > 0), accumulate=True)
        # the transposed products are several times faster than their plain forms at small m (MKL, one thread)
        dh = torch.bmm(WT, res.transpose(1, 2)).transpose(1, 2)      # (I, B, M)   res W
        gW = torch.bmm(h.transpose(1, 2), res).transpose(1, 2).contiguous()  # (I, n, M) output side: resᵀ h
        gW.index_put_((k_i, f_i), v[:, None] * dh[k_i, b_i], accumulate=True)  # input side: xᵀ dh
        gW.mul_(scale)
        gb = res.sum(1).mul_(scale)
        sq = res.pow(2).sum((1, 2)) if with_loss else None
    loss = None
    if with_loss:  # n × MSE: (y − x)² where z > 0, plus v² on active entries the ReLU cut off
        loss = sq.index_add_(0, k_i, v.pow(2) * (z_act <= 0)) / B
    return gW, gb, loss


@torch.no_grad()
def grads(W: torch.Tensor, b: torch.Tensor, r: torch.Tensor, p_t: torch.Tensor, with_loss: bool = True,
          sparse_below: float = SPARSE_BELOW):
    """``grads_sparse`` with x given by uniforms ``r`` (I or 1, B, n) and frequencies ``p_t`` (I or 1, 1, n)
    through ``sample_x``."""
    I = W.shape[0]
    B, n = r.shape[1], r.shape[2]
    r, p_t = r.expand(I, B, n), p_t.expand(I, 1, n)
    k_i, b_i, f_i = (r < p_t).nonzero(as_tuple=True)
    v = r[k_i, b_i, f_i] * (2.0 / p_t[k_i, 0, f_i])
    return grads_sparse(W, b, k_i, b_i, f_i, v, B, with_loss=with_loss, sparse_below=sparse_below)


EVAL_CHUNK = 1024                  # the evaluation sample is drawn (and evaluated) in blocks of this many samples


def eval_uniforms(seed: int, n: int, samples: int, dev: torch.device):
    """The uniforms behind a seed's fixed evaluation sample (its stream 2), block by block: the same at every
    call, so every checkpoint of every model of that seed is scored on the same data."""
    g = _gen(seed, 2, dev)
    done = 0
    while done < samples:
        B = min(EVAL_CHUNK, samples - done)
        yield torch.rand(B, n, generator=g, device=dev)
        done += B


@torch.no_grad()
def loss_sparse(W: torch.Tensor, b: torch.Tensor, k_i, b_i, f_i, v, B: int, z: torch.Tensor | None = None):
    """Σ over a block of B samples of ‖ReLU(W Wᵀ x + b) − x‖² per model (forward only), x given by its active
    entries as in ``grads_sparse``: Σ y² over all entries, corrected on the active ones by (y − v)² − y²."""
    I, n, M = W.shape
    h = torch.zeros(I, B, M, device=W.device, dtype=W.dtype).index_put_(
        (k_i, b_i), v[:, None] * W[k_i, f_i], accumulate=True)       # (I, B, M)
    z = torch.baddbmm(b.unsqueeze(1), h, W.transpose(1, 2), out=z)  # (I, B, n)
    y = z.relu_()
    y_a = y[k_i, b_i, f_i]
    return torch.linalg.vector_norm(y, dim=(1, 2)).square().index_add_(0, k_i, v * (v - 2.0 * y_a))


class _EvalSet:
    """The evaluation samples of each (seed, profile) data stream as lists of active entries, drawn once."""

    def __init__(self, probs: torch.Tensor, n: int, samples: int, dev: torch.device):
        self.probs, self.n, self.samples, self.dev = probs, n, samples, dev
        self.blocks: dict[tuple[int, int], list] = {}

    def __call__(self, key: tuple[int, int]) -> list:
        if key not in self.blocks:
            s, d = key
            p = self.probs[d]
            out = []
            for r in eval_uniforms(s, self.n, self.samples, self.dev):
                b_i, f_i = (r < p).nonzero(as_tuple=True)
                out.append((r.shape[0], b_i, f_i, r[b_i, f_i] * (2.0 / p[f_i])))
            self.blocks[key] = out
        return self.blocks[key]


def _concat(parts: list, dev: torch.device):
    """Stack per-model active entries (b_i, f_i, v) into one list for a batched model: (k_i, b_i, f_i, v)."""
    k_i = torch.cat([torch.full((a[0].numel(),), k, dtype=torch.long, device=dev) for k, a in enumerate(parts)])
    return k_i, torch.cat([a[0] for a in parts]), torch.cat([a[1] for a in parts]), torch.cat([a[2] for a in parts])


def _adam(W: torch.Tensor, b: torch.Tensor, lr: float, lr_b: float, dev: torch.device) -> torch.optim.Adam:
    """Adam(0.9, 0.999) with W and b in two groups; the fused kernel where PyTorch has one (CPU, CUDA)."""
    fused = dev.type in ("cpu", "cuda")
    return torch.optim.Adam([{"params": [W], "lr": lr}, {"params": [b], "lr": lr_b}], betas=(0.9, 0.999),
                            eps=1e-8, fused=fused)


# --------------------------------------------------------------------------- the schedule and the criterion


def drift(check_steps, check_loss, total: int, window: float = CONV_WINDOW) -> np.ndarray:
    """Per model: |L(end) − L(start of the last ``window`` of training)| / L(end), from the checkpoint losses
    (``check_loss`` (K, I) at ``check_steps``); the start is the last checkpoint at or before (1 − window)·total."""
    s = np.asarray(check_steps)
    L = np.asarray(check_loss)
    j = int(np.flatnonzero(s <= (1.0 - window) * total)[-1])
    return np.abs(L[-1] - L[j]) / L[-1]


class Schedule:
    """When a model is scored and when it stops (the same for a batched model and a model trained alone).

    Checkpoints every 5 % of ``steps`` (and at ``steps`` and the cap). From ``steps`` on, each checkpoint
    decides: a model stops when its drift over the last 20 % of its training is below ``tol``, or at the cap.
    ``max_steps`` None: every model stops at ``steps`` (the drift is still reported)."""

    def __init__(self, steps: int, max_steps: int | None = None, tol: float = CONV_TOL):
        self.steps, self.max_steps, self.tol = int(steps), max_steps, tol
        self.every = max(1, int(round(CHECK_EVERY * steps)))
        self.cap = self.steps if max_steps is None else max(int(max_steps), self.steps)

    def checkpoint(self, s: int) -> bool:
        return s % self.every == 0 or s == self.steps or s == self.cap

    def stop(self, s: int, check_steps, check_loss) -> np.ndarray:
        """Which models (columns of ``check_loss`` (K, I)) stop after step ``s`` (a checkpoint)."""
        I = np.shape(check_loss)[1]
        if s < self.steps:
            return np.zeros(I, bool)
        if self.max_steps is None or s >= self.cap:
            return np.ones(I, bool)
        return drift(check_steps, check_loss, s) < self.tol


# --------------------------------------------------------------------------- the engine


class _Group:
    """The models of one width as one batched model: W (I, n, m), b (I, n) and Adam's state over the models
    still training (``live``); a model that stops is copied out and its rows are dropped (no padding, no
    frozen rows riding along)."""

    def __init__(self, m, models, n, probs, dev, lr, lr_b):
        self.m, self.models, self.dev = m, models, dev
        I = len(models)
        W0, b0 = torch.zeros(I, n, m), torch.zeros(I, n)
        for k, md in enumerate(models):  # W ~ N(0, 1/m), b ~ N(0, 1), per model from its seed's init stream
            W0[k], b0[k] = init_params(n, m, md["seed"])
        self.W = W0.to(dev).requires_grad_(True)
        self.b = b0.to(dev).requires_grad_(True)
        self.lr, self.lr_b = lr, lr_b
        self.opt = _adam(self.W, self.b, lr, lr_b, dev)
        self.gam = torch.tensor([md["gamma"] for md in models], dtype=torch.float32, device=dev)
        self.keys = [md["data_key"] for md in models]
        self.live = list(range(I))
        self.check_steps: list[int] = []
        self.check_loss = [[] for _ in range(I)]
        self.curve_steps: list[int] = []
        self.curve = [[] for _ in range(I)]
        self.final: list = [None] * I
        self.z = torch.empty(0)
        self.seconds = 0.0

    def live_keys(self) -> tuple:
        return tuple(self.keys[k] for k in self.live)

    def retire(self, stop: np.ndarray, step: int) -> None:
        """Copy out the models that stop after ``step`` and drop their rows from W, b and Adam's state."""
        W, b = self.W.detach(), self.b.detach()
        for j, k in enumerate(self.live):
            if stop[j]:
                self.final[k] = (W[j].cpu().numpy(), b[j].cpu().numpy(), step)
        keep = torch.tensor(np.flatnonzero(~stop), dtype=torch.long, device=self.dev)
        self.live = [k for j, k in enumerate(self.live) if not stop[j]]
        if not self.live:
            return
        old = self.opt
        self.W = W[keep].clone().requires_grad_(True)
        self.b = b[keep].clone().requires_grad_(True)
        self.opt = _adam(self.W, self.b, self.lr, self.lr_b, self.dev)
        for p_old, p_new in ((old.param_groups[0]["params"][0], self.W), (old.param_groups[1]["params"][0], self.b)):
            st = old.state[p_old]
            self.opt.state[p_new] = {"step": st["step"].clone(), "exp_avg": st["exp_avg"][keep].clone(),
                                     "exp_avg_sq": st["exp_avg_sq"][keep].clone()}
        self.gam = self.gam[keep]
        self.z = torch.empty(0)


def init_params(n: int, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The paper's initialisation from the seed's init stream (on the CPU): W ~ N(0, 1/m), b ~ N(0, 1)."""
    g = _gen(seed, 0, torch.device("cpu"))
    W = torch.randn(n, m, generator=g) / math.sqrt(m)
    return W, torch.randn(n, generator=g)


def train_groups(n: int, groups: list[tuple[int, list[dict]]], probs: np.ndarray, steps: int, batch: int,
                 lr: float = 1e-2, lr_recipe: str = "constant", warmup: float = 0.1, max_steps: int | None = None,
                 tol: float = CONV_TOL, device=None, progress=None, log_every: int = 50,
                 eval_samples: int = 8192) -> list[dict]:
    """Train width groups in one step loop, sharing each step's data; each model stops by ``Schedule``.

    ``groups``: [(m, [{"gamma", "seed", "data"}, ...]), ...] where ``data`` indexes a row of ``probs`` (K, n).
    ``max_steps`` (≥ steps): the cap of the convergence continuation; None trains exactly ``steps`` steps and
    still reports the drift. Every model gets what ``train_alone`` would give it (same data, same stopping
    step), up to float rounding. Returns per group a dict: W (I, n, m), b, loss (I,), drift, converged,
    steps_run (I,), per-model checkpoints, the training-batch loss curve, measurements per model.
    """
    p = as_progress(progress)
    dev = get_device(device)
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    sched = Schedule(steps, max_steps, tol)
    gs = []
    for m, models in groups:
        lr_w, lr_b = lr_for(m, lr, lr_recipe)
        for md in models:
            md.setdefault("data_key", (int(md["seed"]), int(md["data"])))
        gs.append(_Group(m, models, n, probs, dev, lr_w, lr_b))
    p_t = torch.tensor(probs, dtype=torch.float32, device=dev)        # (K, n)
    seeds = sorted({k[0] for g in gs for k in g.keys})
    gens = {s: _gen(s, 1, dev) for s in seeds}                        # one training-data stream per seed
    evalset = _EvalSet(p_t, n, eval_samples, dev)
    step = 0
    while any(g.live for g in gs):
        live = [g for g in gs if g.live]
        # ---- the step's data: one block of uniforms per seed, the active entries once per (seed, profile)
        keys = sorted({k for g in live for k in g.live_keys()})
        r = {s: torch.rand(batch, n, generator=gens[s], device=dev) for s in sorted({s for s, _ in keys})}
        active = {}
        for s, d in keys:
            b_i, f_i = (r[s] < p_t[d]).nonzero(as_tuple=True)
            active[(s, d)] = (b_i, f_i, r[s][b_i, f_i] * (2.0 / p_t[d, f_i]))
        stacked = {}
        log = step % log_every == 0
        for g in live:
            t0 = time.perf_counter()
            lk = g.live_keys()
            if lk not in stacked:  # widths with the same models share the stacked index lists
                stacked[lk] = _concat([active[k] for k in lk], dev)
            if g.z.shape[0] != len(g.live):
                g.z = torch.empty(len(g.live), batch, n, device=dev)
            lr_t = lr_at(step, steps, g.lr, warmup)
            gW, gb, loss = grads_sparse(g.W.detach(), g.b.detach(), *stacked[lk], batch, z=g.z, with_loss=log)
            if loss is not None:
                if not g.curve_steps or g.curve_steps[-1] != step:
                    g.curve_steps.append(step)
                for j, k in enumerate(g.live):
                    g.curve[k].append(float(loss[j]))
            with torch.no_grad():
                eq2_step(g.W.data, g.gam, lr_t)  # decoupled, before the Adam update, W only
            g.W.grad, g.b.grad = gW, gb
            g.opt.param_groups[0]["lr"] = lr_t
            g.opt.param_groups[1]["lr"] = lr_t * g.lr_b / g.lr
            g.opt.step()
            g.seconds += time.perf_counter() - t0
        step += 1
        if sched.checkpoint(step):
            for g in live:
                t0 = time.perf_counter()
                L = np.zeros(len(g.live))
                blocks = [evalset(k) for k in g.live_keys()]
                ez = torch.empty(0)
                for c in range(len(blocks[0])):
                    B = blocks[0][c][0]
                    if ez.shape[:2] != (len(g.live), B):
                        ez = torch.empty(len(g.live), B, n, device=dev)
                    L += loss_sparse(g.W.detach(), g.b.detach(), *_concat([bl[c][1:] for bl in blocks], dev), B,
                                     z=ez).cpu().numpy().astype(np.float64)
                L /= eval_samples
                g.check_steps.append(step)
                for j, k in enumerate(g.live):
                    g.check_loss[k].append(L[j])
                stop = sched.stop(step, g.check_steps, np.array([g.check_loss[k] for k in g.live]).T)
                if stop.any():
                    g.retire(stop, step)
                g.seconds += time.perf_counter() - t0
        if step % 50 == 0:
            if step <= steps:
                p(min(0.99, step / steps), f"step {step:,}/{steps:,}")
            else:
                p(0.99, f"step {step:,}: training on until converged (cap {sched.cap:,})")
    out = []
    for g in gs:
        I = len(g.models)
        W = np.stack([f[0] for f in g.final])
        b = np.stack([f[1] for f in g.final])
        steps_run = np.array([f[2] for f in g.final])
        cl = [np.asarray(g.check_loss[k]) for k in range(I)]
        dr = np.array([drift(g.check_steps[:len(cl[k])], cl[k][:, None], steps_run[k])[0] for k in range(I)])
        Kc = max(len(c) for c in g.curve)
        curve = np.full((I, Kc), np.nan)
        for k in range(I):
            curve[k, :len(g.curve[k])] = g.curve[k]
        res = {"m": g.m, "W": W, "b": b, "loss": np.array([c[-1] for c in cl]), "drift": dr,
               "converged": dr < tol, "steps_run": steps_run,
               "check_steps": [np.asarray(g.check_steps[:len(c)]) for c in cl], "check_loss": cl,
               "curve_steps": np.asarray(g.curve_steps[:Kc]), "curve": curve,
               "seconds": g.seconds, "ms_per_step": 1e3 * g.seconds / max(1, int(steps_run.max()))}
        for k, md in enumerate(g.models):
            met = measure(res["W"][k], probs[md["data"]])
            for key, val in met.items():
                res.setdefault(key, []).append(val)
        for key in ("norms", "phi_half", "phi_one", "overlap", "overlap_rep", "welch", "inv_m", "etf_bound",
                    "weak_pred", "hist"):
            res[key] = np.asarray(res[key])
        out.append(res)
    p(1.0, "done")
    return out


# --------------------------------------------------------------------------- the honest loop


def train_alone(n: int, m: int, gamma: float, seed: int, p: np.ndarray, steps: int, batch: int, lr: float = 1e-2,
                lr_recipe: str = "constant", warmup: float = 0.1, max_steps: int | None = None,
                tol: float = CONV_TOL, eval_samples: int = 8192, device=None) -> dict:
    """One model trained alone, as a user would write it in plain PyTorch: dense x, autograd, torch's Adam.

    The reference that ``train_groups`` must equal and the benchmark's baseline: the same recipe, data streams
    (init: stream 0, training batches: stream 1, evaluation sample: stream 2 of the seed), Eq. 2 step, schedule
    and stopping rule. Returns W (n, m), b, loss, drift, converged, steps_run and the CPU seconds spent.
    """
    dev = get_device(device)
    c0 = time.process_time()
    W0, b0 = init_params(n, m, seed)
    W, b = W0.to(dev).requires_grad_(True), b0.to(dev).requires_grad_(True)
    lr_w, lr_b = lr_for(m, lr, lr_recipe)
    opt = _adam(W, b, lr_w, lr_b, dev)
    gam = torch.tensor([gamma], dtype=torch.float32, device=dev)
    p_t = torch.tensor(p, dtype=torch.float32, device=dev)
    data = _gen(seed, 1, dev)
    x_eval = [sample_x(r, p_t) for r in eval_uniforms(seed, n, eval_samples, dev)]
    sched = Schedule(steps, max_steps, tol)
    check_steps, check_loss, step = [], [], 0
    while True:
        x = sample_x(torch.rand(batch, n, generator=data, device=dev), p_t)       # (B, n)
        y = torch.relu(x @ W @ W.T + b)
        loss = torch.nn.functional.mse_loss(y, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lr_t = lr_at(step, steps, lr_w, warmup)
        with torch.no_grad():
            eq2_step(W.unsqueeze(0), gam, lr_t)
        opt.param_groups[0]["lr"], opt.param_groups[1]["lr"] = lr_t, lr_t * lr_b / lr_w
        opt.step()
        step += 1
        if sched.checkpoint(step):
            with torch.no_grad():
                total = sum(float(((torch.relu(xe @ W @ W.T + b) - xe) ** 2).sum()) for xe in x_eval)
            check_steps.append(step)
            check_loss.append(total / eval_samples)
            if sched.stop(step, check_steps, np.array(check_loss)[:, None])[0]:
                break
    dr = float(drift(check_steps, np.array(check_loss)[:, None], step)[0])
    return {"W": W.detach().cpu().numpy(), "b": b.detach().cpu().numpy(), "loss": check_loss[-1], "drift": dr,
            "converged": dr < tol, "steps_run": step, "cpu_seconds": time.process_time() - c0}
