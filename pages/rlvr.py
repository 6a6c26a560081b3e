"""RLVR & reasoning: a toy policy whose per-problem capacity ρ decides whether RL narrows coverage, the
distillation contrast, and pass@k of your own evaluations."""
import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import rlvr as M

TOPIC = "rlvr"
BASE_C, RL_C, TAB_C, DIS_C = "#4C78A8", "#E45756", "#54A24B", "#B279A2"
REDS = ["#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d"]
ERROR_CHARS = 400  # an error shown on the page is cut to this length (it may quote an upload)


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
    bad = [v for v in raw if v not in allowed]
    ui.link_notice([(key, v) for v in bad[:1]], "not offered here")


paper = ui.paper_header(TOPIC)
ui.claim_box(paper)
ui.result_strip(ui.shipped_verdict(TOPIC)[0],
                caption=f"Numbers: pass@1 gain (×) and pass@256 change (points). Toy at its default ρ = "
                        f"{M.DEFAULT_RHO:g}, {M.ToyConfig().steps} GRPO steps, 512 problems, n = 1024 samples each; "
                        "paper: Qwen2.5-7B, GRPO 150 steps, Omni-MATH train.")

# =========================================================================== the finding: rho
st.subheader("How much of what RL learns is shared decides whether RL narrows coverage")
st.latex(r"\pi(s\mid i)=\operatorname{softmax}(\theta+u_i+\phi_i)_s")
st.latex(r"\phi_{i_b}\mathrel{+}=\eta\,\rho\,g_b,\qquad \theta\mathrel{+}=\eta\,(1-\rho)\,\tfrac1B\textstyle\sum_b g_b")
grid = ui.view(M, "rho_sweep")
rhos, steps_opts = list(grid["rhos"]), list(grid["steps"])
_url_notice("rl_rho", rhos)
_url_notice("rl_len", steps_opts)
table = grid["table"].copy()


