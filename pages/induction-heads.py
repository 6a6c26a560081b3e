"""Induction heads and the residual stream: attention-only transformers on repeated random tokens (Elhage et al.
2021, Olsson et al. 2022), Theus et al.'s alignment of two trained models (NeurIPS 2025), and SmolLM2-135M's heads.
The page opens on shipped runs; the knobs below re-run the 0/1/2-layer comparison (about a minute)."""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.induction_heads as M
import ui
from toymodels.induction_heads import prose

TOPIC = M.TOPIC
LAYER_C = {0: ui.PALETTE[7], 1: ui.PALETTE[1], 2: ui.PALETTE[0]}
IND_C, PREV_C = ui.PALETTE[2], ui.PALETTE[5]
ARM_C = {"none": ui.PALETTE[3], "circuits": ui.PALETTE[1], "permutation": ui.PALETTE[5], "orthogonal": ui.PALETTE[0]}
LOG13, LOG64 = M.log_periods(M.Config()), M.uniform_loss(M.Config())

paper = ui.paper_header(TOPIC)
verdict, fresh = ui.shipped_verdict(TOPIC)
live_default = ui.view(M, "live")
study = None if M.VIEWS["study"].pending else ui.view(M, "study")
real = None if M.VIEWS["smollm2"].pending else ui.view(M, "smollm2")


def _layer_color(orient: str = "bottom"):
    scale = alt.Scale(domain=[0, 1, 2], range=[LAYER_C[n] for n in (0, 1, 2)])
    return alt.Color("layers:O", title="layers", scale=scale,
                     legend=alt.Legend(orient=orient, direction="horizontal" if orient == "bottom" else "vertical"))


def _refs(x_end: int) -> alt.Chart:
    """Dashed lines at log 64 (a uniform guess) and log 13 (one guess per possible period), labelled at the right."""
    refs = pd.DataFrame({"y": [LOG64, LOG13], "step": [x_end, x_end], "text": ["log 64: uniform", "log 13"]})
    base = alt.Chart(refs)
    return alt.layer(base.mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL).encode(y="y:Q"),
                     base.mark_text(align="right", dy=-7, color=ui.NEUTRAL, fontSize=11).encode(
                         y="y:Q", x="step:Q", text="text:N"))


def _attention_chart(frame: pd.DataFrame, height: int, title: str | None, legend: bool = True) -> alt.Chart:
    """An attention map (query rows, key columns); ``height`` is the whole chart's."""
    chart = alt.Chart(frame).mark_rect().encode(
        x=alt.X("key:O", title="key position (attended to)", axis=alt.Axis(values=list(range(0, 32, 4)), labelAngle=0)),
        y=alt.Y("query:O", title="query position", axis=alt.Axis(values=list(range(0, 32, 4)))),
        color=alt.Color("weight:Q", title="attention", scale=alt.Scale(scheme="blues", domain=[0, 1]),
                        legend=alt.Legend(orient="right", gradientLength=120) if legend else None),
        tooltip=["query", "key", "query_token", "key_token", alt.Tooltip("weight:Q", format=".2f"), "prefix_match"],
    ).properties(height=height)
    return chart.properties(title=title) if title else chart


