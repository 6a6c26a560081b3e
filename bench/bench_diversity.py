"""Benchmark the hivemind diversity analyzer against what a competent user would write, on one core.

    python bench/bench_diversity.py [--n-embed 300] [--n-bleu 200] [--n-vendi 2000] [--n-cap 2000]

Each measurement names its baseline:

* embedding: ``SentenceTransformer.encode(texts, batch_size=32, normalize_embeddings=True)`` in one call (the
  library's own length sorting and batching) against ``hivemind.embed_texts`` (the same model in
  length-sorted batches with progress, each distinct text once), on distinct texts and on a set where half the
  texts repeat (samples of one prompt often do);
* Self-BLEU: sacrebleu's ``BLEU.sentence_score`` per hypothesis with the other texts as references (what the
  sacrebleu docs suggest) against ``hivemind.self_bleu``; the numbers must agree to 1e-9;
* Vendi: ``exp(entropy(eigvalsh(K / n)))`` on the n x n cosine kernel (the definition, as in the vendi-score
  package's ``score_K``) against the d x d dual form ``hivemind.vendi_score_embeddings``;
* PCA to 2-D: scikit-learn's ``PCA(2, svd_solver="full")`` (an SVD of the n x d matrix) against
  ``hivemind.pca_2d`` (the top two eigenvectors of the d x d scatter matrix); the same scores up to sign;
* the full analysis of ``--n-cap`` responses with their embeddings given (target: <= 3 s on one core).

Times are wall seconds and CPU seconds (``time.process_time``) with torch and BLAS held to one thread; on a
shared machine CPU time is the steadier of the two. Texts are synthetic (random words from a small
vocabulary): distinct, but sharing n-grams like samples of one prompt. Prints one line per measurement and,
last, a JSON object.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import toymodels.hivemind as D  # noqa: E402
from toymodels.hivemind import embed as E  # noqa: E402

VOCAB = ("time is a river that flows carries every moment downstream never returns weaver threads our days "
         "into tapestry memory current leaves drifting quiet endless gentle we the of and like").split()


def synthetic(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(VOCAB, size=int(rng.integers(12, 40)))) + "." for _ in range(n)]


def timed(fn, *args, **kwargs):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t, time.process_time() - c


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-embed", type=int, default=300)
    ap.add_argument("--n-bleu", type=int, default=200)
    ap.add_argument("--n-vendi", type=int, default=2000)
    ap.add_argument("--n-cap", type=int, default=D.MAX_RESPONSES, help="0 skips the full analysis at the cap")
    a = ap.parse_args(argv)
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)  # a benchmark script is a process of its own: it sets its thread policy once
    out = {}
    with threadpool_limits(1):
        _, out["model_load_s"], _ = timed(D.embedder)
        model = D.embedder()
        model.encode(["warm up"], normalize_embeddings=True)

        # --- embedding, half the texts repeated: the baseline embeds every row, ours each distinct text once
        n = a.n_embed
        texts = synthetic(n, seed=10)
        rep = texts[: n // 2] * 2
        _, out["embed_repeated_baseline_s"], out["embed_repeated_baseline_cpu_s"] = timed(
            model.encode, rep, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False)
        E._EMB_CACHE.clear()
        _, out["embed_repeated_ours_s"], out["embed_repeated_ours_cpu_s"] = timed(D.embed_texts, rep)
        # --- embedding distinct texts: one encode call (competent baseline) vs embed_texts
        base, out["embed_baseline_s"], out["embed_baseline_cpu_s"] = timed(
            model.encode, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False)
        E._EMB_CACHE.clear()
        ours, out["embed_ours_s"], out["embed_ours_cpu_s"] = timed(D.embed_texts, texts)
        out["embed_n"] = n
        out["embed_cpu_ms_per_text"] = 1000 * out["embed_ours_cpu_s"] / n
        out["embed_max_abs_diff"] = float(np.abs(base - ours).max())
        # the same texts again plus one (a visitor who adds a response): only the new one is embedded
        _, out["embed_again_plus_one_s"], out["embed_again_plus_one_cpu_s"] = timed(
            D.embed_texts, texts + ["one more response."])

        # --- Self-BLEU: sacrebleu per hypothesis (competent baseline) vs ours
        bt = synthetic(a.n_bleu, seed=1)
        fast, out["self_bleu_ours_s"], _ = timed(D.self_bleu, bt)
        slow, out["self_bleu_baseline_sacrebleu_loop_s"], _ = timed(D.self_bleu_naive, bt)
        out["self_bleu_n"] = a.n_bleu
        out["self_bleu_speedup"] = out["self_bleu_baseline_sacrebleu_loop_s"] / out["self_bleu_ours_s"]
        out["self_bleu_max_abs_diff"] = float(np.max(np.abs(np.array(fast) - np.array(slow))))

        # --- Vendi: n x n eigendecomposition (the definition) vs the d x d dual form
        X = np.random.default_rng(2).normal(size=(a.n_vendi, 384)).astype(np.float32)
        K = D.cosine_matrix(X)
        vk, out["vendi_baseline_nxn_s"], out["vendi_baseline_nxn_cpu_s"] = timed(D.vendi_score, K)
        vd, out["vendi_dual_s"], out["vendi_dual_cpu_s"] = timed(D.vendi_score_embeddings, X)
        out["vendi_n"] = a.n_vendi
        out["vendi_rel_diff"] = abs(vk - vd) / vk

        # --- PCA to 2-D: scikit-learn's full SVD of the n x d matrix (the straightforward version) vs the top
        # two eigenvectors of the d x d scatter matrix (hivemind.pca_2d); equal up to each axis's sign
        from sklearn.decomposition import PCA

        Xp = X.astype(np.float64)
        PCA(n_components=2, svd_solver="full").fit_transform(Xp[:50])  # first-call imports outside the timing
        D.pca_2d(Xp[:50])
        ref, out["pca_baseline_full_svd_s"], out["pca_baseline_full_svd_cpu_s"] = timed(
            PCA(n_components=2, svd_solver="full").fit_transform, Xp)
        got, out["pca_ours_s"], out["pca_ours_cpu_s"] = timed(D.pca_2d, Xp)
        out["pca_max_abs_diff"] = float(np.abs(np.abs(ref) - np.abs(got)).max())

        # --- the full analysis at the cap (embeddings given): 10 prompts x 4 models x n/40 responses
        if a.n_cap > 0:
            rows = [(f"m{i % 4}", f"p{(i // 4) % 10}", t_) for i, t_ in enumerate(synthetic(a.n_cap, seed=2))]
            df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
            e = np.random.default_rng(3).normal(size=(a.n_cap, 384)).astype(np.float32)
            D.analyze(df.head(40), e[:40])  # imports outside the timing
            cfg = D.Config(neighbours=100, k_clusters=12)
            _, out[f"analyze_{a.n_cap}_s"], out[f"analyze_{a.n_cap}_cpu_s"] = timed(D.analyze, df, e, cfg)
            one = df.assign(prompt="p")  # the worst case for the n x n work: every response answers one prompt
            _, out[f"analyze_{a.n_cap}_one_prompt_s"], out[f"analyze_{a.n_cap}_one_prompt_cpu_s"] = timed(
                D.analyze, one, e, cfg)
            out["embed_cap_estimate_cpu_s"] = D.expected_seconds(a.n_cap)
    for k, v in out.items():
        print(f"{k:40s} {v:12.4g}")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
