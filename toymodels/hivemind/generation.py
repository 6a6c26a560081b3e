"""Seeded, batched sampling from SmolLM2-135M-Instruct (loaded through the shared loader ``toymodels.realmodels``):
the real-samples section's one way to make the model write.

``generate(prompts, n=1, max_new_tokens=64, temperature=1.0, top_p=1.0, min_p=0.0, seed=0, chat=True)
-> Generation``
    ``n`` samples of each prompt (batched, the prompt's KV cache computed once per batch), at most
    ``max_new_tokens`` new tokens each, stopping at the end-of-turn token. Logits are divided by ``temperature``
    (0: greedy), then top-p (nucleus) and min-p filter them, in transformers' order. ``chat=True`` wraps each prompt
    in the model's chat template (a user turn). Same arguments, same texts on the CPU (a ``torch.Generator`` per
    prompt, seeded from ``(seed, prompt index)``; no global RNG is touched). ``Generation.texts[i][k]`` is sample k
    of prompt i; ``.n_tokens``, ``.finished`` (stopped at end of turn) beside it. Bounded by hivemind's ``KNOBS``
    (group ``generate``); ``expected_generate_seconds`` gives the cost a page states.

Generation runs under SmolLM2's lock (``realmodels.BUSY``), so its working memory (``GEN_MB``) is counted once per
process, not once per visitor. Nothing here imports torch until a call runs.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass

import numpy as np

from toymodels.errors import InputError
from toymodels.realmodels import BUSY, MODELS, Loaded, smollm2
from toymodels.topic import as_progress, bounded

from .config import GEN_MAX_NEW_TOKENS, GEN_MAX_PROMPTS, GEN_MAX_SAMPLES, KNOBS  # noqa: F401 - the caps, public here

GEN_MAX_PROMPT_TOKENS = 256    # tokens per prompt after the chat template
#: The KV cache of one sample, bytes per token: 30 layers x (K, V) x 3 KV heads x 64 dims x 4 bytes.
KV_BYTES_PER_TOKEN = 30 * 2 * 3 * 64 * 4
GEN_MB = 250.0          # working memory of generate: the KV cache of a batch of samples plus the per-step logits
#                         (measured: 16 samples x (200 + 256) tokens peaked 288 MB above the loaded model)
GEN_BATCH_MAX = 16      # samples decoded together (fewer when the cache of longer sequences would pass GEN_MB)
#: CPU seconds on one core (bench/bench_realmodels.py, 27 Nov 2026: 1 x 32 tokens 1.5 s, 16 x 32 6.8 s, 16 x 256
#: after a 200-token prompt 129 s): a prompt's prefill per token, and one decoding step of a batch of b samples
#: whose sequences are T tokens long: GEN_STEP_S + b x (GEN_STEP_S_PER_SAMPLE + T x GEN_STEP_S_PER_SAMPLE_TOKEN).
GEN_PREFILL_S_PER_TOKEN = 0.004
GEN_STEP_S = 0.05
GEN_STEP_S_PER_SAMPLE = 0.008
GEN_STEP_S_PER_SAMPLE_TOKEN = 7e-5


@dataclass(frozen=True)
class Generation:
    """What ``generate`` returns: ``texts[i][k]`` (sample k of prompt i, special tokens removed), ``n_tokens`` and
    ``finished`` (stopped at the end-of-turn token before the cap) beside it, the ``settings`` and ``seconds``."""

    texts: list
    n_tokens: list
    finished: list
    settings: dict
    seconds: float


def gen_batch(prompt_tokens: int, max_new_tokens: int) -> int:
    """Samples decoded together: as many as GEN_BATCH_MAX whose KV cache at full length fits in GEN_MB."""
    per = KV_BYTES_PER_TOKEN * (prompt_tokens + max_new_tokens) / 1e6
    return int(max(1, min(GEN_BATCH_MAX, GEN_MB // per)))


def expected_generate_seconds(n_prompts: int = 1, n: int = 1, max_new_tokens: int = 64,
                              prompt_tokens: int = 60, loaded: bool = True) -> float:
    """Seconds (one CPU core) that ``generate`` takes at most (every sample runs to the cap), plus loading SmolLM2
    when this process has not yet (``loaded=False``): what a page's button states."""
    B = gen_batch(prompt_tokens, max_new_tokens)
    sizes = [B] * (n // B) + ([n % B] if n % B else [])
    T = prompt_tokens + max_new_tokens / 2
    per_prompt = sum(prompt_tokens * GEN_PREFILL_S_PER_TOKEN
                     + max_new_tokens * (GEN_STEP_S + b * (GEN_STEP_S_PER_SAMPLE + T * GEN_STEP_S_PER_SAMPLE_TOKEN))
                     for b in sizes)
    return n_prompts * per_prompt + (0.0 if loaded else MODELS["smollm2"].load_seconds)


def _filter(logits, temperature: float, top_p: float, min_p: float):
    """Probabilities after temperature, top-p and min-p (transformers' order); temperature 0: one-hot argmax."""
    import torch

    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).float()
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sp, si = probs.sort(dim=-1, descending=True)
        before = sp.cumsum(-1) - sp                       # mass strictly above each token
        sp = sp.masked_fill(before >= top_p, 0.0)         # keep the smallest prefix reaching top_p (always the top)
        probs = torch.zeros_like(probs).scatter(-1, si, sp)
    if min_p > 0.0:
        probs = probs.masked_fill(probs < min_p * probs.max(-1, keepdim=True).values, 0.0)
    return probs / probs.sum(-1, keepdim=True)


