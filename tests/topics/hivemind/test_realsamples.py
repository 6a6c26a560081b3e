"""Real samples: the prompt set, the sampler (with a stand-in for the LM), the paper's measures against brute force
and independent computations, and the claims' decision rules on hand-made intervals."""
import math

import numpy as np
import pandas as pd
import pytest

import toymodels.hivemind as H
from toymodels.errors import InputError
from toymodels.hivemind import realsamples as R

RNG = np.random.default_rng(7)


def test_prompt_set_is_the_registered_one():
    p = R.load_prompts()
    assert len(p) == 68 and (p["kind"] == "open").sum() == 60 and (p["kind"] == "closed").sum() == 8
    assert p["id"].is_unique and p["prompt"].is_unique
    assert set(p.loc[p["kind"] == "open", "category"]) == {
        "Creative Content Generation", "Brainstorm & Ideation", "Open-Endedness", "Alternative Styles",
        "Alternative Perspectives", "Information-Seeking"}
    assert all(15 <= len(q) <= 200 for q in p["prompt"])  # Infinity-Chat's length range (paper §2)
    assert (p.loc[p["kind"] == "closed", "answer"] != "").all() and (p.loc[p["kind"] == "open", "answer"] == "").all()
    assert H.OPEN_IDS == tuple(p.loc[p["kind"] == "open", "id"]) and len(H.ALL_IDS) == 68


def test_calibration_ladder_has_six_relations_per_topic():
    c = R.load_calibration()
    assert len(c) == 36 and c.groupby("topic").size().eq(6).all()
    same = c[c["relation"] == "identical"]
    assert (same["text_a"] == same["text_b"]).all()
    texts = R.calibration_texts()
    assert texts[:36] == c["text_a"].tolist() and texts[36:] == c["text_b"].tolist()


def test_wilson_matches_the_closed_form_and_statsmodels_cases():
    # hand-worked: 0 of 10 at 95% -> [0, z^2/(n+z^2)] = [0, 0.2775]
    lo, hi = R.wilson(0, 10)
    z = 1.959963984540054
    assert lo == 0 and hi == pytest.approx(z * z / (10 + z * z), rel=1e-9)
    lo, hi = R.wilson(5, 10)  # symmetric around 0.5
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.2366, abs=1e-4)
    assert all(math.isnan(x) for x in R.wilson(0, 0))


def test_bootstrap_interval_covers_the_mean_and_shrinks():
    v = RNG.normal(0.3, 0.1, size=200)
    lo, hi = R.bootstrap_mean_ci(v, seed=1)
    se = v.std(ddof=1) / np.sqrt(len(v))
    assert lo < v.mean() < hi and hi - lo == pytest.approx(2 * 1.96 * se, rel=0.15)
    lo2, hi2 = R.bootstrap_diff_ci(v + 0.2, v, seed=1)
    assert lo2 < 0.2 < hi2


def test_answer_hit_is_a_whole_word_match():
    assert R.answer_hit("The capital of France is Paris.", "Paris")
    assert not R.answer_hit("Parisian cafes", "Paris")
    assert R.answer_hit("It is 56.", "56|fifty-six") and not R.answer_hit("It is 156.", "56|fifty-six")
    assert R.answer_hit("Water is H2O", "H2O|H₂O") and R.answer_hit("eight legs", "8|eight")


def test_rescaled_threshold_maps_the_anchors():
    assert R.rescaled_threshold(0.15) == pytest.approx(0.8)      # the paper's own floor: unchanged
    assert R.rescaled_threshold(0.0) == pytest.approx(0.65 / 0.85)
    f = 0.3
    assert (R.rescaled_threshold(f) - f) / (1 - f) == pytest.approx((0.8 - 0.15) / 0.85)


def test_pool_seeds_are_fixed_and_distinct():
    seeds = {R.pool_seed(43, pid, d) for pid in H.ALL_IDS for d in R.DECODINGS}
    assert len(seeds) == 2 * 68 and R.pool_seed(43, "c01", "top-p") == R.pool_seed(43, "c01", "top-p")
    assert all(0 <= s < 2**31 - 1 for s in seeds)


class _FakeGeneration:
    def __init__(self, texts, n_tokens, finished):
        self.texts, self.n_tokens, self.finished = texts, n_tokens, finished


def _fake_generate(calls):
    def generate(prompts, n=1, max_new_tokens=64, temperature=1.0, top_p=1.0, min_p=0.0, seed=0, chat=True):
        calls.append((prompts[0], n, max_new_tokens, temperature, top_p, min_p, seed, chat))
        rng = np.random.default_rng(seed)
        texts = [f"{prompts[0]} answer {int(rng.integers(3))}" for _ in range(n)]
        return _FakeGeneration([texts], [[len(t.split()) for t in texts]], [[k % 2 == 0 for k in range(n)]])
    return generate


