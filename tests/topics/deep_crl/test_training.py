"""The online agent: settings refused with a message, budgets, seeded training, and the powered test's seeds."""
from dataclasses import replace

import numpy as np
import pytest

import toymodels.deep_crl as M
from tests.exact import assert_same
from toymodels import store
from toymodels.deep_crl import config as K
from toymodels.deep_crl import experiments as X
from toymodels.deep_crl import training as T
from toymodels.topic import InputError, check_call


@pytest.mark.parametrize("bad", [dict(depth=6), dict(depth=0), dict(maze="nope"), dict(batch_size=0),
                                 dict(ablation="dropout"), dict(seeds=99), dict(width=10_000),
                                 dict(iterations=2.5), dict(wall_mode="teleport")])
def test_bad_settings_are_rejected_with_a_message(bad):
    with pytest.raises(InputError):
        check_call(T.train, replace(K.Config(), **bad))       # what a page asks before it offers a run
    with pytest.raises(InputError):
        T.train(replace(K.Config(), **bad))


def test_budget_refuses_long_runs_and_bad_sweeps_before_any_work():
    with pytest.raises(InputError, match="limit"):
        T.train(replace(K.DEFAULT, depth=64, iterations=60))
    with pytest.raises(InputError, match="must be one of 4, 8, 16, 32, 64"):
        X.sweep(K.DEFAULT, "depth", [4, 6])
    with pytest.raises(InputError, match="limit"):
        X.sweep(K.DEFAULT, "depth", [16, 32])
    with pytest.raises(InputError, match="CPU minutes"):
        X.online_seeds(replace(K.ONLINE, depth=64), 40)
    for v in M.VIEWS.values():               # every shipped view fits the budget it declares
        fn = v.resolve(M.__name__)
        if getattr(fn, "budget", None) is not None:
            fn.budget(**{"device": None, "progress": None, **v.arguments()})


TINY = K.Config(depth=4, width=16, repr_dim=8, batch_size=32, iterations=2, sgd_steps=5, n_envs=16,
                episode_len=30, n_eval=8, seeds=2)


def test_training_runs_is_seeded_and_reports_everything():
    a = T.train(TINY)
    b = T.train(TINY)
    assert_same(store.normalise({k: v for k, v in a.items() if k != "wall_s"}),
                      store.normalise({k: v for k, v in b.items() if k != "wall_s"}), rtol=0, atol=0)
    assert a["curves"].equals(b["curves"])
    assert len(a["curves"]) == 2 * 2 and set(a["final"].seed) == {0, 1}
    assert a["trajectories"].shape == (2, 4, 31, 2) and a["qmap"].shape[0] == 2
    assert a["env_steps"] == 2 * 16 * 30 and a["sgd_steps"] == 10
    for col in ("success", "time_at_goal", "critic_accuracy", "critic_accuracy_fresh"):
        assert a["final"][col].between(0, 30).all()
    c = T.train(replace(TINY, seed=5))
    assert not np.allclose(a["curves"].critic_loss, c["curves"].critic_loss)


def test_ablations_and_lift_run():
    for ab in K.ABLATIONS[1:]:
        assert np.isfinite(T.train(replace(TINY, ablation=ab, iterations=1))["curves"].critic_loss).all()
    r = T.train(replace(TINY, obs_lift=32, iterations=1))
    assert np.isfinite(r["curves"].critic_loss).all()


def test_online_seeds_are_chunks_of_batched_runs():
    """5 seeds in chunks of 2: seeds 100..104, and each chunk is exactly ``train`` at its first seed (so a seed's
    numbers do not depend on the seeds after it)."""
    cfg = replace(TINY, seed=100, seeds=2, iterations=1)
    out = X.online_seeds(cfg, 5)
    assert out["per_seed"].seed.tolist() == [100, 101, 102, 103, 104]
    assert out["trajectories"].shape[:2] == (5, 2) and out["qmap"].shape[0] == 5 and len(out["curves"]) == 5
    last = T.train(replace(cfg, seed=104, seeds=1))
    assert_same(store.normalise(out["per_seed"].iloc[[4]].reset_index(drop=True)),
                      store.normalise(last["final"]), rtol=0, atol=0)
    mid = T.train(replace(cfg, seed=102, seeds=2))
    assert np.array_equal(out["qmap"][2:4], mid["qmap"], equal_nan=True)


@pytest.mark.slow
def test_quick_reproduction_learns_a_critic_and_reaches_the_far_goal():
    out = M.reproduce(quick=True)
    for key in ("depths", "success", "time_at_goal", "critic_accuracy", "batch_size", "chance_accuracy",
                "critic_depths", "critic_spearman_geodesic", "critic_spearman_sem", "critic_retrieval_acc",
                "euclid_geodesic_spearman", "wide_control_spearman", "online_depths", "online_solved", "claims"):
        assert key in out, key
    for key in ("depths", "success", "critic_accuracy", "critic_depths", "critic_spearman_geodesic",
                "online_depths", "online_seeds", "online_solved"):
        assert isinstance(out[key], list), key                              # JSON lists, never joined strings
    assert all(acc > 10 * out["chance_accuracy"] for acc in out["critic_accuracy"])
    # the quick critic is the stitching regime at 600 steps: far pairs, where straight-line distance scores ~0.17
    assert all(r > 0.25 for r in out["critic_spearman_geodesic"])
    assert all(a > 3 * out["random_retrieval"] for a in out["critic_retrieval_acc"])
