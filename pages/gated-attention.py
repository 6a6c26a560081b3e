"""Gated attention (Qiu et al., NeurIPS 2025): a tiny LM trained with and without the SDPA output gate."""
from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
import toymodels.gated_attention as M

TOPIC = "gated-attention"
D = M.SINK_CFG
NAMES = dict(M.VARIANTS)
GATED = [v for v in M.VARIANTS if v != "baseline"]

# --------------------------------------------------------------------------- shared links: stable ids only
# Every knob is mirrored in the URL by its id (never its label). A link with an unknown or out-of-range value
# opens the default with a notice. (Streamlit's own binding stores a selectbox's label, so it is done here.)
PRESETS = {  # id -> (label, config overrides of the sink default)
    "default": ("Sink default: 2 layers × 2 heads, T = 128, QK-norm, lr 2e-2 (shipped)", {}),
    "massive": (f"Massive-activation configuration ({M.MACT_NAME}): {M.MACT_CFG.n_layers} layers × "
                f"{M.MACT_CFG.n_heads} heads, RoPE, "
                f"{'transparent ' if M.MACT_CFG.after_delimiter == 'bigram' else ''}delimiters, "
                f"T = {M.MACT_CFG.seq_len}, {M.MACT_CFG.steps} steps "
                "(shipped)", {}),
    "no_qknorm": ("Without QK-norm, lr 1e-2", {"qk_norm": False, "lr": 1e-2}),
    "rope_notes": ("Notes' CPU setup: RoPE, no QK-norm, lr 3e-3", {"pos": "rope", "lr": 3e-3, "qk_norm": False}),
    "rope_qknorm": ("Paper-like: RoPE + QK-norm (as Qwen3)", {"pos": "rope", "qk_norm": True}),
    "deeper": ("Deeper: 3 layers, 4 heads, 300 steps", {"n_layers": 3, "n_heads": 4, "steps": 300}),
}
FORM = {  # knob -> (allowed values, parse)
    "n_layers": (tuple(range(1, 5)), int), "n_heads": (M.CHOICES["n_heads"], int),
    "d_model": (M.CHOICES["d_model"], int), "seq_len": (M.CHOICES["seq_len"], int),
    "steps": (tuple(range(100, 2001, 50)), int), "lr": (M.CHOICES["lr"], float),
    "seed": (range(0, 10000), int), "pos": (("learned", "rope"), str),
    "qk_norm": ((True, False), lambda s: {"true": True, "false": False}[s.lower()]),
}
SHIPPED = {"default": D, "massive": M.MACT_CFG}


def _preset_cfg(pid: str) -> M.Config:
    return SHIPPED.get(pid) or replace(D, **PRESETS[pid][1])


def _defaults() -> dict:
    return {"ga_preset": "default", "ga_variant": "g1_elementwise", "ga_layer": 1, "ga_head": 1, "ga_shown": 48,
            **{f"ga_{k}": getattr(D, k) for k in FORM}}


VALID = {"ga_preset": tuple(PRESETS), "ga_variant": tuple(GATED), "ga_layer": range(1, 5), "ga_head": range(1, 9),
         "ga_shown": (32, 48, 64), **{f"ga_{k}": v for k, (v, _) in FORM.items()}}
PARSE = {"ga_preset": str, "ga_variant": str, "ga_layer": int, "ga_head": int, "ga_shown": int,
         **{f"ga_{k}": p for k, (_, p) in FORM.items()}}


def _read_link() -> list[tuple[str, str]]:
    """On a session's first run, take the knobs from the URL; return notices for values that are not valid."""
    if st.session_state.get("ga_link_read"):
        return []
    st.session_state["ga_link_read"] = True
    notices, defaults = [], _defaults()
    for key, default in defaults.items():
        raw = st.query_params.get(key)
        if raw is None:
            continue
        try:
            value = PARSE[key](raw)
            ok = value in VALID[key]
        except (ValueError, KeyError, TypeError):
            ok = False
        if ok:
            st.session_state[key] = value
        else:
            notices.append((key, raw))
    pid = st.session_state.get("ga_preset", "default")
    if "ga_preset" in st.query_params and not any(f"ga_{k}" in st.query_params for k in FORM):
        _fill_form(pid)       # a preset link without its own knobs: the preset's values
    return notices


