"""RLVR: the pass@k estimator against exact integer arithmetic and Monte Carlo, the trainers against exact
gradients, CSV validation, the shipped views, and the page through the router."""
import math
import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from toymodels import rlvr as M
from toymodels import store
from toymodels.registry import REPO_ROOT as ROOT
from tests.apptest_helpers import open_page


# --------------------------------------------------------------------------- the estimator


def _exact(n, c, k) -> Fraction:
    return Fraction(1) if n - c < k else 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_pass_at_k_matches_exact_comb_on_random_small_cases():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 40, 400)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, n + 1)
    got = M.pass_at_k(n, c, k)
    want = np.array([float(_exact(*map(int, t))) for t in zip(n, c, k)])
    assert got.shape == (400,)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_pass_at_k_hand_worked_and_edges():
    assert M.pass_at_k(4, 1, 2) == 0.5                      # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert M.pass_at_k(5, 2, 2) == pytest.approx(0.7)       # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert M.pass_at_k(10, 0, 7) == 0.0                     # c = 0
    assert M.pass_at_k(10, 10, 1) == 1.0                    # c = n
    assert M.pass_at_k(10, 4, 7) == 1.0                     # n - c < k
    assert M.pass_at_k(10, 3, 1) == pytest.approx(0.3)      # pass@1 = c/n
    assert isinstance(M.pass_at_k(10, 3, 2), float)
    # huge n: C(n-1, k)/C(n, k) = (n-k)/n, so pass@k = k/n, with no overflow
    assert M.pass_at_k(100_000, 1, 50_000) == pytest.approx(0.5, rel=1e-9)
    # broadcasting problems x ks
    out = M.pass_at_k(np.array([[8], [8]]), np.array([[0], [8]]), np.array([[1, 2, 8]]))
    assert out.shape == (2, 3) and out[0].tolist() == [0, 0, 0] and out[1].tolist() == [1, 1, 1]


def test_pass_at_k_monte_carlo_subsets():
    """pass@k is the chance that k samples drawn without replacement from n contain a correct one."""
    rng = np.random.default_rng(1)
    for n, c, k in [(20, 3, 5), (50, 1, 10), (16, 8, 2), (100, 5, 30)]:
        trials = 40_000
        draws = np.argsort(rng.random((trials, n)), axis=1)[:, :k]  # k distinct indices per trial
        mc = (draws < c).any(axis=1).mean()                        # samples 0..c-1 are the correct ones
        se = math.sqrt(mc * (1 - mc) / trials) + 1e-4
        assert abs(mc - M.pass_at_k(n, c, k)) < 5 * se, (n, c, k, mc)


@pytest.mark.parametrize("args, match", [
    ((5, 2, 6), "k > n"), ((5, 6, 1), "c > n"), ((-1, 0, 1), "non-negative"), ((5, -1, 1), "non-negative"),
    ((5, 1, -2), "non-negative"), ((5.5, 1, 1), "whole"), ((np.array([5, 3]), np.array([1, 4]), 1), "c > n"),
])
def test_pass_at_k_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        M.pass_at_k(*args)


def test_curve_matches_loop_and_validates():
    rng = np.random.default_rng(2)
    c = rng.integers(0, 65, 300)
    ks = [1, 2, 5, 17, 64]
    got = M.pass_at_k_curve(64, c, ks)
    want = [M.pass_at_k_loop(64, c, k) for k in ks]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    n = rng.integers(10, 30, 50)
    c2 = rng.integers(0, n + 1)
    np.testing.assert_allclose(M.pass_at_k_curve(n, c2, [1, 10]),
                               [np.mean(c2 / n), np.mean([float(_exact(int(a), int(b), 10)) for a, b in zip(n, c2)])])
    with pytest.raises(ValueError, match="k > n"):
        M.pass_at_k_curve(n, c2, [11])


