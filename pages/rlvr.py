"""RLVR & reasoning: a toy whose problems come in types, so that what RL can and cannot reach follows from the
data; pass@k on training and held-out problems by training length; the ρ toy as a contrast; your evaluations."""
import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import rlvr as M
from toymodels.rlvr import prose

P = ui.PALETTE
BASE_C, RL_C, LONG_C, DIS_C, ATY_C, HELD_C = P[0], P[3], P[1], P[5], P[1], P[2]
SPLIT_NAMES = {"train": "training problems", "held-out": "held-out problems"}
ERROR_CHARS = 400  # an error shown on the page is cut to this length (it may quote an upload)
H = M.HEADLINE_LENGTH
LONG = M.CLAIM_LENGTHS[-1]
D = M.TypedConfig()


_fmt_k, _lead = prose.fmt_k, prose.lead


def _log_k(title="k (log scale)"):
    return alt.X("k:Q", scale=alt.Scale(type="log", base=2), title=title, axis=alt.Axis(tickCount=11))


def _short(text: str, limit: int = ERROR_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


paper = ui.paper_header(M.TOPIC)
verdict, fresh = ui.shipped_verdict(M.TOPIC)
seeds = ui.view(M, "typed_seeds")
n_seeds = len(seeds["seeds"])
m = M.metrics({"typed_seeds": seeds})  # the numbers of the view on screen (the ledger's, when it is fresh)
_head = seeds["table"]
cross_share = float(_head[(_head.split == "train") & (_head.steps == H)].crossover_share.iloc[0])
TABS = ["Contrast: the ρ toy", "Run it yourself", "Analyse your evaluations", "Lab notebook"]
T = {w: ui.term(w, M.TOPIC) for w in ("RLVR", "pass@k", "GRPO", "distilled", "atypical problem", "crossover k",
                                      "ρ toy")}

TOUR = [
    ui.Step("RL sharpens, on problems it never saw too",
            f"After {H} GRPO steps RL multiplies pass@1 by ×{m['pass1_gain_train']:.1f} on the "
            f"training problems and ×{m['pass1_gain_heldout']:.1f} on held-out ones: nothing is "
            "memorised per problem, so the gain transfers.",
            look_at="the RL curves (orange) at k = 1, here and in the held-out chart below",
            target="headline-figure"),
    ui.Step("Base catches up at large k",
            f"Sampling more, base catches up: after {H} steps it is level with RL at k ≈ "
            f"{_fmt_k(m['crossover_k'])} (median of seeds; {100 * cross_share:.0f}% of seeds cross by k = 1024); "
            "at k = 256 "
            f"{_lead(m['pass256_drop_train'])} points.",
            look_at="where the blue base curve meets the orange RL curve, near k = 256", target="headline-figure",
            predict=f"After {H} GRPO steps, who solves more training problems at k = 256 samples: the base model or "
                    "RL?", choices=("the base model", "RL")),
    ui.Step("Train longer, lose more",
            "pass@256 falls with training on both splits, like the paper's Table 3; in the toy the loss only "
            f"appears after {H} steps.",
            look_at="the pass@256 change against GRPO steps", target="chart-rlvr_loss_by_steps"),
    ui.Step("Take the atypical problems away", "With a = 0 every problem is solved by its type's typical strategy: "
            "RL has nothing to give up.", settings={"rl_a": 0.0},
            look_at="'pass@256 change, train' beside the slider", target="rl-atypical",
            predict="With no atypical problems (a = 0), does RL still lose coverage at k = 256?",
            choices=("yes, it still loses", "no, nothing to give up")),
    ui.Step("Make half the problems atypical", "With a = 0.5 the typical strategy solves only half of each type: "
            "the gain shrinks and the loss grows.", settings={"rl_a": 0.5},
            look_at="the same two numbers, and the dashed line on the charts", target="rl-atypical"),
    ui.Step("The old toy, for contrast", "The ρ toy stores a share ρ of every update per problem. At ρ = 0 (one "
            "shared policy) it loses tens of points; ρ was then tuned to land in the paper's regime.",
            settings={"rl_rho": 0.0, "rl_tabs": TABS[0]}, look_at="its pass@256 change", target="rl-rho", hide=()),
]
active = ui.tour(TOUR)

# =========================================================================== the headline figure
band = M.curve_table(seeds["curves"].copy())
shown = band[((band.policy == "RL") & band.steps.isin([H, LONG])) | band.policy.isin(["base", "distilled"])]
shown = shown.assign(curve=np.where(shown.policy == "RL", "RL, " + shown.steps.astype(str) + " steps", shown.policy))
DOMAIN = ["base", f"RL, {H} steps", f"RL, {LONG} steps", "distilled"]
CURVE_SCALE = alt.Scale(domain=DOMAIN, range=[BASE_C, RL_C, LONG_C, DIS_C])
color = alt.Color("curve:N", scale=CURVE_SCALE, title=None,
                  legend=alt.Legend(symbolOpacity=1, orient="bottom", columns=2))


def _passk(d: pd.DataFrame, title: str, height: int = 300) -> alt.LayerChart:
    return alt.layer(
        alt.Chart(d).mark_area(opacity=0.18).encode(x=_log_k(), y=alt.Y("lo:Q"), y2="hi:Q",
                                                    color=color),
        alt.Chart(d).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
            x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])),
            color=color, tooltip=["curve", "k", alt.Tooltip("pass_at_k:Q", format=".3f", title="mean of seeds"),
                                  alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")]),
    ).properties(height=height, title=title)


