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

Statuses come from the decision rules below, never from a topic's own if/else (a test reads every topic's source
and every judged claim): ``superiority`` (an effect in the paper's direction), ``equivalence`` (TOST: no effect
beyond a margin stated before the run), ``exact`` (a deterministic identity or bound), ``precondition`` (the
claim's premise did not occur), ``pending`` (its run is not in this build) and ``illustration`` (a claim the toy
can only show, e.g. true by construction). Each returns a ``Decision``: the status, the rule, and why.

What code cannot check is the order of events: a test's thresholds are committed before the deciding run
(``registered`` names that commit), and a threshold moved after a result was seen leaves the claim
"illustrated" until a fresh run on new seeds decides it.
"""
from __future__ import annotations

import math
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


# --------------------------------------------------------------------------- the decision rules (one set for all)

#: the rules a status can come from (``Decision.rule``); "missing" is the ledger's own, for results not stored
RULES = ("superiority", "equivalence", "exact", "point", "precondition", "pending", "illustration", "missing")


@dataclass(frozen=True)
class Decision:
    """What a decision rule concluded: ``status`` (one of ``STATUSES``), the ``rule`` that decided it (one of
    ``RULES``), ``reason`` (one sentence: why this status, with the numbers), and for an undecided interval the
    ``seeds_needed`` to decide it at the present estimate (None when not computable). ``Evidence`` takes a Decision
    as its status."""

    status: str
    rule: str
    reason: str
    seeds_needed: int | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ClaimError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.rule not in RULES:
            raise ClaimError(f"rule must be one of {RULES}, got {self.rule!r}")

    @property
    def label(self) -> str:
        """The status as a page shows it: "not testable here: precondition" for an unmet premise, "reproduced:
        exact check" for a deterministic identity."""
        return _label(self.status, self.rule)

    @property
    def holds(self) -> bool:
        """The rule found the paper's claim (reproduced)."""
        return self.status == REPRODUCED

    @property
    def fails(self) -> bool:
        """The rule found against the paper's claim (not reproduced)."""
        return self.status == NOT_REPRODUCED


def _label(status: str, rule: str) -> str:
    return {"precondition": f"{status}: precondition", "exact": f"{status}: exact check"}.get(rule, status)


def _g(x: float) -> str:
    return f"{x:+.3g}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _interval(estimate: float, interval, what: str) -> tuple[float, float, float]:
    """(estimate, lo, hi) as floats; the estimate must lie inside its own interval (an interval that excludes its
    point estimate contradicts itself on the page)."""
    lo, hi = (float(v) for v in interval)
    est = float(estimate)
    if math.isnan(lo) or math.isnan(hi) or math.isnan(est):
        return est, lo, hi
    if lo > hi:
        raise ClaimError(f"{what}: interval [{lo}, {hi}] has its ends reversed")
    tol = 1e-9 * max(1.0, abs(est)) if math.isfinite(est) else 0.0
    if not (lo <= est <= hi or lo - tol <= est <= hi + tol):
        raise ClaimError(f"{what}: the estimate {est:.6g} lies outside its own interval [{lo:.6g}, {hi:.6g}]; use "
                         "an interval method that contains its estimate (e.g. a percentile bootstrap of the same "
                         "statistic, or a t-interval around the mean)")
    return est, lo, hi


def _seeds_needed(n: int | None, lo: float, hi: float, distance: float) -> int | None:
    """Seeds that would shrink the interval's half-width below ``distance`` (the estimate's distance to the
    nearest decision boundary), assuming the estimate stays and the width falls as 1/sqrt(n)."""
    if not n or not (math.isfinite(lo) and math.isfinite(hi)) or distance <= 0:
        return None
    half = (hi - lo) / 2
    return max(int(n) + 1, math.ceil(n * (half / distance) ** 2))


def _undecided(rule: str, reason: str, need: int | None) -> Decision:
    more = f"; about {need} seeds would decide it at this estimate" if need else ""
    return Decision(NOT_TESTABLE, rule, reason + more, need)


