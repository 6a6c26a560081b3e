"""Transductive online learning: exact game values against brute-force minimax search, the notes' values,
hand-worked classes and the players' guarantees; the claims on the shipped views."""
import itertools
import time

import numpy as np
import pytest

import toymodels.transductive as M
from tests.exact import verify_shipped
from toymodels import shipped, store
from toymodels.topic import InputError
from toymodels.transductive import exact as X
from toymodels.transductive import games as Gm


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
    from hypothesis import given, settings
    from hypothesis import strategies as st

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
    Gm._Solver(M.as_class(H16)).ld((1 << 256) - 1)
    ld = time.process_time() - t
    # targets 0.3 s and 0.5 s of CPU (measured about 0.13 s and 0.01 s); 2x slack for a shared CI machine
    assert tr < 0.6 and ld < 1.0, (tr, ld)


def test_shipped_summary_is_fresh():
    # one cheap view recomputed: bit for bit on the CPU
    verify_shipped(M.TOPIC, "summary_G", M.class_summary, M.class_G(), rtol=0)


def test_reproduce_quick_keys(tmp_path):
    res = M.reproduce(quick=True, seed=0, out=tmp_path)
    assert {"topic", "quick", "seed", "reproduced", "claims"} <= set(res) and res["topic"] == "transductive"
    assert res["ld_G"] == 3 and res["m_tr_G"] == 2 and res["ld_GxG"] == 6 and res["m_tr_GxG"] == 4
    assert res["notes_checks_passed"] == res["notes_checks"] == len(M.EXACT_CHECKS)
    assert res["soa_worst_order_G"] == 3 and res["rank_rule_worst_order_G"] == 2
    assert 0.0 < res["gap_fraction_p05"] < 0.2
    by = {c["id"]: c for c in res["claims"]}
    assert by["standard-is-ld"]["status"] == by["chain"]["status"] == "reproduced"
    assert (tmp_path / "transductive_headline.csv").exists() and (tmp_path / "exact_checks.csv").exists()


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
        pts = X._reduce_points(Hc)
        plain = X._backward(Hc[:, pts], -1)[0] if pts else 0
        assert v == plain, (i, H.shape)
        assert sorted(order) == list(range(H.shape[1])) and M.order_value(H, order) == v
    for H in random_classes(120, 6, seed=12):
        assert M.transductive_value(H)[0] == m_tr_brute(H)


def test_pruning_bound_never_drops_a_better_order():
    """_backward(H, L) must answer None exactly when M_tr ≤ L, for every L (not only the heuristic's)."""
    for H in list(random_classes(60, 8, seed=13)) + [M.class_G(), M.tree_class(2, 0.3, 4)]:
        Hc = M.as_class(H)
        pts = X._reduce_points(Hc)
        if not pts:
            continue
        v = X._backward(Hc[:, pts], -1)[0]
        for L in range(-1, v + 2):
            got, order = X._backward(Hc[:, pts], L)
            if v > L:
                assert got == v and M.order_value(Hc[:, pts], order) == v
            else:
                assert got is None


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


def test_views_and_headline_are_declared_and_shipped_fresh():
    assert set(M.VIEWS) == {"headline", "summary_G", "gap_sweep", "scaling", "exact_checks"}
    assert M.HEADLINE in M.VIEWS
    assert shipped.stale_views(M) == {}


def test_claims_on_the_shipped_views_and_on_a_wrong_value():
    v = shipped.verdict_of(M)
    by = {j.id: j for j in v.claims}
    # the asymptotic law and its two theorems are not testable at d <= 16; the exact relations are reproduced
    assert by["sqrt-law"].status == by["tightness"].status == by["lower-bound"].status == "not testable here"
    assert by["standard-is-ld"].status == by["chain"].status == by["bkm-two-thirds"].status == "reproduced"
    assert v.reproduced is None
    m = v.metrics
    assert m["notes_checks_passed"] == m["notes_checks"] == len(M.EXACT_CHECKS)
    assert m["ld_GxG"] == 6 and m["m_tr_GxG"] == 4 and "paper_gap_fraction_p05" not in m
    lo, hi = m["gap_fraction_p05_ci95"]
    assert lo <= m["gap_fraction_p05"] <= hi
    hl = store.load_shipped(M.TOPIC, M.HEADLINE)
    wrong = shipped.verdict_of(M, overrides={"headline": dict(hl, G=[3, 3])})
    assert {j.id: j for j in wrong.claims}["bkm-two-thirds"].status == "not reproduced"
    assert "G" in wrong.metrics["notes_checks_mismatched"]


def test_exact_checks_find_a_planted_violation():
    """The check itself can fail: a solver that answered LD for M_tr would break nothing in the chain, but one that
    answered LD + 1 would; the brute-force references agree with the solver on a hand-worked class."""
    G = M.class_G()
    assert M.standard_game_value(G) == 3 and M.transductive_value_brute(G) == 2
    assert M.theorem_b1_bound(3, 7) == 1 and M.theorem_b1_bound(10_000, 7) == 3 and M.theorem_b1_bound(900, 10**6) == 3
    res = M.exact_checks(max_points=2, random_classes=5, seed=1)
    summ = res["summary"].set_index("family")
    assert int(summ.loc["exhaustive", "classes"]) == 3 + 15 and int(summ.loc["random", "classes"]) == 5
    assert int(summ[["std_ne_ld", "solver_ne_brute", "chain_broken", "below_bound"]].to_numpy().sum()) == 0


def test_clopper_pearson_against_the_binomial_tail():
    from scipy.stats import binom

    lo, hi = M.clopper_pearson(14, 300)
    assert binom.sf(13, 300, lo) == pytest.approx(0.025, abs=1e-6)   # P(X >= 14 | lo) = 2.5%
    assert binom.cdf(14, 300, hi) == pytest.approx(0.025, abs=1e-6)  # P(X <= 14 | hi) = 2.5%
    assert M.clopper_pearson(0, 200)[0] == 0.0 and M.clopper_pearson(0, 200)[1] == pytest.approx(1 - 0.025 ** (1 / 200))
