"""Deep contrastive RL toy: each piece against an independent computation, then the page through the router."""
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from toymodels import crl as M
from toymodels import crl_critic as C
from toymodels import store, topic
from toymodels.topic import InputError
from tests.apptest_helpers import open_page

torch.set_num_threads(1)


def gens(n, seed=0):
    return [torch.Generator().manual_seed(seed + k) for k in range(n)]


# --------------------------------------------------------------------------- residual network structure


@pytest.mark.parametrize("depth", [4, 8, 16, 64])
def test_resmlp_counts_dense_layers_like_the_paper(depth):
    net = M.ResMLP(5, 3, depth=depth, width=8, gens=gens(2))
    inside, total = net.n_dense()
    assert inside == depth and total == depth + 2           # "depth 4" = one block, six Dense layers in all
    assert len(net.blocks) == depth // 4 and all(len(b) == 4 for b in net.blocks)
    n_linear = sum(isinstance(m, M.BLinear) for m in net.modules())
    n_norm = sum(isinstance(m, M.BLayerNorm) for m in net.modules())
    assert n_linear == depth + 2 and n_norm == depth + 1    # LN after every Dense but the last
    assert net(torch.randn(2, 7, 5)).shape == (2, 7, 3)
    plain = M.ResMLP(5, 3, depth=depth, width=8, gens=gens(2), layernorm=False)
    assert sum(isinstance(m, M.BLayerNorm) for m in plain.modules()) == 0


def test_residual_skip_is_added_after_the_fourth_activation():
    """Zero every in-block Dense: with the skip, a block is the identity (swish(LN(0)) = 0), so the output equals
    out(swish(LN(inp(x)))); without the skip it collapses to the output bias."""
    x = torch.randn(1, 6, 3)
    for residual in (True, False):
        net = M.ResMLP(3, 2, depth=8, width=16, gens=gens(1), residual=residual)
        with torch.no_grad():
            for block in net.blocks:
                for dense, _ in block:
                    dense.weight.zero_(); dense.bias.zero_()
            net.out.bias.fill_(0.5)
            h = torch.nn.functional.silu(torch.nn.functional.layer_norm(x @ net.inp.weight[0], (16,)))
            want = h @ net.out.weight[0] + 0.5 if residual else torch.full((1, 6, 2), 0.5)
            assert torch.allclose(net(x), want, atol=1e-5)


def test_init_is_uniform_fan_in_with_zero_bias_and_instances_independent():
    a = M.BLinear(100, 50, gens(3))
    assert a.weight.abs().max() <= 0.1 and a.weight.abs().max() > 0.09 and (a.bias == 0).all()
    b = M.BLinear(100, 50, gens(1, seed=1))       # instance k of a batch == a single net seeded seed + k
    assert torch.equal(a.weight[1], b.weight[0])


# --------------------------------------------------------------------------- critic objective


def test_infonce_loss_matches_a_hand_computation():
    phi = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]])
    psi = torch.tensor([[[0.0, 1.0], [1.0, 1.0], [3.0, 0.0]]])
    logits = -M.pairwise_l2(phi, psi)
    # by hand: L_ij = −‖φ_i − ψ_j‖
    L = [[-1.0, -math.sqrt(2), -3.0], [-math.sqrt(2), -1.0, -2.0], [-1.0, -math.sqrt(2), -math.sqrt(13)]]
    assert np.allclose(logits[0].numpy(), L, atol=1e-6)
    lse = [math.log(sum(math.exp(v) for v in row)) for row in L]
    nce = -sum(L[i][i] - lse[i] for i in range(3)) / 3
    want = nce + 0.1 * sum(v * v for v in lse) / 3
    loss, acc = M.infonce_loss(logits, 0.1)
    assert loss.item() == pytest.approx(want, rel=1e-6)
    assert acc.item() == pytest.approx(2 / 3)            # row 2's argmax is column 0, not 2


def test_pairwise_l2_matches_brute_force_and_energy_is_negative_norm():
    x, y = torch.randn(2, 9, 4), torch.randn(2, 9, 4)
    brute = torch.stack([torch.stack([torch.stack([torch.linalg.norm(x[k, i] - y[k, j]) for j in range(9)])
                                      for i in range(9)]) for k in range(2)])
    assert torch.allclose(M.pairwise_l2(x, y), brute, atol=1e-5)
    agent = M.Agent(2, 2, M.Config(depth=4, width=16, repr_dim=8), 2, 0)
    s, a, g = torch.randn(2, 5, 2), torch.rand(2, 5, 2) * 2 - 1, torch.randn(2, 5, 2)
    mat = agent.energy_matrix(s, a, g)
    assert (mat <= 0).all()
    assert torch.allclose(torch.diagonal(mat, dim1=1, dim2=2), agent.energy(s, a, g), atol=1e-4)


