"""The data, the attention-only model and its scores, against independent computations: loops over positions, a
from-scratch single-head forward, the circuit form of every head, and seeds run alone."""
import math

import numpy as np
import pytest
import torch

from toymodels.induction_heads import data as D
from toymodels.induction_heads.config import Config
from toymodels.induction_heads.model import (
    copy_loss,
    forward,
    induction_scores,
    init_params,
    previous_token_scores,
    to_numpy,
    to_torch,
)
from toymodels.induction_heads.training import train

SMALL = Config(n_layers=2, d_model=16, n_heads=2, vocab=12, n_ctx=16, period_min=3, period_max=6, batch=8,
               steps=50, eval_every=10, eval_batch=16)


def test_sequences_repeat_with_their_period_and_the_mask_counts_the_copies():
    b = D.sample(np.random.default_rng(0), 50, 32, 64, 4, 16, "variable")
    assert set(np.unique(b.period)) <= set(range(4, 17)) and len(np.unique(b.period)) > 5
    for tok, p, m in zip(b.tokens, b.period, b.mask):
        assert all(tok[t] == tok[t - p] for t in range(p, 32))
        assert list(np.flatnonzero(m) + 1) == list(range(p, 32))          # targets s = t + 1 >= p
    f = D.sample(np.random.default_rng(0), 5, 32, 64, 4, 16, "fixed")
    assert (f.period == 16).all()


def test_the_prefix_match_mask_by_brute_force():
    b = D.sample(np.random.default_rng(1), 6, 20, 5, 3, 7, "variable")      # a small vocabulary: many repeats
    m = D.prefix_match_mask(b.tokens, b.period)
    for i, (tok, p) in enumerate(zip(b.tokens, b.period)):
        for t in range(20):
            for j in range(20):
                want = t >= p and 1 <= j <= t and tok[j - 1] == tok[t]
                assert m[i, t, j] == want


def _attention_by_hand(x, Wq, Wk):
    T, dh = x.shape[0], Wq.shape[1]
    s = (x @ Wq) @ (x @ Wk).T / math.sqrt(dh)
    s[np.triu_indices(T, 1)] = -np.inf
    a = np.exp(s - s.max(1, keepdims=True))
    return a / a.sum(1, keepdims=True)


def test_forward_against_a_from_scratch_loop():
    p = {k: v.double() for k, v in init_params(SMALL, [3], dtype=torch.float64).items()}
    n = to_numpy(p, np.float64)
    tok = D.sample(np.random.default_rng(2), 2, SMALL.n_ctx, SMALL.vocab, 3, 6, "variable").tokens
    logits, attns = forward(p, torch.as_tensor(tok), SMALL.d_head, want_attn=True)
    for b in range(2):
        x = n["W_E"][0][tok[b]] + n["W_pos"][0]
        for layer in range(2):
            out = np.zeros_like(x)
            for h in range(SMALL.n_heads):
                a = _attention_by_hand(x, n[f"W_Q{layer}"][0, h], n[f"W_K{layer}"][0, h])
                np.testing.assert_allclose(attns[layer][0, b, h].detach().numpy(), a, atol=1e-12)
                out += a @ x @ n[f"W_V{layer}"][0, h] @ n[f"W_O{layer}"][0, h]
            x = x + out
        np.testing.assert_allclose(logits[0, b].detach().numpy(), x @ n["W_U"][0], atol=1e-10)