def _fill_form(pid: str) -> None:
    cfg = _preset_cfg(pid)
    for k in FORM:
        st.session_state[f"ga_{k}"] = getattr(cfg, k)


def _write_link() -> None:
    """Mirror the knobs into the URL (ids and numbers; defaults omitted)."""
    for key, default in _defaults().items():
        value = st.session_state.get(key, default)
        if value == default:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = str(value).lower() if isinstance(value, bool) else str(value)


paper = ui.paper_header(TOPIC)
ui.claim_box(paper)
verdict, fresh = ui.shipped_verdict(TOPIC)
ui.result_strip(verdict, caption=None if fresh else "The shipped results are stale: the page recomputes them.")
bad_link = _read_link()
for k, v in _defaults().items():
    st.session_state.setdefault(k, v)
ui.link_notice(bad_link)

head = ui.view(M, "compare_all")
sink, mact = head["sink"], head["mact"]
s_all = sink["summary"].set_index("variant")
floor = float(sink["floor"])


def _bars(layers: pd.DataFrame, variants: list[str], y: str, title: str, ytitle: str, log: bool = False,
          rule: float | None = None, rule_text: str = "") -> alt.Chart:
    lv = layers[layers.variant.isin(variants)].assign(model=lambda d: d.variant.map(NAMES))
    chart = alt.Chart(lv).mark_bar().encode(
        x=alt.X("layer:O", title="layer"), xOffset=alt.XOffset("model:N", sort=[NAMES[v] for v in variants]),
        y=alt.Y(f"{y}:Q", title=ytitle, scale=alt.Scale(type="log") if log else alt.Undefined),
        color=alt.Color("model:N", title=None, sort=[NAMES[v] for v in variants],
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)),
        tooltip=["model", "layer", alt.Tooltip(f"{y}:Q", format=".3f")])
    if log:       # a bar on a log axis needs a base other than 0 (ratios here are >= 1)
        chart = chart.encode(y2=alt.datum(1))
    if rule is not None:
        df = pd.DataFrame({"y": [rule], "t": [rule_text]})
        chart = chart + alt.Chart(df).mark_rule(strokeDash=[5, 4], color="black").encode(y="y:Q") + alt.Chart(
            df).mark_text(align="left", dx=4, dy=-6, x=0).encode(y="y:Q", text="t:N")
    return chart.properties(title=title, height=260)


# --------------------------------------------------------------------------- the one chart
c1, c2 = st.columns([3, 2])
c1.altair_chart(_bars(sink["layers"], ["baseline", "g1_elementwise", "g1_headwise"], "fattn",
                      "First-token attention per layer (sink default, shipped)", "F-Attn (attention to <s>)",
                      rule=floor, rule_text=f"uniform floor {floor:.3f}"), width="stretch", height=380)
