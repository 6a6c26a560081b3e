"""RLVR, the typed toy (issue 28): its problems against their law, its trainer against the ρ toy (K = 1) and a
hand-computed step, its sampler and summaries against their definitions, the intervals over seeds against
closed forms and Monte Carlo, its bounds."""
import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from toymodels import rlvr as M
from toymodels.rlvr import experiments as E
from toymodels.topic import InputError

SMALL = M.TypedConfig(n_train=96, n_heldout=96, n_samples=256)


# --------------------------------------------------------------------------- the problems


def test_atypical_share_and_strategies_follow_their_law():
    cfg = M.TypedConfig(n_types=4, atypical=0.3, n_strategies=10, n_novel=2)
    rng = np.random.default_rng(0)
    typical = M.type_strategies(cfg, rng)
    pr = M.make_typed_problems(cfg, typical, 20_000, rng)
    n_aty = int(pr["atypical"].sum())
    assert sps.binomtest(n_aty, 20_000, 0.3).pvalue > 1e-3
    # typical problems use their type's strategy; atypical ones never do
    assert np.all(pr["primary"][~pr["atypical"]] == typical[pr["type"][~pr["atypical"]]])
    assert np.all(pr["primary"][pr["atypical"]] != typical[pr["type"][pr["atypical"]]])
    # an atypical strategy is drawn from the base prior s^-zipf over the other native strategies
    for t in range(4):
        sel = pr["atypical"] & (pr["type"] == t)
        w = np.arange(1, 9, dtype=float) ** -cfg.zipf
        w[typical[t]] = 0
        expected = w / w.sum() * sel.sum()
        counts = np.bincount(pr["primary"][sel], minlength=8)
        keep = expected > 0
        assert sps.chisquare(counts[keep], expected[keep]).pvalue > 1e-4, (t, counts, expected.round(1))
    # exactly one native strategy is correct; novel ones with their probability
    assert np.all(pr["correct"][:, :8].sum(1) == 1)
    assert abs(pr["correct"][:, 8:].mean() - cfg.novel_correct_prob) < 0.01


def test_the_held_out_split_is_fresh_problems_of_the_same_types():
    typical, train, held = M.typed_world(SMALL)
    assert typical.shape == (SMALL.n_types,)
    assert not np.allclose(train["u"], held["u"])
    for split in (train, held):
        ok = ~split["atypical"]
        assert np.all(split["primary"][ok] == typical[split["type"][ok]])
    a, b = M.typed_world(SMALL), M.typed_world(SMALL)
    assert all(np.array_equal(a[1][k], b[1][k]) for k in a[1])          # seeded


# --------------------------------------------------------------------------- training


def test_one_type_is_the_rho_toy_at_rho_zero_draw_for_draw():
    """With K = 1 every problem shares one theta: the typed trainer is train_rl at rho = 0 (same draws)."""
    cfg = dataclasses.replace(SMALL, n_types=1)
    _, train, _ = M.typed_world(cfg)
    theta0 = M.base_logits(cfg)
    th = M.train_typed(train, theta0, 1, algorithm="grpo", lr=0.3, kl=0.01, group_size=8, steps=40,
                       prompts_per_step=16, checkpoints=[0, 20, 40], rng=np.random.default_rng(7))
    snaps = M.train_rl(train, theta0, algorithms=["grpo"], lrs=[0.3], kls=[0.01], group_sizes=[8], rhos=[0.0],
                       steps=40, prompts_per_step=16, checkpoints=[0, 20, 40], rng=np.random.default_rng(7))
    for c in range(3):
        np.testing.assert_allclose(M.typed_policy(th[c], train), snaps[0, c], rtol=1e-9, atol=1e-12)


