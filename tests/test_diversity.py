"""Artificial Hivemind: the diversity analyzer against brute force and hand-worked cases, bad input, the page."""
import http.server
import itertools
import json
import math
import threading

import numpy as np
import pandas as pd
import pytest

from toymodels import diversity as D
from toymodels import store, topic
from toymodels.topic import InputError
from toymodels.registry import REPO_ROOT as ROOT
from tests.apptest_helpers import open_page

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_parse_memo(monkeypatch):
    """Each test parses afresh: the memo of parsed inputs (keyed by the input) would otherwise hand one test
    the result another test computed with a monkeypatched parser."""
    monkeypatch.setattr(D, "_PARSED", D._ByteLRU(D.PARSE_MEMO_BYTES, 32))


# --------------------------------------------------------------------------- semantic aggregates


def test_vendi_fixture_matches_package_readme():
    assert D.vendi_score(np.array([[1, .9, 0], [.9, 1, 0], [0, 0, 1]])) == pytest.approx(2.1573, abs=1e-4)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_vendi_identical_is_one_orthogonal_is_n(n):
    assert D.vendi_score(np.ones((n, n))) == pytest.approx(1.0)
    assert D.vendi_score(np.eye(n)) == pytest.approx(float(n))


def test_vendi_against_entropy_of_eigenvalues_by_hand():
    # two blocks of identical items (sizes 2 and 3): K/n has eigenvalues 2/5 and 3/5
    K = np.zeros((5, 5))
    K[:2, :2] = 1
    K[2:, 2:] = 1
    p = np.array([0.4, 0.6])
    assert D.vendi_score(K) == pytest.approx(math.exp(-(p * np.log(p)).sum()))


def test_cosine_matrix_matches_sklearn():
    from sklearn.metrics.pairwise import cosine_similarity

    X = RNG.normal(size=(13, 7))
    np.testing.assert_allclose(D.cosine_matrix(X), cosine_similarity(X), atol=1e-12)


def test_mean_offdiag_is_the_explicit_double_loop():
    X = RNG.normal(size=(9, 5))
    S = D.cosine_matrix(X)
    brute = np.mean([S[i, j] for i in range(9) for j in range(9) if i < j])
    assert D.mean_offdiag(S) == pytest.approx(brute)
    assert math.isnan(D.mean_offdiag(S[:1, :1]))


def test_cluster_mixing_by_brute_force():
    X = RNG.normal(size=(12, 4))
    S = D.cosine_matrix(X)
    models = np.array(list("ABC") * 4)
    curve = D.cluster_mixing(S, models, max_n=50)
    assert len(curve) == 11
    for N in (1, 4, 11):
        brute = []
        for i in range(12):
            order = [j for j in np.argsort(-S[i], kind="stable") if j != i][:N]
            brute.append(len({models[j] for j in order}))
        assert curve[N - 1] == pytest.approx(np.mean(brute))
    assert curve[0] == 1 and curve[-1] == 3


@pytest.mark.parametrize("n,d", [(50, 8), (400, 16), (5, 16), (16, 16)])
def test_vendi_dual_form_equals_the_n_by_n_form(n, d):
    X = RNG.normal(size=(n, d))
    X[1] = X[0]  # a duplicate, so the kernel is rank-deficient too
    assert D.vendi_score_embeddings(X) == pytest.approx(D.vendi_score(D.cosine_matrix(X)), rel=1e-9)


def test_vendi_dual_form_is_fast_at_2000_responses():
    import time

    X = RNG.normal(size=(2000, 384)).astype(np.float32)
    t = time.process_time()
    D.vendi_score_embeddings(X)
    assert time.process_time() - t < 1.0  # the N x N form takes several seconds here


def test_cluster_mixing_with_exact_duplicates_drops_self_not_a_twin():
    X = np.repeat(RNG.normal(size=(4, 3)), 3, axis=0)  # every response has two exact twins
    models = np.array(list("ABC") * 4)
    curve = D.cluster_mixing(D.cosine_matrix(X), models, max_n=11)
    # the nearest two neighbours of each response are its twins, which come from the two other models
    assert curve[0] == 1 and curve[1] == pytest.approx(2.0)


# --------------------------------------------------------------------------- lexical metrics


def test_ttr_distinct_n_hand_counted():
    assert D.words("The cat, the DOG's toy!") == ["the", "cat", "the", "dog's", "toy"]
    assert D.ttr(D.words("the cat the dog")) == pytest.approx(3 / 4)
    texts = ["the cat sat", "the cat ran"]
    # unigrams: the,cat,sat,the,cat,ran -> 4 unique / 6 ; bigrams: the cat, cat sat, the cat, cat ran -> 3 / 4
    assert D.distinct_n(texts, 1) == pytest.approx(4 / 6)
    assert D.distinct_n(texts, 2) == pytest.approx(3 / 4)
    assert D.distinct_n(texts, 3) == pytest.approx(2 / 2)
    assert math.isnan(D.distinct_n(["one"], 2))


def test_mattr_by_hand_and_fallback():
    tok = "a b a c a".split()
    # windows of 3: (a b a)=2/3, (b a c)=3/3, (a c a)=2/3
    assert D.mattr(tok, 3) == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert D.mattr(tok, 10) == pytest.approx(D.ttr(tok))
    long = [str(x) for x in RNG.integers(0, 20, size=200)]
    brute = np.mean([len(set(long[i:i + 25])) / 25 for i in range(200 - 25 + 1)])
    assert D.mattr(long, 25) == pytest.approx(brute)


def test_compression_ratio_orders_repetition():
    rep = D.compression_ratio(["the same sentence over and over again"] * 20)
    div = D.compression_ratio([f"sentence {i} about {w}" for i, w in enumerate("apples rivers quarks jazz".split())])
    assert rep > 5 > div


def test_self_bleu_identical_100_disjoint_0():
    assert D.self_bleu(["a cat sat on the mat"] * 4) == pytest.approx([100.0] * 4)
    assert D.self_bleu(["the cat sat", "dogs run fast", "birds fly high"]) == pytest.approx([0.0] * 3)
    assert all(math.isnan(x) for x in D.self_bleu(["only one"]))


def test_fast_self_bleu_equals_sacrebleu_per_hypothesis_loop():
    words = "time river weaver moment current flows carries memory we the a of is and".split()
    texts = [" ".join(RNG.choice(words, size=RNG.integers(3, 15))) for _ in range(30)]
    texts += [texts[0], texts[0] + " again"]
    np.testing.assert_allclose(D.self_bleu(texts), D.self_bleu_naive(texts), atol=1e-9)


def test_sacrebleu_pinned():
    import sacrebleu

    assert sacrebleu.__version__ == D.SACREBLEU_VERSION


# --------------------------------------------------------------------------- input handling


def test_parse_pasted_blocks_and_headers():
    df, warn = D.parse_pasted("model: m1\nprompt: p\nfirst\n---\nsecond\n---\n\n---\nmodel: m2\nthird line\nmore")
    assert df["response"].tolist() == ["first", "second", "third line\nmore"]
    assert df["model"].tolist() == ["m1", "m1", "m2"] and set(df["prompt"]) == {"p"}


@pytest.mark.parametrize("data,name,msg", [
    (b"", "x.csv", "empty"),
    (b"model,prompt,answer\na,b,c\n", "x.csv", "missing column"),
    (b"\xff\xfe\xfa not utf8", "x.csv", "UTF-8"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "x.png", "binary"),
    (b'{"model": "a", "prompt": "b"\n', "x.jsonl", "JSON"),
    (b"model,prompt,response\na,b,\n", "x.csv", "no non-empty"),
])
def test_bad_uploads_give_clear_errors(data, name, msg):
    with pytest.raises(InputError, match=msg):
        D.parse_upload(data, name)


