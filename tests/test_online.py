"""Transductive online learning: exact game values against brute-force minimax search, the notes' values,
the chain of inequalities, the learners and adversaries, bad input, the shipped store and the page."""
import itertools
import time

import numpy as np
import pytest

from toymodels import online as M
from toymodels import store
from toymodels.topic import InputError
from tests.apptest_helpers import open_page

# --------------------------------------------------------------------------- independent brute force


def _split(H, V, x):
    return frozenset(i for i in V if H[i, x] == 0), frozenset(i for i in V if H[i, x] == 1)


def ld_definition(H):
    """The recursive definition, with no pruning and version spaces as frozensets."""
    memo = {}

    def ld(V):
        if not V:
            return -1
        if V in memo:
            return memo[V]
        best = 0
        for x in range(H.shape[1]):
            a, b = _split(H, V, x)
            if a and b:
                best = max(best, 1 + min(ld(a), ld(b)))
        memo[V] = best
        return best

    return ld(frozenset(range(len(H))))


def standard_game_minimax(H):
    """The standard game as a game: the adversary picks an unasked point, the learner a prediction, the
    adversary a realizable label; value = mistakes under optimal play (no comb rule, no LD)."""
    n = H.shape[1]
    memo = {}

    def val(V, asked):
        key = (V, asked)
        if key in memo:
            return memo[key]
        best = 0
        for x in range(n):
            if asked >> x & 1:
                continue
            sides = _split(H, V, x)
            worst_for_learner = min(
                max((int(y != yhat) + val(sides[y], asked | 1 << x)) for y in (0, 1) if sides[y])
                for yhat in (0, 1))
            best = max(best, worst_for_learner)
        memo[key] = best
        return best

    return val(frozenset(range(len(H))), 0)


def transductive_minimax(H, order):
    """The transductive game on a fixed sequence, solved as a game (learner min, adversary max)."""
    memo = {}

    def val(V, t):
        if t == len(order):
            return 0
        key = (V, t)
        if key not in memo:
            sides = _split(H, V, order[t])
            memo[key] = min(max(int(y != yhat) + val(sides[y], t + 1) for y in (0, 1) if sides[y])
                            for yhat in (0, 1))
        return memo[key]

    return val(frozenset(range(len(H))), 0)


def m_tr_brute(H):
    return max(transductive_minimax(H, order) for order in itertools.permutations(range(H.shape[1])))


def random_classes(count, max_n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, max_n + 1))
        m = int(rng.integers(1, 2 ** n + 1))
        yield M.random_class(n, m, int(rng.integers(2**31)))


# --------------------------------------------------------------------------- exact values


def test_ld_matches_definition_and_standard_game_on_random_classes():
    for H in random_classes(300, 6, seed=1):
        ld = M.littlestone_dimension(H)
        assert ld == ld_definition(H)
    for H in random_classes(60, 5, seed=2):  # the full game search is slower
        assert M.littlestone_dimension(H) == standard_game_minimax(H)


def test_transductive_value_matches_brute_force_over_every_order():
    checked = 0
    for H in random_classes(250, 5, seed=3):
        v, order = M.transductive_value(H)
        assert v == m_tr_brute(H), H
        assert sorted(order) == list(range(H.shape[1]))
        assert transductive_minimax(H, order) == v  # the returned order achieves the value
        checked += 1
    for seed in range(8):  # some 6- and 7-point classes, including random tree classes with gaps
        H = M.random_class(6, 12, seed) if seed % 2 else M.tree_class(2, 0.5, seed)
        v, order = M.transductive_value(H)
        assert v == m_tr_brute(H) == transductive_minimax(H, order)
        checked += 1
    assert checked == 258


def test_order_value_is_the_comb_recursion_on_hand_worked_classes():
    # thresholds on 3 points: binary search order (1, 0, 2) forces 2 = ⌊log2 4⌋; left to right forces only 1
    T = M.thresholds(3)
    assert M.order_value(T, (1, 0, 2)) == 2
    assert M.order_value(T, (0, 1, 2)) == 1
    assert M.comb(1, 1) == 2 and M.comb(2, 1) == 2 and M.comb(None, 3) == 3 and M.comb(0, None) == 0


@pytest.mark.parametrize("name, H, ld, mtr", [
    ("thresholds7", M.thresholds(7), 3, 3),
    ("minimal3", M.tree_class(1), 2, 2),
    ("minimal7", M.tree_class(2), 3, 3),
    ("G", M.class_G(), 3, 2),
    ("GxG", M.product(M.class_G(), M.class_G()), 6, 4),
    ("all4", M.all_functions(4), 4, 4),
    ("all5", M.all_functions(5), 5, 5),
    ("singletons6", M.singletons(6), 1, 1),
])
def test_known_values_from_the_notes(name, H, ld, mtr):
    assert M.littlestone_dimension(H) == ld
    assert M.transductive_value(H)[0] == mtr


