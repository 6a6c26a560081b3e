"""The analysis: every bounded call the page and the command line make on a (model, prompt, response) table and its
embeddings.

* intra-model repetition (§3, Fig. 4): per (model, prompt) pool the mean pairwise cosine (diagonal excluded), then
  the share of pools whose mean exceeds a threshold (paper: 79% of queries above 0.8 with top-p sampling);
* inter-model homogeneity (Fig. 6): for models a != b and each prompt, the mean over all |a|x|b| cross pairs, then
  averaged over the prompts both models answered (paper: 0.71-0.82; the paper's code pools the cross pairs of all
  prompts, identical when pools have equal size; its diagonal includes self-pairs, ours does not);
* cluster mixing (Fig. 8), the Vendi score and the lexical metrics beside them (``similarity``);
* the null floor: mean similarity of responses to *different* prompts (paper: 0.1-0.2 with its embedder).

What no ``Config`` field changes is kept for the process's recent tables (``_BASE``, bounded by bytes), so moving
a knob redoes only what the knob changes.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from toymodels.topic import InputError, as_progress, bounded

from .config import BASE_MEMO_BYTES, COLUMNS, HEAT_MAX, KNOBS, MAX_PAIR_ROWS, Config
from .embed import embed_texts
from .memo import _ByteLRU, approx_bytes
from .similarity import (
    _BleuGrams,
    _unit_rows,
    cluster_mixing,
    compression_ratio,
    cosine_matrix,
    distinct_n_tokens,
    mattr,
    mean_offdiag,
    pca_2d,
    ttr,
    vendi_score,
    vendi_score_embeddings,
    words,
)
from .uploads import load_example, validate


def _pool_sums(Sp: np.ndarray, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For one prompt's similarity block: per model pair the sum of all cross similarities (k x k), each
    model's count and the sum of its diagonal (self-pairs), so block means need no per-pair loops."""
    P = np.zeros((len(codes), k))
    P[np.arange(len(codes)), codes] = 1.0
    G = P.T @ Sp @ P
    counts = P.sum(axis=0)
    diag = np.bincount(codes, weights=np.diag(Sp), minlength=k)
    return G, counts, diag


# the configuration-free part of recent analyses, by estimated bytes: one of 2,000 responses is ~50 MB
# (its 2,000 x 2,000 similarity matrix alone is 32 MB), the example set's well under 1 MB
_BASE = _ByteLRU(BASE_MEMO_BYTES, 8)


