"""The players of the mistake game. Learners (``SOA``, ``Halving``, ``RankRule``) share one interface:
``predict(V, x) -> 0/1`` and ``update(V, x, y) -> V'``. The optimal adversaries are ``StandardAdversary`` (picks each
point) and ``TransductiveAdversary`` (commits to an optimal order, then labels adaptively). ``play`` runs a learner
against an adversary and records every round; a visitor plays through the same ``play`` as ``HumanLearner`` /
``HumanAdversary`` (their clicks replayed; the game pauses for the next). ``worst_order_mistakes``: the most
mistakes an adversary who knows the learner forces with a fixed order.
"""
from __future__ import annotations

import itertools

import pandas as pd

from toymodels.topic import InputError

from .classes import as_class
from .exact import transductive_value
from .games import _Solver, comb, members, restrict, solver


class Learner:
    """A deterministic online learner. ``predict(V, x, t)`` guesses h(x) given the version space V (and the
    round t, which only the transductive rank rule uses); ``update(V, x, y)`` returns V_{x,y}."""

    name = "learner"

    def __init__(self, H, order=None):
        self.s = solver(H)
        self.order = tuple(int(x) for x in order) if order is not None else None

    def predict(self, V: int, x: int, t: int = 0) -> int:
        raise NotImplementedError

    def update(self, V: int, x: int, y: int) -> int:
        return restrict(self.s.masks, V, x, y)


class SOA(Learner):
    """Littlestone's Standard Optimal Algorithm: predict argmax_r LD(V_{x,r}); ties → 1 (notes §2)."""

    name = "SOA"

    def predict(self, V, x, t=0):
        s = self.s
        return int(s.ld(V & s.masks[x]) >= s.ld(V & ~s.masks[x]))


class Halving(Learner):
    """Predict the majority vote of the version space; ties → 1. At most ⌊log2|H|⌋ mistakes."""

    name = "Halving"

    def predict(self, V, x, t=0):
        ones = (V & self.s.masks[x]).bit_count()
        return int(2 * ones >= V.bit_count())


class RankRule(Learner):
    """The optimal transductive learner for a known order: predict the side with the larger rank
    W(V_{x,r}, t+1) along the order (ties → 1). Makes at most W(H, 1) mistakes on that order (notes §3)."""

    name = "Rank rule"

    def __init__(self, H, order=None):
        super().__init__(H, order)
        if self.order is None:
            self.order = tuple(transductive_value(H)[1])
        self._memo: dict = {}

    def predict(self, V, x, t=0):
        s = self.s
        if t >= len(self.order) or self.order[t] != x:  # off-script point: fall back on its first position
            t = self.order.index(x) if x in self.order else len(self.order)
        one, zero = V & s.masks[x], V & ~s.masks[x]
        w1 = self.rank(one, t + 1) if one else -1
        w0 = self.rank(zero, t + 1) if zero else -1
        return int(w1 >= w0)

    def rank(self, V: int, t: int) -> int:
        """W(V, t) along this learner's order (its own memo, so solvers do not grow with every order)."""
        key = (V, t)
        got = self._memo.get(key)
        if got is None:
            s, order = self.s, self.order
            if t >= len(order) or V.bit_count() <= 1:
                got = 0
            else:
                a = V & s.masks[order[t]]
                b = V ^ a
                got = self.rank(V, t + 1) if not a or not b else comb(self.rank(b, t + 1), self.rank(a, t + 1))
            self._memo[key] = got
        return got


LEARNERS = {"SOA": SOA, "Halving": Halving, "Rank rule": RankRule}


def make_learner(name: str, H, order=None) -> Learner:
    try:
        return LEARNERS[name](H, order)
    except KeyError:
        raise InputError(f"unknown learner {name!r}; learners are {', '.join(LEARNERS)}") from None


class StandardAdversary:
    """The optimal adversary of the standard game. Each round it asks the point x maximising
    comb(LD(V_{x,0}), LD(V_{x,1})) (= LD(V)), preferring one where both sides are equally deep (a mistake now),
    then labels to maximise [y ≠ ŷ] + LD(V_y), against the prediction on ties. Forces LD(H) mistakes on anyone."""

    game = "standard"

    def __init__(self, H):
        self.s = solver(H)

    def value(self, V: int, t: int = 0) -> int:
        return max(self.s.ld(V), 0)

    def point(self, V: int, t: int = 0):
        s, best, arg = self.s, None, None
        for x, m1 in enumerate(s.masks):
            a, b = s.ld(V & m1), s.ld(V & ~m1)
            if a < 0 or b < 0:
                continue
            key = (comb(a, b), a == b, -x)
            if best is None or key > best:
                best, arg = key, x
        return arg

    def label(self, V: int, x: int, yhat: int, t: int = 0) -> int:
        s = self.s
        scores = {y: (y != yhat) + s.ld(restrict(s.masks, V, x, y)) for y in (0, 1)
                  if restrict(s.masks, V, x, y)}
        return max(scores, key=lambda y: (scores[y], y != yhat))


