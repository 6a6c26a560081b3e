"""Artificial Hivemind: a diversity analyzer for sets of LM responses, within and across models."""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import diversity as D

paper = ui.paper_header("hivemind")
ui.claim_box(paper, extra="The paper embeds 50 sampled responses per (model, query) with OpenAI "
             "`text-embedding-3-small` over 100 open-ended queries and 25+ models. Random pairs of responses to "
             "*different* queries fall at 0.1–0.2 (its null floor).")

# --------------------------------------------------------------------------- the measurements
st.header("The measurements")
c1, c2 = st.columns(2)
with c1:
    st.markdown("**Intra-model repetition**: per model *m* and prompt *q*, the mean over its *n* responses' pairs, "
                "diagonal excluded; then the share of pools above a threshold τ (the paper: 79% above 0.8).")
    st.latex(r"\bar s_{m,q}=\frac{2}{n(n-1)}\sum_{i<j}\cos(e_i,e_j)")
    st.latex(r"\text{share}(\tau)=\frac{\#\{(m,q):\ \bar s_{m,q}>\tau\}}{\#\{(m,q)\}}")
    st.markdown("**Inter-model homogeneity**: all cross pairs per prompt, then averaged over the prompts *Q* both "
                "models answered (the paper: 0.71–0.82).")
    st.latex(r"\bar s_{a,b}=\frac{1}{|Q|}\sum_{q\in Q}\frac{1}{n_a n_b}\sum_{i\in a}\sum_{j\in b}\cos(e_i,e_j)")
with c2:
    st.markdown("**Vendi score**: the effective number of distinct responses (1 = all identical, *n* = all "
                "orthogonal), from the eigenvalues of the similarity matrix.")
    st.latex(r"\mathrm{VS}=\exp\Big(-\sum_i \lambda_i\log\lambda_i\Big),\quad \lambda=\mathrm{eig}\big(K/n\big)")
    st.latex(r"K_{ij}=\cos(e_i,e_j)")
    st.markdown("**Cluster mixing**: for each response, the number of distinct models among its *N* nearest "
                "neighbours (same prompt, itself excluded), averaged over responses (the paper: ~8 models among "
                "the top 50 of 25 × 50 pooled responses).")
    st.markdown("**Null floor**: mean similarity of responses to *different* prompts (the paper: 0.1–0.2).")
with st.expander("Lexical metrics, embedder and implementation details"):
    st.markdown(
        f"* **Embedder:** {D.EMBEDDER}; vectors are L2-normalised, so the similarity matrix is one product "
        "$EE^\\top$. The paper uses OpenAI `text-embedding-3-small`: absolute levels differ between embedders "
        "(an independent replication with MiniLM found a different-prompt floor of 0.099), so compare our "
        "numbers with each other and with our own null floor rather than with the paper's 0.8 literally.\n"
        f"* **Self-BLEU** (Zhu et al. 2018): each response is the hypothesis, the rest of its (model, prompt) "
        f"pool the references, averaged; **sacrebleu {D.SACREBLEU_VERSION}** `BLEU(tokenize='13a', "
        "smooth_method='exp', max_ngram_order=4, effective_order=True)`, scale 0–100. Computed with one n-gram "
        "pass per response (identical to the per-hypothesis `sentence_score` loop, see the tests).\n"
        "* **distinct-n** (Li et al. 2016): unique n-grams ÷ total n-grams in a pool (lower-cased word tokens). "
        "**TTR** = types ÷ tokens per response; **MATTR** = mean TTR over sliding windows (length-robust). "
        "**Compression ratio** = UTF-8 bytes ÷ gzip bytes of the pool (higher = more repetitive).\n"
        f"* **Caps:** at most {D.MAX_RESPONSES:,} responses, each truncated to {D.MAX_CHARS:,} characters; "
        f"uploads up to {D.MAX_UPLOAD_BYTES // 1_000_000} MB.")

# --------------------------------------------------------------------------- input
st.header("Your responses")
# keep pasted text alive while the text area is hidden (Streamlit drops the state of unrendered widgets)
if "hm_paste" in st.session_state:
    st.session_state["hm_paste"] = st.session_state["hm_paste"]