# --------------------------------------------------------------------------- actor


def test_tanh_gaussian_log_prob_matches_numerical_change_of_variables():
    mean, log_std = torch.tensor([[0.3, -1.2]], dtype=torch.float64), torch.tensor([[-0.5, 0.4]], dtype=torch.float64)
    a, logp = M.tanh_gaussian_sample(mean.expand(50, 2), log_std.expand(50, 2), torch.Generator().manual_seed(1))
    u = torch.atanh(a)
    h = 1e-5
    jac = (torch.tanh(u + h) - torch.tanh(u - h)) / (2 * h)              # numerical da/du
    normal = torch.distributions.Normal(mean, log_std.exp())
    want = (normal.log_prob(u) - jac.log()).sum(-1)
    assert torch.allclose(logp, want, atol=1e-6)
    # and the 1-D density integrates to one over (−1, 1)
    grid = torch.linspace(-1 + 1e-9, 1 - 1e-9, 200001, dtype=torch.float64)
    dens = torch.distributions.Normal(0.3, math.exp(-0.5)).log_prob(torch.atanh(grid)).exp() / (1 - grid ** 2)
    assert torch.trapezoid(dens, grid).item() == pytest.approx(1.0, abs=1e-3)


def test_log_std_is_mapped_into_the_papers_range():
    agent = M.Agent(2, 2, M.Config(depth=4, width=16), 1, 0)
    with torch.no_grad():
        agent.actor.out.bias.fill_(1e3)
        _, ls = agent.policy(torch.zeros(1, 3, 2), torch.zeros(1, 3, 2))
        assert torch.allclose(ls, torch.full_like(ls, 2.0))
        agent.actor.out.bias.fill_(-1e3)
        _, ls = agent.policy(torch.zeros(1, 3, 2), torch.zeros(1, 3, 2))
        assert torch.allclose(ls, torch.full_like(ls, -5.0))


# --------------------------------------------------------------------------- relabeling


@pytest.mark.parametrize("gamma,t,T", [(0.99, 10, 200), (0.9, 180, 200), (0.7, 0, 30)])
def test_future_offsets_follow_the_truncated_geometric_law(gamma, t, T):
    n = 200_000
    d = M.sample_future_offsets(torch.full((n,), t), T, gamma, torch.Generator().manual_seed(3)).numpy()
    assert d.min() >= 1 and d.max() <= T - 1 - t                       # strictly future, inside the episode
    pmf = M.future_offset_pmf(t, T, gamma)
    assert pmf.sum() == pytest.approx(1.0)
    counts = np.bincount(d - 1, minlength=len(pmf))
    # pool the tail so every expected count is >= 5, then a chi-square goodness-of-fit test
    exp = n * pmf
    keep = exp >= 5
    obs_c = np.r_[counts[keep], counts[~keep].sum()] if (~keep).any() else counts
    exp_c = np.r_[exp[keep], exp[~keep].sum()] if (~keep).any() else exp
    p = stats.chisquare(obs_c, exp_c).pvalue
    assert p > 1e-3, p
    # a wrong law (untruncated or γ off by a little) is rejected by the same test
    bad = (0.97 * gamma) ** np.arange(len(pmf))
    bad /= bad.sum()
    assert stats.chisquare(obs_c, np.r_[n * bad[keep], n * bad[~keep].sum()] if (~keep).any()
                           else n * bad).pvalue < 1e-6


def test_relabeled_goals_are_strictly_future_states_of_the_same_episode():
    gen = torch.Generator().manual_seed(0)
    ep, t, d = M.relabel_indices(3, 40, 25, 4096, 0.99, gen)
    assert ep.shape == t.shape == d.shape == (3, 4096)
    assert ((ep >= 0) & (ep < 40)).all() and (d >= 1).all() and (t + d <= 24).all()
    # and through the buffer: tag each stored state with (episode, time) and read the relabeled goal back
    buf = torch.stack(torch.meshgrid(torch.arange(40.), torch.arange(25.), indexing="ij"), -1).expand(3, 40, 25, 2)
    idx = torch.arange(3)[:, None]
    s, g = buf[idx, ep, t], buf[idx, ep, t + d]
    assert (g[..., 0] == s[..., 0]).all() and (g[..., 1] > s[..., 1]).all()