class TransductiveAdversary:
    """The optimal adversary of the transductive game: it commits to an order π maximising W(H, 1) (shown to
    the learner up front), then labels to maximise [y ≠ ŷ] + W(V_y, t+1), against the prediction on ties.
    Forces M_tr(H) mistakes on any learner (exactly M_tr on the rank rule)."""

    game = "transductive"

    def __init__(self, H, order=None):
        self.s = solver(H)
        self.order = tuple(int(x) for x in (order if order is not None else transductive_value(H)[1]))

    def value(self, V: int, t: int = 0) -> int:
        return self.s.w(V, self.order, t) if V else 0

    def point(self, V: int, t: int = 0):
        return self.order[t] if t < len(self.order) else None

    def label(self, V: int, x: int, yhat: int, t: int = 0) -> int:
        s = self.s
        scores = {y: (y != yhat) + s.w(restrict(s.masks, V, x, y), self.order, t + 1) for y in (0, 1)
                  if restrict(s.masks, V, x, y)}
        return max(scores, key=lambda y: (scores[y], y != yhat))


def make_adversary(game: str, H, order=None):
    if game == "standard":
        return StandardAdversary(H)
    if game == "transductive":
        return TransductiveAdversary(H, order)
    raise InputError(f"unknown game {game!r}; games are 'standard' and 'transductive'")