with c2:
    b, g = s_all.loc["baseline"], s_all.loc["g1_elementwise"]
    st.markdown(f"**Sink.** Baseline F-Attn **{b.fattn:.3f}** ({b.fattn / floor:.1f}× the uniform floor "
                f"{floor:.3f}); G1 elementwise **{g.fattn:.3f}**, {b.fattn / g.fattn:.1f}× lower (paper 0.467 → "
                f"0.048, 9.7×). Gate mean {g.gate_mean:.2f} (starts at 0.5; paper 0.116).")
    mm = M.mact_metrics(mact)
    st.markdown(f"**Massive activations** (search pick {M.MACT_NAME}, 4 heads): the baseline's largest |h| is "
                f"**{mm['mact_ratio_baseline']:.0f}×** its layer's median ({mm['mact_where_baseline']}), "
                f"G1 **{mm['mact_ratio_g1']:.0f}×**; on the first token `<s>` **{mm['bos_ratio_baseline']:.0f}×** "
                f"(layer {mm['bos_layer_baseline']}) → **{mm['bos_ratio_g1']:.0f}×** (layer {mm['bos_layer_g1']}), "
                f"largest |h| there {mm['first_token_max_baseline']:.0f} → {mm['first_token_max_g1']:.0f}. Paper: "
                "about 1000× on the first token, removed by G1. "
                + (f"That meets the bands, in {verdict.metrics.get('mact_seeds_meeting', 1)} of "
                   f"{verdict.metrics.get('mact_seeds_run', 1)} seeds of this configuration (see the search below)."
                   if mm["massive_found"] else
                   f"Below the bands (≥ {M.MACT_RATIO_MIN:.0f}× on `<s>` or a delimiter, ≥ {M.MACT_CUT_MIN:.0f}× "
                   "lower with G1): see the search below."))
    st.markdown(f"**Loss.** Baseline {b.val_loss:.3f}, G1 {g.val_loss:.3f} nats against the realised Bayes "
                f"cross-entropy of the same tokens, {float(sink['bayes_ce']):.3f}.")

# --------------------------------------------------------------------------- explore
st.header("Explore")


def _on_preset():
    _fill_form(st.session_state["ga_preset"])


st.selectbox("Preset", list(PRESETS), key="ga_preset", format_func=lambda p: PRESETS[p][0], on_change=_on_preset,
             help="Fills the settings below. The two shipped presets show at once; the others need Train.")
with st.form("ga_form"):
    c = st.columns(4)
    c[0].select_slider("Layers", FORM["n_layers"][0], key="ga_n_layers")
    c[1].select_slider("Heads", FORM["n_heads"][0], key="ga_n_heads")
    c[2].select_slider("Width d", FORM["d_model"][0], key="ga_d_model")
    c[3].select_slider("Sequence length T", FORM["seq_len"][0], key="ga_seq_len")
    c = st.columns(4)
    c[0].select_slider("Steps", FORM["steps"][0], key="ga_steps")
    c[1].select_slider("Learning rate", FORM["lr"][0], key="ga_lr", format_func=lambda x: f"{x:g}")
    c[2].number_input("Seed", 0, 9999, key="ga_seed")
    c[3].radio("Positions", FORM["pos"][0], key="ga_pos", horizontal=True,
               format_func=lambda x: {"learned": "learned", "rope": "RoPE"}[x])
    st.toggle("Per-head QK-norm", key="ga_qk_norm")
    st.form_submit_button("Apply settings", icon=":material/tune:",
                          help="Shows the result at once when these settings are shipped or trained already; "
                               "otherwise a Train button appears with its expected time.")

base_cfg = _preset_cfg(st.session_state["ga_preset"])
CAST = {"lr": float, "pos": str, "qk_norm": bool}
cfg = replace(base_cfg, **{k: CAST.get(k, int)(st.session_state[f"ga_{k}"]) for k in FORM})
variant = st.selectbox("Gated variant to compare with the baseline", GATED, key="ga_variant", format_func=NAMES.get)
_write_link()

shipped_pid = next((pid for pid, c in SHIPPED.items() if c == cfg), None)
run_key = repr((cfg, variant))
res = None
if shipped_pid == "default":
    res = sink
elif shipped_pid == "massive" and variant in M.MACT_VARIANTS:
    res = mact
else:
    try:
        M.check_compare(cfg, ["baseline", variant])            # out of bounds: a message, before anything runs
        problem = None
    except M.InputError as exc:
        problem = str(exc)
    secs = M.expected_seconds(cfg, 2)
    if problem:
        st.error(f"{ui.plain(problem)}. Showing the shipped sink default below.", icon=":material/error:")
    elif st.session_state.get("ga_ran") == run_key or st.button(
            f"Train baseline and {NAMES[variant]} for these settings (about {max(1.0, secs):.0f} s on one CPU thread)",
            key="ga_train", icon=":material/play_arrow:", type="primary"):
        st.session_state["ga_ran"] = run_key
        with ui.guard():
            res = ui.compute(M.compare, cfg, ["baseline", variant], label="Training…", run=True)
    else:
        st.info("Showing the shipped sink default below until these settings are trained.", icon=":material/info:")
