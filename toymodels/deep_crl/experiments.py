"""Every bounded call the page or the command line makes with the online agent: a depth sweep, a one-knob sweep,
the powered test's seeds at one depth (``online_seeds``), and a benchmark of the environment and SGD speed."""
from __future__ import annotations

import time
from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.topic import InputError, Progress, as_progress, bounded

from .config import (
    BUDGET,
    KNOBS,
    ONLINE,
    ONLINE_SEEDS,
    SWEEP_VALUES,
    Config,
    check_memory,
    expected_seconds,
    make_maze,
)
from .env import PointMaze
from .training import train

# --------------------------------------------------------------------------- sweeps


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs(group="depth_sweep"))
def depth_sweep(cfg: Config = Config(), depths: list[int] = (4, 8, 16, 32), device=None,  # noqa: B008
                progress: Progress = None) -> dict:
    """Train at every depth (seeds batched inside each run). Returns per-depth bundles and a summary table."""
    p = as_progress(progress)
    depths = [int(d) for d in depths]
    runs, summary = {}, []
    weights = np.array([d + 2 for d in depths], float)
    done = np.concatenate([[0], np.cumsum(weights)]) / weights.sum()
    for i, d in enumerate(depths):
        res = train(replace(cfg, depth=d), device=device, progress=p.sub(done[i], done[i + 1]))
        runs[str(d)] = res
        summary.append(res["final"])
    return {"depths": depths, "runs": runs, "summary": pd.concat(summary, ignore_index=True)}


def summarise(summary: pd.DataFrame, by: str = "depth") -> pd.DataFrame:
    """Mean and standard error over seeds of each metric, per value of ``by``."""
    cols = ["success", "time_at_goal", "critic_accuracy", "critic_accuracy_fresh", "spearman_euclid",
            "spearman_corridor"]
    g = summary.groupby(by)[cols]
    mean, sem, n = g.mean(), g.sem(ddof=1).fillna(0.0), g.size()
    out = mean.add_suffix("_mean").join(sem.add_suffix("_sem"))
    out["n_seeds"] = n
    return out.reset_index()


def _sweep_budget(cfg: Config, param: str, values: list, **_) -> None:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not 1 <= len(values) <= 6:
        raise InputError("give between 1 and 6 values to sweep")
    allowed = SWEEP_VALUES[param]
    bad = [v for v in values if v not in allowed]
    if bad:
        raise InputError(f"{param} values must be among {', '.join(map(str, allowed))}; got {bad}")
    total = sum(expected_seconds(replace(cfg, **{param: v})) for v in values)
    if total > BUDGET:
        raise InputError(f"this sweep would take about {total:.0f} s on an idle 2-core CPU (limit {BUDGET:.0f} s): "
                         "fewer values, fewer iterations or seeds, or a smaller base depth")
    for v in values:   # one training at a time: each must fit the memory budget
        check_memory(replace(cfg, **{param: v}), f"{param} = {v}")


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs(group="sweep"), _budget=_sweep_budget)
def sweep(cfg: Config, param: str, values: list, device=None, progress: Progress = None) -> dict:
    """Train once per value of ``param`` (depth, width, batch_size or ablation)."""
    p = as_progress(progress)
    tables, runs = [], {}
    for i, v in enumerate(values):
        res = train(replace(cfg, **{param: v}), device=device, progress=p.part(i, len(values), f"{param}={v}: "))
        fin = res["final"].copy()
        fin[param] = v
        tables.append(fin)
        runs[str(v)] = {"curves": res["curves"]}
    return {"param": param, "values": list(values), "summary": pd.concat(tables, ignore_index=True), "runs": runs}


# --------------------------------------------------------------------------- the powered online test (issue 29)

ONLINE_LIMIT = 3600.0   # seconds (on an idle core): one depth of the powered test, 20 seeds at depth 16, is ~1700