# --------------------------------------------------------------------------- environment


@pytest.mark.parametrize("maze", list(M.MAZES))
@pytest.mark.parametrize("mode", ["axis", "full"])
def test_agent_never_enters_or_crosses_a_wall(maze, mode):
    m = M.make_maze(maze)
    env = M.PointMaze(m, 0.75, mode, "cpu")
    gen = torch.Generator().manual_seed(1)
    pos = env.sample_in_cells(env.random_free_cells((1, 400), gen), 0.49, gen)
    free = torch.as_tensor(m.free)
    moved = 0
    for _ in range(150):
        a = torch.rand(pos.shape, generator=gen) * 3 - 1.5              # includes out-of-range actions
        a[torch.rand(pos.shape[:-1], generator=gen) < 0.2] = 1.0          # and saturated pushes into walls
        new = env.step(pos, a)
        assert (new - pos).abs().max() <= 0.75 + 1e-6
        # sample densely along the move (x leg then y leg for "axis", the straight segment for "full")
        s = torch.linspace(0, 1, 40)[:, None, None, None]
        if mode == "axis":
            mid = torch.stack([new[..., 0], pos[..., 1]], -1)
            seg = torch.cat([pos + s * (mid - pos), mid + s * (new - mid)])
        else:
            seg = pos + s * (new - pos)
        cells = torch.round(seg / m.cell).long()
        assert free[cells[..., 0], cells[..., 1]].all(), "a path went through a wall"
        moved += (new != pos).any(-1).sum().item()
        pos = new
    assert moved > 1000                                                # the agents did move


def test_walls_reject_moves_exactly():
    m = M.make_maze("u_maze")                                          # cell (2, 1) below the start is a wall
    start = torch.tensor([[[1.0, 1.0]]]) * m.cell
    env = M.PointMaze(m, 0.75, "axis", "cpu")
    p = start
    for _ in range(10):
        p = env.step(p, torch.tensor([[[1.0, 0.0]]]))                  # push down into the wall
    assert p[0, 0, 0].item() <= 1.5 * m.cell and p[0, 0, 0].item() > 1.5 * m.cell - 0.75
    p2 = env.step(start, torch.tensor([[[1.0, 1.0]]]))                 # axis mode slides along the wall...
    assert torch.allclose(p2, start + torch.tensor([0.75, 0.75]))
    edge = torch.tensor([[[1.5 * m.cell - 0.1, 2.5 * m.cell - 0.2]]])
    p3 = M.PointMaze(m, 0.75, "full", "cpu").step(edge, torch.tensor([[[1.0, 1.0]]]))
    assert torch.equal(p3, edge)                                        # ...full mode rejects the whole move


def test_success_metric_on_hand_made_trajectories():
    goal = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    traj = np.array([
        [[3, 0], [1, 0], [0.4, 0], [0.2, 0.2], [0.6, 0]],              # inside 0.5 for steps 3 and 4
        [[3, 0], [2, 0], [1, 0], [0.5, 0], [0.51, 0]],                 # touches the radius exactly: not inside
        [[5, 5.1], [5, 5], [5, 5], [5, 5], [5, 5]],                    # always inside
    ], dtype=float)
    succ, tag = M.success_metrics(traj, goal, 0.5)
    assert succ.tolist() == [True, False, True] and tag.tolist() == [2, 0, 5]


def test_corridor_distance_is_longer_than_straight_line_behind_the_wall():
    dm = M.maze_view("u_maze")
    res, cell = dm["res"], dm["cell"]
    r, c = 1 * res + res // 2, 1 * res + res // 2                      # the start cell's centre point
    assert dm["euclid"][r, c] == pytest.approx(2 * cell, abs=0.2)     # 2 cells straight through the wall
    assert 3.5 * cell < dm["geodesic"][r, c] <= 6 * cell              # the corridor, with its corners cut
    ok = np.isfinite(dm["geodesic"])
    assert (dm["geodesic"][ok] >= dm["euclid"][ok] - 1e-6).all()
    assert np.isnan(dm["geodesic"][2 * res + 2, 1 * res + 2])         # wall cells have no value


