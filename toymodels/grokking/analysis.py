"""How a run is judged: the pre-registered rules of the claims, per seed, and their uncertainty (light: numpy).

Every threshold below was written and committed before the run that decides the claims (the many-seed study on
seeds 100-119; seed 0 and the notes' seeds 0-1 were the pilot). A threshold changed after that run leaves its
claim "illustrated" until fresh seeds decide it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

# --------------------------------------------------------------------------- the pre-registered rules

QUIET_LEVEL = 0.05     # "near zero" test accuracy
QUIET_ITERS = 3        # ... at iterations 0, 1, 2 while train accuracy is already 1 (the delay)
GROKKED_LEVEL = 0.99   # test accuracy at the last iteration of the run
ONSET_LEVEL = 0.10     # the jump's onset: the first iteration with test accuracy >= 0.10
FLAT_ITERS = 5         # the early test loss: iterations 0-4 ...
FLAT_TOL = 0.02        # ... each within 2 % of iteration 0's test MSE
FALL_RATIO = 0.8       # ... while the last iteration's test MSE is below 0.8 × iteration 0's (the loss does move)
D_RATIO = 0.5          # D at the last iteration before the onset <= 0.5 × D at iteration 0
RANDOM_CIRCULANT_LEVEL = 0.95  # the random-circulant control's test accuracy, with no iteration
IDENTITY_LEVEL = 0.05  # M = I's test accuracy (no feature learning) stays at most this
MIN_SHARE = 0.9        # a claim is reproduced when its rule holds on at least 90 % of seeds (18 of 20)


def onset(test_acc, level: float = ONSET_LEVEL) -> int | None:
    """The first iteration whose test accuracy reaches ``level`` (None when none does)."""
    hit = np.flatnonzero(np.asarray(test_acc, float) >= level)
    return int(hit[0]) if hit.size else None


def grokked(train_acc, test_acc) -> bool:
    """Train accuracy 1 at every iteration, test accuracy below ``QUIET_LEVEL`` for the first ``QUIET_ITERS``
    iterations, and at least ``GROKKED_LEVEL`` at the last."""
    train, test = np.asarray(train_acc, float), np.asarray(test_acc, float)
    return bool(np.all(train == 1.0) and len(test) > QUIET_ITERS and np.all(test[:QUIET_ITERS] < QUIET_LEVEL)
                and test[-1] >= GROKKED_LEVEL)


def flat_then_falls(test_mse) -> bool:
    """Iterations 0 .. ``FLAT_ITERS``-1 within ``FLAT_TOL`` of iteration 0's test MSE, and the last iteration's below
    ``FALL_RATIO`` times it."""
    mse = np.asarray(test_mse, float)
    if len(mse) <= FLAT_ITERS:
        return False
    return bool(np.max(np.abs(mse[:FLAT_ITERS] / mse[0] - 1)) <= FLAT_TOL and mse[-1] < FALL_RATIO * mse[0])


def early_mse_change(test_mse) -> float:
    """max over iterations 0 .. FLAT_ITERS-1 of |MSE_t / MSE_0 - 1|."""
    mse = np.asarray(test_mse, float)
    return float(np.max(np.abs(mse[:FLAT_ITERS] / mse[0] - 1)))


def features_before_jump(test_acc, deviation) -> tuple[bool, float]:
    """(rule holds, D(onset - 1) / D(0)): the circulant deviation has at least halved (``D_RATIO``) by the last
    iteration before the onset of the jump. False when there is no onset, or it is at iteration 0."""
    t = onset(test_acc)
    D = np.asarray(deviation, float)
    if t is None or t == 0 or not np.isfinite(D[0]) or D[0] == 0:
        return False, float("nan")
    ratio = float(D[t - 1] / D[0])
    return bool(ratio <= D_RATIO), ratio


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a binomial share k / n."""
    from scipy.stats import beta

    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def share_text(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n)
    return f"{k}/{n} seeds, 95% Clopper-Pearson [{lo:.2f}, {hi:.2f}]"


def per_seed(study: Mapping[str, Any]) -> list[dict]:
    """One row per seed of a ``run_seeds`` result: every rule's outcome and the numbers behind it."""
    rows = []
    for i, seed in enumerate(study["seeds"]):
        train, test = study["train_acc"][i], study["test_acc"][i]
        mse, dev = study["test_mse"][i], study["circulant_deviation"][i]
        feat, ratio = features_before_jump(test, dev)
        t_on, t_90 = onset(test), onset(test, 0.9)
        rc, ident = float(study["random_circulant_test_acc"][i]), float(study["identity_test_acc"][i])
        rows.append({"seed": int(seed), "grokked": grokked(train, test), "onset": t_on, "t90": t_90,
                     "final_test_acc": float(np.asarray(test)[-1]), "min_train_acc": float(np.min(train)),
                     "flat_loss": flat_then_falls(mse), "early_mse_change": early_mse_change(mse),
                     "mse_final_over_first": float(np.asarray(mse)[-1] / np.asarray(mse)[0]),
                     "circulant_first": feat, "D0": float(np.asarray(dev)[0]), "D_before_onset_over_D0": ratio,
                     "random_circulant_test_acc": rc, "random_circulant_ok": rc >= RANDOM_CIRCULANT_LEVEL,
                     "identity_test_acc": ident, "identity_ok": ident <= IDENTITY_LEVEL})
    return rows