# --------------------------------------------------------------------------- the tour
TABS = ["The story", "One run up close", "Lab notebook"]
TOUR = [
    ui.Step("One layer or two", "Left: the same data, the same seed, 0, 1 and 2 attention-only layers. Zero layers "
            "stay at the uniform guess; one layer settles near log 13 (it can only spread its guess over the "
            "possible periods); two layers copy.", look_at="the three loss curves against the dashed lines",
            settings={"ih_tabs": TABS[0]},
            target="chart-induction-heads-depth",
            predict="One attention layer sees every earlier token. Can it learn to copy the repeated block?",
            choices=("yes, as well as two layers", "no, it stays near log 13")),
    ui.Step("What an induction head looks at", "Right: each row is a query position. From the second period on, "
            "the head puts its attention on the token after the previous occurrence of the current token: a "
            "diagonal stripe one period back, shifted right by one.", settings={"ih_tabs": TABS[0]},
            look_at="the bright stripe below the diagonal in the attention map",
            target="chart-induction-heads-attention"),
    ui.Step("How it is built", "Layer 1 has a previous-token head (its positional QK circuit is a band just below "
            "the diagonal); the layer-2 head's keys read it (K-composition), so its token QK circuit, query token "
            "against the key's previous token, is diagonal; and its OV circuit copies.",
            look_at="the three circuit heatmaps", target="ih-circuits", settings={"ih_tabs": TABS[1]}),
    ui.Step("The phase change", "Twenty fresh seeds: the loss falls abruptly, and in the same few dozen steps the "
            "induction score rises (Olsson et al.'s first argument).", look_at="the curves per seed",
            target="ih-seeds", settings={"ih_tabs": TABS[0]}),
    ui.Step("No privileged basis", "The residual stream can be rotated by any orthogonal map and the logits do not "
            "change; an elementwise operation or a LayerNorm gain breaks it. This is the symmetry Theus et al. use to "
            "line two trained models up.", look_at="the largest change of a logit, and the barrier curves",
            target="ih-basis", settings={"ih_tabs": TABS[0]},
            predict="Rotate the residual stream of a trained model by a random orthogonal matrix (every write by R, "
                    "every read by Rᵀ). Do its logits change?",
            choices=("yes, the coordinates mean something", "no, not beyond rounding")),
    ui.Step("A real model", "SmolLM2-135M on repeated random tokens: heads that prefix-match and copy.",
            look_at="the heatmap of prefix-matching scores, layer by head", target="ih-real",
            settings={"ih_tabs": TABS[0]}),
]
active = ui.tour(TOUR)

# --------------------------------------------------------------------------- the headline: picture first
T = {w: ui.term(w, TOPIC) for w in ("copy loss", "induction head", "attention-only", "log 13")}
live2 = live_default["runs"]["2"]
heads = M.best_heads(live2)
fin = {int(n): float(r["eval_loss"][-1]) for n, r in live_default["runs"].items()}
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    left, right = st.columns(2, gap="small")
    curves = M.run_curves(live_default["runs"])
    with left:
        loss = alt.Chart(curves).mark_line(strokeWidth=2.2).encode(
            x=alt.X("step:Q", title="training step"), y=alt.Y("copy_loss:Q", title="copy loss (nats)",
                                                                 scale=alt.Scale(domain=[0, 4.6])),
            color=_layer_color("bottom"), tooltip=["layers", "step", alt.Tooltip("copy_loss:Q", format=".3f")])
        ui.chart(alt.layer(_refs(int(curves["step"].max())), loss).properties(
            height=240, title="Copy loss, 0, 1 and 2 layers"), "induction-heads-depth", data=curves, span=0.3,
            alt_text="Held-out copy loss against training step for 0, 1 and 2 attention-only layers")
    with right:
        seq = 0
        frame = M.attention_frame(live2["sample"], seq, heads["induction_layer"], heads["induction_head"])
        per = int(live2["sample"]["period"][seq])
        ui.chart(_attention_chart(frame, 240, f"An induction head, period {per}", legend=False),
                 "induction-heads-attention", data=frame, span=0.3,
                 alt_text="Attention map of the induction head on a repeated random sequence: a stripe one period "
                          "back, shifted by one")
    st.caption(f"One shipped run ({M.PERIOD_LABELS[M.LiveConfig().period_mode]}, seed {M.LiveConfig().seed}, "
               f"{M.LiveConfig().steps:,} steps); the number beside it is the registered test on fresh seeds. Dashed: "
               "log 64 (a uniform guess) and log 13 (one guess per possible period).")
with side_col:
    depth = next((j for j in verdict.claims if j.id == "depth"), None)
    ui.headline_claim(verdict, claim="depth" if depth else None, notice=prose.headline_notice(fin, LOG13, T),
                      ours_label=f"Our toy, {depth.seeds} fresh seeds" if depth and depth.seeds else "Our toy")
ui.ledger_strip(verdict)

explainer, run_tab, notebook = st.tabs(TABS, key="ih_tabs", bind="query-params")  # only the open one draws