def test_pass_at_k_is_fast():
    """10,000 problems x every k <= 1024 in well under a second (generous bound: shared CI cores)."""
    rng = np.random.default_rng(0)
    c = rng.integers(0, 1025, 10_000)
    ks = np.arange(1, 1025)
    t = time.perf_counter()
    grid = M.pass_at_k(1024, c[:, None], ks[None, :])
    curve = M.pass_at_k_curve(1024, c, ks)
    elapsed = time.perf_counter() - t
    assert grid.shape == (10_000, 1024)
    np.testing.assert_allclose(grid.mean(0), curve, rtol=1e-10)
    assert elapsed < 3.0, elapsed


def test_log_gamma_path_for_huge_n_matches_product_form():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 3000, 300)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, n + 1)
    np.testing.assert_allclose(M._pass_at_k_lgamma(n, c, k), M.pass_at_k(n, c, k), rtol=1e-9, atol=1e-11)
    # the curve switches to it when the table would be too big, with the same answer
    n2 = np.full(400, 90_000)
    c2 = rng.integers(0, 90_001, 400)
    ks = [1, 10, 1000, 90_000]
    np.testing.assert_allclose(M.pass_at_k_curve(n2, c2, ks),
                               M._pass_at_k_lgamma(n2[:, None], c2[:, None], np.array(ks)[None]).mean(0))
    assert M.pass_at_k_curve(n2, c2, [1])[0] == pytest.approx(np.mean(c2 / n2))


def test_exact_and_crossover_helpers():
    np.testing.assert_allclose(M.pass_at_k_exact([0.5, 0.0], [1, 2]), [0.25, 0.375])
    assert M.crossover_k([1, 2, 4, 8], [0.1, 0.2, 0.5, 0.9], [0.3, 0.4, 0.5, 0.6]) == 4
    assert M.crossover_k([1, 2], [0.1, 0.2], [0.3, 0.4]) is None
    assert M.crossover_k([1, 2, 4], [0.1, 0.5, 0.9], [0.3, 0.5, 0.6]) == 2    # a tie that turns into a lead
    assert M.crossover_k([1, 2, 4], [0.1, 0.5, 1.0], [0.3, 0.6, 1.0]) is None  # curves that only meet at the top


# --------------------------------------------------------------------------- the toy


def test_grpo_advantage_zero_when_group_rewards_equal():
    for r in ([0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]):
        assert np.all(M.advantages(np.array(r, float), "grpo") == 0)
        assert np.all(M.advantages(np.array(r, float), "rloo") == 0)
    a = M.advantages(np.array([1.0, 0, 0, 1]), "grpo")
    np.testing.assert_allclose(a, np.array([1, -1, -1, 1]) * 0.5 / np.std([1, 0, 0, 1], ddof=1))
    np.testing.assert_allclose(M.advantages(np.array([1.0, 0, 0]), "rloo"), [1, -0.5, -0.5])
    np.testing.assert_allclose(M.advantages(np.array([1.0, 0, 1]), "reinforce"), [1, 0, 1])
    # masked groups (different G in one batch) equal the unmasked computation on the valid part
    r = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    mask = np.array([1, 1, 1, 1, 0, 0], bool)
    np.testing.assert_allclose(M.advantages(r, "grpo", mask)[:4], M.advantages(r[:4], "grpo"))
    np.testing.assert_allclose(M.advantages(r, "rloo", mask)[:4], M.advantages(r[:4], "rloo"))
    assert np.all(M.advantages(r, "grpo", mask)[4:] == 0)
    with pytest.raises(ValueError):
        M.advantages(r, "ppo")