# --------------------------------------------------------------------------- hardening: float64 stays on the CPU


def test_future_offsets_cpu_path_is_bit_identical_to_the_shipped_code():
    """The device fix must not move a single CPU number (the shipped online views depend on them)."""
    import hashlib

    d = M.sample_future_offsets(torch.arange(0, 199, 9), 200, 0.99, torch.Generator().manual_seed(7))
    assert d.tolist() == [28, 27, 128, 78, 136, 108, 26, 54, 80, 75, 5, 4, 11, 3, 7, 52, 1, 44, 4, 28, 18, 9, 1]
    t = torch.randint(0, 199, (100000,), generator=torch.Generator().manual_seed(0))
    d = M.sample_future_offsets(t, 200, 0.99, torch.Generator().manual_seed(1))
    assert hashlib.sha256(d.numpy().tobytes()).hexdigest() == \
        "93ba5232981c911c31e640b5fa036fe3ee45c3431c9cad7eb60df4729464b557"


class _NoFloat64OffCPU(torch.overrides.TorchFunctionMode):
    """Fails any op that leaves a float64 tensor on a non-CPU device, or hands a CPU generator to one."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        gen, dev = kwargs.get("generator"), kwargs.get("device")
        if gen is not None and dev is not None and torch.device(dev).type != gen.device.type:
            raise AssertionError(f"{func.__name__}: a {gen.device.type} generator on device {dev}")
        out = func(*args, **kwargs)
        for o in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(o, torch.Tensor) and o.dtype == torch.float64 and o.device.type != "cpu":
                raise AssertionError(f"{getattr(func, '__name__', func)}: float64 on {o.device}")
        return out


def test_future_offsets_keep_float64_off_the_device():
    """'meta' stands in for an accelerator (shapes and dtypes, no data): before the fix the offsets were drawn
    in float64 on the tensor's device."""
    t = torch.zeros(64, dtype=torch.long, device="meta")
    with _NoFloat64OffCPU():
        d = M.sample_future_offsets(t, 200, 0.99, None)
    assert d.device.type == "meta" and d.dtype == torch.long
    with pytest.raises(AssertionError), _NoFloat64OffCPU():       # the checker does catch float64 on a device
        torch.zeros(3, dtype=torch.float64, device="meta")


def test_the_float32_device_formula_follows_the_same_law():
    """The device path's inverse CDF in float32, run on the CPU, against the exact truncated geometric law."""
    n, t, T, gamma = 200_000, 10, 200, 0.99
    u = torch.rand(n, generator=torch.Generator().manual_seed(5))
    nn_ = torch.full((n,), float(T - 1 - t))
    d = torch.minimum(torch.ceil(torch.log1p(-u * (1 - torch.exp(nn_ * math.log(gamma)))) / math.log(gamma))
                      .clamp(min=1), nn_).long().numpy()
    pmf = M.future_offset_pmf(t, T, gamma)
    counts = np.bincount(d - 1, minlength=len(pmf))
    assert stats.chisquare(counts, n * pmf).pvalue > 1e-3


# --------------------------------------------------------------------------- config, training, store


@pytest.mark.parametrize("bad", [dict(depth=6), dict(depth=0), dict(maze="nope"), dict(batch_size=0),
                                 dict(ablation="dropout"), dict(seeds=99), dict(width=10_000),
                                 dict(iterations=2.5), dict(wall_mode="teleport")])
def test_bad_settings_are_rejected_with_a_message(bad):
    with pytest.raises(InputError):
        M.validate(replace(M.Config(), **bad))
    with pytest.raises(InputError):
        M.train(replace(M.Config(), **bad))


def test_budget_refuses_long_runs_and_bad_sweeps_before_any_work():
    with pytest.raises(InputError, match="limit"):
        M.train(replace(M.DEFAULT, depth=64, iterations=60))
    with pytest.raises(InputError, match="depth values"):
        M.sweep(M.DEFAULT, "depth", [4, 6])
    with pytest.raises(InputError, match="limit"):
        M.sweep(M.DEFAULT, "depth", [16, 32])
    for v in M.VIEWS.values():              # every shipped view fits the budget it declares
        if v.fn is M.train:
            M.train.budget(**v.arguments())


TINY = M.Config(depth=4, width=16, repr_dim=8, batch_size=32, iterations=2, sgd_steps=5, n_envs=16,
                episode_len=30, n_eval=8, seeds=2)