# --------------------------------------------------------------------------- the model
def _model_section() -> None:
    model_box = st.expander("The task and the model, in equations: copy loss, circuits, composition",
                            icon=":material/functions:")
    model_box.markdown(
        "A sequence of 32 tokens is a block of *p* random tokens (vocabulary 64) repeated; *p* is drawn from 4-16 "
        "(**variable period**) or fixed at 16. From position *p* on every token is a copy, and the **copy loss** is "
        "the mean cross-entropy of the next token there. The model is a transformer with attention only: no MLP, no "
        "LayerNorm, no biases, so every path from a token to a logit is a product of weight matrices (Elhage et "
        "al.'s **circuits**).")
    model_box.latex(r"\begin{aligned}x_0&=W_E[t]+W_{pos}[i],\qquad \mathrm{logits}=x_L\,W_U\\"
                    r"x_{l+1}&=x_l+\textstyle\sum_h A^{l,h}\,x_l\,W_V^{l,h}W_O^{l,h}\\"
                    r"A^{l,h}&=\mathrm{softmax}\big(x_lW_Q^{l,h}(x_lW_K^{l,h})^{\top}/\sqrt{d_h}\big)\end{aligned}")
    model_box.markdown(
        "- **QK circuit** $W_QW_K^\\top$: where a head looks. **OV circuit** $W_E W_V W_O W_U$: what it writes when "
        "it looks at a token; its **copying score** is $\\sum\\lambda/\\sum|\\lambda|$ over the eigenvalues (1: it "
        "raises the logit of the token it attends to).\n"
        "- **Previous-token score**: attention from each position to the one before. **Induction (prefix-matching) "
        "score**: attention to the tokens whose previous token equals the current one.\n"
        "- **K-composition**: a layer-2 head's keys read what a layer-1 head wrote, "
        "$\\|W_{QK}^{h_2}W_{OV}^{h_1\\top}\\|_F/(\\|W_{QK}^{h_2}\\|_F\\|W_{OV}^{h_1}\\|_F)$, compared with random "
        "matrices of the same shapes.")