def superiority(estimate: float, interval, *, effect: float, null: float = 0.0, n: int | None = None,
                what: str = "the effect") -> Decision:
    """The paper claims an effect at least ``effect`` away from ``null`` (its direction: the sign of
    ``effect - null``), both stated before the run. ``interval``: our interval of the effect (its level is the
    claim's; a 90% two-sided interval is a one-sided test at 5% on each end).

    * the interval excludes ``null`` in the paper's direction (no effect ruled out) -> reproduced;
    * else, it excludes the paper's ``effect`` -> not reproduced;
    * else not testable here, with the seeds the test would need (``n``: the seeds the interval rests on).
    """
    est, lo, hi = _interval(estimate, interval, what)
    sign = 1.0 if effect > null else -1.0 if effect < null else 0.0
    if sign == 0:
        raise ClaimError("superiority: the paper's effect must differ from the null")
    span = f"{what} {_g(est)}, interval [{_g(lo)}, {_g(hi)}]"
    if math.isnan(lo) or math.isnan(hi):
        return Decision(NOT_TESTABLE, "superiority", f"{span}: the interval could not be formed")
    # in the paper's direction: a > b means "further along the paper's direction"
    lo_d, hi_d = (lo, hi) if sign > 0 else (-hi, -lo)
    null_d, eff_d, est_d = sign * null, sign * effect, sign * est
    if lo_d > null_d:
        smaller = f"; smaller than the paper's {_g(effect)}" if hi_d < eff_d else ""
        return Decision(REPRODUCED, "superiority", f"{span} excludes no effect ({_g(null)}) in the paper's "
                                                   f"direction{smaller}")
    if hi_d < eff_d:
        return Decision(NOT_REPRODUCED, "superiority", f"{span} excludes the paper's effect ({_g(effect)})")
    distance = max(est_d - null_d, eff_d - est_d)
    return _undecided("superiority", f"{span} contains both no effect ({_g(null)}) and the paper's effect "
                                     f"({_g(effect)})", _seeds_needed(n, lo, hi, distance))


def equivalence(estimate: float, interval, *, margin: float, target: float = 0.0, sides: str = "both",
                n: int | None = None, what: str = "the difference") -> Decision:
    """The paper claims no effect: ``estimate`` within ``margin`` of ``target`` (both stated before the run), by
    two one-sided tests (TOST): ``interval`` is a (1 - 2α) interval (90% for α = 0.05). ``sides``: "both" (equal
    within ±margin), "upper" (at most ``target + margin``: no gain), "lower" (at least ``target - margin``: no
    loss).

    * the interval lies inside the band -> reproduced;
    * it lies wholly outside the band (an effect beyond the margin) -> not reproduced;
    * else not testable here, with the seeds the test would need.
    """
    if margin <= 0 or sides not in ("both", "upper", "lower"):
        raise ClaimError("equivalence: margin > 0 and sides in ('both', 'upper', 'lower')")
    est, lo, hi = _interval(estimate, interval, what)
    band_lo = target - margin if sides in ("both", "lower") else -math.inf
    band_hi = target + margin if sides in ("both", "upper") else math.inf
    band = (f"±{margin:g} of {target:g}" if sides == "both" else
            f"at most {_g(band_hi)}" if sides == "upper" else f"at least {_g(band_lo)}")
    span = f"{what} {_g(est)}, interval [{_g(lo)}, {_g(hi)}]"
    if math.isnan(lo) or math.isnan(hi):
        return Decision(NOT_TESTABLE, "equivalence", f"{span}: the interval could not be formed")
    if band_lo <= lo and hi <= band_hi:
        return Decision(REPRODUCED, "equivalence", f"{span} lies inside the margin ({band})")
    if hi < band_lo or lo > band_hi:
        return Decision(NOT_REPRODUCED, "equivalence", f"{span} lies outside the margin ({band}): an effect "
                                                       "beyond it")
    inside = band_lo <= est <= band_hi
    distance = min(est - band_lo, band_hi - est) if inside else max(band_lo - est, est - band_hi)
    return _undecided("equivalence", f"{span} straddles the margin ({band})", _seeds_needed(n, lo, hi, distance))


def exact(holds: bool, what: str) -> Decision:
    """A deterministic identity or bound (no sampling noise: an enumeration, a closed form, a fixed model on fixed
    inputs): reproduced when it holds, not reproduced when it does not. ``what``: the check, in words."""
    return Decision(REPRODUCED if bool(holds) else NOT_REPRODUCED, "exact",
                    f"exact check: {what} {'holds' if holds else 'fails'}")


def point(holds: bool, what: str) -> Decision:
    """A criterion registered on an estimate alone, with no interval (a band for a mean, a count of seeds), kept as
    it was registered before issue 41: reproduced when it holds, else not reproduced. Weaker than the interval
    rules (seed noise can pass or fail it), and the reason says so; new claims use superiority or equivalence."""
    return Decision(REPRODUCED if bool(holds) else NOT_REPRODUCED, "point",
                    f"point check on the estimate, no interval (as registered): {what} "
                    f"{'holds' if holds else 'fails'}")