def _analysis_base(df: pd.DataFrame, emb: np.ndarray, p) -> dict:
    """Everything ``analyze`` computes that no ``Config`` field changes, for a validated table and its
    embeddings, kept for the process's recent tables (``_BASE``, bounded by bytes): moving a knob redoes only
    what the knob changes."""
    h = hashlib.sha256(df[list(COLUMNS)].to_csv(index=False).encode("utf-8", "surrogatepass"))
    h.update(str(emb.shape).encode())
    h.update(np.ascontiguousarray(emb).tobytes())
    key = h.hexdigest()
    hit = _BASE.get(key)
    if hit is not None:
        return hit
    texts = df["response"].tolist()
    models = df["model"].to_numpy()
    prompts = df["prompt"].to_numpy()
    model_names = list(pd.unique(models))
    mcode = pd.Categorical(models, categories=model_names).codes.astype(np.int64)
    p(0.05, "similarities")
    S = cosine_matrix(emb)
    E = _unit_rows(emb)
    n = len(df)
    tokens = [words(t) for t in texts]
    p(0.1, "n-grams")
    grams = _BleuGrams(texts)

    # --- per (model, prompt) pool: intra-model repetition + lexical metrics
    p(0.3, "per-pool metrics")
    pools = []
    for (pr, m), idx in df.groupby(["prompt", "model"], sort=False).indices.items():
        idx = np.asarray(idx)
        t = [texts[i] for i in idx]
        toks = [tokens[i] for i in idx]
        sb = grams.self_bleu(idx)
        pools.append({
            "prompt": pr, "model": m, "n": len(idx),
            "intra_similarity": mean_offdiag(S[np.ix_(idx, idx)]),
            "vendi": vendi_score_embeddings(E[idx]),
            "self_bleu": float(np.mean(sb)) if len(idx) > 1 else float("nan"),
            "distinct_1": distinct_n_tokens(toks, 1), "distinct_2": distinct_n_tokens(toks, 2),
            "distinct_3": distinct_n_tokens(toks, 3),
            "ttr_pooled": ttr([w for tk in toks for w in tk]),
            "compression_ratio": compression_ratio(t),
            "mean_words": float(np.mean([len(tk) for tk in toks])),
        })
    per_pool = pd.DataFrame(pools)
    valid_pools = per_pool[per_pool["n"] >= 2]
    intra_by_prompt = valid_pools.groupby("prompt", sort=False)["intra_similarity"].mean()

    # --- per prompt: pooled over models
    p(0.5, "per-prompt metrics")
    prompt_rows, inter_acc, heat, heat_index = [], {}, [], []
    within_sum, within_count = 0.0, 0
    k = len(model_names)
    for pr, idx in df.groupby("prompt", sort=False).indices.items():
        idx = np.asarray(idx)
        Sp = S[np.ix_(idx, idx)]
        G, cnt, dg = _pool_sums(Sp, mcode[idx], k)
        ni = len(idx)
        within_sum += Sp.sum() - np.trace(Sp)
        within_count += ni * (ni - 1)
        same_pairs = float((cnt * (cnt - 1)).sum())
        cross_pairs = ni * (ni - 1) - same_pairs
        same_sum = float((np.diag(G) - dg).sum())
        t = [texts[i] for i in idx]
        sbp = grams.self_bleu(idx)
        present = np.flatnonzero(cnt)
        prompt_rows.append({
            "prompt": pr, "n": ni, "n_models": len(present),
            "pooled_similarity": mean_offdiag(Sp),
            "intra_similarity": float(intra_by_prompt.get(pr, float("nan"))),
            "cross_model_similarity": float((Sp.sum() - np.trace(Sp) - same_sum) / cross_pairs)
            if cross_pairs > 0 else float("nan"),
            "vendi": vendi_score_embeddings(E[idx]),
            "self_bleu": float(np.mean(sbp)) if ni > 1 else float("nan"),
            "distinct_2": distinct_n_tokens([tokens[i] for i in idx], 2),
            "compression_ratio": compression_ratio(t),
        })
        # inter-model: mean over all cross pairs for this prompt, per model pair (diagonal: the intra pool mean)
        for a in present:
            for b in present:
                if a == b:
                    if cnt[a] < 2:
                        continue
                    v = (G[a, a] - dg[a]) / (cnt[a] * (cnt[a] - 1))
                else:
                    v = G[a, b] / (cnt[a] * cnt[b])
                inter_acc.setdefault((int(a), int(b)), []).append(float(v))
        heat.append(Sp[:HEAT_MAX, :HEAT_MAX].astype(np.float32))
        heat_index.append(idx[:HEAT_MAX])
    per_prompt = pd.DataFrame(prompt_rows)
    inter = pd.DataFrame([{"model_a": model_names[a], "model_b": model_names[b], "similarity": float(np.mean(v)),
                           "n_prompts": len(v)} for (a, b), v in sorted(inter_acc.items())],
                         columns=["model_a", "model_b", "similarity", "n_prompts"])

    # --- the null floor: mean over pairs of responses to different prompts (from sums, no pair list)
    p(0.7, "pairs")
    cross_count = n * (n - 1) - within_count
    null_floor = float((S.sum() - np.trace(S) - within_sum) / cross_count) if cross_count else None
    # --- pairs within a prompt (the CSV), in (i, j) order
    # (a boolean n x n mask read in row-major order: already sorted, no sort of n^2/2 pairs)
    pcode = pd.factorize(prompts)[0]
    ii, jj = np.nonzero(np.triu(pcode[:, None] == pcode[None, :], k=1))
    p(0.75, "PCA")
    X = emb.astype(np.float64)
    spread = np.ptp(X, axis=0).max() > 1e-9
    xy = pca_2d(X) if spread else np.zeros((n, 2))
    # PCA's axis signs are arbitrary: fix them so the first response lies in the positive quadrant
    xy = xy * np.where(xy[0] < 0, -1.0, 1.0)
    base = dict(S=S, texts=texts, tokens=tokens, models=models, prompts=prompts, model_names=model_names,
                per_pool=per_pool, per_prompt=per_prompt, inter=inter, null_floor=null_floor, ii=ii, jj=jj,
                heat=heat, heat_index=heat_index, xy=xy, X=X, n_distinct=len(np.unique(X.round(6), axis=0)),
                prompt_groups=[np.asarray(ix) for ix in df.groupby("prompt", sort=False).indices.values()],
                prompt_names=list(df.groupby("prompt", sort=False).indices))
    _BASE.put(key, base, approx_bytes(base))
    return base