def decide_share(rows: list[dict], key: str) -> tuple[int, int, bool]:
    """(k, n, reproduced): the rule ``key`` holds on k of n seeds; reproduced when k / n >= ``MIN_SHARE``."""
    n = len(rows)
    k = sum(bool(r[key]) for r in rows)
    return k, n, n > 0 and k >= math.ceil(MIN_SHARE * n - 1e-9)


def median_iqr(values) -> str:
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], float)
    if not v.size:
        return "n/a"
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return f"{med:.3g} (IQR {q1:.3g}-{q3:.3g})"


def iteration_table(result: Mapping[str, Any]):
    """A ``run`` result as a table: one row per iteration (pandas)."""
    import pandas as pd

    cols = ("train_acc", "test_acc", "test_mse", "circulant_deviation")
    return pd.DataFrame({"iteration": list(result["iteration"]), **{c: list(result[c]) for c in cols}})


def seed_table(study: Mapping[str, Any]):
    """``per_seed`` as a table (pandas)."""
    import pandas as pd

    return pd.DataFrame(per_seed(study))


# --------------------------------------------------------------------------- what a page quotes


def _leading(mask) -> int:
    """How many leading entries of ``mask`` are true."""
    m = np.asarray(mask, bool)
    return int(m.size if m.all() else np.argmin(m))


def summary(result: Mapping[str, Any]) -> dict:
    """The numbers a page's sentences quote about one ``run`` result (None where a number does not exist)."""
    test, train = np.asarray(result["test_acc"], float), np.asarray(result["train_acc"], float)
    mse, dev = np.asarray(result["test_mse"], float), np.asarray(result["circulant_deviation"], float)
    t_on, t_90 = onset(test), onset(test, 0.9)
    return {"iters": int(test.size), "onset": t_on, "onset_level": ONSET_LEVEL, "t90": t_90,
            "t99": onset(test, GROKKED_LEVEL),
            "final_test_acc": float(test[-1]), "max_test_acc": float(test.max()), "min_train_acc": float(train.min()),
            "quiet_iters": _leading(test < QUIET_LEVEL), "quiet_level": QUIET_LEVEL,
            "flat_iters": _leading(np.abs(mse / mse[0] - 1) <= FLAT_TOL), "flat_tol": FLAT_TOL,
            "mse_first": float(mse[0]), "mse_last": float(mse[-1]),
            "D_first": float(dev[0]), "D_last": float(dev[-1]),
            "D_before_onset": float(dev[t_on - 1]) if t_on else None,
            "grokked": grokked(train, test),
            "random_circulant_test_acc": float(result["random_circulant_test_acc"]),
            "identity_test_acc": float(result["identity_test_acc"])}


def study_summary(study: Mapping[str, Any]) -> dict:
    """The many-seed study in a few numbers: how many splits grokked, the onset and t90 medians with their IQR,
    the controls' ranges."""
    rows = per_seed(study)
    rc = [r["random_circulant_test_acc"] for r in rows]
    ident = [r["identity_test_acc"] for r in rows]
    return {"n": len(rows), "grokked": sum(r["grokked"] for r in rows), "onset": median_iqr([r["onset"] for r in rows]),
            "t90": median_iqr([r["t90"] for r in rows]),
            "ratio": median_iqr([r["D_before_onset_over_D0"] for r in rows]),
            "rc_min": float(min(rc)), "rc_max": float(max(rc)), "identity_max": float(max(ident))}


def study_curves(study: Mapping[str, Any]):
    """The study's per-iteration curves as one long table: seed, iteration, test accuracy, D (pandas)."""
    import pandas as pd

    acc, dev = np.asarray(study["test_acc"], float), np.asarray(study["circulant_deviation"], float)
    n, T = acc.shape
    return pd.DataFrame({"seed": np.repeat(np.asarray(study["seeds"], int), T), "iteration": np.tile(np.arange(T), n),
                         "test_acc": acc.ravel(), "circulant_deviation": dev.ravel()})


def metric_frame(M, drop_diagonal: bool = True):
    """A metric M as a long table (row, col, value) for a heatmap, its diagonal left out by default (it dwarfs
    the structure off it, as in the official code's ``M_no_diag`` plot) (pandas)."""
    import pandas as pd

    M = np.asarray(M, float).copy()
    if drop_diagonal:
        np.fill_diagonal(M, np.nan)
    i, j = np.indices(M.shape)
    keep = np.isfinite(M.ravel())
    return pd.DataFrame({"row": i.ravel()[keep], "col": j.ravel()[keep], "value": M.ravel()[keep]})


def sweep_table(result: Mapping[str, Any]):
    """A ``sweep`` result, one row per value: when the jump starts and ends, where it lands, D (pandas)."""
    import pandas as pd

    rows = []
    for v, r in zip(result["values"], result["runs"]):
        s = summary(r)
        rows.append({result["param"]: v, "onset": s["onset"], "t90": s["t90"], "final_test_acc": s["final_test_acc"],
                     "min_train_acc": s["min_train_acc"], "D_first": s["D_first"], "D_last": s["D_last"],
                     "random_circulant_test_acc": s["random_circulant_test_acc"]})
    return pd.DataFrame(rows)


def sweep_curves(result: Mapping[str, Any]):
    """A ``sweep`` result's test-accuracy and D curves as one long table (pandas)."""
    import pandas as pd

    frames = [pd.DataFrame({"value": v, "iteration": r["iteration"], "test_acc": r["test_acc"],
                            "circulant_deviation": r["circulant_deviation"]})
              for v, r in zip(result["values"], result["runs"])]
    return pd.concat(frames, ignore_index=True)