def test_rloo_update_is_unbiased_policy_gradient():
    """Averaged over many independent one-step runs, the RLOO update equals lr * grad_z E[r] (exact)."""
    S, inst, lr = 4, 6000, 1e-3
    problems = {"u": np.zeros((1, S)), "correct": np.array([[False, True, False, True]]), "q": np.array([0.7])}
    theta0 = np.log(np.array([0.4, 0.3, 0.2, 0.1]))
    snaps = M.train_rl(problems, theta0, algorithms=["rloo"] * inst, lrs=[lr] * inst, kls=[0.0] * inst,
                       group_sizes=[8] * inst, tabular=[False] * inst, steps=1, prompts_per_step=4,
                       checkpoints=[0, 1], rng=np.random.default_rng(0))
    dz = np.log(snaps[:, 1, 0]) - np.log(snaps[:, 0, 0])       # theta change up to a constant
    dz -= dz.mean(-1, keepdims=True)
    pi = M.softmax(theta0)
    grad = 0.7 * (pi * problems["correct"][0]) - 0.7 * pi * (pi * problems["correct"][0]).sum()
    grad -= grad.mean()
    est = dz.mean(0) / lr
    se = dz.std(0) / lr / np.sqrt(inst)
    assert np.all(np.abs(est - grad) < 5 * se + 1e-4), (est, grad, se)


def test_kl_penalty_keeps_policy_near_base():
    cfg = M.ToyConfig(n_problems=128, n_samples=128, steps=200)
    rng = np.random.default_rng(0)
    problems = M.make_problems(cfg, rng)
    theta0 = M.base_logits(cfg)
    snaps = M.train_rl(problems, theta0, algorithms=["grpo"] * 2, lrs=[0.3] * 2, kls=[0.0, 1.0],
                       group_sizes=[8] * 2, tabular=[False] * 2, steps=200, prompts_per_step=64,
                       checkpoints=[0, 200], rng=np.random.default_rng(1))
    base = snaps[0, 0]
    kl = [(snaps[m, 1] * (np.log(snaps[m, 1]) - np.log(base))).sum(-1).mean() for m in range(2)]
    assert kl[1] < 0.5 * kl[0], kl


def test_sampled_counts_match_success_probabilities():
    cfg = M.ToyConfig(n_problems=64)
    problems = M.make_problems(cfg, np.random.default_rng(0))
    probs = M.softmax(M.base_logits(cfg) + problems["u"])
    p = M.success_prob(probs, problems)
    c, counts = M.sample_completions(probs, problems, 4000, np.random.default_rng(1))
    assert counts.sum(1).tolist() == [4000] * 64
    assert np.all(np.abs(c / 4000 - p) < 5 * np.sqrt(p * (1 - p) / 4000) + 1e-3)


def test_common_random_numbers_keep_the_order_of_policies():
    cfg = M.ToyConfig(n_problems=64)
    problems = M.make_problems(cfg, np.random.default_rng(0))
    lo = M.softmax(M.base_logits(cfg) + problems["u"])
    hi = 0.5 * lo + 0.5 * problems["correct"] / problems["correct"].sum(1, keepdims=True)  # more correct mass
    W = np.random.default_rng(5).random((64, 256))
    c_lo, n_lo = M.sample_completions(lo, problems, 256, np.random.default_rng(1), W)
    c_hi, n_hi = M.sample_completions(hi, problems, 256, np.random.default_rng(2), W)
    assert np.all(c_hi >= c_lo) and np.all(n_lo.sum(1) == 256) and np.all(n_hi.sum(1) == 256)
    # correct completions only ever come from correct strategies
    assert np.all((n_lo * problems["correct"]).sum(1) >= c_lo)


def test_toy_quick_shows_the_paper_claims_and_is_deterministic():
    cfg = M.ToyConfig(n_problems=256, n_samples=512)
    a = M.run_toy(cfg)["metrics"]
    b = M.run_toy(cfg)["metrics"]
    assert a == b
    checks = M.checks(a)
    assert all(checks.values()), checks
    assert a["tabular_crossover_k"] is None          # the tabular control never crosses (seed 0)
    assert a["median_base_nll_rl_samples"] < a["median_base_nll_base_samples"]
    assert a["zero_acc_rl"] > a["zero_acc_base"] and a["high_acc_rl"] > a["high_acc_base"]