def test_thresholds_follow_log2_and_vc_is_brute_force():
    for n in range(1, 9):
        T = M.thresholds(n)
        assert M.littlestone_dimension(T) == M.transductive_value(T)[0] == int(np.floor(np.log2(n + 1)))
        assert M.vc_dimension(T) == 1
    for H in random_classes(80, 6, seed=4):
        n = H.shape[1]
        best = 0
        for k in range(1, n + 1):
            for S in itertools.combinations(range(n), k):
                if len({tuple(r) for r in H[:, S]}) == 2 ** k:
                    best = k
        assert M.vc_dimension(H) == best


def test_values_add_over_disjoint_products():
    A, B = M.tree_class(1), M.thresholds(3)
    P = M.product(A, B)
    assert M.littlestone_dimension(P) == M.littlestone_dimension(A) + M.littlestone_dimension(B)
    assert M.transductive_value(P)[0] == M.transductive_value(A)[0] + M.transductive_value(B)[0]


def test_chain_of_inequalities_property():
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=120, deadline=None, derandomize=True)
    @given(st.integers(1, 8).flatmap(lambda n: st.lists(
        st.lists(st.integers(0, 1), min_size=n, max_size=n), min_size=1, max_size=40)))
    def check(rows):
        H, _ = M.dedupe(np.array(rows, dtype=np.uint8))
        s = M.class_summary(H)
        assert s["vc"] <= s["m_tr"] <= s["ld"] <= s["halving"]
        assert s["chain_holds"]

    check()


def test_chain_on_random_classes_without_hypothesis():
    for H in random_classes(100, 9, seed=5):
        s = M.class_summary(H)
        assert s["vc"] <= s["m_tr"] <= s["ld"] <= s["halving"]


# --------------------------------------------------------------------------- learners and adversaries


def test_standard_adversary_forces_exactly_ld_on_soa_and_at_least_ld_on_others():
    for H in list(random_classes(40, 6, seed=6)) + [M.class_G(), M.thresholds(7), M.tree_class(2, 0.3, 1)]:
        ld = M.littlestone_dimension(H)
        assert int(M.play(H, M.SOA(H), M.StandardAdversary(H)).mistake.sum()) == ld
        assert int(M.play(H, M.Halving(H), M.StandardAdversary(H)).mistake.sum()) >= ld


def test_transductive_adversary_forces_exactly_m_tr_on_the_rank_rule():
    for H in list(random_classes(40, 6, seed=7)) + [M.class_G(), M.tree_class(2, 0.5, 3)]:
        v, order = M.transductive_value(H)
        adv = M.TransductiveAdversary(H, order)
        assert int(M.play(H, M.RankRule(H, order), adv).mistake.sum()) == v
        assert int(M.play(H, M.SOA(H), adv).mistake.sum()) >= v
        # and the rank rule's worst case on that order, over every truth, is W = v
        assert M.worst_case_on_order(H, M.RankRule(H, order), order)[0] == v


def test_soa_mistake_bound_and_halving_bound_hold_for_every_truth():
    for H in random_classes(30, 6, seed=8):
        ld, hb = M.littlestone_dimension(H), M.halving_bound(H)
        order = list(range(H.shape[1]))
        assert M.worst_case_on_order(H, M.SOA(H), order)[0] <= ld
        assert M.worst_case_on_order(H, M.Halving(H), order)[0] <= hb


def test_worst_order_on_G_soa_3_halving_3_rank_rule_2():
    G = M.class_G()
    soa = M.worst_order_mistakes(G, "SOA")
    assert soa["mistakes"] == 3
    # the returned order and truth really give 3 mistakes
    assert M.mistakes_on(G, M.SOA(G), soa["order"], soa["truth"]) == 3
    assert M.worst_order_mistakes(G, "Halving")["mistakes"] == 3
    small = M.thresholds(4)  # the exhaustive rank-rule search, kept small here; G is in the reproduce test
    assert M.worst_order_mistakes(small, "Rank rule")["mistakes"] == M.transductive_value(small)[0]


# --------------------------------------------------------------------------- bad input and limits


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("   \n  ", "empty"), ("0101\n011", "different lengths"), ("01a1\n0110", "only the characters"),
    ("0121", "only the characters"), ("0" * 17, "too many"),
])
def test_parse_class_rejects_bad_input(text, words):
    with pytest.raises(InputError, match=words):
        M.parse_class(text)


def test_parse_class_dedupes_with_a_note_and_limits_size():
    H, notes = M.parse_class("011\n011\n100\n011")
    assert H.tolist() == [[0, 1, 1], [1, 0, 0]] and notes == ["removed 2 duplicate hypotheses"]
    big = "\n".join(format(i, "011b") for i in range(1100))
    with pytest.raises(InputError, match="1100 distinct hypotheses is too many"):
        M.parse_class(big)
    with pytest.raises(InputError, match="only contain 0 and 1"):
        M.as_class([[0, 2]])
    with pytest.raises(InputError, match="duplicate"):
        M.as_class([[0, 1], [0, 1]])


