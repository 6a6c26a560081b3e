"""Diffusion memorization: Bonnaire, Urfin, Biroli, Mézard (NeurIPS 2025). A thin page over toymodels.diffusion."""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.diffusion as D
import ui
from toymodels.diffusion import prose

TOPIC = D.TOPIC

LOGX = alt.Scale(type="log")
FLOOR = D.FMEM_FLOOR


def mosaic(images, scale: int = 6, per_row: int = 8) -> np.ndarray:
    """8×8 images (values in [-1, 1]) side by side as one grey picture, 1 blank cell between them."""
    imgs = np.clip((np.asarray(images, float).reshape(-1, 8, 8) + 1) / 2, 0, 1)
    rows = -(-len(imgs) // per_row)
    out = np.ones((rows * 9 - 1, per_row * 9 - 1))
    for k, im in enumerate(imgs):
        r, c = divmod(k, per_row)
        out[r * 9:r * 9 + 8, c * 9:c * 9 + 8] = 1 - im       # dark strokes on white
    return np.kron(out, np.ones((scale, scale)))


def side_by_side(*charts) -> None:
    """Charts in equal columns, each titled (``ui.chart`` draws the title as text above it, which wraps in a narrow
    column, and keeps it in the exported figure). Each item: (title, chart, name for the downloads, data or None)."""
    for column, (title, chart, name, data) in zip(st.columns(len(charts)), charts):
        with column:
            ui.chart(chart.properties(title=title), name, data=data, alt_text=title)


def timescale_chart(ts: pd.DataFrame, fits: dict, ns, names: dict, height: int = 400) -> alt.LayerChart:
    """τ_gen and τ_mem against n on log-log axes: one small point per seed, a diamond per geometric mean, the fitted
    power law dashed. ``fits``: time → its line (``D.power_fit``); ``names``: time → legend label."""
    ts = ts.assign(label=ts.time.map(names))
    x = alt.X("n:Q", scale=alt.Scale(type="log", nice=False, domain=[min(ns) / 1.25, max(ns) * 1.25]),
              title="training-set size n", axis=alt.Axis(values=list(ns)))
    y = alt.Y("steps:Q", scale=alt.Scale(type="log"), title="training steps")
    color = alt.Color("label:N", title=None, sort=list(names.values()),
                      legend=alt.Legend(orient="bottom", columns=1, labelLimit=0))
    tip = ["n", "seed", "label", alt.Tooltip("steps:Q", format=",.0f")]
    seeds = alt.Chart(ts[ts.kind == "seed"]).mark_point(size=45, opacity=0.55, filled=True).encode(
        x=x, y=y, color=color, tooltip=tip)
    means = alt.Chart(ts[ts.kind != "seed"]).mark_point(size=170, filled=True, shape="diamond").encode(
        x=x, y=y, color=color, tooltip=["n", "label", alt.Tooltip("steps:Q", format=",.0f")])
    lines = [alt.Chart(line.assign(label=names[time])).mark_line(strokeDash=[6, 3]).encode(x="n:Q", y="steps:Q",
                                                                                           color=color)
             for time, line in fits.items() if len(line)]
    return alt.layer(seeds, means, *lines).properties(height=height)


TABS = ["The window", "CFM vs EFM", "Theory: random features", "Watch it denoise", "Flow matching & ELS",
        "Lab notebook"]
TOUR = [
    ui.Step("The window", "Each small dot is one model (one seed), each diamond the geometric mean over the seeds "
            "of one training-set size n. The time to good samples τ_gen stays flat while the memorisation time "
            "τ_mem climbs with n: between the two, the model generates without copying.",
            settings={"diff_tab": TABS[0]}, look_at="the slope of τ_mem and its 95% interval beside the figure",
            target="headline-figure"),
    ui.Step("The collapse", "Plot every seed's f_mem against τ/n instead of τ: the curves of all sizes fall on one "
            "another, as in the paper's Fig. 2. The bar chart below reads them off at fixed multiples of n.",
            settings={"diff_tab": TABS[0]}, look_at="the curves of every n on top of each other",
            target="chart-diffusion_collapse",
            predict="Memorisation against training steps τ starts later for larger n. Plotted against τ/n instead, "
                    "do the curves of different n fall on one another?",
            choices=("yes, one curve", "no, they fan out")),
    ui.Step("Not the target's noise (Bertrand et al.)", "If the noise of the conditional target x₁ − x₀ kept "
            "models from memorising, training on the noiseless closed-form target (EFM) would memorise more. Same "
            "network, same digits, paired seeds.",
            settings={"diff_tab": TABS[1]}, look_at="Δf_mem (EFM − CFM) and its 95% interval in the table",
            target="diff-fm",
            predict="Train the same network on the noiseless closed-form target (EFM) instead of the noisy one "
                    "(CFM): does it memorise much more?", choices=("much more", "about the same")),
    ui.Step("Why: the random-features theory", "In §3 the score is a random-features model whose gradient flow is "
            "solved exactly: the population bulk of U's spectrum is learned at τ_gen ~ 1/Δ_t, the finite-sample "
            "bulk ρ₁ at τ_mem = ψ_p/(Δ_t λ_min) ∝ ψ_n.",
            settings={"diff_tab": TABS[2]}, look_at="the mean τ_mem slope against ψ_n and its interval",
            target="chart-diffusion_rf_timescales"),
    ui.Step("Train your own", "A live sweep: three sizes, one seed each, 100 steps per training point (about half "
            "a minute; the estimate is on the Run button). Press Run and compare your slopes with the study's.",
            settings={"diff_tab": TABS[0], "win_ns": [16, 32, 64], "win_spn": 100, "win_seeds": 1},
            look_at="the caption under your run: τ_mem ∝ n^… and τ_gen ∝ n^…", target="diff-sweep"),
]

paper = ui.paper_header(TOPIC)
verdict, fresh = ui.shipped_verdict(TOPIC)
active = ui.tour(TOUR)
T = {w: ui.term(w, TOPIC) for w in ("τ_gen", "τ_mem", "f_mem", "GMM", "DDIM")}

# --------------------------------------------------------------------------- the headline figure
study = ui.view(D, "study")
scfg, ssum, sper = study["config"], study["summary"], study["per_model"]
names = {"τ_gen": f"τ_gen ∝ n^{study['tau_gen_slope']:.2f}", "τ_mem": f"τ_mem ∝ n^{study['tau_mem_slope']:.2f}"}
fits = {"τ_gen": D.power_fit(ssum, "tau_gen").rename(columns={"tau_gen": "steps"}),
        "τ_mem": D.power_fit(ssum, "tau_mem").rename(columns={"tau_mem": "steps"})}
headline = D.timescales(sper, ssum)
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    ui.chart(timescale_chart(headline, fits, scfg["ns"], names, height=300).properties(
        title="Generalise first, memorise later: τ_gen flat, τ_mem ∝ n (log-log)"), "diffusion_window",
        data=headline, span=0.6,
        alt_text="τ_gen and τ_mem against the training-set size n on log-log axes, per seed and geometric means")
with side_col:
    ui.headline_claim(verdict, claim="tau-mem-linear", notice=prose.headline_notice(study, T))
    st.caption(f"{T['f_mem']}: the share of samples that copy a training point. Dots: seeds; diamonds: geometric "
               "means; dashed: the fitted power law.")
if not fresh:
    st.caption("Some shipped views are stale: their numbers may differ from what the code computes now.")
ui.ledger_strip(verdict)
with st.expander("How the window study was run", icon=":material/science:"):
    st.markdown(prose.study_method(study, T))

tab_win, tab_fm, tab_rf, tab_viz, tab_more, tab_lab = st.tabs(TABS, key="diff_tab", bind="query-params")

nsel = alt.selection_point(fields=["n_label"], bind="legend")
op = alt.condition(nsel, alt.value(1.0), alt.value(0.12))
FMEM_Y = alt.Y("f_plot:Q", title="f_mem (log; 0 drawn at 10⁻³)", scale=alt.Scale(type="log", domain=[FLOOR, 1]))


def n_color(ns) -> alt.Color:
    return alt.Color("n_label:N", title=None, sort=[f"n = {n}" for n in ns],
                     legend=alt.Legend(orient="bottom", columns=4))


def window_tab(wcfg: D.WindowConfig) -> D.WindowConfig:
    """The window tab; returns the live sweep's knobs (``wcfg``, the shipped view's, when the sweep is not shown)."""
    mean = D.window_curves(study["curves"]).assign(f_plot=lambda d: d.f_mem_plot)
    per_seed = D.seed_curves(study["curves"])
    col = n_color(scfg["ns"])
    tip = ["n", "step", alt.Tooltip("f_mem:Q", format=".3f"), alt.Tooltip("score_err:Q", format=".4f")]
    fm = alt.Chart(mean).mark_line(point=True).encode(
        x=alt.X("step:Q", scale=LOGX, title="training steps τ"), y=FMEM_Y, color=col, opacity=op,
        tooltip=tip).add_params(nsel)
    band = alt.Chart(mean).mark_area(opacity=0.15).encode(
        x=alt.X("step:Q", scale=LOGX), y=alt.Y("f_lo_plot:Q", scale=alt.Scale(type="log", domain=[FLOOR, 1])),
        y2="f_hi_plot:Q", color=col)
    collapse = alt.Chart(per_seed).mark_line(opacity=0.6).encode(
        x=alt.X("steps_over_n:Q", scale=LOGX, title="τ / n"), y=FMEM_Y, color=col, detail="model:N", opacity=op,
        tooltip=["model", alt.Tooltip("steps_over_n:Q", format=".0f"), alt.Tooltip("f_mem:Q", format=".3f")]
    ).add_params(nsel)
    side_by_side((f"Memorisation starts later for larger n (mean of {scfg['seeds']} seeds)", (band + fm).properties(
        height=330), "diffusion_fmem", mean), ("Every seed's f_mem against τ/n: the curves collapse",
                                                collapse.properties(height=330), "diffusion_collapse", per_seed))
    st.caption("The left band is the seeds' mean of each model's bootstrap interval (1,000 samples). Click a legend "
               "entry to highlight one n.")
    ct = D.collapse_table(ssum)
    bars = alt.Chart(ct).mark_bar().encode(
        x=alt.X("n:O", title="n", axis=alt.Axis(labelAngle=0)), xOffset="when:N",
        y=alt.Y("f_mem:Q", title="f_mem (mean over seeds)"),
        color=alt.Color("when:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["n", "when", alt.Tooltip("f_mem:Q", format=".3f"), alt.Tooltip("sd:Q", format=".3f")])
    ticks = alt.Chart(ct).mark_rule(color=ui.NEUTRAL).encode(x="n:O", xOffset="when:N", y="lo:Q", y2="hi:Q")
    se = alt.Chart(mean).mark_line(point=True).encode(
        x=alt.X("step:Q", scale=LOGX, title="training steps τ"),
        y=alt.Y("score_err:Q", scale=alt.Scale(type="log"), title="score error (lower = better)"),
        color=col, opacity=op, tooltip=tip).add_params(nsel)
    side_by_side(("f_mem at fixed τ/n (the collapse test; bars: ± 1 sd over seeds)", (bars + ticks).properties(
        height=300), "diffusion_fixed_tau_over_n", ct), ("Quality arrives at the same time for every n",
                                                         se.properties(height=300), "diffusion_score_error", mean))
    gapc = alt.Chart(mean).mark_line(point=True).encode(
        x=alt.X("steps_over_n:Q", scale=LOGX, title="τ / n"), y=alt.Y("gap:Q", title="test − train loss, t = 0.01"),
        color=col, opacity=op, tooltip=["n", "step", alt.Tooltip("gap:Q", format=".4f")]).add_params(nsel)
    with st.expander("The train/test gap, and τ per seed (the numbers the claims read)", icon=":material/table:"):
        ui.chart(gapc.properties(height=260, title="The train/test gap opens at τ ∝ n too"), "diffusion_gap",
                 data=mean, alt_text="test minus train denoising loss at t = 0.01 against τ/n, per n")
        st.markdown("**τ_mem per seed and size** (the claims read these):")
        table = D.per_seed_table(sper)
        st.dataframe(table, hide_index=True, width="stretch", key="win-table",
                     column_config={c: st.column_config.NumberColumn(
                         format="%.0f" if c.startswith("τ_") and "/" not in c else "%.3f")
                         for c in table.columns if c not in ("n", "seed")})
        ui.download_csv(table, "diffusion_window_per_seed.csv", label="Download τ per seed (CSV)")
        ui.download_csv(study["curves"], "diffusion_window_curves.csv", label="Download every checkpoint (CSV)",
                        key="win-curves-csv")

    if ui.shown("sweep", active):
        sweep_open = (active is not None and active.target == "diff-sweep") or ui.in_link(
            "win_ns", "win_seeds", "win_width", "win_spn")
        with st.container(key="diff-sweep").expander("Run your own sweep over n", icon=":material/tune:",
                                                      expanded=sweep_open):
            st.markdown("Trains live (up to about a minute, one seed per n by default): the SM B network on fresh GMM "
                        "sets, every n at once as one stacked ensemble, for S = (steps per point) · n steps.")
            wcfg = ui.form(D.KNOBS, D.WindowConfig(), ["win_ns", "win_seeds", "win_width", "win_spn"],
                           key="window_form", submit="Run (up to about a minute, with a progress bar)").normalised()
            win_run = ui.submitted("window_form")
            win = ui.view_or_compute(D, "window", wcfg, run=win_run, seconds=D.expected_seconds(wcfg))
            if win is not None:
                wts = D.timescales(D.model_times_table(win["curves"]), win["summary"])
                wnames = {"τ_gen": f"τ_gen ∝ n^{win['tau_gen_slope']:.2f}",
                          "τ_mem": f"τ_mem ∝ n^{win['tau_mem_slope']:.2f}"}
                wfits = {"τ_gen": D.power_fit(win["summary"], "tau_gen").rename(columns={"tau_gen": "steps"}),
                         "τ_mem": D.power_fit(win["summary"], "tau_mem").rename(columns={"tau_mem": "steps"})}
                ui.chart(timescale_chart(wts, wfits, wcfg.ns, wnames, height=320), "diffusion_your_window", data=wts,
                         alt_text="your run: τ_gen and τ_mem against n")
                st.caption(D.run_summary(win) + f" (S = {wcfg.steps_per_n:.0f} n, W = {wcfg.width}.)")
    return wcfg


# Only the open tab is drawn (a tab click reruns the page); what a closed tab would set keeps its default.
wcfg = D.VIEWS["window"].arguments()["cfg"]     # the live sweep's knobs, when the sweep is shown
if tab_win.open:
    with tab_win:
        wcfg = window_tab(wcfg)

# --------------------------------------------------------------------------- CFM against EFM


def cfm_efm_tab() -> None:
    fmr = ui.view(D, "cfm_efm_fresh")      # the registered fresh seeds (issue 41): the run that decides the claim
    fcfg = fmr["config"]
    st.markdown("Bertrand et al. ask whether diffusion-style models generalise *because* their regression target is "
                "noisy. With $x_t=(1-t)x_0+t\\,x_1$ the conditional target $x_1-x_0$ (**CFM**) is a noisy estimate of "
                "the closed-form velocity")
    st.latex(r"\hat u^\star(x,t)=\sum_i\lambda_i\,\frac{x^{(i)}-x}{1-t},\qquad "
             r"\lambda=\operatorname{softmax}_i\Big(-\frac{\|x-t\,x^{(i)}\|^2}{2(1-t)^2}\Big),")
    st.markdown(prose.fm_setup(fcfg))
    st.markdown(f"**What to notice:** {D.fm_reading(fmr)}")
    fc = D.fm_curves(fmr["curves"])
    refs = D.fm_references(fmr["references"])
    tcol = alt.Color("target:N", title=None, legend=alt.Legend(orient="bottom", columns=1, symbolOpacity=1))
    base = alt.Chart(fc)
    fm_line = base.mark_line(point=True).encode(
        x=alt.X("step:Q", scale=LOGX, title="training steps"), y=alt.Y("f_mem:Q", title="f_mem",
                                                                      scale=alt.Scale(domain=[0, 1])),
        color=tcol, tooltip=["n", "target", "step", alt.Tooltip("f_mem:Q", format=".3f"),
                             alt.Tooltip("f_sd:Q", format=".3f")])
    fm_band = base.mark_area(opacity=0.18).encode(x="step:Q", y="lo:Q", y2="hi:Q", color=tcol)
    nn_line = base.mark_line(point=True).encode(
        x=alt.X("step:Q", scale=LOGX, title="training steps"),
        y=alt.Y("nn_test:Q", title="median distance to the nearest held-out digit", scale=alt.Scale(zero=False)),
        color=tcol, tooltip=["n", "target", "step", alt.Tooltip("nn_test:Q", format=".3f")])
    for n in fcfg["ns"]:
        rn = refs[refs.n == n]
        cf_rule = alt.Chart(rn[rn.source == "closed-form sampler"]).mark_rule(strokeDash=[2, 2],
                                                                             color=ui.NEUTRAL).encode(
            y="f_mem:Q", tooltip=["source", alt.Tooltip("f_mem:Q", format=".3f")])
        nn_rules = alt.Chart(rn).mark_rule(strokeDash=[2, 2], color=ui.NEUTRAL).encode(
            y="nn_test:Q", strokeDash=alt.StrokeDash("source:N", title=None,
                                                     legend=alt.Legend(orient="bottom", columns=1)),
            tooltip=["source", alt.Tooltip("nn_test:Q", format=".3f")])
        side_by_side((f"n = {n}: memorisation, mean ± sd over seeds (grey: the closed-form sampler)",
                      alt.layer(fm_band.transform_filter(alt.datum.n == n), fm_line.transform_filter(
                          alt.datum.n == n), cf_rule).properties(height=280), f"diffusion_cfm_efm_fmem_n{n}",
                      fc[fc.n == n]),
                     (f"n = {n}: distance of samples to held-out digits (dashed: references)",
                      alt.layer(nn_line.transform_filter(alt.datum.n == n), nn_rules).properties(height=280),
                      f"diffusion_cfm_efm_dtest_n{n}", fc[fc.n == n]))
    st.markdown("**At the last checkpoint, pair by pair** (d_test: median distance of samples to the nearest "
                "held-out digit; the closed-form sampler copies training digits, fresh real digits are new ones):")
    st.container(key="diff-fm").dataframe(D.fm_table(fmr["fm_per_n"], fmr["references"]).round(3),
                                          hide_index=True, width="stretch", key="fm-table")
    st.caption(prose.fm_caption(fmr, D.FM_MARGIN))
    ui.download_csv(fmr["fm_pairs"], "diffusion_cfm_efm_pairs.csv", label="Download the pairs (CSV)")
    ui.download_csv(fmr["curves"], "diffusion_cfm_efm_curves.csv", label="Download every checkpoint (CSV)",
                    key="fm-curves-csv")


if tab_fm.open:
    with tab_fm:
        cfm_efm_tab()

# --------------------------------------------------------------------------- theory: random features


def random_features_tab() -> None:
    st.markdown("§3 of the paper: a score $s_A(x)=\\frac{A}{\\sqrt p}\\tanh(Wx/\\sqrt d)$ with frozen Gaussian $W$ "
                "and trained $A$ (from 0), at one diffusion time $t$, on $n=\\psi_n d$ standard Gaussian points "
                "with $p=\\psi_p d$ features. Gradient flow is linear, so it is solved in the eigenbasis of "
                "$U=\\frac1n\\sum_\\nu\\mathbb E_\\xi[\\sigma\\sigma^\\top]$ ($U=Q\\Lambda Q^\\top$, $C=V^\\top Q$):")
    st.latex(r"\mathcal L_{\rm train}(\tau)=1+\frac1d\sum_k\|C_k\|^2\big(\lambda_k f_k^2-2f_k\big),\qquad "
             r"f_k=\frac{1-e^{-2\Delta_t\lambda_k\tau/\psi_p}}{\lambda_k}")
    st.markdown("A mode with eigenvalue λ is learned at $\\tau\\approx\\psi_p/(\\Delta_t\\lambda)$. The population "
                "bulk ρ₂ (eigenvalues ∝ ψ_p) is learned at $\\tau_{\\rm gen}\\sim1/\\Delta_t$; the finite-sample "
                "bulk ρ₁ has its lower edge $s_t^2+v_t^2(1-\\sqrt{\\psi_p/\\psi_n})^2$ falling like $1/\\psi_n$, so "
                "$\\tau_{\\rm mem}=\\psi_p/(\\Delta_t\\lambda_{\\min})\\propto\\psi_n$ (Thm 3.2).")
    rst = ui.view(D, "rf_study")
    rts = D.rf_timescales(rst["summary"])
    tch = alt.Chart(rts).mark_line(point=True, opacity=0.8).encode(
        x=alt.X("psi_n:Q", scale=LOGX, title="ψ_n = n/d"), y=alt.Y("tau:Q", scale=LOGX, title="τ"),
        color=alt.Color("which:N", title=None, legend=alt.Legend(orient="bottom", columns=2, labelLimit=0)),
        detail="seed:N", tooltip=["psi_n", "seed", "which", alt.Tooltip("tau:Q", format=",.1f")])
    ui.chart(tch.properties(height=340, title=f"Timescales against ψ_n, {rst['seeds']} seeds at d = "
                                              f"{rst['config']['d']} (p = {rst['p']:,}), log-log"),
             "diffusion_rf_timescales", data=rts, alt_text="random-features timescales against ψ_n, per seed")
    slopes = rst["per_seed"].rename(columns={"tau_mem_slope": "τ_mem (spectrum)", "tau_mem_gap_slope": "τ_mem (gap)",
                                             "tau_mem_theory_slope": "τ_mem (Thm 3.2 edge)",
                                             "tau_gen_slope": "τ_gen"})
    st.markdown(prose.rf_slopes(rst))
    st.dataframe(slopes, hide_index=True, width="stretch", key="rf-slopes")
    edges = D.rf_edges(rst["summary"])
    st.markdown("**Where the measured slope comes from: the lower edge of ρ₁**, measured (the first eigenvalue of U "
                "above the δ peak, mean over seeds) against Thm 3.2's d → ∞ formula:")
    st.dataframe(edges.rename(columns={"psi_n": "ψ_n", "lambda_min": "λ_min measured", "lambda_min_lo": "min",
                                       "lambda_min_hi": "max", "lambda_edge_theory": "edge, Thm 3.2",
                                       "ratio": "measured / formula", "mass_delta": "mass δ", "mass_rho1": "mass ρ₁",
                                       "mass_rho2": "mass ρ₂"}), hide_index=True, width="stretch", key="rf-edges")

    if ui.shown("sweep", active):
        st.subheader("Run the exact dynamics yourself")
        rcfg = ui.form(D.KNOBS, D.RFConfig(), ["rf_psi_p", "rf_t", "rf_d", "rf_psi_n"], columns=3, key="rf_form",
                       submit="Run (up to about a minute, with a progress bar)").normalised()
        rf_go = ui.submitted("rf_form")
        rres = ui.view_or_compute(D, "rf", rcfg, run=rf_go, seconds=D.expected_seconds(rcfg))
        if rres is not None:
            rs = rres["summary"]
            rc, spec = D.rf_curves(rres["curves"]), D.rf_spectra(rres["spectra"])
            psi_sort = [f"ψ_n = {v:g}" for v in rs.psi_n]
            losses = alt.Chart(rc).mark_line().encode(
                x=alt.X("tau:Q", scale=LOGX, title="training time τ"),
                y=alt.Y("value:Q", title="loss / d", scale=alt.Scale(zero=False)),
                color=alt.Color("psi:N", title=None, sort=psi_sort,
                                legend=alt.Legend(orient="bottom", columns=2)),
                strokeDash=alt.StrokeDash("loss:N", title=None, legend=alt.Legend(orient="bottom", columns=1)),
                tooltip=["psi", "loss", "tau", "value"])
            rules = alt.Chart(rs.assign(psi="ψ_n = " + rs.psi_n.map("{:g}".format))).mark_rule(
                strokeDash=[2, 2]).encode(x="tau_mem:Q", color=alt.Color("psi:N", legend=None, sort=psi_sort))
            hist = alt.Chart(spec).mark_bar(opacity=0.55).encode(
                x=alt.X("log10:Q", bin=alt.Bin(maxbins=60), title="log₁₀ eigenvalue of U"),
                y=alt.Y("count():Q", stack=None, scale=alt.Scale(type="symlog"), title="count"),
                color=alt.Color("psi:N", title=None, sort=psi_sort,
                                legend=alt.Legend(orient="bottom", columns=2)))
            side_by_side(("Train and test loss; dotted rules: measured τ_mem",
                          (losses + rules).properties(height=340), "diffusion_rf_losses", rc),
                         ("Spectrum of U: δ peak, ρ₁ (moves left as ψ_n grows), ρ₂", hist.properties(height=340),
                          "diffusion_rf_spectrum", spec))
            c = rres["constants"]
            st.caption(f"One seed, d = {rres['config']['d']}, p = {rres['p']}, t = {c['t']}: Δ_t = {c['delta']:.3f}, "
                       f"a_t = {c['a']:.3f}, b_t = {c['b']:.3f}, v_t² = {c['v2']:.4f}, s_t² = {c['s2']:.4f} "
                       f"(Gauss–Hermite). Slopes against ψ_n: τ_mem {rres['tau_mem_slope']:.2f} (spectrum), "
                       f"{rres['tau_mem_gap_slope']:.2f} (loss gap), {rres['tau_mem_theory_slope']:.2f} (d → ∞ edge); "
                       f"τ_gen {rres['tau_gen_slope']:.2f}. At τ = 10 the train/test losses are "
                       f"{rs.loss_train_10.min():.3f}–{rs.loss_train_10.max():.3f} / "
                       f"{rs.loss_test_10.min():.3f}–{rs.loss_test_10.max():.3f}.")
            ui.download_csv(rs, "diffusion_rf_summary.csv", label="Download RF timescales (CSV)", key="rf-csv")


if tab_rf.open:
    with tab_rf:
        random_features_tab()

# --------------------------------------------------------------------------- visualiser


@ui.fragment
def visualiser() -> None:
    """A fragment: moving its knobs reruns only this section (every data set is shipped)."""
    st.markdown("Noise a training point, then undo it. With $n$ training points $x_\\mu$ the *optimal* denoiser "
                "is known in closed form, and it only ever returns training points:")
    st.latex(r"x_t = a_t x_0 + \sigma_t \varepsilon,\qquad D^\star(x,t)=\sum_{\mu=1}^n \operatorname{softmax}_\mu"
             r"\!\Big(-\frac{\|x-a_t x_\mu\|^2}{2\sigma_t^2}\Big)\,x_\mu")
    st.markdown("A network trained by denoising score matching would converge to $D^\\star$ if trained forever; "
                "trained for a while, it fills in the shape between the points.")
    c1, c2 = st.columns([1, 2])
    viz, u = ui.knob(D.KNOBS, "viz_data", where=c1), ui.knob(D.KNOBS, "viz_u", where=c2)
    res = ui.view(D, D.VIZ_VIEW[viz])
    if viz == "digits":
        k = int(round(u * 10))
        a_u, s_u = D.ddpm_coeffs(res["u"][k])
        st.image(mosaic(res["forward"], per_row=11), width="stretch",
                 caption=f"Forward process (DDPM) on one training digit, u = 0 … 1; the slider's frame u = "
                         f"{res['u'][k]:.1f} has signal a = {a_u:.2f}, noise σ = {s_u:.2f}.")
        st.image(mosaic(np.concatenate([res["samples"][:8], res["nearest"][:8]])), width="stretch",
                 caption="Top: DDIM samples with the closed-form denoiser on 200 digits; bottom: the nearest "
                         "training digit of each.")
        st.caption(f"Every sample is a training digit: f_mem = {res['fmem']:.2f}, median distance to it "
                   f"{np.median(res['nearest_dist']):.1e} (digit norms ≈ 5).")
    else:
        dom = alt.Scale(domain=[-3.5, 3.5])
        base = alt.Chart(res["train"]).mark_point(shape="cross", color=ui.NEUTRAL, size=50, clip=True).encode(
            x=alt.X("x:Q", scale=dom), y=alt.Y("y:Q", scale=dom))
        fwd = res["forward"][np.isclose(res["forward"].u, round(u, 1))]
        rev = res["reverse"]
        steps = np.array(sorted(rev.step.unique()))
        step = int(steps[np.argmin(np.abs((1 - steps / steps.max()) - u))])
        show = rev[rev.step == step]
        panels = [("forward", fwd, ui.PALETTE[0], "forward"),
                  ("reverse: closed form", show[show.denoiser == "closed form"], ui.PALETTE[1], "closed_form"),
                  ("reverse: learned MLP", show[show.denoiser == "learned MLP"], ui.PALETTE[2], "learned")]
        side_by_side(*[(f"{title}, u ≈ {u:.1f}", (alt.Chart(df).mark_circle(
            size=18, opacity=0.65, color=colour, clip=True).encode(
            x=alt.X("x:Q", scale=dom, title=None), y=alt.Y("y:Q", scale=dom, title=None),
            tooltip=["id", "x", "y"]) + base).properties(height=280), f"diffusion_{viz}_{name}", df)
            for title, df, colour, name in panels])
        st.caption(f"Grey crosses: the {len(res['train'])} training points. From the same noise (DDIM, 100 steps), "
                   f"the closed-form denoiser lands on training points (f_mem = {res['fmem_closed_form']:.2f}); "
                   f"the MLP trained for 3,000 full-batch steps fills in the shape between them (f_mem = "
                   f"{res['fmem_learned']:.2f}). Slide u from 1 to 0 to run the reverse process.")


if tab_viz.open:
    with tab_viz:
        visualiser()

# --------------------------------------------------------------------------- Bertrand et al.'s other findings, ELS


@ui.fragment
def els_machine() -> None:
    """A fragment: the patch size reruns only this section (every P is shipped)."""
    st.markdown("Replace the ideal posterior over whole training images by one over **P×P patches from any "
                "location** (Kamb & Ganguli's equivariant local score machine): each pixel moves toward the centre "
                "of the training patches that match its own neighbourhood. It needs no training and composes new "
                "images as locally consistent patch mosaics, while the ideal machine returns training digits.")
    P = ui.knob(D.KNOBS, "els_P")
    els = ui.view(D, D.ELS_VIEW[int(P)])
    st.image(mosaic(np.concatenate([els["ideal"], els["els"], els["els_nearest"]])), width="stretch",
             caption="Rows: the ideal (closed-form) machine; the ELS machine from the same noise; the training "
                     "digit nearest to each ELS sample.")
    st.caption(f"n = {els['n']} training digits, DDIM. Ideal machine: f_mem = {els['fmem_ideal']:.2f}. ELS machine "
               f"with P = {els['P']}: f_mem = {els['fmem_els']:.2f}, median distance to the nearest training digit "
               f"{np.median(els['els_nn_dist']):.2f}. Kamb & Ganguli calibrate a time-dependent P on real U-Nets "
               "(median r² 0.94–0.96); here P is fixed.")


def flow_matching_tab() -> None:
    st.markdown("**Bertrand et al., Finding 1:** in high dimension the closed-form velocity points at the one "
                "training point that generated $x_t$ almost from the start, so the regression target is nearly "
                "deterministic. **Finding 3:** follow û* up to a switch time τ, a trained network after: early "
                "switches stay creative, late ones copy.")
    fa = ui.view(D, "flow_alignment")
    flow_sets = ["2-moons (d = 2)", "digits (d = 64)", "Gaussian (d = 1024)"]
    flow_col = alt.Color("data:N", title=None, scale=alt.Scale(domain=flow_sets, range=ui.PALETTE[:3]),
                         legend=alt.Legend(orient="bottom", columns=1))
    fband = alt.Chart(fa).mark_area(opacity=0.2).encode(x="t:Q", y="cos_q10:Q", y2="cos_q90:Q", color=flow_col)
    fline = alt.Chart(fa).mark_line(point=True).encode(
        x=alt.X("t:Q", title="flow time t"), y=alt.Y("cos_median:Q", title="cos(û*, x₁ − x₀)"),
        color=flow_col, tooltip=["data", "t", "cos_median", "cos_q10", "cos_q90"])
    hy = ui.view(D, "hybrid")
    hyc = alt.Chart(D.hybrid_long(hy["table"])).mark_line(point=True).encode(
        x=alt.X("tau:Q", title="switch time τ"), y=alt.Y("f_mem:Q", title="f_mem", scale=alt.Scale(domain=[0, 1])),
        tooltip=["tau", "f_mem", "nn_dist", "mmd2"])
    side_by_side(("Alignment with the conditional target (Finding 1)", (fband + fline).properties(height=320),
                  "diffusion_flow_alignment", fa),
                 (f"Hybrid sampling on the GMM, n = {hy['n']} (Finding 3)", hyc.properties(height=320),
                  "diffusion_hybrid", hy["table"]))
    st.caption("Left: medians over 400 draws, bands 10–90%. Right: the learned velocity is the SM B network trained "
               f"as a DDPM denoiser for {hy['train_steps']:,} full-batch steps (before its τ_mem), converted to flow "
               "time by matching the signal-to-noise ratio (Bertrand et al.: creative for τ ≤ 0.2, copies for "
               "τ ≥ 0.4 on CIFAR-10; the crossover here is the toy's own).")
    st.divider()
    els_machine()


if tab_more.open:
    with tab_more:
        flow_matching_tab()

# --------------------------------------------------------------------------- lab notebook


def lab_tab() -> None:
    st.markdown("Every configuration tried for this page, including the ones that failed or were replaced, with "
                "what it showed and what it cost (CPU seconds on one thread of the 2-core machine).")
    lab = D.lab_notebook()
    lab["cpu_s"] = [f"{v:,.0f}" if pd.notna(v) else "" for v in lab.cpu_s]
    st.table(lab.set_index("id"))                   # a wrapping table: every word of each entry shows
    st.markdown("**Caveats.** " + " ".join(D.CAVEATS))
    st.markdown("**Per-size summary of the window study:**")
    st.dataframe(ssum, hide_index=True, width="stretch", key="lab-summary")
    st.markdown("Command line: `python -m toymodels reproduce diffusion --quick` (2 seeds, n = 32…128, S = 200 n) or "
                "without `--quick` (the shipped studies' settings, about 50 minutes of CPU); "
                "`python -m toymodels verdict diffusion` prints the ledger.")


if tab_lab.open:
    with tab_lab:
        lab_tab()

live = ui.call_snippet("diffusion", "train_window", wcfg).split("\n\n", 1)[1].replace("result =", "yours =")
ui.page_end(verdict, paper, ui.view_snippet(D, "study") + "# the live sweep's knobs (about a minute of CPU):\n# "
            + live, cli="python -m toymodels reproduce diffusion --quick",
            shown={"τ_mem slope": ("result['tau_mem_slope']", f"{study['tau_mem_slope']:.2f}"),
                   "τ_gen slope": ("result['tau_gen_slope']", f"{study['tau_gen_slope']:.2f}")})
