"""Read-only results: what ``ui.compute`` hands a page is shared by every visitor (a cache and a memo), so it
refuses changes. Dicts and lists refuse changes, arrays have ``writeable=False``, tables refuse in-place
assignment; nothing is copied."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


class FrozenDict(dict):
    """A dict that refuses changes (still a dict for isinstance and JSON)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("this result is shared by every visitor and read-only: copy it before changing it")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore

    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self):
        return (dict, (dict(self),))


class FrozenList(list):
    """A list that refuses changes (still a list)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("this result is shared by every visitor and read-only: copy it before changing it")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore
    __iadd__ = __imul__ = _refuse  # type: ignore

    def __copy__(self):
        return list(self)

    def __deepcopy__(self, memo):
        import copy

        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self):
        return (list, (list(self),))


class FrozenFrame(pd.DataFrame):
    """A DataFrame whose in-place changes raise (``df[c] = ...``, ``df.loc[...] = ...``); methods that return
    new frames (``assign``, ``copy``, arithmetic, ``melt`` ...) return ordinary DataFrames."""

    @property
    def _constructor(self):
        return pd.DataFrame

    def _refuse(self, *args, **kwargs):
        raise TypeError("this table is shared by every visitor and read-only: use .copy() or .assign()")

    __setitem__ = __delitem__ = insert = pop = _refuse  # type: ignore

    def _set_item(self, *args, **kwargs):  # used by df[c] = ..., df.loc[:, c] = ...
        self._refuse()

    @property
    def loc(self):
        return _ReadOnlyIndexer(super().loc)

    @property
    def iloc(self):
        return _ReadOnlyIndexer(super().iloc)

    @property
    def at(self):
        return _ReadOnlyIndexer(super().at)

    @property
    def iat(self):
        return _ReadOnlyIndexer(super().iat)


class _ReadOnlyIndexer:
    """``frozen.loc[...]`` reads as usual; ``frozen.loc[...] = v`` raises."""

    __slots__ = ("_indexer",)

    def __init__(self, indexer):
        self._indexer = indexer

    def __getitem__(self, key):
        return self._indexer[key]

    def __call__(self, *args, **kwargs):  # pandas calls df.loc(axis=...) internally
        return _ReadOnlyIndexer(self._indexer(*args, **kwargs))

    def __setitem__(self, key, value):
        raise TypeError("this table is shared by every visitor and read-only: use .copy() or .assign()")


def freeze(obj: Any) -> Any:
    """A read-only version of a result: dicts and lists refuse changes, arrays have ``writeable=False``,
    tables refuse in-place assignment. Arrays are shared, not copied."""
    if isinstance(obj, FrozenDict | FrozenList | FrozenFrame):
        return obj
    if isinstance(obj, dict):
        return FrozenDict({k: freeze(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return FrozenList(freeze(v) for v in obj)
    if isinstance(obj, np.ndarray):
        view = obj.view()
        view.flags.writeable = False
        return view
    if isinstance(obj, pd.DataFrame):
        frame = FrozenFrame(obj.copy(deep=False))
        for arr in (frame[c].to_numpy() for c in frame.columns):
            try:
                arr.flags.writeable = False
            except (ValueError, AttributeError):
                pass
        return frame
    return obj