def test_one_step_moves_each_type_by_the_mean_gradient_of_its_prompts():
    """Replay one step's draws and compute each prompt's RLOO gradient by hand (a loop over rollouts)."""
    S, N, K, B, G, lr = 5, 12, 3, 6, 4, 0.7
    rng0 = np.random.default_rng(3)
    pr = {"u": rng0.normal(size=(N, S)), "type": np.arange(N) % K, "q": np.full(N, 0.8),
          "correct": rng0.random((N, S)) < 0.4}
    theta0 = rng0.normal(size=S)
    for seed in range(50):                                   # a draw where some group has mixed rewards
        th = M.train_typed(pr, theta0, K, algorithm="rloo", lr=lr, kl=0.0, group_size=G, steps=1,
                           prompts_per_step=B, checkpoints=[0, 1], rng=np.random.default_rng(seed))
        if not np.allclose(th[1], th[0]):
            break
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, N, size=B)
    u_s, u_r = rng.random((B, G)), rng.random((B, G))
    want = np.tile(theta0, (K, 1)).astype(float)
    steps = {t: [] for t in range(K)}
    for b in range(B):
        i = idx[b]
        z = theta0 + pr["u"][i]
        pi = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        s = [min(int(np.searchsorted(np.cumsum(pi), x, side="left")), S - 1) for x in u_s[b]]
        r = np.array([float(pr["correct"][i, sg] and u_r[b, g] < pr["q"][i]) for g, sg in enumerate(s)])
        A = np.array([r[g] - (r.sum() - r[g]) / (G - 1) for g in range(G)])
        g_b = sum(A[g] * (np.eye(S)[s[g]] - pi) for g in range(G)) / G
        steps[pr["type"][i]].append(lr * g_b)
    for t in range(K):
        if steps[t]:
            want[t] += np.mean(steps[t], axis=0)
    np.testing.assert_allclose(th[1], want, rtol=1e-10, atol=1e-12)


def test_a_type_with_no_training_problem_never_moves():
    cfg = dataclasses.replace(SMALL, n_types=400, n_train=64)
    _, train, _ = M.typed_world(cfg)
    th = M.train_typed(train, M.base_logits(cfg), 400, algorithm="grpo", lr=0.3, kl=0.0, group_size=8, steps=30,
                       prompts_per_step=16, checkpoints=[30], rng=np.random.default_rng(1))
    unseen = np.setdiff1d(np.arange(400), train["type"])
    assert unseen.size > 200
    np.testing.assert_array_equal(th[0][unseen], np.tile(M.base_logits(cfg), (unseen.size, 1)))


def test_distillation_learns_the_teachers_novel_strategies():
    cfg = dataclasses.replace(SMALL, n_types=4, distill_steps=600)
    _, train, _ = M.typed_world(cfg)
    theta = M.distill_typed(train, cfg, 4, np.random.default_rng(0))
    novel = M.typed_policy(theta, train)[:, -cfg.n_novel:].sum(1).mean()
    teacher = M.softmax(M.teacher_logits(cfg) + train["u"])[:, -cfg.n_novel:].sum(1).mean()
    base = M.typed_policy(np.tile(M.base_logits(cfg), (4, 1)), train)[:, -cfg.n_novel:].sum(1).mean()
    assert base < 1e-4 and abs(novel - teacher) < 0.05, (base, novel, teacher)


# --------------------------------------------------------------------------- measuring


def test_counts_are_binomial_and_the_summary_is_the_papers_definitions():
    _, train, _ = M.typed_world(SMALL)
    probs = M.typed_policy(np.tile(M.base_logits(SMALL), (SMALL.n_types, 1)), train)
    W = np.random.default_rng(0).random((96, 4000), dtype=np.float32)
    ev = E._evaluate(probs, train, 4000, W, np.arange(1, 4001))
    p = ev["p"]
    assert np.all(np.abs(ev["c"] / 4000 - p) < 5 * np.sqrt(p * (1 - p) / 4000) + 1e-3)
    one = M.typed_seed(SMALL, (20, 40))
    s = one["summary"]
    np.testing.assert_allclose(s["pass1_gain"], s["pass1_rl"] / s["pass1_base"])
    np.testing.assert_allclose(s["pass256_drop"], s["pass256_base"] - s["pass256_rl"])
    np.testing.assert_allclose(s["delta_se"], s["pass256_base"] - s["pass1_rl"])        # the paper's Δ_SE
    assert set(s["split"]) == {"train", "held-out"} and sorted(set(s["steps"])) == [20, 40]
    # lost problems are the base-only solved ones, split by kind
    np.testing.assert_array_equal(s["lost_atypical"] + s["lost_typical"], s["solved_base_only"])
    c = one["curves"]
    base = c[(c.policy == "base") & (c.split == "train")].set_index("k")["pass_at_k"]
    assert base[1] == pytest.approx(s["pass1_base"].iloc[0]) and base[256] == pytest.approx(s["pass256_base"].iloc[0])
    again = M.typed_seed(SMALL, (20, 40))
    pd.testing.assert_frame_equal(again["summary"], s)                                   # seeded


