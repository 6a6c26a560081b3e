"""The environment, the relabeling law and the value map's distances against independent computations."""
import math

import numpy as np
import pytest
import torch
from scipy import stats

from toymodels.deep_crl import config as K
from toymodels.deep_crl import env as M
from toymodels.deep_crl import geometry as G

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


@pytest.mark.parametrize("maze", list(K.MAZES))
@pytest.mark.parametrize("mode", ["axis", "full"])
def test_agent_never_enters_or_crosses_a_wall(maze, mode):
    m = K.make_maze(maze)
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
    m = K.make_maze("u_maze")                                          # cell (2, 1) below the start is a wall
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
    dm = G.maze_view("u_maze")
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
