"""Superposition & scaling: Liu, Liu & Gore's toy autoencoder, weak vs strong superposition, the 1/m law. The page
opens on the shipped width sweep (5 seeds); nothing trains unless a button is pressed."""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.superposition as M
import ui
from toymodels.superposition import prose

A = M.analysis
TOPIC = M.TOPIC
paper = ui.paper_header(TOPIC)
verdict, fresh = ui.shipped_verdict(TOPIC)
T = {w: ui.term(w, TOPIC) for w in ("superposition", "strong superposition", "weak superposition", "α_m", "N_eff",
                                     "Welch bound", "mean squared overlap", "Eq. 4")}

TABS = ["The paper, step by step", "Train and sweep", "Real models", "Lab notebook"]
TOUR = [
    ui.Step("The headline", "Strong superposition (γ = −1) keeps every feature as an almost-unit vector; its loss "
            "falls with width as a power law with exponent near 1. Weak superposition (γ = 0.1) keeps only some "
            "features; its exponent is set by the data.",
            look_at="α_m of the strong regime in the chart's legend, and our number beside the paper's",
            target="headline-figure", settings={"sp_tabs": TABS[0]}),
    ui.Step("Why 1/m: interference", "All n = 1000 rows are squeezed into m dimensions, so the loss is their "
            "interference. Its size is the mean squared overlap of the normalised rows, which cannot go below the "
            "Welch bound and sits close to it from m = 20 on.", look_at="the ÷ Welch column of the table beside "
            "the mechanism chart and the caption under it (m = 10 is the exception, and why)",
            target="chart-superposition_overlap", settings={"sp_tabs": TABS[0]}),
    ui.Step("What the rows look like", "Five equally frequent features in two dimensions. With γ = −1 all five keep "
            "unit length and spread out as a pentagon: strong superposition in miniature.",
            settings={"geo_gamma": -1.0, "sp_tabs": TABS[0]},
            look_at="the five arrows of equal length in the geometry chart",
            target="sp-geometry"),
    ui.Step("Weak superposition drops features", "With γ = +0.5 the same model keeps four features as two "
            "antipodal pairs and lets the fifth shrink to zero: the loss is now the frequency of what was dropped "
            "(Eq. 4).", settings={"geo_gamma": 0.5, "sp_tabs": TABS[0]},
            look_at="the grey, dropped feature and the Gram matrix",
            target="sp-geometry", predict="Weight decay (γ = +0.5) instead of the pull to unit norm: what happens to "
            "the five features in two dimensions?", choices=("all five kept, shorter", "some are dropped")),
    ui.Step("When the exponent breaks", "If only about m features carry the probability mass (N_eff ≈ m), they "
            "get nearly orthogonal directions and the loss falls much faster than 1/m: robustness needs "
            "N_eff ≫ m.", settings={"neff_ratio": 1.0, "sp_tabs": TABS[0]},
            look_at="α_m above the left chart, and the right chart at 1",
            target="sp-neff", predict="Only about m features carry the probability mass (N_eff ≈ m). Does the loss "
            "still fall as 1/m?", choices=("yes, α_m stays near 1", "no, α_m rises well above 1")),
    ui.Step("Train the weak preset yourself", "The paper's weak setting (γ = 0.1, α = 1.5) on one model. Press Train "
            "and compare Eq. 4 (the loss of the features with ‖W_i‖ ≤ 1/2) with the measured loss.",
            settings={"preset": "paper: weak", "gamma": 0.1, "alpha": 1.5, "sp_tabs": TABS[1]},
            look_at="the Eq. 4 caption under the "
            "row-norm histogram", target="sp-train"),
]
active = ui.tour(TOUR)

LEGEND = alt.Legend(orient="bottom", title=None, columns=1, labelLimit=0)  # one per line: fits a phone
XM = alt.X("m:Q", scale=alt.Scale(type="log"), title="width m")
YL = alt.Y("loss:Q", scale=alt.Scale(type="log"), title="loss L (sum over features)")


def log_axes(m, y, y_field="loss", title="loss L (sum over features)"):
    """Log axes fitted to the data (a little margin, no padding out to the next power of ten)."""
    m, y = np.asarray(m, float), np.asarray(y, float)
    y = y[np.isfinite(y) & (y > 0)]
    xs = alt.X("m:Q", title="width m", scale=alt.Scale(type="log", nice=False, domain=[m.min() / 1.15,
                                                                                        m.max() * 1.15]),
               axis=alt.Axis(values=sorted(set(int(v) for v in m))))
    ys = alt.Y(f"{y_field}:Q", title=title, scale=alt.Scale(type="log", nice=False, domain=[y.min() / 1.25,
                                                                                         y.max() * 1.25]))
    return xs, ys