def test_too_large_transductive_problem_is_refused_quickly():
    """Random 16 x 1024 (a 17,489-character link used to be OOM-killed at 2.5 GB): within a page's link budget it is
    refused before that budget is spent; asked again, at once (the refusal is remembered)."""
    H = M.random_class(16, 1024, 0)
    t = time.process_time()
    with pytest.raises(M.CostLimit, match="too large for the exact transductive value") as exc:
        M.transductive_value(H, max_work=M.LINK_TR_WORK)
    assert time.process_time() - t < 1.5 * M.LINK_TR_SECONDS  # the meter stops it before the work, not after
    assert exc.value.cost["limit"] == "work" and exc.value.cost["work"] > M.LINK_TR_WORK
    t = time.perf_counter()
    with pytest.raises(M.CostLimit):
        M.class_summary(H, max_work=M.LINK_TR_WORK)
    assert time.perf_counter() - t < 0.1
    assert M.littlestone_dimension(H) >= 1  # LD is still fine at this size


def test_speed_targets():
    H = M.random_class(14, 64, 1)
    t = time.process_time()
    M.transductive_value(H)
    tr = time.process_time() - t
    H16 = M.random_class(16, 256, 1)
    t = time.process_time()
    M._Solver(M.as_class(H16)).ld((1 << 256) - 1)
    ld = time.process_time() - t
    # targets 0.3 s and 0.5 s of CPU (measured about 0.13 s and 0.01 s); 2x slack for a shared CI machine
    assert tr < 0.6 and ld < 1.0, (tr, ld)


# --------------------------------------------------------------------------- store, CLI, page


def test_shipped_summary_is_fresh():
    store.verify_shipped(M.TOPIC, "summary_G", M.class_summary, M.class_G())


def test_reproduce_quick_keys(tmp_path):
    res = M.reproduce(quick=True, seed=0, out=tmp_path)
    assert res["thresholds7"] == [3, 3] and res["minimal7"] == [3, 3]
    assert res["G"] == [3, 2] and res["GxG"] == [6, 4]
    assert res["soa_mistakes_on_G"] == 3 and res["rank_rule_mistakes_on_G"] == 2
    assert 0.0 < res["gap_fraction"] < 0.2 and res["chain_holds"]
    assert (tmp_path / "transductive_headline.csv").exists()


# --------------------------------------------------------------------------- the faster exact solver


def test_pruned_solver_equals_the_plain_pareto_algorithm_and_brute_force():
    """The branch-and-bound answer against (a) the plain backward algorithm with no pruning (the previous
    implementation) on 300 random and tree classes up to 11 points, and (b) the brute force over every order."""
    rng = np.random.default_rng(11)
    for i in range(300):
        n = int(rng.integers(1, 12))
        H = (M.random_class(n, int(rng.integers(1, min(2 ** n, 160) + 1)), int(rng.integers(2**31)))
             if i % 3 else M.tree_class(int(rng.integers(1, 3)), float(rng.random()), i))
        v, order = M.transductive_value(H)
        Hc = M.as_class(H)
        pts = M._reduce_points(Hc)
        plain = M._backward(Hc[:, pts], -1)[0] if pts else 0
        assert v == plain, (i, H.shape)
        assert sorted(order) == list(range(H.shape[1])) and M.order_value(H, order) == v
    for H in random_classes(120, 6, seed=12):
        assert M.transductive_value(H)[0] == m_tr_brute(H)


def test_pruning_bound_never_drops_a_better_order():
    """_backward(H, L) must answer None exactly when M_tr ≤ L, for every L (not only the heuristic's)."""
    for H in list(random_classes(60, 8, seed=13)) + [M.class_G(), M.tree_class(2, 0.3, 4)]:
        Hc = M.as_class(H)
        pts = M._reduce_points(Hc)
        if not pts:
            continue
        v = M._backward(Hc[:, pts], -1)[0]
        for L in range(-1, v + 2):
            got, order = M._backward(Hc[:, pts], L)
            if v > L:
                assert got == v and M.order_value(Hc[:, pts], order) == v
            else:
                assert got is None


# --------------------------------------------------------------------------- step-by-step play (the page's engine)


def test_human_learner_replays_like_the_algorithm_it_copies():
    """Feeding SOA's own predictions as a visitor's clicks gives SOA's transcript, round by round."""
    for H in list(random_classes(20, 6, seed=14)) + [M.class_G()]:
        for game in ("standard", "transductive"):
            order = M.transductive_value(H)[1] if game == "transductive" else None
            ref = M.play(H, M.SOA(H), M.make_adversary(game, H, order))
            clicks = ref.loc[~ref.forced, "prediction"].tolist()
            for k in range(len(clicks) + 1):
                df, state = M.play(H, M.HumanLearner(H, clicks[:k]), M.make_adversary(game, H, order),
                                   with_state=True)
                assert df.to_dict("records") == ref.iloc[:len(df)].to_dict("records"), (game, k)
                if k < len(clicks):
                    assert state["waiting"] == "prediction" and not state["over"]
                    assert state["point"] == ref.loc[~ref.forced, "point"].iloc[k]
                else:
                    assert state["over"] and state["mistakes"] == int(ref.mistake.sum())
                    assert len(state["alive"]) == 1


