"""Peak memory of every visitor-settable computation at its worst case inside the declared limits (issue #25).

A hosted server has about 2.7 GB for everything, of which the server itself takes 300-700 MB with torch loaded,
and runs at most two computations at once (``ui.SLOTS``): one computation may add at most about
``LIMIT_MB`` = 800 MB. For each ``@bounded`` entry point a page calls (and a few the command line or a view
calls), this finds the arguments that allocate the most while the declaration (``fn.bounds``) and its budget
(``fn.budget``) still accept them: every memory-driving argument at the largest value the budget allows (a grid
search of the budget's edge, scored by the function's memory model, the ``model_*`` functions below), every time-driving
argument (steps, iterations) at its minimum. ``scope`` says which limits: ``bounds`` = the declaration (what
any caller, e.g. a crafted call or a future page, may pass), ``page`` = what the page's widgets can reach
(fixed settings kept at the page's values), ``point`` = a calibration point of a memory model, ``edge`` = the
worst case once the proposed budget (memory model <= ``PROPOSED_MB``) is added to the declaration.

Each case runs in a fresh child process (one torch thread, CPU, live cache off) that reports, as JSON lines,
its resident memory after imports and arguments (``ru_maxrss``, the baseline), its peak ``ru_maxrss`` after the
call and the wall time; the delta is what the computation itself allocated. The parent watches the child's
resident memory and stops it once the computation has added ``--cap`` MB (default 2500: this 2-core, 24 GB
machine is shared), reporting the case as over the cap with the model's prediction; the child also sets
``RLIMIT_DATA`` at 2 x the cap (+1 GB) so a much larger allocation fails at once rather than swapping (private
address space that is reserved but never touched counts there too: OpenBLAS's and the allocator's arenas made
crl.train@page fail at 1.5 x the cap + 200 MB with 387 MB resident).
Columns: ``result`` is the size of the result (what ``ui``'s in-memory LRU of 96 results keeps per distinct
call); ``held`` is the resident memory still above the baseline after the result is dropped (freed memory
glibc's heap keeps), ``trimmed`` the same after ``malloc_trim(0)``.
``--mmap-threshold 131072`` fixes glibc's mmap threshold in the children: the peak then counts the arrays alive
(what the memory models predict) rather than arrays plus heap fragmentation (what a server sees).

Run (from the repository root):
    nice -n 10 python bench/bench_memory.py            # every case (about an hour on a busy 2-core machine)
    nice -n 10 python bench/bench_memory.py --quick    # the cheap ones (about 3 minutes)
    python bench/bench_memory.py --list                # the cases, the arguments chosen and the prediction
    python bench/bench_memory.py CASE [CASE ...]       # some cases
The last line of standard output is one JSON object: {"limit_mb": ..., "cases": [...]}.
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 2 ** 20
LIMIT_MB = 800.0        # one computation's share of a 2.7 GB server running two of them beside a ~700 MB server
DEFAULT_CAP_MB = 2500.0  # the bench stops a child that adds more than this (the machine is shared)
CHILD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "TOYMODELS_THREADS": "1",
             "TOYMODELS_CACHE": "off", "TOYMODELS_DEVICE": "cpu", "TQDM_DISABLE": "1"}


# =========================================================================== the budget's edge


def accepts(fn: Callable, *args, **kwargs) -> bool:
    """Whether ``fn``'s declaration (bounds and budget) accepts these arguments, without running it."""
    from toymodels.topic import InputError

    sig = inspect.signature(inspect.unwrap(fn))
    try:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        for name, spec in fn.bounds.items():
            spec.check(name, bound.arguments[name])
        if fn.budget is not None:
            fn.budget(**bound.arguments)
    except (InputError, TypeError):
        return False
    return True


#: The budget the memory report proposes: a computation's memory model (arrays, MB) at most this. glibc's heap
#: adds up to ~2x on top (fragmentation of freed mid-size blocks: crl.train@page at a 400 MB model measured
#: 813 MB resident), so 350 MB of arrays stays within LIMIT_MB resident.
PROPOSED_MB = float(os.environ.get("BENCH_MEMORY_PROPOSED_MB", 350.0))   # the variable: to try another limit
_MODEL_CAP: list = [None]


def at_proposed_limit(build: Callable) -> Callable:
    """A case builder whose search also applies the proposed budget (model <= PROPOSED_MB): the worst case once
    the proposal is in the declarations."""
    def wrapped():
        _MODEL_CAP[0] = PROPOSED_MB
        try:
            return build()
        finally:
            _MODEL_CAP[0] = None
    return wrapped


def worst(fn: Callable, candidates, model: Callable[..., float]):
    """The accepted candidate ``(args, kwargs)`` with the largest modelled memory (ties: the first)."""
    best, best_mb = None, -1.0
    for args, kwargs in candidates:
        if accepts(fn, *args, **kwargs):
            mb = model(*args, **kwargs)
            if _MODEL_CAP[0] is not None and mb > _MODEL_CAP[0]:
                continue
            if mb > best_mb:
                best, best_mb = (args, kwargs), mb
    if best is None:
        raise ValueError(f"no candidate is accepted by {fn.__qualname__}")
    return best


def _grid(**axes):
    """Every combination of the axes' values, as dicts."""
    keys = list(axes)
    out = [{}]
    for k in keys:
        out = [{**d, k: v} for d in out for v in axes[k]]
    return out


