"""Memory: the allocator policy of the server process and the memo of results shared by every visitor, bounded
by count and by bytes (a hosted server has about 2.7 GB for everything)."""
from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import pandas as pd


def _allocator_policy() -> None:
    """glibc keeps freed mid-size blocks on its heap: a server's resident memory was 1.0-2.9x the arrays alive,
    and up to 1.35 GB freed by a finished computation stayed resident (bench/bench_memory.py). Serve blocks of
    1 MiB and up from mmap (returned to the system when freed), so resident memory follows the arrays; the cost
    measured there is 1.1-1.5x CPU on the allocation-heavy trainings. Linux/glibc only; elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD


_allocator_policy()  # once, when ui is imported


def _release_freed_memory() -> None:
    """Give the heap's free pages back to the system after a computation (glibc ``malloc_trim``): after a deep-CRL
    training the server kept 705 MB resident, 148 MB after trimming."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)



def approx_bytes(obj: Any, _depth: int = 0) -> int:
    """A result's memory, roughly: arrays and tables by their buffers, containers by their items."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(index=True, deep=True).sum())
    if isinstance(obj, str):
        return len(obj) + 49
    if _depth > 8:
        return 64
    if isinstance(obj, dict):
        return 64 + sum(approx_bytes(k, _depth + 1) + approx_bytes(v, _depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return 56 + sum(approx_bytes(v, _depth + 1) for v in obj)
    return 32


class _Memo:
    """A thread-safe in-memory LRU of results, shared by every session of the server, bounded by count and
    by bytes (``approx_bytes``: a hosted server has 2.7 GB for everything).

    (Not ``st.cache_resource``: a cached Streamlit function records the elements it
    touches and replays them, which would replay our progress bar into other sessions.)
    One lock per key, so two visitors asking for the same thing compute it once.
    """

    def __init__(self, size: int = 96, max_bytes: int = 384 << 20):
        self.size, self.max_bytes = size, max_bytes
        self.items, self.sizes, self.locks, self.lock = OrderedDict(), {}, {}, threading.Lock()

    def peek(self, key: str) -> tuple[bool, Any]:
        """``(True, value)`` when ``key`` is held, without computing or waiting for a computation."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return True, self.items[key]
        return False, None

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:
            with self.lock:
                if key in self.items:
                    return self.items[key]
            value = make()
            nbytes = approx_bytes(value)
            with self.lock:
                if nbytes <= self.max_bytes:  # a result larger than the whole memo is served, not kept
                    self.items[key], self.sizes[key] = value, nbytes
                while self.items and (len(self.items) > self.size or sum(self.sizes.values()) > self.max_bytes):
                    old, _ = self.items.popitem(last=False)
                    self.sizes.pop(old, None)
                    self.locks.pop(old, None)
            return value


_MEMO = _Memo()
