"""The paper's networks and objectives against hand computations, brute force and numerical derivatives."""
import math

import numpy as np
import pytest
import torch

from toymodels.deep_crl import config as K
from toymodels.deep_crl import nets as M


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
                    dense.weight.zero_()
                    dense.bias.zero_()
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
    agent = M.Agent(2, 2, K.Config(depth=4, width=16, repr_dim=8), 2, 0)
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
    agent = M.Agent(2, 2, K.Config(depth=4, width=16), 1, 0)
    with torch.no_grad():
        agent.actor.out.bias.fill_(1e3)
        _, ls = agent.policy(torch.zeros(1, 3, 2), torch.zeros(1, 3, 2))
        assert torch.allclose(ls, torch.full_like(ls, 2.0))
        agent.actor.out.bias.fill_(-1e3)
        _, ls = agent.policy(torch.zeros(1, 3, 2), torch.zeros(1, 3, 2))
        assert torch.allclose(ls, torch.full_like(ls, -5.0))