def _passk_chart(split: str, span: float, height: int = 300) -> None:
    d = shown[shown.split == split]
    ui.chart(_passk(d, f"pass@k on the {SPLIT_NAMES[split]}" + (" (never trained on)" if split == "held-out" else
                                                                 ": RL wins at small k, base catches up"), height),
             f"rlvr_passk_{split}", data=d, span=span,
             alt_text=f"pass@k against k on the {SPLIT_NAMES[split]}: base, RL at {H} and {LONG} steps and the "
                      "distilled policy, means over seeds with 95% bands")


fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    _passk_chart("train", 0.6, 280)
with side_col:
    ui.headline_claim(verdict, claim="pass1-gain", notice=prose.headline_notice(m, H, LONG, T, M.PAPER))
    st.caption(f"{T['RLVR']}: RL on a checked answer. {T['pass@k']}: the chance one of k samples is right (Eq. 2, "
               f"from 1024 a problem). Bands: 95% t-intervals, {n_seeds} seeds.")
ui.ledger_strip(verdict)

# =========================================================================== the story: held-out problems
st.subheader("On problems RL never saw as well")
left, right = st.columns([3, 2], gap="medium")
with left:
    _passk_chart("held-out", 0.6, 280)
right.markdown(prose.heldout_notice(m, T, M.PAPER))

st.markdown(
    f"**The toy, in one line.** Types of problems share a policy; the {T['atypical problem']}s (a share "
    f"a = {D.atypical:g}) need another strategy, so RL, which learns what a type has in common, starves them.")
with st.expander("The toy in full, and its equations", icon=":material/functions:"):
    st.markdown(prose.toy_in_full(D, M.PAPER))
    st.markdown("The policy of problem *i* (type *tᵢ*, fixed offsets *uᵢ* per strategy), GRPO's update of the "
                "shared logits θ, and the success probability of a problem (*qᵢ*: the chance a correct strategy's "
                "answer is right):")
    st.latex(r"\pi(s\mid i)=\operatorname{softmax}(\theta_{t_i}+u_i)_s")
    st.latex(r"\theta_t\mathrel{+}=\eta\,\operatorname{mean}_{b:\,t_b=t}\,\frac1G\sum_g A_{bg}\,"
             r"\nabla_z\log\pi(s_{bg}\mid i_b)")
    st.latex(r"p_i=q_i\!\!\sum_{s\ \mathrm{correct}}\!\!\pi(s\mid i)")