def _check_generate(prompts, n, max_new_tokens, **_):
    if len(prompts) * n > GEN_MAX_SAMPLES * 4:
        raise InputError(f"{len(prompts)} prompts x {n} samples = {len(prompts) * n} samples; at most "
                         f"{GEN_MAX_SAMPLES * 4} per call")


def _prompt_ids(m: Loaded, prompt: str, chat: bool) -> list[int]:
    if chat:
        ids = m.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                              tokenize=True)
        ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    else:
        ids = m.tokenizer(prompt)["input_ids"]
    ids = list(ids)
    if len(ids) > GEN_MAX_PROMPT_TOKENS:
        raise InputError(f"a prompt has {len(ids):,} tokens{' with the chat template' if chat else ''}; at most "
                         f"{GEN_MAX_PROMPT_TOKENS:,}")
    return ids


@bounded(_check_generate, **KNOBS.specs(group="generate"))
def generate(prompts: list[str], n: int = 1, max_new_tokens: int = 64, temperature: float = 1.0,
             top_p: float = 1.0, min_p: float = 0.0, seed: int = 0, chat: bool = True,
             progress=None) -> Generation:
    """``n`` seeded samples of SmolLM2's continuation of each prompt (see the module docstring)."""
    import torch
    from transformers import DynamicCache

    p = as_progress(progress)
    m = smollm2()
    tok, model = m.tokenizer, m.model
    stop = {tid for tid in (tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")) if tid is not None}
    all_ids = [_prompt_ids(m, q, chat) for q in prompts]
    # transformers 5.24 renamed past_key_values to cache (the old name warns until 5.40)
    cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    texts, counts, done_flags = [], [], []
    t0 = time.perf_counter()
    with BUSY["smollm2"], torch.inference_mode():
        for i, ids in enumerate(all_ids):
            state = np.random.SeedSequence([int(seed), i]).generate_state(2, dtype=np.uint32)
            g = torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))
            B = gen_batch(len(ids), max_new_tokens)
            out_t, out_n, out_f = [], [], []
            for start in range(0, n, B):
                b = min(B, n - start)
                cache = DynamicCache(config=model.config)
                x = torch.tensor([ids])
                out = model(input_ids=x, use_cache=True, logits_to_keep=1, **{cache_arg: cache})
                cache.batch_repeat_interleave(b)
                logits = out.logits[:, -1].expand(b, -1)
                new = torch.zeros((b, 0), dtype=torch.long)
                alive = torch.ones(b, dtype=torch.bool)
                length = torch.zeros(b, dtype=torch.long)
                pos = len(ids)
                for _ in range(max_new_tokens):
                    nxt = torch.multinomial(_filter(logits, temperature, top_p, min_p), 1, generator=g)[:, 0]
                    nxt = torch.where(alive, nxt, torch.full_like(nxt, tok.pad_token_id or 0))
                    new = torch.cat([new, nxt[:, None]], 1)
                    length += alive.long()
                    alive &= ~torch.isin(nxt, torch.tensor(sorted(stop)))
                    if not alive.any():
                        break
                    out = model(input_ids=nxt[:, None], use_cache=True, position_ids=torch.full((b, 1), pos),
                                logits_to_keep=1, **{cache_arg: cache})
                    logits = out.logits[:, -1]
                    pos += 1
                del cache
                for r in range(b):
                    toks = new[r, :int(length[r])].tolist()
                    fin = bool(toks) and toks[-1] in stop
                    out_t.append(tok.decode(toks, skip_special_tokens=True).strip())
                    out_n.append(len(toks) - int(fin))
                    out_f.append(fin)
                p((i + (start + b) / n) / len(all_ids), f"prompt {i + 1}/{len(all_ids)}: {start + b}/{n} samples")
            texts.append(out_t)
            counts.append(out_n)
            done_flags.append(out_f)
    settings = dict(n=n, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, min_p=min_p,
                    seed=seed, chat=chat, model=m.info.name)
    return Generation(texts, counts, done_flags, settings, time.perf_counter() - t0)
