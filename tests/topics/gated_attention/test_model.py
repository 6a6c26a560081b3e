"""Gated attention: the layer against hand computations, the sink metrics on hand-made tensors, the data's
copy rule, the optimiser against torch's AdamW, bad inputs, the shipped store and the page."""
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import toymodels.gated_attention as M
from toymodels.topic import InputError, check_call

TINY = M.Config(n_layers=2, n_heads=2, d_model=16, seq_len=32, steps=100, batch_size=8, eval_every=20,
                eval_batch=8, ffn_mult=1, vocab=16, qk_norm=False, lr=1e-2)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _rand_params(model, scale=0.3, seed=1):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for k, p in model.params.items():
            if p.dim() >= 3 and "ln" not in k:
                p.copy_(torch.randn(p.shape, generator=g) * scale)


def _hand_layer(x, Wq, Wk, Wv, Wo, H, gate_fn):
    """Multi-head causal attention for one sequence, head by head, with explicit loops over queries."""
    T, d = x.shape
    dh = d // H
    q, k, v = x @ Wq[:, : H * dh], x @ Wk, x @ Wv
    out = torch.zeros(T, H * dh, dtype=x.dtype)
    for h in range(H):
        sl = slice(h * dh, (h + 1) * dh)
        for i in range(T):
            s = torch.stack([q[i, sl] @ k[j, sl] / math.sqrt(dh) for j in range(i + 1)])
            a = torch.exp(s - s.max())
            a = a / a.sum()
            y = sum(a[j] * v[j, sl] for j in range(i + 1))
            out[i, sl] = y * gate_fn(x[i], h)
    return out @ Wo


@pytest.mark.parametrize("variant", ["baseline", "g1_elementwise", "g1_headwise", "g1_headshared", "g1_ns_sigmoid"])
def test_gated_layer_equals_hand_computation(variant):
    cfg = replace(TINY, variant=variant, pos="learned", d_model=16, n_heads=2)
    m = M.GatedLM(cfg)
    _rand_params(m)
    torch.manual_seed(0)
    x = torch.randn(1, 1, 6, 16)
    out, _, _, _ = m.attention(0, x, torch.ones(6, 8), torch.zeros(6, 8))
    P = {k: m.params[f"0.{k}"][0].detach() for k in "qkvo"}
    H, dh = 2, 8
    Wg = P["q"][:, H * dh:]

    def gate(xi, h):
        if variant == "baseline":
            return 1.0
        if variant == "g1_headwise":
            return torch.sigmoid(xi @ Wg[:, h])
        logits = (xi @ Wg).reshape(H, dh)
        if variant == "g1_headshared":
            return torch.sigmoid(logits.mean(0))
        s = torch.sigmoid(logits[h])
        return 0.5 + 0.5 * s if variant == "g1_ns_sigmoid" else s

    want = _hand_layer(x[0, 0].double(), P["q"].double(), P["k"].double(), P["v"].double(), P["o"].double(), H,
                       lambda xi, h: gate(xi.float(), h).double() if variant != "baseline" else 1.0)
    torch.testing.assert_close(out[0, 0].double(), want, rtol=1e-4, atol=1e-5)


def test_gate_forced_open_equals_plain_attention():
    """σ → 1 (input-independent θ = +50): the gated model is exactly the ungated one with the same weights."""
    cfg = replace(TINY, pos="rope")
    gated, plain = M.GatedLM(replace(cfg, variant="g1_input_independent")), M.GatedLM(replace(cfg, variant="baseline"))
    with torch.no_grad():
        for k, p in plain.params.items():
            p.copy_(gated.params[k])
        for l in range(cfg.n_layers):
            gated.params[f"{l}.theta"].fill_(50.0)
    tok = torch.as_tensor(M.BigramBackcopy(16).sample(3, 20, np.random.default_rng(0)))
    torch.testing.assert_close(gated.forward(tok), plain.forward(tok), rtol=0, atol=1e-6)
    # and the gate really is the output multiplier: θ = -50 silences attention entirely
    with torch.no_grad():
        for l in range(cfg.n_layers):
            gated.params[f"{l}.theta"].fill_(-50.0)
    _, tr = gated.forward(tok, trace=True)
    assert float(tr["gate"][0].detach().max()) < 1e-20


