"""The offline critic (issue 20): its mazes, ground truth and scores against SciPy, Monte Carlo and hand cases."""
from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy import stats

from toymodels.deep_crl import config as K
from toymodels.deep_crl import critic as C
from toymodels.deep_crl import env as E
from toymodels.deep_crl import grid as Gr
from toymodels.deep_crl import nets as N
from toymodels.topic import InputError


def gens(n, seed=0):
    return [torch.Generator().manual_seed(seed + k) for k in range(n)]


@pytest.mark.parametrize("name", list(Gr.GRIDS))
def test_mazes_separate_straight_line_from_corridor_distance(name):
    grid = Gr.make_grid(name)
    geo, euc = Gr.geodesic(grid), Gr.euclid(grid)
    assert np.isfinite(geo).all()                                       # one connected maze
    off = ~np.eye(len(geo), dtype=bool)
    assert Gr.spearman(euc[off], geo[off]) <= 0.6                        # the bar
    assert (geo >= np.abs(grid.cells[:, None] - grid.cells[None]).sum(-1) - 1e-9).all()   # ≥ Manhattan


def test_corridor_distance_matches_scipy_shortest_paths():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    grid = Gr.make_grid("rings15")
    n = len(grid.cells)
    r, c = [], []
    for i, (a, b) in enumerate(grid.cells):
        for j, (x, y) in enumerate(grid.cells):
            if abs(a - x) + abs(b - y) == 1:
                r.append(i), c.append(j)
    ref = shortest_path(coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n)).tocsr(), unweighted=True)
    assert np.array_equal(Gr.geodesic(grid), ref)


def test_occupancy_matches_monte_carlo_of_the_actual_sampler():
    """The exact p(g | s, a) against the empirical law of goals drawn by env.relabel_indices from random walks."""
    cfg = K.CriticConfig(maze="rings15", episode_len=30, gamma=0.9)
    grid = Gr.make_grid(cfg.maze)
    occ = Gr.relabel_occupancy(grid, cfg.episode_len, cfg.gamma)
    assert np.allclose(occ.sum(-1), 1)
    cells, acts = C.random_walks(grid, 4000, cfg.episode_len, np.random.default_rng(0))
    gen = torch.Generator().manual_seed(0)
    ep, t, d = (x[0].numpy() for x in E.relabel_indices(1, 4000, cfg.episode_len, 400_000, cfg.gamma, gen))
    s, a, g = cells[ep, t], acts[ep, t], cells[ep, t + d]
    s0 = int(np.bincount(s).argmax())                                    # the most visited state, action 0
    keep = (s == s0) & (a == 0)
    emp = np.bincount(g[keep], minlength=len(grid.cells)) / keep.sum()
    assert keep.sum() > 500
    assert np.abs(emp - occ[s0, 0]).sum() < 0.12                        # total variation, ~sampling noise
    assert np.abs(emp - occ[s0, 1]).sum() > np.abs(emp - occ[s0, 0]).sum()   # and the action matters


def test_scores_of_a_perfect_and_a_straight_line_critic():
    cfg = K.CriticConfig(maze="rings15", n_queries=500)
    truth = C.Truth(cfg)
    perfect = C._scores(-truth.geo, np.log(truth.occ + 1e-300), truth)
    assert perfect["spearman_geodesic"] == pytest.approx(1.0) and perfect["retrieval"] == 1.0
    assert perfect["spearman_occupancy"] > 0.99
    straight = C._scores(-truth.euc, truth.occ, truth)
    assert straight["retrieval"] == pytest.approx(truth.euclid_retrieval)
    assert straight["spearman_geodesic"] < 0.6
    assert 0.03 < truth.random_retrieval < 0.12


