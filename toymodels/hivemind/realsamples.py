"""Real samples: a real instruct LM (SmolLM2-135M-Instruct, offline) answers our prompt set many times under the
paper's two decodings, and the paper's intra-model measures are taken on what it wrote.

* ``load_prompts``: the project's prompt set (``data/hivemind/prompts.csv``: 60 open-ended queries in the
  Infinity-Chat taxonomy's six categories + 8 closed-ended controls), committed before any sample was drawn;
* ``draw_samples``: ``n`` responses per (prompt, decoding) from ``generation.generate`` (SmolLM2 from the shared
  loader ``toymodels.realmodels``; chat template, seeded, batched per prompt, a cap on new tokens), each pool cached
  on disk as it is drawn (a long run that is stopped resumes where it was), with its CPU time and tokens per CPU
  second;
* ``sample_metrics``: the paper's measures by its definitions (official code ``main_analysis_within_model.py``):
  a pool's mean pairwise cosine (upper triangle, ``k=1``), the share of pools at or above 0.8 (the code bins pool
  means with ``np.histogram(bins=10, range=(0, 1))``, so 0.8 itself counts in the 0.8-0.9 bin), that histogram per
  decoding (Fig. 4/5's heatmap column), the min-p vs top-p comparison per prompt, the random-pairs null floor
  (pools of responses to different prompts, Fig. 4 caption), near-verbatim repeats, the closed-ended controls, and
  the calibration ladder (what 0.8 means in MiniLM's space).

Decodings (paper §3, App. C.1): ``top-p`` = top-p 0.9, T = 1.0 (the default); ``min-p`` = min-p 0.1, top-p 1.0,
T = 2.0 (diversity-oriented). The cap on new tokens is ``MAX_NEW_TOKENS`` (the paper: 2,048): see ``CAP_NOTE``.
"""
from __future__ import annotations

import csv
import re
import time
import zlib

import numpy as np
import pandas as pd

from toymodels.topic import InputError, as_progress, bounded

from .config import DATA_DIR, DECODINGS, KNOBS, LIVE_MAX_N, LIVE_MAX_TOKENS  # noqa: F401 - declared there
from .similarity import _unit_rows, mean_offdiag

PROMPTS_CSV = DATA_DIR / "prompts.csv"
CALIBRATION_CSV = DATA_DIR / "calibration.csv"

SAMPLE_MODEL = "smollm2"                 # the shared loader's key: SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised)
SAMPLE_MODEL_NAME = "SmolLM2-135M-Instruct"
N_PER_POOL = 10                          # responses per (prompt, decoding); the paper draws 50 (CPU budget)
MAX_NEW_TOKENS = 40                      # cap on new tokens per response; the paper allows 2,048 (CPU budget)
SAMPLE_SEED = 43                         # the run's seed (issue #43); each pool's seed derives from it
CAP_NOTE = (f"at most {MAX_NEW_TOKENS} new tokens per response (about 30 words; the paper allows 2,048): many "
            "prompts ask for a short form, and MiniLM reads only the first 256 word pieces of a text anyway, while "
            "text-embedding-3-small reads 8,191 tokens; a response cut by the cap is marked unfinished. Cutting every "
            "answer to its opening can only make a pool look more alike (openings are the most formulaic part)")
THRESHOLD = 0.8                          # the paper's line for a pool's mean similarity
NULL_BAND = (0.10, 0.20)                 # the paper's bin for randomly paired responses (Fig. 4 caption)
PAPER_NULL_MID = 0.15                    # its middle: the anchor of the rescaled threshold
NEAR_VERBATIM = 0.95                     # MiniLM cosine at or above which a pair counts as a near-verbatim repeat
N_NULL_POOLS = 60                        # random pools of responses to different prompts
BOOT = 10_000                            # bootstrap resamples of prompts
LEVEL = 0.95


