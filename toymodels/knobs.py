"""One declaration per knob: a topic's ``KNOBS`` table (in its ``config.py``).

A ``Knob`` is one row: the parameter or config field it sets (``name``), its ``bound`` (a ``Range``, ``OneOf`` or
``Each`` from ``toymodels.topic``), and, for a knob a page offers, its ``label``, the values the page offers
(``offer``: a tuple of values, or a slider's step), a stable URL ``id``, ``help`` text and display ``labels`` of
its values. Everything else reads the table:

* ``@bounded(cfg=KNOBS.fields(Config))`` / ``@bounded(**KNOBS.specs("n", "m"))``: the entry points' bounds (the
  specs stay introspectable on ``fn.bounds``, like scikit-learn's ``validate_params``);
* ``ui.form(M.KNOBS, ...)``: the widgets, bound to the URL by their ids (one ``parse`` / ``text`` pair per row,
  as TF Playground's ``State.PROPS``: a value a row cannot parse, or does not offer, is ignored and named);
* the contract test: every offered value lies inside its bound, every bounded parameter is declared.

Light: the standard library and ``toymodels.topic`` only (a page imports it without torch).
"""
from __future__ import annotations

import dataclasses
import math
import types
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from toymodels.topic import Each, Fields, OneOf, Range


@dataclass(frozen=True)
class Knob:
    """One knob. ``offer``: the values a page offers (a tuple), a slider's step over the ``Range`` (a number), or
    None (a ``OneOf``'s choices; a number box over a ``Range``). ``id``: the URL id (None: no page offers it; the
    row only bounds an entry point). ``group``: which of a topic's configurations the row belongs to, where two
    configurations bound a field of the same name differently. ``widget``: overrides the widget ``ui.form``
    picks (``slider``, ``select_slider``, ``radio``, ``selectbox``, ``segmented``, ``number``, ``toggle``,
    ``multiselect``, ``range``). ``default``: for a page-only knob that no configuration holds. ``span``: the part
    of a ``Range`` a page offers, where it offers less than the bound allows (a slider from 0 to 2.5 of an exponent
    bounded at 3)."""

    name: str
    bound: Any
    label: str = ""
    offer: tuple | float | None = None
    id: str | None = None
    help: str = ""
    labels: Mapping[Any, str] | None = None
    group: str | None = None
    widget: str | None = None
    default: Any = None
    span: tuple[float, float] | None = None

    @property
    def key(self) -> str:
        """The row's key in its table: its URL id, else ``group.name`` (or ``name``)."""
        return self.id or (f"{self.group}.{self.name}" if self.group else self.name)

    # ----------------------------------------------------------------------- the values a page offers

    @property
    def item(self) -> Any:
        """The bound of one value (an ``Each``'s item, else the bound itself)."""
        return self.bound.item if isinstance(self.bound, Each) else self.bound

    def choices(self) -> tuple | None:
        """The discrete values offered, or None for a continuous range (a slider with a step, a number box)."""
        if isinstance(self.offer, tuple):
            return self.offer
        item = self.item
        return tuple(item.values) if isinstance(item, OneOf) else None

    def step(self) -> float | None:
        return None if isinstance(self.offer, tuple) or self.offer is None else float(self.offer)

    def limits(self) -> tuple[float, float]:
        """The lowest and highest number a page offers (``span``, else the bound's)."""
        return self.span if self.span is not None else (self.item.lo, self.item.hi)

    def show(self, value: Any) -> str:
        """A value as a visitor reads it (its label where the row has one)."""
        if self.labels and value in self.labels:
            return self.labels[value]
        return f"{value:g}" if isinstance(value, float) else str(value)

    def offered(self, value: Any) -> bool:
        """Whether a page offers ``value`` (inside the bound, and among the offered values where there are; an empty
        text box always)."""
        if self.widget == "text" and value == "":
            return True
        try:
            self.bound.check(self.name, value)
        except Exception:  # noqa: BLE001 - any refusal means "not offered"
            return False
        choices = self.choices()
        values = value if isinstance(self.bound, Each) or self.widget == "range" else [value]
        if choices is None:
            lo, hi = self.limits() if isinstance(self.item, Range) else (None, None)
            return lo is None or all(lo <= v <= hi for v in values)
        return all(_member(v, choices) for v in values)

    # ----------------------------------------------------------------------- the URL, both ways

    def text(self, value: Any) -> str | list[str]:
        """``value`` as it goes into a link (a list for a multi-valued knob)."""
        if isinstance(value, (list, tuple)):
            return [_text(v) for v in value]
        return _text(value)

    def parse(self, raws: list[str]) -> Any:
        """The value a link's texts stand for; ValueError when they stand for none this page offers."""
        multi = isinstance(self.bound, Each) or self.widget == "range"
        if not multi:
            if len(raws) != 1:
                raise ValueError("one value expected")
            value = self._one(raws[0])
        else:
            parts = [p for raw in raws for p in raw.split(",")] if raws else []
            value = [self._one(p) for p in parts]
            if self.widget == "range":
                value = tuple(value)
        if not self.offered(value):
            raise ValueError("not offered")
        return value

    def _one(self, raw: str) -> Any:
        raw = raw.strip()
        choices = self.choices()
        if choices is not None:
            for c in choices:
                if _text(c).lower() == raw.lower():
                    return c
            if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in choices):
                x = float(raw)
                for c in choices:
                    if c == x:
                        return c
            raise ValueError("not one of the choices")
        item = self.item
        if isinstance(item, Range):
            x = float(raw)
            if not math.isfinite(x):
                raise ValueError("not finite")
            if item.integer:
                if x != int(x):
                    raise ValueError("not whole")
                return int(x)
            return x
        return raw