# =========================================================================== the story: training length
SPLIT_SCALE = alt.Scale(domain=list(SPLIT_NAMES.values()), range=[RL_C, HELD_C])
split_color = alt.Color("where:N", title=None, scale=SPLIT_SCALE, legend=alt.Legend(symbolOpacity=1))
if ui.shown("length", active):
    st.subheader("Train longer: pass@1 rises, pass@256 falls")
    table = seeds["table"].copy()
    ours = table.assign(where=table.split.map(SPLIT_NAMES))
    paper_rows = pd.DataFrame(M.paper_by_steps()).assign(where=lambda d: d.split.map(SPLIT_NAMES))
    x_steps = alt.X("steps:Q", title="GRPO steps", scale=alt.Scale(type="log", nice=False, padding=6))

    def _by_steps(col: str, scale: float, title: str, paper_col: str) -> alt.LayerChart:
        lo, hi = (f"{col}_lo", f"{col}_hi") if scale > 0 else (f"{col}_hi", f"{col}_lo")
        d = ours.assign(v=scale * ours[col], lo=scale * ours[lo], hi=scale * ours[hi])
        pts = paper_rows.dropna(subset=[paper_col])
        return alt.layer(
            alt.Chart(d).mark_area(opacity=0.2).encode(x=x_steps, y=alt.Y("lo:Q", title=title), y2="hi:Q",
                                                       color=split_color),
            alt.Chart(d).mark_line(point=True).encode(
                x=x_steps, y="v:Q", color=split_color,
                tooltip=["where", "steps", alt.Tooltip("v:Q", format=".2f", title="mean of seeds"),
                         alt.Tooltip("lo:Q", format=".2f"), alt.Tooltip("hi:Q", format=".2f")]),
            alt.Chart(pts).mark_point(shape="diamond", size=110, filled=True, opacity=0.9).encode(
                x=x_steps, y=alt.Y(f"{paper_col}:Q"), color=split_color,
                tooltip=["where", "steps", alt.Tooltip(f"{paper_col}:Q", format=".2f", title="paper")]),
        ).properties(height=220)

    c1, c2 = st.columns(2)
    with c1:
        ui.chart(_by_steps("pass1_gain", 1.0, "× base", "pass1_gain").properties(
            title="pass@1 gain (× base) by GRPO steps; diamonds: the paper"), "rlvr_gain_by_steps",
                 data=ours, alt_text="pass@1 gain against GRPO steps, both splits, paper diamonds")
    with c2:
        ui.chart(_by_steps("pass256_drop", -100.0, "points", "pass256_change").properties(
            title="pass@256 change (points) by GRPO steps; diamonds: the paper"), "rlvr_loss_by_steps",
                 data=ours,
                 alt_text="pass@256 change in points against GRPO steps, both splits, paper diamonds")
    st.markdown(prose.steps_notice(m, M.CLAIM_LENGTHS, M.paper_by_steps()))

