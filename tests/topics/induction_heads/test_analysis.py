"""The registered rules on hand-made curves, and the real-model scores on a tiny random Llama against brute force."""
import math

import numpy as np
import pytest
import torch

from toymodels.induction_heads import analysis as A
from toymodels.induction_heads import realmodel as RM
from toymodels.induction_heads.circuits import eigen_copying_score


def test_crossing_interpolates_between_evaluations():
    steps = [0, 10, 20, 30]
    assert A.crossing(steps, [4.0, 3.0, 1.0, 0.5], 2.0) == pytest.approx(15.0)
    assert A.crossing(steps, [0.1, 0.2, 0.6, 0.9], 0.5, falling=False) == pytest.approx(17.5)
    assert math.isnan(A.crossing(steps, [4.0, 3.9, 3.8, 3.7], 2.0))
    assert A.crossing(steps, [1.0, 3.0, 1.0, 0.5], 2.0) == 0.0       # already below at the first evaluation


def _arm(loss_curves, score_curves, steps):
    E, n = len(loss_curves), len(steps)
    ind = np.zeros((E, n, 2, 3))
    ind[:, :, 1, 0] = score_curves
    return {"eval_step": np.array(steps), "eval_loss": np.array(loss_curves), "induction": ind,
            "seeds": list(range(E))}


def test_the_phase_change_rule_on_hand_made_curves():
    steps = np.arange(0, 1001, 10)
    sig = lambda t0, w: 1 / (1 + np.exp(-(steps - t0) / w))          # noqa: E731
    loss_fast = 4.2 - 4.0 * sig(300, 10)          # log 13 -> log 13 / 2 in about 20 steps, at step ~300
    score_with = 0.1 + 0.8 * sig(300, 10)         # the score rises at the same time
    score_late = 0.1 + 0.8 * sig(600, 10)         # ... or 300 steps later
    loss_slow = 4.2 - 4.0 * np.clip(steps / 1000, 0, 1)   # a steady fall: log 13 -> half in ~320 steps
    rows = A.phase(_arm([loss_fast, loss_fast, loss_slow], [score_with, score_late, 0.1 + 0.8 * steps / 1000],
                        steps))
    assert [r["holds"] for r in rows] == [True, False, False]
    assert abs(rows[0]["gap"]) < 20 and rows[1]["gap"] > 250 and rows[2]["width"] > A.PHASE_WIDTH


def test_t_interval_against_scipy():
    from scipy import stats

    x = np.array([1.0, 2.0, 4.0, 3.5, 2.5])
    m, lo, hi = A.t_interval(x)
    want = stats.t.interval(0.95, 4, loc=x.mean(), scale=stats.sem(x))
    assert (m, lo, hi) == (pytest.approx(x.mean()), pytest.approx(want[0]), pytest.approx(want[1]))


def test_the_lmc_rule_reads_each_pair():
    lmc = {"arms": ["none", "circuits", "permutation", "orthogonal"],
           "barrier": np.array([[4.0, 3.5, 3.0, 0.9], [4.0, 3.5, 3.0, 1.1]])}
    rows = A.lmc_rows(lmc, [100, 101, 102, 103])
    assert [r["holds"] for r in rows] == [True, False] and rows[0]["pair"] == "100-101"


# --------------------------------------------------------------------------- the real model's scores


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=160, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      attn_implementation="eager")
    m = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for layer in m.model.layers:
            layer.input_layernorm.weight.uniform_(0.5, 1.5)        # non-trivial gains
        m.model.norm.weight.uniform_(0.5, 1.5)
    return m


def test_prefix_matching_on_a_hand_made_map():
    block, T = 4, 8
    attn = np.zeros((T, T))
    for t in range(T):
        attn[t, t - block + 1 if t >= block else 0] = 1.0
    assert RM.prefix_matching(attn, block) == pytest.approx(1.0)
    attn2 = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # uniform causal attention
    assert RM.prefix_matching(attn2, block) == pytest.approx(np.mean(1 / (np.arange(block, T) + 1)))


def test_the_copying_score_is_the_full_ov_circuits_eigen_score(tiny_llama):
    m = tiny_llama
    got = RM.copying_scores(m)
    H, KV, dh = 4, 2, 8
    with torch.no_grad():
        W_E = m.model.embed_tokens.weight.double().numpy()
        W_U = m.lm_head.weight.double().numpy().T
        g_f = m.model.norm.weight.double().numpy()
        for i, layer in enumerate(m.model.layers):
            g = layer.input_layernorm.weight.double().numpy()
            Wv = layer.self_attn.v_proj.weight.double().numpy().T
            Wo = layer.self_attn.o_proj.weight.double().numpy().T
            for h in range(H):
                kv = h // (H // KV)
                full = (W_E * g) @ Wv[:, kv * dh:(kv + 1) * dh] @ Wo[h * dh:(h + 1) * dh] @ (g_f[:, None] * W_U)
                assert got[i, h] == pytest.approx(eigen_copying_score(full), abs=1e-6)


def test_measure_on_a_tiny_model(tiny_llama):
    res = RM.measure(tiny_llama, n_seq=3, block=10, seed=0)
    assert res["prefix"].shape == (2, 4) and res["prefix_seq"].shape == (3, 2, 4)
    assert np.all((0 <= res["prefix"]) & (res["prefix"] <= 1))
    rep = RM.repeated_tokens(3, 10, 160, 0)
    assert (rep[:, :10] == rep[:, 10:]).all() and all(len(set(r[:10])) == 10 for r in rep)
    assert rep.min() >= RM.FIRST_ID