def test_reproduce_quick_keys_and_csv(tmp_path):
    res = M.reproduce(quick=True, seed=0, out=tmp_path)
    for key in ("pass1_base", "pass1_rl", "passkmax_base", "passkmax_rl", "k_max", "crossover_k", "delta_se",
                "rl_solved_subset_fraction", "tabular_crossover_k", "distill_above_base_all_k"):
        assert key in res
    assert res["pass1_rl"] >= 1.5 * res["pass1_base"] and res["passkmax_rl"] < res["passkmax_base"]
    assert 2 <= res["crossover_k"] <= res["k_max"] and res["distill_above_base_all_k"] is True
    assert res["delta_se"] == pytest.approx(res["passkmax_base"] - res["pass1_rl"])
    assert (tmp_path / "rlvr_pass_at_k.csv").exists()


def test_sweep_steps_and_algorithms():
    cfg = M.ToyConfig(n_problems=128, n_samples=256)
    sw = M.run_sweep(cfg, "steps", [50, 200])
    assert sw["pass@1 (RL)"].iloc[1] > sw["pass@1 (RL)"].iloc[0]
    sw2 = M.run_sweep(cfg, "algorithm", ["grpo", "rloo", "reinforce"])
    assert list(sw2["algorithm"]) == ["grpo", "rloo", "reinforce"]
    with pytest.raises(ValueError):
        M.run_sweep(cfg, "lr", [100.0])
    with pytest.raises(ValueError):
        M.run_sweep(cfg, "zipf", [1.0])


def test_config_limits():
    with pytest.raises(ValueError, match="steps"):
        M.validate(M.ToyConfig(steps=10**6))
    with pytest.raises(ValueError, match="algorithm"):
        M.validate(M.ToyConfig(algorithm="dpo"))


# --------------------------------------------------------------------------- uploaded evaluations


def test_read_counts_and_samples_layouts():
    df = M.read_evaluations(M.TEMPLATE_COUNTS)
    assert list(df.columns) == ["model", "problem", "n", "c"] and len(df) == 6
    s = M.read_evaluations("Model, Problem, Correct\nb,p1,1\nb,p1,0\nb,p2,false\nr,p1,TRUE\nr,p2,0\nr,p2,0\n")
    got = {(r.model, r.problem): (r.n, r.c) for r in s.itertuples()}
    assert got == {("b", "p1"): (2, 1), ("b", "p2"): (1, 0), ("r", "p1"): (1, 1), ("r", "p2"): (2, 0)}


@pytest.mark.parametrize("text, match", [
    (b"", "empty"),
    (b"model,problem,n,c\n", "no data rows"),
    (b"model,problem,n\nm,p,3\n", "Missing column.*'c'"),
    (b"mdl,problem,n,c\nm,p,3,1\n", "Missing column.*'model'"),
    (b"model,problem,n,c\nm,p1,3,1\nm,p2,3,abc\n", "Non-numeric value 'abc' in column 'c', data row 2 \\(line 3"),
    (b"model,problem,n,c\nm,p1,3,4\n", "c > n in data row 1"),
    (b"model,problem,n,c\nm,p1,3,1\nm,p2,-3,1\n", "Negative count -3 in column 'n', data row 2"),
    (b"model,problem,n,c\nm,p1,3,1\nm,p2,3,1\nm,p1,3,2\n", "Duplicate row.*data row 3.*repeats data row 1"),
    (b"model,problem,n,c\nm,p1,3,1.5\n", "whole numbers"),
    (b"model,problem,correct\nm,p1,2\n", "0 or 1"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "not look like a CSV"),
    (b"model,problem,n,c\nm,p1,0,0\n", "n = 0"),
    (b"model;problem;n;c\nm;p;3;1\n", "separate the columns with commas"),
    (b'model,problem,n,c\n"m,p,3,1\n', "Could not read the file as CSV"),
    ("model,problem,n,c\nm\xe9,p,3,1\n".encode("latin-1"), "not UTF-8"),
    (b"model,problem,n,c\n,p,3,1\n", "Empty 'model' in data row 1"),
])
def test_bad_csv_is_a_clear_error(text, match):
    with pytest.raises(M.CSVError, match=match):
        M.read_evaluations(text)