def test_training_runs_is_seeded_and_reports_everything():
    a = M.train(TINY)
    b = M.train(TINY)
    store.assert_same(store.normalise({k: v for k, v in a.items() if k != "wall_s"}),
                      store.normalise({k: v for k, v in b.items() if k != "wall_s"}), rtol=0, atol=0)
    assert a["curves"].equals(b["curves"])
    assert len(a["curves"]) == 2 * 2 and set(a["final"].seed) == {0, 1}
    assert a["trajectories"].shape == (2, 4, 31, 2) and a["qmap"].shape[0] == 2
    assert a["env_steps"] == 2 * 16 * 30 and a["sgd_steps"] == 10
    for col in ("success", "time_at_goal", "critic_accuracy", "critic_accuracy_fresh"):
        assert a["final"][col].between(0, 30).all()
    c = M.train(replace(TINY, seed=5))
    assert not np.allclose(a["curves"].critic_loss, c["curves"].critic_loss)


def test_ablations_and_lift_run():
    for ab in M.ABLATIONS[1:]:
        assert np.isfinite(M.train(replace(TINY, ablation=ab, iterations=1))["curves"].critic_loss).all()
    r = M.train(replace(TINY, obs_lift=32, iterations=1))
    assert np.isfinite(r["curves"].critic_loss).all()


def test_shipped_maze_view_is_fresh():
    fn, kwargs = topic.view_call(M, "maze_u")
    store.verify_shipped(M.TOPIC, "maze_u", fn, **kwargs)


def test_every_declared_view_is_shipped_and_fresh():
    assert topic.stale_views(M) == {}, "run python -m toymodels precompute deep-crl"


def _head(success, sem, rho, rho_sem, wide_rho):
    per_seed = pd.DataFrame([{"depth": d, "seed": k, "success": s + (k - 1) * e, "time_at_goal": 0.0,
                              "critic_accuracy": 0.3, "critic_accuracy_fresh": 0.3, "spearman_euclid": 0.5,
                              "spearman_corridor": 0.5} for d, s, e in zip((4, 8, 16), success, sem)
                             for k in range(3)])
    summary = pd.DataFrame({"depth": [4, 8, 16, 32, 64], "spearman_geodesic_mean": rho,
                            "spearman_geodesic_sem": rho_sem, "retrieval_mean": [0.9] * 5})
    return M.headline({str(d): per_seed[per_seed.depth == d] for d in (4, 8, 16)}, {
        "depths": [4, 8, 16, 32, 64], "summary": summary, "config": {"maze": "rings19"},
        "wide": {"params": 10, "width": 254, "spearman": wide_rho, "spearman_sem": 0.001, "retrieval": 0.9},
        "euclid_geodesic_spearman": 0.24, "euclid_retrieval": 0.5, "random_retrieval": 0.07})


def test_verdict_decides_from_seed_noise():
    flat = [0.9, 0.9, 0.9, 0.9, 0.9]
    no = M.verdict(_head([0.1, 0.5, 0.15], [0.1, 0.3, 0.1], flat, [0.01] * 5, 0.9))
    assert no.reproduced is False and "No depth gain" in no.summary
    for key in ("depths", "success", "critic_accuracy", "chance_accuracy", "critic_depths", "critic_spearman_geodesic",
                "critic_spearman_sem", "critic_retrieval_acc", "euclid_geodesic_spearman", "wide_control_params",
                "wide_control_spearman"):
        assert key in no.metrics, key
    yes = M.verdict(_head([0.1, 0.5, 0.9], [0.02, 0.02, 0.02], flat, [0.01] * 5, 0.9))
    assert yes.reproduced is True
    # an offline gain beyond noise that a wide net does not match: partly
    part = M.verdict(_head([0.1, 0.1, 0.1], [0.02] * 3, [0.80, 0.85, 0.9, 0.92, 0.95], [0.005] * 5, 0.82))
    assert part.reproduced is None and part.metrics["critic_deep_beats_wide"]
    matched = M.verdict(_head([0.1, 0.1, 0.1], [0.02] * 3, [0.80, 0.85, 0.9, 0.92, 0.95], [0.005] * 5, 0.95))
    assert matched.reproduced is False and matched.metrics["critic_deeper_is_better"]


def test_shipped_verdict_has_the_issue_keys():
    v, fresh = topic.shipped_verdict(M)
    assert fresh and v.reproduced in (True, False, None)
    assert len(v.metrics["critic_depths"].split(",")) >= 5