if res is None:
    res, cfg = sink, D
summ, layers = res["summary"].set_index("variant"), res["layers"]
pair = ["baseline", variant] if variant in summ.index else ["baseline", "g1_elementwise"]
b, g = summ.loc["baseline"], summ.loc[pair[1]]
r_floor = float(res["floor"])
m = st.columns(4)
m[0].metric("F-Attn, baseline", f"{b.fattn:.3f}", f"{b.fattn / r_floor:.1f}× the uniform floor", delta_color="off",
            delta_arrow="off")
m[1].metric(f"F-Attn, {pair[1]}", f"{g.fattn:.3f}", f"{g.fattn / b.fattn:.2f}× baseline", delta_color="off",
            delta_arrow="off")
m[2].metric("Largest |h| / median, baseline → gated", f"{b.mact_ratio:.0f} → {g.mact_ratio:.0f}",
            f"baseline: {b.mact_kind}, layer {b.mact_layer}", delta_color="off", delta_arrow="off")
m[3].metric("Val loss base → gated", f"{b.val_loss:.3f} → {g.val_loss:.3f}",
            f"Bayes CE {float(res['bayes_ce']):.3f}", delta_color="off", delta_arrow="off")

t_maps, t_layers, t_gate, t_curves = st.tabs(["Attention maps", "Per layer", "Gate scores", "Training curves"])
with t_maps:
    st.caption("One validation sequence. Red squares: trigger queries at the key the copy needs (the token before "
               "the trigger); the first column is `<s>`, where a sink piles up.")
    c = st.columns(3)
    n_l, n_h = cfg.n_layers, cfg.n_heads
    if st.session_state["ga_layer"] > n_l:
        st.session_state["ga_layer"] = 1
    if st.session_state["ga_head"] > n_h:
        st.session_state["ga_head"] = 1
    layer = c[0].selectbox("Layer", list(range(1, n_l + 1)), key="ga_layer")
    head_i = c[1].selectbox("Head", list(range(1, n_h + 1)), key="ga_head")
    shown = min(int(c[2].select_slider("Positions shown", [32, 48, 64], key="ga_shown")), cfg.seq_len)
    _write_link()
    trig = [int(i) for i in np.asarray(res["trigger_positions"]) if 1 <= i < shown]
    cols = st.columns(2)
    for col, v in zip(cols, pair):
        a = np.asarray(res["maps"][v], dtype=np.float32)[layer - 1, head_i - 1, :shown, :shown]
        qi, ki = np.tril_indices(shown)
        df = pd.DataFrame({"query": qi, "key": ki, "attention": a[qi, ki]})
        ticks = list(range(0, shown, 8))
        heat = alt.Chart(df).mark_rect().encode(
            x=alt.X("key:O", axis=alt.Axis(values=ticks, title="key position")),
            y=alt.Y("query:O", axis=alt.Axis(values=ticks, title="query position")),
            color=alt.Color("attention:Q", scale=alt.Scale(scheme="blues", domain=[0, 1], type="sqrt"),
                            legend=alt.Legend(orient="bottom")),
            tooltip=["query", "key", alt.Tooltip("attention:Q", format=".3f")])
        marks = alt.Chart(pd.DataFrame({"query": trig, "key": [i - 1 for i in trig]})).mark_square(
            filled=False, color="#E45756", size=40).encode(x="key:O", y="query:O")
        f_l = float(layers.query("variant == @v and layer == @layer").fattn.iloc[0])
        col.altair_chart((heat + marks).properties(
            title=[NAMES[v], f"layer {layer}, head {head_i} · F-Attn(layer) {f_l:.3f}"], height=300), width="stretch",
            height=420)