def test_the_circuit_form_of_every_head_computes_the_same_logits():
    p = init_params(SMALL, [4, 5], dtype=torch.float64)
    circ = {k: v for k, v in p.items() if not k.startswith(("W_Q", "W_K", "W_V", "W_O"))}
    for layer in range(2):
        circ[f"QK{layer}"] = p[f"W_Q{layer}"] @ p[f"W_K{layer}"].transpose(-1, -2)
        circ[f"OV{layer}"] = p[f"W_V{layer}"] @ p[f"W_O{layer}"]
    tok = torch.randint(0, SMALL.vocab, (3, SMALL.n_ctx), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(forward(circ, tok, SMALL.d_head), forward(p, tok, SMALL.d_head), atol=1e-10, rtol=0)


def test_a_knocked_out_head_is_a_head_whose_output_map_is_zero():
    p = init_params(SMALL, [6], dtype=torch.float64)
    q = {k: v.detach().clone() for k, v in p.items()}
    q["W_O0"][:, 1] = 0
    tok = torch.randint(0, SMALL.vocab, (3, SMALL.n_ctx), generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(forward(p, tok, SMALL.d_head, knockout=((0, 1),)), forward(q, tok, SMALL.d_head))


def test_copy_loss_is_the_masked_mean_cross_entropy():
    p = init_params(SMALL, [7], dtype=torch.float64)
    b = D.sample(np.random.default_rng(3), 4, SMALL.n_ctx, SMALL.vocab, 3, 6, "variable")
    logits = forward(p, torch.as_tensor(b.tokens), SMALL.d_head)[0].detach().numpy()
    ce = []
    for i in range(4):
        for t in range(SMALL.n_ctx - 1):
            if b.mask[i, t]:
                z = logits[i, t]
                ce.append(np.log(np.exp(z - z.max()).sum()) + z.max() - z[b.tokens[i, t + 1]])
    got = copy_loss(forward(p, torch.as_tensor(b.tokens), SMALL.d_head), torch.as_tensor(b.tokens),
                    torch.as_tensor(b.mask))
    assert float(got[0].detach()) == pytest.approx(np.mean(ce), abs=1e-10)


def test_induction_and_previous_token_scores_recomputed_by_hand_from_the_maps():
    p = init_params(SMALL, [8, 9], dtype=torch.float64)
    b = D.sample(np.random.default_rng(4), 5, SMALL.n_ctx, 5, 3, 6, "variable")
    _, attns = forward(p, torch.as_tensor(b.tokens), SMALL.d_head, want_attn=True)
    ind = induction_scores(attns, torch.as_tensor(D.prefix_match_mask(b.tokens, b.period)),
                           torch.as_tensor(D.query_mask(b.tokens, b.period)))
    prev = previous_token_scores(attns)
    for e in range(2):
        for layer in range(2):
            for h in range(SMALL.n_heads):
                A = attns[layer][e, :, h].detach().numpy()
                num, den, pt = 0.0, 0, []
                for i, (tok, per) in enumerate(zip(b.tokens, b.period)):
                    for t in range(SMALL.n_ctx):
                        if t >= 1:
                            pt.append(A[i, t, t - 1])
                        if t >= per:
                            num += sum(A[i, t, j] for j in range(1, t + 1) if tok[j - 1] == tok[t])
                            den += 1
                assert ind[e, layer, h] == pytest.approx(num / den, abs=1e-12)
                assert prev[e, layer, h] == pytest.approx(np.mean(pt), abs=1e-12)


def test_a_hand_built_induction_head_scores_one():
    """Attention maps put by hand on the token after the previous occurrence (period 5, distinct tokens)."""
    T, per = 15, 5
    tok = np.array([[0, 1, 2, 3, 4] * 3])
    B = np.zeros((1, 1, 1, T, T))
    for t in range(T):
        keys = [j for j in range(1, t + 1) if tok[0, j - 1] == tok[0, t]]
        for j in keys:
            B[0, 0, 0, t, j] = 1 / len(keys)
        if not keys:
            B[0, 0, 0, t, 0] = 1
    s = induction_scores([torch.as_tensor(B)], torch.as_tensor(D.prefix_match_mask(tok, np.array([per]))),
                         torch.as_tensor(D.query_mask(tok, np.array([per]))))
    assert s[0, 0, 0] == pytest.approx(1.0)
    C = np.zeros_like(B)
    C[0, 0, 0, np.arange(T), np.maximum(np.arange(T) - 1, 0)] = 1.0            # a previous-token head instead
    s = induction_scores([torch.as_tensor(C)], torch.as_tensor(D.prefix_match_mask(tok, np.array([per]))),
                         torch.as_tensor(D.query_mask(tok, np.array([per]))))
    assert s[0, 0, 0] == pytest.approx(0.0)
    assert previous_token_scores([torch.as_tensor(C)])[0, 0, 0] == pytest.approx(1.0)


def test_a_seed_trains_the_same_alone_as_in_a_batch_of_seeds():
    alone = train(SMALL, [11], "cpu")
    batch = train(SMALL, [10, 11, 12], "cpu")
    np.testing.assert_allclose(batch["train_loss"][1], alone["train_loss"][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(batch["eval_loss"][1], alone["eval_loss"][0], rtol=1e-4, atol=1e-5)
    again = train(SMALL, [11], "cpu")
    np.testing.assert_array_equal(again["train_loss"], alone["train_loss"])         # same seed, same numbers


def test_weights_round_trip_between_numpy_and_torch():
    p = init_params(SMALL, [1])
    q = to_torch(to_numpy(p))
    for k in p:
        torch.testing.assert_close(q[k], p[k].detach())