def test_far_pairs_are_beyond_twice_the_horizon_and_their_straight_line_score_is_independent():
    """Stitching: scored pairs are held out and at least 2/(1 − γ) apart (shortest paths over the grid graph by
    SciPy); the straight-line reference is the Spearman of Euclid with corridor distance on exactly those."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    cfg = K.CriticConfig(maze="rings19", episode_len=50, gamma=0.95, far_only=True, n_queries=300)
    truth = C.Truth(cfg)
    grid = truth.grid
    diff = np.abs(grid.cells[:, None] - grid.cells[None]).sum(-1)
    ref = shortest_path(coo_matrix(diff == 1).tocsr(), unweighted=True)
    # 2/(1 − 0.95) is 39.99999999999996 in floating point, so pairs exactly 40 moves apart count as far
    far = (ref >= 40) & truth.heldout
    assert np.array_equal(truth.score, far) and truth.score.sum() > 1000
    assert (ref[far] > cfg.episode_len - 1).mean() > 0.5          # most can never share an episode at all
    d = np.linalg.norm(grid.cells[:, None] - grid.cells[None], axis=-1)
    assert truth.euclid_scored_spearman == pytest.approx(stats.spearmanr(d[far], ref[far]).statistic)
    assert truth.euclid_scored_spearman < truth.euclid_geodesic_spearman < 0.6


def test_no_cell_is_observed_at_the_origin():
    for name in Gr.GRIDS:
        grid = Gr.make_grid(name)
        assert (np.abs(Gr.observe(grid, grid.cells)).min(1) > 0).all()


def test_layernorm_at_an_all_zero_input_overflows_at_depth_32_and_the_critic_avoids_it(monkeypatch):
    """Issue 20: an input of exactly (0, 0) gives NaN gradients at depth 32 (zero variance in every LayerNorm);
    the critic's observation keeps coordinates off zero, so training the centre cell of rings15 stays finite."""
    net = N.ResMLP(2, 8, depth=32, width=16, gens=gens(1))
    net(torch.zeros(1, 1, 2)).sum().backward()
    assert not all(torch.isfinite(p.grad).all() for p in net.parameters())
    cfg = K.CriticConfig(maze="rings15", depth=32, width=16, repr_dim=8, batch_size=32, steps=3, episodes=50,
                         episode_len=20, seeds=1, eval_every=3, n_queries=50)
    assert np.isfinite(C.train_critic(cfg)["final"].loss).all()
    monkeypatch.setattr(C, "observe", lambda grid, cells: (2 * cells / (max(grid.free.shape) - 1) - 1)
                        .astype(np.float32))                             # the unshifted map: (7, 7) -> (0, 0)
    with pytest.raises(RuntimeError, match="NaN"):
        C.train_critic(cfg)


def test_matched_width_gives_the_deep_critics_parameter_count():
    cfg = K.CriticConfig()
    deep = K.critic_params(replace(cfg, depth=64))
    w = K.matched_width(cfg, 4, deep)
    assert abs(K.critic_params(replace(cfg, depth=4, width=w)) - deep) / deep < 0.01
    net = N.ResMLP(4, 64, depth=8, width=64, gens=gens(1))
    assert K.n_params(4, 64, 8, 64) == sum(p.numel() for p in net.parameters())


def test_critic_training_is_seeded_and_learns():
    cfg = K.CriticConfig(maze="rings15", depth=4, batch_size=64, steps=300, episodes=300, seeds=2, eval_every=50,
                         n_queries=300)
    a, b = C.train_critic(cfg), C.train_critic(cfg)
    assert a["curves"].equals(b["curves"])
    fin = a["final"]
    # the end of training is the mean of the evaluations in the last quarter (steps 250 and 300 here)
    cur = a["curves"]
    for k, seed in enumerate(fin.seed):
        tail = cur[(cur.seed == seed) & (cur.step >= 225)]
        assert len(tail) == 2
        assert fin.spearman_geodesic.iloc[k] == pytest.approx(tail.spearman_geodesic.mean())
        assert fin.retrieval.iloc[k] == pytest.approx(tail.retrieval.mean())
    # after 300 steps the critic ranks goals better than straight-line distance does (0.32 on rings15)
    assert (fin.spearman_geodesic > a["euclid_geodesic_spearman"] + 0.1).all()
    assert (fin.retrieval > 3 * a["random_retrieval"]).all()
    with pytest.raises(InputError):
        C.train_critic(replace(cfg, depth=6))
    with pytest.raises(InputError):
        C.train_critic(replace(cfg, steps=20000, depth=64, seeds=8, batch_size=1024))  # far over the budget
