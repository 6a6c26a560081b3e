"""RLVR: reading a visitor's evaluations (every cell validated, short messages naming the row) and the analysis
of an evaluation table, checked on hand-worked cases with exact integers."""
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from toymodels import rlvr as M
from toymodels.topic import InputError


def _exact(n, c, k) -> Fraction:
    return Fraction(1) if n - c < k else 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


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
    (b"model,problem,n,c\nm,p1,3,1\nm,p2,-3,1\n", "Negative count '-3' in column 'n', data row 2"),
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
    with pytest.raises(InputError, match=match):
        M.read_evaluations(text)


@pytest.mark.parametrize("row, match", [
    ("m,p2,5,1e300", "'1e300' in column 'c', data row 2.*too large"),        # would wrap to a negative int64
    ("m,p2,1e300,1", "'1e300' in column 'n', data row 2.*too large"),
    ("m,p2,9223372036854775808,1", "column 'n', data row 2.*too large"),      # 2**63: int64 overflow
    ("m,p2,1e19,1e19", "column 'n', data row 2.*too large"),
    ("m,p2,5,-1", "Negative count '-1' in column 'c', data row 2"),
    ("m,p2,5,-1e300", "Negative count '-1e300' in column 'c', data row 2"),
    ("m,p2,5,2.5", "whole numbers; data row 2"),
    ("m,p2,5,inf", "whole numbers; data row 2"),
    ("m,p2,5,nan", "Non-numeric value 'nan' in column 'c', data row 2"),
    ("m,p2,5,6", "c > n in data row 2"),
    ("m,p2,100001,1", "data row 2.*too large"),
])
def test_counts_must_be_whole_bounded_and_consistent_naming_the_row(row, match):
    """Issue 14, finding 1: 1e300 used to pass as -9223372036854775808 and crash the page later."""
    with pytest.raises(InputError, match=match):
        M.read_evaluations(f"model,problem,n,c\nm,p1,5,1\n{row}\n")


def test_counts_in_the_samples_layout_are_bounded_too():
    with pytest.raises(InputError, match="data row 2.*too large"):
        M.read_evaluations("model,problem,correct\nm,p1,1\nm,p1,1e300\n")




@pytest.mark.parametrize("text", [
    "model,problem,n,c\nm,p,5," + "x" * 100_000 + "\n",                        # a huge cell
    "model,problem,n,c\nm,p,5," + "9" * 100_000 + "\n",                        # a huge number
    "model,problem,n," + "c" * 100_000 + "\nm,p,5,1\n",                        # a huge header
    "model,problem,n,c\nm,p,5,1.5" + "0" * 100_000 + "1\n",                    # a huge non-integer
    "model,problem,n,c\n" + "m" * 100_000 + ",p,5,1\n" + "m" * 100_000 + ",p,5,1\n",  # a huge duplicate name
])
def test_error_messages_never_echo_long_input(text):
    """Issue 14, finding 9: a message quotes at most a short piece of what was uploaded."""
    with pytest.raises(InputError) as err:
        M.read_evaluations(text)
    assert len(str(err.value)) < 400, len(str(err.value))


def test_too_many_rows_is_rejected():
    text = "model,problem,correct\n" + "m,p,1\n" * (M.MAX_ROWS + 1)
    with pytest.raises(InputError, match="limit is 100,000"):
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


def test_delta_se_is_the_papers_at_k_256():
    """Δ_SE = pass@256(base) − pass@1(RL), not pass@n(base), when n > 256 (checked with exact integers)."""
    n = 512
    df = pd.DataFrame({"model": ["base"] * 3 + ["rl"] * 3, "problem": ["a", "b", "c"] * 2,
                       "n": [n] * 6, "c": [1, 2, 0, 300, 0, 0]})
    s = M.analyse_counts(df, "base")["summary"].set_index("model")
    base256 = np.mean([float(_exact(n, c, 256)) for c in (1, 2, 0)])
    assert s.loc["rl", "delta_se"] == pytest.approx(base256 - 300 / n / 3, rel=1e-12)
    assert s.loc["rl", "delta_se_k"] == 256
    small = df.assign(n=100, c=[1, 2, 0, 50, 0, 0])   # fewer than 256 samples: the largest shared k
    s2 = M.analyse_counts(small, "base")["summary"].set_index("model")
    assert s2.loc["rl", "delta_se_k"] == 100 and s2.loc["rl", "delta_se"] == pytest.approx(2 / 3 - 50 / 100 / 3)


def test_example_file_is_toy_output_and_loads():
    ex = M.load_example()
    assert set(ex["model"]) == {"toy-base", "toy-grpo", "toy-distilled"}
    assert M.EXAMPLE_CSV.stat().st_size < 2_000_000