# --------------------------------------------------------------------------- one run up close (the knobs)
def _run_tab() -> tuple[M.LiveConfig, dict]:
    """The 0/1/2-layer comparison with your settings; returns the settings and the runs shown."""
    st.subheader("One run up close")
    live_cfg = ui.form(M.KNOBS, M.LiveConfig(), ["ih_period", "ih_steps", "ih_seed"], columns=[2, 1, 1, 1])
    if live_cfg.period_mode is None:              # a segmented control can be cleared: back to the default
        live_cfg = M.LiveConfig(steps=live_cfg.steps, seed=live_cfg.seed)
    res = ui.view_or_compute(M, "live", live_cfg, seconds=M.live_seconds(live_cfg))
    if res is None:
        st.info("The figures below show the shipped run (variable period, seed 1, 1,000 steps) until you press the "
                "button.", icon=":material/info:")
        res, live_cfg = live_default, M.LiveConfig()
    runs = res["runs"]
    r2 = runs["2"]
    hb = M.best_heads(r2)
    where = (f"{M.PERIOD_LABELS[live_cfg.period_mode]}, seed {live_cfg.seed}, {live_cfg.steps:,} steps")
    curves = M.run_curves(runs)
    st.markdown(f"**What to notice:** {prose.run_notice(runs, hb, where)}")
    left, right = st.columns(2)
    with left:
        ui.chart(alt.layer(_refs(int(curves["step"].max())), alt.Chart(curves).mark_line(strokeWidth=2).encode(
            x=alt.X("step:Q", title="training step"), y=alt.Y("copy_loss:Q", title="held-out copy loss (nats)"),
            color=_layer_color("bottom-left"), tooltip=["layers", "step", alt.Tooltip("copy_loss:Q", format=".3f")])
        ).properties(height=260, title="copy loss"), "induction-heads-run-loss", data=curves,
            alt_text="Held-out copy loss against step for 0, 1 and 2 layers (this run)")
    with right:
        sc = curves[curves["layers"] == 2].melt(["step"], ["induction", "prev_token"], var_name="score")
        sc["score"] = sc["score"].map({"induction": "best layer-2 induction score",
                                       "prev_token": "best layer-1 previous-token score"})
        ui.chart(alt.Chart(sc).mark_line(strokeWidth=2).encode(
            x=alt.X("step:Q", title="training step"), y=alt.Y("value:Q", title="score", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("score:N", title=None, scale=alt.Scale(domain=["best layer-2 induction score",
                                                                            "best layer-1 previous-token score"],
                                                                    range=[IND_C, PREV_C]),
                            legend=alt.Legend(orient="bottom-right", labelLimit=0)),
            tooltip=["score", "step", alt.Tooltip("value:Q", format=".2f")]).properties(height=260,
                                                                                      title="2 layers: head scores"),
            "induction-heads-run-scores", data=sc, alt_text="Induction and previous-token scores against step")

    @ui.fragment
    def _maps() -> None:
        st.markdown("**Attention maps** of the 2-layer model on held-out sequences (hover for the tokens).")
        c = st.columns(3)
        s = ui.knob(M.KNOBS, "ih_seq", where=c[0])
        layer = ui.knob(M.KNOBS, "ih_layer", where=c[1])
        head = ui.knob(M.KNOBS, "ih_head", default=hb["induction_head"] if layer == 2 else hb["prev_head"],
                       where=c[2])
        frame = M.attention_frame(r2["sample"], int(s), int(layer), int(head))
        per = int(r2["sample"]["period"][int(s)])
        row = next(h for h in r2["heads"] if h["layer"] == layer and h["head"] == head)
        left, right = st.columns([3, 2], vertical_alignment="center")
        with left:
            ui.chart(_attention_chart(frame, 300, f"layer {layer}, head {head} (period {per})"),
                     f"induction-heads-map-L{layer}H{head}", data=frame, span=0.6,
                     alt_text=f"Attention map of layer {layer} head {head} on a sequence of period {per}")
        with right:
            st.metric("Induction (prefix-matching) score", f"{row['induction']:.2f}")
            st.metric("Previous-token score", f"{row['prev_token']:.2f}")
            st.metric("OV copying score", f"{row['copying']:.3f}")
            st.caption("Scores are averages over the 128 held-out sequences; the map is one of them.")

    _maps()

    circuits_box = st.container(key="ih-circuits")
    circuits_box.markdown(f"**The circuits**, read off the weights (no data): the layer-1 previous-token head's "
                          f"positional QK circuit (head {hb['prev_head']}), and the layer-2 induction head's (head "
                          f"{hb['induction_head']}) token QK circuit through {ui.term('K-composition', TOPIC)} and "
                          "its OV circuit.")
    mats = M.circuit_matrices(r2["params"], hb)
    cols = circuits_box.columns(3)
    specs = [("prev_qk_positions", "query position", "key position", "previous-token head: QK by position"),
             ("induction_qk", "query token", "key's previous token", "induction head: QK (K-composed)"),
             ("induction_ov", "attended token", "logit of token", "induction head: OV")]
    for col, (k, rname, cname, title) in zip(cols, specs):
        fr = M.matrix_frame(mats[k], "row", "col", causal=k == "prev_qk_positions")
        lim = float(np.abs(fr["value"]).quantile(0.99)) or 1.0
        with col:
            ui.chart(alt.Chart(fr).mark_rect().encode(
                x=alt.X("col:O", title=cname, axis=alt.Axis(labels=False, ticks=False)),
                y=alt.Y("row:O", title=rname, axis=alt.Axis(labels=False, ticks=False)),
                color=alt.Color("value:Q", scale=alt.Scale(scheme="blueorange", domain=[-lim, lim], clamp=True),
                                legend=None),
                tooltip=["row", "col", alt.Tooltip("value:Q", format=".2f")]).properties(height=260, title=title),
                f"induction-heads-{k}", data=fr, alt_text=f"Heatmap of the {title}")
    circuits_box.caption("Blue negative, orange positive (colour clipped at the 99th percentile of |value|). Left: "
                         "keys a "
               "query can see, each row centred (softmax ignores a constant per query); a band just below the "
               "diagonal means: attend to the previous position. Middle and right: a bright diagonal means: match "
               "the current token with the key's previous token, and raise the logit of the token attended to.")
    with st.expander("Every head of this run: induction, previous-token and copying scores", icon=":material/table:"):
        st.dataframe(M.head_table(r2), hide_index=True, width="stretch",
                     column_config={k: st.column_config.NumberColumn(format="%.3f")
                                    for k in ("induction", "prev_token", "copying")})
    return live_cfg, runs


# the code snippet's settings and numbers while the tab is closed: the shipped run
live_cfg, runs = M.LiveConfig(), live_default["runs"]
with run_tab:
    if run_tab.open:
        live_cfg, runs = _run_tab()


# --------------------------------------------------------------------------- the registered study
def _seeds_section() -> None:
    st.subheader("Twenty seeds: depth, the fixed-period trap and the phase change")
    if study is None:
        st.info(f"Pending: {M.VIEWS['study'].pending}. Its claims read 'not testable here' until it ships.",
                icon=":material/schedule:")
    else:
        fl = M.final_losses(study)
        st.markdown(f"**What to notice:** {prose.seeds_notice(study)}")
        order = list(M.ARM_LABELS.values())
        layer_scale = alt.Scale(domain=[0, 1, 2], range=[LAYER_C[n] for n in (0, 1, 2)])
        pts = alt.Chart(fl).mark_circle(size=60, opacity=0.8).encode(
            x=alt.X("copy_loss:Q", title="held-out copy loss (nats)"),
            y=alt.Y("setting:N", title=None, sort=order, axis=alt.Axis(labelLimit=0)),
            color=alt.Color("layers:O", scale=layer_scale, legend=None),
            tooltip=["setting", "seed", alt.Tooltip("copy_loss:Q", format=".3f")])
        cross = alt.Chart(fl[fl["arm"] == "L1f"]).mark_point(size=60, color=LAYER_C[1], filled=False).encode(
            x=alt.X("other_period_loss:Q"), y=alt.Y("setting:N", sort=order),
            tooltip=["seed", alt.Tooltip("other_period_loss:Q", format=".2f", title="loss on variable periods")])
        ui.chart(alt.layer(pts, cross).properties(height=220), "induction-heads-seeds", data=fl,
                 alt_text="Final copy loss of every seed in each arm, and the fixed-period 1-layer model on variable "
                          "periods")
        cur = M.study_curves(study, "L2v", every=2)
        cur = cur[cur["step"] <= 1000]
        ph = M.phase_table(study)
        st.markdown(prose.phase_text(ph))
        left, right = st.columns(2)
        base = alt.Chart(cur).encode(x=alt.X("step:Q", title="training step"), detail="seed:N")
        with left:
            ui.chart(base.mark_line(strokeWidth=1.2, opacity=0.6, color=LAYER_C[2]).encode(
                y=alt.Y("copy_loss:Q", title="held-out copy loss (nats)"),
                tooltip=["seed", "step", alt.Tooltip("copy_loss:Q", format=".2f")]).properties(
                height=270, title="copy loss"), "induction-heads-phase-loss", data=cur,
                alt_text="Copy loss against step for twenty seeds")
        with right:
            ui.chart(base.mark_line(strokeWidth=1.2, opacity=0.6, color=IND_C).encode(
                y=alt.Y("induction:Q", title="best layer-2 induction score", scale=alt.Scale(domain=[0, 1])),
                tooltip=["seed", "step", alt.Tooltip("induction:Q", format=".2f")]).properties(
                height=270, title="induction score"), "induction-heads-phase-score", data=cur,
                alt_text="Induction score against step for twenty seeds")
        mech = M.mechanism_table(study)
        st.markdown(prose.mechanism_text(mech))
        with st.expander("Per seed: composition, copying and knock-outs", icon=":material/table:"):
            st.dataframe(mech, hide_index=True, width="stretch")


# --------------------------------------------------------------------------- the residual stream
def _basis_section() -> None:
    st.subheader("No privileged basis, and two models lined up (Theus et al.)")
    ui.blocks(prose.basis(ui.term("privileged basis", TOPIC), ui.term("barrier", TOPIC)))
    if study is None:
        st.info(f"Pending: {M.VIEWS['study'].pending}.", icon=":material/schedule:")
    else:
        sym = M.symmetry_table(study).set_index("residual stream")["largest |Δ logit|"]
        st.markdown(f"**What to notice:** {prose.symmetry_notice(sym)}")
        with st.expander("The symmetry test per operation", icon=":material/table:"):
            st.dataframe(M.symmetry_table(study), hide_index=True, width="stretch",
                         column_config={k: st.column_config.NumberColumn(format="%.1e") for k in
                                        ("largest |Δ logit|", "smallest over seeds")})
        lmf = M.lmc_frame(study)
        pair = ui.knob(M.KNOBS, "ih_pair")
        one = lmf[lmf["pair"] == pair].assign(arm=lambda d: d["arm"].map(M.ARM_LABELS_LMC))
        ui.chart(alt.Chart(one).mark_line(point=True, strokeWidth=2).encode(
            x=alt.X("lambda:Q", title="λ (0: model B, 1: model A)", axis=alt.Axis(values=list(M.LAMBDAS))),
            y=alt.Y("loss:Q", title="held-out copy loss"),
            color=alt.Color("arm:N", title=None, scale=alt.Scale(domain=[M.ARM_LABELS_LMC[a] for a in ARM_C],
                                                                 range=list(ARM_C.values())),
                            legend=alt.Legend(orient="bottom", labelLimit=0, columns=1)),
            tooltip=["arm", "lambda", alt.Tooltip("loss:Q", format=".3f")]).properties(height=290),
            "induction-heads-interpolation", data=one, alt_text="Loss along the straight line between two models")
        lt = M.lmc_table(study)
        st.markdown(f"**What to notice:** {prose.lmc_notice(lt)}")
        with st.expander("Barriers per pair (nats)", icon=":material/table:"):
            st.dataframe(lt, hide_index=True, width="stretch")


# --------------------------------------------------------------------------- the real model
def _real_section() -> None:
    st.subheader("A real model: SmolLM2-135M")
    if real is None:
        st.info(f"Pending: {M.VIEWS['smollm2'].pending}.", icon=":material/schedule:")
    else:
        rf = M.real_frame(real)
        st.markdown(f"**What to notice:** {prose.real_notice(real, rf)}")
        left, right = st.columns([3, 2])
        with left:
            ui.chart(alt.Chart(rf).mark_rect().encode(
                x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0)),
                y=alt.Y("layer:O", title="layer", sort="descending"),
                color=alt.Color("prefix:Q", title="prefix matching", scale=alt.Scale(scheme="greens", domain=[0, 1])),
                tooltip=["layer", "head", alt.Tooltip("prefix:Q", format=".2f"), alt.Tooltip("copying:Q", format=".2f"),
                         alt.Tooltip("control:Q", format=".3f")]).properties(height=300),
                "induction-heads-smollm2", data=rf, span=0.6, alt_text="Prefix-matching score of each SmolLM2 head")
        with right:
            thr = alt.layer(
                alt.Chart(pd.DataFrame({"x": [M.REAL_PREFIX]})).mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL)
                .encode(x="x:Q"),
                alt.Chart(pd.DataFrame({"y": [M.REAL_COPYING]})).mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL)
                .encode(y="y:Q"))
            ui.chart(thr + alt.Chart(rf).mark_circle(size=40, opacity=0.7).encode(
                x=alt.X("prefix:Q", title="prefix-matching score"), y=alt.Y("copying:Q", title="OV copying score"),
                color=alt.Color("induction_head:N", title="induction head",
                                scale=alt.Scale(domain=[True, False], range=[IND_C, ui.NEUTRAL]),
                                legend=alt.Legend(orient="bottom")),
                tooltip=["layer", "head", alt.Tooltip("prefix:Q", format=".2f"),
                         alt.Tooltip("copying:Q", format=".2f")]).properties(height=300),
                "induction-heads-smollm2-scatter", data=rf, alt_text="Copying against prefix matching per head")


