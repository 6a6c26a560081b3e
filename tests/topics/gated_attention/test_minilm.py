"""Gated attention's real-model panel: all-MiniLM-L6-v2's first-token attention and largest activations, checked
against the model's own outputs read independently, and the bounds on a visitor's text."""
import numpy as np
import pytest
import torch

import toymodels.gated_attention as M
from toymodels.gated_attention import minilm


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_minilm_statistics_against_the_model_outputs():
    texts = ["The cat sat on the mat.", "A long, quiet road ran north past the farm and into the hills."]
    r = M.minilm_sink(texts)
    tok, model = minilm._load()
    att, hid, lengths = [], [], []
    with torch.no_grad():
        for t in texts:
            enc = tok(t, return_tensors="pt")
            out = model(**enc, output_attentions=True, output_hidden_states=True)
            lengths.append(enc["input_ids"].shape[1])
            att.append([float(a[0, :, 1:, 0].mean()) for a in out.attentions])      # per layer
            hid.append([h[0].abs().numpy() for h in out.hidden_states[1:]])
    lay = r["layers"]
    assert len(lay) == 6 and lay.uniform.iloc[0] == pytest.approx(np.mean([1 / n for n in lengths]))
    np.testing.assert_allclose(lay.first_token_attention, np.mean(att, 0), rtol=1e-5)
    for layer in range(6):
        pooled = np.concatenate([h[layer].ravel() for h in hid])
        assert lay.max_abs.iloc[layer] == pytest.approx(pooled.max(), rel=1e-5)
        assert lay.ratio.iloc[layer] == pytest.approx(pooled.max() / np.median(pooled), rel=1e-4)
        k = int(np.argmax([h[layer].max() for h in hid]))
        pos, dim = np.unravel_index(hid[k][layer].argmax(), hid[k][layer].shape)
        assert (lay.pos.iloc[layer], lay.dim.iloc[layer]) == (pos, dim)
    assert r["maps"].shape == (6, lengths[0], lengths[0])
    np.testing.assert_allclose(r["maps"].sum(-1), 1.0, rtol=1e-5)
    assert r["tokens"][0] == "[CLS]"


@pytest.mark.parametrize("texts,msg", [([""], "empty"), (["x" * (M.MAX_CHARS + 1)], "at most"),
                                       (["a"] * (M.MAX_TEXTS + 1), "between 1 and"), ([], "between 1 and"),
                                       ([3], "empty")])
def test_a_visitors_text_is_bounded(texts, msg):
    with pytest.raises(M.InputError, match=msg):
        M.minilm_sink(texts)