@pytest.mark.slow
def test_quick_reproduction_learns_a_critic_and_reaches_the_far_goal():
    out = M.reproduce(quick=True)
    for key in ("depths", "success", "time_at_goal", "critic_accuracy", "batch_size", "chance_accuracy",
                "critic_depths", "critic_spearman_geodesic", "critic_spearman_sem", "critic_retrieval_acc",
                "euclid_geodesic_spearman", "wide_control"):
        assert key in out
    assert all(acc > 10 * out["chance_accuracy"] for acc in out["critic_accuracy"])
    # the quick critic is the stitching regime at 600 steps: far pairs, where straight-line distance scores ~0.17
    assert all(r > 0.25 for r in out["critic_spearman_geodesic"])
    assert all(a > 3 * out["random_retrieval"] for a in out["critic_retrieval_acc"])


# --------------------------------------------------------------------------- offline critic (issue 20)


@pytest.mark.parametrize("name", list(C.GRIDS))
def test_mazes_separate_straight_line_from_corridor_distance(name):
    grid = C.make_grid(name)
    geo, euc = C.geodesic(grid), C.euclid(grid)
    assert np.isfinite(geo).all()                                       # one connected maze
    off = ~np.eye(len(geo), dtype=bool)
    assert C.spearman(euc[off], geo[off]) <= 0.6                        # the issue's bar
    assert (geo >= np.abs(grid.cells[:, None] - grid.cells[None]).sum(-1) - 1e-9).all()   # ≥ Manhattan


def test_corridor_distance_matches_scipy_shortest_paths():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    grid = C.make_grid("rings15")
    n = len(grid.cells)
    r, c = [], []
    for i, (a, b) in enumerate(grid.cells):
        for j, (x, y) in enumerate(grid.cells):
            if abs(a - x) + abs(b - y) == 1:
                r.append(i), c.append(j)
    ref = shortest_path(coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n)).tocsr(), unweighted=True)
    assert np.array_equal(C.geodesic(grid), ref)


def test_occupancy_matches_monte_carlo_of_the_actual_sampler():
    """The exact p(g | s, a) against the empirical law of goals drawn by crl.relabel_indices from random walks."""
    cfg = C.CriticConfig(maze="rings15", episode_len=30, gamma=0.9)
    grid = C.make_grid(cfg.maze)
    occ = C.relabel_occupancy(grid, cfg.episode_len, cfg.gamma)
    assert np.allclose(occ.sum(-1), 1)
    cells, acts = C.random_walks(grid, 4000, cfg.episode_len, np.random.default_rng(0))
    gen = torch.Generator().manual_seed(0)
    ep, t, d = (x[0].numpy() for x in M.relabel_indices(1, 4000, cfg.episode_len, 400_000, cfg.gamma, gen))
    s, a, g = cells[ep, t], acts[ep, t], cells[ep, t + d]
    s0 = int(np.bincount(s).argmax())                                    # the most visited state, action 0
    keep = (s == s0) & (a == 0)
    emp = np.bincount(g[keep], minlength=len(grid.cells)) / keep.sum()
    assert keep.sum() > 500
    assert np.abs(emp - occ[s0, 0]).sum() < 0.12                        # total variation, ~sampling noise
    assert np.abs(emp - occ[s0, 1]).sum() > np.abs(emp - occ[s0, 0]).sum()   # and the action matters


def test_scores_of_a_perfect_and_a_straight_line_critic():
    cfg = C.CriticConfig(maze="rings15", n_queries=500)
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

    cfg = C.CriticConfig(maze="rings19", episode_len=50, gamma=0.95, far_only=True, n_queries=300)
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
    for name in C.GRIDS:
        grid = C.make_grid(name)
        assert (np.abs(C.observe(grid, grid.cells)).min(1) > 0).all()


