"""The real-model measures (gated_attention.real): each against an independent computation or a hand-worked case, and
the registered prompts' provenance."""
import json
import math

import numpy as np
import pytest
from scipy.linalg import logm

from tests.realmodel_marks import needs_smollm2
from toymodels import realmodels as R
from toymodels.gated_attention import real, tracing


def test_registered_prompts_have_provenance_and_are_not_the_dev_ones():
    d = json.loads(real.PROMPTS_FILE.read_text())
    assert "before any model read them" in d["provenance"]
    reg, dev = real.prompts(), real.prompts("dev")
    assert len(reg) == 32 and len(set(reg)) == 32 and not set(reg) & set(dev)
    assert "The capital of France is" in dev           # issue 40's pilot prompt never decides a claim


def test_prompt_entropy_of_a_simplex_is_one():
    """T one-hot rows: after centring their cosines are all -1/(T-1) < 0, which the official clamp sets to 0, so the
    Gram is the identity: entropy log T, normalised 1."""
    for T in (3, 7, 20):
        assert real.prompt_entropy(np.eye(T, 32)) == pytest.approx(1.0, abs=1e-12)


def test_prompt_entropy_against_the_matrix_logarithm():
    """-tr(ρ log ρ) with ρ = K / tr K through scipy's matrix logarithm (no eigendecomposition of ours), on hidden
    states whose D x D covariance has only positive entries (a common factor), so the clamp changes nothing; the
    T > D branch of the official code."""
    rng = np.random.default_rng(0)
    T, D = 60, 8
    a = rng.normal(size=(T, 1))
    H = a * rng.uniform(1.0, 2.0, size=(1, D)) + 0.3 * rng.normal(size=(T, D))
    Z = H - H.mean(0)
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    K = Z.T @ Z
    assert (K > 0).all()
    rho = K / np.trace(K)
    expected = float(-np.trace(rho @ logm(rho)).real) / min(math.log(T), math.log(D))
    assert real.prompt_entropy(H) == pytest.approx(expected, rel=1e-9)


def test_one_huge_token_collapses_the_prompt_entropy():
    """The pilot's mechanism, by hand: a token with a 10,000x coordinate dominates the mean, so after centring every
    other row points along -h_0: the Gram is nearly rank one and the entropy falls; leaving token 0 out restores it."""
    rng = np.random.default_rng(1)
    H = rng.normal(size=(40, 64))
    base = real.prompt_entropy(H)
    H[0, 7] = 1e4
    assert real.prompt_entropy(H) < 0.3 * base
    assert real.prompt_entropy(H[1:]) == pytest.approx(real.prompt_entropy(np.delete(H, 0, axis=0)))
    assert real.prompt_entropy(H[1:]) > 0.9 * base


def test_shares_uniform_and_valley_by_hand():
    assert real.uniform_share(4, causal=True) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert real.uniform_share(4, causal=False) == 0.25
    att = np.zeros((1, 2, 3, 3))
    att[0, 0, :, 0] = 1.0                                   # head 1: everything on token 0
    att[0, 1, 1, :2] = 0.5                                  # head 2: uniform over what query 1 sees
    att[0, 1, 2, :] = 1 / 3
    np.testing.assert_allclose(real.first_token_share(att), [[1.0, (0.5 + 1 / 3) / 2]])
    curve = np.array([0.9, 0.8, 0.2, 0.3, 0.85, 0.7])      # L = 5: interior 1..4
    assert real.valley_depth(curve) == pytest.approx(0.7 - 0.2)
    assert real.valley_depth(np.array([0.9, 0.9, 0.9, 0.9, 0.9, 0.2])) < 0      # a drop at the end is no valley
    assert real.first_layer([False, False, True, True]) == 3 and real.first_layer([False]) is None


def test_massive_stats_find_the_spike():
    h = np.ones((3, 5, 16))
    h[2, 0, 11] = -500.0                                     # layer 2, token 0, dimension 11
    h[1, 3, 4] = 50.0
    ms = real.massive_stats(h)
    assert ms.loc[2, ["max_pos", "max_dim", "first_dim", "first_dims"]].tolist() == [0, 11, 11, "11"]
    assert ms.loc[2, "first_ratio"] == pytest.approx(500.0) and not ms.loc[2, "first_sun"]
    assert ms.loc[1, "max_pos"] == 3 and ms.loc[1, "first_ratio"] == pytest.approx(1.0)
    h[2, 0, 11] = 2000.0
    assert real.massive_stats(h).loc[2, "first_sun"]


@needs_smollm2
def test_entropy_layers_follow_transformers_hidden_states_and_the_patch_lands():
    """The measured states are transformers' own (the official code reads outputs.hidden_states: SmolLM2's last one
    after the final RMSNorm), and a patch at block b changes block b's output and nothing before it."""
    import torch

    text = real.prompts("dev")[2]
    m = R.smollm2()
    tr = tracing.trace("smollm2", text)
    with torch.no_grad():
        out = m.model(input_ids=torch.tensor([tr.ids]), output_hidden_states=True)
    hs = [h[0].numpy() for h in out.hidden_states]
    np.testing.assert_allclose(tr.hidden[:-1], np.stack(hs[:-1]), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(tr.final, hs[-1], rtol=1e-5, atol=1e-4)
    r = real.measure_prompt("smollm2", text)
    assert r["entropy"][-1] == pytest.approx(real.prompt_entropy(hs[-1]), abs=1e-6)
    assert r["entropy"][5] == pytest.approx(real.prompt_entropy(hs[5]), abs=1e-6)
    p = tracing.trace("smollm2", text, patch=(12, 0, [507], [0.0]))
    assert p.hidden[12][0, 507] == 0.0 and tr.hidden[12][0, 507] != 0.0
    np.testing.assert_array_equal(p.hidden[:12], tr.hidden[:12])
