"""Benchmark the hivemind diversity analyzer: embedding, similarity matrix, Self-BLEU, full analysis at the cap.

    python bench/bench_diversity.py [--n-embed 1000] [--n-bleu 200] [--n-cap 2000]

Prints one line per measurement and, last, a JSON object. Texts are synthetic (random words from a small
vocabulary), so they are distinct but share n-grams, like samples of one prompt.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toymodels import diversity as D  # noqa: E402

VOCAB = ("time is a river that flows carries every moment downstream never returns weaver threads our days "
         "into tapestry memory current leaves drifting quiet endless gentle we the of and like").split()


def synthetic(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(VOCAB, size=int(rng.integers(12, 40)))) + "." for _ in range(n)]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-embed", type=int, default=1000)
    ap.add_argument("--n-bleu", type=int, default=200)
    ap.add_argument("--n-cap", type=int, default=D.MAX_RESPONSES, help="0 skips the full analysis at the cap")
    a = ap.parse_args(argv)
    out = {}
    t = time.perf_counter()
    D.embedder()
    out["model_load_s"] = time.perf_counter() - t
    texts = synthetic(a.n_embed)
    t, c = time.perf_counter(), time.process_time()
    emb = D.embed_texts(texts)
    out[f"embed_{a.n_embed}_s"] = time.perf_counter() - t
    # CPU seconds summed over threads: on a shared machine wall time is inflated, CPU time much less so
    out[f"embed_{a.n_embed}_cpu_s"] = time.process_time() - c
    t = time.perf_counter()
    D.cosine_matrix(emb)
    out[f"similarity_matrix_{a.n_embed}_s"] = time.perf_counter() - t
    bt = synthetic(a.n_bleu, seed=1)
    t = time.perf_counter()
    fast = D.self_bleu(bt)
    out[f"self_bleu_{a.n_bleu}_s"] = time.perf_counter() - t
    t = time.perf_counter()
    slow = D.self_bleu_naive(bt)
    out[f"self_bleu_{a.n_bleu}_naive_loop_s"] = time.perf_counter() - t
    out["self_bleu_speedup"] = out[f"self_bleu_{a.n_bleu}_naive_loop_s"] / out[f"self_bleu_{a.n_bleu}_s"]
    out["self_bleu_max_abs_diff"] = float(np.max(np.abs(np.array(fast) - np.array(slow))))
    # the full analysis at the cap: 10 prompts x 4 models x n/40 responses
    n = a.n_cap
    if n <= 0:
        print(json.dumps(out))
        return out
    rows = [(f"m{i % 4}", f"p{(i // 4) % 10}", t_) for i, t_ in enumerate(synthetic(n, seed=2))]
    df = pd.DataFrame(rows, columns=list(D.COLUMNS))
    t = time.perf_counter()
    e = D.embed_texts(df["response"].tolist())
    out[f"embed_{n}_s"] = time.perf_counter() - t
    t = time.perf_counter()
    D.analyze(df, e, D.Config(neighbours=100, k_clusters=12))
    out[f"analyze_{n}_s"] = time.perf_counter() - t
    for k, v in out.items():
        print(f"{k:32s} {v:10.3f}")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
