"""What the analyzer keeps across reruns and visitors, bounded by bytes: a hosted server's memos must have a memory
bound, not only a number of entries (issue #25)."""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pandas as pd


class _ByteLRU:
    """A thread-safe LRU bounded by the estimated bytes of its values (and by count): what a hosted server
    keeps across reruns and visitors must have a memory bound, not only a number of entries."""

    def __init__(self, max_bytes: int, max_items: int):
        self.max_bytes, self.max_items = int(max_bytes), int(max_items)
        self.items: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self.bytes = 0
        self.lock = threading.Lock()

    def get(self, key: str):
        """The value for ``key`` (marked recently used), or None."""
        with self.lock:
            if key not in self.items:
                return None
            self.items.move_to_end(key)
            return self.items[key][0]

    def put(self, key: str, value, size: int) -> None:
        """Keep ``value`` (``size`` bytes), evicting the least recently used; a value larger than the whole
        budget is not kept."""
        with self.lock:
            if key in self.items:
                self.bytes -= self.items.pop(key)[1]
            if size > self.max_bytes:
                return
            self.items[key] = (value, int(size))
            self.bytes += int(size)
            while self.bytes > self.max_bytes or len(self.items) > self.max_items:
                self.bytes -= self.items.popitem(last=False)[1][1]


def approx_bytes(obj, _depth: int = 0) -> int:
    """Estimated memory of a result: arrays by their buffers (plus their objects), tables by pandas' deep
    memory usage, strings and containers by ``sys.getsizeof`` of their parts (shared objects count once per
    reference: an over-estimate, the safe side for a memory bound)."""
    import sys

    if isinstance(obj, np.ndarray):
        extra = sum(sys.getsizeof(x) for x in obj.ravel()) if obj.dtype == object else 0
        return int(obj.nbytes) + extra
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True, index=True).sum())
    if isinstance(obj, pd.Series):
        return int(obj.memory_usage(deep=True, index=True))
    if isinstance(obj, (str, bytes, int, float, bool)) or obj is None or _depth > 6:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(approx_bytes(v, _depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        if all(type(v) is str for v in obj):  # texts: one pass, no recursion (2,000 responses, 55k tokens)
            return sys.getsizeof(obj) + sum(map(sys.getsizeof, obj))
        return sys.getsizeof(obj) + sum(approx_bytes(v, _depth + 1) for v in obj)
    return sys.getsizeof(obj)