def test_seed_table_is_the_t_interval_of_each_group():
    rng = np.random.default_rng(0)
    summ = pd.DataFrame({"seed": np.tile(np.arange(5), 2), "split": "train", "steps": np.repeat([10, 20], 5),
                         **{c: rng.random(10) for c in E.TABLE_COLUMNS},
                         "crossover_k": [3, np.nan, 5, 7, np.nan, np.nan, np.nan, np.nan, 9, 2]})  # 3 5 7 inf inf
    t = M.seed_table(summ).set_index("steps")
    g = summ[summ.steps == 10]["pass1_gain"]
    half = sps.t.ppf(0.975, 4) * g.std(ddof=1) / np.sqrt(5)
    assert t.loc[10, "pass1_gain"] == pytest.approx(g.mean())
    assert t.loc[10, "pass1_gain_lo"] == pytest.approx(g.mean() - half)
    assert t.loc[10, "crossover_k_median"] == 7 and t.loc[10, "crossover_share"] == 0.6
    assert np.isnan(t.loc[20, "crossover_k_median"]) and t.loc[20, "crossover_share"] == 0.4


# --------------------------------------------------------------------------- intervals


def test_t_interval_hand_worked_and_its_coverage():
    m, lo, hi = M.t_interval([1.0, 2.0, 3.0])
    assert m == 2.0 and hi == pytest.approx(2 + 4.302652729911275 / np.sqrt(3))        # t_{0.975, 2}
    rng = np.random.default_rng(1)
    hits = [lo <= 0.5 <= hi for lo, hi in (M.t_interval(rng.normal(0.5, 2.0, 20))[1:] for _ in range(4000))]
    assert abs(np.mean(hits) - 0.95) < 0.015


def test_clopper_pearson_closed_forms_and_coverage():
    assert M.clopper_pearson(20, 20)[0] == pytest.approx(0.025 ** (1 / 20))
    assert M.clopper_pearson(0, 20)[1] == pytest.approx(1 - 0.025 ** (1 / 20))
    rng = np.random.default_rng(2)
    draws = rng.binomial(20, 0.7, 4000)
    cover = np.mean([lo <= 0.7 <= hi for lo, hi in (M.clopper_pearson(int(k), 20) for k in draws)])
    assert cover >= 0.95                                                                  # exact: conservative


def test_bootstrap_median_hand_cases():
    assert M.bootstrap_median([4.0] * 7) == (4.0, 4.0, 4.0)
    med, lo, hi = M.bootstrap_median([1, 2, np.inf, np.inf, np.inf])
    assert med == np.inf and hi == np.inf
    med, lo, hi = M.bootstrap_median(np.arange(1, 102))
    assert med == 51 and lo < 51 < hi and hi - lo < 40


# --------------------------------------------------------------------------- bounds


def test_typed_bounds_and_budgets():
    with pytest.raises(InputError, match="atypical"):
        M.typed_run(dataclasses.replace(SMALL, atypical=1.5))
    with pytest.raises(InputError, match="n_types"):
        M.typed_run(dataclasses.replace(SMALL, n_types=0))
    with pytest.raises(InputError, match="compute"):
        M.typed_seeds(M.TypedConfig(n_train=2048, n_heldout=2048, n_samples=4096), seeds=tuple(range(20)))
    with pytest.raises(InputError, match="between 1 and 8"):
        M.typed_sweep(SMALL, "atypical", [0.1] * 9)
    with pytest.raises(InputError, match="atypical"):
        M.typed_sweep(SMALL, "atypical", [0.1, 2.0])
    with pytest.raises(InputError, match="param"):
        M.typed_sweep(SMALL, "zipf", [1.0])
    with pytest.raises(InputError, match="native"):
        M.typed_run(dataclasses.replace(SMALL, n_strategies=5, n_novel=4))


def test_a_sweep_row_is_the_single_run_at_that_value():
    sw = M.typed_sweep(SMALL, "atypical", [0.0, 0.5], lengths=(20,), seeds=(3,))
    one = M.typed_seed(dataclasses.replace(SMALL, atypical=0.5, seed=3), (20,))["summary"]
    got = sw["summary"][sw["summary"]["atypical"] == 0.5].drop(columns="atypical").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, one)
    zero = sw["summary"][sw["summary"]["atypical"] == 0.0]
    assert (zero["atypical_problems"] == 0).all() and zero["p_atypical_base"].isna().all()