# =========================================================================== memory models (bytes -> MB)
# Each model counts the arrays the code allocates (see the comments), in MB, beyond the process's baseline.
# Coefficients marked "fitted" were calibrated on this machine against the ``point`` cases below; the report's
# predicted-vs-measured table checks them.

F32, F64 = 4, 8


def model_crl_train(cfg, *_, **__) -> float:
    """deep_crl.train: the package's memory model (``toymodels.deep_crl.config.memory_mb``, fitted here: the replay
    buffer, the parameters with Adam's state, one SGD step's graph and the rollouts)."""
    from toymodels.deep_crl.config import memory_mb

    return memory_mb(cfg)


def model_crl_sweep(cfg, param, values, *_, **__) -> float:
    """deep_crl.sweep: one train at a time (each freed before the next): the largest of them."""
    return max(model_crl_train(replace(cfg, **{param: v})) for v in values)


def model_attention(cfg, lrs_or_variants=None, *_, E: int = 1, **__) -> float:
    """gated_attention.compare: the package's memory model (``toymodels.gated_attention.config.memory_mb``, fitted
    here: the attention maps of the measurement pass plus the training graph, E batched instances)."""
    from toymodels.gated_attention.config import memory_mb

    return memory_mb(cfg, E)


def model_attention_sweep(cfg, lrs, *_, **__) -> float:
    """gated_attention.lr_sweep: one batched model of E = len(set(lrs)) instances per variant."""
    return model_attention(cfg, E=len({float(x) for x in lrs}))


def model_window(cfg, *_, **__) -> float:
    """diffusion.train_window's evaluation: the package's memory model (``toymodels.diffusion.config.
    window_memory_mb``, fitted here: the MMD's kernel matrices and the memorisation test's distances)."""
    from toymodels.diffusion.config import window_memory_mb

    return window_memory_mb(cfg)


def model_rf(cfg, *_, **__) -> float:
    """diffusion.run_rf: the package's memory model (``toymodels.diffusion.config.rf_memory_mb``, fitted here: the
    moments phase or the exact dynamics' 7 p x p float64 matrices, whichever is larger)."""
    from toymodels.diffusion.config import rf_memory_mb

    return rf_memory_mb(cfg)