def _online_budget(cfg: Config, n_seeds: int, **_) -> None:
    chunks = [min(cfg.seeds, n_seeds - k) for k in range(0, n_seeds, cfg.seeds)]
    total = sum(expected_seconds(replace(cfg, seeds=n)) for n in chunks)
    if total > ONLINE_LIMIT:
        raise InputError(f"{n_seeds} seeds at depth {cfg.depth} would take about {total / 60:.0f} CPU minutes (limit "
                         f"{ONLINE_LIMIT / 60:.0f}): fewer seeds or iterations, or a smaller depth")


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs(group="online_seeds"), _budget=_online_budget)
def online_seeds(cfg: Config = ONLINE, n_seeds: int = ONLINE_SEEDS, device=None, progress: Progress = None) -> dict:
    """``n_seeds`` agents at ``cfg.depth``: seeds ``cfg.seed``, ``cfg.seed + 1``, …, trained ``cfg.seeds`` at a time
    (each chunk one batched ``train`` run, its first seed ``cfg.seed + k·cfg.seeds``; every seed has its own
    networks and its own share of the random streams).

    Returns ``per_seed`` (one row per seed: ``train``'s ``final``, the mean of the last 5 of its evaluations),
    ``curves`` (every evaluation of every seed), ``trajectories`` (seed, 2, T+1, 2) and ``traj_goals`` (seed, 2, 2)
    of two evaluation episodes, ``qmap`` (seed, H·res, W·res) of f(s, π(s, g), g) for the far goal, and the run's
    settings. Judging the seeds (solved or not, the test) is the package's analysis, not this function's.
    """
    p = as_progress(progress)
    starts = list(range(0, n_seeds, cfg.seeds))
    finals, curves, traj, goals, qmaps, wall = [], [], [], [], [], []
    for i, k in enumerate(starts):
        run = replace(cfg, seed=cfg.seed + k, seeds=min(cfg.seeds, n_seeds - k))
        res = train.__wrapped__(run, device=device, progress=p.part(i, len(starts), f"seeds {run.seed}+: "))
        finals.append(res["final"])
        curves.append(res["curves"])
        traj.append(res["trajectories"][:, :2])
        goals.append(res["traj_goals"][:, :2])
        qmaps.append(res["qmap"])
        wall.append(res["wall_s"])
    return {"config": asdict(cfg), "depth": cfg.depth, "n_seeds": n_seeds, "device": res["device"],
            "env_steps": res["env_steps"], "sgd_steps": res["sgd_steps"], "chance_accuracy": res["chance_accuracy"],
            "per_seed": pd.concat(finals, ignore_index=True), "curves": pd.concat(curves, ignore_index=True),
            "trajectories": np.concatenate(traj), "traj_goals": np.concatenate(goals), "qmap": np.concatenate(qmaps),
            "wall_s": float(np.sum(wall))}


# --------------------------------------------------------------------------- the registered runs of issue 41


def environment(device: str) -> dict:
    """Where a run ran: the device (and the GPU's name), torch, numpy and pandas versions."""
    import platform

    env = {"device": str(device), "torch": torch.__version__, "numpy": np.__version__, "pandas": pd.__version__,
           "python": platform.python_version()}
    if str(device).startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return env


def batched_seeds(cfg: Config, n_seeds: int, device=None, progress: Progress = None) -> dict:
    """A registered deciding run (issue 41): ``online_seeds`` without the page's budget (it is run by
    ``precompute``, on a GPU where there is one): seeds ``cfg.seed`` … ``cfg.seed + n_seeds - 1`` in chunks of
    ``cfg.seeds``, each chunk one batched model. Adds ``environment`` (device, library versions): GPU kernels
    reorder floating-point sums, so a rerun elsewhere gives other numbers from the same distribution."""
    res = online_seeds.__wrapped__(cfg, n_seeds, device=device, progress=progress)
    res["environment"] = environment(res["device"])
    return res


# --------------------------------------------------------------------------- speed


def benchmark(depths: tuple = (4, 64), sgd_steps: int = 20, device=None) -> pd.DataFrame:
    """Environment steps per second (pure env, and with the actor in the loop) and SGD steps per second."""
    dev = get_device(device)
    maze = make_maze("u_maze")
    env = PointMaze(maze, 0.75, "axis", dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    pos = env.sample_in_cells(env.random_free_cells((1, 4096), gen), 0.4, gen)
    t0 = time.perf_counter()
    for _ in range(200):
        pos = env.step(pos, torch.rand(pos.shape, generator=gen, device=dev) * 2 - 1)
    pure = 4096 * 200 / (time.perf_counter() - t0)
    rows = []
    for d in depths:
        base = Config(depth=d, seeds=1, iterations=1, n_eval=8)
        t0 = time.perf_counter()
        train(replace(base, sgd_steps=1), device=dev)
        t_one = time.perf_counter() - t0
        tiny = replace(base, n_envs=8, episode_len=20)      # rollouts negligible: the time is SGD
        t0 = time.perf_counter()
        train(replace(tiny, sgd_steps=1), device=dev)
        t_base = time.perf_counter() - t0
        t0 = time.perf_counter()
        train(replace(tiny, sgd_steps=1 + sgd_steps), device=dev)
        t_sgd = max(time.perf_counter() - t0 - t_base, 1e-9) / sgd_steps
        env_steps = 2 * base.n_envs * base.episode_len + base.n_eval * base.episode_len   # collect, held-out, eval
        rows.append({"depth": d, "env_steps_per_s_pure": pure, "env_steps_per_s_with_actor": env_steps / t_one,
                     "sgd_steps_per_s": 1 / t_sgd, "ms_per_sgd_step": 1e3 * t_sgd, "device": str(dev)})
    return pd.DataFrame(rows)
