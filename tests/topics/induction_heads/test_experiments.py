"""The bounded entry points: bounds and budgets, a tiny study end to end (its measurements against direct
recomputation), the claims judged on it, and the shipped live view recomputed."""
import numpy as np
import pytest

import toymodels.induction_heads as M
from tests.exact import assert_same
from toymodels import shipped, store
from toymodels.errors import InputError
from toymodels.induction_heads import analysis as A
from toymodels.induction_heads import experiments as X
from toymodels.induction_heads.config import Config, LiveConfig, StudyConfig, check_budget, expected_seconds

TINY = StudyConfig(run=Config(steps=50, eval_every=10, eval_batch=32, batch=16), arms=((1, "fixed"), (2, "variable")),
                   n_seeds=4, lmc_pairs=2, keep_weights=1)


@pytest.fixture(scope="module")
def tiny():
    return X.study(TINY, device="cpu")


def test_the_registered_study_is_declared_once():
    assert M.STUDY == X.STUDY and M.VIEWS["study"].kwargs["cfg"] == M.STUDY
    assert M.STUDY.first_seed == 100 and M.STUDY.n_seeds == 20 and M.STUDY.run.steps == 3000   # fresh seeds
    assert all(c.registered for c in M.CLAIMS)


def test_bounds_and_budgets_refuse_with_a_message():
    with pytest.raises(InputError, match="at most period_max"):
        check_budget(Config(period_min=10, period_max=8))
    with pytest.raises(InputError, match="repeat at least once"):
        check_budget(Config(n_ctx=24))
    with pytest.raises(InputError, match="would take about"):
        X.run(Config(steps=4000, batch=128, d_model=128))
    with pytest.raises(InputError):
        X.compare_depths(LiveConfig(steps=5000))
    assert expected_seconds(M.LIVE) < 30


def test_a_tiny_study_end_to_end(tiny):
    assert set(tiny["arms"]) == {"L1f", "L2v"} and tiny["meta"]["device"].startswith("cpu")
    arm = tiny["arms"]["L2v"]
    assert arm["eval_loss"].shape == (4, 6) and arm["induction"].shape == (4, 6, 2, 4)
    assert arm["composition"]["K"].shape == (4, 4, 4) and arm["copying"].shape == (4, 2, 4)
    assert arm["params_kept"]["W_E"].shape == (1, 64, 64)
    # the barriers of pair 0 recomputed from its own loss curve; the endpoints are the two models' own losses
    lm = arm["lmc"]
    assert lm["losses"].shape == (2, 4, 11)
    for k in range(2):
        np.testing.assert_allclose(lm["losses"][k, :, -1], arm["eval_loss"][2 * k, -1], rtol=1e-5)
        np.testing.assert_allclose(lm["losses"][k, :, 0], arm["eval_loss"][2 * k + 1, -1], rtol=1e-5)
    sym = arm["symmetry"]
    assert sym["none"].max() < 1e-9 and sym["rms"].max() < 1e-9 and sym["tanh"].min() > 1e-3
    # knock-outs: NaN exactly where a seed has no previous-token head
    ko = arm["knockout"]
    assert np.array_equal(np.isnan(ko["prev_heads_knocked"]), ko["n_prev_heads"] == 0)


def test_the_claims_are_judged_on_a_tiny_study(tiny, monkeypatch):
    from dataclasses import replace

    from toymodels.topic import views

    monkeypatch.setattr(M, "VIEWS", views(*(replace(v, pending=None) for v in M.VIEWS.values())))
    study = {**tiny, "arms": {**tiny["arms"], "L1v": tiny["arms"]["L2v"], "L2f": tiny["arms"]["L2v"]}}
    v = shipped.verdict_of(M, overrides={"study": study})
    by = {j.id: j for j in v.claims}
    assert len(by) == 10 and all(j.rule for j in v.claims)
    # 50 steps: no model copies yet, so the depth claim cannot hold
    assert not by["depth"].status.startswith("reproduced")
    assert by["no-privileged-basis"].rule == "exact"
    assert by["lmc-low-barrier"].seeds == 2
    # 50 steps: no seed's loss halves, so the phase change is untimed; its note says so in words, not "nan steps"
    assert "No seed's loss fell" in by["phase-change"].note and "nan" not in by["phase-change"].note
    note = by["phase-change"].note
    assert note.count("(") == note.count(")") and "(;" not in note


def test_a_run_is_seeded():
    cfg = Config(n_layers=1, steps=50, eval_every=25, eval_batch=16, batch=8, seed=3)
    a, b = X.run(cfg, device="cpu"), X.run(cfg, device="cpu")
    np.testing.assert_array_equal(a["eval_loss"], b["eval_loss"])
    assert a["sample"]["attn"].shape == (4, 1, 4, 32, 32)
    assert {r["layer"] for r in a["heads"]} == {1}


@pytest.mark.slow
def test_the_shipped_live_view_is_what_the_code_computes():
    """The shipped live view's 1-layer run recomputed (one CPU thread, as precompute ran it): the same numbers; its
    wall time and the machine's description are not numbers of the model and are left out."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = X.run(LiveConfig().config(1), device="cpu")
    finally:
        torch.set_num_threads(threads)
    shipped_run = shipped.load_view(M, "live")["runs"]["1"]
    drop = ("seconds", "meta")
    assert_same(store.normalise({k: v for k, v in fresh.items() if k not in drop}),
                      {k: v for k, v in shipped_run.items() if k not in drop}, rtol=1e-5, path="live/runs/1")


def test_the_shipped_live_view_copies_with_two_layers_only():
    live = shipped.load_view(M, "live")
    final = {n: float(r["eval_loss"][-1]) for n, r in live["runs"].items()}
    assert final["2"] < 0.7 < A.NO_COPY < final["1"] < final["0"]