def model_rlvr_counts(df, *_, **__) -> float:
    """rlvr.analyse_counts -> pass_at_k_curve: above TABLE_LIMIT entries it evaluates log-gamma on the
    (distinct (n, c) pairs U) x (k values K) grid in blocks of LGAMMA_CHUNK entries (issue 25; before, on the whole
    grid at once), 4 float64 temporaries of a block alive (fitted on rlvr.counts#5k and #15k, unchunked); below
    it a survival table U x (K+1) and its column gather (2 float64 copies)."""
    import numpy as np

    from toymodels.rlvr.evaluations import _analysis_ks
    from toymodels.rlvr.passk import LGAMMA_CHUNK, TABLE_LIMIT

    worst_mb = 0.0
    for _, sub in df.groupby("model", sort=False):
        U = len(np.unique(sub[["n", "c"]].to_numpy(), axis=0))
        K = len(_analysis_ks(int(sub["n"].min())))
        kmax = int(sub["n"].min())
        if U * (kmax + 1) > TABLE_LIMIT:
            worst_mb = max(worst_mb, 4 * min(U, max(1, LGAMMA_CHUNK // K)) * K * F64 / MB)
        else:
            worst_mb = max(worst_mb, 2 * U * K * F64 / MB)
    return worst_mb


def model_rlvr_toy(cfg, *_, M: int = 2, C: int = 6, **__) -> float:
    """rlvr.run_toy / run_sweep: the shared uniforms (problems x n_samples) float64, the checkpoint snapshots
    (M, C, N, S) float64, the survival table of pass@k over every k <= n_samples (one row per distinct (n, c):
    at most min(N, n + 1) rows of n + 1, float64, and its column gather), one RL step's one-hot (M, B, G, S)
    float64 (only when steps > 0)."""
    N, S, n = cfg.n_problems, cfg.n_strategies, cfg.n_samples
    step = M * cfg.prompts_per_step * cfg.group_size * S * (F64 + 1) if cfg.steps or cfg.distill_steps else 0
    return (N * n * F64 + M * C * N * S * F64 + 2 * min(N, n + 1) * (n + 1) * F64 + step) / MB


def model_superposition(n: int, models_per_width: list[int], batch: int, m: int = 128, E: float = 1.0) -> float:
    """superposition_core.train_groups: every width group keeps a (I_g, B, n) float32 work buffer ``z`` for the
    whole run (4 bytes per entry, all groups) and W with its gradient and Adam's moments (16 bytes per (I, n, m)
    entry); the group being stepped adds, in ``grads_sparse``, the bool mask and int64 indices of the positive
    entries (about half of them early in training) and, on the dense path, ``res.pow(2)``: ~10 bytes per
    (I_g, B, n) entry (fitted on superposition#I8 and #I16); its evaluation adds ``ez`` (I_g, 1024, n) float32;
    the E·B active entries of each model are gathered as (active, m) float32 rows ~2.5 times (fitted on
    #I8E20); ~90 MB of evaluation sets, data blocks and first-use allocations (fitted). The package's
    ``superposition.config.memory_mb`` is this model (the cases below call it); tests/topics/superposition checks
    the two agree."""
    I_max, I_all = max(models_per_width), sum(models_per_width)
    zbuf = F32 * batch * n * I_all + 16 * n * m * I_all
    step = max(10 * I_max * batch * n, F32 * I_max * 1024 * n)
    active = 10 * E * max(batch, 1024) * I_max * m
    return 90 + (zbuf + step + active) / MB


def model_sp_run(cfg, *_, **__) -> float:
    """superposition.run: the package's memory model (``toymodels.superposition.config.memory_mb``, fitted here
    on superposition#I8, #I16 and #I8E20 before the budget: the work buffers, W with Adam's state, the step's mask
    and indices, the evaluation block and the active entries' gathers)."""
    from toymodels.superposition.config import memory_mb

    return memory_mb(cfg.n, [cfg.m], cfg.batch, cfg.E)


def model_sp_gamma(n=1000, m=20, alpha=1.0, E=1.0, gammas=None, steps=2000, batch=128, *_, **__) -> float:
    """superposition.gamma_sweep: one batched model of len(gammas) instances (the package's memory_mb)."""
    from toymodels.superposition.config import memory_mb

    return memory_mb(n, [m] * len(list(gammas if gammas is not None else range(10))), batch, E)


def model_sp_width(n=1000, ms=(10, 20, 40, 80), regimes=("strong", "weak"), steps=4000, batch=128, seeds=(0,), *_,
                   **__) -> float:
    """superposition.width_sweep: one model per (width, regime, seed), grouped by width (the package's memory_mb)."""
    from toymodels.superposition.config import memory_mb

    return memory_mb(n, [int(m) for m in ms for _ in regimes for _ in seeds], batch)


def model_embed(texts, batch_size=32, *_, **__) -> float:
    """diversity.embed_texts (the model is loaded before the baseline): one batch of B texts at MiniLM's 256
    tokens materialises the attention scores (B, 12, 256, 256) float32 (3.1 MB a text) and ~2.5 hidden-size
    activations (B, 256, 384) float32 (~1 MB a text), plus ~120 MB of tokenizer and first-use (fitted on
    the two hivemind cases: 249 MB at B = 32, 1,137 MB at B = 256, default malloc)."""
    per_text = 12 * 256 * 256 * F32 + 2.5 * 256 * 384 * F32
    return 120 + min(batch_size, len(texts)) * per_text / MB


def model_none(*_, **__) -> float:
    return float("nan")


# =========================================================================== the cases


@dataclass(frozen=True)
class Case:
    name: str
    topic: str
    fn: str                              # "module:function"
    build: Callable[[], tuple]           # -> (args, kwargs), called in the child (and by --list)
    model: Callable[..., float]
    scope: str = "bounds"                # bounds | page | point
    quick: bool = False
    note: str = ""
    # (args, kwargs) -> the arguments actually run: a time-driving argument lowered where the peak does not
    # depend on it (the declaration is checked on the unshortened arguments)
    shorten: Callable[[tuple, dict], tuple] | None = None

    def run_args(self) -> tuple:
        args, kwargs = self.build()
        return self.shorten(args, kwargs) if self.shorten else (args, kwargs)


def _fn(path: str):
    import importlib

    mod, name = path.split(":")
    return getattr(importlib.import_module(mod), name)


# ---------------------------------------------------------------- deep-crl


def crl_train_bounds():
    """The declaration's worst: the buffer's size (seeds x buffer_episodes x n_envs x episode_len) is not in
    cost_units, and the parameters' (depth x width²) only through the SGD cost, so one iteration of one SGD step
    reaches both."""
    from toymodels import deep_crl as crl

    base = replace(crl.Config(), iterations=1, sgd_steps=1, n_eval=8)
    cands = [((replace(base, **g),), {}) for g in _grid(
        seeds=[8, 4], buffer_episodes=[60, 20, 5], n_envs=[256, 512, 1024], episode_len=[100, 200, 400],
        depth=[4, 16, 32, 64], width=[64, 128, 256], batch_size=[256, 1024], repr_dim=[128])]
    return worst(crl.train, cands, model_crl_train)


def crl_train_page():
    """What the page reaches: n_envs 512, episode_len 200, buffer 20 episodes, n_eval 128 fixed (crl.DEFAULT);
    depth, width, batch, seeds and iterations set by widgets, sgd_steps 200 fixed. The peak does not depend on
    how many SGD steps run (each step's graph is freed), so the run uses sgd_steps = 1 (``crl_one_sgd_step``)."""
    from toymodels import deep_crl as crl

    best, best_mb = None, -1.0
    for g in _grid(depth=list(crl.DEPTHS), width=crl.SWEEP_VALUES["width"], batch_size=crl.SWEEP_VALUES["batch_size"],
                   seeds=list(range(1, 9)), obs_lift=[0, crl.LIFT_DIM]):
        cfg = replace(crl.DEFAULT, iterations=1, **g)
        mb = model_crl_train(cfg)
        if _MODEL_CAP[0] is not None and mb > _MODEL_CAP[0]:
            continue
        if accepts(crl.train, cfg) and mb > best_mb:
            best, best_mb = cfg, mb
    return (best,), {}


def crl_one_sgd_step(args, kwargs):
    return (replace(args[0], sgd_steps=1),) + tuple(args[1:]), kwargs


def crl_train_point(**kw):
    def build():
        from toymodels import deep_crl as crl

        return (replace(crl.Config(), iterations=1, sgd_steps=1, n_eval=8, **kw),), {}
    return build


def crl_sweep_page():
    from toymodels import deep_crl as crl

    (cfg,), _ = crl_train_page()
    cands = [((cfg, param, [v]), {}) for param in ("depth", "width", "batch_size") for v in crl.SWEEP_VALUES[param]]
    return worst(crl.sweep, cands, model_crl_sweep)


# ---------------------------------------------------------------- gated attention


def _attention_cands(page: bool):
    from toymodels import gated_attention as A

    base = replace(A.Config(), steps=100, eval_every=50)
    if page:   # the page's widgets: layers 1-4, heads/width/length from KNOBS, batch and the rest fixed
        grid = _grid(n_layers=[4], n_heads=list(A.KNOBS["ga_n_heads"].choices()),
                     d_model=list(A.KNOBS["ga_d_model"].choices()), seq_len=list(A.KNOBS["ga_seq_len"].choices()),
                     pos=["learned", "rope"])
    else:
        grid = _grid(n_layers=[4], n_heads=[1, 2, 4, 8], d_model=[16, 32, 64, 128], seq_len=[128, 256],
                     batch_size=[64, 32, 16, 4], pos=["learned", "rope"])
    return [replace(base, **g) for g in grid]


def attention_compare(page: bool):
    def build():
        from toymodels import gated_attention as A

        cands = [((c, ["baseline", "g1_elementwise"]), {}) for c in _attention_cands(page)]
        return worst(A.compare, cands, model_attention)
    return build


def attention_sweep(page: bool):
    def build():
        from toymodels import gated_attention as A

        lrs_all = [1e-3, 3e-3, 1e-2, 2e-2, 3e-2] if page else [1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2, 1e-4]
        cands = [((c, lrs_all[:k]), {}) for c in _attention_cands(page) for k in range(1, len(lrs_all) + 1)]
        return worst(A.lr_sweep, cands, model_attention_sweep)
    return build


def attention_point(E=1, **kw):
    def build():
        from toymodels import gated_attention as A

        cfg = replace(A.Config(), steps=100, eval_every=50, **kw)
        if E == 1:
            return (cfg, ["baseline"]), {}
        return (cfg, [1e-3, 3e-3, 1e-2, 2e-2, 3e-2, 5e-3, 2e-3, 1e-4][:E]), {"variants": ["baseline"]}
    return build


# ---------------------------------------------------------------- diffusion


def window_bounds():
    """M = len(ns)·seeds models at n_samples = 4000 (not in WINDOW_BUDGET): with 8 small n the training costs
    nothing."""
    from toymodels import diffusion as L

    cands = []
    for S in (4000, 2000, 1000, 500):
        for nmax in (11, 32, 128, 512, 1024):
            for k in (8, 4, 2):
                for seeds in (8, 4, 2, 1):
                    ns = list(range(nmax - k + 1, nmax + 1))
                    cands.append(((L.WindowConfig(ns=ns, seeds=seeds, width=8, d=64, steps_per_n=10, n_samples=S,
                                                  ddim_steps=10, ckpt_per_decade=1),), {}))
    return worst(L.train_window, cands, model_window)


def window_page():
    """The page: ns from [16 … 512], seeds 1-4, width 32/64/128, steps per point 50-300; n_samples 500,
    50 DDIM steps, 6 checkpoints per decade fixed."""
    import itertools

    from toymodels import diffusion as L

    WIN_NS = [16, 32, 64, 128, 256, 512]
    cands = []
    for k in range(2, 7):
        for ns in itertools.combinations(WIN_NS, k):
            for seeds in (1, 2, 3, 4):
                cands.append(((L.WindowConfig(ns=list(ns), seeds=seeds, width=32, steps_per_n=50),), {}))
    return worst(L.train_window, cands, model_window)


def window_point(**kw):
    def build():
        from toymodels import diffusion as L

        return (L.WindowConfig(**{**dict(width=8, steps_per_n=10, ddim_steps=10, ckpt_per_decade=1), **kw}),), {}
    return build


def rf_worst(page: bool):
    def build():
        from toymodels import diffusion as rf

        if page:
            grid = _grid(d=[10, 16, 20, 32], psi_p=[16, 32, 64, 128])
            psi = [[1, 2], [1, 64], [32, 64]]
            base = rf.RFConfig()
        else:
            grid = _grid(d=[32, 48, 64], psi_p=[32, 64, 85.33, 128])
            psi = [[0.5, 1], [1, 2]]
            base = rf.RFConfig(samples=5000, n_test=100, test_draws=1)
        cands = [((replace(base, psi_ns=list(ps), **g),), {}) for g in grid for ps in psi]
        return worst(rf.run_rf, cands, model_rf)
    return build


def rf_point(**kw):
    def build():
        from toymodels import diffusion as rf

        return (rf.RFConfig(**{**dict(samples=5000, n_test=100, test_draws=1, psi_ns=[1, 2]), **kw}),), {}
    return build


# ---------------------------------------------------------------- rlvr


def counts_table(rows: int, kmin: int = 4096, models: int = 1, seed: int = 0):
    """An upload-sized evaluation table: ``rows`` (model, problem, n, c) rows with distinct (n, c) pairs and
    min n = kmin, so the curve runs over every k <= kmin (a 100,000-row file is about 2.5 MB)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    per = rows // models
    parts = []
    for m in range(models):
        n = kmin + rng.permutation(per) // 2
        n[0] = kmin
        c = rng.integers(0, n + 1)
        parts.append(pd.DataFrame({"model": f"m{m}", "problem": [f"p{i}" for i in range(per)], "n": n, "c": c}))
    return pd.concat(parts, ignore_index=True)


def counts_case(rows: int, kmin: int = 4096):
    def build():
        return (counts_table(rows, kmin),), {}
    return build


def rlvr_toy(page: bool, sweep: bool = False):
    def build():
        from toymodels import rlvr as R

        base = replace(R.ToyConfig(), steps=0, distill_steps=0)
        cands = [((replace(base, **g),), {}) for g in _grid(n_problems=[512, 1024, 2048], n_samples=[1024, 2048, 4096],
                                                          n_strategies=[32, 64], group_size=[8, 64],
                                                          prompts_per_step=[64, 256])]
        if not sweep:
            return worst(R.run_toy, cands, model_rlvr_toy)
        vals = R.SWEEP_CHOICES["rho"]
        cands = [((c, "rho", vals if page else vals + [0.05]), {}) for (c,), _ in cands]
        return worst(R.run_sweep, cands, lambda cfg, p, v: model_rlvr_toy(cfg, M=len(v), C=2))
    return build


# ---------------------------------------------------------------- superposition


def sp_gamma(page: bool):
    def build():
        from toymodels import superposition as S

        cands = []
        for n in (1000, 2000):
            for batch in ((32, 64, 128, 256) if page else (256, 512, 1024)):
                for k in ((16,) if page else (8, 16, 24, 32)):
                    for E in ((1.0,) if page else (1.0, 5.0, 20.0)):
                        gam = [round(float(g), 4) for g in __import__("numpy").linspace(-1.5, 1.0, k)]
                        cands.append(((), dict(n=n, m=128, E=E, alpha=0.0, gammas=gam, steps=100 if page else 10,
                                               batch=batch)))
        return worst(S.gamma_sweep, cands, model_sp_gamma)
    return build


def sp_width(page: bool):
    def build():
        from toymodels import superposition as S

        widths = [5, 8, 10, 16, 20, 32, 40, 64, 80, 100, 128]
        cands = []
        for n in (1000, 2000):
            for batch in ((256,) if page else (256, 512, 1024)):
                for k in range(2, 12):
                    for seeds in ([[0]] if page else [[0], [0, 1], [0, 1, 2, 3]]):
                        cands.append(((), dict(n=n, ms=widths[:k], regimes=["strong", "weak"],
                                               steps=100 if page else 10, batch=batch, seeds=seeds)))
        return worst(S.width_sweep, cands, model_sp_width)
    return build


def sp_point(k: int, E: float, batch: int = 1024):
    def build():
        gam = [round(-1.5 + 2.5 * i / (k - 1), 4) for i in range(k)]
        return (), dict(n=2000, m=128, E=E, alpha=0.0, gammas=gam, steps=10, batch=batch)
    return build


def sp_run():
    from toymodels import superposition as S

    return (replace(S.Config(), n=2000, m=128, batch=1024, steps=10, E=20.0, alpha=0.0),), {}


# ---------------------------------------------------------------- hivemind, transductive (owned elsewhere)


def embed_worst(batch_size: int | None, n_texts: int):
    """``n_texts`` texts of 600 words (MiniLM truncates at 256 tokens) at ``batch_size``, or (None) at the
    largest batch size the declaration accepts."""
    def build():
        import toymodels.hivemind as D

        words = ("the quick brown fox jumps over a lazy dog while seven wizards quietly hex jolly zebras "
                 "and every model writes the same poem about time being a river").split()
        texts = [" ".join(words[(i + j) % len(words)] for j in range(600)) + f" #{i}" for i in range(n_texts)]
        if batch_size is not None:
            return (texts,), {"batch_size": batch_size}
        cands = [((texts,), {"batch_size": b}) for b in (256, 128, 64, 32, 16)]
        return worst(D.embed_texts, cands, model_embed)
    return build


def online_all10():
    import toymodels.transductive as O

    return (O.preset_class("all", n=10),), {}


def online_random16():
    """A random 16-point class with as many hypotheses as the exact solver's budget accepts."""
    import numpy as np

    import toymodels.transductive as O

    rng = np.random.default_rng(0)
    best = None
    for m in (16, 24, 32, 48, 64, 96, 128):
        H = np.unique(rng.integers(0, 2, (m, 16), dtype=np.uint8), axis=0)
        if accepts(O.class_summary, H):
            best = H
    return (best,), {}


def gap_sweep_worst():

    return (), dict(depth=3, ps=[0.5], samples=40, seed=0)


CASES = [
    # deep-crl
    Case("crl.train", "deep-crl", "toymodels.deep_crl:train", crl_train_bounds, model_crl_train),
    Case("crl.train@page", "deep-crl", "toymodels.deep_crl:train", crl_train_page, model_crl_train, "page",
         shorten=crl_one_sgd_step),
    Case("crl.sweep@page", "deep-crl", "toymodels.deep_crl:sweep", crl_sweep_page, model_crl_sweep, "page",
         shorten=crl_one_sgd_step),
    Case("crl.train#buf5", "deep-crl", "toymodels.deep_crl:train",
         crl_train_point(seeds=4, buffer_episodes=5, n_envs=1024,
         episode_len=400), model_crl_train, "point", quick=True),
    Case("crl.train#buf20", "deep-crl", "toymodels.deep_crl:train",
         crl_train_point(seeds=1, buffer_episodes=20, n_envs=1024,
         episode_len=400), model_crl_train, "point"),
    Case("crl.train#wide", "deep-crl", "toymodels.deep_crl:train",
         crl_train_point(seeds=1, buffer_episodes=1, n_envs=64,
         episode_len=100, depth=32, width=256, batch_size=256), model_crl_train, "point"),
    Case("crl.train#deep", "deep-crl", "toymodels.deep_crl:train",
         crl_train_point(seeds=1, buffer_episodes=1, n_envs=64,
         episode_len=100, depth=64, width=64, batch_size=1024), model_crl_train, "point"),
    # gated attention
    Case("attention.compare", "gated-attention", "toymodels.gated_attention:compare", attention_compare(False),
         model_attention),
    Case("attention.compare@page", "gated-attention", "toymodels.gated_attention:compare", attention_compare(True),
         model_attention, "page"),
    Case("attention.lr_sweep", "gated-attention", "toymodels.gated_attention:lr_sweep", attention_sweep(False),
         model_attention_sweep),
    Case("attention.lr_sweep@page", "gated-attention", "toymodels.gated_attention:lr_sweep", attention_sweep(True),
         model_attention_sweep, "page"),
    Case("attention#T128", "gated-attention", "toymodels.gated_attention:compare", attention_point(
        n_layers=4, n_heads=8, d_model=32, seq_len=128, pos="learned"), model_attention, "point", quick=True),
    Case("attention#T256", "gated-attention", "toymodels.gated_attention:compare", attention_point(
        n_layers=2, n_heads=4, d_model=32, seq_len=256, pos="learned"), model_attention, "point"),
    Case("attention#rope", "gated-attention", "toymodels.gated_attention:compare", attention_point(
        n_layers=2, n_heads=4, d_model=32, seq_len=128, pos="rope"), model_attention, "point", quick=True),
    Case("attention#E3", "gated-attention", "toymodels.gated_attention:lr_sweep", attention_point(
        E=3, n_layers=2, n_heads=4, d_model=32, seq_len=128, pos="learned"), model_attention_sweep, "point"),
    # diffusion
    Case("window.train", "diffusion", "toymodels.diffusion:train_window", window_bounds, model_window),
    Case("window.train@page", "diffusion", "toymodels.diffusion:train_window", window_page, model_window,
         "page"),
    Case("window#S1000", "diffusion", "toymodels.diffusion:train_window", window_point(
        ns=[4, 5, 6, 7, 8, 9, 10, 11], seeds=2, n_samples=1000), model_window, "point", quick=True),
    Case("window#S2000", "diffusion", "toymodels.diffusion:train_window", window_point(
        ns=[4, 5, 6, 7, 8, 9, 10, 11], seeds=1, n_samples=2000), model_window, "point"),
    Case("window#M32", "diffusion", "toymodels.diffusion:train_window", window_point(
        ns=[4, 5, 6, 7, 8, 9, 10, 11], seeds=4, n_samples=500), model_window, "point"),
    Case("rf.run", "diffusion", "toymodels.diffusion:run_rf", rf_worst(False), model_rf),
    Case("rf.run@page", "diffusion", "toymodels.diffusion:run_rf", rf_worst(True), model_rf, "page"),
    Case("rf#p1024", "diffusion", "toymodels.diffusion:run_rf", rf_point(d=32, psi_p=32), model_rf, "point",
         quick=True),
    Case("rf#p2048", "diffusion", "toymodels.diffusion:run_rf", rf_point(d=32, psi_p=64), model_rf, "point"),
    # rlvr
    Case("rlvr.analyse_counts", "rlvr", "toymodels.rlvr:analyse_counts", counts_case(100_000), model_rlvr_counts,
         "page", note="a 100,000-row upload (2.5 MB of the 5 MB allowed), one model, min n = 4096"),
    Case("rlvr.counts#5k", "rlvr", "toymodels.rlvr:analyse_counts", counts_case(5_000), model_rlvr_counts, "point",
         quick=True),
    Case("rlvr.counts#15k", "rlvr", "toymodels.rlvr:analyse_counts", counts_case(15_000), model_rlvr_counts, "point"),
    Case("rlvr.run_toy", "rlvr", "toymodels.rlvr:run_toy", rlvr_toy(False), model_rlvr_toy, quick=True),
    Case("rlvr.run_sweep", "rlvr", "toymodels.rlvr:run_sweep", rlvr_toy(False, sweep=True),
         lambda cfg, p, v: model_rlvr_toy(cfg, M=len(v), C=2)),
    # superposition
    Case("superposition.run", "superposition", "toymodels.superposition:run", sp_run, model_sp_run, quick=True),
    Case("superposition.gamma_sweep", "superposition", "toymodels.superposition:gamma_sweep", sp_gamma(False),
         model_sp_gamma),
    Case("superposition#I8", "superposition", "toymodels.superposition:gamma_sweep", sp_point(8, 1.0),
         model_sp_gamma, "point"),
    Case("superposition#I16", "superposition", "toymodels.superposition:gamma_sweep", sp_point(16, 1.0, 256),
         model_sp_gamma, "point"),
    Case("superposition#I4E20", "superposition", "toymodels.superposition:gamma_sweep", sp_point(4, 20.0),
         model_sp_gamma, "point"),
    Case("superposition.gamma_sweep@page", "superposition", "toymodels.superposition:gamma_sweep", sp_gamma(True),
         model_sp_gamma, "page", quick=True),
    Case("superposition.width_sweep", "superposition", "toymodels.superposition:width_sweep", sp_width(False),
         model_sp_width),
    Case("superposition.width_sweep@page", "superposition", "toymodels.superposition:width_sweep", sp_width(True),
         model_sp_width, "page"),
    # at the proposed budget (model <= PROPOSED_MB): what the worst cases become once it is applied
    Case("crl.train@350", "deep-crl", "toymodels.deep_crl:train", at_proposed_limit(crl_train_bounds), model_crl_train,
         "edge"),
    Case("crl.train@page@350", "deep-crl", "toymodels.deep_crl:train", at_proposed_limit(crl_train_page),
         model_crl_train, "edge", shorten=crl_one_sgd_step),
    Case("attention.compare@page@350", "gated-attention", "toymodels.gated_attention:compare",
         at_proposed_limit(attention_compare(True)), model_attention, "edge"),
    Case("attention.lr_sweep@page@350", "gated-attention", "toymodels.gated_attention:lr_sweep",
         at_proposed_limit(attention_sweep(True)), model_attention_sweep, "edge"),
    Case("window.train@350", "diffusion", "toymodels.diffusion:train_window", at_proposed_limit(window_bounds),
         model_window, "edge"),
    Case("superposition.gamma_sweep@350", "superposition", "toymodels.superposition:gamma_sweep",
         at_proposed_limit(sp_gamma(False)), model_sp_gamma, "edge"),
    Case("superposition.width_sweep@350", "superposition", "toymodels.superposition:width_sweep",
         at_proposed_limit(sp_width(False)), model_sp_width, "edge"),
    # hivemind, transductive
    Case("hivemind.embed_texts", "hivemind", "toymodels.hivemind.embed:embed_texts", embed_worst(None, 256),
         model_embed,
         note="256 texts of 600 words (MiniLM truncates at 256 tokens) at the largest batch allowed (the page: 32)"),
    Case("hivemind.embed_texts@page", "hivemind", "toymodels.hivemind.embed:embed_texts", embed_worst(32, 64),
         model_embed, "page", quick=True),
    Case("transductive.class_summary", "transductive", "toymodels.transductive.experiments:class_summary",
         online_random16, model_none, quick=True, note="a random 16-point class at the exact solver's budget"),
    Case("transductive.class_summary#all10", "transductive", "toymodels.transductive.experiments:class_summary",
         online_all10, model_none, quick=True, note="all 1024 functions on 10 points"),
    Case("transductive.gap_sweep", "transductive", "toymodels.transductive.experiments:gap_sweep", gap_sweep_worst,
         model_none,
         note="depth 3 (15 points), 40 classes: memory per class; the 180-class cap only adds time"),
]
BY_NAME = {c.name: c for c in CASES}


# =========================================================================== description


def _short(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return f"[{len(v)} items]" if len(v) > 8 else list(v)
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"array{tuple(v.shape)}"
    if hasattr(v, "columns") and hasattr(v, "__len__"):
        return f"table({len(v)} rows)"
    return v


def describe(args: tuple, kwargs: dict) -> str:
    """The arguments that differ from their defaults, briefly."""
    parts = []
    for a in list(args) + [kwargs]:
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            default = type(a)()
            parts.append(", ".join(f"{f.name}={_short(getattr(a, f.name))}" for f in dataclasses.fields(a)
                                   if getattr(a, f.name) != getattr(default, f.name)))
        elif isinstance(a, dict):
            parts.extend(f"{k}={_short(v)}" for k, v in a.items())
        else:
            parts.append(str(_short(a)))
    return "; ".join(p for p in parts if p)


def bundle_bytes(obj: Any) -> int:
    """The memory a result holds (arrays, tables, nested dicts and lists)."""
    import numpy as np
    import pandas as pd

    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True).sum())
    if isinstance(obj, dict):
        return sum(bundle_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(bundle_bytes(v) for v in obj)
    return 8


# =========================================================================== child


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # KiB on Linux


def _vm_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _vm_data() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


def run_child(name: str, cap_mb: float | None = None, out=sys.stdout) -> None:
    """Build the case's arguments, then call it; print a ``start`` and a ``done`` JSON line."""
    from toymodels.threads import set_thread_policy

    set_thread_policy(1)
    case = BY_NAME[name]
    fn = _fn(case.fn)
    args, kwargs = case.run_args()
    if case.topic == "hivemind":    # the model is loaded once per server process: part of the baseline
        import toymodels.hivemind as H

        H.embedder()
    import gc

    gc.collect()
    base = _maxrss_mb()
    rss0 = _vm_rss_mb()
    try:
        predicted = case.model(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a model is a convenience
        predicted = float("nan")
    start = {"event": "start", "case": name, "args": describe(args, kwargs), "baseline_mb": round(base, 1),
             "predicted_mb": None if math.isnan(predicted) else round(predicted, 1)}
    print(json.dumps(start), file=out, flush=True)
    if cap_mb:   # an allocation past the cap fails instead of taking the machine's memory
        limit = _vm_data() + int((2 * cap_mb + 1024) * MB)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.RLIM_INFINITY))
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - t0
    peak = _maxrss_mb()
    kept = bundle_bytes(result) / MB
    del result
    gc.collect()
    held = _vm_rss_mb() - rss0
    trimmed = float("nan")
    try:   # what glibc gives back when asked (freed heap pages it kept after the call)
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
        trimmed = _vm_rss_mb() - rss0
    except OSError:
        pass
    print(json.dumps({"event": "done", "case": name, "peak_mb": round(peak, 1), "delta_mb": round(peak - base, 1),
                      "seconds": round(seconds, 2), "retained_mb": round(kept, 2), "held_after_mb": round(held, 1),
                      "held_after_trim_mb": round(trimmed, 1)}), file=out, flush=True)


# =========================================================================== parent


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def measure(name: str, cap_mb: float = DEFAULT_CAP_MB, timeout: float = 900.0,
            mmap_threshold: int | None = None) -> dict:
    """Run one case in a fresh child; returns its row (``status``: ok, over_cap, failed, timeout).

    ``cap_mb``: the most the computation may add to the child's resident memory; the parent stops the child
    past its baseline + cap (before the baseline is known: past 2 x cap + 2 GB), the child's ``RLIMIT_DATA``
    makes allocations fail a little past it. ``mmap_threshold``: sets glibc's ``MALLOC_MMAP_THRESHOLD_``
    for the child (a fixed threshold: freed large blocks go back to the system at once, so the peak counts the
    arrays alive rather than the heap's fragmentation); None keeps glibc's default (the server's behaviour).
    """
    env = {**os.environ, **CHILD_ENV}
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    if mmap_threshold:
        env["MALLOC_MMAP_THRESHOLD_"] = str(int(mmap_threshold))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--cap", str(cap_mb)]
    proc = subprocess.Popen(cmd, cwd=str(ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = {"rss": 0.0, "killed": False, "limit": 2 * cap_mb + 2048.0}
    lines: list[str] = []
    err_lines: list[str] = []

    def read_out():
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("{") and '"start"' in line:
                seen["limit"] = json.loads(line)["baseline_mb"] + cap_mb

    def read_err():
        for line in proc.stderr:
            err_lines.append(line)

    def watch():
        while proc.poll() is None:
            rss = _rss_mb(proc.pid)
            seen["rss"] = max(seen["rss"], rss)
            if rss > seen["limit"]:
                seen["killed"] = True
                proc.kill()
                return
            time.sleep(0.02)

    threads = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err, watch)]
    for t in threads:
        t.start()
    status = None
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        status = "timeout"
    for t in threads:
        t.join(timeout=10)
    err = "".join(err_lines)
    case = BY_NAME[name]
    row = {"case": name, "topic": case.topic, "scope": case.scope, "fn": case.fn,
           "malloc": f"mmap_threshold={mmap_threshold}" if mmap_threshold else "default", "cap_mb": cap_mb}
    for line in lines:
        if line.startswith("{"):
            d = json.loads(line)
            d.pop("event")
            row.update(d)
    if status is None:
        if "peak_mb" in row:
            status = "ok"
        elif seen["killed"] or "MemoryError" in err or "can't allocate memory" in err:
            status = "over_cap"
        else:
            status = "failed"
    row["status"] = status
    if status != "ok":
        row["peak_mb_seen"] = round(seen["rss"], 1)
        row["error"] = (err.strip().splitlines() or [""])[-1][:300]
    return row


def _fmt(v, width=8):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-".rjust(width)
    if isinstance(v, float):
        return f"{v:,.0f}".rjust(width) if abs(v) >= 10 else f"{v:.2f}".rjust(width)
    return str(v).rjust(width)


def table(rows: list[dict]) -> str:
    head = (f"{'case':34} {'scope':6} {'base MB':>8} {'peak MB':>8} {'delta MB':>8} {'pred MB':>8} {'seconds':>8} "
            f"{'result':>8} {'held':>8} {'trimmed':>8}  status / worst-case arguments")
    lines = [head, "-" * len(head)]
    for r in rows:
        status = r.get("status", "")
        delta = r.get("delta_mb")
        if status == "over_cap":
            delta = f">{r.get('cap_mb', 0):,.0f}"
        flag = " !" if isinstance(delta, str) or (delta or 0) > LIMIT_MB else "  "
        lines.append(f"{r['case']:34} {r.get('scope', ''):6} {_fmt(r.get('baseline_mb'))} {_fmt(r.get('peak_mb'))} "
                     f"{_fmt(delta)}{flag}{_fmt(r.get('predicted_mb'), 7)} {_fmt(r.get('seconds'))} "
                     f"{_fmt(r.get('retained_mb'))} {_fmt(r.get('held_after_mb'))} "
                     f"{_fmt(r.get('held_after_trim_mb'))}  {status}: "
                     f"{r.get('args', '')}")
        if r.get("error") and status != "over_cap":
            lines.append(f"{'':36}error: {r['error']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", help="case names (default: all; see --list)")
    ap.add_argument("--quick", action="store_true", help="only the cheap cases")
    ap.add_argument("--list", action="store_true", help="print each case's arguments and prediction, run nothing")
    ap.add_argument("--cap", type=float, default=DEFAULT_CAP_MB,
                    help="stop a child whose computation adds more than this many MB (default %(default)s)")
    ap.add_argument("--mmap-threshold", type=int, default=None, metavar="BYTES",
                    help="run the children with glibc's MALLOC_MMAP_THRESHOLD_ fixed (e.g. 131072): the peak then "
                         "counts the arrays alive, without the heap's fragmentation")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        run_child(a.child, a.cap)
        return 0
    unknown = [c for c in a.cases if c not in BY_NAME]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(BY_NAME)}")
    names = a.cases or [c.name for c in CASES if c.quick or not a.quick]
    if a.list:
        for n in names:
            c = BY_NAME[n]
            args, kwargs = c.run_args()
            print(f"{n:34} {c.scope:6} pred {c.model(*args, **kwargs):>9,.0f} MB  {describe(args, kwargs)}")
        return 0
    rows = []
    for n in names:
        print(f"running {n} ...", file=sys.stderr, flush=True)
        rows.append(measure(n, a.cap, mmap_threshold=a.mmap_threshold))
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(rows))
    print(json.dumps({"limit_mb": LIMIT_MB, "cap_mb": a.cap, "mmap_threshold": a.mmap_threshold, "cases": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