@ui.fragment
def _rho_section() -> None:
    """ρ and the step count redraw this section alone (a fragment), not the whole page."""
    c1, c2 = st.columns([3, 1])
    rho = c1.select_slider("Capacity share ρ (0: one shared policy · 1: tabular, nothing shared)", rhos,
                           value=M.DEFAULT_RHO, key="rl_rho", bind="query-params")
    n_steps = c2.selectbox("RL steps", steps_opts, index=steps_opts.index(M.ToyConfig().steps), key="rl_len",
                           bind="query-params")
    summ = grid["summary"].copy()  # plain tables: FrozenFrame breaks some pandas internals (dropna)
    row = summ[(summ.seed == grid["seeds"][0]) & (summ.steps == n_steps) & np.isclose(summ.rho, rho)].iloc[0]
    cross = None if pd.isna(row.crossover_k) else int(row.crossover_k)
    cols = st.columns(4)
    cols[0].metric("pass@1, RL", f"{row.pass1_rl:.3f}", f"×{row.pass1_gain:.2f} vs base {row.pass1_base:.3f}",
                   delta_arrow="off")
    cols[1].metric("pass@256, RL", f"{row.pass256_rl:.3f}", f"{-100 * row.pass256_drop:+.1f} pts vs base {row.pass256_base:.3f}")
    cols[2].metric("Crossover k", _fmt_k(cross), help="Smallest k at which base's estimated pass@k is at least RL's "
                   "(a tie counts only if base then leads); 'none' up to k = n = 1024.")
    cols[3].metric("Δ_SE, points", f"{100 * row.delta_se_256:.1f}",
                   help="The paper's sampling-efficiency gap at k = 256: pass@256(base) − pass@1(RL). Paper: 43.9 "
                        "(GRPO).")

    cur = grid["curves"].copy()
    cur = cur[(cur.steps == n_steps) & np.isclose(cur.rho, rho)]
    tab = grid["curves"]
    tab = tab[(tab.steps == n_steps) & np.isclose(tab.rho, 1.0)]
    shared = grid["curves"]
    shared = shared[(shared.steps == n_steps) & np.isclose(shared.rho, 0.0)]
    lines = pd.concat([grid["base_curve"].assign(policy="base"), cur.assign(policy=f"RL, ρ = {rho:g}"),
                       shared.assign(policy="RL, ρ = 0 (all shared)"), tab.assign(policy="RL, ρ = 1 (tabular)")])
    domain = ["base", f"RL, ρ = {rho:g}", "RL, ρ = 0 (all shared)", "RL, ρ = 1 (tabular)"]
    layers = [alt.Chart(lines).mark_line().encode(
        x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (unbiased estimate, n = 1024)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("policy:N", scale=alt.Scale(domain=domain, range=[BASE_C, RL_C, "#F2B8B5", TAB_C]), title=None,
                        legend=alt.Legend(orient="bottom", columns=2)),
        strokeWidth=alt.condition(alt.FieldOneOfPredicate("policy", domain[:2]), alt.value(2.6), alt.value(1.3)),
        tooltip=["policy", "k", alt.Tooltip("pass_at_k:Q", format=".4f")])]
    if cross is not None:
        rule = pd.DataFrame({"k": [cross], "y": [0.04], "label": [f"crossover k = {cross}"]})
        layers += [alt.Chart(rule).mark_rule(color="#444", strokeDash=[4, 3]).encode(x="k:Q"),
                   alt.Chart(rule).mark_text(align="left", dx=4, color="#444").encode(x="k:Q", y="y:Q", text="label:N")]
    left, right = st.columns([3, 2])
    left.altair_chart(alt.layer(*layers).properties(title=f"pass@k after {n_steps} GRPO steps, ρ = {rho:g}",
                                                    height=420), width="stretch")

    t = table[table.steps == n_steps]


    def _vs_rho(df: pd.DataFrame, title: str, band: tuple) -> alt.LayerChart:
        """One metric against ρ: the mean over seeds, its min-max band, the regime band (green), your ρ (dashed)."""
        x = alt.X("rho:Q", title=None, scale=alt.Scale(domain=[0, 1]))
        regime = pd.DataFrame({"lo": [band[0]], "hi": [band[1]]})
        return alt.layer(
            alt.Chart(regime).mark_rect(opacity=0.12, color=TAB_C).encode(y="lo:Q", y2="hi:Q"),
            alt.Chart(df).mark_area(opacity=0.25, color=RL_C).encode(x=x, y=alt.Y("lo:Q", title=None), y2="hi:Q"),
            alt.Chart(df).mark_line(color=RL_C, point=alt.OverlayMarkDef(size=16, color=RL_C)).encode(
                x=x, y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
                tooltip=[alt.Tooltip("rho:Q", title="ρ"), alt.Tooltip("value:Q", format=".2f", title="mean of seeds"),
                         alt.Tooltip("lo:Q", format=".2f", title="min"), alt.Tooltip("hi:Q", format=".2f", title="max")]),
            alt.Chart(pd.DataFrame({"rho": [rho]})).mark_rule(color="#222", strokeDash=[3, 3]).encode(x="rho:Q"),
        ).properties(title=title, height=165)


    gain = pd.DataFrame({"rho": t.rho, "value": t.pass1_gain, "lo": t.pass1_gain_min, "hi": t.pass1_gain_max})
    change = pd.DataFrame({"rho": t.rho, "value": -100 * t.pass256_drop, "lo": -100 * t.pass256_drop_max,
                           "hi": -100 * t.pass256_drop_min})
    right.altair_chart(_vs_rho(gain, "pass@1 gain, ×", (M.REGIME["min_pass1_gain"], float(gain["hi"].max()))),
                       width="stretch")
    right.altair_chart(_vs_rho(change, "pass@256 change, pts", (-100 * M.REGIME["max_pass256_drop"],
                                                                    -100 * M.REGIME["min_pass256_drop"])), width="stretch")
    xk = t.dropna(subset=["crossover_k_median"])
    right.altair_chart(alt.layer(
        alt.Chart(xk).mark_line(color="#444", point=alt.OverlayMarkDef(size=16, color="#444")).encode(
            x=alt.X("rho:Q", title="capacity share ρ", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("crossover_k_median:Q", title=None, scale=alt.Scale(type="log", base=2)),
            tooltip=[alt.Tooltip("rho:Q", title="ρ"), alt.Tooltip("crossover_k_median:Q", title="median crossover k"),
                     alt.Tooltip("crossover_k_min:Q", title="min"), alt.Tooltip("crossover_k_max:Q", title="max")]),
        alt.Chart(pd.DataFrame({"rho": [rho]})).mark_rule(color="#222", strokeDash=[3, 3]).encode(x="rho:Q"),
    ).properties(title="crossover k (median of seeds; none at ρ = 1)", height=185), width="stretch")
    st.caption(
        f"Left: seed 0, estimated from n = 1024 sampled completions per problem, on the 512 training problems (like the "
        f"paper's Omni-MATH train split). Faint red: ρ = 0 (every update shared: large coverage loss); green: ρ = 1 "
        f"(tabular: RL only sharpens each problem on its own, no crossover). Right: mean of seeds "
        f"{', '.join(map(str, grid['seeds']))} with their min–max band, the dashed line at your ρ. The regime in which "
        f"the toy shows the paper's picture (pass@1 ≥ ×{M.REGIME['min_pass1_gain']:g}, a loss of 0 to "
        f"{100 * M.REGIME['max_pass256_drop']:g} points at k = 256, a finite crossover) is the band where every seed is in "
        "it; more steps move it.")


_rho_section()

with st.expander(f"The toy, and how its default ρ = {M.DEFAULT_RHO:g} was chosen (the measured table)"):
    st.markdown(
        "**The toy.** Each problem *i* is solved by choosing one of *S* = 32 strategies. The policy has shared logits "
        "θ (starting at a Zipf prior θ₀[s] = −1.3 ln s), fixed per-problem offsets *u*ᵢ ~ N(0, 1) and learnable "
        "per-problem logits φᵢ (starting at 0). A policy-gradient step *g*_b of prompt *b* is split: a share ρ goes "
        "to the problem's own φ and 1 − ρ to the shared θ. ρ is the policy's per-problem capacity: an LLM can both "
        "generalise across problems (shared) and adapt to a problem (its own). Problem *i* has one correct native "
        "strategy (drawn ∝ 1/s); each of the last 4 *novel* strategies (12 nats below base) also solves it with "
        "probability 0.3. A correct strategy passes the verifier with probability *q*ᵢ ~ Beta(2, 2).")
    st.latex(r"r=\mathrm{Bernoulli}\bigl(q_i\,\mathbb 1[s\ \text{correct for } i]\bigr),\quad "
             r"p_i=q_i\!\!\sum_{s\ \text{correct}}\!\!\pi(s\mid i),\quad "
             r"g_b=\frac1G\sum_g A_{bg}\nabla_z\log\pi(s_{bg}\mid i_b)-\beta\nabla_z\mathrm{KL}(\pi\,\|\,\pi_{\text{base}})")
    st.latex(r"\text{GRPO: }A_g=\frac{r_g-\bar r}{\operatorname{std}(r)}\quad\text{RLOO: }A_g=r_g-\frac{1}{G-1}"
             r"\sum_{j\ne g}r_j\quad\text{REINFORCE: }A_g=r_g")
    st.markdown(f"**Choosing ρ.** {M.RHO_RULE}")
    show = table.assign(
        crossover=[f"{_fmt_k(a)} ({_fmt_k(b)}–{_fmt_k(c)})" for a, b, c in
                   zip(table.crossover_k_median, table.crossover_k_min, table.crossover_k_max)],
        gain=[f"×{a:.2f} ({b:.2f}–{c:.2f})" for a, b, c in
              zip(table.pass1_gain, table.pass1_gain_min, table.pass1_gain_max)],
        change=[f"{-100 * a:+.1f} ({-100 * c:+.1f} to {-100 * b:+.1f})" for a, b, c in
                zip(table.pass256_drop, table.pass256_drop_min, table.pass256_drop_max)])
    st.dataframe(show[["steps", "rho", "gain", "change", "crossover", "all_seeds_in_regime"]].rename(columns={
        "rho": "ρ", "gain": "pass@1 gain, mean (min–max)", "change": "pass@256 change, points",
        "crossover": "crossover k, median (min–max)", "all_seeds_in_regime": "every seed in the regime"}),
        hide_index=True, width="stretch", height=260)
    chosen = {s_: M.choose_rho(table, s_) for s_ in steps_opts}
    st.caption(f"Measured by `rho_sweep` (seeds {', '.join(map(str, grid['seeds']))}; every ρ of a seed trained "
               "as one batched model with the same random draws). The rule applied to this table: "
               + ", ".join(f"{s_} steps → ρ = {'none' if r_ is None else f'{r_:g}'}" for s_, r_ in chosen.items())
               + f" (the default uses {M.ToyConfig().steps}). Crossover 'none': base never overtakes RL up to "
               "k = 1024.")
    ui.download_csv(grid["summary"], "rlvr_rho_sweep.csv", label="Download the ρ sweep (CSV, every seed)",
                    key="rl_dl_rho")

# =========================================================================== details, your data, sweeps
tab_toy, tab_data, tab_sweep = st.tabs([":material/science: Details and your own settings",
                                        ":material/upload_file: Analyse your evaluations",
                                        ":material/tune: Sweep a knob"])

PRESETS = {
    "default": ("The default (ρ = %g, 400 GRPO steps)" % M.DEFAULT_RHO, {}),
    "short": ("Short training (150 steps)", {"rl_steps": 150}),
    "long": ("Long training (800 steps, paper Table 3's direction)", {"rl_steps": 800}),
    "shared": ("One shared policy (ρ = 0)", {"rl_rho_t": 0.0}),
    "tabular": ("Tabular control (ρ = 1)", {"rl_rho_t": 1.0}),
    "kl": ("KL penalty β = 0.001 (paper ablation)", {"rl_kl": 0.001}),
    "g32": ("Group size G = 32 (paper ablation)", {"rl_G": 32}),
    "rloo": ("RLOO", {"rl_algo": "rloo"}),
    "reinforce": ("Plain REINFORCE (no baseline)", {"rl_algo": "reinforce"}),
}
D = M.ToyConfig()
WIDGET_DEFAULTS = {"rl_algo": D.algorithm, "rl_G": D.group_size, "rl_lr": D.lr, "rl_steps": D.steps,
                   "rl_kl": D.kl_coef, "rl_rho_t": D.rho, "rl_n": D.n_samples, "rl_N": D.n_problems,
                   "rl_seed": D.seed, "rl_zipf": D.zipf, "rl_sigma": D.offset_scale, "rl_qa": D.q_alpha,
                   "rl_novel_p": D.novel_correct_prob, "rl_teacher": D.teacher_novel_mass, "rl_gap": D.novel_gap}
BOUNDS = M.CONFIG_BOUNDS.specs


def _init(key: str, default, index_of=None) -> dict:
    """The widget's initial value, unless a preset already put one into session state (no double setting)."""
    if key in st.session_state:
        return {}
    return {"index": list(index_of).index(default)} if index_of is not None else {"value": default}


def _apply_preset():
    for k, v in WIDGET_DEFAULTS.items():
        st.session_state[k] = v
    for k, v in PRESETS.get(st.session_state.get("rl_preset"), ("", {}))[1].items():
        st.session_state[k] = v


# =========================================================================== details / your settings
with tab_toy:
    _url_notice("rl_preset", PRESETS)
    st.selectbox("Preset", list(PRESETS), key="rl_preset", on_change=_apply_preset, bind="query-params",
                 format_func=lambda k: PRESETS[k][0], help="Settings from the paper notes (§3) and the paper's "
                                                           "ablations. Press Train to run them.")
    with st.form("rl_form", border=True):
        c1, c2, c3, c4 = st.columns(4)
        rho_t = c1.select_slider("Capacity share ρ", list(M.RHO_GRID), key="rl_rho_t", **_init("rl_rho_t", D.rho),
                                 bind="query-params")
        algo = c2.selectbox("Algorithm", list(M.ALGORITHMS), key="rl_algo", **_init("rl_algo", D.algorithm, M.ALGORITHMS), bind="query-params",
                            format_func=lambda a: {"grpo": "GRPO", "rloo": "RLOO", "reinforce": "REINFORCE"}[a])
        G = c3.select_slider("Group size G", [2, 4, 8, 16, 32], **_init("rl_G", D.group_size), key="rl_G", bind="query-params")
        lr = c4.select_slider("Learning rate η", [0.01, 0.03, 0.1, 0.3, 1.0, 3.0], **_init("rl_lr", D.lr), key="rl_lr",
                              bind="query-params")
        c1, c2, c3, c4 = st.columns(4)
        steps = c1.slider("RL steps", 0, 1500, step=50, **_init("rl_steps", D.steps), key="rl_steps", bind="query-params")
        kl = c2.select_slider("KL coefficient β", [0.0, 0.001, 0.01, 0.1, 1.0], **_init("rl_kl", D.kl_coef), key="rl_kl",
                              bind="query-params")
        n_samples = c3.select_slider("Samples per problem n (= k_max)", [128, 256, 512, 1024, 2048],
                                     **_init("rl_n", D.n_samples), key="rl_n", bind="query-params")
        n_problems = c4.select_slider("Problems", [128, 256, 512, 1024], **_init("rl_N", D.n_problems), key="rl_N",
                                      bind="query-params")
        with st.expander("Advanced: the problem distribution, the novel strategies, the teacher and the seed"):
            a1, a2, a3, a4 = st.columns(4)
            zipf = a1.slider("Base prior exponent (θ₀ = −a ln s)", 0.0, 3.0, step=0.1, **_init("rl_zipf", D.zipf), key="rl_zipf",
                             bind="query-params")
            offset = a2.slider("Offset scale σ (u ~ N(0, σ²))", 0.0, 3.0, step=0.25, **_init("rl_sigma", D.offset_scale), key="rl_sigma",
                               bind="query-params")
            q_alpha = a3.slider("q ~ Beta(α, 2): α", 0.5, 10.0, step=0.5, **_init("rl_qa", D.q_alpha), key="rl_qa", bind="query-params")
            seed = a4.number_input("Seed", int(BOUNDS["seed"].lo), 10_000, **_init("rl_seed", D.seed), key="rl_seed", bind="query-params")
            a1, a2, a3, _ = st.columns(4)
            novel_p = a1.slider("P(a novel strategy solves a problem)", float(BOUNDS["novel_correct_prob"].lo),
                                float(BOUNDS["novel_correct_prob"].hi), step=0.05, **_init("rl_novel_p", D.novel_correct_prob),
                                key="rl_novel_p", bind="query-params")
            teacher = a2.slider("Teacher's mass on novel strategies", 0.0, 0.9, step=0.05, **_init("rl_teacher", D.teacher_novel_mass),
                                key="rl_teacher", bind="query-params")
            gap = a3.slider("Novel strategies' logit deficit (nats)", 0.0, 20.0, step=1.0, **_init("rl_gap", D.novel_gap), key="rl_gap",
                            bind="query-params")
        cfg = M.ToyConfig(algorithm=algo, group_size=int(G), lr=float(lr), steps=int(steps), kl_coef=float(kl),
                          rho=float(rho_t), n_samples=int(n_samples), n_problems=int(n_problems), seed=int(seed or 0),
                          zipf=float(zipf), offset_scale=float(offset), q_alpha=float(q_alpha),
                          novel_correct_prob=float(novel_p), teacher_novel_mass=float(teacher), novel_gap=float(gap))
        submitted = st.form_submit_button(f"Train (about {max(1, round(2 * M.expected_seconds(cfg)))} s)",
                                          icon=":material/play_arrow:", type="primary", key="rl_train")
    if submitted:
        st.session_state["rl_trained"] = dataclasses.asdict(cfg)
    with ui.guard():
        if cfg == M.ToyConfig():
            res = ui.view(M, "toy_default")
        elif st.session_state.get("rl_trained") == dataclasses.asdict(cfg):
            res = ui.compute(M.run_toy, cfg, label="Training the toy…", run=True)  # Train was pressed
        else:
            st.info("These settings differ from the default: press **Train** to run them. Showing the default "
                    "run meanwhile.", icon=":material/info:")
            res = ui.view(M, "toy_default")
    m = res["metrics"]
    verdict = ui.shipped_verdict(TOPIC)[0]
    rl_name = M.rl_label(m["algorithm"])
    k_max = m["k_max"]
    st.markdown(f"**Showing:** ρ = {m['rho']:g}, {m['steps']} {m['algorithm'].upper()} steps, "
                f"{res['config']['n_problems']} problems, n = {k_max} samples each, seed {res['config']['seed']}.")
    cols = st.columns(4)
    cols[0].metric("pass@1, RL", f"{m['pass1_rl']:.3f}", f"×{m['pass1_gain']:.2f} vs base {m['pass1_base']:.3f}",
                   delta_arrow="off")
    cols[1].metric(f"pass@{m['k_se']}, RL", f"{m['pass256_rl']:.3f}",
                   f"{-100 * m['pass256_drop']:+.1f} pts vs base {m['pass256_base']:.3f}")
    cols[2].metric("Crossover k", _fmt_k(m["crossover_k"]))
    cols[3].metric("Δ_SE, points", f"{100 * m['delta_se']:.1f}",
                   help=f"pass@{m['k_se']}(base) − pass@1(RL), the paper's definition; lower is better.")

    curves = res["curves"].copy()
    long = pd.concat([curves.assign(estimator=f"estimate, n = {k_max}", value=curves["pass_at_k"]),
                      curves.assign(estimator="exact 1−(1−p)^k", value=curves["exact"])])
    domain = ["base", rl_name, "tabular RL", "distilled"]
    color = alt.Color("policy:N", scale=alt.Scale(domain=domain, range=[BASE_C, RL_C, TAB_C, DIS_C]), title=None,
                      legend=alt.Legend(columns=2))
    layers = [alt.Chart(long).mark_line().encode(
        x=_log_k(), y=alt.Y("value:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])), color=color,
        strokeDash=alt.StrokeDash("estimator:N", title=None, scale=alt.Scale(range=[[1, 0], [2, 3]]),
                                  legend=alt.Legend(columns=1)),
        tooltip=["policy", "estimator", "k", alt.Tooltip("value:Q", format=".4f")])]
    if m["crossover_k"] is not None:
        rule_df = pd.DataFrame({"k": [m["crossover_k"]], "y": [0.04], "label": [f"crossover k = {m['crossover_k']}"]})
        layers += [alt.Chart(rule_df).mark_rule(color="#444", strokeDash=[4, 3]).encode(x="k:Q"),
                   alt.Chart(rule_df).mark_text(align="left", dx=4, color="#444").encode(x="k:Q", y="y:Q",
                                                                                         text="label:N")]
    left, right = st.columns(2)
    left.altair_chart(alt.layer(*layers).properties(title=f"pass@k: RL (ρ = {m['rho']:g}), tabular, distilled",
                                                    height=400), width="stretch")
    cp = res["checkpoints"].copy()
    if len(cp):
        ck = pd.concat([curves[curves.policy == "base"].assign(step=0), cp])
        ck = ck.assign(checkpoint=np.where(ck["step"] == 0, "base", "step " + ck["step"].astype(str)))
        order = ["base"] + [f"step {s}" for s in sorted(cp["step"].unique())]
        right.altair_chart(alt.Chart(ck).mark_line().encode(
            x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (estimated)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("checkpoint:N", sort=order, title=None, legend=alt.Legend(columns=3),
                            scale=alt.Scale(domain=order, range=["#222222"] + REDS[-(len(order) - 1):])),
            tooltip=["checkpoint", "k", alt.Tooltip("pass_at_k:Q", format=".4f")]).properties(
            title="RL checkpoints: the crossover moves left", height=400), width="stretch")
    st.caption(f"Solid: unbiased estimate from n = {k_max} sampled completions per problem; dotted: exact "
               "mean 1 − (1 − pᵢ)ᵏ. Every policy is sampled with the same random numbers, so differences between "
               "curves are differences between policies, not luck. Tabular RL is ρ = 1 (green); the distilled model "
               "(purple) is SFT of θ on a teacher that puts half its mass on the novel strategies.")
    stats = res["checkpoint_stats"].copy()
    if len(stats):
        st.dataframe(stats[["step", "pass1_rl", "pass256_rl"] + (["passkmax_rl"] if k_max > m["k_se"] else []) + [
                            "crossover_k", "delta_se",
                            "solved_rl", "rl_solved_subset_fraction", "median_base_nll_of_rl"]].rename(columns={
            "pass1_rl": "pass@1", "pass256_rl": f"pass@{m['k_se']}", "passkmax_rl": f"pass@{k_max}",
            "crossover_k": "crossover k", "delta_se": f"Δ_SE (k={m['k_se']})", "solved_rl": f"solved at k={k_max}",
            "rl_solved_subset_fraction": "share also solved by base",
            "median_base_nll_of_rl": "median −log π_base(RL sample)"}), hide_index=True, width="stretch")

    left, right = st.columns(2)
    hist = res["histogram"].assign(policy=lambda d: d["policy"].replace({"RL": rl_name}))
    left.altair_chart(alt.Chart(hist).mark_bar().encode(
        x=alt.X("bin:N", sort=list(dict.fromkeys(hist["bin"])), title="per-problem accuracy c/n"),
        xOffset=alt.XOffset("policy:N", sort=["base", rl_name]),
        y=alt.Y("share:Q", title="share of problems", axis=alt.Axis(format="%")),
        color=alt.Color("policy:N", scale=alt.Scale(domain=["base", rl_name], range=[BASE_C, RL_C]), title=None),
        tooltip=["policy", "bin", alt.Tooltip("share:Q", format=".1%")]).properties(
        title="Per-problem accuracy c/n", height=380), width="stretch")
    right.altair_chart(alt.Chart(res["likelihood"]).mark_area(opacity=0.5, interpolate="step").encode(
        x=alt.X("nll:Q", title="−log π_base(sample | problem)"),
        y=alt.Y("share:Q", title="share of samples", stack=None, axis=alt.Axis(format="%")),
        color=alt.Color("samples:N", scale=alt.Scale(domain=["base samples", "RL samples"], range=[BASE_C, RL_C]),
                        title=None),
        tooltip=["samples", "nll", alt.Tooltip("share:Q", format=".1%")]).properties(
        title="Base model's log-perplexity of samples", height=380), width="stretch")
    st.caption(f"Left: RL adds mass at accuracy 0 ({m['zero_acc_base']:.1%} → {m['zero_acc_rl']:.1%} of problems) "
               f"and at high accuracy (≥ 0.5: {m['high_acc_base']:.1%} → {m['high_acc_rl']:.1%}), as the paper's "
               f"Fig. 5. Right: median −log π_base {m['median_base_nll_base_samples']:.2f} for base's own samples, "
               f"{m['median_base_nll_rl_samples']:.2f} for RL's: RL samples sit in the likely part of base's "
               "distribution (paper §4, PPL_base(Y_RL)).")
    cov = res["coverage"].copy()
    left, right = st.columns([3, 2])
    scat = cov.assign(p_base_=cov.p_base.clip(1e-8), p_rl_=cov.p_rl.clip(1e-8),
                      status=np.select([(cov.c_base > 0) & (cov.c_rl > 0), cov.c_base > 0, cov.c_rl > 0],
                                       ["both", "base only", "RL only"], "neither"))
    left.altair_chart(alt.Chart(scat).mark_circle(size=24, opacity=0.7).encode(
        x=alt.X("p_base_:Q", scale=alt.Scale(type="log"), title="base success probability pᵢ"),
        y=alt.Y("p_rl_:Q", scale=alt.Scale(type="log"), title="RL success probability p′ᵢ"),
        color=alt.Color("status:N", title=f"solved at k={k_max}",
                        scale=alt.Scale(domain=["both", "base only", "RL only", "neither"],
                                        range=[BASE_C, "#F58518", RL_C, "#BBBBBB"])),
        tooltip=["problem", "correct_strategy", alt.Tooltip("p_base:Q", format=".2e"),
                 alt.Tooltip("p_rl:Q", format=".2e"), "c_base", "c_rl", "status"]).properties(
        title="Per problem: success probability, base vs RL", height=400), width="stretch")
    right.markdown(
        f"**Coverage at k = n = {k_max}.** Base solves **{m['solved_base']}** of {len(cov)} problems, RL "
        f"**{m['solved_rl']}**; RL-only **{m['solved_rl_only']}**, base-only **{m['solved_base_only']}**: "
        f"{m['rl_solved_subset_fraction']:.1%} of what RL solves base also solves (paper, AIME24: RL's 19 are a "
        f"strict subset of base's 23).\n\n"
        f"**Tabular control** (ρ = 1): pass@1 {m['tabular_pass1']:.3f}, pass@{k_max} {m['tabular_passkmax']:.3f}, "
        f"crossover **{_fmt_k(m['tabular_crossover_k'])}** (exact curves: {_fmt_k(m['tabular_crossover_k_exact'])}).\n\n"
        f"**Distillation arm:** pass@1 {m['distill_pass1']:.3f}, pass@{k_max} {m['distill_passkmax']:.3f}; above "
        f"base at every k: **{'yes' if m['distill_above_base_all_k'] else 'no'}** (paper Fig. 7).")
    ui.download_csv(res["curves"], "rlvr_toy_pass_at_k.csv", label="Download pass@k curves (CSV)", key="rl_dl_toy")

    st.subheader("Reproduce: our toy beside the paper")
    P = M.PAPER
    ui.reproduce_panel([
        {"quantity": "pass@1, base → RL", "ours": f"{m['pass1_base']:.3f} → {m['pass1_rl']:.3f} (×{m['pass1_gain']:.2f})",
         "paper": f"{P['pass1_base_train'].value}% → {P['pass1_grpo_train'].value}% (150 steps) → {P['pass1_by_steps'].value[-1]}% (450)",
         "note": "paper: Qwen2.5-7B, GRPO, Omni-MATH train; ours: the toy's training problems"},
        {"quantity": f"pass@{m['k_se']}, base → RL", "ours": f"{m['pass256_base']:.3f} → {m['pass256_rl']:.3f} "
                                                          f"({-100 * m['pass256_drop']:+.1f} pts)",
         "paper": f"{P['pass256_base_train'].value}% → {P['pass256_grpo_train'].value}% → {P['pass256_by_steps'].value[-1]}%",
         "note": "the loss depends on ρ (chart above): large when all is shared"},
        {"quantity": "crossover k", "ours": m["crossover_k"], "paper": "tens to hundreds (benchmark-dependent)",
         "note": "smallest k with base ≥ RL"},
        {"quantity": f"Δ_SE = pass@{m['k_se']}(base) − pass@1(RL), points", "ours": f"{100 * m['delta_se']:.1f}",
         "paper": f"{P['delta_se_grpo'].value} (GRPO) … {P['delta_se_rloo'].value} (RLOO)",
         "note": "ours is larger: the toy's base covers more (pass@256 0.82 vs 0.67) and its pass@1 is lower"},
        {"quantity": "share of RL-solved problems base also solves", "ours": f"{m['rl_solved_subset_fraction']:.1%}",
         "paper": "100% on AIME24 (19 ⊂ 23)", "note": "coverage at k = n"},
        {"quantity": "tabular control (ρ = 1) crossover", "ours": _fmt_k(m["tabular_crossover_k"]),
         "paper": "none (notes' CPU check)", "note": "nothing shared: no coverage loss"},
        {"quantity": "distillation above base at every k", "ours": str(m["distill_above_base_all_k"]),
         "paper": "True (Fig. 7, R1-Distill vs base)", "note": ""},
        {"quantity": "median −log π_base: own samples → RL samples",
         "ours": f"{m['median_base_nll_base_samples']:.2f} → {m['median_base_nll_rl_samples']:.2f}",
         "paper": "PPL_base(Y_RL) in the low part of PPL_base(Y_base)", "note": "RL samples are base-likely"},
    ], verdict=verdict)
    st.caption("Command line: `python -m toymodels reproduce rlvr --quick --out out/` runs the default toy and a "
               "ρ sweep, and prints these numbers as JSON.")

# =========================================================================== your evaluations


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
        st.info("Showing the **example file**: output of *our toy model* (200 toy problems, 256 samples each; "
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
    if an is not None or table is not None:
        base_model = st.selectbox("Base model (the others are compared with it)", models, index=0,
                                  key="rl_base_model", bind="query-params", format_func=lambda s: _short(s, 60))
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
        cov = an["coverage"].copy()
        rows = []
        for mname in an["models"]:
            if mname == an["base"]:
                continue
            b, r = cov[an["base"]].astype(bool), cov[mname].astype(bool)
            rows += [{"model": mname, "set": s, "problems": int(v)} for s, v in (
                ("both", (b & r).sum()), ("base only", (b & ~r).sum()), ("this model only", (~b & r).sum()),
                ("neither", (~b & ~r).sum()))]
        if rows:
            SETS = ["both", "base only", "this model only", "neither"]
            cdf = pd.DataFrame(rows).assign(order=lambda d: d["set"].map(SETS.index))
            st.altair_chart(alt.Chart(cdf).mark_bar().encode(
                y=alt.Y("model:N", title=None), x=alt.X("problems:Q", stack="normalize", title="share of problems",
                                                        axis=alt.Axis(format="%")),
                color=alt.Color("set:N", title="solved at k = n by", sort=SETS,
                                scale=alt.Scale(domain=SETS, range=[BASE_C, "#F58518", RL_C, "#CCCCCC"])),
                order=alt.Order("order:Q"), tooltip=["model", "set", "problems"]).properties(
                title=f"Coverage at k = n, against {_short(an['base'], 40)}", height=alt.Step(32)), width="stretch")
        with st.expander("Per-problem coverage table"):
            st.dataframe(cov, hide_index=True, width="stretch")
        ui.download_csv(cur_u, "rlvr_pass_at_k_curves.csv", label="Download the curves (CSV)", key="rl_dl_curves")


with tab_data:
    _data_tab()


# =========================================================================== sweep


@ui.fragment
def _sweep_tab(cfg: M.ToyConfig) -> None:
    """The sweep: a widget here reruns this tab alone (a fragment); cfg comes from the first tab's form."""
    st.markdown("Sweep one knob of the toy (the others as last trained in the first tab); every setting trains as "
                "one batched model with the same random draws. Steps are read from the checkpoints of one run.")
    _url_notice("rl_sweep_param", M.SWEEPABLE)
    c1, c2 = st.columns([1, 2])
    param = c1.selectbox("Parameter", list(M.SWEEPABLE), key="rl_sweep_param", bind="query-params",
                         format_func=lambda p: M.SWEEPABLE[p][0])
    values = c2.multiselect(f"Values (at most {M.MAX_SWEEP})", M.SWEEP_CHOICES[param],
                            default=M.SWEEP_DEFAULT[param], key=f"rl_sweep_vals_{param}", bind="query-params",
                            max_selections=M.MAX_SWEEP)
    values = sorted(values, key=lambda v: M.SWEEP_CHOICES[param].index(v))
    view_fn, view_kw = M.VIEWS["sweep_default"].fn, M.VIEWS["sweep_default"].arguments()
    is_default = (param == view_kw["param"] and values == list(view_kw["values"]) and cfg == M.ToyConfig())
    sweep_cfg = cfg
    sweep = None
    with ui.guard():
        if not values:
            st.info("Pick at least one value.", icon=":material/info:")
        elif is_default:
            sweep = ui.view(M, "sweep_default")
        else:
            policies = 1 if param == "steps" else len(values)
            worst = dataclasses.replace(sweep_cfg, **({param: max(values)} if param in ("steps", "group_size") else {}))
            secs = max(1, round(2 * M.expected_seconds(worst, policies)))
            key = ("sweep", dataclasses.astuple(sweep_cfg), param, tuple(values))
            if st.button(f"Run the sweep (about {secs} s)", icon=":material/play_arrow:", key="rl_sweep_run"):
                st.session_state["rl_swept"] = key
            if st.session_state.get("rl_swept") == key:
                sweep = ui.compute(M.run_sweep, sweep_cfg, param, values, label="Sweeping…", run=True)
    if sweep is not None:
        sweep = sweep.copy()
        x_type = "N" if param == "algorithm" else "Q"
        x = alt.X(f"{param}:{x_type}", title=M.SWEEPABLE[param][0],
                  scale=alt.Scale(type="symlog", constant=1e-3) if param == "kl_coef" else
                  (alt.Scale(type="log", nice=False, padding=8) if param in ("lr", "group_size", "steps")
                   else alt.Scale()))
        cols = st.columns(3)
        for col, metric, name in ((cols[0], "pass@1", "pass@1"), (cols[1], "pass@256", "pass@256")):
            long = pd.concat([sweep.assign(policy="RL", value=sweep[f"{metric} (RL)"]),
                              sweep.assign(policy="base", value=sweep[f"{metric} (base)"])])
            col.altair_chart(alt.Chart(long).mark_line(point=True).encode(
                x=x, y=alt.Y("value:Q", title=name, scale=alt.Scale(zero=False)),
                color=alt.Color("policy:N", title=None, scale=alt.Scale(domain=["base", "RL"], range=[BASE_C, RL_C])),
                tooltip=[param, "policy", alt.Tooltip("value:Q", format=".4f")]).properties(
                title=name, height=240), width="stretch")
        cx = sweep.dropna(subset=["crossover k"])
        if len(cx) == 0:
            cols[2].info("No setting in this sweep shows a crossover.", icon=":material/info:")
        else:
            cols[2].altair_chart(alt.Chart(cx).mark_line(point=True, color="#444").encode(
                x=x, y=alt.Y("crossover k:Q", scale=alt.Scale(type="log", base=2), title="crossover k (base ≥ RL)"),
                tooltip=[param, "crossover k"]).properties(title="crossover k", height=240), width="stretch")
        if len(cx) < len(sweep):
            st.caption("Settings with no crossover: " + ", ".join(
                str(v) for v in sweep.loc[sweep["crossover k"].isna(), param]) + ".")
        st.dataframe(sweep, hide_index=True, width="stretch")
        ui.download_csv(sweep, f"rlvr_sweep_{param}.csv", label="Download the sweep (CSV)", key="rl_dl_sweep")


with tab_sweep:
    _sweep_tab(cfg)

ui.device_caption()