SOURCES = ["Example set (illustrative)", "Paste responses", "Upload CSV / JSONL"]
source = st.radio("Input", SOURCES, key="hm_source", bind="query-params", horizontal=True)
df, notes = None, []
try:
    if source == SOURCES[0]:
        df = D.load_example()
        st.caption("**Illustrative text written by this project, not model output.** Four made-up 'models' × "
                   "three prompts × four responses. It is arranged so that the *metaphor* prompt is a hivemind "
                   "(almost every answer is 'time is a river'), the *Saturday* prompt is diverse, and the *motto* "
                   "prompt has each model repeat itself while models differ. One motto paraphrases the slogan "
                   "the paper quotes from qwen-max and qwen-plus ('Empower Your Journey: Unlock Success, Build "
                   "Wealth, Transform Yourself.').")
    elif source == SOURCES[1]:
        text = st.text_area("Responses, separated by a line with `---`. Optional `model: NAME` / `prompt: TEXT` "
                            "lines at the start of a block apply to it and later blocks.", key="hm_paste",
                            height=220, placeholder="model: my-model\nprompt: Write a metaphor about time.\n"
                            "Time is a river.\n---\nTime is a weaver.\n---\nmodel: other-model\nTime is a thief.")
        if text.strip():
            df, notes = D.parse_pasted(text)
        else:
            st.info("Paste at least two responses to analyse them.")
    else:
        up = st.file_uploader("CSV or JSONL with columns model, prompt, response (UTF-8, ≤ 5 MB, "
                              f"≤ {D.MAX_RESPONSES:,} responses)", type=["csv", "jsonl", "json", "txt"],
                              key="hm_upload")
        st.caption("Gather your own: `python -m toymodels hivemind collect --base-url http://localhost:8000/v1 "
                   "--model NAME --prompts prompts.txt --n 20 --temperature 1.0` samples any OpenAI-compatible "
                   "endpoint (vLLM, Ollama, llama.cpp server) into this CSV format; add `--min-p 0.1 --top-p 1.0 "
                   "--temperature 2.0` for the paper's diversity-oriented decoding.")
        if up is not None:  # keep the file when the visitor switches input and comes back
            st.session_state["hm_upload_saved"] = (up.name, up.getvalue())
        saved = st.session_state.get("hm_upload_saved")
        if up is None and saved is not None:
            c_a, c_b = st.columns([4, 1])
            c_a.caption(f"Analysing the file uploaded earlier: `{saved[0]}`.")
            if c_b.button("Forget it", key="hm_upload_forget"):
                st.session_state.pop("hm_upload_saved", None)
                saved = None
        if saved is not None:
            df, notes = D.parse_upload(saved[1], saved[0])
        else:
            st.info("Upload a file to analyse it.")
except D.InputError as exc:
    st.error(str(exc), icon=":material/error:")
    df = None
for note in notes:
    st.warning(note)
if df is not None and len(df) < 2:
    st.error("Only one response: similarity needs at least two responses (no pairs to compare).")
    df = None
if df is None:
    ui.device_caption()
    st.stop()

# --------------------------------------------------------------------------- knobs
with st.expander("Analysis settings", expanded=False):
    k1, k2, k3, k4 = st.columns(4)
    threshold = k1.slider("Threshold τ for 'a hivemind pool'", 0.0, 1.0, 0.8, 0.01, key="hm_threshold",
                          bind="query-params", help="The paper counts queries whose mean similarity exceeds 0.8.")
    k = k2.number_input("k-means clusters", 1, 12, 4, key="hm_k", bind="query-params")
    nn = k3.number_input("Neighbours N (mixing)", 1, 100, 50, key="hm_nn", bind="query-params",
                         help="The paper plots N = 1…50 over 1,250 pooled responses.")
    window = k4.number_input("MATTR window (tokens)", 5, 200, 25, key="hm_mattr", bind="query-params")
    levels = st.multiselect("Similarity levels for the 'what does it look like' strip",
                            [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95], [0.3, 0.5, 0.7, 0.8, 0.9],
                            key="hm_levels", bind="query-params", max_selections=8)
