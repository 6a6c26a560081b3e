"""Offline contrastive critic on a grid maze: does depth buy a better value function when exploration is removed?

Issue 20 of the deep-CRL page. The online agent mixes two things that depth could help with: learning the critic
and exploring. This experiment removes exploration. A uniform random walk on a grid maze collects the data (4
moves, a blocked move stays put); the critic of the paper (two residual encoders, ``f(s, a, g) = −‖φ(s, a) −
ψ(g)‖₂``, forward InfoNCE + 0.1·logsumexp², goals relabeled from the same episode with P(d) ∝ γ^(d−1)) is trained
on it; and the learned ``Q(s, g) = max_a f(s, a, g)`` is scored against ground truth computed independently of
the network (``grid``): the corridor distance, and the exact relabeled occupancy of the walk.

Scores, on (state, goal) pairs that never appear as a training pair: Spearman ρ of −Q with corridor distance,
Spearman ρ of f with the occupancy, and top-1 retrieval (of 16 random candidate goals, does the highest Q pick
the one nearest along the corridors?). Mazes where straight-line and corridor distance disagree (concentric rings,
a spiral) are the ones where a critic must learn the walls. This is the analogue of the paper's offline question
(§4.6: little evidence that depth helps offline CRL) and, on far pairs, of its stitching test (Fig. 11).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import torch

from toymodels.device import get_device
from toymodels.topic import InputError, as_progress, bounded

from .config import KNOBS, CriticConfig, critic_params, expected_seconds, matched_width
from .env import sample_future_offsets
from .grid import MOVES, Grid, euclid, geodesic, make_grid, observe, relabel_occupancy, spearman
from .nets import Lift, ResMLP, infonce_loss, pairwise_l2

# --------------------------------------------------------------------------- data and training


def random_walks(grid: Grid, episodes: int, T: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform random-walk episodes from uniform start cells: cells (E, T) and moves (E, T)."""
    cells = np.empty((episodes, T), np.int64)
    acts = rng.integers(0, 4, (episodes, T))
    cells[:, 0] = rng.integers(0, len(grid.cells), episodes)
    for t in range(1, T):
        cells[:, t] = grid.step[cells[:, t - 1], acts[:, t - 1]]
    return cells, acts


class Truth:
    """Ground truth for a grid and a relabeling law, computed once: geodesic, Euclid, occupancy, scoring pairs
    and retrieval queries."""

    def __init__(self, cfg: CriticConfig):
        self.grid = make_grid(cfg.maze)
        n = len(self.grid.cells)
        self.geo, self.euc = geodesic(self.grid), euclid(self.grid)
        self.occ = relabel_occupancy(self.grid, cfg.episode_len, cfg.gamma)          # (n, 4, n)
        rng = np.random.default_rng(10_007 + cfg.seed)
        self.heldout = rng.random((n, n)) < cfg.heldout                              # never a training pair
        off = ~np.eye(n, dtype=bool)
        score = self.heldout & off if cfg.heldout > 0 else off.copy()
        if cfg.unseen_cells:
            unseen = np.zeros(n, bool)
            unseen[rng.choice(n, cfg.unseen_cells, replace=False)] = True
            touch = unseen[:, None] | unseen[None, :]
            self.heldout = self.heldout | touch
            score = touch & off
        if cfg.far_only:
            score &= self.geo > 2 / (1 - cfg.gamma)
        if not score.any():
            raise InputError("no (state, goal) pair is left to score: raise the held-out share or lower gamma")
        self.score = score
        self.s_idx, self.g_idx = np.nonzero(score)
        # retrieval: a state and 16 candidate goals among its scored pairs (states with >= 16 of them)
        rows = [s for s in range(n) if score[s].sum() >= 16]
        if not rows:
            raise InputError("too few scored goals per state for the retrieval test (need 16)")
        qs = rng.choice(rows, cfg.n_queries)
        self.q_state = qs
        self.q_goals = np.stack([rng.choice(np.nonzero(score[s])[0], 16, replace=False) for s in qs])
        d = self.geo[qs[:, None], self.q_goals]
        self.q_best = d == d.min(1, keepdims=True)                                   # ties all count
        self.euclid_geodesic_spearman = spearman(self.euc[off], self.geo[off])
        self.euclid_scored_spearman = spearman(self.euc[self.s_idx, self.g_idx], self.geo[self.s_idx, self.g_idx])
        e = self.euc[qs[:, None], self.q_goals]
        self.euclid_retrieval = float(self.q_best[np.arange(len(qs)), e.argmin(1)].mean())
        self.random_retrieval = float(self.q_best.mean())