def _share_section() -> None:
    ui.page_end(verdict, paper, ui.call_snippet("induction_heads", "compare_depths", live_cfg), device=False,
                cli="python -m toymodels reproduce induction-heads --quick",
                shown={f"final copy loss, {n} layer{'s' if n != '1' else ''}": (
                    f"result['runs']['{n}']['eval_loss'][-1]", f"{runs[n]['eval_loss'][-1]:.3f}")
                    for n in ("2", "1", "0")})
    with st.expander("Also cite: Elhage et al. 2021, Olsson et al. 2022", icon=":material/format_quote:"):
        st.code(M.EXTRA_BIBTEX, language="tex")  # BibTeX (one "bibtex" block per page: the paper's, in Cite)
    ui.device_caption()
    if study is not None:
        meta = study["meta"]
        st.caption(f"The 20-seed study ran on {meta['device']} (torch {meta['torch']}, numpy {meta['numpy']}, Python "
                   f"{meta['python']}) in {study['seconds']['total']:.0f} s; the shipped runs above it and the "
                   "SmolLM2 scores on one CPU thread.")


with explainer:
    if explainer.open:
        _model_section()
        for box_key, section in (("ih-seeds", _seeds_section), ("ih-basis", _basis_section),
                                 ("ih-real", _real_section)):
            with st.container(key=box_key):
                section()

# --------------------------------------------------------------------------- the lab notebook
with notebook:
    if notebook.open:
        ui.lab_table(M.LAB_NOTEBOOK, alt="Every configuration tried: pilots, diagnostics and the cost model")
        ui.caveats(prose.CAVEATS)

# --------------------------------------------------------------------------- below the tabs, whichever is open
_share_section()