class _NeedMove(Exception):
    """Raised by a scripted (human) player whose moves have run out: ``play`` stops and says what it waits for."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class HumanLearner(Learner):
    """A learner whose predictions are given one by one (a visitor's clicks), replayed in order.
    ``play`` stops at the first round with no prediction left and reports that it waits for one."""

    name = "You"

    def __init__(self, H, predictions=()):
        super().__init__(H)
        self.moves = [int(y) for y in predictions]
        for y in self.moves:
            if y not in (0, 1):
                raise InputError(f"a prediction is 0 or 1, got {y!r}")
        self._i = 0

    def predict(self, V, x, t=0):
        if self._i >= len(self.moves):
            raise _NeedMove("prediction")
        self._i += 1
        return self.moves[self._i - 1]


class HumanAdversary:
    """An adversary whose moves are given one by one (a visitor's clicks), replayed in order.

    In the transductive game the sequence is fixed up front (``order``, by default an optimal one) and each
    move is a label; in the standard game the moves alternate: a point, then (after seeing the prediction)
    its label. A move that breaks the rules (a point that no longer splits the version space, a label no
    hypothesis left agrees with) raises InputError. ``value`` is the optimal value of the rest of the game."""

    def __init__(self, H, game: str = "transductive", moves=(), order=None):
        if game not in ("standard", "transductive"):
            raise InputError(f"unknown game {game!r}; games are 'standard' and 'transductive'")
        self.game = game
        self.s = solver(H)
        self._opt = make_adversary(game, H, order)
        self.order = getattr(self._opt, "order", None)
        self.moves = [int(v) for v in moves]
        self._i = 0

    def _next(self, what: str) -> int:
        if self._i >= len(self.moves):
            raise _NeedMove(what)
        self._i += 1
        return self.moves[self._i - 1]

    def value(self, V: int, t: int = 0) -> int:
        return self._opt.value(V, t)

    def point(self, V: int, t: int = 0):
        if self.game == "transductive":
            return self._opt.point(V, t)
        if not splitting_points(self.s, V):
            return None
        x = self._next("point")
        if x not in splitting_points(self.s, V):
            raise InputError(f"x{x} does not split the version space: ask one of "
                             f"{', '.join(f'x{p}' for p in splitting_points(self.s, V))}")
        return x

    def label(self, V: int, x: int, yhat: int, t: int = 0) -> int:
        y = self._next("label")
        if y not in (0, 1) or not restrict(self.s.masks, V, x, y):
            raise InputError(f"label {y!r} for x{x} agrees with no hypothesis left")
        return y


def splitting_points(s: "_Solver", V: int) -> list[int]:
    """The points on which the hypotheses of V disagree (the only ones worth asking)."""
    return [x for x, m1 in enumerate(s.masks) if V & m1 and V & ~m1]


def play(H, learner: Learner, adversary, max_rounds: int | None = None, with_state: bool = False):
    """Run a learner against an adversary until the adversary has no point left (or ``max_rounds``).

    One row per round: t, point x, prediction, label, mistake, |V| before and after, the adversary's
    guaranteed value of the remaining game before the round, cumulative mistakes, and ``forced`` (the point
    no longer splits V: its label is known, so it is played for the learner and cannot be a mistake). The game
    ends once one hypothesis is left.

    Either player may be scripted (``HumanLearner``, ``HumanAdversary``): when its moves run out the game
    pauses. With ``with_state=True`` the result is ``(transcript, state)``, where ``state`` says what the
    game waits for: ``{"over", "waiting" ("prediction" / "point" / "label" / None), "point", "prediction",
    "choices" (the moves allowed now), "value" (what the optimal adversary can still force), "alive"
    (indices of the hypotheses left), "mistakes", "rounds"}``.
    """
    s = solver(H)
    V, t, rows, mistakes = s.full, 0, [], 0
    limit = max_rounds if max_rounds is not None else 4 * s.n + 4
    waiting, x, yhat, choices = None, None, None, []
    while t < limit and V.bit_count() > 1:
        x, yhat = None, None
        try:
            x = adversary.point(V, t)
            if x is None:
                break
            before = adversary.value(V, t)
            one = V & s.masks[x]
            if one and one != V:
                yhat = learner.predict(V, x, t)
                y = adversary.label(V, x, yhat, t)
                forced = False
            else:  # the label is forced: no hypothesis left disagrees, so it is played for both sides
                yhat = y = int(bool(one))
                forced = True
        except _NeedMove as need:
            waiting = need.what
            choices = (splitting_points(s, V) if waiting == "point" else
                       [0, 1] if waiting == "prediction" else
                       [yy for yy in (0, 1) if restrict(s.masks, V, x, yy)])
            break
        V2 = learner.update(V, x, y)
        mistakes += int(y != yhat)
        rows.append({"round": t + 1, "point": int(x), "prediction": int(yhat), "label": int(y),
                     "mistake": bool(y != yhat), "size_before": V.bit_count(), "size_after": V2.bit_count(),
                     "value_before": int(before), "mistakes_so_far": mistakes, "forced": forced})
        V, t = V2, t + 1
    df = pd.DataFrame(rows, columns=["round", "point", "prediction", "label", "mistake", "size_before",
                                     "size_after", "value_before", "mistakes_so_far", "forced"])
    if not with_state:
        return df
    state = {"over": waiting is None, "waiting": waiting, "point": None if x is None else int(x),
             "prediction": None if yhat is None or waiting != "label" else int(yhat), "choices": choices,
             "value": int(adversary.value(V, t)) if V else 0, "alive": members(V), "mistakes": mistakes,
             "rounds": t}
    return df, state


def mistakes_on(H, learner: Learner, order, truth: int) -> int:
    """Mistakes of a learner when the points come in ``order`` and hypothesis ``truth`` labels them."""
    s = solver(H)
    V, count = s.full, 0
    for t, x in enumerate(order):
        y = int(s.H[truth, x])
        count += learner.predict(V, x, t) != y
        V = learner.update(V, x, y)
    return count


def worst_case_on_order(H, learner: Learner, order) -> tuple[int, int]:
    """max over h ∈ H of the learner's mistakes when the points come in ``order``; returns (mistakes, h).

    A depth-first walk over the labelling trie along the order (each node is a version space)."""
    s = solver(H)
    order = tuple(int(x) for x in order)

    def walk(V: int, t: int) -> tuple[int, int]:
        if t == len(order):
            return 0, (V & -V).bit_length() - 1
        x = order[t]
        yhat = learner.predict(V, x, t)
        best = (-1, -1)
        for y in (0, 1):
            Vy = restrict(s.masks, V, x, y)
            if Vy:
                k, h = walk(Vy, t + 1)
                best = max(best, (k + (y != yhat), h))
        return best

    return walk(s.full, 0)


def worst_order_mistakes(H, learner_name: str, max_points: int = 8) -> dict:
    """The most mistakes an adversary who knows the (deterministic) learner can force with a fixed order:
    max over every order π of the points and every h ∈ H of the learner's mistakes (the rank rule is told π).

    SOA and Halving predict from (V, x) alone, so the max over (π, h) equals an adaptive search over
    (V, points left), memoised. The rank rule depends on π, so every one of the n! orders is walked.
    Returns {"mistakes", "order", "truth"}.
    """
    H = as_class(H)
    n = H.shape[1]
    if n > max_points:
        raise InputError(f"the worst order is searched exhaustively: at most {max_points} points")
    if learner_name == "Rank rule":
        best = (-1, None, None)
        for order in itertools.permutations(range(n)):
            k, h = worst_case_on_order(H, RankRule(H, order), order)
            if k > best[0]:
                best = (k, list(order), h)
        return {"mistakes": best[0], "order": best[1], "truth": best[2]}
    learner = make_learner(learner_name, H)
    s = learner.s
    memo: dict = {}

    def f(V: int, R: int) -> tuple[int, tuple]:
        key = (V, R)
        if key in memo:
            return memo[key]
        best = (0, ())
        for x in range(n):
            if R >> x & 1:
                yhat = learner.predict(V, x)
                for y in (0, 1):
                    Vy = restrict(s.masks, V, x, y)
                    if Vy:
                        k, path = f(Vy, R & ~(1 << x))
                        if k + (y != yhat) > best[0]:
                            best = (k + (y != yhat), ((x, y),) + path)
        memo[key] = best
        return best

    k, path = f(s.full, (1 << n) - 1)
    order = [x for x, _ in path]
    order += [x for x in range(n) if x not in order]
    V = s.full
    for x, y in path:
        V = restrict(s.masks, V, x, y)
    return {"mistakes": k, "order": order, "truth": (V & -V).bit_length() - 1}