def test_optimal_adversary_forces_its_value_on_every_click_sequence():
    """Whatever a visitor predicts, the optimal transductive adversary forces at least M_tr mistakes and the
    standard one at least LD (exhaustive over all prediction sequences on G)."""
    G = M.class_G()
    v, order = M.transductive_value(G)
    for game, target in (("transductive", v), ("standard", M.littlestone_dimension(G))):
        for clicks in itertools.product((0, 1), repeat=7):
            df, state = M.play(G, M.HumanLearner(G, clicks), M.make_adversary(game, G, order), with_state=True)
            if state["over"]:
                assert state["mistakes"] >= target


def test_human_adversary_moves_are_checked_and_forced_rounds_are_free():
    G = M.class_G()
    df, state = M.play(G, M.SOA(G), M.HumanAdversary(G, "standard"), with_state=True)
    assert state["waiting"] == "point" and state["choices"] == list(range(7)) and df.empty
    df, state = M.play(G, M.SOA(G), M.HumanAdversary(G, "standard", [3]), with_state=True)
    assert state["waiting"] == "label" and state["prediction"] == M.SOA(G).predict(M.full_mask(G), 3)
    y = 1 - state["prediction"]
    df, state = M.play(G, M.SOA(G), M.HumanAdversary(G, "standard", [3, y]), with_state=True)
    assert df.mistake.tolist() == [True] and state["waiting"] == "point" and 3 not in state["choices"]
    with pytest.raises(InputError, match="does not split"):
        M.play(G, M.SOA(G), M.HumanAdversary(G, "standard", [3, y, 3]), with_state=True)
    with pytest.raises(InputError, match="agrees with no hypothesis"):
        M.play(G, M.SOA(G), M.HumanAdversary(G, "transductive", [2]), with_state=True)
    # x1 no longer splits once x0 = 0: that round is played for both sides (forced, never a mistake)
    K = np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0]], np.uint8)
    df, state = M.play(K, M.HumanLearner(K, [1, 1]), M.HumanAdversary(K, "transductive", [0, 0], order=[0, 1, 2]),
                       with_state=True)
    assert df.forced.tolist() == [False, True, False] and df.mistake.tolist() == [True, False, True]
    assert state["over"] and state["mistakes"] == 2 and state["alive"] == [0]
    # a one-hypothesis class is over before it starts
    one = np.array([[0, 1]], np.uint8)
    df, state = M.play(one, M.HumanLearner(one), M.make_adversary("standard", one), with_state=True)
    assert df.empty and state["over"] and state["mistakes"] == 0


# --------------------------------------------------------------------------- bounds, no clamping


@pytest.mark.parametrize("call, words", [
    (lambda: M.gap_sweep(depth=4, ps=[0.5], samples=10), "depth must be between 1 and 3"),
    (lambda: M.gap_sweep(depth=2, ps=[1.5], samples=10), r"ps\[0\] must be between 0 and 1"),
    (lambda: M.gap_sweep(depth=2, ps=[0.5], samples=301), "samples must be between 1 and 300"),
    (lambda: M.gap_sweep(depth=2, ps=[0.1] * 13, samples=10), "at most|between 1 and 12"),
    (lambda: M.gap_sweep(depth=3, ps=[0.1, 0.5], samples=100), "at most 180 classes"),
    (lambda: M.preset_class("all", n=12), "at most n = 10"),
    (lambda: M.preset_class("thresholds", n=17), "n must be between 1 and 16"),
    (lambda: M.preset_class("tree", depth=0), "depth must be between 1 and 3"),
    (lambda: M.preset_class("tree", p=-0.1), "p must be between 0 and 1"),
    (lambda: M.preset_class("nope"), "name must be one of"),
    (lambda: M.random_class(3, 9), "only 8 distinct functions"),
    (lambda: M.parse_class("01" * 30_000), "characters long"),
    (lambda: M.scaling_table(max_k=0), "max_k must be between"),
    (lambda: M.class_summary(M.random_class(16, 1024, 0), max_work=1e6), "too large for the exact transductive value"),
    (lambda: M.class_summary(M.class_G(), max_work=2 * M.MAX_TR_WORK), "max_work must be between"),
    (lambda: M.parse_class("0 " * (M.MAX_CLASS_ROWS + 1)), "at most 4,096 may be typed"),
])
def test_out_of_bounds_raises_instead_of_clamping(call, words):
    with pytest.raises(InputError, match=words):
        call()