with t_layers:
    c1, c2 = st.columns(2)
    c1.altair_chart(_bars(layers, pair, "fattn", "First-token attention", "F-Attn", rule=r_floor,
                          rule_text=f"floor {r_floor:.3f}"), width="stretch", height=380)
    c2.altair_chart(_bars(layers, pair, "mact_ratio", "Largest |h| / median |h| per layer", "max / median",
                          rule=M.MACT_RATIO_MIN, rule_text="massive: 100"), width="stretch", height=380)
    st.dataframe(layers[layers.variant.isin(pair)].drop(columns=["mact_dim"]), hide_index=True, width="stretch")
with t_gate:
    hist = res["hist"]
    hv = hist[hist.variant == pair[1]].assign(layer=lambda d: "layer " + d.layer.astype(str))
    if len(hv):
        st.altair_chart(alt.Chart(hv).mark_bar(opacity=0.75).encode(
            x=alt.X("bin_lo:Q", bin=alt.Bin(binned=True, step=1 / M.HIST_BINS), title="gate score σ(XW_θ)"),
            x2="bin_hi:Q", y=alt.Y("share:Q", title="share of gate entries", stack=None),
            color=alt.Color("layer:N", title=None),
            tooltip=["layer", "bin_lo", "bin_hi", alt.Tooltip("share:Q", format=".3f")]).properties(
            title=f"Gate-score histogram · {NAMES[pair[1]]}", height=260), width="stretch", height=360)
    else:
        st.info("This variant has no gate scores.")
with t_curves:
    cv = res["curves"][res["curves"].variant.isin(pair)].assign(model=lambda d: d.variant.map(NAMES))
    c1, c2 = st.columns(2)
    for col, q, title in ((c1, "val_loss", "validation loss"), (c2, "fattn", "F-Attn")):
        col.altair_chart(alt.Chart(cv).mark_line(point=True).encode(
            x="step:Q", y=alt.Y(f"{q}:Q", scale=alt.Scale(zero=False), title=title),
            color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom", columns=1)),
            tooltip=["model", "step", alt.Tooltip(f"{q}:Q", format=".3f")]).properties(height=240),
            width="stretch", height=340)
    st.caption(f"Val loss at 2× the training length (RoPE only): baseline {b.val_loss_2x:.3f}, gated "
               f"{g.val_loss_2x:.3f}." if cfg.pos == "rope" else
               "Learned absolute positions cannot be evaluated beyond the training length; pick RoPE for that.")

# --------------------------------------------------------------------------- massive activations
st.header("Massive activations")
st.markdown(
    "Sun et al. (2024) call an activation **massive** when it is about a thousand times the median |h| of its "
    "layer's hidden state (and above 100); in LLMs they sit on the first token and on delimiters, and the paper "
    "(App. A.4) finds G1 removes them (M-Act 1053 → 94). Measured here per layer on the residual stream (each "
    "layer's output), over 32 validation sequences: the largest |h|, its ratio to the median |h|, the position "
    "holding it, and the first token's largest |h|. Bands: baseline ratio ≥ "
    f"{M.MACT_RATIO_MIN:.0f} on `<s>` or a delimiter, and ≥ {M.MACT_CUT_MIN:.0f}× lower with G1.")
c1, c2 = st.columns(2)
c1.altair_chart(_bars(mact["layers"], M.MACT_VARIANTS, "mact_ratio",
                      f"Largest |h| / median per layer (config {M.MACT_NAME})", "max / median", log=True,
                      rule=M.MACT_RATIO_MIN, rule_text="massive: 100"), width="stretch", height=380)
c2.altair_chart(_bars(mact["layers"], M.MACT_VARIANTS, "bos_ratio",
                      "First token's largest |h| / median per layer", "max |h| at <s> / median", log=True,
                      rule=M.MACT_RATIO_MIN, rule_text="massive: 100"), width="stretch", height=380)