cfg = D.Config(threshold=float(threshold), k_clusters=int(k), neighbours=int(nn), mattr_window=int(window),
               levels=tuple(float(x) for x in levels) or (0.8,))

try:
    emb = ui.compute(D.embed_texts, df["response"].tolist(), label="Embedding responses with MiniLM…")
    res = ui.compute(D.analyze, df, emb, cfg, label="Analysing…")
except D.InputError as exc:
    st.error(str(exc))
    st.stop()
s, per_pool, per_prompt, inter = res["summary"], res["per_pool"], res["per_prompt"], res["inter"]

# --------------------------------------------------------------------------- headline metrics
st.header("What we measure")
m = st.columns(5)
m[0].metric("Intra-model similarity", f"{s['intra_model_similarity']:.3f}" if s["intra_model_similarity"]
            is not None else "n/a", help="Mean over (model, prompt) pools of the mean pairwise cosine.")
m[1].metric(f"Pools above τ = {s['threshold']:.2f}", f"{100 * s['share_pools_above_threshold']:.0f}%"
            if s["share_pools_above_threshold"] is not None else "n/a", help="Paper: 79% above 0.8.")
m[2].metric("Inter-model similarity", f"{s['inter_model_similarity']:.3f}" if s["inter_model_similarity"]
            is not None else "n/a (one model)", help="Paper: 0.71–0.82.")
m[3].metric("Null floor (different prompts)", f"{s['null_pair_similarity']:.3f}" if s["null_pair_similarity"]
            is not None else "n/a (one prompt)", help="Paper: 0.1–0.2 with its embedder.")
m[4].metric("Self-BLEU (pools)", f"{s['self_bleu']:.1f}" if s["self_bleu"] is not None else "n/a",
            help="0–100; higher = more lexical overlap.")
st.caption(f"{s['n_responses']} responses · {s['n_models']} model(s) · {s['n_prompts']} prompt(s) · "
           f"{s['n_pools']} pool(s) with ≥ 2 responses.")

table = per_prompt[["prompt", "n", "n_models", "intra_similarity", "cross_model_similarity", "pooled_similarity",
                    "vendi", "self_bleu", "distinct_2", "compression_ratio"]]
st.dataframe(table, hide_index=True, width="stretch", column_config={
    "prompt": st.column_config.TextColumn("Prompt", width="large"),
    "intra_similarity": st.column_config.NumberColumn("Intra-model sim.", format="%.3f"),
    "cross_model_similarity": st.column_config.NumberColumn("Cross-model sim.", format="%.3f"),
    "pooled_similarity": st.column_config.NumberColumn("All pairs sim.", format="%.3f"),
    "vendi": st.column_config.NumberColumn("Vendi (of n)", format="%.2f"),
    "self_bleu": st.column_config.NumberColumn("Self-BLEU", format="%.1f"),
    "distinct_2": st.column_config.NumberColumn("distinct-2", format="%.3f"),
    "compression_ratio": st.column_config.NumberColumn("gzip ratio", format="%.2f")})

with st.expander("Lexical metrics per (model, prompt) pool", expanded=False):
    lx = st.columns(6)
    lx[0].metric("distinct-1 (all)", f"{s['distinct_1']:.3f}")
    lx[1].metric("distinct-2 (all)", f"{s['distinct_2']:.3f}")
    lx[2].metric("distinct-3 (all)", f"{s['distinct_3']:.3f}")
    lx[3].metric("TTR (mean/response)", f"{s['ttr_mean']:.3f}")
    lx[4].metric(f"MATTR (w = {cfg.mattr_window})", f"{s['mattr_mean']:.3f}")
    lx[5].metric("gzip ratio (all)", f"{s['compression_ratio']:.2f}")
    st.dataframe(per_pool.drop(columns=["above_threshold"]), hide_index=True, width="stretch", column_config={
        "prompt": st.column_config.TextColumn("Prompt", width="medium"),
        **{c: st.column_config.NumberColumn(c, format="%.3f") for c in
           ["intra_similarity", "vendi", "distinct_1", "distinct_2", "distinct_3", "ttr_pooled", "mattr_mean",
            "compression_ratio"]},
        "self_bleu": st.column_config.NumberColumn("self_bleu", format="%.1f"),
        "mean_words": st.column_config.NumberColumn("mean_words", format="%.1f")})
    st.caption("Lower distinct-n and TTR, higher Self-BLEU and gzip ratio = more lexical repetition. MATTR falls "
               "back to TTR for responses shorter than its window.")