# =========================================================================== the story: where coverage goes
if ui.shown("coverage", active):
    st.subheader("What RL gives up is the atypical problems")
    story = M.coverage_story(seeds["summary"].copy(), H).set_index("split")
    tr, ho = story.loc["train"], story.loc["held-out"]
    default = ui.view(M, "typed_default")
    probs = default["problems"].copy()
    probs = probs[probs.split == "held-out"]
    probs = probs.assign(kind=np.where(probs.atypical, "atypical for its type", "typical"),
                         p_base_=probs.p_base.clip(lower=1e-6), p_rl_=probs.p_rl.clip(lower=1e-6))
    left, right = st.columns([3, 2])
    diag = pd.DataFrame({"p": [1e-6, 1.0]})
    scatter = alt.layer(
        alt.Chart(diag).mark_line(color=ui.NEUTRAL, strokeDash=[4, 3]).encode(x="p:Q", y="p:Q"),
        alt.Chart(probs).mark_circle(size=22, opacity=0.65).encode(
            x=alt.X("p_base_:Q", scale=alt.Scale(type="log", domain=[1e-6, 1]), title="base success probability pᵢ"),
            y=alt.Y("p_rl_:Q", scale=alt.Scale(type="log", domain=[1e-6, 1]), title=f"RL ({H} steps) pᵢ"),
            color=alt.Color("kind:N", scale=alt.Scale(domain=["typical", "atypical for its type"],
                                                      range=[BASE_C, ATY_C]), title=None),
            tooltip=["problem", "type", "kind", alt.Tooltip("p_base:Q", format=".2e"),
                     alt.Tooltip("p_rl:Q", format=".2e"), "c_base", "c_rl"]),
    ).properties(height=260, title=f"Every held-out problem, seed {default['seed']}: above the diagonal RL helps")
    with left:
        ui.chart(scatter, "rlvr_problems", data=probs.drop(columns=["p_base_", "p_rl_"]),
                 alt_text="per-problem success probability under RL against base, held-out split, coloured by "
                          "typical or atypical")
    right.markdown(prose.coverage_notice(tr, ho, H, D.atypical))

# =========================================================================== the story: move the data property
@ui.fragment
def _atypical_section() -> None:
    """The share of atypical problems a: a property of the data, moved by the reader (a fragment)."""
    st.subheader("Move the data: the share a of atypical problems")
    sweep = ui.view(M, "atypical_sweep")
    box = st.container(key="rl-atypical")
    c1, c2 = box.columns([3, 1])
    a, steps = ui.knob(M.KNOBS, "rl_a", where=c1), ui.knob(M.KNOBS, "rl_len", where=c2)
    t = sweep["table"].copy()
    t = t[t.steps == steps].assign(where=lambda d: d.split.map(SPLIT_NAMES))
    row = t[np.isclose(t.atypical, a)].set_index("split")
    row_ = box.container(horizontal=True, gap="medium")  # wraps on a phone (columns would stack four deep)
    cols = [row_] * 4
    for col, split in zip(cols[:2], ("train", "held-out")):
        r = row.loc[split]
        col.metric(f"pass@1 gain, {split}", f"×{r.pass1_gain:.2f}", f"{r.pass1_base:.3f} → {r.pass1_rl:.3f}",
                   delta_arrow="off", width="content")
    for col, split in zip(cols[2:], ("train", "held-out")):
        r = row.loc[split]
        col.metric(f"pass@256 change, {split}", f"{-100 * r.pass256_drop:+.1f} pts",
                   f"{r.pass256_base:.3f} → {r.pass256_rl:.3f}", delta_arrow="off", width="content")
    x = alt.X("atypical:Q", title="share of atypical problems a")
    rule = alt.Chart(pd.DataFrame({"atypical": [a]})).mark_rule(color=ui.NEUTRAL, strokeDash=[3, 3]).encode(
        x="atypical:Q")

    def _panel(col, scale, title):
        lo, hi = (f"{col}_lo", f"{col}_hi") if scale > 0 else (f"{col}_hi", f"{col}_lo")
        d = t.assign(v=scale * t[col], lo=scale * t[lo], hi=scale * t[hi])
        return alt.layer(
            alt.Chart(d).mark_area(opacity=0.2).encode(x=x, y=alt.Y("lo:Q", title=title), y2="hi:Q",
                                                       color=split_color),
            alt.Chart(d).mark_line(point=True).encode(
                x=x, y="v:Q", color=split_color, tooltip=["where", "atypical", alt.Tooltip("v:Q", format=".2f"),
                                                          alt.Tooltip("lo:Q", format=".2f"),
                                                          alt.Tooltip("hi:Q", format=".2f")]),
            rule).properties(height=220)

    p1, p2 = st.columns(2)
    with p1:
        ui.chart(_panel("pass1_gain", 1.0, "× base").properties(
            title=f"pass@1 gain (× base) by the share a, {steps} steps"), "rlvr_gain_by_a", data=t,
                 alt_text="pass@1 gain against the share of atypical problems a, both splits")
    with p2:
        ui.chart(_panel("pass256_drop", -100.0, "points").properties(
            title=f"pass@256 change (points) by the share a, {steps} steps"), "rlvr_loss_by_a", data=t,
                 alt_text="pass@256 change against the share of atypical problems a")
    zero = t[np.isclose(t.atypical, 0.0) & (t.split == "train")]
    st.markdown(
        "**What to notice.** " + (
            f"With a = 0 the training problems' pass@256 changes by **{-100 * zero.pass256_drop.iloc[0]:+.1f}** "
            f"points after {steps} steps; the loss comes from the atypical problems, and grows with their share. "
            if len(zero) else "") + f"{len(sweep['seeds'])} seeds (95% bands); each value of a "
        "trains on its own data.")