@bounded(cfg=KNOBS.fields(Config), _free=("df", "emb"))
def analyze(df: pd.DataFrame, emb: np.ndarray, cfg: Config = Config(), progress=None) -> dict:  # noqa: B008
    """Every metric of the page for a validated (model, prompt, response) table and its embeddings.

    Returns a bundle: summary (dict of headline floats), per_pool / per_prompt / inter (DataFrames), pairs
    (within-prompt pair similarities), strip (example pairs near chosen similarity levels), mixing, pca, clusters,
    and ``heat``: per prompt (in per_prompt order) the similarity block of its first HEAT_MAX responses, with
    ``heat_index`` giving their row numbers in the table.
    """
    p = as_progress(progress)
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0] if emb.ndim else 0} embeddings for {len(df)} responses")
    if not np.isfinite(emb).all():
        raise InputError("the embeddings hold NaN or infinite values")
    if len(df) < 2:
        raise InputError("only one response: similarity needs at least two (no pairs to compare)")
    base = _analysis_base(df, emb, p.sub(0.0, 0.8))
    S, texts, tokens, models, prompts = (base[k] for k in ("S", "texts", "tokens", "models", "prompts"))
    n, model_names, null_floor, X = len(df), base["model_names"], base["null_floor"], base["X"]
    per_prompt, inter = base["per_prompt"].copy(), base["inter"].copy()

    # --- what the knobs change: MATTR window, threshold, mixing depth N, the pairs shown, k-means
    p(0.8, "per-pool MATTR, mixing")
    per_pool = base["per_pool"].copy()
    pool_idx = df.groupby(["prompt", "model"], sort=False).indices.values()
    per_pool.insert(int(per_pool.columns.get_loc("ttr_pooled")) + 1, "mattr_mean", [
        float(np.nanmean([mattr(tokens[i], cfg.mattr_window) for i in idx])) if any(tokens[i] for i in idx)
        else float("nan") for idx in pool_idx])
    per_pool["above_threshold"] = per_pool["intra_similarity"] > cfg.threshold
    valid_pools = per_pool[per_pool["n"] >= 2]
    mixing_rows = []
    for pr, idx in zip(base["prompt_names"], base["prompt_groups"]):
        if len(idx) >= 2:
            curve = cluster_mixing(S[np.ix_(idx, idx)], models[idx], cfg.neighbours)
            mixing_rows += [{"prompt": pr, "N": j + 1, "distinct_models": float(v)} for j, v in enumerate(curve)]
    mixing = pd.DataFrame(mixing_rows, columns=["prompt", "N", "distinct_models"])
    ii, jj = base["ii"], base["jj"]
    if len(ii) > MAX_PAIR_ROWS:
        keep = np.random.default_rng(cfg.seed).choice(len(ii), MAX_PAIR_ROWS, replace=False)
        keep.sort()
        ii, jj = ii[keep], jj[keep]
    pairs = pd.DataFrame({"i": ii, "j": jj, "prompt": prompts[ii], "model_i": models[ii], "model_j": models[jj],
                          "same_model": models[ii] == models[jj], "similarity": S[ii, jj]})

    # --- "what does s look like": the within-prompt pair closest to each level
    strip = []
    for lv in cfg.levels:
        if len(pairs) == 0:
            break
        r = int(np.argmin(np.abs(pairs["similarity"].to_numpy() - lv)))
        i, j = int(pairs["i"].iat[r]), int(pairs["j"].iat[r])
        strip.append({"level": float(lv), "similarity": float(S[i, j]), "prompt": prompts[i], "model_i": models[i],
                      "response_i": texts[i], "model_j": models[j], "response_j": texts[j]})
    strip = pd.DataFrame(strip, columns=["level", "similarity", "prompt", "model_i", "response_i", "model_j",
                                         "response_j"])

    # --- clusters (scikit-learn)
    p(0.9, "k-means")
    from sklearn.cluster import KMeans

    xy = base["xy"]
    n_clusters = min(cfg.k_clusters, base["n_distinct"])  # no more clusters than distinct points
    km = KMeans(n_clusters=n_clusters, n_init=4, random_state=cfg.seed).fit(X)
    dist = np.linalg.norm(X - km.cluster_centers_[km.labels_], axis=1)
    pca = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "model": models, "prompt": prompts, "response": texts,
                        "cluster": km.labels_.astype(int)})
    clusters = []
    for c in range(n_clusters):
        members = np.flatnonzero(km.labels_ == c)
        if len(members) == 0:
            continue
        rep = members[np.argmin(dist[members])]
        clusters.append({"cluster": c, "size": len(members), "n_models": len(set(models[members])),
                         "n_prompts": len(set(prompts[members])), "representative": texts[rep],
                         "representative_model": models[rep]})
    clusters = pd.DataFrame(clusters)

    # --- summary
    p(0.95, "summary")
    inter_off = inter[inter["model_a"] != inter["model_b"]]
    summary = {
        "n_responses": n, "n_models": len(model_names), "n_prompts": int(len(per_prompt)),
        "n_pools": int(len(valid_pools)),
        "intra_model_similarity": float(valid_pools["intra_similarity"].mean()) if len(valid_pools) else None,
        "share_pools_above_threshold": float(valid_pools["above_threshold"].mean()) if len(valid_pools) else None,
        "share_pools_above_0.8": float((valid_pools["intra_similarity"] > 0.8).mean()) if len(valid_pools)
        else None,
        "threshold": cfg.threshold,
        "inter_model_similarity": float(inter_off["similarity"].mean()) if len(inter_off) else None,
        "inter_model_min": float(inter_off["similarity"].min()) if len(inter_off) else None,
        "inter_model_max": float(inter_off["similarity"].max()) if len(inter_off) else None,
        "null_pair_similarity": null_floor,
        "vendi_mean_per_prompt": float(per_prompt["vendi"].mean()),
        "self_bleu": float(valid_pools["self_bleu"].mean()) if len(valid_pools) else None,
        "distinct_1": distinct_n_tokens(tokens, 1), "distinct_2": distinct_n_tokens(tokens, 2),
        "distinct_3": distinct_n_tokens(tokens, 3),
        "distinct_2_per_pool": float(valid_pools["distinct_2"].mean()) if len(valid_pools) else None,
        "ttr_mean": float(np.nanmean([ttr(t) for t in tokens])) if any(tokens) else float("nan"),
        "mattr_mean": float(np.nanmean([mattr(t, cfg.mattr_window) for t in tokens])) if any(tokens)
        else float("nan"),
        "compression_ratio": compression_ratio(texts),
        "mixing_at_N": float(mixing.groupby("N")["distinct_models"].mean().iloc[-1]) if len(mixing) else None,
        "mixing_N": int(mixing["N"].max()) if len(mixing) else None,
        "example_set": _is_example(df),
    }
    p(1.0, "done")
    return {"summary": summary, "config": cfg, "per_pool": per_pool, "per_prompt": per_prompt, "inter": inter,
            "pairs": pairs, "strip": strip, "mixing": mixing, "pca": pca, "clusters": clusters,
            "heat": [h.copy() for h in base["heat"]], "heat_index": [h.copy() for h in base["heat_index"]]}