def _scores(Q: np.ndarray, F: np.ndarray, truth: Truth) -> dict:
    """Q (n, n) = max_a f; F (n, 4, n) = f per action: Spearman with corridor distance and occupancy,
    retrieval."""
    s, g = truth.s_idx, truth.g_idx
    pick = Q[truth.q_state[:, None], truth.q_goals].argmax(1)
    return {"spearman_geodesic": spearman(-Q[s, g], truth.geo[s, g]),
            "spearman_euclid": spearman(-Q[s, g], truth.euc[s, g]),
            "spearman_occupancy": spearman(F[s, :, g].ravel(), truth.occ[s, :, g].ravel()),
            "retrieval": float(truth.q_best[np.arange(len(pick)), pick].mean())}


def _finite(values) -> bool:
    return all(math.isfinite(float(v)) for v in values)


def _check_budget(cfg: CriticConfig, depths=None, wide: bool = False, **_) -> None:
    total = sum(expected_seconds(replace(cfg, depth=d)) for d in (depths or [cfg.depth]))
    if wide:
        total += expected_seconds(replace(cfg, depth=max(depths or [cfg.depth])))
    if total > 4000:
        raise InputError(f"this run would take about {total / 60:.0f} CPU minutes; the limit is about 65: fewer "
                         "steps, seeds or depths")