def test_explicit_softmax_path_matches_sdpa():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 2, 17, 8, generator=g) for _ in range(3))
    y, a = M.explicit_attention(q, k, v)
    torch.testing.assert_close(y, F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(a.sum(-1), torch.ones(3, 2, 17))
    assert float(a.triu(1).abs().max()) == 0.0
    for v_ in ["baseline", "g1_elementwise", "g2_elementwise"]:
        m = M.GatedLM(replace(TINY, variant=v_, qk_norm=True, pos="rope"))
        _rand_params(m, 0.2)
        tok = torch.as_tensor(M.BigramBackcopy(16).sample(2, 24, np.random.default_rng(1)))
        torch.testing.assert_close(m.forward(tok, trace=True)[0], m.forward(tok), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant", list(M.VARIANTS))
@pytest.mark.parametrize("pos", ["rope", "learned"])
def test_causality(variant, pos):
    m = M.GatedLM(replace(TINY, variant=variant, pos=pos, qk_norm=variant == "g1_headwise"))
    _rand_params(m, 0.3)
    tok = torch.as_tensor(M.BigramBackcopy(16).sample(2, 30, np.random.default_rng(2)))
    t = 17
    tok2 = tok.clone()
    tok2[:, t] = (tok2[:, t] + 5) % 16
    a, b = m.forward(tok), m.forward(tok2)
    torch.testing.assert_close(a[:, :, :t], b[:, :, :t], rtol=0, atol=0)
    assert (a[:, :, t:] - b[:, :, t:]).abs().max() > 1e-4


@pytest.mark.parametrize("variant,shape", [
    ("baseline", None), ("g1_elementwise", (2, 3, 10, 4, 8)), ("g1_headwise", (2, 3, 10, 4, 1)),
    ("g1_headshared", (2, 3, 10, 4, 8)), ("g2_elementwise", (2, 3, 10, 4, 8)),
    ("g1_input_independent", (2, 3, 10, 4, 8)), ("g1_ns_sigmoid", (2, 3, 10, 4, 8))])
def test_gate_shapes(variant, shape):
    cfg = replace(TINY, variant=variant, d_model=32, n_heads=4)
    m = M.GatedLM(cfg, n_instances=2)
    tok = torch.as_tensor(M.BigramBackcopy(16).sample(3, 10, np.random.default_rng(0)))
    _, tr = m.forward(tok, trace=True)
    gate = tr["gate"][0]
    assert (gate is None) if shape is None else tuple(gate.shape) == shape
    assert tuple(tr["attn"][0].shape) == (2, 3, 4, 10, 10)
    if variant == "g1_headshared":  # the same gate for every head
        torch.testing.assert_close(gate[..., 0, :], gate[..., 3, :])
    if variant == "g1_ns_sigmoid":
        assert float(gate.detach().min()) >= 0.5
    if variant == "g1_headwise":  # one scalar per head, broadcast over d_h
        assert M.n_params(m) - M.n_params(M.GatedLM(replace(cfg, variant="baseline"))) == 2 * 32 * 4


def test_sink_metrics_on_hand_made_attention():
    T = 5
    uniform = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    sink = torch.zeros(T, T)
    sink[:, 0] = 1.0                                   # every query on <s>
    prev = torch.zeros(T, T)
    prev[0, 0] = 1
    prev[torch.arange(1, T), torch.arange(T - 1)] = 1  # previous-token head
    A = torch.stack([uniform, sink, prev])[None]       # (B=1, H=3, T, T)
    f = M.first_token_attention(A)
    floor = np.mean([1 / 2, 1 / 3, 1 / 4, 1 / 5])
    np.testing.assert_allclose(f, [floor, 1.0, 0.25], rtol=1e-6)   # prev: only query 1 looks at key 0
    assert math.isclose(M._uniform_floor(T), floor)
    # Gu et al.: alpha = mean over all T queries of A[i, 0] = (1 + 1/2 + ... + 1/5)/5 = 0.457 for uniform
    alpha_uniform = sum(1 / i for i in range(1, T + 1)) / T
    assert alpha_uniform > 0.3
    np.testing.assert_array_equal(M.sink_rate(A), [1.0, 1.0, 1.0])   # prev: alpha = 2/5 = 0.4 > 0.3 (short T)
    np.testing.assert_array_equal(M.sink_rate(A, eps=0.45), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(M.sink_rate(A, eps=0.5), [0.0, 1.0, 0.0])
    # batch averaging: one sequence sinks, one does not → 0.5
    A2 = torch.stack([sink, prev])[:, None]            # (B=2, H=1, T, T)
    np.testing.assert_allclose(M.sink_rate(A2, eps=0.5), [0.5])
    h = torch.tensor([[[[1.0, -7.0], [2.0, 3.0]]]])    # (E=1, B=1, T=2, d=2)
    assert M.massive_activation(h).tolist() == [7.0]


def test_bigram_backcopy_copy_rule_and_statistics():
    data = M.BigramBackcopy(vocab=32, n_triggers=3, dirichlet=0.1, seed=3)
    x = data.sample(400, 64, np.random.default_rng(0))
    assert (x[:, 0] == data.bos).all() and (x[:, 1:] < 32).all()
    trig = np.zeros(x.shape, bool)
    trig[:, 1:] = data.is_trigger[x[:, 1:]]
    assert not trig[:, 1].any()
    assert not (trig[:, 1:] & trig[:, :-1]).any()            # triggers never follow each other
    t_prev = trig[:, 1:-1]                                    # x_{t-1} is a trigger for t = 2..
    assert t_prev.sum() > 1000
    np.testing.assert_array_equal(x[:, 2:][t_prev], x[:, :-2][t_prev])   # the back-copy
    # triggers are the most frequent tokens of the chain's stationary distribution
    pi = np.linalg.matrix_power(data.P, 200)[0]
    np.testing.assert_allclose(pi, data.stationary, atol=1e-8)
    assert set(data.triggers) == set(np.argsort(-pi)[:3])
    # elsewhere the transitions follow P (Monte Carlo vs the matrix on the most visited row)
    prev, nxt = x[:, 1:-1][~t_prev], x[:, 2:][~t_prev]
    r = np.bincount(prev).argmax()
    emp = np.bincount(nxt[prev == r], minlength=32) / (prev == r).sum()
    assert np.abs(emp - data.P[r]).max() < 0.05
    # Bayes loss: copies cost nothing, so it is below the plain bigram entropy
    assert 0 < data.bayes_ce(x) < float((data.stationary * data.row_entropy).sum()) + 0.5
    np.testing.assert_array_equal(x, data.sample(400, 64, np.random.default_rng(0)))   # seeded


def test_adamw_matches_torch_and_per_instance_lr():
    g = torch.Generator().manual_seed(0)
    w0 = torch.randn(1, 4, 3, generator=g)
    grads = [torch.randn(1, 4, 3, generator=g) for _ in range(5)]
    ours = {"w": w0.clone().requires_grad_()}
    ref = w0.clone().requires_grad_()
    opt = torch.optim.AdamW([ref], lr=0.01, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    state = {}
    for i, gr in enumerate(grads):
        ours["w"].grad = gr.clone()
        M._adamw_step(ours, state, torch.tensor([0.01]), i + 1, 0.1)
        ref.grad = gr.clone()
        opt.step()
    torch.testing.assert_close(ours["w"], ref, rtol=1e-5, atol=1e-7)
    # two instances with different learning rates evolve independently
    two = {"w": torch.cat([w0, w0]).requires_grad_()}
    st2 = {}
    for i, gr in enumerate(grads):
        two["w"].grad = torch.cat([gr, gr])
        M._adamw_step(two, st2, torch.tensor([0.01, 0.0]), i + 1, 0.1)
    torch.testing.assert_close(two["w"][:1], ref, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(two["w"][1:], w0)


def test_training_is_seeded_and_learns():
    a = M.train(TINY)
    b = M.train(TINY)
    np.testing.assert_array_equal(a["curves"].val_loss.to_numpy(), b["curves"].val_loss.to_numpy())
    c = a["curves"]
    assert c.val_loss.iloc[-1] < c.val_loss.iloc[0] - 1.0
    assert c.gate_mean.iloc[0] == pytest.approx(0.5, abs=0.02)
    # batched instances with the same lr are identical to a single run
    e = M.train(replace(TINY, steps=50), lrs=[TINY.lr, TINY.lr])
    np.testing.assert_allclose(e["final"]["loss"][0], e["final"]["loss"][1], rtol=1e-6)


@pytest.mark.parametrize("kw,msg", [
    ({"d_model": 48, "n_heads": 5}, "not divisible"), ({"seq_len": 512}, "seq_len must be between"),
    ({"variant": "g7"}, "variant must be one of"), ({"lr": 1.0}, "lr must be between"),
    ({"pos": "alibi"}, "pos must be"), ({"lr": float("nan")}, "finite"),
])
def test_bad_configs_are_clear_errors(kw, msg):
    with pytest.raises(InputError, match=msg):
        check_call(M.layer_demo, replace(M.DEFAULT, **kw))     # the entry point's bounds, then its structure


@pytest.mark.parametrize("call,msg", [
    (lambda: M.compare(replace(M.DEFAULT, steps=2000, batch_size=64, seq_len=256, d_model=128, n_layers=4),
                       ["baseline"]), "compute budget"),
    (lambda: M.compare(TINY, []), "between 1 and"),
    (lambda: M.compare(TINY, ["g7"]), "must be one of"),
    (lambda: M.compare(replace(TINY, steps=5000), ["baseline"]), "steps must be between"),
    (lambda: M.lr_sweep(TINY, [5.0]), "between"),
    (lambda: M.lr_sweep(M.DEFAULT, [1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2]), "compute budget"),
    (lambda: M.gate_midway(TINY, 0), "between"),
    (lambda: M.gate_midway(replace(TINY, steps=100), 150), "between step 1 and step 99"),
    (lambda: M.search_config("Z"), "unknown search configuration"),
])
def test_bounded_entry_points_refuse_with_a_message(call, msg):
    with pytest.raises(InputError, match=msg):
        call()


def test_no_thread_changes_in_the_library():
    """Issue 14 finding 6: the library never changes torch's process-wide thread count."""

    for path in Path(M.__file__).parent.glob("*.py"):
        assert "set_num_threads" not in path.read_text(), path
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        M.layer_demo(M.DEFAULT)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(n)


def test_realised_bayes_ce_against_a_hand_loop():
    """The realised Bayes CE equals -mean log p(x_t | x_{t-1}, x_{t-2}) computed token by token, and its mean
    over many sequences approaches the expected entropy (plain Bigram-Backcopy)."""
    for q in (0.0, 0.15):
        data = M.BigramBackcopy(vocab=12, n_triggers=2, dirichlet=0.3, seed=5, delimiter=q)
        x = data.sample(30, 25, np.random.default_rng(4))
        n_non = len(data.non_triggers)
        total = 0.0
        for row in x:
            total += math.log(n_non)
            for t in range(2, len(row)):
                prev, cur = row[t - 1], row[t]
                if q and prev == data.delim:
                    total += math.log(n_non)
                elif data.is_trigger[prev]:
                    assert cur == row[t - 2]
                elif q and cur == data.delim:
                    total -= math.log(q)
                else:
                    total -= math.log((1 - q) * data.P[prev, cur])
        assert data.bayes_ce(x) == pytest.approx(total / (x.shape[0] * (x.shape[1] - 1)), rel=1e-12)
    data = M.BigramBackcopy(vocab=16, seed=2)
    big = data.sample(4000, 40, np.random.default_rng(0))
    assert data.bayes_ce(big) == pytest.approx(data.expected_entropy(big), abs=0.02)


@pytest.mark.parametrize("copy_rule, after", [("induction", "restart"), ("back", "bigram"), ("induction", "bigram")])
def test_copy_and_delimiter_rules_and_their_bayes_ce(copy_rule, after):
    """copy_rule='induction': after its first occurrence a trigger is always followed by the same token (what
    followed it first); after_delimiter='bigram': the token after a delimiter is a bigram draw from the token
    before it. The realised Bayes CE matches a token-by-token hand loop, and log_prob is the sampler's law: over
    short sequences its probabilities sum to one and match Monte Carlo frequencies."""
    for q in (0.0, 0.15):
        data = M.BigramBackcopy(vocab=12, n_triggers=2, dirichlet=0.3, seed=5, delimiter=q, copy_rule=copy_rule,
                                after_delimiter=after)
        x = data.sample(30, 25, np.random.default_rng(4))
        n_non, total, copies = len(data.non_triggers), 0.0, 0
        for row in x:
            total += math.log(n_non)
            first = {}
            for t in range(2, len(row)):
                prev, cur = row[t - 1], row[t]
                if q and prev == data.delim:
                    assert cur != data.delim
                    total -= math.log(data.P[row[t - 2], cur]) if after == "bigram" else -math.log(n_non)
                elif data.is_trigger[prev] and copy_rule == "back":
                    assert cur == row[t - 2]
                    copies += 1
                elif data.is_trigger[prev]:
                    if prev in first:
                        assert cur == first[prev]
                        copies += 1
                    else:
                        assert cur != data.delim
                        first[prev] = cur
                        total -= math.log(data.P[prev, cur])
                elif q and cur == data.delim:
                    total -= math.log(q)
                else:
                    total -= math.log((1 - q) * data.P[prev, cur])
        assert copies > 50
        assert data.bayes_ce(x) == pytest.approx(total / (x.shape[0] * (x.shape[1] - 1)), rel=1e-12)
    data = M.BigramBackcopy(vocab=6, n_triggers=2, dirichlet=0.5, seed=1, delimiter=0.2, copy_rule=copy_rule,
                            after_delimiter=after)
    n = 100_000
    x = data.sample(n, 6, np.random.default_rng(0))
    seqs, counts = np.unique(x, axis=0, return_counts=True)
    p = np.exp(data.log_prob(seqs).sum(1))
    assert 0.99 < p.sum() <= 1 + 1e-9                     # almost all the mass is seen, none is invented
    big = p > 1e-3
    z = (counts[big] / n - p[big]) / np.sqrt(p[big] * (1 - p[big]) / n)
    assert np.abs(z).max() < 5
    with pytest.raises(M.InputError, match="copy_rule"):
        check_call(M.layer_demo, M.Config(copy_rule="nope"))
    with pytest.raises(M.InputError, match="after_delimiter"):
        check_call(M.layer_demo, M.Config(after_delimiter="nope"))


def test_delimiter_data_frequencies():
    """Monte Carlo: a delimiter follows a non-trigger with probability q, and the token after it is uniform over
    the non-triggers (never a trigger, never a copy)."""
    q = 0.2
    data = M.BigramBackcopy(vocab=16, n_triggers=3, seed=1, delimiter=q)
    x = data.sample(3000, 40, np.random.default_rng(3))
    prev, cur = x[:, 1:-1], x[:, 2:]
    nontrig = (prev < 16) & ~data.is_trigger[np.minimum(prev, 15)]
    assert (cur[nontrig] == data.delim).mean() == pytest.approx(q, abs=0.01)
    trig = (prev < 16) & data.is_trigger[np.minimum(prev, 15)]
    assert not (cur[trig] == data.delim).any()
    after = cur[prev == data.delim]
    assert not data.is_trigger[after].any()
    counts = np.bincount(after, minlength=16)[data.non_triggers]
    assert counts.min() > 0.7 * counts.mean() and counts.max() < 1.3 * counts.mean()


def test_massive_stats_on_a_hand_made_residual():
    h = torch.full((2, 3, 5, 4), 0.5)        # E=2, B=3, T=5, d=4: median |h| = 0.5
    h[0, 1, 3, 2] = -40.0                     # instance 0: the largest entry at position 3 (dim 2)
    h[0, 2, 0, 1] = 7.0                       # ... and the first token's largest is 7
    h[1, 0, 0, 3] = 9.0                       # instance 1: the largest entry at position 0
    tokens = torch.arange(15).reshape(3, 5)
    s = M.massive_stats(h, tokens)
    np.testing.assert_allclose(s["max"], [40.0, 9.0])
    np.testing.assert_allclose(s["median"], [0.5, 0.5])
    np.testing.assert_allclose(s["ratio"], [80.0, 18.0])
    assert s["pos"].tolist() == [3, 0] and s["dim"].tolist() == [2, 3] and s["token"].tolist() == [8, 0]
    np.testing.assert_allclose(s["first"], [7.0, 9.0])




def test_head_specific_dormancy_law_and_its_bayes_ce():
    """Head-specific dormancy: after an A token the next token is drawn from P_A of the token before it, after a
    B token from P_B of the token two before it. The realised Bayes CE matches a token-by-token hand loop, log_prob
    is the sampler's law (probabilities over all short sequences sum to one and match Monte Carlo frequencies), and
    needed_key names the key each query needs."""
    data = M.HeadSpecificDormancy(vocab=12, dirichlet=0.3, seed=5)
    assert set(data.set_a) | set(data.set_b) == set(range(12)) and not set(data.set_a) & set(data.set_b)
    x = data.sample(30, 25, np.random.default_rng(4))
    assert (x[:, 0] == data.bos).all() and (x[:, 1:] < 12).all()
    total = 0.0
    for row in x:
        total += 3 * math.log(12)
        for t in range(4, len(row)):
            if row[t - 1] in data.set_a:
                total -= math.log(data.P_a[row[t - 2], row[t]])
            else:
                total -= math.log(data.P_b[row[t - 3], row[t]])
    assert data.bayes_ce(x) == pytest.approx(total / (x.shape[0] * (x.shape[1] - 1)), rel=1e-12)
    keys = data.needed_key(x)
    i = 7
    assert keys[0, i] == (i - 1 if x[0, i] in data.set_a else i - 2) and (keys[:, :3] == -1).all()
    small = M.HeadSpecificDormancy(vocab=4, dirichlet=0.5, seed=1)
    n = 100_000
    xs = small.sample(n, 7, np.random.default_rng(0))
    seqs, counts = np.unique(xs, axis=0, return_counts=True)
    p = np.exp(small.log_prob(seqs).sum(1))
    assert 0.99 < p.sum() <= 1 + 1e-9
    big = p > 1e-3
    z = (counts[big] / n - p[big]) / np.sqrt(p[big] * (1 - p[big]) / n)
    assert np.abs(z).max() < 5
    many = data.sample(4000, 40, np.random.default_rng(1))
    assert data.bayes_ce(many) == pytest.approx(data.expected_entropy(many), abs=0.02)
    np.testing.assert_array_equal(x, data.sample(30, 25, np.random.default_rng(4)))     # seeded


def test_the_task_is_chosen_by_the_config():
    cfg = replace(TINY, task="head_specific", vocab=12)
    assert isinstance(M.make_data(cfg), M.HeadSpecificDormancy)
    assert isinstance(M.make_data(TINY), M.BigramBackcopy)
    with pytest.raises(InputError, match="task must be one of"):
        check_call(M.layer_demo, replace(TINY, task="nope"))
    res = M.train(replace(cfg, steps=60, eval_every=30))
    assert res["bayes_ce"] == pytest.approx(M.make_data(cfg).bayes_ce(
        M.make_data(cfg).sample(cfg.eval_batch, cfg.seq_len + 1, np.random.default_rng([cfg.data_seed, 99]))))