def _member(value: Any, choices: Iterable) -> bool:
    """``value in choices``, where True is not 1 and 1.0 is 1."""
    return any(value == c and isinstance(value, bool) == isinstance(c, bool) for c in choices)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if not value.is_integer() else str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


class Knobs(Mapping):
    """A topic's knob table: an ordered, read-only mapping key -> ``Knob`` (``knobs(...)`` builds it)."""

    def __init__(self, rows: Iterable[Knob]):
        table: dict[str, Knob] = {}
        for row in rows:
            if row.key in table:
                raise ValueError(f"two knobs keyed {row.key!r}")
            table[row.key] = row
        self._rows = types.MappingProxyType(table)

    def __getitem__(self, key: str) -> Knob:
        return self._rows[key]

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"Knobs({', '.join(self._rows)})"

    def rows(self, group: str | None = None) -> list[Knob]:
        return [r for r in self._rows.values() if r.group == group]

    def specs(self, *names: str, group: str | None = None) -> dict[str, Any]:
        """``{parameter: bound}`` for ``@bounded(**KNOBS.specs("n", "m"))``: the rows of ``group`` named ``names``
        (all of the group's rows when none are named)."""
        rows = {r.name: r for r in self.rows(group)}
        missing = [n for n in names if n not in rows]
        if missing:
            raise KeyError(f"no knob named {missing} in group {group!r}")
        return {n: rows[n].bound for n in (names or rows)}

    def fields(self, config: type, group: str | None = None, **extra: Any) -> Fields:
        """The ``Fields`` spec of a config argument: every row of ``group`` that names a field of ``config``, and
        ``extra`` specs."""
        names = {f.name for f in dataclasses.fields(config)}
        specs = {r.name: r.bound for r in self.rows(group) if r.name in names}
        return Fields(**specs, **extra)

    def on_page(self) -> list[Knob]:
        """The rows a page offers (those with a URL id)."""
        return [r for r in self._rows.values() if r.id]


def knobs(*rows: Knob) -> Knobs:
    """A topic's ``KNOBS``: its rows in order (keys unique: a URL id, else ``group.name``)."""
    return Knobs(rows)
