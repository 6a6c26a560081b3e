"""What the real models cost (toymodels.realmodels): load time, resident memory, and the time and memory of a trace and
of generation, measured in one fresh process on one thread.

Resident memory is /proc's VmRSS; each stage's peak is VmHWM after resetting it (``/proc/self/clear_refs`` 5), so
a stage's peak is its own. The numbers fill ``ModelInfo.memory_mb`` / ``load_peak_mb`` / ``load_seconds``,
``TRACE_MB`` in ``toymodels/gated_attention/tracing.py`` and the generation cost model (``GEN_*``) in
``toymodels/hivemind/generation.py``.

Run (from the repository root):  nice -n 10 python bench/bench_realmodels.py [--quick]
The last line of standard output is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _status(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover - not Linux
        pass


def stage(rows: list, name: str, fn):
    """Run ``fn()`` and record wall and CPU seconds, resident memory before and after, and the stage's own peak."""
    _reset_peak()
    before, t0, c0 = _status("VmRSS"), time.perf_counter(), time.process_time()
    out = fn()
    row = {"stage": name, "wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(time.process_time() - c0, 2),
           "rss_before_mb": round(before), "rss_after_mb": round(_status("VmRSS")),
           "peak_mb": round(_status("VmHWM"))}
    row["peak_over_before_mb"] = row["peak_mb"] - row["rss_before_mb"]
    rows.append(row)
    print(json.dumps(row), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="load, one trace and a short generation only")
    args = ap.parse_args()
    rows: list = []
    import torch

    torch.set_num_threads(1)
    stage(rows, "import transformers", lambda: __import__("transformers"))
    from toymodels import realmodels as R
    from toymodels.gated_attention.tracing import MAX_TOKENS, trace
    from toymodels.hivemind.generation import GEN_MAX_NEW_TOKENS, generate

    m = stage(rows, "load smollm2", R.smollm2)
    text = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 40)
    ids = m.tokenizer(text)["input_ids"][:MAX_TOKENS - 6]
    long_text = m.tokenizer.decode(ids)
    stage(rows, "trace smollm2 (256 tokens)", lambda: trace("smollm2", long_text, max_tokens=MAX_TOKENS).meta)
    stage(rows, "generate 1 x 32", lambda: generate(["Name a colour."], n=1, max_new_tokens=32, min_p=1e-9,
                                                    temperature=1e-3, seed=0).n_tokens)
    if not args.quick:
        for n in (4, 16):
            stage(rows, f"generate {n} x 32 (to the cap)",
                  lambda n=n: generate(["Write a long story about a dragon."], n=n, max_new_tokens=32,
                                       seed=0).n_tokens)
        prompt = m.tokenizer.decode(m.tokenizer(text)["input_ids"][:200])
        stage(rows, "generate 16 x 256, 200-token prompt (worst memory)",
              lambda: generate([prompt], n=16, max_new_tokens=GEN_MAX_NEW_TOKENS, chat=False, seed=0).n_tokens)
    stage(rows, "load minilm", R.minilm)
    stage(rows, "trace minilm (256 tokens)", lambda: trace("minilm", long_text, max_tokens=MAX_TOKENS).meta)
    print(json.dumps({"rows": rows, "rss_final_mb": round(_status("VmRSS"))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