long = per_prompt.melt(id_vars=["prompt"], value_vars=["intra_similarity", "cross_model_similarity"],
                       var_name="measure", value_name="similarity").dropna()
long["measure"] = long["measure"].map({"intra_similarity": "within a model", "cross_model_similarity":
                                       "across models"})
bars = alt.Chart(long).mark_bar().encode(
    y=alt.Y("prompt:N", title=None, axis=alt.Axis(labelLimit=320)),
    yOffset="measure:N",
    x=alt.X("similarity:Q", title="mean cosine similarity", scale=alt.Scale(domain=[0, 1])),
    color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="top")),
    tooltip=["prompt", "measure", alt.Tooltip("similarity:Q", format=".3f")])
rules = [alt.Chart(pd.DataFrame({"x": [s["threshold"]], "label": [f"τ = {s['threshold']:.2f}"]})).mark_rule(
    strokeDash=[4, 3], color="#E45756").encode(x="x:Q", tooltip=["label"])]
if s["null_pair_similarity"] is not None:
    rules.append(alt.Chart(pd.DataFrame({"x": [s["null_pair_similarity"]], "label": ["our null floor "
                                                                                       "(different prompts)"]}))
                 .mark_rule(strokeDash=[2, 2], color="#888").encode(x="x:Q", tooltip=["label"]))
st.altair_chart(alt.layer(bars, *rules).properties(title="Per prompt: within-model vs across-model similarity "
                                                   "(red: τ; grey: null floor)", height=140 + 70 * len(per_prompt)),
                width="stretch")

if source == SOURCES[0] and len(per_prompt) == 3:
    pp = per_prompt.set_index("prompt")
    met, sat, mot = (pp.loc[next(p for p in pp.index if w in p)] for w in ("metaphor", "Saturday", "motto"))
    st.markdown(f"**Reading it.** On the *metaphor* prompt, responses from *different* models are as similar as "
                f"responses from the same model ({met['cross_model_similarity']:.2f} vs "
                f"{met['intra_similarity']:.2f}): the hivemind pattern. On the *motto* prompt each model repeats "
                f"itself ({mot['intra_similarity']:.2f}) but models differ ({mot['cross_model_similarity']:.2f}): "
                f"repetition without homogeneity. The *Saturday* prompt stays near the null floor "
                f"({sat['intra_similarity']:.2f} vs {s['null_pair_similarity']:.2f}). With MiniLM these levels "
                "sit lower than the paper's 0.8 line; compare against the null floor of the same embedder.")