def test_sweep_and_preset_within_bounds_are_what_they_say():
    res = M.gap_sweep(depth=1, ps=[0.0, 1.0], samples=3, seed=0)
    assert res["summary"].p.tolist() == [0.0, 1.0] and len(res["classes"]) == 6
    assert M.preset_class("all", n=10).shape == (1024, 10)
    assert M.preset_class("tree", depth=3, p=0.0).shape == (16, 15)


# --------------------------------------------------------------------------- contract: views and verdict


def test_views_and_headline_are_declared_and_shipped_fresh():
    from toymodels.topic import stale_views

    assert set(M.VIEWS) == {"headline", "summary_G", "gap_sweep", "scaling"} and M.HEADLINE in M.VIEWS
    assert stale_views(M) == {}


def test_verdict_on_the_shipped_headline_and_on_a_wrong_value():
    hl = store.load_shipped(M.TOPIC, M.HEADLINE)
    v = M.verdict(hl)
    assert v.reproduced is None  # the exact values match; the asymptotic law is not tested at d <= 16
    assert v.metrics["exact_checks_passed"] == v.metrics["exact_checks"] == len(M.EXACT_CHECKS)
    assert v.metrics["ld_GxG"] == 6 and v.metrics["m_tr_GxG"] == 4 and v.ours == "4 vs 6" and "√d" in v.paper
    bad = dict(hl, G=[3, 3])
    w = M.verdict(bad)
    assert w.reproduced is False and "G" in w.summary


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("transductive")


def _click(at, label):
    buttons = [b for b in at.button if b.label == label and not b.disabled]
    if buttons:
        buttons[0].click().run()
    return bool(buttons)


def test_page_defaults_result_strip_and_playing_rounds():
    at = _page()
    assert not at.exception, at.exception
    assert any(t.value == "Transductive online learning" for t in at.title)
    assert any(m.label == "Our toy" and m.value == "4 vs 6" for m in at.metric)
    for _ in range(8):  # play as the learner against the optimal transductive adversary until the end
        if not _click(at, "Predict 1"):
            break
        assert not at.exception, at.exception
    moves = at.session_state["tr_game"]["moves"]
    assert 1 <= len(moves) <= 7 and set(moves) == {1}
    # the page's transcript is online.play's, replayed from the same clicks
    G = M.class_G()
    ref, state = M.play(G, M.HumanLearner(G, moves), M.make_adversary("transductive", G, M.class_summary(G)["order"]),
                        with_state=True)
    assert state["over"] and state["mistakes"] >= 2  # M_tr(G) = 2 is forced on any learner
    assert any(m.label == "Mistakes so far" and str(m.value) == str(state["mistakes"]) for m in at.metric)


def test_page_custom_class_errors_and_other_modes():
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value("0101\n011\n1x10").run()
    assert not at.exception
    assert any("different lengths" in e.value or "only the characters" in e.value for e in at.error)
    at.text_area(key="rows").set_value("011\n011\n100\n110").run()
    assert not at.exception and any("duplicate" in w.value for w in at.warning)
    at.radio(key="mode").set_value("compare").run()
    assert not at.exception
    at.radio(key="mode").set_value("adversary")
    at.radio(key="game").set_value("standard").run()
    assert not at.exception
    ask = [b for b in at.button if b.label.startswith("x")]
    assert ask
    ask[0].click().run()
    labels = [b for b in at.button if b.label.startswith("Label") and not b.disabled]
    labels[0].click().run()
    assert not at.exception and len(at.session_state["tr_game"]["moves"]) == 2
    assert any("1 × 1" not in m.value for m in at.metric)


_TEXTS = ["", "   ", "0", "1\n0", "01a1\n0110", "0101\n011", "0" * 17, "2", "0110\n" * 3000,
          "\n".join(format(i, "011b") for i in range(1100)), "01" * 25_000, "0,1;1,0", "1" * 16 + "\n" + "0" * 16,
          "\n".join(format(i, "016b") for i in range(0, 65536, 97)), "é\n01", "=1+1\n01"]


def _set(widget, value):
    if not widget.disabled:
        widget.set_value(value)


