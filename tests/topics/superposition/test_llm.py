"""Superposition's LLM measurement (superposition.llm): the streamed overlap against brute force and the package's own
Gram formula, the registered rule on hand-made tables, and the GGUF embedding against the loaded model's."""
import numpy as np
import pandas as pd
import pytest

from tests.realmodel_marks import needs_smollm2
from toymodels import realmodels as R
from toymodels.errors import InputError
from toymodels.superposition import llm
from toymodels.superposition.measure import mean_sq_overlap


def test_streamed_overlap_is_the_mean_over_all_pairs():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(300, 12)) + 0.5
    W[17] = 0.0                                              # a zero row has no direction: left out
    chunks = [W[i:i + 64] for i in range(0, len(W), 64)]
    got = llm.streamed_overlap(chunks)
    Wh = np.delete(W, 17, axis=0)
    Wh /= np.linalg.norm(Wh, axis=1, keepdims=True)
    C = Wh @ Wh.T
    brute = (C[np.triu_indices(len(Wh), 1)] ** 2).mean()
    assert got["N"] == 299 and got["zero_rows"] == 1
    assert got["overlap"] == pytest.approx(brute, rel=1e-12)
    assert got["overlap"] == pytest.approx(mean_sq_overlap(W), rel=1e-12)
    mu = llm.row_mean(chunks)
    np.testing.assert_allclose(mu, W.mean(0))
    cen = llm.streamed_overlap(chunks, centre=mu)["overlap"]
    assert cen < got["overlap"]                              # the shared +0.5 direction inflates the raw overlap
    # random unit vectors: (Ŵ_i·Ŵ_j)² has mean 1/m
    R2 = rng.normal(size=(4000, 50))
    assert llm.streamed_overlap([R2])["overlap"] * 50 == pytest.approx(1.0, abs=0.03)


def _table(*ratios, missing=()):
    rows = [{"model": f"M{i}", "m": 100 * (i + 1), "missing": "", "m_times_overlap": r, "over_welch": r}
            for i, r in enumerate(ratios)]
    rows += [{"model": name, "m": 640, "missing": "not installed", "m_times_overlap": np.nan, "over_welch": np.nan}
             for name in missing]
    return pd.DataFrame(rows)


def test_the_registered_rule_on_hand_made_tables():
    assert llm.decide_llm(_table(0.9, 1.4, 1.9), 1.3)[0] == "reproduced"
    assert llm.decide_llm(_table(0.9, 2.1), 1.3)[0] == "not reproduced"
    assert llm.decide_llm(_table(0.49, 1.0), 1.3)[0] == "not reproduced"
    assert llm.decide_llm(_table(1.0, missing=["Gemma"]), 1.3)[0] == "not testable here"
    assert llm.decide_llm(_table(1.0, 1.1, missing=["Gemma"]), 1.3)[0] == "reproduced"


@needs_smollm2
def test_smollm2_gguf_embedding_is_the_models_lm_head():
    W = np.concatenate(list(llm.embedding_chunks("smollm2", chunk_rows=20_000)))
    head = R.smollm2().model.lm_head.weight.detach().numpy()
    assert W.shape == head.shape == (49_152, 576)
    np.testing.assert_array_equal(W, head)


def test_llm_overlaps_refuses_a_model_it_has_no_embedding_file_for():
    """The row of superposition's KNOBS (group ``llm``) bounds ``models`` before any file is read."""
    with pytest.raises(InputError, match="must be one of"):
        llm.llm_overlaps(["gpt2"])
    with pytest.raises(InputError, match="items"):
        llm.llm_overlaps([])
