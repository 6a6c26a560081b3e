"""Claims, not badges: each topic judges itself as a ledger of its paper's claims.

A topic declares ``CLAIMS``: the paper's headline, its mechanism, and the controls and scaling laws it reports,
each with the test that decides it, written (and committed) before the run that decides it. ``judge`` runs a
claim's test on the topic's results; ``verdict_of`` judges them all and derives the topic's verdict. Pages,
Home, the command line and the tests all read that one ledger.

Rules the code enforces (the tests check them):

* a claim whose numbers chose a parameter (``fitted``) is "illustrated", never "reproduced";
* evidence over several seeds carries its uncertainty (an interval or a p-value), or it cannot be built;
* a claim whose results are missing is "not testable here", never a guess;
* the topic is reproduced when every headline claim is, not reproduced when one headline claim is not, and
  undecided otherwise.

What code cannot check is the order of events: a test's thresholds are committed before the deciding run
(``registered`` names that commit), and a threshold moved after a result was seen leaves the claim
"illustrated" until a fresh run on new seeds decides it.
"""
from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from toymodels.errors import ClaimError, NotStored

REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE, ILLUSTRATED = ("reproduced", "not reproduced", "not testable here",
                                                         "illustrated")
STATUSES = (REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE, ILLUSTRATED)
KINDS = ("headline", "mechanism", "control", "scaling")


@dataclass(frozen=True)
class Quote:
    """A number or finding quoted from a paper, and where it is (``"Table 3"``, ``"Fig. 1c"``, ``"§4.6"``).
    Pages show ``str(quote)``; code reads ``quote.value``."""

    value: Any
    source: str
    note: str = ""

    def __post_init__(self):
        if not self.source.strip():
            raise ClaimError("a quote names where in the paper it comes from")

    def __str__(self) -> str:
        value = f"{self.value:g}" if isinstance(self.value, float) else str(self.value)
        return f"{value} ({self.source})"


def paper_numbers(**quotes: Quote) -> Mapping[str, Quote]:
    """A topic's ``PAPER``: every number it quotes from the paper, in one place (read-only)."""
    for name, q in quotes.items():
        if not isinstance(q, Quote):
            raise ClaimError(f"PAPER[{name!r}] must be a Quote (a value and where it is in the paper)")
    return types.MappingProxyType(dict(quotes))


def _flat_metric(key: str, v: Any) -> Any:
    """A metric value as JSON: a number, a bool, None, a short string, a list of those, or a list of flat dicts."""
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        if len(v) > 200:
            raise ClaimError(f"metric {key!r} is a long string; metrics are numbers or short labels")
        return v
    if isinstance(v, (list, tuple)):
        out = []
        for i, item in enumerate(v):
            if isinstance(item, Mapping):
                out.append({str(k): _flat_metric(f"{key}[{i}].{k}", x) for k, x in item.items()})
                if any(isinstance(x, (list, dict)) for x in out[-1].values()):
                    raise ClaimError(f"metric {key!r}: list items are flat")
            else:
                item = _flat_metric(f"{key}[{i}]", item)
                if isinstance(item, (list, dict)):
                    raise ClaimError(f"metric {key!r}: lists are one level deep")
                out.append(item)
        return out
    raise ClaimError(f"metric {key!r} must be a number, bool, None, short string or list, got {type(v).__name__}")