_EXAMPLE_SHA: list[str] = []


def _table_sha(df: pd.DataFrame) -> str:
    return hashlib.sha256(df[list(COLUMNS)].to_csv(index=False).encode()).hexdigest()


def _is_example(df: pd.DataFrame) -> bool:
    """Whether a validated table is the shipped illustrative example set (the verdict says so)."""
    if not _EXAMPLE_SHA:
        _EXAMPLE_SHA.append(_table_sha(load_example()))
    return len(df) < 500 and _table_sha(df) == _EXAMPLE_SHA[0]


def threshold_sweep(pool_similarity, thresholds=None) -> pd.DataFrame:
    """Share of pools whose mean similarity exceeds each threshold (the paper's Fig. 4 read as a curve)."""
    v = np.asarray(pool_similarity, dtype=np.float64)
    v = v[~np.isnan(v)]
    t = np.round(np.linspace(0.0, 1.0, 101), 2) if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    share = (v[None, :] > t[:, None]).mean(axis=1) if len(v) else np.full(len(t), np.nan)
    return pd.DataFrame({"threshold": t, "share_above": share})


def similarity_bins(per_pool: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Percent of a model's prompts whose pool mean falls in each of ``bins`` bins over [0, 1] (Fig. 4's heatmap).
    A negative pool mean counts in the first bin (as in the paper's figure, whose axis starts at 0)."""
    rows = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for m, g in per_pool[per_pool["n"] >= 2].groupby("model", sort=False):
        v = np.clip(g["intra_similarity"].to_numpy(), 0.0, 1.0)
        counts = np.histogram(v, bins=edges)[0]
        for b in range(bins):
            rows.append({"model": m, "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "lo": float(edges[b]),
                         "percent": 100.0 * counts[b] / max(1, len(v)), "count": int(counts[b])})
    return pd.DataFrame(rows, columns=["model", "bin", "lo", "percent", "count"])


@bounded(**KNOBS.specs("sizes", "reps", "seed", group="sweep"), _free=("df", "emb"))
def sample_size_sweep(df: pd.DataFrame, emb: np.ndarray, sizes: list, reps: int = 3, seed: int = 0,
                      progress=None) -> pd.DataFrame:
    """How each pool metric depends on the number of responses n drawn per (model, prompt) pool.

    For each n in ``sizes`` and each pool with at least n responses, draw ``reps`` random subsets of size n
    (seeded) and average intra-model similarity, Vendi score, Self-BLEU and distinct-2 over subsets and pools.
    The mean pairwise cosine is an unbiased estimate whatever n; Vendi, Self-BLEU and distinct-n are not,
    so sets of different sizes (the paper uses n = 50) are only comparable on the first.
    """
    p = as_progress(progress)
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0] if emb.ndim else 0} embeddings for {len(df)} responses")
    sizes = sorted({int(x) for x in sizes})
    S = cosine_matrix(emb)
    texts = df["response"].tolist()
    grams = _BleuGrams(texts)
    tokens = [words(t) for t in texts]
    pools = [np.asarray(ix) for ix in df.groupby(["prompt", "model"], sort=False).indices.values()]
    rng = np.random.default_rng(seed)
    rows = []
    for step, n in enumerate(sizes):
        p(step / len(sizes), f"n = {n}")
        acc = {"intra_similarity": [], "vendi": [], "self_bleu": [], "distinct_2": []}
        for ix in pools:
            if len(ix) < n:
                continue
            for _ in range(int(reps)):
                sub = np.sort(rng.choice(ix, n, replace=False))
                block = S[np.ix_(sub, sub)]
                acc["intra_similarity"].append(mean_offdiag(block))
                acc["vendi"].append(vendi_score(block))
                acc["self_bleu"].append(float(np.mean(grams.self_bleu(sub))))
                acc["distinct_2"].append(distinct_n_tokens([tokens[i] for i in sub], 2))
        n_pools = sum(len(ix) >= n for ix in pools)
        for metric, v in acc.items():
            finite = [x for x in v if not math.isnan(x)]
            rows.append({"n": n, "metric": metric, "value": float(np.mean(finite)) if finite else float("nan"),
                         "n_pools": int(n_pools)})
    p(1.0, "done")
    return pd.DataFrame(rows, columns=["n", "metric", "value", "n_pools"])


@bounded(cfg=KNOBS.fields(Config), _free=("df",))
def run_table(df: pd.DataFrame, cfg: Config = Config(), progress=None) -> dict:  # noqa: B008
    """Embed and analyse in one call (for the CLI and tests)."""
    p = as_progress(progress)
    df, _ = validate(df)
    emb = embed_texts(df["response"].tolist(), progress=p.sub(0.0, 0.5, "embedding: "))
    return analyze(df, emb, cfg, progress=p.sub(0.5, 1.0, "analysis: "))
