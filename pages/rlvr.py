"""RLVR & reasoning: pass@k of real evaluations, and a toy RL-with-verifiable-rewards that shows the crossover."""
import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import rlvr as M

paper = ui.paper_header("rlvr")
ui.claim_box(paper)

st.markdown(
    "**The estimator** (paper Eq. 2). Draw *n* ≥ *k* samples per problem, count the *c* correct ones, and average "
    "over problems the chance that a random *k*-subset contains at least one correct sample:")
st.latex(r"\text{pass@}k \;=\; \mathbb{E}_i\!\left[1-\frac{\binom{n-c_i}{k}}{\binom{n}{k}}\right],\qquad "
         r"\frac{\binom{n-c}{k}}{\binom{n}{k}}=\prod_{t=0}^{k-1}\Bigl(1-\frac{c}{n-t}\Bigr)")
st.caption("Computed in product form (no binomial coefficient is ever formed), one cumulative product per distinct "
           "(n, c), so 10,000 problems × every k ≤ 1024 take a fraction of a second.")

tab_toy, tab_data, tab_sweep = st.tabs([":material/science: Toy RLVR", ":material/upload_file: Analyse your evaluations",
                                        ":material/tune: Sweep"])

COLORS = {"base": "#4C78A8", "RL (GRPO)": "#E45756", "RL (RLOO)": "#E45756", "RL (REINFORCE)": "#E45756",
          "tabular RL": "#54A24B", "distilled": "#B279A2"}
REDS = ["#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d"]
PRESETS = {
    "Notes' CPU toy (default)": {},
    "Short training (150 steps)": {"rl_steps": 150},
    "Long training (1000 steps)": {"rl_steps": 1000},
    "KL penalty β = 0.001 (paper ablation)": {"rl_kl": 0.001},
    "Strong KL penalty β = 0.1": {"rl_kl": 0.1},
    "Group size G = 32 (paper ablation)": {"rl_G": 32},
    "RLOO": {"rl_algo": "rloo"},
    "Plain REINFORCE (no baseline)": {"rl_algo": "reinforce"},
}
WIDGET_DEFAULTS = {"rl_algo": "grpo", "rl_G": 8, "rl_lr": 0.3, "rl_steps": 400, "rl_kl": 0.0, "rl_n": 1024,
                   "rl_N": 512, "rl_seed": 0}


def _apply_preset():
    choice = st.session_state.get("rl_preset")
    for k, v in WIDGET_DEFAULTS.items():
        st.session_state[k] = v
    for k, v in PRESETS.get(choice, {}).items():
        st.session_state[k] = v


def _fmt_k(k):
    return "none" if k is None or (isinstance(k, float) and np.isnan(k)) else f"{int(k)}"


def _log_k(title="k (log scale)"):
    return alt.X("k:Q", scale=alt.Scale(type="log", base=2), title=title, axis=alt.Axis(tickCount=11))