def _fuzz(n_combos, seed):
    rng = np.random.default_rng(seed)
    at = _page()
    assert not at.exception, at.exception
    presets = list(M.PRESETS)
    for i in range(n_combos):
        at.selectbox(key="cls").set_value(presets[int(rng.integers(len(presets)))]).run()
        assert not at.exception, (i, at.exception)
        _set(at.slider(key="n"), int(rng.choice([1, 2, 7, 10, 11, 16])))
        _set(at.slider(key="depth"), int(rng.integers(1, 4)))
        _set(at.slider(key="p"), float(rng.choice([0.0, 0.05, 0.5, 1.0])))
        _set(at.number_input(key="seed"), int(rng.choice([0, 1, 10_000])))
        _set(at.text_area(key="rows"), _TEXTS[int(rng.integers(len(_TEXTS)))])
        at.run()
        assert not at.exception, (i, at.exception)
        if len(at.radio) >= 2:
            at.radio(key="mode").set_value(str(rng.choice(["learner", "adversary", "compare"])))
            at.radio(key="game").set_value(str(rng.choice(["transductive", "standard"]))).run()
            assert not at.exception, (i, at.exception)
            for _ in range(int(rng.integers(0, 4))):  # press game controls at random
                live = [b for b in at.button if not b.disabled and (b.label.startswith(("Predict", "Label", "x"))
                                                                   or b.label == "New game")]
                if not live:
                    break
                live[int(rng.integers(len(live)))].click().run()
                assert not at.exception, (i, at.exception)
        if i % 7 == 0:  # the sweep form with small and out-of-budget settings
            at.slider(key="sw_depth").set_value(int(rng.integers(1, 4)))
            at.slider(key="sw_steps").set_value(int(rng.choice([2, 12])))
            at.slider(key="sw_n").set_value(int(rng.choice([10, 300])))
            [b for b in at.button if b.label.startswith("Run sweep")][0].click().run()
            assert not at.exception, (i, at.exception)
    return at


def test_page_fuzz_ci():
    _fuzz(22, seed=0)


@pytest.mark.slow
def test_page_fuzz_long():
    _fuzz(120, seed=1)


# --------------------------------------------------------------------------- bounded cost (issue #25)
#
# The solver's cost depends on how many Pareto vectors each suffix set keeps, which is only known as the layers
# are built (random 12 x 512 keeps 63 per set at size 6), so it meters itself: before each layer and each chunk
# it asks the memory model (_layer_bytes) for the peak the next step would reach, and raises CostLimit before
# allocating past MAX_TR_BYTES or working past max_work. These tests hold the model to tracemalloc's peak and the
# process to an address-space cap.


def _reduced(H):
    Hc = M.as_class(H)
    return Hc[:, M._reduce_points(Hc)]


class _Recorder(M._Meter):
    """A meter that records, per layer, the model's predicted peak and tracemalloc's measured one (bytes above
    the traced memory when the pass started)."""

    def __init__(self, n, max_bytes=float("inf")):
        super().__init__(n, float("inf"), max_bytes)
        self.layers, self.cur, self.base = [], None, None

    def need(self, nbytes):
        import tracemalloc

        if self.cur is None or self.cur[0] != self.layer:
            self.close()
            tracemalloc.reset_peak()
            self.cur = [self.layer, 0]
        self.cur[1] = max(self.cur[1], int(nbytes + self.persistent + M._TR_FIXED_BYTES))
        super().need(nbytes)

    def close(self):
        import tracemalloc

        if self.cur is not None:
            self.layers.append((self.cur[0], self.cur[1], tracemalloc.get_traced_memory()[1] - self.base))
            self.cur = None


def _traced_backward(Hr, lower, max_bytes=float("inf")):
    import tracemalloc

    tracemalloc.start()
    try:
        rec = _Recorder(Hr.shape[1], max_bytes)
        rec.base = tracemalloc.get_traced_memory()[0]
        try:
            result = M._backward(Hr, lower, meter=rec)
        except M.CostLimit as exc:
            result = exc
        rec.close()
        return result, rec.layers
    finally:
        tracemalloc.stop()


def test_chunked_layers_give_the_same_values_and_orders(monkeypatch):
    """Chunks of a few rows (so every chunk and pair-block boundary is crossed) give the same value and the same
    order as the default chunks, with and without pruning; and the value is the brute force's."""
    rng = np.random.default_rng(21)
    cases = []
    for i in range(36):
        n = int(rng.integers(2, 9))
        H = (M.random_class(n, int(rng.integers(2, min(2 ** n, 96) + 1)), int(rng.integers(2**31)))
             if i % 4 else M.tree_class(int(rng.integers(1, 3)), float(rng.random()), i))
        Hr = _reduced(H)
        if Hr.shape[1]:
            cases.append((H, Hr, M._lower_bound_order(Hr)[0]))
    expected = [(M._backward(Hr, -1), M._backward(Hr, L)) for _, Hr, L in cases]
    monkeypatch.setattr(M, "_CHUNK_CELLS", 64)
    monkeypatch.setattr(M, "_GROUP_CELLS", 40)
    monkeypatch.setattr(M, "_PAIR_BLOCK", 7)
    monkeypatch.setattr(M, "_PAIR_CELLS", 50)
    for (H, Hr, L), (plain, pruned) in zip(cases, expected):
        assert M._backward(Hr, -1) == plain and M._backward(Hr, L) == pruned, H.shape
        if H.shape[1] <= 5:
            assert plain[0] == m_tr_brute(H)