def loss_chart(points: pd.DataFrame, lines: pd.DataFrame, color: str, title: str, height: int = 320,
               domain=None, colors=None):
    """Loss against width (log-log): faint points per run, large points per seed mean, the fitted power laws."""
    scale = alt.Scale(domain=domain, range=colors) if domain else alt.Scale(range=ui.PALETTE)
    c = alt.Color(f"{color}:N", legend=LEGEND, scale=scale)
    XM, YL = log_axes(points["m"], np.r_[points["loss"], lines["loss"]])
    tips = [color, "m", alt.Tooltip("loss:Q", format=".4f"), alt.Tooltip("drift:Q", format=".2%", title="drift"),
            alt.Tooltip("phi_half:Q", format=".3f", title="φ_1/2")]
    runs = alt.Chart(points[points["kind"] == "run"]).mark_point(size=25, opacity=0.35).encode(
        x=XM, y=YL, color=c, tooltip=tips + ["seed"])
    means = alt.Chart(points[points["kind"] == "mean"]).mark_point(size=80, filled=True).encode(
        x=XM, y=YL, color=c, tooltip=tips)
    fit = alt.Chart(lines).mark_line().encode(x=XM, y=YL, color=c, strokeDash=alt.StrokeDash(
        "line:N", legend=None))
    out = (fit + runs + means).properties(height=height)
    return out.properties(title=title) if title else out


# ============================================================================ the headline
scal = ui.view(M, "scaling")
s = A.summary(scal)
table = scal["table"]
a_s, a_w = s["alpha_strong"], s["alpha_weak"]
names = {"strong": f"strong (γ = −1, α = 1): α_m = {a_s['mean']:.2f}",
         "weak": f"weak (γ = 0.1, α = 1.5): α_m = {a_w['mean']:.2f}",
         "ideal": f"ideal weak (Eq. 4): α_m = {s['alpha_weak_ideal']:.2f}"}
pts = A.loss_points(table, ["strong", "weak"]).assign(run=lambda d: d["regime"].map(names))
ideal = s["weak_ideal"]
lines = pd.concat([A.fit_line(table, "strong", M.MIN_M).assign(run=names["strong"], line="fit"),
                   A.fit_line(table, "weak").assign(run=names["weak"], line="fit"),
                   pd.DataFrame({"m": ideal["widths"], "loss": ideal["loss"], "run": names["ideal"], "line": "ideal"})])
dom = [names["strong"], names["weak"], names["ideal"]]
head = loss_chart(pts, lines, "run", f"Loss against width, n = {s['n']} features, {len(s['seeds'])} seeds"
                  + ("" if s["converged"] else " (lower bounds: not converged)"), height=330, domain=dom,
                  colors=[ui.PALETTE[0], ui.PALETTE[1], ui.NEUTRAL])
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    ui.chart(head, "superposition_loss_vs_width", data=table, span=0.6, alt_text="Loss against width m on log-log "
             "axes for the strong and weak regimes, each run and the seed mean, with fitted power laws and the ideal "
             "weak curve.")
    st.caption(f"Faint points: each seed; large: the seed mean; lines: power laws fitted over m ≥ {M.MIN_M} "
               f"(strong) and all widths (weak). Every run met the convergence rule (lab notebook).")
with side_col:
    ui.headline_claim(verdict, notice=prose.headline_notice(s, T), ours_label=f"Our toy, {len(s['seeds'])} seeds")
    st.caption(f"{T['superposition']}: more features (n = {s['n']}) than dimensions (m). {T['α_m']}: the exponent "
               f"of loss ∝ m^−α_m. γ: the signed weight decay that picks the regime (equations in the story).")
ui.ledger_strip(verdict)

story, tab_try, tab_real, notebook = st.tabs(TABS, key="sp_tabs", bind="query-params")  # only the open one draws
loc = s["strong"].iloc[1:]
w_strong, w_weak = s["strong"], s["weak"]