if ui.shown("data-property", active):
    _atypical_section()

# =========================================================================== going deeper
tab_rho, tab_run, tab_data, tab_lab = st.tabs(TABS, key="rl_tabs", bind="query-params")  # only the open one draws


@ui.fragment
def _run_tab() -> None:
    """Train the typed toy with your own settings (a form: nothing long runs until Train is pressed)."""
    st.markdown("Train the typed toy with your settings: one seed, both splits, every training length of the "
                "shipped view (" + ", ".join(map(str, M.TYPED_LENGTHS)) + " steps).")
    cfg = ui.form(M.KNOBS, D, ["rl_a_run", "rl_K", "rl_lr", "rl_algo", "rl_G", "rl_kl", "rl_n", "rl_seed"],
                  key="rl_form", submit=lambda c: f"Train (about {max(1, round(M.expected_seconds(c)))} s)")
    pressed = ui.submitted("rl_form")
    res = ui.view_or_compute(M, "typed_default", cfg, M.TYPED_LENGTHS, run=pressed, seconds=M.expected_seconds(cfg))
    if res is None:
        st.info("Press **Train** to run these settings.", icon=":material/info:")
        return
    L = ui.knob(M.KNOBS, "rl_ck")
    c = res["curves"].copy()
    c = c[(c.policy != "RL") | (c.steps == L)]
    cols = st.columns(2)
    for col, split in zip(cols, ("train", "held-out")):
        d = c[c.split == split]
        fig = alt.Chart(d).mark_line().encode(
            x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("policy:N", scale=alt.Scale(domain=["base", "RL", "distilled"],
                                                        range=[BASE_C, RL_C, DIS_C]), title=None),
            tooltip=["policy", "k", alt.Tooltip("pass_at_k:Q", format=".4f"), alt.Tooltip("exact:Q", format=".4f")],
        ).properties(height=340, title=f"{SPLIT_NAMES[split]} (estimate, n = {res['config']['n_samples']})")
        with col:
            ui.chart(fig, f"rlvr_run_{split}", data=d,
                     alt_text=f"pass@k of your run on the {SPLIT_NAMES[split]}")
    s = res["summary"].copy()
    st.dataframe(s[["split", "steps", "pass1_base", "pass1_rl", "pass1_gain", "pass256_base", "pass256_rl",
                    "pass256_drop", "crossover_k", "solved_base_only", "lost_atypical", "solved_rl_only"]],
                 hide_index=True, width="stretch")
    ui.code_for_view(ui.call_snippet("rlvr", "typed_run", cfg, M.TYPED_LENGTHS))

    st.markdown(f"**Sweep one knob** ({len(M.SWEEP_SEEDS)} seeds, {H} steps; every value on its own data).")
    c1, c2 = st.columns([1, 2])
    param = ui.knob(M.KNOBS, "rl_sweep_param", where=c1)
    choices = M.KNOBS[f"rl_sweep_vals_{param}"].choices()
    values = sorted(ui.knob(M.KNOBS, f"rl_sweep_vals_{param}", where=c2), key=choices.index)
    if not values:
        st.info("Pick at least one value.", icon=":material/info:")
        return
    secs = sum(M.expected_seconds(dataclasses.replace(D, **{param: v}), len(M.SWEEP_SEEDS)) for v in values)
    with ui.guard():
        sw = ui.compute(M.typed_sweep, D, param, values, M.TYPED_LENGTHS, M.SWEEP_SEEDS, label="Run this sweep",
                        seconds=secs)
    if sw is None:
        return
    t = sw["table"].copy()
    t = t[t.steps == H].assign(where=lambda d: d.split.map(SPLIT_NAMES), change=lambda d: -100 * d.pass256_drop)
    xk = alt.X(f"{param}:{'N' if param == 'algorithm' else 'O'}", title=M.TYPED_SWEEPABLE[param][0])
    s1, s2 = st.columns(2)
    with s1:
        ui.chart(alt.Chart(t).mark_line(point=True).encode(x=xk, y=alt.Y("pass1_gain:Q", title="pass@1 gain, ×"),
                                                           color=split_color).properties(height=280),
                 f"rlvr_sweep_{param}_gain", data=t, alt_text=f"pass@1 gain against {param}")
    with s2:
        ui.chart(alt.Chart(t).mark_line(point=True).encode(x=xk, y=alt.Y("change:Q", title="pass@256 change, pts"),
                                                           color=split_color).properties(height=280),
                 f"rlvr_sweep_{param}_loss", data=t,
                 alt_text=f"pass@256 change against {param}")
    st.caption(f"Means of seeds {', '.join(map(str, sw['seeds']))}.")