ms = mact["summary"].set_index("variant")
st.markdown(
    f"Head-shared G1 control at {M.MACT_CFG.n_heads} heads (one gate vector for all heads; paper F-Attn 0.301, "
    f"the sink stays): F-Attn **{ms.loc['g1_headshared', 'fattn']:.3f}** vs baseline "
    f"{ms.loc['baseline', 'fattn']:.3f} and head-specific G1 {ms.loc['g1_elementwise', 'fattn']:.3f}; loss "
    f"{ms.loc['baseline', 'val_loss']:.3f} / {ms.loc['g1_elementwise', 'val_loss']:.3f} / "
    f"{ms.loc['g1_headshared', 'val_loss']:.3f} against the realised Bayes cross-entropy "
    f"{float(mact['bayes_ce']):.3f}.")
st.markdown("**Every configuration in the search**, the ones not run included (baseline, and G1 elementwise where "
            "the baseline came near the band; `bos_ratio` is the first token's largest |h| over its layer's median; "
            f"shared settings: `{', '.join(f'{k}={v}' for k, v in M.SEARCH_BASE.items())}`):")
table = M.search_table()
if len(table):
    st.dataframe(table, hide_index=True, width="stretch")
    every_seed = verdict.metrics.get("mact_seeds_meeting") == verdict.metrics.get("mact_seeds_run")
    if not table.meets_bands.any():
        st.warning("No configuration tried gives a massive activation on `<s>` or a delimiter that G1 cuts 5×: "
                   "this toy does not reproduce the paper's massive-activation result. " + M.SEARCH_CONCLUSION,
                   icon=":material/warning:")
    elif verdict.metrics.get("massive_found") and every_seed:
        st.success(M.SEARCH_CONCLUSION, icon=":material/check_circle:")
    else:
        st.warning("A configuration meets the bands, but not in every seed: " + M.SEARCH_CONCLUSION,
                   icon=":material/warning:")
else:
    st.caption("The search table is empty.")

# --------------------------------------------------------------------------- reproduce
st.header("Reproduce the paper")
rows = pd.DataFrame([{
    "variant": NAMES[v], "F-Attn (ours)": s_all.loc[v, "fattn"], "F-Attn (paper)": M.PAPER_TABLE4[v]["fattn"],
    "gate mean (ours)": s_all.loc[v, "gate_mean"], "gate mean (paper)": M.PAPER_TABLE4[v]["gate_mean"],
    "M-Act (ours)": s_all.loc[v, "mact"], "M-Act (paper)": M.PAPER_TABLE4[v]["mact"],
    "max/median (ours)": s_all.loc[v, "mact_ratio"], "sink rate % (ours, ε=0.3)": s_all.loc[v, "sink_rate"],
    "val loss (ours)": s_all.loc[v, "val_loss"], "PPL (paper)": M.PAPER_TABLE4[v]["ppl"]} for v in M.VARIANTS])
st.markdown(f"All seven variants on the sink default (uniform floor {floor:.3f}; realised Bayes CE "
            f"{float(sink['bayes_ce']):.3f}); paper columns are Table 4 (15A2B MoE, 400B tokens), references only.")
