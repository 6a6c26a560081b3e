"""RLVR & reasoning: a toy whose problems come in types, so that what RL can and cannot reach follows from the
data; pass@k on training and held-out problems by training length; the ρ toy as a contrast; your evaluations."""
import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import rlvr as M

BASE_C, RL_C, LONG_C, DIS_C, ATY_C = "#4C78A8", "#E45756", "#9D2A28", "#B279A2", "#F58518"
SPLIT_NAMES = {"train": "training problems", "held-out": "held-out problems (never trained on)"}
ERROR_CHARS = 400  # an error shown on the page is cut to this length (it may quote an upload)
H = M.HEADLINE_LENGTH
LONG = M.CLAIM_LENGTHS[-1]


def _fmt_k(k):
    return "none" if k is None or (isinstance(k, float) and np.isnan(k)) else f"{int(k)}"


def _log_k(title="k (log scale)"):
    return alt.X("k:Q", scale=alt.Scale(type="log", base=2), title=title, axis=alt.Axis(tickCount=11))


def _short(text: str, limit: int = ERROR_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _url_notice(key: str, options) -> None:
    """A shared link whose value for ``key`` is not one of ``options`` opens the default, with a notice."""
    raw = st.query_params.get_all(key) if key in st.query_params else []
    allowed = {str(o) for o in options}
    ui.link_notice([(key, v) for v in raw if v not in allowed][:1], "not offered here")


paper = ui.paper_header(M.TOPIC)
verdict, fresh = ui.shipped_verdict(M.TOPIC)
ui.claims_table(verdict)
m = verdict.metrics

# =========================================================================== the headline figure
seeds = ui.view(M, "typed_seeds")
n_seeds = len(seeds["seeds"])
band = M.curve_table(seeds["curves"].copy())
shown = band[((band.policy == "RL") & band.steps.isin([H, LONG])) | band.policy.isin(["base", "distilled"])]
shown = shown.assign(curve=np.where(shown.policy == "RL", "RL, " + shown.steps.astype(str) + " steps", shown.policy),
                     where=shown.split.map(SPLIT_NAMES))
DOMAIN = ["base", f"RL, {H} steps", f"RL, {LONG} steps", "distilled"]
color = alt.Color("curve:N", scale=alt.Scale(domain=DOMAIN, range=[BASE_C, RL_C, LONG_C, DIS_C]), title=None,
                  legend=alt.Legend(orient="bottom"))
head = alt.layer(
    alt.Chart().mark_area(opacity=0.18).encode(x=_log_k(), y=alt.Y("lo:Q"), y2="hi:Q", color=color),
    alt.Chart().mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (unbiased estimate, n = 1024)",
                            scale=alt.Scale(domain=[0, 1])),
        color=color, tooltip=["where", "curve", "k", alt.Tooltip("pass_at_k:Q", format=".3f", title="mean of seeds"),
                              alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")]),
    data=shown,
).properties(height=300, width=330).facet(column=alt.Column("where:N", title=None, sort=list(SPLIT_NAMES.values())))
st.subheader("RL wins at small k, base wins at large k, on problems RL never saw as well")
st.altair_chart(head, width="content")
drop_t, drop_h = 100 * m["pass256_drop_train"], 100 * m["pass256_drop_heldout"]
st.markdown(
    f"**What to notice.** After {H} GRPO steps on the training problems, RL multiplies pass@1 by "
    f"**×{m['pass1_gain_train']:.1f}** there and by **×{m['pass1_gain_heldout']:.1f}** on held-out problems it never "
    f"trained on (paper, Omni-MATH: ×{M.PAPER['pass1_grpo_train'].value / M.PAPER['pass1_base_train'].value:.2f} "
    f"and ×{M.PAPER['pass1_grpo_test'].value / M.PAPER['pass1_base_test'].value:.2f}); at k = 256 base is ahead by "
    f"**{drop_t:.1f}** and **{drop_h:.1f}** points (paper: "
    f"{M.PAPER['pass256_base_train'].value - M.PAPER['pass256_grpo_train'].value:.1f} and "
    f"{M.PAPER['pass256_base_test'].value - M.PAPER['pass256_grpo_test'].value:.1f}); base overtakes RL at k ≈ "
    f"**{_fmt_k(m['crossover_k'])}** (median of seeds, training problems). Bands: 95% t-intervals over "
    f"{n_seeds} seeds.")

st.markdown(
    f"**The toy.** Each problem is solved by one of *S* = {M.TypedConfig().n_strategies} strategies. Problems come in "
    f"*K* = {M.TypedConfig().n_types} **types** (a topic, a kind of question); the policy is shared within a type, "
    "and each type has a typical correct strategy. A share ***a*** of the problems — here "
    f"**a = {M.TypedConfig().atypical:g}**, a property of the data — are **atypical**: another strategy solves "
    "them, drawn from the base model's own prior. RL can only learn what a type's problems have in common, so it "
    "sharpens every problem of a type toward the typical strategy: pass@1 rises on both splits, and the atypical "
    "problems, which the base model solved now and then by sampling widely, starve. (On AIME24 the paper's RL "
    f"model loses {M.PAPER['aime_base_solved'].value - M.PAPER['aime_rl_solved'].value} of the "
    f"{M.PAPER['aime_base_solved'].value} problems base solves: the same order as a.)")
st.latex(r"\pi(s\mid i)=\operatorname{softmax}(\theta_{t_i}+u_i)_s,\qquad "
         r"\theta_t\mathrel{+}=\eta\,\operatorname{mean}_{b:\,t_b=t}\,\frac1G\sum_g A_{bg}\,"
         r"\nabla_z\log\pi(s_{bg}\mid i_b),\qquad p_i=q_i\!\!\sum_{s\ \mathrm{correct}}\!\!\pi(s\mid i)")

# =========================================================================== the story: training length
st.subheader("Longer training: pass@1 keeps rising, the loss at k = 256 grows")
table = seeds["table"].copy()
ours = table.assign(where=table.split.map(SPLIT_NAMES))
paper_rows = pd.DataFrame(M.paper_by_steps()).assign(where=lambda d: d.split.map(SPLIT_NAMES))
x_steps = alt.X("steps:Q", title="GRPO steps", scale=alt.Scale(type="log", nice=False, padding=6))
split_color = alt.Color("where:N", title=None, scale=alt.Scale(domain=list(SPLIT_NAMES.values()),
                                                               range=[RL_C, "#72B7B2"]),
                        legend=alt.Legend(orient="bottom"))


def _by_steps(col: str, scale: float, title: str, paper_col: str) -> alt.LayerChart:
    d = ours.assign(v=scale * ours[col], lo=scale * ours[f"{col}_lo"], hi=scale * ours[f"{col}_hi"])
    if scale < 0:
        d = d.assign(lo=scale * ours[f"{col}_hi"], hi=scale * ours[f"{col}_lo"])
    pts = paper_rows.dropna(subset=[paper_col])
    return alt.layer(
        alt.Chart(d).mark_area(opacity=0.2).encode(x=x_steps, y=alt.Y("lo:Q", title=title), y2="hi:Q",
                                                   color=split_color),
        alt.Chart(d).mark_line(point=True).encode(
            x=x_steps, y="v:Q", color=split_color,
            tooltip=["where", "steps", alt.Tooltip("v:Q", format=".2f", title="mean of seeds"),
                     alt.Tooltip("lo:Q", format=".2f"), alt.Tooltip("hi:Q", format=".2f")]),
        alt.Chart(pts).mark_point(shape="diamond", size=90, filled=True, opacity=0.8).encode(
            x=x_steps, y=alt.Y(f"{paper_col}:Q"), color=split_color,
            tooltip=["where", "steps", alt.Tooltip(f"{paper_col}:Q", format=".2f", title="paper")]),
    ).properties(height=240)


c1, c2 = st.columns(2)
c1.altair_chart(_by_steps("pass1_gain", 1.0, "pass@1 gain, × base", "pass1_gain"), width="stretch")
c2.altair_chart(_by_steps("pass256_drop", -100.0, "pass@256 change, points", "pass256_change"), width="stretch")
by = {d["steps"]: d for d in m.get("drop_by_steps", [])}
claim_steps = [L for L in M.CLAIM_LENGTHS if L in by]
st.markdown(
    "**What to notice.** On the training problems the pass@256 change is "
    + " → ".join(f"**{-100 * by[L]['drop']:+.1f}**" for L in claim_steps) + " points at "
    + " / ".join(map(str, claim_steps)) + " steps (paper, Table 3: "
    + " → ".join(f"{r['pass256_change']:+.1f}" for r in M.paper_by_steps() if r["split"] == "train")
    + "). Lines: our toy (mean of seeds, 95% bands); diamonds: the paper at its own step counts (the toy's steps "
      "are not the paper's: its batches are smaller and its policy has 32 strategies, not a language model).")

# =========================================================================== the story: where coverage goes
st.subheader("What RL gives up is the atypical problems")
story = M.coverage_story(seeds["summary"].copy(), H).set_index("split")
tr = story.loc["train"]
default = ui.view(M, "typed_default")
probs = default["problems"].copy()
probs = probs.assign(kind=np.where(probs.atypical, "atypical for its type", "typical"),
                     p_base_=probs.p_base.clip(lower=1e-6), p_rl_=probs.p_rl.clip(lower=1e-6),
                     where=probs.split.map(SPLIT_NAMES))
left, right = st.columns([3, 2])
left.altair_chart(alt.Chart(probs).mark_circle(size=20, opacity=0.6).encode(
    x=alt.X("p_base_:Q", scale=alt.Scale(type="log", domain=[1e-6, 1]), title="base success probability pᵢ"),
    y=alt.Y("p_rl_:Q", scale=alt.Scale(type="log", domain=[1e-6, 1]), title=f"RL ({H} steps) pᵢ"),
    color=alt.Color("kind:N", scale=alt.Scale(domain=["typical", "atypical for its type"], range=[BASE_C, ATY_C]),
                    title=None, legend=alt.Legend(orient="bottom")),
    tooltip=["where", "problem", "type", "kind", alt.Tooltip("p_base:Q", format=".2e"),
             alt.Tooltip("p_rl:Q", format=".2e"), "c_base", "c_rl"]).properties(
    height=320, title=f"Every problem, seed {default['seed']}: above the diagonal RL helps, below it hurts"),
    width="stretch")
right.markdown(
    f"Over {int(tr['seeds'])} seeds at {H} steps, base solves (some correct sample of 1024) and RL does not: "
    f"**{int(tr['lost'])}** training problems, of which **{int(tr['lost_atypical'])}** are atypical "
    f"({100 * tr['atypical_share_of_lost']:.0f}%; atypical problems are {100 * M.TypedConfig().atypical:g}% of all); "
    f"RL solves **{int(tr['gained'])}** that base does not. An atypical problem's success probability falls from "
    f"**{tr['p_atypical_base']:.3f}** to **{tr['p_atypical_rl']:.3f}** on average, a typical one's rises from "
    f"**{tr['p_typical_base']:.3f}** to **{tr['p_typical_rl']:.3f}**. Held-out problems: "
    f"{int(story.loc['held-out', 'lost'])} lost ({int(story.loc['held-out', 'lost_atypical'])} atypical), "
    f"{int(story.loc['held-out', 'gained'])} gained.")


# =========================================================================== the story: move the data property
@ui.fragment
def _atypical_section() -> None:
    """The share of atypical problems a: a property of the data, moved by the reader (a fragment)."""
    st.subheader("Move the property of the data: the share of atypical problems a")
    sweep = ui.view(M, "atypical_sweep")
    values, lengths = list(sweep["values"]), list(sweep["lengths"])
    _url_notice("rl_a", values)
    _url_notice("rl_len", lengths)
    c1, c2 = st.columns([3, 1])
    a = c1.select_slider("Share of atypical problems a (0: every problem is solved by its type's strategy)", values,
                         value=M.TypedConfig().atypical, key="rl_a", bind="query-params")
    steps = c2.selectbox("GRPO steps", lengths, index=lengths.index(H), key="rl_len", bind="query-params")
    t = sweep["table"].copy()
    t = t[t.steps == steps].assign(where=lambda d: d.split.map(SPLIT_NAMES))
    row = t[np.isclose(t.atypical, a)].set_index("split")
    cols = st.columns(4)
    for col, split in zip(cols[:2], ("train", "held-out")):
        r = row.loc[split]
        col.metric(f"pass@1 gain, {split}", f"×{r.pass1_gain:.2f}", f"{r.pass1_base:.3f} → {r.pass1_rl:.3f}",
                   delta_arrow="off")
    for col, split in zip(cols[2:], ("train", "held-out")):
        r = row.loc[split]
        col.metric(f"pass@256 change, {split}", f"{-100 * r.pass256_drop:+.1f} pts",
                   f"{r.pass256_base:.3f} → {r.pass256_rl:.3f}", delta_arrow="off")
    x = alt.X("atypical:Q", title="share of atypical problems a")
    rule = alt.Chart(pd.DataFrame({"atypical": [a]})).mark_rule(color="#222", strokeDash=[3, 3]).encode(x="atypical:Q")

    def _panel(col, scale, title):
        d = t.assign(v=scale * t[col], lo=scale * t[f"{col}_lo"], hi=scale * t[f"{col}_hi"])
        if scale < 0:
            d = d.assign(lo=scale * t[f"{col}_hi"], hi=scale * t[f"{col}_lo"])
        return alt.layer(
            alt.Chart(d).mark_area(opacity=0.2).encode(x=x, y=alt.Y("lo:Q", title=title), y2="hi:Q", color=split_color),
            alt.Chart(d).mark_line(point=True).encode(
                x=x, y="v:Q", color=split_color, tooltip=["where", "atypical", alt.Tooltip("v:Q", format=".2f"),
                                                          alt.Tooltip("lo:Q", format=".2f"),
                                                          alt.Tooltip("hi:Q", format=".2f")]),
            rule).properties(height=220)

    p1, p2 = st.columns(2)
    p1.altair_chart(_panel("pass1_gain", 1.0, "pass@1 gain, × base"), width="stretch")
    p2.altair_chart(_panel("pass256_drop", -100.0, "pass@256 change, points"), width="stretch")
    zero = t[np.isclose(t.atypical, 0.0) & (t.split == "train")]
    st.caption(
        f"Means of seeds {', '.join(map(str, sweep['seeds']))} (95% bands), every value of a trained on its own data. "
        + (f"With a = 0 the training problems' pass@256 changes by {-100 * zero.pass256_drop.iloc[0]:+.1f} points "
           f"after {steps} steps: what RL gives up comes from the atypical problems." if len(zero) else ""))


_atypical_section()

# =========================================================================== going deeper
tab_run, tab_data, tab_rho, tab_lab = st.tabs([":material/tune: Run it yourself",
                                               ":material/upload_file: Analyse your evaluations",
                                               ":material/compare_arrows: Contrast: the ρ toy",
                                               ":material/menu_book: Lab notebook"])
D = M.TypedConfig()
BOUNDS = M.TYPED_BOUNDS.specs


@ui.fragment
def _run_tab() -> None:
    """Train the typed toy with your own settings (a form: nothing runs until Train is pressed)."""
    st.markdown("Train the typed toy with your settings: one seed, both splits, every training length of the "
                "shipped view (" + ", ".join(map(str, M.TYPED_LENGTHS)) + " steps).")
    with st.form("rl_form", border=True):
        c1, c2, c3, c4 = st.columns(4)
        a = c1.slider("Atypical share a", 0.0, 1.0, D.atypical, 0.05, key="rl_a_run", bind="query-params")
        K = c2.select_slider("Types K", [1, 2, 4, 8, 16, 32, 64, 128, 512], D.n_types, key="rl_K", bind="query-params")
        lr = c3.select_slider("Learning rate η", [0.03, 0.1, 0.3, 1.0, 3.0], D.lr, key="rl_lr", bind="query-params")
        algo = c4.selectbox("Algorithm", list(M.ALGORITHMS), index=0, key="rl_algo", bind="query-params",
                            format_func=lambda x: {"grpo": "GRPO", "rloo": "RLOO", "reinforce": "REINFORCE"}[x])
        c1, c2, c3, c4 = st.columns(4)
        G = c1.select_slider("Group size G", [2, 4, 8, 16, 32], D.group_size, key="rl_G", bind="query-params")
        kl = c2.select_slider("KL coefficient β", [0.0, 0.001, 0.01, 0.1, 1.0], D.kl_coef, key="rl_kl",
                              bind="query-params")
        n = c3.select_slider("Samples per problem n (= k_max)", [128, 256, 512, 1024, 2048], D.n_samples, key="rl_n",
                             bind="query-params")
        seed = c4.number_input("Seed", int(BOUNDS["seed"].lo), 10_000, D.seed, key="rl_seed", bind="query-params")
        cfg = dataclasses.replace(D, atypical=float(a), n_types=int(K), lr=float(lr), algorithm=algo,
                                  group_size=int(G), kl_coef=float(kl), n_samples=int(n), seed=int(seed or 0))
        pressed = st.form_submit_button(f"Train (about {max(1, round(M.expected_seconds(cfg)))} s)", key="rl_train",
                                        icon=":material/play_arrow:", type="primary")
    with ui.guard():
        if cfg == D:
            res = ui.view(M, "typed_default")
        else:
            res = ui.compute(M.typed_run, cfg, M.TYPED_LENGTHS, label="Training the typed toy…", run=pressed,
                             seconds=M.expected_seconds(cfg))
    if res is None:
        st.info("Press **Train** to run these settings.", icon=":material/info:")
        return
    c = res["curves"].copy()
    L = st.select_slider("RL checkpoint (steps)", list(res["lengths"]), H if H in res["lengths"] else
                         res["lengths"][0], key="rl_ck", bind="query-params")
    c = c[(c.policy != "RL") | (c.steps == L)].assign(where=lambda d: d.split.map(SPLIT_NAMES))
    st.altair_chart(alt.Chart(c).mark_line().encode(
        x=_log_k(), y=alt.Y("pass_at_k:Q", title=f"pass@k (estimate, n = {res['config']['n_samples']})",
                            scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("policy:N", scale=alt.Scale(domain=["base", "RL", "distilled"], range=[BASE_C, RL_C, DIS_C]),
                        title=None),
        tooltip=["where", "policy", "k", alt.Tooltip("pass_at_k:Q", format=".4f"),
                 alt.Tooltip("exact:Q", format=".4f")],
    ).properties(height=260, width=330).facet(column=alt.Column("where:N", title=None)), width="content")
    s = res["summary"].copy()
    st.dataframe(s[["split", "steps", "pass1_base", "pass1_rl", "pass1_gain", "pass256_base", "pass256_rl",
                    "pass256_drop", "crossover_k", "solved_base_only", "lost_atypical", "solved_rl_only"]],
                 hide_index=True, width="stretch")
    ui.download_csv(s, "rlvr_typed_run.csv", label="Download the summary (CSV)", key="rl_dl_run")

    st.markdown("**Sweep one knob** (five seeds; every value on its own data).")
    _url_notice("rl_sweep_param", M.TYPED_SWEEPABLE)
    c1, c2 = st.columns([1, 2])
    param = c1.selectbox("Parameter", list(M.TYPED_SWEEPABLE), key="rl_sweep_param", bind="query-params",
                         format_func=lambda p: M.TYPED_SWEEPABLE[p][0])
    choices = M.TYPED_SWEEP_CHOICES[param]
    values = c2.multiselect(f"Values (at most {M.MAX_TYPED_SWEEP})", choices, default=choices[:4],
                            key=f"rl_sweep_vals_{param}", bind="query-params", max_selections=M.MAX_TYPED_SWEEP)
    values = sorted(values, key=choices.index)
    if not values:
        st.info("Pick at least one value.", icon=":material/info:")
        return
    secs = sum(M.expected_seconds(dataclasses.replace(D, **{param: v}), len(M.SWEEP_SEEDS)) for v in values)
    with ui.guard():
        sw = ui.compute(M.typed_sweep, D, param, values, M.TYPED_LENGTHS, M.SWEEP_SEEDS, label="Sweeping…",
                        seconds=secs)
    if sw is None:
        return
    t = sw["table"].copy()
    t = t[t.steps == H].assign(where=lambda d: d.split.map(SPLIT_NAMES), change=lambda d: -100 * d.pass256_drop)
    xk = alt.X(f"{param}:{'N' if param == 'algorithm' else 'O'}", title=M.TYPED_SWEEPABLE[param][0])
    s1, s2 = st.columns(2)
    s1.altair_chart(alt.Chart(t).mark_line(point=True).encode(x=xk, y=alt.Y("pass1_gain:Q", title="pass@1 gain, ×"),
                                                             color=split_color).properties(height=220), width="stretch")
    s2.altair_chart(alt.Chart(t).mark_line(point=True).encode(x=xk, y=alt.Y("change:Q", title="pass@256 change, pts"),
                                                             color=split_color).properties(height=220), width="stretch")
    st.caption(f"At {H} steps, means of seeds {', '.join(map(str, sw['seeds']))}.")
    ui.download_csv(sw["summary"].copy(), f"rlvr_typed_sweep_{param}.csv", label="Download the sweep (CSV)",
                    key="rl_dl_sweep")


with tab_run:
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
    base_model = st.selectbox("Base model (the others are compared with it)", models, index=0, key="rl_base_model",
                              bind="query-params", format_func=lambda s: _short(s, 60))
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
    left.altair_chart(alt.layer(*layers).properties(title=f"pass@k per model (base: {_short(an['base'], 40)})",
                                                    height=320), width="stretch")
    hist = an["histogram"].copy()
    right.altair_chart(alt.Chart(hist).mark_bar().encode(
        x=alt.X("accuracy:N", sort=list(dict.fromkeys(hist["accuracy"])), title="per-problem accuracy c/n"),
        xOffset=alt.XOffset("model:N", sort=models),
        y=alt.Y("share:Q", title="share of problems", axis=alt.Axis(format="%")),
        color=alt.Color("model:N", sort=models, title=None),
        tooltip=["model", "accuracy", "problems", alt.Tooltip("share:Q", format=".1%")]).properties(
        title="Accuracy histogram", height=320), width="stretch")
    st.dataframe(summ_u.rename(columns={"k_max": "k_max (min n)", "solved": "solved at k = n",
                                        "crossover_k": "crossover k (base ≥ model)",
                                        "delta_se": "Δ_SE = pass@256(base) − pass@1",
                                        "delta_se_k": "Δ_SE's k (256, or the largest shared k)",
                                        "subset_of_base": "solved set ⊆ base's"}),
                 hide_index=True, width="stretch")
    with st.expander("Per-problem coverage table"):
        st.dataframe(an["coverage"].copy(), hide_index=True, width="stretch")
    ui.download_csv(cur_u, "rlvr_pass_at_k_curves.csv", label="Download the curves (CSV)", key="rl_dl_curves")


with tab_data:
    _data_tab()


@ui.fragment
def _rho_tab() -> None:
    """The ρ toy of issue 16, kept as a contrast: its shipped grid, read with a slider."""
    st.markdown(
        "The toy this page used before: every problem has its own learnable logits φᵢ beside the shared θ, and a "
        "share ρ of every update goes to φᵢ. Nothing in the paper fixes ρ; **ρ = "
        f"{M.DEFAULT_RHO:g} was chosen as the centre of the band where every seed shows the paper's picture**, so "
        "its claims can only be *illustrated*. Its gain is largely per-problem memorisation (an independent "
        "reimplementation in issue 28 measured ×1.2–1.4 on held-out problems), and its loss at k = 256 shrinks "
        "again with long training: the typed toy above has neither problem.")
    st.latex(r"\pi(s\mid i)=\operatorname{softmax}(\theta+u_i+\phi_i)_s,\quad "
             r"\phi_{i_b}\mathrel{+}=\eta\,\rho\,g_b,\quad "
             r"\theta\mathrel{+}=\eta\,(1-\rho)\,\tfrac1B\textstyle\sum_b g_b")
    grid = ui.view(M, "rho_sweep")
    rhos, steps_opts = list(grid["rhos"]), list(grid["steps"])
    _url_notice("rl_rho", rhos)
    _url_notice("rl_rho_len", steps_opts)
    c1, c2 = st.columns([3, 1])
    rho = c1.select_slider("Capacity share ρ (0: one shared policy · 1: tabular, nothing shared)", rhos,
                           value=M.DEFAULT_RHO, key="rl_rho", bind="query-params")
    n_steps = c2.selectbox("RL steps", steps_opts, index=steps_opts.index(M.ToyConfig().steps), key="rl_rho_len",
                           bind="query-params")
    t = grid["table"].copy()
    t = t[t.steps == n_steps]
    row = t[np.isclose(t.rho, rho)].iloc[0]
    cols = st.columns(3)
    cols[0].metric("pass@1 gain (mean of seeds)", f"×{row.pass1_gain:.2f}")
    cols[1].metric("pass@256 change", f"{-100 * row.pass256_drop:+.1f} pts")
    cols[2].metric("crossover k (median)", _fmt_k(row.crossover_k_median))
    long = pd.concat([t.assign(v=t.pass1_gain, what="pass@1 gain, ×"),
                      t.assign(v=-100 * t.pass256_drop, what="pass@256 change, points")])
    st.altair_chart(alt.layer(
        alt.Chart(long).mark_line(point=True, color=RL_C).encode(
            x=alt.X("rho:Q", title="capacity share ρ"), y=alt.Y("v:Q", title=None),
            tooltip=[alt.Tooltip("rho:Q", title="ρ"), alt.Tooltip("v:Q", format=".2f")]),
        alt.Chart(pd.DataFrame({"rho": [rho]})).mark_rule(color="#222", strokeDash=[3, 3]).encode(x="rho:Q"),
    ).properties(height=170).facet(row=alt.Row("what:N", title=None)).resolve_scale(y="independent"),
        width="stretch")
    st.caption(f"Training problems only (the ρ toy has no held-out split); means of seeds "
               f"{', '.join(map(str, grid['seeds']))}.")


with tab_rho:
    _rho_tab()

with tab_lab:
    st.markdown("**Every configuration tried**, in order, with what it showed (kept in `toymodels.rlvr.LAB_NOTEBOOK`).")
    st.dataframe(pd.DataFrame(M.LAB_NOTEBOOK), hide_index=True, width="stretch",
                 column_config={"what": st.column_config.TextColumn(width="large"),
                                "outcome": st.column_config.TextColumn(width="large")})
    st.markdown("**The claims' thresholds**, committed before the claim seeds "
                f"({M.CLAIM_SEEDS[0]}–{M.CLAIM_SEEDS[-1]}) were run:")
    st.json(dict(M.THRESHOLDS), expanded=False)
    full = seeds["table"].copy()
    st.markdown(f"**The typed toy over {n_seeds} seeds**, every training length (means, 95% t-intervals):")
    st.dataframe(full, hide_index=True, width="stretch", height=280)
    ui.download_csv(seeds["summary"].copy(), "rlvr_typed_seeds.csv", label="Download every seed (CSV)",
                    key="rl_dl_seeds")
    st.markdown(f"**How the ρ toy's ρ = {M.DEFAULT_RHO:g} was chosen.** {M.RHO_RULE}")
    rt = ui.view(M, "rho_sweep")["table"].copy()
    st.dataframe(rt, hide_index=True, width="stretch", height=240)

ui.device_caption()