def test_draw_samples_calls_the_loader_per_pool_with_the_paper_decodings_and_resumes(monkeypatch, tmp_path):
    import toymodels.realmodels as RM
    from toymodels.hivemind import generation as G

    calls = []
    monkeypatch.setenv("TOYMODELS_CACHE", str(tmp_path))
    monkeypatch.setattr(G, "generate", _fake_generate(calls))
    monkeypatch.setattr(RM, "smollm2", lambda: None)
    b = R.draw_samples(("c01", "k01"), ("top-p", "min-p"), n=4, max_new_tokens=8, seed=5)
    t = b["table"]
    assert len(t) == 2 * 2 * 4 and list(t["decoding"].unique()) == ["top-p", "min-p"]
    assert set(t["kind"]) == {"open", "closed"} and (t["model"] == "SmolLM2-135M-Instruct").all()
    by_seed = {c[6]: c for c in calls}
    c = by_seed[R.pool_seed(5, "c01", "min-p")]
    assert c[3:6] == (2.0, 1.0, 0.1) and c[7] is True and c[1:3] == (4, 8)
    c = by_seed[R.pool_seed(5, "k01", "top-p")]
    assert c[3:6] == (1.0, 0.9, 0.0)
    assert b["tokens"] == int(t["n_tokens"].sum()) and b["cpu_seconds"] >= 0
    # a second run reads every pool from the disk cache: no new generate call, the same table
    again = R.draw_samples(("c01", "k01"), ("top-p", "min-p"), n=4, max_new_tokens=8, seed=5)
    assert len(calls) == 4
    pd.testing.assert_frame_equal(again["table"], t)
    with pytest.raises(Exception, match="unknown prompt"):
        R.draw_samples(("zz9",), ("top-p",))
    with pytest.raises(Exception, match="decoding"):
        R.draw_samples(("c01",), ("beam",))


def _fake_samples(n=5, open_ids=("c01", "c02", "c03", "c04"), closed=("k01", "k02")):
    prompts = R.load_prompts().set_index("id")
    rows = []
    for dec in ("top-p", "min-p"):
        for pid in open_ids + closed:
            for s in range(n):
                text = f"{pid} {dec} {s}" if s != 1 else f"{pid} {dec} 0"  # sample 1 repeats sample 0 exactly
                rows.append({"model": "M", "decoding": dec, "prompt_id": pid, "kind": prompts.loc[pid, "kind"],
                             "category": prompts.loc[pid, "category"], "prompt": prompts.loc[pid, "prompt"],
                             "sample": s, "response": text + (" Paris 56" if pid in closed and s < 2 else ""),
                             "n_tokens": 10 + s, "finished": s % 2 == 0})
    t = pd.DataFrame(rows)
    return {"table": t, "model": "M", "n": n, "max_new_tokens": 16, "cpu_seconds": 10.0, "tokens": 100,
            "tokens_per_cpu_second": 10.0, "decodings": {d: dict(R.DECODINGS[d]) for d in R.DECODINGS}}


def test_sample_metrics_by_brute_force():
    smp = _fake_samples()
    t = smp["table"]
    emb = RNG.normal(size=(len(t), 12))
    # make sample 1 a copy of sample 0 in embedding space too (an exact repeat)
    for (_, _), idx in t.groupby(["decoding", "prompt_id"]).indices.items():
        emb[idx[1]] = emb[idx[0]]
    m = R.sample_metrics(smp, emb, seed=3)
    E = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    for r in m["pools"].itertuples():
        idx = t.index[(t["decoding"] == r.decoding) & (t["prompt_id"] == r.prompt_id)].to_numpy()
        pairs = [E[i] @ E[j] for a, i in enumerate(idx) for j in idx[a + 1:]]
        assert r.mean_similarity == pytest.approx(np.mean(pairs))           # the paper's pool mean (k=1 triangle)
        assert r.exact_repeat_pairs == pytest.approx(1 / len(pairs))        # one repeated pair of 10
        assert r.near_verbatim_pairs == pytest.approx(np.mean(np.array(pairs) >= 0.95))
        assert r.distinct_responses == 4
    s = m["summary"]["top-p"]
    op = m["pools"].query("decoding == 'top-p' and kind == 'open'")["mean_similarity"].to_numpy()
    assert s["above_0.8"]["count"] == int((op >= 0.8).sum()) and s["n_open_pools"] == 4
    # the paper's code bins pool means with np.histogram(bins=10, range=(0, 1))
    h = m["histogram"].query("decoding == 'top-p'")["percent"].to_numpy()
    assert np.allclose(h, 100 * np.histogram(op, bins=10, range=(0, 1))[0] / len(op))
    # min-p vs top-p: paired per prompt
    piv = m["pools"].query("kind == 'open'").pivot(index="prompt_id", columns="decoding", values="mean_similarity")
    assert m["min_p"]["mean_difference"] == pytest.approx((piv["min-p"] - piv["top-p"]).mean())
    c = m["closed_vs_open"]
    tp = m["pools"].query("decoding == 'top-p'")
    assert c["difference"] == pytest.approx(tp.query("kind == 'closed'")["mean_similarity"].mean()
                                            - tp.query("kind == 'open'")["mean_similarity"].mean())
    assert c["closed_accuracy"] == pytest.approx(2 / 5)  # k01 and k02: samples 0 and 1 name the answer
    assert s["share_finished"] == pytest.approx(3 / 5)