@bounded(cfg=KNOBS.fields(CriticConfig, group="critic"), _budget=_check_budget, _free=("_truth",))
def train_critic(cfg: CriticConfig = CriticConfig(), device=None, progress=None,  # noqa: B008
                 _truth: Truth | None = None) -> dict:
    """Train ``cfg.seeds`` offline critics on random-walk data and score them against ground truth.

    Returns ``final`` (one row per seed: the mean over the evaluations in the last quarter of training),
    ``curves`` (scores every ``eval_every`` steps), ``qmap``
    (seed, H, W) of Q(s, g*) for the centre goal, and the truth's reference numbers.
    """
    p = as_progress(progress)
    dev = get_device(device)
    truth = _truth or Truth(cfg)
    grid = truth.grid
    n, I, B, T = len(grid.cells), cfg.seeds, cfg.batch_size, cfg.episode_len
    data = [random_walks(grid, cfg.episodes, T, np.random.default_rng([cfg.seed, k])) for k in range(I)]
    cells = torch.as_tensor(np.stack([d[0] for d in data]), device=dev)            # (I, E, T)
    acts = torch.as_tensor(np.stack([d[1] for d in data]), device=dev)
    obs_cells = torch.as_tensor(observe(grid, grid.cells), device=dev)             # (n, 2)
    lift = Lift(cfg.obs_lift, dev) if cfg.obs_lift else None
    obs_all = lift(obs_cells) if lift is not None else obs_cells                   # (n, obs_dim)
    moves = torch.as_tensor(MOVES, dtype=torch.float32, device=dev)                # action input: the move
    heldout = torch.as_tensor(truth.heldout, device=dev)
    obs_dim = obs_all.shape[-1]
    gens = [torch.Generator().manual_seed(cfg.seed * 1009 + k) for k in range(I)]
    phi = ResMLP(obs_dim + 2, cfg.repr_dim, cfg.depth, cfg.width, gens).to(dev)
    psi = ResMLP(obs_dim, cfg.repr_dim, cfg.depth, cfg.width, gens).to(dev)
    params = list(phi.parameters()) + list(psi.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    gen = torch.Generator(device=dev).manual_seed(cfg.seed)
    idx_I = torch.arange(I, device=dev)[:, None]
    sa_all = torch.cat([obs_all[:, None, :].expand(n, 4, obs_dim), moves[None].expand(n, 4, 2)], -1).reshape(n * 4, -1)

    @torch.no_grad()
    def evaluate():
        f = -pairwise_l2(phi(sa_all.expand(I, -1, -1)), psi(obs_all.expand(I, -1, -1)))   # (I, 4n, n)
        F = f.reshape(I, n, 4, n).cpu().numpy().astype(np.float64)
        return F, F.max(2)

    rows, t0, losses = [], time.perf_counter(), []
    E = cfg.episodes
    for step in range(1, cfg.steps + 1):
        # 2B relabeled candidates per seed, keep the first B whose (state, goal) pair is not held out
        ep = torch.randint(E, (I, 2 * B), generator=gen, device=dev)
        t = torch.randint(T - 1, (I, 2 * B), generator=gen, device=dev)
        d = sample_future_offsets(t, T, cfg.gamma, gen)
        s, a, g = cells[idx_I, ep, t], acts[idx_I, ep, t], cells[idx_I, ep, t + d]
        ok = ~heldout[s, g]
        order = torch.argsort((~ok).to(torch.int8), dim=1, stable=True)[:, :B]
        if not bool(ok.gather(1, order).all()):
            raise RuntimeError("too many held-out pairs to fill a batch")
        s, a, g = s.gather(1, order), a.gather(1, order), g.gather(1, order)
        logits = -pairwise_l2(phi(torch.cat([obs_all[s], moves[a]], -1)), psi(obs_all[g]))
        loss, acc = infonce_loss(logits, 0.1)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        losses.append(loss.detach())
        if step % cfg.eval_every == 0 or step == cfg.steps:
            F, Q = evaluate()
            lv = torch.stack(losses).mean(0).cpu().numpy()
            losses = []
            for k in range(I):
                rows.append({"step": step, "seed": cfg.seed + k, "loss": float(lv[k]), "accuracy": float(acc[k]),
                             **_scores(Q[k], F[k], truth)})
            rho = np.mean([r['spearman_geodesic'] for r in rows[-I:]])
            p(step / cfg.steps, f"depth {cfg.depth}: step {step}/{cfg.steps}, ρ {rho:.3f}")
    if not _finite(r["loss"] for r in rows):
        raise RuntimeError(f"the critic diverged (NaN loss) at depth {cfg.depth}")
    curves = pd.DataFrame(rows)
    # the end of training: the mean over the evaluations in its last quarter (one evaluation is noisy, ±0.03 in ρ)
    last = curves[curves.step >= cfg.steps - cfg.steps // 4]
    final = last.drop(columns="step").groupby("seed", as_index=False).mean()
    final.insert(0, "depth", cfg.depth)
    final.insert(1, "width", cfg.width)
    final["params"] = critic_params(cfg)
    goal = int(grid.index[tuple(np.array(grid.free.shape) // 2)]) if grid.index[
        tuple(np.array(grid.free.shape) // 2)] >= 0 else int(truth.geo.sum(1).argmin())
    qmap = np.full((I,) + grid.free.shape, np.nan, np.float32)
    qmap[:, grid.cells[:, 0], grid.cells[:, 1]] = Q[:, :, goal]
    return {"config": asdict(cfg), "device": str(dev), "wall_s": time.perf_counter() - t0, "final": final,
            "curves": curves, "qmap": qmap, "goal_cell": grid.cells[goal].tolist(),
            "euclid_geodesic_spearman": truth.euclid_geodesic_spearman,
            "euclid_scored_spearman": truth.euclid_scored_spearman,
            "euclid_retrieval": truth.euclid_retrieval, "random_retrieval": truth.random_retrieval}


# --------------------------------------------------------------------------- experiments


def _summary(per_seed: pd.DataFrame, by: str = "depth") -> pd.DataFrame:
    cols = ["spearman_geodesic", "spearman_euclid", "spearman_occupancy", "retrieval", "accuracy"]
    g = per_seed.groupby(by)[cols]
    out = g.mean().add_suffix("_mean").join(g.sem(ddof=1).fillna(0.0).add_suffix("_sem"))
    out["n_seeds"] = g.size()
    return out.reset_index()


def _check_experiment(cfg: CriticConfig, depths=(4, 8, 16, 32, 64), wide: bool = True, **_) -> None:
    _check_budget(cfg, depths=list(depths), wide=wide)


@bounded(cfg=KNOBS.fields(CriticConfig, group="critic"), **KNOBS.specs(group="critic_experiment"),
         _budget=_check_experiment)
def critic_experiment(cfg: CriticConfig = CriticConfig(), depths: list = (4, 8, 16, 32, 64),  # noqa: B008
                      wide: bool = True,
                      device=None, progress=None) -> dict:
    """The offline critic at every depth (same data, same held-out pairs), plus a wide-and-shallow control:
    depth 4 at the width whose parameter count matches the deepest critic's."""
    p = as_progress(progress)
    depths = [int(d) for d in depths]
    truth = Truth(cfg)
    runs, finals, curves = {}, [], []
    jobs = [(d, cfg.width) for d in depths]
    deep_params = critic_params(replace(cfg, depth=max(depths)))
    if wide:
        jobs.append((4, matched_width(cfg, 4, deep_params)))
    weights = np.array([expected_seconds(replace(cfg, depth=d, width=w)) for d, w in jobs])
    edges = np.r_[0, np.cumsum(weights)] / weights.sum()
    for i, (d, w) in enumerate(jobs):
        name = f"{d}" if w == cfg.width else f"{d}x{w}"
        res = train_critic(replace(cfg, depth=d, width=w), device=device, _truth=truth,
                           progress=p.sub(edges[i], edges[i + 1], f"depth {d} width {w}: "))
        runs[name] = {"final": res["final"], "qmap": res["qmap"], "wall_s": res["wall_s"]}
        curves.append(res["curves"].assign(depth=d, width=w))
        finals.append(res["final"])
    per_seed = pd.concat(finals, ignore_index=True)
    deep = per_seed[per_seed.width == cfg.width]
    summary = _summary(deep)
    out = {"config": asdict(cfg), "depths": depths, "runs": runs, "per_seed": per_seed, "summary": summary,
           "curves": pd.concat(curves, ignore_index=True), "free": truth.grid.free.astype(np.int8),
           "goal_cell": res["goal_cell"],
           "euclid_geodesic_spearman": truth.euclid_geodesic_spearman, "euclid_retrieval": truth.euclid_retrieval,
           "euclid_scored_spearman": truth.euclid_scored_spearman,
           "random_retrieval": truth.random_retrieval, "deep_params": deep_params,
           "n_scored_pairs": int(truth.score.sum())}
    if wide:
        wrow = per_seed[per_seed.width != cfg.width]
        out["wide"] = {"depth": 4, "width": int(jobs[-1][1]), "params": int(wrow.params.iloc[0]),
                       "spearman": float(wrow.spearman_geodesic.mean()),
                       "spearman_sem": float(wrow.spearman_geodesic.sem(ddof=1)) if len(wrow) > 1 else 0.0,
                       "retrieval": float(wrow.retrieval.mean())}
    return out


# The search for a regime where depth matters (issue 20): each regime at a shallow and a deep critic.
SEARCH = (
    ("rings19", "rings 19×19, (row, col), all pairs covered", dict(maze="rings19")),
    ("spiral19", "spiral 19×19, (row, col)", dict(maze="spiral19")),
    ("rings19_lift", "rings 19×19, random nonlinear lift to 64-d", dict(maze="rings19", obs_lift=64)),
    ("rings19_stitch", "rings 19×19, stitching: T = 50, γ = 0.95, far pairs only",
     dict(maze="rings19", episode_len=50, gamma=0.95, far_only=True)),
    ("spiral19_stitch", "spiral 19×19, stitching: T = 50, γ = 0.95, far pairs only",
     dict(maze="spiral19", episode_len=50, gamma=0.95, far_only=True)),
    ("rings19_unseen", "rings 19×19, 12 cells never seen in training (scored on pairs touching them)",
     dict(maze="rings19", unseen_cells=12)),
    ("rings19_small_data", "rings 19×19, 10× less data (200 episodes)", dict(maze="rings19", episodes=200)),
    ("rings27_stitch", "rings 27×27 (343 cells), stitching: T = 50, γ = 0.95, far pairs only",
     dict(maze="rings27", episode_len=50, gamma=0.95, far_only=True)),
    ("rings19_stitch_b512", "rings 19×19, stitching, batch 512 (the paper's; depth needs batch)",
     dict(maze="rings19", episode_len=50, gamma=0.95, far_only=True, batch_size=512)),
    ("rings19_long", "rings 19×19, all pairs covered, 1000 steps, 4 seeds (the earlier main view)",
     dict(maze="rings19", steps=1000, seeds=4)),
)
# A regime's dict may override the search's steps, seeds or batch size; the table records what each row ran.


@bounded(**KNOBS.specs(group="critic_search"))
def critic_search(depths: list = (4, 16), seeds: int = 2, steps: int = 600, batch_size: int = 128, device=None,
                  progress=None) -> dict:
    """Every regime of ``SEARCH`` at each depth: what was tried and what it gave (a table; the end of training
    is the mean over the evaluations in the last quarter, see ``train_critic``), and the curves against steps."""
    p = as_progress(progress)
    rows, curves = [], []
    for i, (name, label, kw) in enumerate(SEARCH):
        cfg = replace(CriticConfig(seeds=seeds, steps=steps, batch_size=batch_size, eval_every=100), **kw)
        t0 = time.process_time()
        res = critic_experiment(cfg, depths=list(depths), wide=False, device=device,
                                progress=p.part(i, len(SEARCH), f"{name}: "))
        cpu = time.process_time() - t0
        s = res["summary"].set_index("depth")
        lo, hi = s.loc[min(depths)], s.loc[max(depths)]
        gain = hi.spearman_geodesic_mean - lo.spearman_geodesic_mean
        noise = math.hypot(hi.spearman_geodesic_sem, lo.spearman_geodesic_sem)
        row = {"regime": name, "what": label, "euclid_geodesic_spearman": res["euclid_geodesic_spearman"],
               "euclid_scored_spearman": res["euclid_scored_spearman"], "scored_pairs": res["n_scored_pairs"],
               "seeds": cfg.seeds, "steps": cfg.steps, "batch_size": cfg.batch_size,
               "gain_spearman": gain, "gain_sem": noise,
               "depth_helps": bool(gain > 2 * noise and gain > 0.01), "cpu_s": cpu}
        for d in depths:
            row[f"spearman_d{d}"] = s.loc[d].spearman_geodesic_mean
            row[f"retrieval_d{d}"] = s.loc[d].retrieval_mean
        rows.append(row)
        curves.append(res["curves"].assign(regime=name))
    return {"depths": list(depths), "table": pd.DataFrame(rows), "curves": pd.concat(curves, ignore_index=True)}