def flat_metrics(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    return types.MappingProxyType({str(k): _flat_metric(str(k), v) for k, v in dict(metrics).items()})


@dataclass(frozen=True)
class Evidence:
    """What a claim's test found: ``ours`` (our number, short), ``status`` (one of ``STATUSES``), the number of
    ``seeds`` it rests on and their ``uncertainty`` (an interval or a p-value, as text; required when
    ``seeds > 1``), a one-sentence ``note`` for a person, and ``metrics`` (numbers for the JSON)."""

    ours: str
    status: str
    seeds: int = 1
    uncertainty: str | None = None
    note: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ClaimError(f"status must be one of {STATUSES}, got {self.status!r}")
        if not isinstance(self.seeds, (int, np.integer)) or self.seeds < 0:
            raise ClaimError(f"seeds must be a whole number >= 0, got {self.seeds!r}")
        if self.seeds > 1 and not (self.uncertainty or "").strip() and self.status != NOT_TESTABLE:
            raise ClaimError("evidence over several seeds carries its uncertainty (an interval or a p-value)")
        object.__setattr__(self, "seeds", int(self.seeds))
        object.__setattr__(self, "metrics", flat_metrics(self.metrics))


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and the test that decides it.

    ``id``: short and stable (``"pass1-gain"``). ``kind``: one of ``KINDS``. ``statement``: the paper's claim in
    one sentence. ``source``: where in the paper (Fig., Table, §, Eq.). ``paper``: its number or finding.
    ``test``: the rule, with its thresholds, that decides the status, in words. ``decide(views)``: runs that
    rule on the topic's results (``views[name]``) and returns ``Evidence``. ``fitted``: the parameters chosen
    after looking at this claim's numbers (then the claim is at most "illustrated"). ``registered``: the
    commit (and date) where the test was written before the run that decided it; empty when it was not.
    """

    id: str
    kind: str
    statement: str
    source: str
    paper: str
    test: str
    decide: Callable[[Mapping[str, Any]], Evidence]
    fitted: tuple[str, ...] = ()
    registered: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ClaimError(f"claim {self.id!r}: kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("id", "statement", "source", "paper", "test"):
            if not str(getattr(self, name)).strip():
                raise ClaimError(f"claim {self.id!r}: {name} is empty")
        object.__setattr__(self, "fitted", tuple(self.fitted))


def claims(*items: Claim) -> tuple[Claim, ...]:
    """A topic's ``CLAIMS`` (ids unique)."""
    ids = [c.id for c in items]
    if len(set(ids)) != len(ids):
        raise ClaimError(f"claim ids repeat: {ids}")
    return tuple(items)


@dataclass(frozen=True)
class Judged:
    """A row of the ledger: the claim, what its test found, and its status after the ledger's rules."""

    id: str
    kind: str
    statement: str
    source: str
    paper: str
    test: str
    status: str
    ours: str
    seeds: int
    uncertainty: str | None
    fitted: tuple[str, ...]
    registered: str
    note: str
    metrics: Mapping[str, Any]

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("id", "kind", "statement", "source", "paper", "test", "status", "ours",
                                             "seeds", "uncertainty", "registered", "note")}
        out["fitted"] = list(self.fitted)
        out["metrics"] = dict(self.metrics)
        return out


def judge(claim: Claim, views: Mapping[str, Any]) -> Judged:
    """Run one claim's test. Missing results make it "not testable here"; a fitted claim is at most
    "illustrated"."""
    try:
        ev = claim.decide(views)
        if not isinstance(ev, Evidence):
            raise ClaimError(f"claim {claim.id!r}: decide() must return Evidence, got {type(ev).__name__}")
    except (NotStored, KeyError) as exc:
        ev = Evidence("n/a", NOT_TESTABLE, seeds=0, note=f"its results are not available ({exc})")
    status = ILLUSTRATED if claim.fitted and ev.status == REPRODUCED else ev.status
    note = ev.note
    if status != ev.status:
        note = (note + " " if note else "") + f"Its test passes, but {', '.join(claim.fitted)} was chosen on " \
                                              "these numbers: illustrated, not reproduced."
    return Judged(claim.id, claim.kind, claim.statement, claim.source, claim.paper, claim.test, status, ev.ours,
                  ev.seeds, ev.uncertainty, claim.fitted, claim.registered, note, ev.metrics)


def topic_reproduced(ledger: tuple[Judged, ...]) -> bool | None:
    """True when every headline claim is reproduced, False when one is not reproduced, else None."""
    heads = [j for j in ledger if j.kind == "headline"]
    if any(j.status == NOT_REPRODUCED for j in heads):
        return False
    if heads and all(j.status == REPRODUCED for j in heads):
        return True
    return None


def count_text(ledger: tuple[Judged, ...]) -> str:
    """``"3 of 5 claims reproduced (1 not reproduced, 1 illustrated)"``."""
    n = len(ledger)
    done = sum(j.status == REPRODUCED for j in ledger)
    rest = [f"{sum(j.status == s for j in ledger)} {s}" for s in STATUSES[1:] if any(j.status == s for j in ledger)]
    return f"{done} of {n} claims reproduced" + (f" ({', '.join(rest)})" if rest else "")


@dataclass(frozen=True)
class Verdict:
    """Does the toy reproduce the paper? Derived from the topic's ledger of claims (``toymodels.claims``).

    ``reproduced``: True (every headline claim reproduced), False (one is not), None (otherwise). ``summary``:
    one sentence (``"3 of 5 claims reproduced (1 not reproduced, 1 illustrated)"``). ``ours`` and ``paper``: the
    first headline claim's numbers, short, for a result strip. ``metrics``: numbers for the JSON (numbers,
    booleans, short strings, lists of them, lists of flat dicts). ``claims``: the ledger, one ``Judged`` row
    per claim.
    """

    reproduced: bool | None
    summary: str
    ours: str
    paper: str
    metrics: Mapping[str, Any] = field(default_factory=dict)
    claims: tuple = ()

    def __post_init__(self):
        if self.reproduced not in (True, False, None):
            raise TypeError("Verdict.reproduced must be True, False or None")
        try:
            object.__setattr__(self, "metrics", flat_metrics(self.metrics))
        except ClaimError as exc:
            raise TypeError(str(exc)) from None
        object.__setattr__(self, "claims", tuple(self.claims))

    @property
    def badge(self) -> str:
        return {True: "reproduced", False: "not reproduced", None: "partly / not tested"}[self.reproduced]