st.dataframe(rows, hide_index=True, width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.3f") for c in rows.columns[1:]})
ui.download_csv(rows, "gated_attention_variants.csv", key="dl-variants")
vm = verdict.metrics
ui.reproduce_panel([
    {"quantity": "F-Attn baseline → G1 elementwise", "ours": f"{vm['fattn_baseline']:.3f} → {vm['fattn_g1']:.3f}",
     "paper": "0.467 → 0.048", "note": f"{vm['sink_cut_g1']:.1f}× lower (paper 9.7×); floor {vm['fattn_floor']:.3f}"},
    {"quantity": "Sink rate % (Gu et al., ε = 0.3)", "ours": f"{vm['sink_rate_baseline']:.0f} → {vm['sink_rate_g1']:.1f}",
     "paper": None},
    {"quantity": "Gate mean G1 elementwise (init 0.5)", "ours": vm["gate_mean_g1"], "paper": 0.116},
    {"quantity": f"Largest |h| / median, baseline → G1 (config {M.MACT_NAME})",
     "ours": f"{vm['mact_ratio_baseline']:.0f} → {vm['mact_ratio_g1']:.0f}", "paper": "≈1000 → small",
     "note": vm["mact_where_baseline"]},
    {"quantity": f"First token's largest |h| / median, baseline → G1 (config {M.MACT_NAME})",
     "ours": f"{vm['bos_ratio_baseline']:.0f} → {vm['bos_ratio_g1']:.0f}", "paper": "≈1000 → small",
     "note": f"layer {vm['bos_layer_baseline']} → layer {vm['bos_layer_g1']}; largest |h| at <s> "
             f"{vm['first_token_max_baseline']:.0f} → {vm['first_token_max_g1']:.0f}"},
    {"quantity": "M-Act as the paper defines it (largest |h| per layer, averaged over layers)",
     "ours": f"{vm['mact_paper_def_baseline']:.0f} → {vm['mact_paper_def_g1']:.0f}", "paper": "1053 → 94",
     "note": "scale-dependent: not used for the verdict"},
    {"quantity": f"F-Attn head-shared G1, {vm['n_heads']} heads", "ours": vm.get("fattn_headshared"), "paper": 0.301},
    {"quantity": "Val loss − realised Bayes CE, baseline → G1 (sink default)",
     "ours": f"{vm['sink_val_loss_baseline'] - vm['sink_bayes_ce']:.3f} → {vm['sink_val_loss_g1'] - vm['sink_bayes_ce']:.3f}",
     "paper": "PPL 6.026 → 5.761"},
], verdict=verdict)

# --------------------------------------------------------------------------- details
with st.expander("The toy: the gated layer, the data and the seven variants"):
    st.latex(r"Y_h=\operatorname{softmax}\!\Big(\tfrac{Q_hK_h^\top}{\sqrt{d_h}}+M_{\text{causal}}\Big)V_h,\quad "
             r"Y_h'=Y_h\odot\sigma\!\big(X\,W_\theta^{h}\big),\quad O=[\,Y_1'\;\cdots\;Y_H'\,]\,W_O")
    st.markdown(
        r"$X=\mathrm{RMSNorm}(h)$ is the block's **pre-norm hidden state**, so the gate of token $i$ depends on "
        r"token $i$ only (query-dependent). As in the official code, $W_\theta$ is fused into the query "
        r"projection ($W_Q: d\to 2Hd_h$, split per head into $[\,q\mid\text{gate}\,]$); every weight starts at "
        r"$\mathcal N(0,0.02^2)$, so $\sigma\approx0.5$ at init and any sparsity is learned. Controls: headwise "
        r"($H$ scalars), head-shared (logits averaged over heads), **G2** on the values, input-independent "
        r"$\sigma(\theta)$ and NS-sigmoid $0.5+0.5\sigma$.\n\n"
        "**Data: Bigram-Backcopy** (Guo et al. 2024): a sequence starts with `<s>` and follows a random sparse "
        "bigram chain (64 tokens, Dirichlet(0.1) rows), except after the 3 most frequent *trigger* tokens, where "
        "the next token copies the token before the trigger. A head must copy on triggers and do nothing "
        "elsewhere: the classic way to do nothing is to dump attention on `<s>`, the **attention sink**. The "
        "massive-activation search adds a delimiter token (like '.' or a newline) after 10% of non-triggers. "
        "After it, either a new 'sentence' starts (a uniform draw: search rows B, C, I) or the bigram goes on from "
        "the token before it (a *transparent* delimiter: rows T, T1). With the uniform restart, `<s>` and the "
        "delimiters predict the same fixed distribution, which gives both an output-side reason to carry a huge "
        "fixed value; with the transparent one only `<s>` has a fixed next-token law. Model: pre-norm RMSNorm "
        "decoder, SwiGLU MLP, AdamW (0.9, 0.95).")
    demo = ui.view(M, "layer_demo")
    st.dataframe(demo.drop(columns=["variant"]).rename(columns={
        "label": "variant", "gate_mean_init": "gate mean at init", "loss_init": "loss at init"}),
        hide_index=True, width="stretch")

with st.expander("Adding the gate mid-training (paper App. A.7)"):
    st.markdown("The paper finds that a gate added during continued training does **not** remove a sink that has "
                "already formed. Here the G1 elementwise gate is spliced into the baseline halfway through (fresh "
                "gate weights, everything else kept; same batches). Shown for the sink default.")
    mid = ui.view(M, "gate_midway")
    cm = sink["curves"][sink["curves"].variant.isin(["baseline", "g1_elementwise"])].assign(
        run=lambda d: d.variant.map({"baseline": "baseline (no gate)", "g1_elementwise": "gate from step 0"}))
    mc = mid["curves"].assign(run=f"gate added at step {mid['switch']}")
    both = pd.concat([cm[["run", "step", "fattn"]], mc[["run", "step", "fattn"]]])
    st.altair_chart(alt.Chart(both).mark_line(point=True).encode(
        x="step:Q", y=alt.Y("fattn:Q", title="F-Attn (attention to <s>)"),
        color=alt.Color("run:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["run", "step", alt.Tooltip("fattn:Q", format=".3f")]).properties(height=260), width="stretch",
        height=360)
    fm, f0, fb = mid["summary"]["fattn"], s_all.loc["g1_elementwise", "fattn"], s_all.loc["baseline", "fattn"]
    st.markdown(f"Final F-Attn: baseline **{fb:.3f}**, gate from step 0 **{f0:.3f}**, gate added at step "
                f"{mid['switch']} **{fm:.3f}** (late gate mean {mid['summary']['gate_mean']:.2f}). "
                + ("As in the paper, the late gate does not undo the sink." if fm > (fb + f0) / 2 else
                   "Unlike the paper, the late gate removes much of the sink in this toy."))

with st.expander("Learning-rate sweep (baseline and G1 elementwise as batched models)"):
    with st.form("ga_sweep"):
        lrs = st.multiselect("Learning rates", [1e-3, 3e-3, 1e-2, 2e-2, 3e-2], M.DEFAULT_LRS, key="ga_lrs",
                             format_func=lambda x: f"{x:g}", max_selections=5)
        secs = M.expected_seconds(cfg, 2 * max(1, len(st.session_state.get("ga_lrs", M.DEFAULT_LRS))))
        pressed = st.form_submit_button(f"Run sweep at the settings above (about {max(1.0, secs):.0f} s)",
                                        icon=":material/play_arrow:")
    lrs = sorted(float(x) for x in lrs)
    sweep_key = repr((cfg, lrs))
    if pressed:
        st.session_state["ga_ran_sweep"] = sweep_key
    sweep = None
    if not lrs:
        st.warning("Pick at least one learning rate.")
    elif st.session_state.get("ga_ran_sweep") == sweep_key:
        try:
            sweep = ui.compute(M.lr_sweep, cfg, lrs, label="Sweeping learning rates…", run=True)
        except M.InputError as exc:
            st.error(ui.plain(exc), icon=":material/error:")
    else:
        st.info("Press **Run sweep** to train these learning rates (two batched models).",
                icon=":material/info:")
    if sweep is not None:
        sw = sweep.assign(model=lambda d: d.variant.map(NAMES))
        c1, c2 = st.columns(2)
        for col, q, title in ((c1, "fattn", "F-Attn"), (c2, "val_loss", "validation loss")):
            col.altair_chart(alt.Chart(sw).mark_line(point=True).encode(
                x=alt.X("lr:Q", scale=alt.Scale(type="log"), title="peak learning rate"),
                y=alt.Y(f"{q}:Q", scale=alt.Scale(zero=False), title=title),
                color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom", columns=1)),
                tooltip=["model", "lr", alt.Tooltip(f"{q}:Q", format=".3f")]).properties(height=220),
                width="stretch", height=320)
        st.dataframe(sw.drop(columns=["label", "model"]).dropna(axis=1, how="all"), hide_index=True,
                     width="stretch")
        ui.download_csv(sw.drop(columns=["model"]), "gated_attention_lr_sweep.csv", key="dl-sweep")
ui.device_caption()