def test_layernorm_at_an_all_zero_input_overflows_at_depth_32_and_the_critic_avoids_it(monkeypatch):
    """Issue 20: an input of exactly (0, 0) gives NaN gradients at depth 32 (zero variance in every LayerNorm);
    the critic's observation keeps coordinates off zero, so training the centre cell of rings15 stays finite."""
    net = M.ResMLP(2, 8, depth=32, width=16, gens=gens(1))
    net(torch.zeros(1, 1, 2)).sum().backward()
    assert not all(torch.isfinite(p.grad).all() for p in net.parameters())
    cfg = C.CriticConfig(maze="rings15", depth=32, width=16, repr_dim=8, batch_size=32, steps=3, episodes=50,
                         episode_len=20, seeds=1, eval_every=3, n_queries=50)
    assert np.isfinite(C.train_critic(cfg)["final"].loss).all()
    monkeypatch.setattr(C, "observe", lambda grid, cells: (2 * cells / (max(grid.free.shape) - 1) - 1)
                        .astype(np.float32))                             # the unshifted map: (7, 7) -> (0, 0)
    with pytest.raises(RuntimeError, match="NaN"):
        C.train_critic(cfg)


def test_matched_width_gives_the_deep_critics_parameter_count():
    cfg = C.CriticConfig()
    deep = C.critic_params(replace(cfg, depth=64))
    w = C.matched_width(cfg, 4, deep)
    assert abs(C.critic_params(replace(cfg, depth=4, width=w)) - deep) / deep < 0.01
    net = M.ResMLP(4, 64, depth=8, width=64, gens=gens(1))
    assert C.n_params(4, 64, 8, 64) == sum(p.numel() for p in net.parameters())


def test_critic_training_is_seeded_and_learns():
    cfg = C.CriticConfig(maze="rings15", depth=4, batch_size=64, steps=300, episodes=300, seeds=2, eval_every=50,
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


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("deep-crl")


def test_page_runs_with_defaults():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "1000-layer RL"
    text = " ".join(m.value for m in at.markdown)
    assert "depth gain" in text or any("not shipped" in i.value for i in at.info)   # verdict, or why not yet


def test_page_refuses_an_over_budget_run_with_a_warning():
    at = _page()
    at.selectbox(key="crl_depth").set_value(64).run()
    at.number_input(key="crl_iters").set_value(60).run()
    at.button(key="crl_train").click().run()
    assert not at.exception, at.exception
    assert any("limit" in w.value for w in at.warning), "an over-budget run must be refused with a warning"


def _fuzz(n: int, seed: int):
    rng = np.random.default_rng(seed)
    at = _page()
    assert not at.exception, at.exception
    choices = {
        ("selectbox", "crl_view_depth"): [8, 16], ("selectbox", "crl_view_seed"): [0, 1, 2],
        ("selectbox", "crl_critic_seed"): [0, 1, 2, 3], ("selectbox", "crl_maze"): list(M.MAZES),
        ("selectbox", "crl_depth"): list(M.DEPTHS), ("selectbox", "crl_width"): [32, 64, 128, 256],
        ("selectbox", "crl_batch"): [64, 128, 256, 512], ("number_input", "crl_iters"): [1, 2, 20, 60],
        ("number_input", "crl_seeds"): [1, 8], ("number_input", "crl_seed"): [0, 9999, 10_000],
        ("selectbox", "crl_ablation"): list(M.ABLATIONS), ("selectbox", "crl_lift"): [0, 128],
        ("toggle", "crl_exact"): [True, False], ("selectbox", "crl_sweep_param"): list(M.SWEEP_VALUES),
    }
    keys = list(choices)
    for _ in range(n):
        kind, key = keys[rng.integers(len(keys))]
        value = choices[(kind, key)][rng.integers(len(choices[(kind, key)]))]
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, (key, value, at.exception)
    for kind, key, value in (("selectbox", "crl_depth", 64), ("number_input", "crl_iters", 60),
                             ("selectbox", "crl_sweep_param", "depth")):
        getattr(at, kind)(key=key).set_value(value).run()
    at.button(key="crl_sweep").click().run()                           # over budget: a warning, no traceback
    assert not at.exception and at.warning, at.exception
    # a train press with the smallest settings actually trains
    for kind, key, value in (("selectbox", "crl_maze", "u_maze"), ("selectbox", "crl_depth", 4),
                             ("selectbox", "crl_width", 32), ("selectbox", "crl_batch", 64),
                             ("number_input", "crl_iters", 1), ("number_input", "crl_seeds", 1),
                             ("number_input", "crl_seed", int(rng.integers(10_000)))):
        getattr(at, kind)(key=key).set_value(value).run()
    at.button(key="crl_train").click().run()
    assert not at.exception, at.exception
    assert any("Your run" in m.value for m in at.markdown)


def test_page_fuzz():
    _fuzz(22, seed=0)


@pytest.mark.slow
def test_page_fuzz_long():
    _fuzz(120, seed=1)
