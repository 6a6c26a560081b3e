"""Induction heads in a real language model: SmolLM2-135M (through the shared loader ``toymodels.realmodels``).

Olsson et al. (2022) locate induction heads in trained language models by two per-head scores:

* **prefix matching**, on sequences of random tokens repeated: a block of ``block`` random token ids, then the same
  block again; on the second copy, the attention from position t to t - block + 1 (the token after the current
  token's previous occurrence), averaged over the second copy's positions and the sequences;
* **copying**, from the weights: the eigenvalue score sum(λ) / sum(|λ|) of the head's full OV circuit
  (``circuits.eigen_copying_score``). For a Llama-style model the OV circuit of query head h in layer l is
  (W_E diag(g_l)) W_V^{kv(h)} W_O^{h} (diag(g_f) W_U): the token embedding through the layer's RMSNorm gain g_l,
  the head's value (shared by its group of query heads: grouped-query attention) and output maps, and the final
  norm's gain g_f into the unembedding (tied to W_E in SmolLM2). The RMS scalings themselves are positive numbers
  per token and are left out, as TransformerLens does when it folds norms. The nonzero eigenvalues of that V x V
  matrix are those of a d_head x d_head product (cyclic property), which is what is computed.

``measure`` works on any ``LlamaForCausalLM`` (the tests use a tiny random one); ``run`` loads SmolLM2 through the
shared loader. The control: the same heads on random tokens that do not repeat.
"""
from __future__ import annotations

import time

import numpy as np

from .circuits import eigen_copying_score

#: token ids drawn from [FIRST_ID, vocab): SmolLM2's first ids are special tokens (<|endoftext|>, <|im_start|> ...)
FIRST_ID = 100


def repeated_tokens(n_seq: int, block: int, vocab: int, seed: int) -> np.ndarray:
    """(n_seq, 2 block) int64: ``block`` distinct random ids (from [FIRST_ID, vocab)), then the same ids again."""
    rng = np.random.default_rng([int(seed), 42])
    blocks = np.stack([rng.choice(np.arange(FIRST_ID, vocab), size=block, replace=False) for _ in range(n_seq)])
    return np.concatenate([blocks, blocks], axis=1).astype(np.int64)


def random_tokens(n_seq: int, length: int, vocab: int, seed: int) -> np.ndarray:
    """(n_seq, length) int64 distinct random ids: the control with no repeat."""
    rng = np.random.default_rng([int(seed), 43])
    return np.stack([rng.choice(np.arange(FIRST_ID, vocab), size=length, replace=False)
                     for _ in range(n_seq)]).astype(np.int64)


def prefix_matching(attn: np.ndarray, block: int) -> np.ndarray:
    """(..., T, T) attention maps of sequences made of a block repeated twice -> (...) mean attention from each
    position t of the second copy to t - block + 1."""
    T = attn.shape[-1]
    t = np.arange(block, T)
    return attn[..., t, t - block + 1].mean(-1)


def prefix_scores(model, tokens: np.ndarray, block: int, chunk: int = 4) -> np.ndarray:
    """(n_seq, layers, heads) ``prefix_matching`` of a causal LM's attention (eager) on each sequence, computed chunk
    by chunk so that only ``chunk`` sequences' maps are held at once (SmolLM2: 30 x 9 x T² floats per sequence)."""
    import torch

    out = []
    with torch.inference_mode():
        for s in range(0, len(tokens), chunk):
            res = model(input_ids=torch.as_tensor(tokens[s:s + chunk]), output_attentions=True, use_cache=False)
            maps = torch.stack(res.attentions, 1).float().numpy()             # (chunk, layers, heads, T, T)
            out.append(prefix_matching(maps, block))
            del res, maps
    return np.concatenate(out, 0)


def copying_scores(model) -> np.ndarray:
    """(layers, heads) eigenvalue copying score of every query head's full OV circuit (see the module docstring)."""
    import torch

    cfg = model.config
    H, KV = cfg.num_attention_heads, cfg.num_key_value_heads
    dh = getattr(cfg, "head_dim", None) or cfg.hidden_size // H
    with torch.no_grad():
        W_E = model.get_input_embeddings().weight.double()                      # (V, d)
        W_U = model.get_output_embeddings().weight.double().T                   # (d, V)
        g_f = model.model.norm.weight.double()
        G = (g_f[:, None] * W_U) @ W_E                                          # diag(g_f) W_U W_E: (d, d)
        out = np.zeros((cfg.num_hidden_layers, H))
        for i, layer in enumerate(model.model.layers):
            g = layer.input_layernorm.weight.double()
            Wv = layer.self_attn.v_proj.weight.double().T                       # (d, KV dh), x -> x Wv
            Wo = layer.self_attn.o_proj.weight.double().T                       # (H dh, d)
            for h in range(H):
                kv = h // (H // KV)
                Wv_h = Wv[:, kv * dh:(kv + 1) * dh]                              # (d, dh)
                Wo_h = Wo[h * dh:(h + 1) * dh]                                   # (dh, d)
                small = Wo_h @ G @ (g[:, None] * Wv_h)                          # W_O diag(g_f) W_U W_E diag(g) W_V
                out[i, h] = eigen_copying_score(small.numpy())
    return out


def measure(model, n_seq: int = 32, block: int = 50, seed: int = 0, progress=None) -> dict:
    """Per head (layers, heads): ``prefix`` (mean over sequences) and its per-sequence values ``prefix_seq``
    (n_seq, layers, heads), ``prefix_control`` on non-repeating random tokens (the same positions), ``copying``;
    and the settings."""
    from toymodels.topic import as_progress

    prog = as_progress(progress)
    V = model.config.vocab_size
    t0 = time.perf_counter()
    rep = repeated_tokens(n_seq, block, V, seed)
    prog(0.05, "attention on repeated random tokens")
    per_seq = prefix_scores(model, rep, block)                                  # (n_seq, L, H)
    prog(0.6, "attention on random tokens (control)")
    ctrl = prefix_scores(model, random_tokens(n_seq, 2 * block, V, seed), block)
    prog(0.9, "OV circuits")
    cs = copying_scores(model)
    prog(1.0, "done")
    return {"prefix": per_seq.mean(0), "prefix_seq": per_seq.astype(np.float32), "prefix_control": ctrl.mean(0),
            "copying": cs, "n_seq": int(n_seq), "block": int(block), "seed": int(seed),
            "uniform": float(np.mean(1.0 / (np.arange(block, 2 * block) + 1))), "seconds": time.perf_counter() - t0}


def run(n_seq: int = 32, block: int = 50, seed: int = 0, progress=None) -> dict:
    """``measure`` on SmolLM2-135M, loaded through the shared loader (``toymodels.realmodels``), with what the
    bundle records of the model and the libraries."""
    import torch
    import transformers

    from toymodels.realmodels import load

    m = load("smollm2")
    out = measure(m.model, n_seq, block, seed, progress)
    out["model"] = {"name": m.info.name, "layers": m.info.layers, "heads": m.info.heads, "kv_heads": m.info.kv_heads,
                    "width": m.info.width, "vocab": m.info.vocab, "source": m.info.pip}
    out["meta"] = {"torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
                   "device": "cpu"}
    return out