def test_null_pools_draw_one_response_per_distinct_prompt():
    smp = _fake_samples(n=3)
    t = smp["table"]
    # one-hot embeddings by prompt: responses to different prompts are orthogonal, so a pool of responses to
    # distinct prompts has mean similarity exactly 0, and any repeat of a prompt would show as > 0
    ids = sorted(t["prompt_id"].unique())
    emb = np.stack([np.eye(len(ids))[ids.index(p)] for p in t["prompt_id"]])
    nulls = R._null_pools(t, emb, "top-p", 3, seed=0)
    assert len(nulls) == R.N_NULL_POOLS and np.allclose(nulls, 0.0)


def test_calibration_table_is_the_rowwise_cosine():
    c = R.load_calibration()
    emb = RNG.normal(size=(72, 5))
    t = R.calibration_table(emb)
    a, b = emb[0] / np.linalg.norm(emb[0]), emb[36] / np.linalg.norm(emb[36])
    assert t["similarity"].iat[0] == pytest.approx(a @ b) and len(t) == len(c)


def test_claims_read_the_real_sample_metrics():
    """Each real-sample claim's status follows its registered rule (the shared rules) on a bundle made by hand."""
    from toymodels import claims as C

    smp = _fake_samples()
    emb = RNG.normal(size=(len(smp["table"]), 12))
    m = R.sample_metrics(smp, emb, seed=0)
    views = {"lm_metrics": m}
    ev = H._intra(views)
    a = m["summary"]["top-p"]["above_0.8"]
    assert ev.status == C.share(a["count"], a["n"], effect=0.79, null=0.5).status and ev.seeds == 4
    assert ev.rule == "superiority" and "Clopper-Pearson interval [" in ev.uncertainty
    d = m["min_p"]
    ml = H._minp_lowers(views)
    assert ml.rule == "superiority" and ml.status == (
        C.REPRODUCED if d["ci"][1] < 0 else C.NOT_REPRODUCED if d["ci"][0] > -0.01 else C.NOT_TESTABLE)
    nf = H._null_floor(views)
    assert nf.rule == "exact" and nf.status == (
        C.REPRODUCED if m["summary"]["top-p"]["null_in_band"] >= 0.95 else C.NOT_REPRODUCED)
    c = m["closed_vs_open"]
    cl = H._closed(views)
    assert cl.status == (C.REPRODUCED if c["ci"][0] > 0 else C.NOT_REPRODUCED if c["ci"][1] < 0.037
                         else C.NOT_TESTABLE)
    inter = H._inter(views)
    assert inter.status == C.NOT_TESTABLE and inter.rule == "precondition" and "base model" in inter.note


def test_pending_claims_say_so():
    """While only the top-p draw is measured, the min-p claims read "pending", naming the run."""
    smp = _fake_samples()
    t = smp["table"]
    top = {**smp, "table": t[t["decoding"] == "top-p"].reset_index(drop=True)}
    m = R.sample_metrics(top, RNG.normal(size=(len(top["table"]), 12)), seed=0)
    for ev in (H._minp({"lm_metrics": m}), H._minp_lowers({"lm_metrics": m})):
        assert ev.rule == "pending" and ev.status == "not testable here" and ev.note


def test_live_samples_is_bounded_and_measures_its_pool(monkeypatch, tmp_path):
    from toymodels.hivemind import embed as E
    from toymodels.hivemind import generation as G

    calls = []
    monkeypatch.setattr(G, "generate", lambda prompts, progress=None, **kw: _fake_generate(calls)(prompts, **kw))
    vecs = {}

    def fake_embed(texts, **_):
        return np.stack([vecs.setdefault(t, RNG.normal(size=8)) for t in texts]).astype(np.float32)

    monkeypatch.setattr(E, "embed_texts", fake_embed)
    out = R.live_samples("c01", "min-p", 3, 16, 2)
    assert calls[-1][1:6] == (3, 16, 2.0, 1.0, 0.1) and len(out["table"]) == 3
    X = fake_embed(out["table"]["response"].tolist()).astype(np.float64)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = X @ X.T
    assert out["mean_similarity"] == pytest.approx((S.sum() - 3) / 6)
    for bad in (dict(n=5), dict(max_new_tokens=41), dict(prompt_id="nope"), dict(decoding="greedy")):
        with pytest.raises(InputError):
            R.live_samples(**{"prompt_id": "c01", **bad})
    assert len(calls) == 1