# =========================================================================== the toy
with tab_toy:
    st.markdown(
        "**The toy.** Each problem *i* is solved by choosing one of *S* strategies. The policy shares its logits θ "
        "across problems; each problem adds fixed offsets *u*ᵢ. Problem *i* has one correct *native* strategy "
        "(drawn ∝ 1/s), and each of the last few *novel* strategies (which the base model almost never samples) "
        "is also correct with some probability. A correct strategy passes the verifier with probability *q*ᵢ.")
    st.latex(r"\pi_\theta(s\mid i)=\operatorname{softmax}(\theta+u_i)_s,\quad \theta_0[s]=-1.3\ln s,\quad "
             r"u_{is}\sim\mathcal N(0,1)")
    st.latex(r"r=\mathrm{Bernoulli}\bigl(q_i\,\mathbb 1[s\ \text{correct for } i]\bigr),\quad "
             r"q_i\sim\mathrm{Beta}(2,2),\quad p_i=q_i\!\!\sum_{s\ \text{correct}}\!\!\pi(s\mid i)")
    st.latex(r"\text{GRPO: }A_g=\frac{r_g-\bar r}{\operatorname{std}(r)}\quad\text{RLOO: }A_g=r_g-\frac{1}{G-1}"
             r"\sum_{j\ne g}r_j\quad\text{REINFORCE: }A_g=r_g")
    st.latex(r"\theta\leftarrow\theta+\eta\,\frac1B\sum_b\Bigl[\frac1G\sum_g A_{bg}\nabla\log\pi_\theta(s_{bg}\mid i_b)"
             r"-\beta\,\nabla\mathrm{KL}\bigl(\pi_\theta(\cdot\mid i_b)\,\|\,\pi_{\text{base}}(\cdot\mid i_b)\bigr)\Bigr]")
    st.caption("On-policy (one update per batch), so GRPO's importance ratio is 1 and its clipping never acts; the "
               "KL gradient is exact; GRPO's std is the sample std of the group. Two contrasts: a **tabular** control "
               "where every problem has its own logits (nothing is shared; each visit takes the step the shared "
               "logits take per batch), and a **distillation** arm: SFT of θ on samples of a teacher that puts half its "
               "mass on the novel strategies. pass@k is estimated from *n* sampled completions per problem with the "
               "unbiased estimator, and the exact mean 1 − (1 − pᵢ)ᵏ is drawn beside it (dotted). Every policy is "
               "sampled with the same random numbers (common random numbers), so differences between curves are "
               "differences between policies, not luck.")

    st.selectbox("Preset", list(PRESETS), key="rl_preset", on_change=_apply_preset, bind="query-params",
                 help="Settings from the paper notes (§3) and the paper's ablations.")
    c1, c2, c3, c4 = st.columns(4)
    algo = c1.selectbox("Algorithm", list(M.ALGORITHMS), key="rl_algo", bind="query-params",
                        format_func=lambda a: {"grpo": "GRPO", "rloo": "RLOO", "reinforce": "REINFORCE"}[a])
    G = c2.select_slider("Group size G", [2, 4, 8, 16, 32], value=8, key="rl_G", bind="query-params")
    lr = c3.select_slider("Learning rate η", [0.01, 0.03, 0.1, 0.3, 1.0, 3.0], value=0.3, key="rl_lr",
                          bind="query-params")
    steps = c4.slider("RL steps", 0, 1500, 400, step=50, key="rl_steps", bind="query-params")
    c1, c2, c3, c4 = st.columns(4)
    kl = c1.select_slider("KL coefficient β", [0.0, 0.001, 0.01, 0.1, 1.0], value=0.0, key="rl_kl",
                          bind="query-params")
    n_samples = c2.select_slider("Samples per problem n (= k_max)", [128, 256, 512, 1024, 2048], value=1024,
                                 key="rl_n", bind="query-params")
    n_problems = c3.select_slider("Problems", [128, 256, 512, 1024], value=512, key="rl_N", bind="query-params")
    seed = c4.number_input("Seed", 0, 10_000, 0, key="rl_seed", bind="query-params")
    with st.expander("Advanced: the problem distribution, the novel strategies and the teacher"):
        a1, a2, a3 = st.columns(3)
        zipf = a1.slider("Base prior exponent (θ₀ = −a ln s)", 0.0, 3.0, 1.3, 0.1, key="rl_zipf",
                         bind="query-params")
        offset = a2.slider("Per-problem offset scale σ (u ~ N(0, σ²))", 0.0, 3.0, 1.0, 0.25, key="rl_sigma",
                           bind="query-params")
        q_alpha = a3.slider("q ~ Beta(α, 2): α", 0.5, 10.0, 2.0, 0.5, key="rl_qa", bind="query-params",
                            help="Larger α: the right strategy almost always passes the verifier, so accuracies "
                                 "near 1 become possible.")
        a1, a2, a3 = st.columns(3)
        novel_p = a1.slider("P(a novel strategy solves a problem)", 0.0, 1.0, 0.3, 0.05, key="rl_novel_p",
                            bind="query-params")
        teacher = a2.slider("Teacher's mass on novel strategies", 0.0, 0.9, 0.5, 0.05, key="rl_teacher",
                            bind="query-params")
        gap = a3.slider("Novel strategies' logit deficit in base (nats)", 0.0, 20.0, 12.0, 1.0, key="rl_gap",
                        bind="query-params")
    cfg = M.ToyConfig(algorithm=algo, group_size=int(G), lr=float(lr), steps=int(steps), kl_coef=float(kl),
                      n_samples=int(n_samples), n_problems=int(n_problems), seed=int(seed), zipf=float(zipf),
                      offset_scale=float(offset), q_alpha=float(q_alpha), novel_correct_prob=float(novel_p),
                      teacher_novel_mass=float(teacher), novel_gap=float(gap))
    try:
        res = ui.compute(M.run_toy, cfg, label="Training the toy…")
    except ValueError as exc:
        st.error(f"Invalid settings: {exc}")
        res = None

    if res is not None:
        m = res["metrics"]
        ok = M.checks(m)
        rl_name = f"RL ({algo.upper() if algo != 'reinforce' else 'REINFORCE'})"
        k_max = m["k_max"]
        cols = st.columns(5)
        cols[0].metric("pass@1 (RL)", f"{m['pass1_rl']:.3f}", f"{m['pass1_rl'] - m['pass1_base']:+.3f} "
                       f"(×{m['pass1_rl'] / max(m['pass1_base'], 1e-12):.2f})")
        cols[1].metric(f"pass@{k_max} (RL)", f"{m['passkmax_rl']:.3f}",
                       f"{m['passkmax_rl'] - m['passkmax_base']:+.3f}")
        cols[2].metric("Crossover k", _fmt_k(m["crossover_k"]),
                       help="Smallest k at which the base model's estimated pass@k is at least the RL model's (a tie "
                            "counts only if base then leads).")
        cols[3].metric("Δ_SE", f"{m['delta_se']:.3f}", help=f"pass@{k_max}(base) − pass@1(RL); lower is better.")
        cols[4].metric("RL ⊆ base", f"{m['rl_solved_subset_fraction']:.1%}",
                       help=f"Share of the problems RL solves at k = n = {k_max} that base also solves. {m['solved_rl']} "
                       f"problems solved by RL, {m['solved_base']} by base.")

        curves = res["curves"].copy()
        long = pd.concat([curves.assign(estimator=f"estimate from n={k_max} samples", value=curves["pass_at_k"]),
                          curves.assign(estimator="exact 1−(1−p)^k", value=curves["exact"])])
        domain = ["base", rl_name, "tabular RL", "distilled"]
        color = alt.Color("policy:N", scale=alt.Scale(domain=domain, range=[COLORS[d] for d in domain]),
                          title=None)
        lines = alt.Chart(long).mark_line().encode(
            x=_log_k(), y=alt.Y("value:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])), color=color,
            strokeDash=alt.StrokeDash("estimator:N", title=None,
                                      scale=alt.Scale(range=[[1, 0], [2, 3]])),
            tooltip=["policy", "estimator", "k", alt.Tooltip("value:Q", format=".4f")])
        layers = [lines]
        if m["crossover_k"] is not None:
            rule_df = pd.DataFrame({"k": [m["crossover_k"]], "label": [f"crossover k = {m['crossover_k']}"]})
            layers += [alt.Chart(rule_df).mark_rule(color="#444", strokeDash=[4, 3]).encode(x="k:Q"),
                       alt.Chart(rule_df.assign(y=0.97)).mark_text(align="left", dx=4, color="#444").encode(
                           x="k:Q", y="y:Q", text="label:N")]
        left, right = st.columns(2)
        left.altair_chart(alt.layer(*layers).properties(
            title=f"pass@k after {m['steps']} RL steps", height=340), width="stretch")
        cp = res["checkpoints"]
        if len(cp):
            base_c = curves[curves.policy == "base"].assign(step=0)
            ck = pd.concat([base_c, cp])
            ck["checkpoint"] = np.where(ck["step"] == 0, "base", "step " + ck["step"].astype(str))
            order = ["base"] + [f"step {s}" for s in sorted(cp["step"].unique())]
            ck_chart = alt.Chart(ck).mark_line().encode(
                x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (estimated)", scale=alt.Scale(domain=[0, 1])),
                color=alt.Color("checkpoint:N", sort=order, title=None,
                                scale=alt.Scale(domain=order, range=["#222222"] + REDS[-(len(order) - 1):])),
                tooltip=["checkpoint", "k", alt.Tooltip("pass_at_k:Q", format=".4f")])
            right.altair_chart(ck_chart.properties(title="RL checkpoints: crossover moves left",
                                                   height=340), width="stretch")
        st.caption(f"Solid: unbiased estimate from n = {k_max} sampled completions per problem; dotted: exact "
                   "mean 1 − (1 − pᵢ)ᵏ. Left: base (blue) overtakes RL (red) at the dashed crossover; the tabular "
                   "control (green) never falls below base; the distilled model (purple) is above base at every k.")
        stats = res["checkpoint_stats"]
        if len(stats):
            st.dataframe(stats[["step", "pass1_rl"] + (["pass256_rl"] if k_max > 256 else []) + ["passkmax_rl", "crossover_k", "delta_se",
                                "solved_rl", "rl_solved_subset_fraction", "median_base_nll_of_rl"]].rename(columns={
                "pass1_rl": "pass@1", "pass256_rl": "pass@256", "passkmax_rl": f"pass@{k_max}",
                "crossover_k": "crossover k", "delta_se": "Δ_SE", "solved_rl": f"solved at k={k_max}",
                "rl_solved_subset_fraction": "share also solved by base",
                "median_base_nll_of_rl": "median −log π_base(RL sample)"}), hide_index=True, width="stretch")

        left, right = st.columns(2)
        hist = res["histogram"].copy()
        hist["policy"] = hist["policy"].replace({"RL": rl_name})
        bins_order = list(dict.fromkeys(hist["bin"]))
        left.altair_chart(alt.Chart(hist).mark_bar().encode(
            x=alt.X("bin:N", sort=bins_order, title="per-problem accuracy c/n"),
            xOffset=alt.XOffset("policy:N", sort=["base", rl_name]),
            y=alt.Y("share:Q", title="share of problems", axis=alt.Axis(format="%")),
            color=alt.Color("policy:N", scale=alt.Scale(domain=["base", rl_name],
                                                        range=[COLORS["base"], COLORS[rl_name]]), title=None),
            tooltip=["policy", "bin", alt.Tooltip("share:Q", format=".1%")]).properties(
            title="Per-problem accuracy c/n", height=300), width="stretch")
        lk = res["likelihood"]
        right.altair_chart(alt.Chart(lk).mark_area(opacity=0.5, interpolate="step").encode(
            x=alt.X("nll:Q", title="−log π_base(sample | problem)"),
            y=alt.Y("share:Q", title="share of samples", stack=None, axis=alt.Axis(format="%")),
            color=alt.Color("samples:N", scale=alt.Scale(domain=["base samples", "RL samples"],
                                                         range=[COLORS["base"], COLORS[rl_name]]), title=None),
            tooltip=["samples", "nll", alt.Tooltip("share:Q", format=".1%")]).properties(
            title="Base model's log-perplexity of samples", height=300), width="stretch")

        st.caption(f"Left: RL adds mass at accuracy 0 ({m['zero_acc_base']:.1%} → {m['zero_acc_rl']:.1%} of "
                   f"problems) and at high accuracy (≥ 0.5: {m['high_acc_base']:.1%} → {m['high_acc_rl']:.1%}); the "
                   f"top bin is capped by each problem's q ~ Beta(2, 2). Right: −log π_base of samples (a one-step "
                   f"answer's log-perplexity) — median {m['median_base_nll_base_samples']:.2f} for base's own samples, "
                   f"{m['median_base_nll_rl_samples']:.2f} for RL's: RL samples sit in the likely part of base's "
                   "distribution (paper §4, PPL_base(Y_RL)).")
        cov = res["coverage"]
        left, right = st.columns([3, 2])
        scat = cov.assign(p_base_=cov.p_base.clip(1e-8), p_rl_=cov.p_rl.clip(1e-8),
                          status=np.select([(cov.c_base > 0) & (cov.c_rl > 0), cov.c_base > 0, cov.c_rl > 0],
                                           ["both", "base only", "RL only"], "neither"))
        left.altair_chart(alt.Chart(scat).mark_circle(size=28, opacity=0.7).encode(
            x=alt.X("p_base_:Q", scale=alt.Scale(type="log"), title="base success probability pᵢ"),
            y=alt.Y("p_rl_:Q", scale=alt.Scale(type="log"), title="RL success probability p′ᵢ"),
            color=alt.Color("status:N", title=f"solved at k={k_max}",
                            scale=alt.Scale(domain=["both", "base only", "RL only", "neither"],
                                            range=["#4C78A8", "#F58518", "#E45756", "#BBBBBB"])),
            tooltip=["problem", "correct_strategy", alt.Tooltip("p_base:Q", format=".2e"),
                     alt.Tooltip("p_rl:Q", format=".2e"), "c_base", "c_rl", "status"]).properties(
            title="Per problem: success probability, base vs RL", height=320), width="stretch")
        right.markdown(
            f"**Coverage at k = n = {k_max}.** Base solves **{m['solved_base']}** of {len(cov)} problems, RL "
            f"**{m['solved_rl']}**. RL-only: **{m['solved_rl_only']}**; base-only: **{m['solved_base_only']}**. "
            f"{m['rl_solved_subset_fraction']:.1%} of the problems RL solves are also solved by base "
            f"(paper, AIME24: RL's 19 are a strict subset of base's 23).\n\n"
            f"**Tabular control** (no shared parameters): pass@1 {m['tabular_pass1']:.3f}, pass@{k_max} "
            f"{m['tabular_passkmax']:.3f}, crossover: **{_fmt_k(m['tabular_crossover_k'])}**.\n\n"
            f"**Distillation arm:** pass@1 {m['distill_pass1']:.3f}, pass@{k_max} {m['distill_passkmax']:.3f}; "
            f"above base at every k: **{'yes' if m['distill_above_base_all_k'] else 'no'}**.")
        labels = {"pass1_rl_at_least_1.5x_base": "pass@1(RL) ≥ 1.5 × pass@1(base)",
                  "passkmax_rl_below_base": f"pass@{k_max}(RL) < pass@{k_max}(base)",
                  "crossover_between_2_and_kmax": f"a crossover with 2 ≤ k ≤ {k_max}",
                  "tabular_no_crossover": "no crossover for the tabular control",
                  "distill_above_base_all_k": "distillation above base at every k"}
        failed = [labels[k] for k, v in ok.items() if not v]
        if m["tabular_crossover_k"] is not None and m.get("tabular_crossover_k_exact") is None:
            right.caption(f"The tabular control's *estimated* curve touches base at k ≥ {m['tabular_crossover_k']}, "
                          "where both are within sampling noise of each other (tabular RL barely moves problems it "
                          "almost never solves); its *exact* curve stays above base at every k.")
        if failed:
            right.warning("With these settings the toy does **not** show: " + "; ".join(failed) + ".",
                          icon=":material/warning:")
        else:
            right.success("All five qualitative claims hold with these settings.", icon=":material/check_circle:")
        ui.download_csv(res["curves"], "rlvr_toy_pass_at_k.csv", label="Download pass@k curves (CSV)")

        st.subheader("Reproduce: our toy beside the paper")
        P = M.PAPER
        ui.reproduce_panel([
            {"quantity": "pass@1, base → RL", "ours": f"{m['pass1_base']:.3f} → {m['pass1_rl']:.3f}",
             "paper": f"{P['pass1_base']}% → {P['pass1_grpo_150']}% (150 steps) → {P['pass1_grpo_450']}% (450)",
             "note": "paper: Qwen2.5-7B, GRPO, Omni-MATH train; ours: toy, in-domain problems"},
            {"quantity": "pass@256, base → RL", "ours": f"{m['pass256_base']:.3f} → {m['pass256_rl']:.3f}",
             "paper": f"{P['pass256_base']}% → {P['pass256_grpo_150']}% → {P['pass256_grpo_450']}%",
             "note": "the toy's drop is much larger than the paper's 1-3 points"},
            {"quantity": "crossover k", "ours": m["crossover_k"], "paper": "tens to hundreds (benchmark-dependent)",
             "note": "smallest k with base ≥ RL"},
            {"quantity": "Δ_SE = pass@k_max(base) − pass@1(RL), points",
             "ours": f"{100 * m['delta_se']:.1f} (k_max={k_max}); {100 * (m['pass256_base'] - m['pass1_rl']):.1f} "
                     f"(k_max={min(256, k_max)})",
             "paper": f"{P['delta_se_grpo']} (GRPO) … {P['delta_se_rloo']} (RLOO), k_max = 256",
             "note": "lower is better; all algorithms stay large"},
            {"quantity": "share of RL-solved problems base also solves",
             "ours": f"{m['rl_solved_subset_fraction']:.1%}", "paper": "100% on AIME24 (19 ⊂ 23)",
             "note": "coverage at k = n"},
            {"quantity": "tabular control crossover (estimate / exact)",
             "ours": f"{_fmt_k(m['tabular_crossover_k'])} / {_fmt_k(m.get('tabular_crossover_k_exact'))}",
             "paper": "none (notes' CPU check: 0.057→0.405 @1, 0.827→0.898 @256)", "note": "no shared parameters"},
            {"quantity": "distillation above base at every k", "ours": str(m["distill_above_base_all_k"]),
             "paper": "True (Fig. 7, R1-Distill vs base)", "note": ""},
            {"quantity": "median −log π_base: own samples → RL samples",
             "ours": f"{m['median_base_nll_base_samples']:.2f} → {m['median_base_nll_rl_samples']:.2f}",
             "paper": "PPL_base(Y_RL) sits in the low part of PPL_base(Y_base)", "note": "RL samples are base-likely"},
        ], verdict=("The toy reproduces the paper's qualitative picture: RL multiplies pass@1, the base model "
                    "overtakes it at large k, RL's solved set is (almost) a subset of base's, the tabular control "
                    "never crosses and distillation stays above base. It does not reproduce the size: its large-k "
                    "loss is tens of points where the paper's is 1-3, because a 32-parameter shared policy can only "
                    "sharpen by starving rare strategies." if all(ok.values()) else
                    "With these settings the toy misses: " + "; ".join(failed) + "."),
            reproduced=all(ok.values()))
        st.caption("Command line: `python -m toymodels reproduce rlvr --quick --out out/` runs the same experiment.")

# =========================================================================== your evaluations
with tab_data:
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
    table = None
    if upload is None:
        st.info("Showing the **example file**: output of *our toy model* (200 toy problems, 256 samples each; "
                "models toy-base, toy-grpo, toy-distilled), **not** a real LLM evaluation.",
                icon=":material/info:")
        table = M.load_example()
    else:
        try:
            table = M.read_evaluations(upload.getvalue())
        except M.CSVError as exc:
            st.error(f"Could not use **{upload.name}**: {exc}", icon=":material/error:")
    if table is not None:
        models = list(dict.fromkeys(table["model"]))
        base_model = st.selectbox("Base model (the others are compared with it)", models,
                                  index=0, key="rl_base_model", bind="query-params")
        if base_model not in models:
            base_model = models[0]
        an = ui.compute(M.analyse_counts, table, base_model, label="Computing pass@k…")
        summ = an["summary"]
        cur = an["curves"]
        layers = [alt.Chart(cur).mark_line(point=alt.OverlayMarkDef(size=12)).encode(
            x=_log_k(), y=alt.Y("pass_at_k:Q", title="pass@k (unbiased estimator)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", sort=models, title=None),
            tooltip=["model", "k", alt.Tooltip("pass_at_k:Q", format=".4f")])]
        if "crossover_k" in summ:
            xs = summ.dropna(subset=["crossover_k"])
            if len(xs):
                xs = xs.assign(k=xs["crossover_k"].astype(int), y=0.97 - 0.07 * np.arange(len(xs)),
                               label="crossover " + xs["model"] + ": k=" + xs["crossover_k"].astype(int).astype(str))
                layers += [alt.Chart(xs).mark_rule(strokeDash=[4, 3]).encode(x="k:Q", color=alt.Color(
                               "model:N", sort=models, legend=None)),
                           alt.Chart(xs).mark_text(align="left", dx=4).encode(
                               x="k:Q", y="y:Q", text="label:N", color=alt.Color("model:N", sort=models, legend=None))]
        left, right = st.columns(2)
        left.altair_chart(alt.layer(*layers).properties(title=f"pass@k per model (base: {base_model})",
                                                        height=340), width="stretch")
        hist = an["histogram"]
        right.altair_chart(alt.Chart(hist).mark_bar().encode(
            x=alt.X("accuracy:N", sort=list(dict.fromkeys(hist["accuracy"])), title="per-problem accuracy c/n"),
            xOffset=alt.XOffset("model:N", sort=models), y=alt.Y("share:Q", title="share of problems",
                                                                   axis=alt.Axis(format="%")),
            color=alt.Color("model:N", sort=models, title=None),
            tooltip=["model", "accuracy", "problems", alt.Tooltip("share:Q", format=".1%")]).properties(
            title="Accuracy histogram", height=340), width="stretch")
        show = summ.copy()
        st.dataframe(show.rename(columns={"k_max": "k_max (min n)", "solved": "solved at k = n",
                                          "crossover_k": "crossover k (base ≥ model)",
                                          "delta_se": "Δ_SE = pass@k_max(base) − pass@1",
                                          "subset_of_base": "solved set ⊆ base's"}),
                     hide_index=True, width="stretch")
        cov = an["coverage"]
        rows = []
        for mname in models:
            if mname == base_model:
                continue
            b, r = cov[base_model].astype(bool), cov[mname].astype(bool)
            rows += [{"model": mname, "set": s, "problems": int(v)} for s, v in (
                ("both", (b & r).sum()), ("base only", (b & ~r).sum()), ("this model only", (~b & r).sum()),
                ("neither", (~b & ~r).sum()))]
        if rows:
            SETS = ["both", "base only", "this model only", "neither"]
            cdf = pd.DataFrame(rows)
            cdf["order"] = cdf["set"].map(SETS.index)
            st.altair_chart(alt.Chart(cdf).mark_bar().encode(
                y=alt.Y("model:N", title=None), x=alt.X("problems:Q", stack="normalize", title="share of problems",
                                                        axis=alt.Axis(format="%")),
                color=alt.Color("set:N", title="solved at k = n by", sort=SETS,
                                scale=alt.Scale(domain=SETS, range=["#4C78A8", "#F58518", "#E45756", "#CCCCCC"])),
                order=alt.Order("order:Q"),
                tooltip=["model", "set", "problems"]).properties(
                title=f"Coverage at k = n, against {base_model}", height=alt.Step(32)), width="stretch")
        with st.expander("Per-problem coverage table"):
            st.dataframe(cov, hide_index=True, width="stretch")
        ui.download_csv(cur, "rlvr_pass_at_k_curves.csv", label="Download the curves (CSV)", key="rl_dl_curves")

# =========================================================================== sweep
with tab_sweep:
    st.markdown("Sweep one knob of the toy (the others as set in the *Toy RLVR* tab); every setting trains as one "
                "batched model. Steps are read from the checkpoints of a single run.")
    defaults = {"steps": "50, 100, 200, 400, 800", "kl_coef": "0, 0.001, 0.01, 0.1, 1",
                "group_size": "2, 4, 8, 16, 32", "lr": "0.03, 0.1, 0.3, 1", "algorithm": "grpo, rloo, reinforce"}
    c1, c2 = st.columns([1, 2])
    param = c1.selectbox("Parameter", list(M.SWEEPABLE), key="rl_sweep_param", bind="query-params",
                         format_func=lambda p: M.SWEEPABLE[p][0])
    raw = c2.text_input("Values (comma-separated, at most 12)", defaults[param], key=f"rl_sweep_vals_{param}",
                        bind="query-params")
    values, err = [], None
    try:
        values = [M.SWEEPABLE[param][1](v.strip().lower()) for v in raw.split(",") if v.strip()]
        if param in ("steps", "group_size"):
            values = [int(v) for v in values]
        values = list(dict.fromkeys(values))
        if not values or len(values) > 12:
            err = "Give between 1 and 12 values."
        else:
            for v in values:
                M.validate(dataclasses.replace(cfg, **{param: v}))
            if param == "group_size" and max(values) > 32:
                err = "Group sizes above 32 are not offered here (bounded compute)."
    except ValueError as exc:
        err = f"Could not read the values: {exc}"
    if err:
        st.error(err)
    else:
        sweep_cfg = cfg if param != "steps" else dataclasses.replace(cfg, steps=M.ToyConfig().steps)
        sweep = ui.compute(M.run_sweep, sweep_cfg, param, values, label="Sweeping…")
        x_type = "N" if param == "algorithm" else "Q"
        x = alt.X(f"{param}:{x_type}", title=M.SWEEPABLE[param][0],
                  scale=alt.Scale(type="symlog", constant=1e-3) if param == "kl_coef" else
                  (alt.Scale(type="log", nice=False, padding=8) if param in ("lr", "group_size", "steps")
                   else alt.Scale()))
        kmx = int(sweep["k_max"].iloc[0])
        cols = st.columns(3)
        for col, metric, name in ((cols[0], "pass@1", "pass@1"), (cols[1], "pass@k_max", f"pass@{kmx}")):
            long = pd.concat([sweep.assign(policy="RL", value=sweep[f"{metric} (RL)"]),
                              sweep.assign(policy="base", value=sweep[f"{metric} (base)"])])
            col.altair_chart(alt.Chart(long).mark_line(point=True).encode(
                x=x, y=alt.Y("value:Q", title=name, scale=alt.Scale(zero=False)),
                color=alt.Color("policy:N", title=None, scale=alt.Scale(domain=["base", "RL"],
                                                                        range=[COLORS["base"], "#E45756"])),
                tooltip=[param, "policy", alt.Tooltip("value:Q", format=".4f")]).properties(
                title=name, height=260), width="stretch")
        cx = sweep.dropna(subset=["crossover k"])
        if len(cx) == 0:
            cols[2].info("No setting in this sweep shows a crossover.", icon=":material/info:")
        else:
            cols[2].altair_chart(alt.Chart(cx).mark_line(point=True, color="#444").encode(
                x=x, y=alt.Y("crossover k:Q", scale=alt.Scale(type="log", base=2), title="crossover k (base ≥ RL)"),
                tooltip=[param, "crossover k"]).properties(title="crossover k", height=260), width="stretch")
        if len(cx) < len(sweep):
            st.caption("Settings with no crossover: " + ", ".join(
                str(v) for v in sweep.loc[sweep["crossover k"].isna(), param]) + ".")
        st.dataframe(sweep, hide_index=True, width="stretch")
        ui.download_csv(sweep, f"rlvr_sweep_{param}.csv", label="Download the sweep (CSV)", key="rl_dl_sweep")

ui.device_caption()