def llm_overlap_section() -> None:
    """The paper's Fig. 6a measurement on the real models at hand, beside 1/m, the Welch bound and the toy."""
    t = ui.view(M, "llm_overlaps")["table"]
    t = t[t["N"].notna()]
    j = next((c for c in verdict.claims if c.id == "llm-overlap"), None)
    st.subheader("Three real language models (the paper's Fig. 6a measurement)")
    ms = np.geomspace(300, 800, 20)
    line = M.PAPER["llm_overlap_line"].value
    ref = pd.concat([pd.DataFrame({"m": ms, "overlap": 1 / ms, "line": "1/m (random unit vectors)"}),
                     pd.DataFrame({"m": ms, "overlap": line / ms,
                                   "line": f"≈ {line:g}/m: the paper's LLMs ({M.PAPER['llm_overlap_line'].source})"})])
    pts = pd.concat([t.assign(what="raw (the paper's)")[["m", "overlap", "model", "what"]],
                     t.assign(what="rows centred", overlap=t["overlap_centred"])[["m", "overlap", "model", "what"]]])
    lines = alt.Chart(ref).mark_line(strokeDash=[4, 3]).encode(
        x=alt.X("m:Q", scale=alt.Scale(type="log", domain=[300, 800]), title="width m"),
        y=alt.Y("overlap:Q", scale=alt.Scale(type="log"), title="mean squared overlap ⟨(Ŵ_i·Ŵ_j)²⟩"),
        color=alt.Color("line:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=0),
                        scale=alt.Scale(range=[ui.NEUTRAL, ui.PALETTE[1]])))
    dots = alt.Chart(pts).mark_point(filled=True, size=90).encode(
        x="m:Q", y="overlap:Q", shape=alt.Shape("what:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=["model", "m", "what", alt.Tooltip("overlap:Q", format=".4f")])
    labels = alt.Chart(t).mark_text(align="center", dy=-14, color=ui.PALETTE[0]).encode(x="m:Q", y="overlap:Q",
                                                                                          text="model:N")
    ui.chart((lines + dots + labels).properties(height=340), "superposition_llm_overlaps", data=t,
             alt_text="mean squared overlap of three real models' LM-head rows against width, with 1/m and the "
                      "paper's LLM line")
    st.dataframe(t[["model", "m", "N", "overlap", "inv_m", "welch", "m_times_overlap", "overlap_centred",
                    "m_times_overlap_centred"]].round(5), hide_index=True, width="stretch")
    if j is not None:
        st.markdown(f"**llm-overlap ({j.status}).** {j.note}")
    st.caption(prose.LLM_CAPTION)


def _story_tab() -> None:
    # ======================================================================== the mechanism
    st.subheader("The mechanism: overlaps fall as 1/m, near the Welch bound")
    ov = A.overlap_frame(scal).replace({"series": {"Welch bound (N − m)/(m(N − 1))": "Welch bound"}})
    m10 = ui.view(M, "m10_recipes")
    m10t = A.m10_table(m10)
    c1, c2 = st.columns([3, 2])
    with c1:
        xo, yo = log_axes(ov["m"], ov["value"], "value", "mean squared overlap")
        series = list(dict.fromkeys(ov["series"]))
        enc = dict(x=xo, y=yo, color=alt.Color("series:N", legend=LEGEND, scale=alt.Scale(
                       domain=series, range=[ui.PALETTE[0], ui.NEUTRAL, ui.PALETTE[2]])),
                   tooltip=["series", "m", alt.Tooltip("value:Q", format=".4f"),
                            alt.Tooltip("overlap_over_welch:Q", format=".2f", title="overlap / Welch"),
                            alt.Tooltip("overlap_times_m:Q", format=".2f", title="overlap × m")])
        fig = (alt.Chart(ov).mark_line().encode(**enc) + alt.Chart(ov).mark_point(filled=True, size=60).encode(**enc))
        ui.chart(fig.properties(height=300, title=f"Strong regime: overlap slope {-s['overlap_slope']['mean']:.2f} "
                                                  f"over m ≥ {M.MIN_M}"), "superposition_overlap", data=ov, span=0.6,
                 alt_text="Mean squared overlap of the normalised rows against width, with the Welch bound and 1/m.")
    with c2:
        st.dataframe(w_strong[["m", "overlap", "welch", "overlap_over_welch", "overlap_times_m"]].rename(columns={
            "overlap": "⟨(Ŵ_i·Ŵ_j)²⟩", "welch": "Welch", "overlap_over_welch": "÷ Welch",
            "overlap_times_m": "× m"}), hide_index=True, width="stretch",
            column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("⟨(Ŵ_i·Ŵ_j)²⟩", "Welch")}
            | {c: st.column_config.NumberColumn(format="%.2f") for c in ("÷ Welch", "× m")})
    st.caption(prose.overlap_caption(m10t, T))

    # ======================================================================== profiles
    st.subheader("Robust across frequency profiles")
    prof = s["profiles"]
    ptab = table[table["regime"].isin(list(prof["regime"]))]
    plabel = {r.regime: f"{r.profile}, N_eff {r.n_eff:.0f}: α_m = {r.alpha_m:.2f}"
              for r in prof.itertuples()}
    ppts = A.loss_points(ptab, list(prof["regime"])).assign(run=lambda d: d["regime"].map(plabel))
    plines = pd.concat([A.fit_line(ptab, r, M.MIN_M).assign(run=plabel[r], line="fit") for r in prof["regime"]])
    ui.chart(loss_chart(ppts, plines, "run", "Strong regime, three profiles (fits over m ≥ 20)"),
             "superposition_profiles", data=ptab, alt_text="Loss against width for three frequency profiles.")
    with st.container():
        st.dataframe(prof[["profile", "parameter", "n_eff", "n_eff_over_max_m", "alpha_m", "alpha_lo", "alpha_hi",
                           "alpha_all_widths"]].rename(columns={
            "n_eff": "N_eff", "n_eff_over_max_m": "N_eff / max m", "alpha_m": "α_m (m ≥ 20)", "alpha_lo": "95 % lo",
            "alpha_hi": "95 % hi", "alpha_all_widths": "α_m (all m)"}).round(2), hide_index=True, width="stretch",
            column_config={"N_eff": st.column_config.NumberColumn(format="%.0f")})
        st.caption(prose.profiles_caption(T, M.PAPER['alpha_profiles']))

    # ======================================================================== the weak regime
    st.subheader("Weak superposition: Eq. 4 holds, the ideal exponent is not reached")
    st.markdown(f"{T['Eq. 4']}: in weak superposition the loss is the frequency mass of the features the model "
                "left out.")
    wf = A.weak_frame(scal)
    c1, c2 = st.columns([3, 2])
    with c1:
        xw, yw = log_axes(wf["m"], wf["loss"])
        enc = dict(x=xw, y=yw, color=alt.Color("series:N", legend=LEGEND, scale=alt.Scale(
            domain=list(dict.fromkeys(wf["series"])), range=[ui.PALETTE[1], ui.PALETTE[3], ui.NEUTRAL])),
            tooltip=["series", "m", alt.Tooltip("loss:Q", format=".4f"),
                     alt.Tooltip("represented:Q", format=".0f", title="features kept"),
                     alt.Tooltip("top_share:Q", format=".2f", title="kept among the most frequent")])
        st.markdown(f"Exponents: measured **{a_w['mean']:.2f}**, Eq. 4 on the measured rows "
                    f"**{s['alpha_weak_eq4']['mean']:.2f}**, ideal **{s['alpha_weak_ideal']:.2f}**")
        dash = alt.StrokeDash("series:N", legend=None, scale=alt.Scale(domain=list(dict.fromkeys(wf["series"])),
                                                                       range=[[1, 0], [6, 3], [2, 2]]))
        fig = alt.Chart(wf).mark_line(point=True).encode(strokeDash=dash, **enc)
        ui.chart(fig.properties(height=300), "superposition_weak", data=wf, span=0.6,
                 alt_text="Weak regime loss against width: measured, Eq. 4 on the measured rows, and the ideal.")
    with c2:
        st.dataframe(w_weak[["m", "loss", "eq4", "eq4_ratio", "represented", "top_share"]].rename(columns={
            "loss": "L", "eq4": "Eq. 4", "eq4_ratio": "Eq. 4 / L", "represented": "kept",
            "top_share": "top"}), hide_index=True, width="stretch",
            column_config={**{c: st.column_config.NumberColumn(format="%.3f") for c in ("L", "Eq. 4")},
                           **{c: st.column_config.NumberColumn(format="%.2f") for c in ("Eq. 4 / L", "top")},
                           "kept": st.column_config.NumberColumn(format="%.0f")})
    st.caption(prose.weak_caption(s))

    # ======================================================================== N_eff break
    neff_box = st.container(key="sp-neff")
    neff_box.subheader("When N_eff approaches m, the exponent breaks")
    neff = ui.view(M, "neff_sweep")

    @ui.fragment
    def show_neff():
        nf, nt = neff["fits"], neff["table"]
        pick = ui.knob(M.KNOBS, "neff_ratio")
        row = nf[nf["ratio"] == pick].iloc[0]
        c1, c2 = st.columns(2)
        run = f"τ = {row['tau']:.1f}, N_eff = {row['n_eff']:.0f}"
        sub = nt[nt["regime"] == row["regime"]]
        with c1:
            st.markdown(f"α_m = **{row['alpha_m']:.2f}** ({row['label']})")
            ui.chart(loss_chart(A.loss_points(sub, [row["regime"]]).assign(run=run),
                                A.fit_line(sub, row["regime"]).assign(run=run, line="fit"), "run", "", height=280),
                     "superposition_neff_run", data=sub, alt_text="Loss against width at one N_eff.")
        with c2:
            st.markdown("Exponent against N_eff / largest width")
            base = alt.Chart(nf).encode(
                x=alt.X("ratio:Q", scale=alt.Scale(type="log"), title="N_eff / largest width"),
                y=alt.Y("alpha_m:Q", title="fitted α_m", scale=alt.Scale(zero=False)),
                tooltip=["regime", alt.Tooltip("tau:Q", format=".1f"), alt.Tooltip("n_eff:Q", format=".0f"),
                         alt.Tooltip("alpha_m:Q", format=".3f"), "label"])
            one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL).encode(y="y:Q")
            ui.chart((base.mark_line(point=True, color=ui.PALETTE[0]) + one).properties(height=280),
                     "superposition_neff", data=nf,
                alt_text="Fitted exponent against N_eff over the largest width.")
        st.caption(prose.NEFF_CAPTION)

    with neff_box:
        show_neff()

    # ======================================================================== geometry
    geo_box = st.container(key="sp-geometry")
    geo_box.subheader("Geometry: a handful of features in two dimensions")
    with geo_box:
        geo_kwargs = ui.form(M.KNOBS, None, ["geo_n", "geo_m", "geo_alpha", "geo_E"])
        geo_kwargs["m"] = int(geo_kwargs["m"] or 2)
        shipped_geo = M.VIEWS["geometry"].arguments()
        if st.button(f"Train one model per γ (about {M.GEOMETRY_SECONDS} s)", key="geo_train",
                     icon=":material/play_arrow:", disabled=geo_kwargs == shipped_geo):
            st.session_state["sp_geo_trained"] = dict(geo_kwargs)
        geo_shown = st.session_state.get("sp_geo_trained") or shipped_geo
        geo_stale = geo_shown != geo_kwargs
        geo = ui.view_or_compute(M, "geometry", label="Training one model per γ (one batched model)…", run=True,
                                 seconds=M.GEOMETRY_SECONDS, **geo_shown)

    @ui.fragment
    def show_geometry(geo, shown: dict, stale: bool):
        gammas = [float(g) for g in geo["gammas"]]
        gamma_pick = ui.knob(M.KNOBS, "geo_gamma")
        k = gammas.index(gamma_pick)
        arrows = A.geometry_frame(geo, k)
        enc = dict(x=alt.X("x:Q", scale=alt.Scale(domain=[-1.7, 1.7]), title=None),
                   y=alt.Y("y:Q", scale=alt.Scale(domain=[-1.35, 1.35]), title=None))
        col = alt.Color("represented:N", scale=alt.Scale(domain=["‖W_i‖ > 1/2", "‖W_i‖ ≤ 1/2"],
                                                          range=[ui.PALETTE[0], ui.NEUTRAL]), legend=LEGEND)
        tips = ["feature", alt.Tooltip("p_i:Q", format=".3f"), alt.Tooltip("norm:Q", format=".2f")]
        t = np.linspace(0, 2 * np.pi, 100)
        circle = pd.DataFrame({"t": t, "x": np.cos(t), "y": np.sin(t)})
        ring = alt.Chart(circle).mark_line(color=ui.NEUTRAL, strokeDash=[3, 3], opacity=0.5).encode(order="t:Q", **enc)
        rules = alt.Chart(arrows).mark_rule(strokeWidth=2.5).encode(x2="x0:Q", y2="y0:Q", color=col, tooltip=tips,
                                                                    **enc)
        heads = alt.Chart(arrows).mark_point(filled=True, size=70).encode(color=col, tooltip=tips, **enc)
        labels = alt.Chart(arrows).mark_text(dx=9, dy=-9, fontSize=13).encode(text="feature:N", color=col, **enc)
        gdf = A.gram_frame(geo, k)
        order = list(arrows["feature"])
        heat = alt.Chart(gdf).mark_rect().encode(
            x=alt.X("j:O", sort=order, title="feature j", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("i:O", sort=order, title="feature i"),
            color=alt.Color("WWᵀ:Q", scale=alt.Scale(scheme="redblue", domain=[-1.2, 1.2], reverse=True),
                            legend=None), tooltip=["i", "j", alt.Tooltip("WWᵀ:Q", format=".2f")])
        htext = alt.Chart(gdf).mark_text(fontSize=10).encode(x=alt.X("j:O", sort=order), y=alt.Y("i:O", sort=order),
                                                            text=alt.Text("WWᵀ:Q", format=".1f"),
                                                            color=alt.condition("abs(datum['WWᵀ']) > 0.6",
                                                                                alt.value("white"), alt.value("black")))
        what = (f"n = {shown['n']}, m = {shown['m']}, α = {shown['alpha']:g}, E = {shown['E']:g}"
                + (" (the shipped default)" if shown == M.VIEWS["geometry"].arguments() else " (your last training)"))
        if stale:  # the figures beside the knobs are not of the knobs' values: say so here, not elsewhere
            st.info(f"These figures are for {what}, not the settings above: press **Train one model per γ** to "
                    "train those.", icon=":material/info:")
        c1, c2 = st.columns(2)
        with c1:
            ui.chart((ring + rules + heads + labels).properties(height=330, title=f"Feature vectors at γ = "
                                                                f"{gamma_pick:+.2f}"), "superposition_geometry",
                     data=arrows, alt_text="Feature vectors in the plane, coloured by whether they are represented.")
        with c2:
            ui.chart((heat + htext).properties(height=330, title="Gram matrix W Wᵀ"), "superposition_gram", data=gdf,
                     alt_text="The Gram matrix of the feature vectors.")
        kept = int((arrows["represented"] == "‖W_i‖ > 1/2").sum())
        st.caption(f"{what}, γ = {gamma_pick:+.2f}: {kept} of {len(arrows)} features have ‖W_i‖ > 1/2, loss "
                   f"{geo['loss'][k]:.4f}, mean squared overlap {geo['overlap'][k]:.3f}. With equal frequencies and "
                   "sparse data (the default: n = 5, α = 0, E = 0.1) γ = −1 arranges all five features as a pentagon, "
                   "while γ ≥ 0 keeps four as two antipodal pairs and drops the fifth. One seed; other settings can "
                   "end in less symmetric local optima.")

    if geo is not None:
        with geo_box:
            show_geometry(geo, geo_shown, geo_stale)

    with st.expander("The toy model, in equations"):
        ui.blocks(prose.MODEL)


with story:
    if story.open:
        _story_tab()


def _try_tab() -> M.Config:
    """One model with your settings, and the sweeps; returns the settings of 'Train one model'."""
    # ======================================================================== one model, your settings
    with st.container(key="sp-train"):
        st.subheader("Train one model with your settings")
        default_cfg = M.VIEWS["run_default"].arguments()["cfg"]

        def _apply_preset():
            for key, value in M.PRESETS.get(st.session_state.get("preset"), {}).items():
                st.session_state[key] = value

        ui.knob(M.KNOBS, "preset", on_change=_apply_preset)
        cfg = ui.form(M.KNOBS, default_cfg,
                      ["n", "m", "alpha", "gamma", "E", "steps", "batch", "lr", "seed", "profile"],
                      columns=5)
        secs = M.expected_seconds(cfg.n, [cfg.m], cfg.steps, cfg.batch)
        if st.button(f"Train (about {max(1, round(secs))} s)", icon=":material/play_arrow:", key="train_btn",
                     type="primary"):
            st.session_state["sp_trained"] = cfg
        show_cfg = st.session_state.get("sp_trained", default_cfg)
        if show_cfg != cfg:
            st.info("Settings changed: press **Train** (the view below is the last model trained).")
        one = ui.view_or_compute(M, "run_default", show_cfg, run=True, seconds=M.expected_seconds(
            show_cfg.n, [show_cfg.m], show_cfg.steps, show_cfg.batch))
        if one is not None:
            c = one["config"]
            st.caption(f"Showing n = {c['n']}, m = {c['m']}, α = {c['alpha']}, γ = {c['gamma']}, E = {c['E']}, "
                       f"{c['steps']} steps × {c['batch']}, lr {c['lr']}, seed {c['seed']}, {c['profile']} profile "
                       f"(N_eff {one['n_eff']:.0f}); loss drift over the last 20 %: {one['drift']:.2%}"
                       f"{'' if one['converged'] else ' (not converged by the 2 % rule)'}.")
            m1, m2, m3, m4, m5 = st.columns(5)
            m1.metric("loss L", f"{one['loss']:.4f}")
            m2.metric("φ_1/2", f"{one['phi_half']:.3f}", help=f"m/n = {c['m'] / c['n']:.3f}")
            m3.metric("φ_1", f"{one['phi_one']:.3f}", help=f"ETF bound min(1, m²/2n) = {one['etf_bound']:.3f}")
            m4.metric("⟨(Ŵ_i·Ŵ_j)²⟩", f"{one['overlap']:.4f}", help=f"Welch bound {one['welch']:.4f}")
            m5.metric("1/m", f"{one['inv_m']:.4f}")
            edges = np.asarray(one["hist_edges"])
            hist = pd.DataFrame({"lo": edges[:-1], "hi": edges[1:], "features": np.asarray(one["hist"])})
            curve = pd.DataFrame({"step": np.asarray(one["curve_steps"]), "loss": np.asarray(one["curve"])})
            c1, c2 = st.columns(2)
            with c1:
                ui.chart(alt.Chart(hist).mark_bar(color=ui.PALETTE[0]).encode(
                    x=alt.X("lo:Q", title="row norm ‖W_i‖", bin="binned"), x2="hi:Q", y=alt.Y("features:Q"),
                    tooltip=["lo", "hi", "features"]).properties(title="Row norms (≈ 0 dropped, ≈ 1 represented)",
                                                                 height=260), "superposition_norms", data=hist)
            with c2:
                cv = curve[curve["step"] > 0]
                ui.chart(alt.Chart(cv).mark_line(color=ui.PALETTE[0]).encode(
                    x="step:Q", y=alt.Y("loss:Q", scale=alt.Scale(type="log"), title="training-batch loss"),
                    tooltip=["step", alt.Tooltip("loss:Q", format=".4f")]).properties(title="Training loss",
                                                                                      height=260),
                    "superposition_curve", data=cv)
            if c["gamma"] > 0:
                st.caption(f"Eq. 4 (loss of the features with ‖W_i‖ ≤ 1/2): {one['weak_pred']:.4f} vs measured "
                           f"{one['loss']:.4f}.")

    # ======================================================================== sweep
    if ui.shown("sweep", active):
        with st.expander("Sweep the width or γ yourself", icon=":material/tune:"):
            kind = ui.knob(M.KNOBS, "sw_kind")
            sw = ui.form(M.KNOBS, None, ["sw_steps", "sw_batch", "sw_n", "sw_seed"], columns=4)
            sw_n, sw_steps, sw_batch, sw_seed = sw["n"], sw["steps"], sw["batch"], sw["seed"]
            if kind == "width":
                w = ui.form(M.KNOBS, None, ["sw_ms", "sw_reg"], columns=1)
                ms, regs = sorted(int(m) for m in w["ms"]), list(w["regimes"])
                call = ("width_sweep", dict(n=sw_n, ms=ms, regimes=regs, steps=sw_steps, batch=sw_batch,
                                            seeds=[sw_seed]))
                secs = M.expected_seconds(sw_n, ms * len(regs), sw_steps, sw_batch)
            else:
                g = ui.form(M.KNOBS, None, ["sw_grange", "sw_gcount", "sw_gm"], columns=3)
                (g_lo, g_hi), g_cnt, g_m = g["grange"], g["gcount"], g["m"]
                call = ("gamma_sweep", dict(n=sw_n, m=g_m, gammas=[round(float(x), 4) for x in np.linspace(g_lo, g_hi,
                                                                                                         g_cnt)],
                                            steps=sw_steps, batch=sw_batch, seed=sw_seed))
                secs = M.expected_seconds(sw_n, [g_m] * g_cnt, sw_steps, sw_batch)
            if st.button(f"Run sweep (about {max(1, round(secs))} s)", icon=":material/play_arrow:", key="sweep_btn"):
                st.session_state["sp_sweep"] = call
            if st.session_state.get("sp_sweep") == call:
                try:
                    out = ui.compute(getattr(M, call[0]), label="Sweeping…", run=True, seconds=secs, **call[1])
                except M.InputError as exc:
                    ui.report_error(exc, "Cannot run this sweep")
                    out = None
                if out is not None and kind == "width":
                    f = A.live_fits(out)
                    lines = pd.concat([A.fit_line(out, r).assign(regime=r, line="fit") for r in f["regime"]])
                    ui.chart(loss_chart(A.loss_points(out, list(f["regime"])), lines, "regime", " · ".join(
                        f"{r.regime}: α_m = {r.alpha_m:.2f} ({r.label})" for r in f.itertuples()), height=300),
                        "superposition_width_sweep", data=out)
                elif out is not None:
                    long = out.melt(id_vars=["gamma"], value_vars=["phi_half", "phi_one"], var_name="measure",
                                    value_name="fraction")
                    ui.chart(alt.Chart(long).mark_line(point=True).encode(
                        x="gamma:Q", y="fraction:Q", color=alt.Color("measure:N", legend=LEGEND,
                                                                     scale=alt.Scale(range=ui.PALETTE)),
                        tooltip=["gamma", "measure", alt.Tooltip("fraction:Q", format=".3f")]).properties(height=300),
                        "superposition_gamma_sweep", data=out)
            else:
                st.caption("Pick the settings and press **Run sweep**. Live sweeps train exactly the steps you give; "
                           "the "
                           "drift column tells whether they met the 2 % rule.")
    return cfg


cfg = M.VIEWS["run_default"].arguments()["cfg"]  # the code snippet's settings while the tab is closed: the shipped run
with tab_try:
    if tab_try.open:
        cfg = _try_tab()

with tab_real:
    # ======================================================================== real models
    if tab_real.open and ui.shown("upload", active):
        st.subheader("Real models: overlap of token embeddings")
        mini = ui.view(M, "minilm")
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("MiniLM ⟨(Ŵ_i·Ŵ_j)²⟩", f"{mini['overlap']:.4f}")
        c2.metric("1/m (m = 384)", f"{mini['inv_m']:.4f}")
        c3.metric("overlap × m", f"{mini['ratio']:.2f}",
                  help="1 for random unit vectors; > 1: more aligned than random")
        c4.metric("Welch bound", f"{mini['welch']:.5f}")
        st.caption(f"All {mini['rows']:,} token-embedding rows of all-MiniLM-L6-v2, normalised, every pair i < j "
                   f"(exactly, through the m × m Gram). {mini['ratio']:.1f}/m: more aligned than random (mean-centred "
                   f"{mini['ratio_centred']:.2f}/m). One model shows no scaling with m; the paper's LM heads scale "
                   f"roughly as 1/m and their losses give α_m = {M.PAPER['alpha_llm'].value} ± 0.04 "
                   f"({M.PAPER['alpha_llm'].source}). An encoder's input "
                   "embedding is not an LM head: an illustration.")
        llm_overlap_section()
        up = st.file_uploader("Your own embedding or LM-head matrix (vocabulary × width): .npy (no pickles) or "
                              ".safetensors", type=["npy", "safetensors"], key="sp_upload")
        if up is not None:
            try:
                mat, tname = M.load_matrix(up.getvalue(), up.name)
                res = M.embedding_overlap(mat)
                st.success(f"{ui.plain(up.name)} · tensor {ui.plain(tname)} · {res['rows']:,} × {res['m']}: mean "
                           f"squared overlap {res['overlap']:.5f}, 1/m = {res['inv_m']:.5f} (ratio {res['ratio']:.2f}; "
                           f"mean-centred {res['overlap_centred']:.5f}), Welch bound {res['welch']:.5f}"
                           + (f" · {res['rows_used']:,} rows used" if res["rows_used"] < res["rows"] else ""))
            except M.InputError as exc:
                ui.report_error(exc, "Cannot use this file")

# ======================================================================== the ledger, terms, cite/code/present
shown = {f"strong α_m (m ≥ {M.MIN_M}), mean over seeds": ("s['alpha_strong']['mean']", f"{a_s['mean']:.2f}"),
         "weak α_m": ("s['alpha_weak']['mean']", f"{a_w['mean']:.2f}")}
ui.page_end(verdict, paper, ui.view_snippet(M, "scaling") + "s = M.analysis.summary(result)\n"
            "# one model with the settings of 'Train one model' above:\n# "
            + ui.call_snippet("superposition", "run", cfg).rsplit("\n", 2)[-2] + "\n",
            cli="python -m toymodels reproduce superposition --quick", shown=shown)


def _notebook_tab() -> None:
    st.subheader("Configurations tried")
    st.table(M.TRIED, hide_index=True, border="horizontal")  # wraps: every word of a row shows
    st.subheader("The headline sweep, width by width")
    cfg_s = scal["settings"]
    st.caption(f"n = {cfg_s['n']}, batch {cfg_s['batch']}, {cfg_s['steps']:,} scheduled steps (cap "
               f"{cfg_s['max_steps']:,}), the paper's large-model rates (lr_W = 0.02·(8/m)^¼, lr_b = 2/m, 5 % warmup, "
               f"cosine to 5 %), seeds {', '.join(str(x) for x in s['seeds'])}. Converged: each run's loss on a fixed "
               f"evaluation sample changed by less than {M.CONV_TOL:.0%} over its last {M.CONV_WINDOW:.0%} of training "
               f"(worst drift {s['max_drift']:.2%}, longest run {s['steps_run_max']:,} steps).")
    st.markdown("**Strong regime** (γ = −1, α = 1)")
    st.dataframe(w_strong.round(4), hide_index=True, width="stretch")
    st.markdown("**Weak regime** (γ = 0.1, α = 1.5)")
    st.dataframe(w_weak.round(4), hide_index=True, width="stretch")
    st.markdown("**Exponents per seed**")
    st.dataframe(pd.DataFrame({"seed": s["seeds"], f"strong α_m (m ≥ {M.MIN_M})": a_s["per_seed"],
                               "strong α_m (all m)": s["alpha_strong_all"]["per_seed"],
                               f"overlap slope (m ≥ {M.MIN_M})": [-x for x in s["overlap_slope"]["per_seed"]],
                               "weak α_m": a_w["per_seed"], "weak α_m of Eq. 4": s["alpha_weak_eq4"]["per_seed"]}
                              ).round(3), hide_index=True, width="stretch")
    st.caption("The strong line is not straight: between neighbouring widths its exponent reads "
               + ", ".join(f"{a:.2f} (m = {m0}→{m1})" for a, m0, m1 in zip(loc["local_alpha"], s["strong"]["m"],
                                                                           loc["m"]))
               + f"; across seeds the loss at one width varies by up to ± {100 * s['strong_seed_spread']:.0f} % "
               f"(m ≥ {M.MIN_M}).")
    st.markdown("**m = 10 under the paper's two recipes**")
    st.dataframe(A.m10_table(ui.view(M, "m10_recipes")).round(3), hide_index=True, width="stretch")
    st.markdown("**Every run of the headline sweep**")
    st.dataframe(table, hide_index=True, width="stretch", height=300)
    ui.download_csv(table, "superposition_width_sweep.csv", key="dl_table")
    st.caption("The 2 % rule is necessary, not sufficient: under a cosine schedule the last 20 % of steps run at a "
               "small learning rate. We also checked it against the budget: 4000 steps gave α_m ≈ 0.8 (table above), "
               "12 000 steps and convergence the values shown.")


with notebook:
    if notebook.open:
        _notebook_tab()
