"""Deep contrastive RL toy: each piece against an independent computation, then the page through the router."""
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy import stats

from toymodels import crl as M
from toymodels import store
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


# --------------------------------------------------------------------------- config, training, store


@pytest.mark.parametrize("bad", [dict(depth=6), dict(depth=0), dict(maze="nope"), dict(batch_size=0),
                                 dict(ablation="dropout"), dict(seeds=99), dict(width=10_000),
                                 dict(iterations=2.5), dict(wall_mode="teleport")])
def test_bad_settings_are_rejected_with_a_message(bad):
    with pytest.raises(ValueError):
        M.validate(replace(M.Config(), **bad))


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
    fn, args, kwargs = M.default_views()["maze_u"]
    store.verify_shipped(M.TOPIC, "maze_u", fn, *args, **kwargs)


def test_every_default_view_is_shipped_with_its_call_key():
    assert {"maze_u", "train_d4", "train_d8"} <= set(M.shipped_views())      # the page needs depth 4 and a deeper one
    for name, (fn, args, kwargs) in M.shipped_views().items():
        folder = store.shipped_path(M.TOPIC, name)
        assert (folder / "meta.json").exists(), f"run python -m toymodels precompute {M.TOPIC}"
        _, meta = store.read_bundle(folder)
        assert meta["key"] == store.call_key(fn, args, kwargs), name


@pytest.mark.slow
def test_quick_reproduction_learns_a_critic_and_reaches_the_far_goal():
    out = M.reproduce(quick=True)
    for key in ("depths", "success", "time_at_goal", "critic_accuracy", "batch_size", "chance_accuracy"):
        assert key in out
    assert all(acc > 10 * out["chance_accuracy"] for acc in out["critic_accuracy"])
    assert out["reaches_far_goal"]


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("deep-crl")


def test_page_runs_with_defaults():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "1000-layer RL"
    text = " ".join(m.value for m in at.markdown)
    assert "In this toy" in text                                  # the honest verdict is always stated


def test_page_runs_after_changing_widgets():
    at = _page()
    at.selectbox(key="crl_view_depth").set_value(8).run()
    assert not at.exception, at.exception
    at.selectbox(key="crl_view_seed").set_value(2).run()
    assert not at.exception, at.exception
    at.selectbox(key="crl_depth").set_value(8).run()
    assert not at.exception, at.exception
    at.number_input(key="crl_iters").set_value(60).run()        # over budget: a warning, not a run
    assert not at.exception, at.exception
    at.button(key="crl_train").click().run()
    assert not at.exception, at.exception
    assert at.warning, "an over-budget run must be refused with a warning"