def load_prompts() -> pd.DataFrame:
    """The prompt set: ``id, kind (open / closed), category, subcategory, prompt, answer`` (68 rows)."""
    with open(PROMPTS_CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return pd.DataFrame(rows, columns=["id", "kind", "category", "subcategory", "prompt", "answer"]).fillna("")


def load_calibration() -> pd.DataFrame:
    """The calibration ladder: ``topic, relation, text_a, text_b`` (36 rows, written by the project)."""
    with open(CALIBRATION_CSV, newline="", encoding="utf-8") as f:
        return pd.DataFrame(list(csv.DictReader(f)), columns=["topic", "relation", "text_a", "text_b"])


def pool_seed(seed: int, prompt_id: str, decoding: str) -> int:
    """The seed of one pool: a fixed function of the run's seed, the prompt's id and the decoding (CRC-32)."""
    return (int(seed) * 1_000_003 + zlib.crc32(f"{prompt_id}|{decoding}".encode())) % (2**31 - 1)


def _draw_pool(prompt: str, n: int, max_new_tokens: int, temperature: float, top_p: float, min_p: float,
               seed: int) -> dict:
    """One pool: ``n`` responses to ``prompt`` in one batched ``generate`` call, with the CPU time it took (the
    model is loaded first, outside the timing: loading is paid once per process, not per pool)."""
    from toymodels.realmodels import smollm2

    from .generation import generate

    smollm2()
    c0, t0 = time.process_time(), time.perf_counter()
    g = generate([prompt], n=n, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p,
                 min_p=min_p, seed=seed, chat=True)
    return {"texts": list(g.texts[0]), "n_tokens": [int(x) for x in g.n_tokens[0]],
            "finished": [bool(x) for x in g.finished[0]], "cpu_seconds": time.process_time() - c0,
            "wall_seconds": time.perf_counter() - t0}


def _check_draw(prompt_ids, decodings, **_):
    known = set(load_prompts()["id"])
    bad = [p for p in prompt_ids if p not in known]
    if bad:
        raise InputError(f"unknown prompt id(s): {', '.join(map(str, bad[:5]))}")
    bad = [d for d in decodings if d not in DECODINGS]
    if bad:
        raise InputError(f"decoding must be one of {', '.join(DECODINGS)}; got {bad[0]!r}")


@bounded(_check_draw, **KNOBS.specs(group="draw"), _free=("prompt_ids",))
def draw_samples(prompt_ids: tuple, decodings: tuple = tuple(DECODINGS), n: int = N_PER_POOL,
                 max_new_tokens: int = MAX_NEW_TOKENS, seed: int = SAMPLE_SEED, progress=None) -> dict:
    """``n`` responses of SmolLM2-135M-Instruct per (prompt, decoding), chat template, seeded per pool.

    Each pool is one batched ``generate`` call, cached on disk as soon as it is drawn (``store.cached``): a run
    that is stopped resumes at the next pool, and its CPU time is the sum of the pools' own. Returns ``table``
    (``model, decoding, prompt_id, kind, category, prompt, sample, response, n_tokens, finished``), the decoding
    settings, ``cpu_seconds``, ``wall_seconds``, ``tokens`` and ``tokens_per_cpu_second``.
    """
    from toymodels.store import cached

    p = as_progress(progress)
    prompts = load_prompts().set_index("id")
    rows, cpu, wall, tokens = [], 0.0, 0.0, 0
    jobs = [(d, pid) for d in decodings for pid in prompt_ids]
    for k, (dec, pid) in enumerate(jobs):
        p(k / len(jobs), f"{dec}: prompt {pid} ({k + 1}/{len(jobs)})")
        r = prompts.loc[pid]
        pool = cached(_draw_pool, r["prompt"], int(n), int(max_new_tokens), seed=pool_seed(seed, pid, dec),
                      **DECODINGS[dec])
        cpu += float(pool["cpu_seconds"])
        wall += float(pool["wall_seconds"])
        tokens += int(sum(pool["n_tokens"]))
        for s, (text, nt, fin) in enumerate(zip(pool["texts"], pool["n_tokens"], pool["finished"])):
            rows.append({"model": SAMPLE_MODEL_NAME, "decoding": dec, "prompt_id": pid, "kind": r["kind"],
                         "category": r["category"], "prompt": r["prompt"], "sample": s, "response": text,
                         "n_tokens": int(nt), "finished": bool(fin)})
    p(1.0, "drawn")
    table = pd.DataFrame(rows, columns=["model", "decoding", "prompt_id", "kind", "category", "prompt", "sample",
                                        "response", "n_tokens", "finished"])
    return {"table": table, "model": SAMPLE_MODEL_NAME, "decodings": {d: dict(DECODINGS[d]) for d in decodings},
            "n": int(n), "max_new_tokens": int(max_new_tokens), "seed": int(seed), "n_prompts": len(prompt_ids),
            "cpu_seconds": cpu, "wall_seconds": wall, "tokens": tokens,
            "tokens_per_cpu_second": tokens / cpu if cpu > 0 else float("nan")}


# --------------------------------------------------------------------------- statistics

def wilson(x: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for a share of x in n (a share of pools: each pool one unit)."""
    from scipy.stats import norm

    if n == 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(0.5 + level / 2))
    ph = x / n
    den = 1 + z * z / n
    mid = (ph + z * z / (2 * n)) / den
    half = z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return float(max(0.0, mid - half)), float(min(1.0, mid + half))


def bootstrap_mean_ci(values, seed: int = 0, resamples: int = BOOT, level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean (resampling the units, e.g. prompts, with replacement)."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
    a = (1 - level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def bootstrap_diff_ci(a, b, seed: int = 0, resamples: int = BOOT, level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b), two independent groups resampled separately."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    da = a[rng.integers(0, len(a), size=(resamples, len(a)))].mean(axis=1)
    db = b[rng.integers(0, len(b), size=(resamples, len(b)))].mean(axis=1)
    q = (1 - level) / 2
    return float(np.quantile(da - db, q)), float(np.quantile(da - db, 1 - q))


_NORM = re.compile(r"[^a-z0-9]+")


def normalised(text: str) -> str:
    """A response as compared for exact repeats: lower case, every run of non-alphanumerics one space."""
    return _NORM.sub(" ", text.lower()).strip()


def rescaled_threshold(null_floor: float) -> float:
    """The paper's 0.8 carried to MiniLM's scale by the two anchors both scales share: unrelated text (the paper's
    null bin middle, 0.15, maps to our measured null floor) and identity (1 maps to 1), linearly in between."""
    return float(null_floor + (1 - null_floor) * (THRESHOLD - PAPER_NULL_MID) / (1 - PAPER_NULL_MID))


def answer_hit(response: str, answers: str) -> bool:
    """Whether a response names one of the accepted answers (``a|b``), case-insensitively, as a whole word."""
    return any(re.search(rf"(?<![a-z0-9]){re.escape(a.strip().lower())}(?![a-z0-9])", response.lower())
               for a in answers.split("|") if a.strip())


# --------------------------------------------------------------------------- the measures

def _pools(table: pd.DataFrame, E: np.ndarray, prompts: pd.DataFrame) -> pd.DataFrame:
    answers = prompts.set_index("id")["answer"].to_dict()
    rows = []
    for (dec, pid), idx in table.groupby(["decoding", "prompt_id"], sort=False).indices.items():
        idx = np.asarray(idx)
        S = E[idx] @ E[idx].T
        iu = np.triu_indices(len(idx), k=1)
        pair = S[iu]
        norm = [normalised(t) for t in table["response"].to_numpy()[idx]]
        exact = np.array([norm[i] == norm[j] for i, j in zip(*iu)], dtype=bool)
        kind = table["kind"].iat[idx[0]]
        resp = table["response"].to_numpy()[idx]
        rows.append({
            "decoding": dec, "prompt_id": pid, "kind": kind, "category": table["category"].iat[idx[0]],
            "prompt": table["prompt"].iat[idx[0]], "n": len(idx),
            "mean_similarity": mean_offdiag(S),
            "share_pairs_above_0.8": float((pair >= THRESHOLD).mean()),
            "exact_repeat_pairs": float(exact.mean()),
            "near_verbatim_pairs": float((pair >= NEAR_VERBATIM).mean()),
            "distinct_responses": len(set(norm)),
            "mean_tokens": float(table["n_tokens"].to_numpy()[idx].mean()),
            "share_finished": float(table["finished"].to_numpy()[idx].mean()),
            "accuracy": float(np.mean([answer_hit(t, answers[pid]) for t in resp])) if kind == "closed"
            else float("nan"),
        })
    return pd.DataFrame(rows)


def _null_pools(table: pd.DataFrame, E: np.ndarray, decoding: str, n: int, seed: int) -> np.ndarray:
    """Means of ``N_NULL_POOLS`` random pools of ``n`` responses, each to a different open prompt (one decoding)."""
    sub = table[(table["decoding"] == decoding) & (table["kind"] == "open")]
    groups = [np.asarray(ix) for ix in sub.groupby("prompt_id", sort=True).indices.values()]
    rows = sub.index.to_numpy()
    rng = np.random.default_rng(seed)
    out = []
    k = min(n, len(groups))
    for _ in range(N_NULL_POOLS if k >= 2 else 0):
        which = rng.choice(len(groups), size=k, replace=False)
        pick = np.array([rows[groups[g][rng.integers(len(groups[g]))]] for g in which])
        Ep = E[pick]
        out.append(mean_offdiag(Ep @ Ep.T))
    return np.asarray(out)


def _share(values: np.ndarray, threshold: float) -> dict:
    x, n = int((values >= threshold).sum()), len(values)
    lo, hi = wilson(x, n)
    return {"share": x / n if n else float("nan"), "count": x, "n": n, "ci": [lo, hi]}


def sample_metrics(samples: dict, emb: np.ndarray, calib_emb: np.ndarray | None = None, seed: int = 0) -> dict:
    """The paper's intra-model measures on drawn samples (``draw_samples``' bundle) and their MiniLM embeddings.

    Returns ``pools`` (one row per (decoding, prompt): mean pairwise cosine, share of pairs >= 0.8, exact and
    near-verbatim repeat shares, tokens, finished share, closed-ended accuracy), ``histogram`` (per decoding, the
    percent of open pools in each of the paper's ten bins), ``summary`` (per decoding: the share of open pools at
    or above 0.8 with its Wilson interval, the null floor, the rescaled threshold and its share), ``min_p`` (per
    open prompt, min-p minus top-p mean similarity, its mean and bootstrap interval), ``closed_vs_open``,
    ``null`` (random-pool means per decoding), ``top_pairs`` (the most similar pairs of top-p open pools) and
    ``calibration`` (the ladder's MiniLM cosines, when ``calib_emb`` is given).
    """
    table = samples["table"].reset_index(drop=True)
    E = _unit_rows(np.asarray(emb, dtype=np.float64))
    if E.shape[0] != len(table):
        raise InputError(f"{E.shape[0]} embeddings for {len(table)} responses")
    prompts = load_prompts()
    pools = _pools(table, E, prompts)
    n = int(samples["n"])
    summary, null, hist = {}, {}, []
    for d_i, dec in enumerate(pools["decoding"].unique()):
        op = pools[(pools["decoding"] == dec) & (pools["kind"] == "open")]["mean_similarity"].to_numpy()
        cl = pools[(pools["decoding"] == dec) & (pools["kind"] == "closed")]["mean_similarity"].to_numpy()
        nulls = _null_pools(table, E, dec, n, seed + 1 + d_i)
        floor = float(nulls.mean()) if len(nulls) else float("nan")
        tau = rescaled_threshold(floor)
        counts, _ = np.histogram(op, bins=10, range=(0, 1))
        hist += [{"decoding": dec, "bin": f"{b / 10:.1f}-{(b + 1) / 10:.1f}", "percent": 100 * c / max(1, len(op))}
                 for b, c in enumerate(counts)]
        null[dec] = nulls
        sub = table[(table["decoding"] == dec)]
        summary[dec] = {
            "n_open_pools": len(op), "n_closed_pools": len(cl), "n_responses": len(sub),
            "open_mean_similarity": float(op.mean()) if len(op) else float("nan"),
            "open_mean_ci": list(bootstrap_mean_ci(op, seed)),
            "closed_mean_similarity": float(cl.mean()) if len(cl) else float("nan"),
            "above_0.8": _share(op, THRESHOLD),
            "null_floor": floor, "null_in_band": float(np.mean((nulls >= NULL_BAND[0]) & (nulls <= NULL_BAND[1])))
            if len(nulls) else float("nan"),
            "rescaled_threshold": tau, "above_rescaled": _share(op, tau),
            "exact_repeat_pairs": float(pools[pools["decoding"] == dec]["exact_repeat_pairs"].mean()),
            "near_verbatim_pairs": float(pools[pools["decoding"] == dec]["near_verbatim_pairs"].mean()),
            "pools_with_exact_repeat": int((pools[pools["decoding"] == dec]["exact_repeat_pairs"] > 0).sum()),
            "share_finished": float(sub["finished"].mean()), "mean_tokens": float(sub["n_tokens"].mean()),
        }
    # min-p vs top-p, paired by prompt (open prompts drawn under both)
    open_pools = pools[pools["kind"] == "open"].pivot(index="prompt_id", columns="decoding",
                                                       values="mean_similarity")
    min_p = None
    if {"top-p", "min-p"} <= set(open_pools.columns):
        both = open_pools.dropna(subset=["top-p", "min-p"])
        diff = (both["min-p"] - both["top-p"]).to_numpy()
        min_p = {"n_prompts": len(diff), "mean_difference": float(diff.mean()),
                 "ci": list(bootstrap_mean_ci(diff, seed + 10)),
                 "prompts_lower": int((diff < 0).sum())}
    # closed-ended controls vs open-ended queries (top-p)
    tp = pools[pools["decoding"] == "top-p"]
    cl, op = (tp[tp["kind"] == k]["mean_similarity"].to_numpy() for k in ("closed", "open"))
    closed_vs_open = None
    if len(cl) and len(op):
        closed_vs_open = {"closed_mean": float(cl.mean()), "open_mean": float(op.mean()),
                          "difference": float(cl.mean() - op.mean()),
                          "ci": list(bootstrap_diff_ci(cl, op, seed + 20)), "n_closed": len(cl), "n_open": len(op),
                          "closed_accuracy": float(tp[tp["kind"] == "closed"]["accuracy"].mean())}
    out = {"pools": pools, "histogram": pd.DataFrame(hist), "summary": summary, "min_p": min_p,
           "closed_vs_open": closed_vs_open,
           "null": pd.DataFrame([{"decoding": d, "pool": i, "mean_similarity": float(v)}
                                 for d, vs in null.items() for i, v in enumerate(vs)]),
           "top_pairs": _top_pairs(table, E), "model": samples["model"], "n": n,
           "max_new_tokens": int(samples["max_new_tokens"]), "decodings": samples["decodings"],
           "cpu_seconds": float(samples["cpu_seconds"]), "tokens": int(samples["tokens"]),
           "tokens_per_cpu_second": float(samples["tokens_per_cpu_second"]), "n_responses": len(table)}
    if calib_emb is not None:
        out["calibration"] = calibration_table(calib_emb)
    return out


def _top_pairs(table: pd.DataFrame, E: np.ndarray, k: int = 12) -> pd.DataFrame:
    """The ``k`` most similar pairs of responses within top-p open pools (distinct texts first, then repeats)."""
    rows = []
    sub = table[(table["decoding"] == "top-p") & (table["kind"] == "open")]
    for pid, idx in sub.groupby("prompt_id", sort=False).indices.items():
        idx = sub.index.to_numpy()[np.asarray(idx)]
        S = E[idx] @ E[idx].T
        i, j = np.triu_indices(len(idx), k=1)
        best = np.argsort(-S[i, j], kind="stable")[:3]
        for b in best:
            a_, b_ = idx[i[b]], idx[j[b]]
            rows.append({"prompt_id": pid, "prompt": table["prompt"].iat[a_], "similarity": float(S[i[b], j[b]]),
                         "sample_a": int(table["sample"].iat[a_]), "response_a": table["response"].iat[a_],
                         "sample_b": int(table["sample"].iat[b_]), "response_b": table["response"].iat[b_]})
    df = pd.DataFrame(rows, columns=["prompt_id", "prompt", "similarity", "sample_a", "response_a", "sample_b",
                                     "response_b"])
    return df.sort_values("similarity", ascending=False, kind="stable").head(k).reset_index(drop=True)


def calibration_table(calib_emb: np.ndarray) -> pd.DataFrame:
    """The calibration ladder's MiniLM cosine per pair (``calib_emb``: text_a's then text_b's embeddings)."""
    cal = load_calibration()
    E = _unit_rows(np.asarray(calib_emb, dtype=np.float64))
    m = len(cal)
    if E.shape[0] != 2 * m:
        raise InputError(f"{E.shape[0]} calibration embeddings for {m} pairs")
    return cal.assign(similarity=np.einsum("ij,ij->i", E[:m], E[m:]))


def calibration_texts() -> list[str]:
    """The texts ``calibration_table`` expects embedded: every ``text_a``, then every ``text_b``."""
    cal = load_calibration()
    return cal["text_a"].tolist() + cal["text_b"].tolist()


# --------------------------------------------------------------------------- live sampling (the page, bounded)



def _check_live(prompt_id, **_):
    if prompt_id not in set(load_prompts()["id"]):
        raise InputError(f"unknown prompt id {str(prompt_id)[:20]!r}: pick one of the prompt set")


@bounded(_check_live, **KNOBS.specs("decoding", "n", "max_new_tokens", "seed", group="live"), _free=("prompt_id",))
def live_samples(prompt_id: str, decoding: str = "top-p", n: int = LIVE_MAX_N, max_new_tokens: int = LIVE_MAX_TOKENS,
                 seed: int = 0, progress=None) -> dict:
    """A few fresh responses of SmolLM2 to one prompt of the set (one ``generate`` call, the model's lock held,
    one at a time through the page's compute slots), embedded with MiniLM: ``table`` (sample, response, tokens,
    finished) and ``mean_similarity`` (the pool's mean pairwise cosine). Seeded: the same arguments give the
    same texts on a CPU."""
    from .embed import embed_texts
    from .generation import generate

    if decoding not in DECODINGS:
        raise InputError(f"decoding must be one of {', '.join(DECODINGS)}")
    p = as_progress(progress)
    prompt = load_prompts().set_index("id").loc[prompt_id, "prompt"]
    g = generate([prompt], n=n, max_new_tokens=max_new_tokens, seed=seed, chat=True,
                 progress=p.sub(0.0, 0.9, "sampling: "), **DECODINGS[decoding])
    texts = list(g.texts[0])
    E = _unit_rows(embed_texts(texts).astype(np.float64))
    p(1.0, "done")
    return {"prompt": prompt, "decoding": decoding, "mean_similarity": mean_offdiag(E @ E.T),
            "table": pd.DataFrame({"sample": range(len(texts)), "response": texts, "tokens": list(g.n_tokens[0]),
                                   "finished": list(g.finished[0])})}


def live_expected_seconds(n: int = LIVE_MAX_N, max_new_tokens: int = LIVE_MAX_TOKENS) -> float:
    """What a live run costs on one core: SmolLM2's generation (plus loading it, if this process has not) and
    MiniLM's embedding of the responses."""
    from toymodels.realmodels import is_loaded

    from .generation import expected_generate_seconds

    return expected_generate_seconds(1, n, max_new_tokens, prompt_tokens=40, loaded=is_loaded("smollm2")) + 0.1 * n