def test_too_many_rows_is_rejected():
    text = "model,problem,correct\n" + "m,p,1\n" * (M.MAX_ROWS + 1)
    with pytest.raises(M.CSVError, match="limit is 100,000"):
        M.read_evaluations(text)


def test_analyse_counts_hand_worked():
    df = pd.DataFrame({"model": ["base"] * 3 + ["rl"] * 3, "problem": ["a", "b", "c"] * 2,
                       "n": [4] * 6, "c": [1, 1, 0, 4, 0, 0]})
    an = M.analyse_counts(df, "base")
    s = an["summary"].set_index("model")
    # base: pass@1 = (1/4 + 1/4)/3, pass@4 = 2/3; rl: pass@1 = 1/3, pass@4 = 1/3
    assert s.loc["base", "pass@1"] == pytest.approx(1 / 6) and s.loc["base", "pass@k_max"] == pytest.approx(2 / 3)
    assert s.loc["rl", "pass@1"] == pytest.approx(1 / 3)
    # base pass@2 = 2 * (1 - C(3,2)/C(4,2)) / 3 = 1/3 = rl pass@2, so the crossover is k = 2
    assert s.loc["rl", "crossover_k"] == 2
    assert s.loc["rl", "delta_se"] == pytest.approx(2 / 3 - 1 / 3)
    assert bool(s.loc["rl", "subset_of_base"]) and s.loc["rl", "solved_only_by_base"] == 1


def test_example_file_is_toy_output_and_loads():
    ex = M.load_example()
    assert set(ex["model"]) == {"toy-base", "toy-grpo", "toy-distilled"}
    assert M.EXAMPLE_CSV.stat().st_size < 2_000_000


# --------------------------------------------------------------------------- shipped views


def test_shipped_views_are_current():
    store.verify_shipped("rlvr", "example_analysis", M.analyse_counts, M.load_example(), "toy-base")
    store.verify_shipped("rlvr", "toy_default", M.run_toy, M.ToyConfig())


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("rlvr")


def test_page_defaults():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "RLVR & reasoning"
    assert not at.error
    labels = [m.label for m in at.metric]
    assert "Crossover k" in labels and "Δ_SE" in labels


def test_page_changed_widgets():
    at = _page()
    at.selectbox(key="rl_algo").set_value("rloo")
    at.slider(key="rl_steps").set_value(100)
    at.select_slider(key="rl_n").set_value(256)
    at.select_slider(key="rl_N").set_value(128)
    at.selectbox(key="rl_sweep_param").set_value("kl_coef")
    at.slider(key="rl_qa").set_value(5.0)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="rl_preset").set_value("Group size G = 32 (paper ablation)").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="rl_G").value == 32


def test_page_upload_valid_and_invalid_csv():
    at = _page()
    at.file_uploader(key="rl_upload").set_value(("mine.csv", M.TEMPLATE_COUNTS.encode(), "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    at.file_uploader(key="rl_upload").set_value(("bad.csv", b"model,problem,n,c\nm,p,3,9\n", "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert any("c > n in data row 1" in e.value for e in at.error)
    assert any("Crossover" in m.label for m in at.metric)  # the rest of the page still works
    at.text_input(key="rl_sweep_vals_steps").set_value("10, banana")
    at.run()
    assert not at.exception and any("Could not read the values" in e.value for e in at.error)


@pytest.mark.slow
def test_benchmark_against_math_comb_loop():
    """The timing benchmark (make bench): prints pass_at_k's time and its speed-up over the math.comb loop."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_rlvr", ROOT / "bench" / "bench_rlvr.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    t_grid, t_curve, t_loop = bench.main()
    assert t_grid < 1.0 and t_loop / t_grid > 10


@pytest.mark.slow
def test_full_reproduce_shows_the_claims():
    res = M.reproduce(quick=False, seed=0)
    assert all(res["checks"].values()), res["checks"]