@pytest.mark.parametrize("data,name", [
    (b"[" * 100_000, "deep.json"),                                   # issue 14, finding 2: RecursionError
    (b'{"model": "m", "prompt": ' + b"[" * 100_000 + b"}", "deep.jsonl"),
    (b"[" * 100_000, "deep.csv"),                                    # sniffed as JSON whatever the name
    (b'[{"model": "m", "prompt": "p", "response": "r"}, 3]', "x.json"),
    (b'{"model": 1e999999, "prompt": "p", "response": "r"}', "x.jsonl"),
    (b'"just a string"', "x.json"),
    (b"model,prompt,response\n\"unclosed,quote\n", "x.csv"),
    ("model,prompt,response\nm,p,\ud800\n".encode("utf-8", "surrogatepass"), "x.csv"),
])
def test_any_upload_parse_failure_is_an_input_error(data, name):
    try:
        D.parse_upload(data, name)
    except InputError as exc:
        assert len(str(exc)) < 300  # a short message, never the input echoed back
    # parsing may also succeed (then it returned a clean table); anything else fails the test


def test_parse_upload_turns_any_unexpected_exception_into_input_error(monkeypatch):
    def boom(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(D, "validate", boom)
    with pytest.raises(InputError, match="could not read the file"):
        D.parse_upload(b"model,prompt,response\na,b,c\n", "x.csv")


def test_upload_csv_jsonl_case_insensitive_and_cap():
    df, _ = D.parse_upload(b"Model, Prompt ,RESPONSE\na,p,hello\na,p,\n", "x.csv")
    assert len(df) == 1
    lines = "\n".join(json.dumps({"model": "m", "prompt": "p", "response": f"r{i}"}) for i in range(5))
    assert len(D.parse_upload(lines.encode(), "x.jsonl")[0]) == 5
    big = pd.DataFrame({"model": ["m"] * 5, "prompt": ["p"] * 5, "response": ["x"] * 5})
    with pytest.raises(InputError, match="cap"):
        D.validate(big, cap=4)


def test_single_response_has_no_pairs():
    df = pd.DataFrame({"model": ["m"], "prompt": ["p"], "response": ["alone"]})
    with pytest.raises(InputError, match="at least two"):
        D.analyze(df, np.ones((1, 384), dtype=np.float32))


# --------------------------------------------------------------------------- the analysis on known embeddings


def test_analyze_aggregates_against_brute_force():
    # two prompts, two models, three responses per pool, random unit embeddings
    rows = [(m, p, f"{m} {p} response {k} words {k * 3}") for p in ("p1", "p2") for m in ("A", "B") for k in range(3)]
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = RNG.normal(size=(12, 8)).astype(np.float32)
    res = D.analyze(df, emb, D.Config(k_clusters=3, threshold=0.0))
    S = D.cosine_matrix(emb.astype(np.float64))
    idx = {(m, p): [i for i, r in enumerate(rows) if r[0] == m and r[1] == p] for p in ("p1", "p2") for m in "AB"}
    intra = [np.mean([S[i, j] for i, j in itertools.combinations(ix, 2)]) for ix in idx.values()]
    assert res["summary"]["intra_model_similarity"] == pytest.approx(np.mean(intra), abs=1e-6)
    inter_ab = np.mean([np.mean([S[i, j] for i in idx[("A", p)] for j in idx[("B", p)]]) for p in ("p1", "p2")])
    got = res["inter"].query("model_a == 'A' and model_b == 'B'")["similarity"].item()
    assert got == pytest.approx(inter_ab, abs=1e-6)
    null = np.mean([S[i, j] for i in range(12) for j in range(i + 1, 12) if rows[i][1] != rows[j][1]])
    assert res["summary"]["null_pair_similarity"] == pytest.approx(null, abs=1e-6)
    share = np.mean(np.array(intra) > 0.0)
    assert res["summary"]["share_pools_above_threshold"] == pytest.approx(share)
    assert len(res["pairs"]) == 2 * 15  # within-prompt pairs only
    assert res["pca"].shape[0] == 12 and res["clusters"]["size"].sum() == 12


def test_inter_model_diagonal_and_cross_model_per_prompt_by_brute_force():
    rows = [(m, p, f"{m}{p}{k}") for p in ("p1", "p2") for m, n in (("A", 2), ("B", 3), ("C", 1))
            for k in range(n)]
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = RNG.normal(size=(len(rows), 6)).astype(np.float32)
    res = D.analyze(df, emb, D.Config(k_clusters=2))
    S = D.cosine_matrix(emb)
    ix = {(m, p): [i for i, r in enumerate(rows) if r[:2] == (m, p)] for m in "ABC" for p in ("p1", "p2")}
    diag_b = np.mean([np.mean([S[i, j] for i, j in itertools.combinations(ix[("B", p)], 2)]) for p in ("p1", "p2")])
    inter = res["inter"].set_index(["model_a", "model_b"])["similarity"]
    assert inter[("B", "B")] == pytest.approx(diag_b, abs=1e-9)
    assert ("C", "C") not in inter.index  # one response per prompt: no within-model pairs
    p1 = [i for i, r in enumerate(rows) if r[1] == "p1"]
    cross = np.mean([S[i, j] for i, j in itertools.combinations(p1, 2) if rows[i][0] != rows[j][0]])
    got = res["per_prompt"].set_index("prompt").loc["p1", "cross_model_similarity"]
    assert got == pytest.approx(cross, abs=1e-9)
    assert res["per_prompt"]["vendi"].iloc[0] == pytest.approx(D.vendi_score(S[np.ix_(p1, p1)]), rel=1e-9)


@pytest.mark.parametrize("cfg,msg", [
    (D.Config(threshold=1.5), "threshold"),
    (D.Config(k_clusters=0), "k_clusters"),
    (D.Config(neighbours=101), "neighbours"),
    (D.Config(mattr_window=2), "mattr_window"),
    (D.Config(levels=(0.5, 2.0)), "levels"),
    (D.Config(levels=tuple([0.5] * 9)), "levels"),
    (D.Config(seed=-1), "seed"),
    (D.Config(threshold=float("nan")), "threshold"),
])
def test_out_of_bounds_config_raises_instead_of_clamping(cfg, msg):
    df = pd.DataFrame({"model": ["a", "b"], "prompt": ["p", "p"], "response": ["x", "y"]})
    with pytest.raises(InputError, match=msg):
        D.analyze(df, np.eye(2, 4, dtype=np.float32), cfg)
    assert not hasattr(D.Config, "clamped")


def test_sweep_and_embedding_bounds_raise():
    df = pd.DataFrame({"model": ["a"] * 3, "prompt": ["p"] * 3, "response": ["x", "y", "z"]})
    emb = np.eye(3, 4, dtype=np.float32)
    with pytest.raises(InputError, match="sizes"):
        D.sample_size_sweep(df, emb, [2, 500])
    with pytest.raises(InputError, match="reps"):
        D.sample_size_sweep(df, emb, [2], reps=9)
    with pytest.raises(InputError, match="texts"):
        D.embed_texts(["x"] * (D.MAX_RESPONSES + 1))
    with pytest.raises(InputError, match="texts"):
        D.embed_texts(["x" * (D.MAX_CHARS + 1)])


class _CountingModel:
    """Stands in for MiniLM: records every text it is asked to embed."""

    def __init__(self):
        self.seen = []

    def encode(self, texts, **kwargs):
        self.seen += list(texts)
        return np.stack([np.full(384, len(t) + 1.0, dtype=np.float32) / np.sqrt(384) / (len(t) + 1.0)
                         + 0.01 * (hash(t) % 7) for t in texts])


def test_a_repeated_text_is_never_embedded_twice(monkeypatch):
    fake = _CountingModel()
    monkeypatch.setattr(D, "_MODEL", fake)
    monkeypatch.setattr(D, "_EMB_CACHE", type(D._EMB_CACHE)())
    calls = []
    a = D.embed_texts(["alpha", "beta", "alpha", "gamma"], batch_size=2, progress=lambda f, m: calls.append(f))
    assert sorted(fake.seen) == ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(a[0], a[2])
    assert D.uncached_count(["alpha", "delta", "delta"]) == 1
    b = D.embed_texts(["gamma", "delta", "alpha"])
    assert sorted(fake.seen) == ["alpha", "beta", "delta", "gamma"]  # only delta is new
    np.testing.assert_array_equal(b[0], a[3])
    np.testing.assert_array_equal(b[2], a[0])
    assert calls[-1] == 1.0 and len(calls) >= 3  # progress after every batch


def test_verdict_is_not_tested_and_says_why():
    shipped = store.load_shipped(D.TOPIC, D.HEADLINE)
    v = D.verdict(shipped)
    assert v.reproduced is None and "illustrative" in v.summary
    assert v.metrics["vendi_fixture_ok"] and v.metrics["paper_share_above_0.8"] == 0.79
    share = np.mean(shipped["per_pool"].query("n >= 2")["intra_similarity"] > 0.8)
    assert v.metrics["share_pools_above_0.8"] == pytest.approx(share)
    rows = [(m, "p", f"{m} {k}") for m in "AB" for k in range(3)]
    other = D.analyze(pd.DataFrame(rows, columns=["model", "prompt", "response"]),
                      RNG.normal(size=(6, 8)).astype(np.float32))
    assert not other["summary"]["example_set"] and D.verdict(other).summary.startswith("On this data")


def test_identical_responses_similarity_one_selfbleu_100_vendi_one():
    df = pd.DataFrame({"model": ["A"] * 3 + ["B"] * 3, "prompt": ["p"] * 6,
                       "response": ["time is a river that flows"] * 6})
    emb = np.tile(RNG.normal(size=(1, 16)), (6, 1)).astype(np.float32)
    res = D.analyze(df, emb, D.Config(k_clusters=1))
    s = res["summary"]
    assert s["intra_model_similarity"] == pytest.approx(1.0, abs=1e-6)
    assert s["inter_model_similarity"] == pytest.approx(1.0, abs=1e-6)
    assert s["self_bleu"] == pytest.approx(100.0)
    assert res["per_prompt"]["vendi"].item() == pytest.approx(1.0, abs=1e-5)


# --------------------------------------------------------------------------- embeddings, shipped store, reproduce


def test_real_embeddings_identical_text_is_one_and_shipped_views_are_fresh():
    emb = D.embed_texts(["Time is a river.", "Time is a river.", "Bake bread on Saturday."])
    S = D.cosine_matrix(emb)
    assert S[0, 1] == pytest.approx(1.0, abs=1e-5) and S[0, 2] < 0.5
    assert topic.stale_views(D) == {}
    shipped = store.load_shipped(D.TOPIC, "example_embeddings")
    D._EMB_CACHE.clear()  # embed from scratch, not from the cache
    fresh = D.embed_texts(D.load_example()["response"].tolist())
    np.testing.assert_allclose(fresh, shipped, atol=1e-4)
    for name in ("example_analysis", "example_sweep"):
        fn, kwargs = topic.view_call(D, name)
        store.verify_shipped(D.TOPIC, name, fn, **kwargs, rtol=1e-5)


def test_sample_size_sweep_full_n_equals_analysis_and_vendi_grows():
    rows = [(m, "p", f"{m} says thing number {k}") for m in "AB" for k in range(6)]
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = RNG.normal(size=(12, 8)).astype(np.float32)
    sw = D.sample_size_sweep(df, emb, [2, 4, 6], reps=2, seed=1).set_index(["metric", "n"])["value"]
    res = D.analyze(df, emb)
    # at n = pool size every draw is the whole pool, so the sweep equals the full analysis
    assert sw[("intra_similarity", 6)] == pytest.approx(res["summary"]["intra_model_similarity"], abs=1e-6)
    assert sw[("vendi", 2)] < sw[("vendi", 4)] < sw[("vendi", 6)]


def test_reproduce_quick_keys(tmp_path):
    m = D.reproduce(quick=True, out=tmp_path)
    for k in ("vendi_fixture", "null_pair_similarity", "intra_model_similarity", "inter_model_similarity",
              "self_bleu", "distinct_2"):
        assert isinstance(m[k], float), k
    assert m["vendi_fixture"] == pytest.approx(2.1573, abs=1e-4)
    # the example set is built so the metaphor prompt is a hivemind and the Saturday prompt is not
    per = m["per_prompt_intra"]
    assert per["Write a one-sentence metaphor about time."] > per["Suggest one thing to do on a free Saturday afternoon."] + 0.3
    assert m["null_pair_similarity"] < m["inter_model_similarity"] < m["intra_model_similarity"]
    assert (tmp_path / "hivemind_pairs.csv").exists()


# --------------------------------------------------------------------------- collect against a local server


class _Handler(http.server.BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self):  # noqa: N802
        _Handler.calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.last = body
        if _Handler.calls == 2:  # one transient failure, to exercise the retry
            self.send_response(503)
            self.end_headers()
            return
        assert self.path == "/v1/chat/completions"
        text = f"echo {body['messages'][0]['content']} t={body['temperature']}"
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def test_collect_cli_against_local_server(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        prompts = tmp_path / "prompts.txt"
        prompts.write_text("Write a haiku.\n\nName a colour.\n")
        out = tmp_path / "r.csv"
        rc = D.main(["collect", "--base-url", f"http://127.0.0.1:{server.server_port}/v1", "--model", "toy",
                     "--prompts", str(prompts), "--n", "2", "--temperature", "0.7", "--out", str(out)])
        assert rc == 0
        df, _ = D.parse_upload(out.read_bytes(), "r.csv")
        assert len(df) == 4 and set(df["model"]) == {"toy"}
        assert df["response"].iloc[0] == "echo Write a haiku. t=0.7"
        assert _Handler.calls == 5  # 4 successes + 1 retried failure
        assert "min_p" not in _Handler.last and _Handler.last["top_p"] == 0.9  # the paper's default decoding
        D.collect(f"http://127.0.0.1:{server.server_port}", "toy", ["q"], n=1, temperature=2.0, top_p=1.0, min_p=0.1)
        assert _Handler.last["min_p"] == 0.1 and _Handler.last["temperature"] == 2.0
        rc = D.main(["collect", "--base-url", "http://127.0.0.1:1", "--model", "x", "--prompts", str(prompts),
                     "--n", "1", "--retries", "0", "--out", str(tmp_path / "none.csv")])
        assert rc == 1
    finally:
        server.shutdown()


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("hivemind")


def _embed_if_asked(at):
    """Press the embedding button when the page asks for it (MiniLM not loaded yet, or many new texts)."""
    for b in at.button:
        if b.key == "hm_embed_go":
            b.click().run()
            return True
    return False


def test_page_default_example_and_changed_widgets():
    at = _page()
    assert not at.exception, at.exception
    assert any(t.value == "Artificial hivemind" for t in at.title)
    at.slider(key="hm_threshold").set_value(0.6).run()
    assert not at.exception, at.exception
    at.number_input(key="hm_k").set_value(3).run()
    assert not at.exception, at.exception


def test_page_pasted_text():
    at = _page()
    at.radio(key="hm_source").set_value("paste").run()
    at.text_area(key="hm_paste").input("model: a\nTime is a river.\n---\nTime flows like a river.\n---\n"
                                       "model: b\nBake some bread.").run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("3 responses" in c.value for c in at.caption)
    # what the user typed survives switching to another input and back
    at.radio(key="hm_source").set_value("example").run()
    at.radio(key="hm_source").set_value("paste").run()
    assert at.text_area(key="hm_paste").value.startswith("model: a")


def test_page_pasted_single_response_gives_message_not_traceback():
    at = _page()
    at.radio(key="hm_source").set_value("paste").run()
    at.text_area(key="hm_paste").input("just one response").run()
    assert not at.exception, at.exception
    assert any("two" in e.value for e in list(at.error) + list(at.warning))


def test_page_malformed_upload_gives_clear_error():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    at.file_uploader(key="hm_upload").upload("bad.csv", b"name,text\nx,y\n", "text/csv").run()
    assert not at.exception, at.exception
    assert any("missing column" in e.value for e in at.error)
    good = b"model,prompt,response\na,p,Time is a river.\nb,p,Time flows like a river.\nb,p,Bake bread.\n"
    at.file_uploader(key="hm_upload").set_value(("good.csv", good, "text/csv")).run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("3 responses" in c.value for c in at.caption)


@pytest.mark.parametrize("rows", [
    [("m", "p", "a"), ("m", "p", "b")],                                    # one model, one prompt
    [("x", "p", "river"), ("y", "p", "weaver"), ("z", "p", "bread")],      # one response per model
    [("m", "p1", "river"), ("m", "p2", "bread")],                          # one response per prompt: no pairs within
    [("m", "p", "same")] * 3,                                              # identical responses
], ids=["one-pool", "singletons", "no-within-prompt-pairs", "identical"])
def test_analyze_degenerate_inputs_do_not_crash(rows):
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = RNG.normal(size=(len(rows), 8)).astype(np.float32) if rows[0][2] != "same" else np.ones((3, 8), np.float32)
    res = D.analyze(df, emb, D.Config(k_clusters=3))
    assert len(res["pca"]) == len(rows)
    assert res["clusters"]["size"].sum() == len(rows)


@pytest.mark.slow
def test_speed_targets_of_the_issue():
    """On one core (run via make bench): Self-BLEU equals sacrebleu's loop and is faster; the Vendi dual form
    equals the n x n form at 2,000 responses; a repeated text costs nothing; the analysis of 2,000 <= 3 s CPU."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_diversity", ROOT / "bench" / "bench_diversity.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.main(["--n-embed", "200"])
    assert out["self_bleu_max_abs_diff"] < 1e-9 and out["self_bleu_speedup"] > 5
    assert out["vendi_rel_diff"] < 1e-9 and out["vendi_dual_cpu_s"] < out["vendi_baseline_nxn_cpu_s"]
    assert out["embed_max_abs_diff"] < 1e-5
    assert out["embed_repeated_ours_cpu_s"] < 0.75 * out["embed_repeated_baseline_cpu_s"]
    assert out["embed_again_plus_one_cpu_s"] < 0.1 * out["embed_ours_cpu_s"]
    assert out["analyze_2000_cpu_s"] < 3.0


def _fuzz_combo(rng):
    """One random visitor: an input source, random (often extreme) widget values, buttons pressed."""
    src = rng.choice(["example", "paste", "upload"])
    combo = {"source": src, "threshold": float(rng.choice([0.0, 1.0, round(rng.uniform(0, 1), 2)])),
             "k": int(rng.choice([1, 12, rng.integers(1, 13)])), "nn": int(rng.choice([1, 100, rng.integers(1, 101)])),
             "mattr": int(rng.choice([5, 200, rng.integers(5, 201)])),
             "levels": [float(x) for x in rng.choice([0.1, 0.5, 0.8, 0.95], size=rng.integers(0, 4), replace=False)],
             "tab_prompt": int(rng.integers(0, 3)), "reps": int(rng.integers(1, 6))}
    words = ["time", "river", "weaver", "bread", "Saturday", "=cmd|' /C calc'!A0", "", "---", "model:", "ü", "\u200b"]
    n = int(rng.choice([0, 1, 2, 5, 8], p=[0.1, 0.1, 0.2, 0.3, 0.3]))
    if src == "paste":
        blocks = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(n)]
        combo["text"] = "model: a\nprompt: q\n" + "\n---\n".join(blocks) if blocks else rng.choice(["", "   ", "---"])
    elif src == "upload":
        kind = rng.choice(["csv", "jsonl", "nested", "binary", "empty", "badcols"], p=[.35, .35, .075, .075, .075, .075])
        body = {"csv": "model,prompt,response\n" + "".join(f"m{i % 2},p{i % 2},{rng.choice(words[:5])} {i}\n"
                                                            for i in range(n)),
                "jsonl": "\n".join(json.dumps({"model": f"m{i % 2}", "prompt": "p", "response": f"r {i}"})
                                   for i in range(n)),
                "nested": "[" * 50_000, "binary": "\x00\x01", "empty": "", "badcols": "a,b\n1,2\n"}[kind]
        combo["file"] = (f"f.{'jsonl' if kind in ('jsonl', 'nested') else 'csv'}", body.encode())
    return combo


def _apply(at, combo):
    at.radio(key="hm_source").set_value(combo["source"]).run()
    if combo["source"] == "paste":
        at.text_area(key="hm_paste").input(combo["text"]).run()
    elif combo["source"] == "upload" and combo["file"][1]:
        at.file_uploader(key="hm_upload").upload(combo["file"][0], combo["file"][1], "text/plain").run()
    for b in at.button:
        if b.key in ("hm_embed_go", "hm_sweep_go") or (b.key == "hm_upload_forget" and combo["k"] % 3 == 0):
            b.click().run()
    if any(s.key == "hm_threshold" for s in at.slider):  # the data loaded: the analysis knobs are there
        at.slider(key="hm_threshold").set_value(combo["threshold"])
        at.number_input(key="hm_k").set_value(combo["k"])
        at.number_input(key="hm_nn").set_value(combo["nn"])
        at.number_input(key="hm_mattr").set_value(combo["mattr"])
        at.multiselect(key="hm_levels").set_value(combo["levels"]).run()
        if any(s.key == "hm_prompt" for s in at.selectbox):
            box = at.selectbox(key="hm_prompt")
            box.set_value(box.options and min(combo["tab_prompt"], len(box.options) - 1)).run()
        if any(s.key == "hm_sweep_reps" for s in at.number_input):
            at.number_input(key="hm_sweep_reps").set_value(combo["reps"]).run()


def _fuzz(n_combos, seed):
    rng = np.random.default_rng(seed)
    at = _page()
    assert not at.exception, at.exception
    analysed = 0
    for i in range(n_combos):
        combo = _fuzz_combo(rng)
        _apply(at, combo)
        assert not at.exception, (i, combo, at.exception)
        analysed += any(s.key == "hm_threshold" for s in at.slider)
    assert analysed >= n_combos // 3  # most visitors got as far as the analysis


def test_page_fuzz_random_and_extreme_widgets():
    _fuzz(22, seed=14)


@pytest.mark.slow
def test_page_fuzz_many():
    _fuzz(120, seed=1414)


def test_page_bad_link_value_opens_default_with_notice():
    from streamlit.testing.v1 import AppTest

    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["hm_source"] = "Example set (illustrative)"  # an old display label
    at.query_params["hm_k"] = "999"
    at.switch_page(get_paper("hivemind").page).run()
    assert not at.exception, at.exception
    assert any("link" in w.value for w in at.warning)
    assert isinstance(at, AppTest)


@pytest.mark.slow
def test_analysis_of_2000_responses_within_3_cpu_seconds():
    import time

    words = "time river weaver moment current flows carries memory we the a of is and bread jazz".split()
    rng = np.random.default_rng(3)
    rows = [(f"m{i % 4}", f"p{(i // 4) % 10}", " ".join(rng.choice(words, size=rng.integers(12, 40))))
            for i in range(2000)]
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = rng.normal(size=(2000, 384)).astype(np.float32)
    from threadpoolctl import threadpool_limits

    D.analyze(df.head(50), emb[:50])  # imports (scikit-learn, sacrebleu) outside the timing
    with threadpool_limits(1):  # one core: BLAS threads spinning on a busy machine would count double
        t = time.process_time()
        D.analyze(df, emb, D.Config(neighbours=100, k_clusters=12))
        assert time.process_time() - t < 3.0


# =========================================================================== issue 25: reliability before a public link
#
# A hostile visitor's input: markup in uploaded values, parsers fed maximal adversarial text, uploads that are
# wide, long, doubled or many-modelled, and a collector given bad arguments. Each test below fails on the code
# before issue 25 (markup rendered, quadratic parse, silent column pick, requests made before refusing).

EVIL_LINK, EVIL_IMG = "[Login again](http://evil)", "![x](http://evil/img.png)"
# element types that show their strings as text (no Markdown): text, code blocks, table cells, Vega chart data,
# selectbox options (st.selectbox documents Markdown for its label only; the label here is the page's own)
TEXT_ONLY = {"text", "code", "dataframe", "vega_lite_chart", "selectbox"}


def _types_holding(at, needle: bytes) -> list[str]:
    """The element type of every element in the page whose message holds ``needle``."""
    found = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "SerializeToString") and needle in proto.SerializeToString():
            found.append(node.type)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def test_page_uploaded_values_are_shown_as_text_never_as_markup():
    rows = ["model,prompt,response"] + [f'"{EVIL_LINK} m{i % 2}","{EVIL_IMG} prompt","{EVIL_LINK} {EVIL_IMG} time is '
                                        f'a river {i}"' for i in range(4)]
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    at.file_uploader(key="hm_upload").upload(f"{EVIL_LINK}.csv", ("\n".join(rows) + "\n").encode(), "text/csv").run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    holders = _types_holding(at, b"http://evil")
    assert holders and set(holders) <= TEXT_ONLY, holders
    # the "what 0.8 looks like" strip shows the pair's texts, as text
    assert any(EVIL_LINK in t.value and EVIL_IMG in t.value for t in at.text)
    assert any(t.value == f"Prompt: {EVIL_IMG} prompt" for t in at.text)
    # back to the upload later: the page names the earlier file, as text too
    at.radio(key="hm_source").set_value("example").run()
    at.radio(key="hm_source").set_value("upload").run()
    assert not at.exception, at.exception
    assert any(EVIL_LINK in t.value and "uploaded earlier" in t.value for t in at.text)
    holders = _types_holding(at, b"http://evil")
    assert holders and set(holders) <= TEXT_ONLY, holders


def test_page_error_about_an_upload_quotes_no_markup():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    at.file_uploader(key="hm_upload").upload("x.csv", f'"{EVIL_LINK}","{EVIL_IMG}",response\na,b,c\n'.encode(),
                                             "text/csv").run()
    assert not at.exception, at.exception
    assert any("missing column" in e.value for e in at.error)
    assert not _types_holding(at, b"http://evil") and not _types_holding(at, b"](")


def test_upload_error_messages_quote_names_inertly(monkeypatch):
    # the page shows an InputError with st.error, which renders Markdown: a quoted name must not be markup
    with pytest.raises(InputError, match="missing column") as err:
        D.parse_upload(f'"{EVIL_LINK}","{EVIL_IMG}",response\na,b,c\n'.encode(), "x.csv")
    msg = str(err.value)
    assert "Login again" in msg and "evil" in msg  # the names are quoted ...
    assert "http://" not in msg and "](" not in msg and "[" not in msg  # ... inertly

    def boom(*args, **kwargs):
        raise KeyError(f"{EVIL_LINK} {EVIL_IMG}")

    monkeypatch.setattr(D, "validate", boom)
    with pytest.raises(InputError, match="could not read the file") as err:
        D.parse_upload(b"model,prompt,response\na,b,c\n", "x.csv")
    assert "evil" in str(err.value) and "http://" not in str(err.value) and "](" not in str(err.value)


def test_inert_text_renders_no_link_image_or_html_in_markdown():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    rng = np.random.default_rng(25)
    pieces = [EVIL_LINK, EVIL_IMG, "<img src=x onerror=alert(1)>", "<http://evil>", "www.evil.com", "a@evil.com",
              "`code`", "$x^2$", ":red[alert]", ":material/lock:", "**bold**", "\n# head\n", "\\[", "\u202e", "é"]
    for _ in range(300):
        s = "".join(rng.choice(pieces, size=rng.integers(1, 6)))
        out = D.inert(s, limit=200)
        tokens = [t for block in md.parse(out) for t in [block, *(block.children or [])]]
        kinds = {t.type for t in tokens}
        assert not kinds & {"link_open", "image", "html_inline", "html_block", "code_inline", "heading_open"}, (s, out)
        assert "://" not in out and "www." not in out and "@" not in out and "$" not in out and ":" not in out
    assert D.inert("gpt-4o mini, v2") == "gpt-4o mini, v2"  # ordinary names pass unchanged
    assert D.inert("x" * 100, limit=10) == "x" * 10 + "…"


# --------------------------------------------------------------------------- linear parsers on maximal input

_CAP = D.MAX_UPLOAD_BYTES


def _fill(unit: str, n: int = _CAP) -> str:
    return (unit * (n // len(unit) + 1))[:n]


ADVERSARIAL_PASTES = {
    # issue 25: 200,000 'model:' header lines took 45 s; at 5 MB, minutes
    "header lines": _fill("model: x\n", _CAP - 10) + "\nbody",
    "alternating headers": _fill("model: a\nprompt: b\n", _CAP - 10) + "\nbody",
    "newlines after a word": "x" + "\n" * (_CAP - 2) + "x",      # '^\s*---' backtracked over every line
    "blank lines of spaces": "x\n" + _fill(" \n", _CAP - 4) + "x",
    "separators only": _fill("---\n"),
    "tiny blocks": _fill("a\n---\n"),
    "one long line": _fill("word "),
    "dashes then x": "-" * (_CAP - 1) + "x",
    "one huge label": "model: " + "m" * (_CAP - 20) + "\nbody",
}


@pytest.mark.parametrize("name", list(ADVERSARIAL_PASTES))
def test_parse_pasted_is_fast_on_maximal_adversarial_input(name):
    import time

    text = ADVERSARIAL_PASTES[name]
    assert len(text) <= _CAP
    t = time.process_time()
    try:
        df, _ = D.parse_pasted(text)
        assert 1 <= len(df) <= D.MAX_RESPONSES
    except InputError as exc:
        assert len(str(exc)) < 300
    assert time.process_time() - t < 2.0, name  # measured: at most 0.9 s; before issue 25, minutes


def _csv(rows) -> bytes:
    return ("model,prompt,response\n" + "".join(rows)).encode()


ADVERSARIAL_UPLOADS = {
    "500,000 columns": ((",".join(f"c{i}" for i in range(600_000)))[:_CAP - 30] + ",model,prompt,response\n").encode(),
    "833,000 tiny rows": _csv([_fill("m,p,r\n", _CAP - 30)]),
    "400,000 models": _csv(f"m{i},p,r\n" for i in range(400_000))[:_CAP],
    "JSON lines": _fill(json.dumps({"model": "m", "prompt": "p", "response": "r"}) + "\n").encode(),
    "JSON array of empty objects": ("[" + "{}," * ((_CAP - 4) // 3) + "{}]").encode(),
    "a record of 400,000 keys": ("{" + ",".join(f'"k{i}":0' for i in range(400_000))[:_CAP - 60].rsplit(",", 1)[0]
                                 + ',"model":"m","prompt":"p","response":"r"}').encode(),
    "a 4 MB model name": _csv(["m" * 4_000_000 + ",p,r\n", "m2,p,r\n"]),
    "a 4 MB header field": ('"' + "h" * 4_000_000 + '",model,prompt,response\n').encode(),
    "one huge response": _csv(['m,p,"' + "x" * (_CAP - 40) + '"\n']),
}


@pytest.mark.parametrize("name", list(ADVERSARIAL_UPLOADS))
def test_parse_upload_is_fast_on_maximal_adversarial_input(name):
    import time

    data = ADVERSARIAL_UPLOADS[name]
    assert len(data) <= _CAP
    t = time.process_time()
    try:
        df, _ = D.parse_upload(data, "x.jsonl" if name.startswith(("JSON", "a record")) else "x.csv")
        assert 1 <= len(df) <= D.MAX_RESPONSES
    except InputError as exc:
        assert len(str(exc)) < 300
    assert time.process_time() - t < 2.0, name  # measured: at most 0.1 s; 500,000 columns took 54 s and 2 GB


def test_parsed_input_is_memoised_and_the_memo_is_bounded_by_bytes(monkeypatch):
    calls = []
    real = D._parse_pasted
    monkeypatch.setattr(D, "_parse_pasted", lambda *a: calls.append(1) or real(*a))
    text = "model: a\nTime is a river.\n---\nTime flows."
    first, _ = D.parse_pasted(text)
    first.loc[0, "response"] = "changed by the caller"
    again, _ = D.parse_pasted(text)
    assert len(calls) == 1 and again["response"].tolist() == ["Time is a river.", "Time flows."]
    with pytest.raises(InputError):
        D.parse_pasted("---\n---")
    with pytest.raises(InputError, match="no responses"):  # a bad input's message is memoised too
        D.parse_pasted("---\n---")
    assert len(calls) == 2
    # the bound is on bytes: entries go, oldest first, once their estimated sizes pass the budget
    lru = D._ByteLRU(1000, 100)
    for k in range(5):
        lru.put(str(k), k, 300)
    assert lru.bytes <= 1000 and [k for k in map(str, range(5)) if lru.get(k) is not None] == ["2", "3", "4"]
    lru.put("big", "x", 1001)
    assert lru.get("big") is None and lru.bytes <= 1000
    # the size estimate of a parsed table counts its text (an independent count of the characters)
    df, _ = D.parse_pasted("\n---\n".join("y" * 3000 + str(i) for i in range(50)))
    assert D.approx_bytes(df) >= sum(len(t) for t in df["response"])


def test_analysis_memo_is_bounded_by_bytes(monkeypatch):
    rows = [(f"m{i % 2}", "p", f"text {i}") for i in range(40)]
    df = pd.DataFrame(rows, columns=["model", "prompt", "response"])
    emb = RNG.normal(size=(40, 8)).astype(np.float32)
    calls = []
    real = D.cosine_matrix
    monkeypatch.setattr(D, "cosine_matrix", lambda e: calls.append(1) or real(e))
    monkeypatch.setattr(D, "_BASE", D._ByteLRU(10**9, 8))
    D.analyze(df, emb)
    D.analyze(df, emb, D.Config(k_clusters=2))
    assert len(calls) == 1  # a knob reuses the base
    assert 0 < D._BASE.bytes == D.approx_bytes(next(iter(D._BASE.items.values()))[0])
    assert D._BASE.bytes >= 40 * 40 * 8  # at least the similarity matrix
    monkeypatch.setattr(D, "_BASE", D._ByteLRU(40 * 40 * 8, 8))  # too small for one base: none is kept
    D.analyze(df, emb)
    D.analyze(df, emb, D.Config(k_clusters=2))
    assert len(calls) == 3 and D._BASE.bytes == 0


# --------------------------------------------------------------------------- uploads: doubled names, long labels, caps


@pytest.mark.parametrize("data,name", [
    (b"model,Model,prompt,response\na,b,p,r\n", "x.csv"),
    (b"model,prompt,response,RESPONSE\na,p,r,s\n", "x.csv"),
    (b"model, prompt ,prompt,response\na,p,q,r\n", "x.csv"),
    (b"model,prompt,response,response\na,p,r,s\n", "x.csv"),   # pandas would rename the second 'response.1'
    (json.dumps({"model": "a", "Model": "b", "prompt": "p", "response": "r"}).encode(), "x.jsonl"),
    (b'{"model": "a", "model": "b", "prompt": "p", "response": "r"}', "x.jsonl"),
    (b'[{"model": "a", "prompt": "p", "Prompt ": "q", "response": "r"}]', "x.json"),
])
def test_doubled_column_names_are_a_clear_input_error(data, name):
    with pytest.raises(InputError, match="twice|two columns"):
        D.parse_upload(data, name)


def test_other_columns_are_ignored_whatever_their_case():
    df, _ = D.parse_upload(b"n,N,model,prompt,response\n1,2,a,p,r\n", "x.csv")
    assert df.to_dict("records") == [{"model": "a", "prompt": "p", "response": "r"}]


def test_label_length_caps_at_the_boundary():
    ok = "m" * D.MAX_MODEL_CHARS
    df, _ = D.parse_upload(_csv([f"{ok},p,r\n"]), "x.csv")
    assert df["model"].item() == ok
    with pytest.raises(InputError, match=r"model name in row 2 has 101 characters; the limit is 100"):
        D.parse_upload(_csv(["a,p,r\n", f"{ok}m,p,r\n"]), "x.csv")
    D.parse_upload(_csv([f"a,{'q' * D.MAX_PROMPT_CHARS},r\n"]), "x.csv")
    with pytest.raises(InputError, match="prompt in row 1 has 1,001 characters"):
        D.parse_upload(_csv([f"a,{'q' * (D.MAX_PROMPT_CHARS + 1)},r\n"]), "x.csv")
    with pytest.raises(InputError, match=r"line 3: the model name has 101 characters"):
        D.parse_pasted(f"one\n---\nmodel: {ok}m\ntwo")
    with pytest.raises(InputError, match=r"line 1: the prompt has 1,001 characters"):
        D.parse_pasted(f"prompt: {'q' * 1001}\ntwo")


def _table(n_models=1, n_prompts=1, per_pool=1) -> pd.DataFrame:
    rows = [(f"m{m}", f"p{p}", f"r {m} {p} {k}") for m in range(n_models) for p in range(n_prompts)
            for k in range(per_pool)]
    return pd.DataFrame(rows, columns=list(D.COLUMNS))


@pytest.mark.parametrize("shape,msg", [
    (dict(n_models=D.MAX_MODELS + 1), "101 models is more than the cap of 100"),
    (dict(n_prompts=D.MAX_PROMPTS + 1), "101 prompts is more than the cap of 100"),
    (dict(per_pool=D.MAX_POOL + 1), "pool has 1,001 responses; the cap is 1,000"),
])
def test_models_prompts_and_pool_size_are_capped(shape, msg):
    with pytest.raises(InputError, match=msg):
        D.validate(_table(**shape))
    at_cap = {k: v - 1 for k, v in shape.items()}
    assert len(D.validate(_table(**at_cap))[0]) == list(at_cap.values())[0]
    # the analysis checks the same caps (issue 25: 50,000 models took 152 s; 2,000 took 34 s here)
    with pytest.raises(InputError, match=msg):
        D.analyze(_table(**shape), RNG.normal(size=(len(_table(**shape)), 4)).astype(np.float32))


def test_upload_row_and_column_caps():
    with pytest.raises(InputError, match="header: one of its names is longer than 131,072 characters"):
        D.parse_upload(('"' + "h" * 200_000 + '",model,prompt,response\n').encode(), "x.csv")
    with pytest.raises(InputError, match="more than 10,000 rows"):
        D.parse_upload(_csv(["m,p,\n"] * D.MAX_ROWS + ["m,p,r\n"]), "x.csv")
    assert len(D.parse_upload(_csv(["m,p,\n"] * (D.MAX_ROWS - 1) + ["m,p,r\n"]), "x.csv")[0]) == 1
    wide = ",".join(["model", "prompt", "response"] + [f"c{i}" for i in range(D.MAX_COLUMNS - 2)])
    with pytest.raises(InputError, match="51 columns; the limit is 50"):
        D.parse_upload((wide + "\n" + "a," * 50 + "a\n").encode(), "x.csv")
    with pytest.raises(InputError, match="more than 10,000 rows"):
        D.parse_upload(("[" + ",".join(['{"model": "m"}'] * (D.MAX_ROWS + 1)) + "]").encode(), "x.json")
    with pytest.raises(InputError, match="must be text, not a JSON object"):
        D.parse_upload(b'{"model": "m", "prompt": "p", "response": {"a": 1}}', "x.jsonl")


def test_page_refuses_too_many_models_with_a_message():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    rows = _csv(f"model {i},p,response {i}\n" for i in range(D.MAX_MODELS + 1))
    at.file_uploader(key="hm_upload").upload("many.csv", rows, "text/csv").run()
    assert not at.exception, at.exception
    assert any("101 models is more than the cap" in e.value for e in at.error)
    at.file_uploader(key="hm_upload").set_value(("long.csv", _csv(["m" * 4_000_000 + ",p,r\n", "b,p,s\n"]),
                                                 "text/csv")).run()
    assert not at.exception, at.exception
    assert any("4,000,000 characters; the limit is 100" in e.value for e in at.error)


# --------------------------------------------------------------------------- the collector: checked before any request


class _Fake(http.server.BaseHTTPRequestHandler):
    """A scripted OpenAI-compatible server on 127.0.0.1: ``plan(n)`` gives the reply to the n-th request
    (1-based) as (status, headers, body bytes, seconds between bytes); every request is recorded."""

    protocol_version = "HTTP/1.0"

    def do_POST(self):  # noqa: N802
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        srv.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status, headers, out, drip = srv.plan(len(srv.seen))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            if drip:
                import time

                for b in out:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(drip)
            else:
                self.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


def _reply(text="a reply"):
    out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
    return 200, {"Content-Type": "application/json", "Content-Length": str(len(out))}, out, 0


@pytest.fixture
def fake_server():
    servers = []

    def start(plan=lambda n: _reply(f"reply {n}")):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
        srv.daemon_threads = True
        srv.plan, srv.seen = plan, []
        srv.url = f"http://127.0.0.1:{srv.server_port}/v1"
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _cli(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = D.main(argv)
    except SystemExit as exc:  # argparse's own refusals (a non-number for --n) exit 2 with one line
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def prompts_file(tmp_path):
    path = tmp_path / "prompts.txt"
    path.write_text("Write a haiku.\nName a colour.\n")
    return path


BAD_ARGUMENTS = [
    (["--retries", "-1"], "retries must be between 0 and 10"),    # issue 25: exit 0, nothing done
    (["--retries", "1000000"], "retries must be between 0 and 10"),  # issue 25: hung
    (["--temperature", "nan"], "temperature must be a finite number"),  # issue 25: NaN was sent
    (["--temperature", "inf"], "temperature must be a finite number"),
    (["--temperature", "-0.5"], "temperature must be between 0 and 2"),
    (["--temperature", "2.5"], "temperature must be between 0 and 2"),
    (["--top-p", "0"], "top_p must be above 0"),
    (["--top-p", "1.5"], "top_p must be between 0 and 1"),
    (["--top-p", "nan"], "top_p must be a finite number"),
    (["--min-p", "-0.1"], "min_p must be between 0 and 1"),
    (["--min-p", "nan"], "min_p must be a finite number"),
    (["--max-tokens", "-5"], "max_tokens must be between 1 and 32,768"),  # issue 25: accepted
    (["--max-tokens", "0"], "max_tokens must be between 1 and 32,768"),
    (["--max-tokens", "1000000000"], "max_tokens must be between 1 and 32,768"),
    (["--n", "0"], "n must be between 1 and 1,000"),
    (["--n", "1001"], "n must be between 1 and 1,000"),
    (["--n", "abc"], "invalid int value"),
    (["--timeout", "0"], "timeout must be between"),
    (["--timeout", "nan"], "timeout must be a finite number"),
    (["--timeout", "100000"], "timeout must be between"),
    (["--base-url", "file:///etc/passwd"], "must start with http:// or https://"),  # issue 25: accepted
    (["--base-url", "ftp://127.0.0.1/v1"], "must start with http:// or https://"),
    (["--base-url", "localhost:8000/v1"], "must start with http:// or https://"),
    (["--base-url", "http:///v1"], "names no host"),
    (["--base-url", "http://127.0.0.1:99999/v1"], "invalid port"),
    (["--base-url", "http://user:pw@127.0.0.1/v1"], "user name or password"),
    (["--base-url", "http://127.0.0.1/v1 x"], "without spaces"),
    (["--model", ""], "model name is empty"),
    (["--model", "m" * 101], "at most 100 characters"),
    (["--out", "{tmp}/no/such/dir/r.csv"], "directory of --out does not exist"),  # issue 25: lost everything
    (["--out", "{tmp}"], "is a directory"),
    (["--out", "{tmp}/other.csv"], "not a responses CSV"),
    (["--prompts", "{tmp}/missing.txt"], "cannot read the prompts file"),
    (["--prompts", "{tmp}/big.txt"], "larger than 1,000,000 bytes"),     # issue 25: read whole
    (["--prompts", "/dev/zero"], "not a regular file"),                  # read_text would never end
    (["--prompts", "{tmp}/long.txt"], "prompt 2 has 1,001 characters"),
    (["--prompts", "{tmp}/empty.txt"], "no prompts"),
    (["--prompts", "{tmp}/latin1.txt"], "not UTF-8"),
    (["--prompts", "{tmp}/bad.jsonl"], "item 1: expected a string"),
    (["--api-key", "sk-test", "--no-api-key"], "not allowed with argument"),
]


@pytest.mark.parametrize("extra,msg", BAD_ARGUMENTS, ids=[" ".join(a)[:40] for a, _ in BAD_ARGUMENTS])
def test_collect_cli_refuses_each_bad_argument_before_any_request(extra, msg, fake_server, prompts_file, tmp_path,
                                                                  capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "other.csv").write_text("name,score\nx,1\n")
    (tmp_path / "big.txt").write_text("p\n" * 500_001)
    (tmp_path / "long.txt").write_text("short\n" + "q" * 1001 + "\n")
    (tmp_path / "empty.txt").write_text("\n \n")
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (tmp_path / "bad.jsonl").write_text('{"text": "no prompt key"}\n')
    srv = fake_server()
    out = tmp_path / "r.csv"
    argv = ["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file), "--n", "2",
            "--retries", "0", "--out", str(out)]
    argv += [a.replace("{tmp}", str(tmp_path)) for a in extra]  # argparse: the last of a repeated option wins
    rc, stdout, err = _cli(argv, capsys)
    assert rc == 2, (rc, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and msg in err, err
    assert srv.seen == []  # refused before the first request
    assert not out.exists() and stdout == ""


def test_collect_cli_with_good_arguments_reaches_the_server(fake_server, prompts_file, tmp_path, capsys, monkeypatch):
    # the same command line as above, unchanged: so each refusal above is the bad argument's doing
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    srv = fake_server()
    out = tmp_path / "r.csv"
    rc, stdout, err = _cli(["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file),
                            "--n", "2", "--retries", "0", "--out", str(out)], capsys)
    assert rc == 0, err
    assert json.loads(stdout) == {"rows": 4, "out": str(out)} and len(srv.seen) == 4
    sent = json.loads(srv.seen[0]["body"])
    assert sent["max_tokens"] == 512 and sent["temperature"] == 1.0 and srv.seen[0]["auth"] is None
    assert len(D.parse_upload(out.read_bytes(), "r.csv")[0]) == 4


def test_api_key_only_over_https_or_to_this_machine(fake_server, prompts_file, tmp_path, capsys, monkeypatch):
    import socket

    for url, ok in [("https://api.example.com/v1", True), ("http://localhost:8000/v1", True),
                    ("http://127.0.0.1:8000", True), ("http://127.0.0.9/v1", True), ("http://[::1]:8000/v1", True),
                    ("http://example.com/v1", False), ("http://10.0.0.5:8000/v1", False),
                    ("http://localhost.evil.example/v1", False), ("http://127.0.0.1.nip.io/v1", False),
                    ("HTTP://EXAMPLE.COM/v1", False)]:
        assert D.key_allowed(D._endpoint(url)) is ok, url
    # a key in the environment and a plain-http remote host: refused, and no connection is even attempted
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    tries = []

    def no_network(*args, **kwargs):
        tries.append(args)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "create_connection", no_network)
    argv = ["collect", "--model", "toy", "--prompts", str(prompts_file), "--n", "1", "--retries", "0",
            "--out", str(tmp_path / "r.csv")]
    rc, _, err = _cli(["collect", "--base-url", "http://example.invalid:8000/v1"] + argv[1:], capsys)
    assert rc == 2 and "refusing to send the API key over plain http" in err and err.count("\n") == 1
    assert tries == [] and "sk-secret" not in err
    # --no-api-key: the request goes out (here it fails: no network), without the key
    rc, _, err = _cli(["collect", "--base-url", "http://example.invalid:8000/v1", "--no-api-key"] + argv[1:], capsys)
    assert rc == 1 and len(tries) == 1 and not (tmp_path / "r.csv").exists()
    monkeypatch.undo()
    # to this machine over http the key goes; with --no-api-key it does not
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    srv = fake_server()
    assert _cli(["collect", "--base-url", srv.url] + argv[1:], capsys)[0] == 0
    assert _cli(["collect", "--base-url", srv.url, "--no-api-key"] + argv[1:], capsys)[0] == 0
    assert [s["auth"] for s in srv.seen] == ["Bearer sk-secret"] * 2 + [None] * 2


def test_collect_follows_no_redirect(fake_server):
    elsewhere = fake_server()
    redirect = fake_server(lambda n: (307, {"Location": elsewhere.url + "/chat/completions",
                                            "Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="HTTP 307.*redirects are not followed"):
        D.collect(redirect.url, "toy", ["q"], n=1, api_key="sk-secret", retries=3, backoff=0)
    assert len(redirect.seen) == 1 and elsewhere.seen == []  # not retried, and the key went nowhere else


@pytest.mark.parametrize("with_length", [True, False], ids=["content-length", "streamed"])
def test_collect_response_body_is_capped(fake_server, monkeypatch, with_length):
    monkeypatch.setattr(D, "RESPONSE_MAX_BYTES", 1000)
    status, headers, body, _ = _reply("x" * 5000)
    if not with_length:
        headers = {"Content-Type": "application/json"}  # HTTP/1.0: the body ends when the server closes
    srv = fake_server(lambda n: (status, headers, body, 0))
    with pytest.raises(RuntimeError, match="1,000"):
        D.collect(srv.url, "toy", ["q"], n=1, retries=3, backoff=0)
    assert len(srv.seen) == 1  # a body over the cap is final: no retry


def test_collect_retries_are_bounded_and_pauses_capped(fake_server, monkeypatch):
    sleeps = []
    monkeypatch.setattr(D.time, "sleep", sleeps.append)
    srv = fake_server(lambda n: (503, {"Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="failed after 11 tries: HTTP 503"):
        D.collect(srv.url, "toy", ["q"], n=1, retries=D.COLLECT_MAX_RETRIES, backoff=D.COLLECT_MAX_WAIT)
    assert len(srv.seen) == 11 and len(sleeps) == 10
    assert sleeps == [min(30.0 * 2 ** k, 30.0) for k in range(10)] and max(sleeps) <= D.COLLECT_MAX_WAIT
    # a client error is final: one request, no pause
    srv = fake_server(lambda n: (401, {"Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="HTTP 401"):
        D.collect(srv.url, "toy", ["q"], n=1, retries=5, backoff=1.0)
    assert len(srv.seen) == 1 and len(sleeps) == 10


def test_collect_cuts_off_a_server_that_trickles(fake_server):
    import time

    status, headers, body, _ = _reply("slow")
    srv = fake_server(lambda n: (status, headers, body, 0.05))  # ~70 bytes, 0.05 s apart: ~3.5 s in all
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="longer than 1 s"):
        D.collect(srv.url, "toy", ["q"], n=1, retries=0, timeout=1.0)
    assert time.monotonic() - t < 2.5


def test_collect_cli_keeps_what_it_received_when_a_request_fails(fake_server, prompts_file, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    srv = fake_server(lambda n: _reply(f"reply {n}") if n <= 3 else (400, {"Content-Length": "0"}, b"", 0))
    out = tmp_path / "r.csv"
    argv = ["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file), "--n", "2",
            "--out", str(out)]
    rc, _, err = _cli(argv, capsys)
    last = err.rstrip("\n").split("\n")[-1]  # after the progress bar's line: one line saying what happened
    assert rc == 1 and last.startswith("error: ") and "HTTP 400" in last and "3 response(s) saved" in last
    df, _ = D.parse_upload(out.read_bytes(), "r.csv")
    assert df["response"].tolist() == ["reply 1", "reply 2", "reply 3"]
    # a second run appends to the same responses CSV, under the one header
    srv.plan = lambda n: _reply(f"again {n}")
    assert _cli(argv, capsys)[0] == 0
    df, _ = D.parse_upload(out.read_bytes(), "r.csv")
    assert len(df) == 7 and out.read_text().count("model,prompt,response") == 1
