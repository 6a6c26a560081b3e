"""SmolLM2's seeded, batched sampling (hivemind.generation): the top-p / min-p filter by hand, the bounds refusing
before the model loads, batches inside the memory budget, the same seed giving the same texts and greedy decoding
giving the model's own argmax."""
import pytest

from tests.realmodel_marks import needs_smollm2
from toymodels import realmodels as R
from toymodels.errors import InputError
from toymodels.hivemind import generation as G


def test_filter_top_p_and_min_p_by_hand():
    import torch

    logits = torch.log(torch.tensor([[0.5, 0.25, 0.15, 0.1]]))
    assert torch.allclose(G._filter(logits, 1.0, 1.0, 0.0), torch.tensor([[0.5, 0.25, 0.15, 0.1]]))
    # top-p 0.7: the smallest prefix reaching 0.7 is {0.5, 0.25}
    assert torch.allclose(G._filter(logits, 1.0, 0.7, 0.0), torch.tensor([[2 / 3, 1 / 3, 0, 0]]))
    # min-p 0.3: keep p >= 0.15, i.e. {0.5, 0.25, 0.15}
    assert torch.allclose(G._filter(logits, 1.0, 1.0, 0.3), torch.tensor([[0.5, 0.25, 0.15, 0]]) / 0.9)
    # temperature 2 flattens: p ∝ sqrt(p)
    s = torch.sqrt(torch.tensor([0.5, 0.25, 0.15, 0.1]))
    assert torch.allclose(G._filter(logits, 2.0, 1.0, 0.0)[0], s / s.sum())
    assert G._filter(logits, 0.0, 1.0, 0.0).tolist() == [[1.0, 0.0, 0.0, 0.0]]


def test_generation_bounds_refuse_before_loading():
    with pytest.raises(InputError, match="n must be"):
        G.generate(["hi"], n=0)
    with pytest.raises(InputError, match="max_new_tokens"):
        G.generate(["hi"], max_new_tokens=G.GEN_MAX_NEW_TOKENS + 1)
    with pytest.raises(InputError, match="empty"):
        G.generate([" "])
    with pytest.raises(InputError, match="samples"):
        G.generate(["hi"] * G.GEN_MAX_PROMPTS, n=G.GEN_MAX_SAMPLES)
    with pytest.raises(InputError, match="chat must be one of"):  # the row in hivemind's KNOBS
        G.generate(["hi"], chat="yes")
    with pytest.raises(InputError, match="temperature must be between"):
        G.generate(["hi"], temperature=2.5)


def test_generation_batches_fit_the_memory_budget():
    for prompt in (10, 100, G.GEN_MAX_PROMPT_TOKENS):
        for new in (1, 64, G.GEN_MAX_NEW_TOKENS):
            b = G.gen_batch(prompt, new)
            assert 1 <= b <= G.GEN_BATCH_MAX
            assert b * G.KV_BYTES_PER_TOKEN * (prompt + new) / 1e6 <= G.GEN_MB
    assert G.expected_generate_seconds(1, 16, 64) < G.expected_generate_seconds(1, 32, 64)
    assert G.expected_generate_seconds(1, 1, 64, loaded=False) > R.MODELS["smollm2"].load_seconds


@pytest.fixture(scope="module")
def smol():
    return R.smollm2()


@needs_smollm2
def test_generation_is_seeded_and_greedy_matches_the_argmax(smol):
    import torch

    a = G.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=7)
    b = G.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=7)
    c = G.generate(["Name a fruit."], n=3, max_new_tokens=6, seed=8)
    assert a.texts == b.texts and a.texts != c.texts
    assert len(a.texts) == 1 and len(a.texts[0]) == 3 and all(1 <= n <= 6 for n in a.n_tokens[0])
    prompt = "The capital of France is"
    greedy = G.generate([prompt], n=2, max_new_tokens=1, temperature=0.0, chat=False)
    with torch.inference_mode():                          # the argmax of the next-token logits, by the model itself
        logits = smol.model(input_ids=torch.tensor([smol.tokenizer(prompt)["input_ids"]])).logits[0, -1]
    first = smol.tokenizer.decode([int(logits.argmax())]).strip()
    assert greedy.texts[0] == [first, first] and first == "Paris"