with tab_run:
    if tab_run.open and ui.shown("run", active):
        _run_tab()


@ui.fragment
def _data_tab() -> None:
    """Your evaluations: a widget here reruns this tab alone (a fragment)."""
    st.markdown(
        "Upload your models' samples: either **one row per (model, problem)** with columns `model,problem,n,c` "
        "(c correct out of n samples), or **one row per sample** with `model,problem,correct` (0/1). "
        f"Up to {M.MAX_ROWS:,} rows. Each model's curve runs to k = its smallest n.")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Template: counts", M.TEMPLATE_COUNTS.encode(), "rlvr_template_counts.csv", "text/csv",
                       key="rl_tmpl_counts", icon=":material/download:")
    c2.download_button("Template: one row per sample", M.TEMPLATE_SAMPLES.encode(), "rlvr_template_samples.csv",
                       "text/csv", key="rl_tmpl_samples", icon=":material/download:")
    c3.download_button("The example file (toy output)", M.EXAMPLE_CSV.read_bytes(), "rlvr_example_toy_counts.csv",
                       "text/csv", key="rl_example_dl", icon=":material/download:")
    upload = st.file_uploader("Your evaluation CSV", type=None, key="rl_upload")
    table = an = None
    if upload is None:
        st.info("Showing the **example file**: output of *our ρ toy* (200 toy problems, 256 samples each; "
                "models toy-base, toy-grpo, toy-distilled), **not** a real LLM evaluation.", icon=":material/info:")
        an = ui.view(M, "example_analysis")
        models = list(an["models"])
    else:
        try:
            table = M.read_evaluations(upload.getvalue())
        except M.InputError as exc:
            st.error(f"Could not use **{ui.plain(_short(upload.name, 60))}**: {ui.plain(_short(exc))}",
                     icon=":material/error:")
        if table is not None:
            models = list(dict.fromkeys(table["model"]))
    if an is None and table is None:
        return
    base_model = ui.choice(st.selectbox, "Base model (the others are compared with it)",
                           {s: _short(s, 60) for s in models}, key="rl_base_model")
    if table is not None or base_model != an["base"]:
        with ui.guard():
            an = ui.compute(M.analyse_counts, table if table is not None else M.load_example(), base_model,
                            label="Computing pass@k…", run=True)  # counts: bounded by the upload caps
    summ_u, cur_u = an["summary"].copy(), an["curves"].copy()
    layers = [alt.Chart(cur_u).mark_line(point=alt.OverlayMarkDef(size=12)).encode(
        x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (unbiased estimator)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model:N", sort=models, title=None),
        tooltip=["model", "k", alt.Tooltip("pass_at_k:Q", format=".4f")])]
    if "crossover_k" in summ_u:
        xs = summ_u.dropna(subset=["crossover_k"])
        if len(xs):
            xs = xs.assign(k=xs["crossover_k"].astype(int), y=0.04 + 0.07 * np.arange(len(xs)),
                           label="crossover " + xs["model"].map(lambda s: _short(s, 24)) + ": k="
                           + xs["crossover_k"].astype(int).astype(str))
            layers += [alt.Chart(xs).mark_rule(strokeDash=[4, 3]).encode(
                           x="k:Q", color=alt.Color("model:N", sort=models, legend=None)),
                       alt.Chart(xs).mark_text(align="left", dx=4).encode(
                           x="k:Q", y="y:Q", text="label:N", color=alt.Color("model:N", sort=models, legend=None))]
    left, right = st.columns(2)
    with left:
        ui.chart(alt.layer(*layers).properties(title=f"pass@k per model (base: {_short(an['base'], 40)})",
                                               height=320), "rlvr_your_passk", data=cur_u,
                 alt_text="pass@k against k for each uploaded model")
    hist = an["histogram"].copy()
    with right:
        ui.chart(alt.Chart(hist).mark_bar().encode(
            x=alt.X("accuracy:N", sort=list(dict.fromkeys(hist["accuracy"])), title="per-problem accuracy c/n"),
            xOffset=alt.XOffset("model:N", sort=models),
            y=alt.Y("share:Q", title="share of problems", axis=alt.Axis(format="%")),
            color=alt.Color("model:N", sort=models, title=None),
            tooltip=["model", "accuracy", "problems", alt.Tooltip("share:Q", format=".1%")]).properties(
            title="Accuracy histogram", height=320), "rlvr_your_histogram", data=hist,
            alt_text="share of problems by per-problem accuracy, per model")
    st.dataframe(summ_u.rename(columns={"k_max": "k_max (min n)", "solved": "solved at k = n",
                                        "crossover_k": "crossover k (base ≥ model)",
                                        "delta_se": "Δ_SE = pass@256(base) − pass@1",
                                        "delta_se_k": "Δ_SE's k (256, or the largest shared k)",
                                        "subset_of_base": "solved set ⊆ base's"}),
                 hide_index=True, width="stretch")
    with st.expander("Per-problem coverage table"):
        st.dataframe(an["coverage"].copy(), hide_index=True, width="stretch")