@pytest.mark.parametrize("name, H", [
    ("random 11x512", M.random_class(11, 512, 0)),       # large fronts: 50 MB at its widest layer
    ("random 13x384", M.random_class(13, 384, 0)),
    ("intervals 16", M.intervals(16)),                    # 16 points, small rows: index vectors dominate
    ("random 16x64", M.random_class(16, 64, 0)),          # 12,870 suffix sets in one layer
    ("all 3 x random", M.product(M.all_functions(3), M.random_class(10, 64, 1))),
    ("tree depth 3", M.tree_class(3, 0.3, 1)),
])
def test_memory_model_bounds_the_measured_peak(name, H):
    """Per layer, tracemalloc's peak (every NumPy allocation) is at most the model's; and the model is not
    vacuous where the arrays are large (within 2.5x of the measurement once it is over 40 MB)."""
    Hr = _reduced(H)
    result, layers = _traced_backward(Hr, M._lower_bound_order(Hr)[0])
    assert not isinstance(result, Exception) and layers
    for k, predicted, measured in layers:
        assert measured <= predicted, (name, k, measured, predicted)
    predicted, measured = max(p for _, p, _ in layers), max(m for _, _, m in layers)
    if measured > 40 * 2**20:
        assert predicted < 2.5 * measured, (name, predicted, measured)


def test_solver_stops_before_allocating_past_its_memory_limit():
    """With a limit below what random 12 x 512 needs (155 MB measured), the solver raises CostLimit saying
    what it would need, and the traced peak never passed the limit: it stopped before the allocation."""
    Hr = _reduced(M.random_class(12, 512, 0))
    L = M._lower_bound_order(Hr)[0]
    for limit in (40 * 2**20, 80 * 2**20):
        t = time.process_time()
        exc, layers = _traced_backward(Hr, L, max_bytes=limit)
        assert isinstance(exc, M.CostLimit) and exc.cost["limit"] == "memory", exc
        assert exc.cost["bytes"] > limit == exc.cost["max_bytes"]
        assert f"limit is {limit // 2**20} MB" in str(exc) and "would need" in str(exc)
        assert max(m for _, _, m in layers) <= limit
        if limit == 40 * 2**20:
            assert time.process_time() - t < 1.0


_CHILD = r"""
import json, resource, sys, time
cap = int(sys.argv[1])
from toymodels import online as M
def vm(key):
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith(key))) * 1024
base = vm("VmPeak:")
if cap:
    resource.setrlimit(resource.RLIMIT_AS, (base + cap, base + cap))
H, _ = M.parse_class(sys.stdin.read())
t = time.process_time()
try:
    out = M.class_summary(H)
    out = {"m_tr": out["m_tr"], "ld": out["ld"], "vc": out["vc"]}
except M.CostLimit as exc:
    out = {"refused": exc.cost["limit"], "message": str(exc)}
except MemoryError:
    out = {"memory_error": True}
out.update(cpu=time.process_time() - t, base=base, peak=vm("VmPeak:") - base,
           rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
print(json.dumps(out))
"""