def precondition(met: bool, what: str) -> Decision | None:
    """None when the claim's premise occurred (go on to its test); else "not testable here: precondition"
    (``what``: the premise and what happened instead), never "not reproduced"."""
    return None if met else Decision(NOT_TESTABLE, "precondition", f"precondition not met: {what}")


def pending(why: str) -> Decision:
    """The deciding run is not in this build (not yet run, or stale): not testable here, saying why."""
    return Decision(NOT_TESTABLE, "pending", why)


def illustration(why: str) -> Decision:
    """A claim the toy can show but not test (true by construction, or a threshold chosen after the result):
    illustrated, saying why."""
    return Decision(ILLUSTRATED, "illustration", why)


def all_of(*parts: Decision) -> Decision:
    """A claim that needs every part: not reproduced when one part is (the first such), reproduced when all are,
    else the first part that is neither (not testable here, or illustrated); the reasons joined."""
    if not parts:
        raise ClaimError("all_of needs at least one decision")
    reason = "; ".join(p.reason for p in parts)
    pick = next((p for p in parts if p.fails), None) or next((p for p in parts if not p.holds), None) or parts[0]
    need = max((p.seeds_needed for p in parts if p.seeds_needed), default=None)
    return Decision(pick.status, pick.rule, reason, need if pick.status == NOT_TESTABLE else None)


def share(k: int, n: int, *, effect: float, null: float = 0.5, what: str = "the share of seeds") -> Decision:
    """The superiority rule on a share of seeds: k of n with its 95% Clopper-Pearson interval, against a ``null``
    share (the phenomenon is not typical) and the paper's ``effect`` share."""
    lo, hi = clopper_pearson(k, n)
    return superiority(k / n if n else float("nan"), (lo, hi), effect=effect, null=null, what=what)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial share k / n."""
    from scipy.special import betaincinv  # = scipy.stats.beta.ppf, bit for bit, without importing scipy.stats

    if n <= 0:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - a))
    return lo, hi


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
    """What a claim's test found: ``ours`` (our number, short), ``status`` (a ``Decision`` from one of the decision
    rules above; the status is read from it), the number of ``seeds`` it rests on and their ``uncertainty`` (an
    interval or a p-value, as text; required when ``seeds > 1``), a one-sentence ``note`` for a person, and
    ``metrics`` (numbers for the JSON). ``rule`` and ``reason`` come from the Decision; a bare status string (the
    old way, which named a status without a rule) is refused."""

    ours: str
    status: Decision
    seeds: int = 1
    uncertainty: str | None = None
    note: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict)
    rule: str = ""
    reason: str = ""

    def __post_init__(self):
        if isinstance(self.status, Decision):
            d = self.status
            object.__setattr__(self, "status", d.status)
            object.__setattr__(self, "rule", d.rule)
            object.__setattr__(self, "reason", d.reason)
        elif not self.rule:  # dataclasses.replace passes the status on as text, with its rule: that is fine
            raise ClaimError(f"status must be a Decision from a decision rule (exact, point, superiority, ...), got "
                             f"{self.status!r}")
        if self.status not in STATUSES:
            raise ClaimError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.rule not in RULES:
            raise ClaimError(f"rule must be one of {RULES}, got {self.rule!r}")
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
    rule: str = ""
    reason: str = ""

    @property
    def label(self) -> str:
        """The status as shown: "not testable here: precondition" for an unmet premise, "…: exact check" for a
        deterministic identity."""
        return _label(self.status, self.rule)

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("id", "kind", "statement", "source", "paper", "test", "status", "ours",
                                             "seeds", "uncertainty", "registered", "note", "rule", "reason")}
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
        ev = Evidence("n/a", Decision(NOT_TESTABLE, "missing", f"its results are not available ({exc})"), seeds=0)
    status = ILLUSTRATED if claim.fitted and ev.status == REPRODUCED else ev.status
    note = ev.note
    if status != ev.status:
        note = (note + " " if note else "") + f"Its test passes, but {', '.join(claim.fitted)} was chosen on " \
                                              "these numbers: illustrated, not reproduced."
    return Judged(claim.id, claim.kind, claim.statement, claim.source, claim.paper, claim.test, status, ev.ours,
                  ev.seeds, ev.uncertainty, claim.fitted, claim.registered, note, ev.metrics, ev.rule, ev.reason)


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