with tab_data:
    if tab_data.open and ui.shown("upload", active):
        _data_tab()


@ui.fragment
def _rho_tab() -> None:
    """The ρ toy of issue 16, kept as a contrast: its shipped grid, read with a slider."""
    st.markdown(
        "The toy this page used before: every problem has its own learnable logits φᵢ beside the shared θ, and a "
        "share ρ of every update goes to φᵢ. Nothing in the paper fixes ρ; **ρ = "
        f"{M.DEFAULT_RHO:g} was chosen as the centre of the band where every seed shows the paper's picture**, so "
        "its claim can only be *illustrated*. Its gain is largely per-problem memorisation (an independent "
        "reimplementation in issue 28 measured ×1.2–1.4 on held-out problems), and its loss at k = 256 shrinks "
        "again with long training: the typed toy above has neither problem.")
    st.latex(r"\begin{gathered}\pi(s\mid i)=\operatorname{softmax}(\theta+u_i+\phi_i)_s\\"  # two lines: a phone
             r"\phi_{i_b}\mathrel{+}=\eta\,\rho\,g_b,\quad"
             r"\theta\mathrel{+}=\eta\,(1-\rho)\,\tfrac1B\textstyle\sum_b g_b\end{gathered}")
    grid = ui.view(M, "rho_sweep")
    box = st.container(key="rl-rho")
    c1, c2 = box.columns([3, 1])
    rho, n_steps = ui.knob(M.KNOBS, "rl_rho", where=c1), ui.knob(M.KNOBS, "rl_rho_len", where=c2)
    t = grid["table"].copy()
    t = t[t.steps == n_steps]
    row = t[np.isclose(t.rho, rho)].iloc[0]
    nums = box.container(horizontal=True, gap="medium")  # wraps on a phone
    nums.metric("pass@1 gain (mean of seeds)", f"×{row.pass1_gain:.2f}", width="content")
    nums.metric("pass@256 change", f"{-100 * row.pass256_drop:+.1f} pts", width="content")
    nums.metric("crossover k (median)", _fmt_k(row.crossover_k_median), width="content")
    x = alt.X("rho:Q", title="capacity share ρ")
    rule = alt.Chart(pd.DataFrame({"rho": [rho]})).mark_rule(color=ui.NEUTRAL, strokeDash=[3, 3]).encode(x="rho:Q")
    p1, p2 = st.columns(2)
    with p1:
        ui.chart(alt.layer(alt.Chart(t).mark_line(point=True, color=RL_C).encode(
            x=x, y=alt.Y("pass1_gain:Q", title="pass@1 gain, ×"), tooltip=["rho", "pass1_gain"]), rule).properties(
            height=260), "rlvr_rho_gain", data=t, alt_text="the ρ toy's pass@1 gain against ρ")
    with p2:
        d = t.assign(change=-100 * t.pass256_drop)
        ui.chart(alt.layer(alt.Chart(d).mark_line(point=True, color=RL_C).encode(
            x=x, y=alt.Y("change:Q", title="pass@256 change, points"), tooltip=["rho", "change"]), rule).properties(
            height=260), "rlvr_rho_loss", data=d,
            alt_text="the ρ toy's pass@256 change against ρ")
    st.caption(f"Training problems only (the ρ toy has no held-out split); means of seeds "
               f"{', '.join(map(str, grid['seeds']))}.")


