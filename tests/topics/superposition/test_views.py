"""Superposition toy: the shipped views (fresh, one recomputed bit for bit) and the judgement of the sweeps."""
from pathlib import Path

import pytest

import toymodels.superposition as M
from tests.exact import environment_difference
from toymodels import shipped, store

# --------------------------------------------------------------------------- shipped store, CLI contract


def test_shipped_geometry_view_is_current():
    """Recomputed on the CPU, the shipped geometry view is the same bit for bit (the move kept its definitions).

    It runs in a child process under ``MKL_CBWR=COMPATIBLE``: MKL picks its matrix kernels by CPU, and the bundle
    (made before views recorded their build) is reproduced bit for bit by MKL's compatible path, not by its
    AVX-512 path (measured on an Intel Xeon with AVX-512/AMX, 27 Nov 2026: max |dW| 1.8e-7 there, 0.0 here)."""
    import os
    import subprocess
    import sys

    why = environment_difference((store.shipped_meta(M.TOPIC, "geometry") or {}).get("env"))
    if why:  # as verify_shipped does in process (a skip in the child would read as a failure)
        pytest.skip(f"bit-for-bit check of superposition/geometry needs the build that made it: {why}")
    code = ("from tests.exact import verify_shipped; from toymodels import shipped; "
            "import toymodels.superposition as M; fn, kw = shipped.view_call(M, 'geometry'); "
            "verify_shipped(M.TOPIC, 'geometry', fn, rtol=0, **kw); "
            "print('same bit for bit')")
    env = {**os.environ, "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1", "TOYMODELS_DEVICE": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                         cwd=Path(__file__).resolve().parents[3])
    assert out.returncode == 0 and "same bit for bit" in out.stdout, out.stderr[-2000:]


def test_every_view_is_shipped_and_fresh():
    assert shipped.stale_views(M) == {}


def test_shipped_headline_is_converged_and_judged():
    """The shipped scaling view: every run met the convergence rule, the profiles keep N_eff ≥ 4 × the largest
    width, and the verdict index holds the ledger judged on it."""
    res = store.load_shipped(M.TOPIC, M.HEADLINE)
    s = M.analysis.summary(res)
    assert s["converged"] and s["max_drift"] < M.CONV_TOL
    assert s["widths"] == M.SCALING["ms"] and s["seeds"] == M.SCALING["seeds"]
    assert (s["profiles"]["n_eff_over_max_m"] >= M.NEFF_MIN_FACTOR).all()
    assert shipped.verdict_index_problem(M) is None


def test_shipped_neff_sweep_breaks_when_n_eff_nears_m():
    f = store.load_shipped(M.TOPIC, "neff_sweep")["fits"].sort_values("ratio")
    assert f["alpha_m"].iloc[0] > f["alpha_m"].iloc[-1] + 0.2             # N_eff ≈ m/2 … m: far steeper than 1/m


@pytest.mark.slow
def test_quick_reproduction_converges_and_prints_the_keys():
    h = M.reproduce(quick=True)
    assert h["converged"] and h["max_drift"] < M.CONV_TOL
    for key in ("topic", "reproduced", "claims", "alpha_strong", "alpha_weak", "alpha_weak_ideal", "widths",
                "overlap_over_welch", "weak_eq4_ratio", "alpha_strong_linear"):
        assert key in h