def _solve_in_child(H, cap_bytes):
    """class_summary(H) in a fresh interpreter whose address space is capped at its size after the imports plus
    ``cap_bytes`` (the class arrives as the text a link would carry)."""
    import json
    import subprocess
    import sys

    from toymodels.registry import REPO_ROOT

    proc = subprocess.run([sys.executable, "-c", _CHILD, str(int(cap_bytes))], input=M.format_class(H),
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: The worst class found inside the advertised limits (16 points, 1024 hypotheses) that the solver accepts. Searched:
#: random classes n = 8..16 x m = 64..1024 (and every 8-32 rows at the edge of the limit for n = 12..16), all
#: functions on a = 2..6 points x random rows, sparse random rows (density 0.1, 0.25), the presets and depth-3 trees:
#: random 12 x 512 (seed 0) and all functions on 6 points x random 10 x 16 (seed 2) have the largest peaks of the
#: classes solved (traced 155 and 156 MB, model 247 and 204 MB, about 8 s of CPU each).
WORST_ACCEPTED = dict(n=12, m=512, seed=0)


@pytest.mark.parametrize("H, m_tr", [
    (M.random_class(**WORST_ACCEPTED), 8),
    (M.product(M.all_functions(6), M.random_class(10, 16, 2)), 9),  # 16 x 1024, 17,407 characters: as large
], ids=["random 12x512", "all 6 x random 10x16"])
def test_worst_accepted_class_runs_under_a_memory_cap(H, m_tr):
    """The worst accepted classes complete with their address space capped at 400 MB over the interpreter's (the
    hosted server has 2.7 GB for everything and two compute slots), growing by less than MAX_TR_BYTES."""
    out = _solve_in_child(H, 400 * 2**20)
    assert out.get("m_tr") == m_tr and out["ld"] >= out["m_tr"] >= out["vc"], out
    assert out["peak"] <= M.MAX_TR_BYTES, out  # measured: about 206 MB over the interpreter's 359 MB


def test_the_killing_link_is_refused_under_a_memory_cap():
    """The class of the 17,489-character link (16 points x 1024 hypotheses, which needed more than 5 GB) is
    refused with a message, within the same 400 MB cap, instead of being killed."""
    H = M.random_class(16, 1024, 0)
    assert 17_000 < len(M.format_class(H)) <= M.MAX_CLASS_TEXT
    out = _solve_in_child(H, 400 * 2**20)
    assert out.get("refused") == "memory" and "the limit is 256 MB" in out["message"], out
    assert out["peak"] <= M.MAX_TR_BYTES and out["cpu"] < 10, out  # measured: 178 MB, 4 s


def test_parse_class_is_linear_on_maximal_inputs():
    """The longest texts a visitor may send, of every shape, are parsed or refused in a few milliseconds each;
    doubling the text at most about doubles the time (linear, no quadratic step)."""
    N = M.MAX_CLASS_TEXT
    shapes = {
        "1024 rows of 16": M.format_class(M.random_class(16, 1024, 0)),
        "one-digit rows": "0\n" * (M.MAX_CLASS_ROWS // 2) + "1\n" * (M.MAX_CLASS_ROWS // 2),
        "too many rows": "0 " * (N // 2),
        "one long word": "01" * (N // 2),
        "separators only": " ,;\n" * (N // 4),
        "bad character last": "0110\n" * (N // 5 - 1) + "01x1",
        "ragged last": "0110\n" * (N // 5 - 1) + "011",
        "markdown": "[a](http://example.com/x) " * (N // 26),
    }
    for name, text in shapes.items():
        assert len(text) <= N, name
        t = time.perf_counter()
        try:
            M.parse_class(text)
        except InputError:
            pass
        assert time.perf_counter() - t < 0.25, name

    def best_time(text):
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            M.parse_class(text)
            best = min(best, time.perf_counter() - t)
        return best

    rows = M.format_class(M.random_class(16, 1024, 1)).split("\n")
    half, full = "\n".join(rows[:512]), "\n".join(rows)
    assert best_time(full) < 3.0 * best_time(half) + 0.002


#: A class whose exact solve needs more than a link's budget but only a few seconds (random 12 x 448: ~3.5 s).
SLOW_CLASS = (12, 448, 0)


def test_page_link_to_a_long_class_waits_for_a_button_that_states_the_cost():
    """A link whose class needs more than LINK_TR_SECONDS shows a button stating the cost instead of solving it;
    the link's load spends at most that budget (the meter stops it); pressing the button solves it."""
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    H = M.random_class(*SLOW_CLASS)
    at.text_area(key="rows").set_value(M.format_class(H))
    t = time.process_time()
    at.run()
    assert time.process_time() - t < M.LINK_TR_SECONDS + 3  # the budget, plus the page itself
    assert not at.exception, at.exception
    assert not any(m.label == "M_tr (transductive)" for m in at.metric)
    button = [b for b in at.button if b.label.startswith("Solve it exactly")]
    assert button and "more than" in button[0].label
    assert float(button[0].label.split("more than ")[1].split(" s")[0]) >= M.LINK_TR_SECONDS
    assert f"{M.MAX_TR_SECONDS:g} s" in button[0].label and f"{M.MAX_TR_BYTES // 2**20} MB" in button[0].label
    button[0].click().run()
    assert not at.exception, at.exception
    assert any(m.label == "M_tr (transductive)" and str(m.value) == str(M.transductive_value(H)[0]) for m in at.metric)


def test_page_refuses_the_killing_link_with_a_message():
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value(M.format_class(M.random_class(16, 1024, 0))).run()
    assert not at.exception, at.exception
    assert not any(m.label == "M_tr (transductive)" for m in at.metric)
    assert any("too large for the exact transductive value" in e.value for e in at.error) or any(
        b.label.startswith("Solve it exactly") for b in at.button)


@pytest.mark.parametrize("text", [
    "[x](https://example.com/x)\n0101",
    "![img](https://example.com/a.png)\n0101",
    "https://example.com/auto\n01",
    "**bold**\n01",
    ":red[red]\n01",
    "$x^2$\n01",
])
def test_page_shows_link_text_as_plain_characters(text):
    """A crafted class text is quoted in the error as characters (every markdown mark escaped): no link, image,
    autolink, emphasis, colour or LaTeX can form."""
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value(text).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error if "cannot be used" in e.value]
    assert errors
    shown = errors[0].split("cannot be used: ", 1)[1]  # what follows is the error, quoting the visitor's text
    payload = text.split()[0][:20]
    marks = "[]()!*_`$:.<>~|#"  # what can start markup (ui.plain escapes them; commas and slashes are harmless)
    assert all("\\" + c in shown for c in set(payload) if c in marks), shown  # quoted, every mark escaped
    bare = [c for i, c in enumerate(shown) if c in marks and shown[i - 1:i] != "\\"]
    assert not bare, (bare, shown)  # no markdown character is left unescaped