with tab_rho:
    if tab_rho.open:
        _rho_tab()


def _lab_tab() -> None:
    st.markdown("**Every configuration tried**, in order, with what it showed (`toymodels.rlvr.LAB_NOTEBOOK`).")
    st.table(pd.DataFrame(M.LAB_NOTEBOOK), hide_index=True, border="horizontal")   # wraps: every word shows
    st.markdown("**The claims' thresholds**, committed before the claim seeds "
                f"({M.CLAIM_SEEDS[0]}–{M.CLAIM_SEEDS[-1]}) were run:")
    st.json(dict(M.THRESHOLDS), expanded=False)
    st.markdown(f"**The typed toy over {n_seeds} seeds**, every training length (means, 95% t-intervals):")
    st.dataframe(seeds["table"].copy(), hide_index=True, width="stretch", height=280)
    ui.download_csv(seeds["summary"].copy(), "rlvr_typed_seeds.csv", label="Download every seed (CSV)",
                    key="rl_dl_seeds")
    st.markdown(f"**How the ρ toy's ρ = {M.DEFAULT_RHO:g} was chosen.** {M.RHO_RULE}")
    st.dataframe(ui.view(M, "rho_sweep")["table"].copy(), hide_index=True, width="stretch", height=240)


with tab_lab:
    if tab_lab.open:
        _lab_tab()

ui.page_end(verdict, paper, ui.view_snippet(M, "typed_seeds"),
            cli=f"python -m toymodels reproduce rlvr --seed {M.CLAIM_SEEDS[0]}   # --quick: three seeds",
            shown={"pass@1 gain, training problems": ("M.metrics({'typed_seeds': result})['pass1_gain_train']",
                                                      f"×{m['pass1_gain_train']:.1f}"),
                   "pass@256, base − RL (training problems)": (
                       "M.metrics({'typed_seeds': result})['pass256_drop_train']", f"{m['pass256_drop_train']:+.3f}")})
