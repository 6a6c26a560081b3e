"""The process's thread policy: how many threads torch and numpy's BLAS use, set once per process.

Kept apart from ``toymodels.device`` on purpose: the thread count is process policy, not part of any
computation's definition, so it is one of the store's inert modules and changing it never makes a shipped
result stale. Library functions never change it (a per-call change races between a server's sessions).
"""
from __future__ import annotations

import os

import torch

THREADS_ENV = "TOYMODELS_THREADS"
_THREADS_SET: int | None = None


def set_thread_policy(threads: int | None = None) -> int:
    """Set torch's intra-op thread count (and numpy's BLAS threads) once for this process, and return it.

    The one place that changes it: library functions never do (a per-call change races between the
    sessions of a server). ``threads``: an explicit count; else ``TOYMODELS_THREADS``; else 1, the fastest
    measured on the 2-core machine (``bench/bench_threads.py``: two threads on two busy cores ran up to 10x
    slower). The server calls this with cores / compute slots. Calling it again with the same count is a no-op.
    """
    global _THREADS_SET
    if threads is None:
        env = os.environ.get(THREADS_ENV, "").strip()
        try:
            threads = int(env) if env else 1
        except ValueError:
            raise ValueError(f"{THREADS_ENV} must be a whole number, got {env!r}") from None
    if not 1 <= int(threads) <= 256:
        raise ValueError(f"threads must be between 1 and 256, got {threads}")
    threads = int(threads)
    if _THREADS_SET != threads:
        torch.set_num_threads(threads)
        try:  # numpy's BLAS (OpenBLAS starts one thread per core) follows the same policy
            from threadpoolctl import threadpool_limits

            threadpool_limits(threads)
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            pass
        _THREADS_SET = threads
    return threads