# --------------------------------------------------------------------------- the paper's figures, on our data
st.header("The paper's pictures, on this data")
left, right = st.columns(2)
with left:
    st.subheader("Similarity of one prompt's responses")
    prompt_names = per_prompt["prompt"].tolist()
    chosen = st.selectbox("Prompt", prompt_names, key="hm_prompt", bind="query-params")
    pi = prompt_names.index(chosen) if chosen in prompt_names else 0
    H, hidx = np.asarray(res["heat"][pi]), np.asarray(res["heat_index"][pi])
    order = np.argsort(df["model"].to_numpy()[hidx], kind="stable")
    lab = [f"{df['model'].iat[r]} #{n}" for n, r in enumerate(hidx)]
    cells = pd.DataFrame([{"row": lab[a], "col": lab[b], "similarity": float(H[a, b]),
                           "text_row": df["response"].iat[hidx[a]][:160], "text_col": df["response"].iat[hidx[b]][:160]}
                          for a in order for b in order])
    sort = [lab[a] for a in order]
    st.altair_chart(alt.Chart(cells).mark_rect().encode(
        x=alt.X("col:N", sort=sort, title=None, axis=alt.Axis(labels=len(sort) <= 40)),
        y=alt.Y("row:N", sort=sort, title=None, axis=alt.Axis(labels=len(sort) <= 40)),
        color=alt.Color("similarity:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="cosine"),
        tooltip=["row", "col", alt.Tooltip("similarity:Q", format=".3f"), "text_row", "text_col"]).properties(
        height=520), width="stretch")
    if len(hidx) < int(per_prompt["n"].iat[pi]):
        st.caption(f"Showing the first {len(hidx)} of {int(per_prompt['n'].iat[pi])} responses.")
with right:
    st.subheader("Inter-model similarity (Fig. 6 shape)")
    if inter.empty:
        st.info("No model answered a prompt more than once or alongside another model: nothing to compare.")
    names = list(dict.fromkeys(inter["model_a"].astype(str).tolist()))
    pos = {n: i for i, n in enumerate(names)}
    tri = inter.loc[np.array([pos[a] >= pos[b] for a, b in zip(inter["model_a"], inter["model_b"])], dtype=bool)]
    tri = tri.copy()
    tri["kind"] = np.where(tri["model_a"] == tri["model_b"], "within (diagonal)", "across")
    base = alt.Chart(tri).encode(x=alt.X("model_b:N", sort=names, title=None),
                                 y=alt.Y("model_a:N", sort=names, title=None))
    st.altair_chart((base.mark_rect().encode(
        color=alt.Color("similarity:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]), title="mean cosine"),
        tooltip=["model_a", "model_b", "kind", alt.Tooltip("similarity:Q", format=".3f"), "n_prompts"])
        + base.mark_text(fontSize=12).encode(text=alt.Text("similarity:Q", format=".2f"),
                                             color=alt.condition("datum.similarity > 0.6", alt.value("white"),
                                                                 alt.value("black"))))
        .properties(height=520), width="stretch")
    st.caption("Lower triangle: mean over all cross pairs per prompt, averaged over prompts (the paper's code "
               "pools the pairs of all prompts, which is the same when every pool has the same size). Diagonal: "
               "the within-model pool mean without self-pairs (the paper's diagonal also counts the n self-pairs "
               "of similarity 1). Paper's off-diagonal range: 0.71–0.82.")

l2, r2 = st.columns(2)
with l2:
    st.subheader("Pools by similarity bin (Fig. 4 shape)")
    bins = D.similarity_bins(per_pool)
    if bins.empty:
        st.info("No (model, prompt) pool has two or more responses.")
    st.altair_chart(alt.Chart(bins).mark_rect().encode(
        x=alt.X("bin:N", title="mean similarity of a (model, prompt) pool", sort=None),
        y=alt.Y("model:N", title=None),
        color=alt.Color("percent:Q", scale=alt.Scale(scheme="oranges", domain=[0, 100]), title="% of prompts",
                        legend=alt.Legend(orient="right")),
        tooltip=["model", "bin", alt.Tooltip("percent:Q", format=".0f"), "count"]).properties(
        height=160 + 36 * bins["model"].nunique()),
        width="stretch")
with r2:
    st.subheader("Cluster mixing (Fig. 8 shape)")
    mix = res["mixing"]
    if len(mix):
        mean_mix = mix.groupby("N", as_index=False)["distinct_models"].mean().assign(prompt="mean over prompts")
        st.altair_chart(alt.Chart(pd.concat([mix, mean_mix])).mark_line(point=True).encode(
            x=alt.X("N:Q", title="N nearest neighbours"),
            y=alt.Y("distinct_models:Q", title="distinct models among them"),
            color=alt.Color("prompt:N", title=None, legend=alt.Legend(labelLimit=400, orient="bottom",
                                                                      direction="vertical")),
            tooltip=["prompt", "N", alt.Tooltip("distinct_models:Q", format=".2f")]).properties(
            height=300 + 22 * mix["prompt"].nunique()),
            width="stretch")
        st.caption(f"With {s['n_models']} model(s) the curve cannot exceed {s['n_models']}; the paper pools 25 "
                   "models × 50 responses and finds ~8 distinct models among the top 50.")

st.subheader("Map of all responses (PCA of the embeddings)")
pca = res["pca"].assign(text=lambda d: d["response"].str.slice(0, 220))
st.altair_chart(alt.Chart(pca).mark_point(filled=True, size=90, opacity=0.8).encode(
    x=alt.X("x:Q", title="PC 1"), y=alt.Y("y:Q", title="PC 2"),
    color=alt.Color("model:N"), shape=alt.Shape("prompt:N", legend=alt.Legend(labelLimit=300, direction="vertical")),
    tooltip=["model", "prompt", "cluster", "text"]).properties(height=420).interactive(), width="stretch")
st.markdown(f"**k-means clusters** (k = {cfg.k_clusters}, scikit-learn, `random_state = {cfg.seed}`), each with "
            "the response nearest its centre:")
st.dataframe(res["clusters"], hide_index=True, width="stretch", column_config={
    "representative": st.column_config.TextColumn("Representative response", width="large")})

# --------------------------------------------------------------------------- what does 0.8 look like
st.header("What does a similarity of 0.8 look like?")
st.caption("For each level, the pair of responses to the same prompt whose similarity is closest to it, taken "
           "from the loaded data. The paper's calibration examples (App. Tables 13–15): a 30-word essay pair at "
           "0.840, wedding vows 0.819–0.965, measured with its embedder.")
for row in res["strip"].itertuples():
    with st.container(border=True):
        st.markdown(f"**≈ {row.level:.2f}** → actual **{row.similarity:.3f}** · prompt: *{row.prompt}*")
        a, b = st.columns(2)
        a.markdown(f"`{row.model_i}`  \n{row.response_i}")
        b.markdown(f"`{row.model_j}`  \n{row.response_j}")

# --------------------------------------------------------------------------- reproduce
st.header("Reproduce")
ex = ui.compute(D.analyze, D.load_example(), ui.compute(D.embed_texts, D.load_example()["response"].tolist(),
                                                        label="Embedding the example set…"),
                D.DEFAULT_CONFIG, label="Analysing the example set…")["summary"]
fixture = D.vendi_score(np.array([[1, .9, 0], [.9, 1, 0], [0, 0, 1]]))
ui.reproduce_panel([
    {"quantity": "Vendi score of [[1,.9,0],[.9,1,0],[0,0,1]]", "ours": fixture, "paper": D.PAPER["vendi_fixture"],
     "note": "vendi-score README; checks our eigenvalue entropy"},
    {"quantity": "Share of (model, prompt) pools with mean similarity > 0.8", "ours": ex["share_pools_above_threshold"],
     "paper": D.PAPER["share_above_0.8"], "note": "illustrative example set; paper: 25 models × 100 queries × 50"},
    {"quantity": "Inter-model mean similarity", "ours": ex["inter_model_similarity"], "paper": "0.71–0.82",
     "note": "example set (mixes a hivemind and a diverse prompt)"},
    {"quantity": "Null floor: responses to different prompts", "ours": ex["null_pair_similarity"],
     "paper": "0.1–0.2", "note": "MiniLM vs text-embedding-3-small"},
    {"quantity": f"Distinct models among {ex['mixing_N']} nearest neighbours", "ours": ex["mixing_at_N"],
     "paper": "~8 of 25 (top-50)", "note": "example set has 4 models, 16 responses per prompt"},
], verdict="The Vendi fixture and the null floor match. The other rows measure text we wrote to illustrate the "
   "metrics, not real model samples, so they cannot confirm or refute the paper's 79% or 0.71–0.82: load real "
   "samples (e.g. 50 per model from `collect`) to test the claim on your own models.", reproduced=None)
st.caption("CLI: `python -m toymodels reproduce hivemind --quick --out results/` prints these as JSON and writes "
           "the per-pool, per-prompt, inter-model and per-pair tables as CSV.")

# --------------------------------------------------------------------------- sweep
st.header("Sweep")
tab_n, tab_t = st.tabs(["Responses per pool n", "Threshold τ"])
with tab_n:
    st.markdown("Which numbers can be compared between studies that drew different numbers of samples? Each "
                "(model, prompt) pool is subsampled to *n* responses (seeded, several draws) and the metrics are "
                "averaged. The paper draws n = 50.")
    max_pool = int(per_pool["n"].max())
    if max_pool < 3:
        st.info("Every pool has at most two responses: nothing to sweep.")
    else:
        top = min(200, max_pool)
        lo, hi = st.slider("n from … to", 2, top, (2, min(top, 50)), key="hm_sweep_n", bind="query-params")
        reps = st.number_input("Random draws per pool and n", 1, 5, 3, key="hm_sweep_reps", bind="query-params")
        sizes = sorted({int(x) for x in np.linspace(lo, hi, 6).round()})
        args = (sizes, int(reps), 0)
        if source == SOURCES[0] or st.session_state.get("hm_sweep_done") == (len(df), args):
            run = True
        else:
            run = st.button("Run the sweep", key="hm_sweep_go", icon=":material/play_arrow:")
        if run:
            sw = ui.compute(D.sample_size_sweep, df, emb, *args, label="Subsampling pools…")
            st.session_state["hm_sweep_done"] = (len(df), args)
            names = {"intra_similarity": "intra-model similarity", "vendi": "Vendi score",
                     "self_bleu": "Self-BLEU", "distinct_2": "distinct-2"}
            sw = sw.assign(metric=sw["metric"].map(names))
            st.altair_chart(alt.Chart(sw).mark_line(point=True).encode(
                x=alt.X("n:Q", title="responses per pool n", axis=alt.Axis(tickMinStep=1, format="d")),
                y=alt.Y("value:Q", title=None),
                tooltip=["metric", "n", alt.Tooltip("value:Q", format=".3f"), "n_pools"]).properties(
                width=175, height=180).facet(facet=alt.Facet("metric:N", title=None), columns=4).resolve_scale(
                y="independent"))
            st.caption("The mean pairwise similarity is flat in n (an unbiased estimate); the Vendi score, "
                       "Self-BLEU and distinct-n drift with n, so compare them only at equal n.")
            ui.download_csv(sw, "hivemind_sample_size_sweep.csv", "Sweep (CSV)", key="hm_dl_sweep")
with tab_t:
    sweep = D.threshold_sweep(per_pool["intra_similarity"].where(per_pool["n"] >= 2))
    st.altair_chart(alt.Chart(sweep).mark_line().encode(
        x=alt.X("threshold:Q", title="threshold τ"),
        y=alt.Y("share_above:Q", title="share of pools above τ", axis=alt.Axis(format="%")),
        tooltip=["threshold", alt.Tooltip("share_above:Q", format=".0%")])
        + alt.Chart(pd.DataFrame({"threshold": [0.8], "share_above": [D.PAPER["share_above_0.8"]],
                                  "label": ["paper: 79% above 0.8 (top-p)"]})).mark_point(
            color="#E45756", size=120, shape="diamond").encode(x="threshold:Q", y="share_above:Q",
                                                                tooltip=["label"])
        + alt.Chart(pd.DataFrame({"threshold": [0.8], "share_above": [D.PAPER["share_above_0.8_minp"]],
                                  "label": ["paper: 61.2% above 0.8 (min-p)"]})).mark_point(
            color="#B279A2", size=120, shape="diamond").encode(x="threshold:Q", y="share_above:Q",
                                                                tooltip=["label"]),
        width="stretch")
    st.caption("Red/purple diamonds: the paper's points (its embedder, real models). The curve: this data.")
    ui.download_csv(sweep, "hivemind_threshold_sweep.csv", "Threshold sweep (CSV)", key="hm_dl_tsweep")

st.subheader("Downloads")
d = st.columns(4)
with d[0]:
    ui.download_csv(res["pairs"], "hivemind_pairs.csv", "Per-pair (CSV)", key="hm_dl_pairs")
with d[1]:
    ui.download_csv(per_prompt, "hivemind_per_prompt.csv", "Per-prompt (CSV)", key="hm_dl_prompt")
with d[2]:
    ui.download_csv(per_pool, "hivemind_per_pool.csv", "Per (model, prompt) (CSV)", key="hm_dl_pool")
with d[3]:
    ui.download_csv(inter, "hivemind_inter_model.csv", "Inter-model (CSV)", key="hm_dl_inter")
ui.device_caption()
