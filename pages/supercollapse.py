"""Supercollapse: Qiu et al.'s scaling collapse, on the paper's own solvable model (one-pass SGD on power-law data)."""
import altair as alt
import pandas as pd
import streamlit as st

import toymodels.supercollapse as M
import ui
from toymodels.supercollapse import prose

paper = ui.paper_header(M.TOPIC)
verdict, fresh = ui.shipped_verdict(M.TOPIC)

SCHEDULES = dict(M.SCHEDULE_NAMES)
SIZES = [64, 128, 256, 512, 1024, 2048]          # one colour per size on every chart
SIZE_COLOR = alt.Color("size:O", title="model size p", scale=alt.Scale(domain=SIZES, range=ui.PALETTE[:6]),
                       legend=alt.Legend(orient="bottom", columns=3))
TABS = ["The paper, in its own toy model", "Lab notebook"]

TOUR = [
    ui.Step("One curve", "Six model sizes (64 to 2048 features), each trained for its compute-optimal number of "
            "steps. Divide each loss curve by its final loss and its compute by its final compute: the six curves "
            "land on one line.", settings={"sc_gamma": 1.0, "sc_schedule": "linear", "sc_l0": "true"},
            look_at="the six lines on top of each other", target="headline-figure"),
    ui.Step("Below the seed noise", "Twenty seeds per size give the noise floor σ: how much one model's normalised "
            "curve wobbles from seed to seed. With linear decay the spread across sizes stays under it: that is "
            "supercollapse.", settings={"sc_gamma": 1.0, "sc_schedule": "linear", "sc_l0": "true", "sc_tabs": TABS[0]},
            look_at="Δ/σ beside the chart, and the shaded stretch where Δ < σ", target="chart-noise",
            predict="Is the spread between six model sizes larger or smaller than the noise between two seeds of "
                    "one size?", choices=("larger", "smaller")),
    ui.Step("The wrong exponent", "Scale the horizon as p^(1.2 γ*) instead: small and large models are now trained "
            "for the wrong relative lengths and their curves fan out.",
            settings={"sc_gamma": 1.2, "sc_schedule": "constant", "sc_l0": "true", "sc_tabs": TABS[0]},
            look_at="the spread against γ/γ*: the valley sits at 1.0; the circle is this setting",
            target="chart-spread_vs_gamma"),
    ui.Step("A misfit L0", "The official notes warn that the irreducible loss L0 must be fitted right. Subtract one "
            "that is 10% off (the true one is 0) and see whether Δ/σ crosses 1: our own probe, not one of the paper's "
            "claims (the notes give no size of misfit).",
            settings={"sc_gamma": 1.0, "sc_schedule": "linear", "sc_l0": "misfit", "sc_l0_frac": 0.1,
                      "sc_tabs": TABS[0]},
            look_at="Δ/σ beside the noise chart", target="chart-noise",
            predict="L0 off by 10%: does the supercollapse (Δ/σ < 1) survive?", choices=("it survives", "it breaks")),
    ui.Step("Why decay matters", "Switch to a constant rate: the seed noise σ of the normalised curves grows "
            "several-fold, because the final loss of each seed still carries the full SGD noise.",
            settings={"sc_gamma": 1.0, "sc_schedule": "constant", "sc_l0": "true", "sc_tabs": TABS[0]},
            look_at="σ (median) beside the noise chart, against the linear-decay value", target="sc-noise-numbers"),
]
active = ui.tour(TOUR)

grid = ui.view(M, "collapse")
seeded = ui.view(M, "noise")
front = ui.view(M, "frontier")
sched_model = ui.view(M, "schedules")


def curves_chart(table: pd.DataFrame, title: str, height: int = 300):
    """Normalised loss against normalised compute, one line per size."""
    return alt.Chart(table).mark_line().encode(
        x=alt.X("x:Q", title="normalised compute c / c_final"),
        y=alt.Y("ell:Q", title="normalised loss ℓ", scale=alt.Scale(type="log")),
        color=SIZE_COLOR, tooltip=["size:O", alt.Tooltip("x:Q", format=".2f"), alt.Tooltip("ell:Q", format=".4f")],
    ).properties(title=title, height=height)


#: the four curves of the noise chart, by the short names its legend gives them (a phone's width)
QUANTITY = {"spread Δ (seed means)": "spread Δ", "seed noise σ": "seed noise σ",
            "systematic Δ (floor removed)": "Δ, floor removed", "exact Δ (expected curves)": "exact Δ"}
QUANTITY_COLORS = alt.Scale(domain=list(QUANTITY.values()), range=[ui.PALETTE[3], ui.PALETTE[0], ui.PALETTE[2],
                                                                   ui.PALETTE[5]])


def noise_chart(noise: dict, title: str, height: int = 300):
    """Δ(x) and σ(x) (log scale), with the stretch where Δ < σ shaded: the analogue of the paper's Fig. 1c."""
    curves = noise["curves"].assign(quantity=lambda d: d.quantity.map(QUANTITY).fillna(d.quantity))
    xs = curves[curves.quantity == "seed noise σ"]["x"].to_numpy()
    shade = pd.DataFrame({"x": xs, "super": noise["supercollapse"]})
    shade = shade[shade["super"]].assign(x2=lambda d: d["x"] + 0.02, label="Δ < σ: supercollapse")
    band = alt.Chart(shade).mark_rect(opacity=0.15, color=ui.PALETTE[2]).encode(
        x="x:Q", x2="x2:Q", tooltip=["label:N"])
    lines = alt.Chart(curves[curves["value"] > 0]).mark_line().encode(
        x=alt.X("x:Q", title="normalised compute c / c_final", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("value:Q", title="spread or noise of ℓ", scale=alt.Scale(type="log")),
        color=alt.Color("quantity:N", scale=QUANTITY_COLORS, legend=alt.Legend(orient="bottom", columns=2, title=None)),
        strokeDash=alt.condition(alt.datum.quantity == "seed noise σ", alt.value([1, 0]), alt.value([5, 3])),
        tooltip=["quantity:N", alt.Tooltip("x:Q", format=".2f"), alt.Tooltip("value:Q", format=".2e")])
    return (band + lines).properties(title=title, height=height)


def noise_l0(frac: float) -> str:
    return "true" if not frac else f"{frac:+.0%} misfit"


# ======================================================================== the headline figure, its knobs beside it
KNOB_IDS = ("sc_gamma", "sc_schedule", "sc_l0", "sc_l0_frac")
fig_col, side_col = st.columns([3, 2], gap="medium")
with side_col:
    claim_box = st.container()
    with st.expander("Try to break it: the horizon exponent, the schedule, the irreducible loss L0",
                     icon=":material/tune:", expanded=ui.in_link(*KNOB_IDS)):
        gamma, schedule = ui.knob(M.KNOBS, "sc_gamma"), ui.knob(M.KNOBS, "sc_schedule")
        l0_mode = ui.knob(M.KNOBS, "sc_l0")
        l0_frac = ui.knob(M.KNOBS, "sc_l0_frac", disabled=l0_mode == "true")
        frac = l0_frac if l0_mode == "misfit" else 0.0
        if seeded is not None:
            st.caption(prose.l0_probe_caption(M.l0_probe(seeded)))
norm = M.normalised_curves(grid, gamma, schedule, frac)
noise = M.noise_curves(seeded, gamma, schedule, frac)
at_default = (gamma, schedule, frac) == (1.0, "linear", 0.0)
settings = f"γ = {gamma:g} γ*, {SCHEDULES[schedule]}, L0 {noise_l0(frac)}"
with fig_col.container(key="headline-figure"):
    ui.chart(curves_chart(norm["table"], f"Six sizes, one curve: normalised loss, {settings}", height=280),
             "collapse", data=norm["table"], span=0.6,
             alt_text="Normalised loss against normalised compute for six model sizes at the chosen settings.")
with claim_box:
    ui.headline_claim(verdict, claim="supercollapse", notice=prose.headline_notice(norm, noise, at_default))
    st.caption("Each size is trained for its compute-optimal number of steps; each curve is divided by its final "
               "loss and its compute by its final compute (section 4 says where the horizons come from).")
if not fresh:
    st.caption("Some shipped views were computed by an earlier version of the code (see the Lab notebook).")
ui.ledger_strip(verdict)

explainer, notebook = st.tabs(TABS, key="sc_tabs", bind="query-params")  # the notebook draws only when open

with explainer:
    with st.expander("The model: the paper's own theory, solved exactly", icon=":material/functions:"):
        ui.blocks(prose.model(M.CurveConfig().t0))

    # ======================================================================== magnified, and the exponent
    st.subheader("1 · What separates the sizes, and the exponent that makes them one")
    c1, c2 = st.columns(2)
    with c1:
        resid = alt.Chart(norm["table"]).mark_line().encode(
            x=alt.X("x:Q", title="normalised compute c / c_final"),
            y=alt.Y("residual:Q", title="ℓ_p − mean ℓ"), color=SIZE_COLOR,
            tooltip=["size:O", alt.Tooltip("x:Q", format=".2f"), alt.Tooltip("residual:Q", format=".2e")])
        ui.chart(resid.properties(title=f"Each size's distance from the mean curve, {settings}", height=280),
                 "residuals", data=norm["table"], alt_text="Each size's normalised curve minus the mean over sizes.")
        st.caption(prose.spread_caption(norm))
    with c2:
        sweep = M.spread_vs_gamma(grid, frac).assign(schedule=lambda d: d["schedule"].map(SCHEDULES))
        here = sweep[(sweep["mult"].round(2) == round(gamma, 2)) & (sweep["schedule"] == SCHEDULES[schedule])]
        base = alt.Chart(sweep).mark_line(point=True).encode(
            x=alt.X("mult:Q", title="γ / γ*"),
            y=alt.Y("spread:Q", title="median spread Δ", scale=alt.Scale(type="log")),
            color=alt.Color("schedule:N", scale=alt.Scale(domain=list(SCHEDULES.values()), range=ui.PALETTE[:3]),
                            legend=alt.Legend(orient="bottom")),
            tooltip=["schedule:N", "mult:Q", alt.Tooltip("spread:Q", format=".2e")])
        mark = alt.Chart(here).mark_point(size=260, shape="circle", filled=False, color=ui.NEUTRAL,
                                          strokeWidth=2.5).encode(x="mult:Q", y="spread:Q")
        ui.chart((base + mark).properties(title="The collapse selects the exponent", height=280), "spread_vs_gamma",
                 data=sweep, alt_text="Median spread of the normalised curves against the horizon exponent, one "
                 "line per schedule; each has its minimum near γ*.")
    sel = {k: M.exponent_selection(grid, k) for k in ("constant", "linear")}
    c2.caption(prose.exponent_caption(sel))

    # ======================================================================== Fig. 1c
    st.subheader("2 · Below the noise floor")
    c1, c2 = st.columns([3, 2])
    with c1:
        title = f"Δ and σ: {settings}"
        ui.chart(noise_chart(noise, title), "noise", span=0.6, data=noise["curves"],
                 alt_text="Spread across sizes and seed noise against normalised compute for the chosen settings.")
    c2.container(key="sc-noise-numbers").markdown(prose.noise_numbers(noise))
    st.caption(prose.constant_note(M.noise_curves(seeded, 1.0, "constant")["summary"]))
    with st.expander("Each size's seed band (mean ± one standard deviation)"):
        bands = noise["bands"]
        bx = alt.X("x:Q", title="normalised compute")
        band = alt.Chart(bands).mark_area(opacity=0.2).encode(x=bx, y=alt.Y("lo:Q", title="normalised loss ℓ",
                                                                           scale=alt.Scale(type="log")),
                                                              y2="hi:Q", color=SIZE_COLOR)
        mean = alt.Chart(bands).mark_line().encode(x=bx, y="mean:Q", color=SIZE_COLOR)
        ui.chart((band + mean).properties(height=280), "seed_bands", data=bands,
                 alt_text="Seed mean and one-standard-deviation band of each size's normalised curve.")

    # ======================================================================== the schedule model
    st.subheader("3 · Why decay suppresses the noise: the schedule model")
    pick = ui.knob(M.KNOBS, "sc_model_size")
    sm = M.schedule_curves(sched_model, pick)
    c1, c2 = st.columns([3, 2])
    with c1:
        st.markdown(f"**What a schedule does beyond slowing the flow, p = {pick}**")  # as text: a chart title
        chart = alt.Chart(sm).mark_line().encode(                                # sat under the slider
            x=alt.X("x:Q", title="t / T"),
            y=alt.Y("value:Q", title="L_sched(t) − L_const(τ(t))"),
            color=alt.Color("schedule:N", scale=alt.Scale(domain=["linear", "cosine"], range=ui.PALETTE[1:3]),
                            legend=alt.Legend(orient="bottom")),
            strokeDash=alt.StrokeDash("curve:N", legend=alt.Legend(orient="bottom", columns=1, title=None)),
            tooltip=["schedule:N", "curve:N", alt.Tooltip("x:Q", format=".2f"), alt.Tooltip("value:Q", format=".2e")])
        ui.chart(chart.properties(height=300),
                 "schedules", span=0.6, data=sm,
                 alt_text="The deformation of the loss curve by linear and cosine decay, actual and predicted by "
                 "the schedule model.")
    c2.markdown(prose.schedule_text(sched_model, M.PAPER))

    # ======================================================================== compute-optimal training
    st.subheader("4 · Where the horizons come from: compute-optimal training")
    curves, points, env = front["curves"], front["horizon_points"], front["envelope"]
    curves, points = curves[curves["size"].isin(SIZES)], points[points["size"].isin(SIZES)]
    env = env[(env["compute"] >= curves["compute"].min()) & (env["compute"] <= curves["compute"].max())]
    xc = alt.X("compute:Q", title="compute c = p·t", scale=alt.Scale(type="log"))
    yl = alt.Y("loss:Q", title="expected loss", scale=alt.Scale(type="log"))
    raw = alt.Chart(curves).mark_line(opacity=0.8).encode(x=xc, y=yl, color=SIZE_COLOR,
                                                          tooltip=["size:O", "step:Q", alt.Tooltip("loss:Q",
                                                                                                   format=".4f")])
    frontier_line = alt.Chart(env.assign(what="frontier (lower envelope, 4 sizes per octave)")).mark_line(
        strokeDash=[7, 4], color=ui.NEUTRAL, strokeWidth=3.5).encode(x=xc, y=yl, tooltip=["what:N", "best:Q"])
    dots = alt.Chart(points).mark_point(size=80, filled=True, color=ui.NEUTRAL).encode(
        x=xc, y=yl, tooltip=["size:O", alt.Tooltip("step:Q", title="t*(p)"), alt.Tooltip("loss:Q", format=".4f")])
    c1, c2 = st.columns([3, 2])
    with c1:
        ui.chart((raw + frontier_line + dots).properties(title="Loss against compute (constant rate)", height=320),
                 "frontier", span=0.6, data=curves,
                 alt_text="Loss against compute for six sizes, log-log, with the lower envelope and each size's "
                 "compute-optimal horizon marked.")
    c2.markdown(prose.frontier_text(front, grid["config"]["a"], M.PAPER))

    # ======================================================================== your own seeds
    st.subheader("5 · Your own seeds")
    st.caption("Re-run the seeded SGD of section 2 (same sizes, exponent, schedule and L0) on seeds of your choice.")
    mine_cfg = ui.form(M.KNOBS, M.SimConfig(mults=(gamma,), schedules=(schedule,), seed=2000, seeds=8),
                       ["sc_seed", "sc_seeds"], columns=2)
    with ui.guard():
        M.check_budget(mine_cfg, limit=M.PAGE_SECONDS)
        mine = ui.compute(M.seeded_grid, mine_cfg, label="Running seeded SGD…", button="Run seeded SGD",
                          seconds=M.expected_seconds(mine_cfg))
    if mine is not None:
        mn = M.noise_curves(mine, gamma, schedule, frac)
        c1, c2 = st.columns([3, 2])
        with c1:
            seeds_text = f"Your seeds {mine_cfg.seed}…{mine_cfg.seed + mine_cfg.seeds - 1}"
            ui.chart(noise_chart(mn, seeds_text), "my_noise", span=0.6, data=mn["curves"],
                     alt_text="Spread and noise for your seeds.")
        c2.markdown(f"{prose.ratio_text(mn['summary'])}; σ = {mn['summary']['noise']:.4f}.")

    # ======================================================================== what the paper trained
    with st.expander("What the paper trained, and why it is not here", icon=":material/info:"):
        st.markdown(prose.paper_trained(M.PAPER))


with notebook:
    if notebook.open:
        st.markdown("Everything tried while building this toy, failures included, then the full tables behind the "
                    "panels above.")
        st.dataframe(pd.DataFrame(M.NOTEBOOK), hide_index=True, width="stretch")
        check = ui.view(M, "check")
        st.markdown("**The exact recursion against seeded SGD** (p = 128, 32 seeds, 3000 steps): z = (seed mean − "
                    f"exact) / standard error; largest |z| = **{check['max_abs_z']:.2f}**.")
        st.dataframe(check["table"], hide_index=True, width="stretch")
        st.markdown("**Seeded runs, every exponent and schedule** (median over x in [0.2, 0.95], 95% bootstrap CIs "
                    "over seeds):")
        st.dataframe(M.seeded_table(seeded), hide_index=True, width="stretch")
        st.markdown("**Misfit L0** at γ*, every schedule (L0 as a fraction of the largest size's final loss; our own "
                    "probe reads ±0.1 under linear decay, not a claim of the paper; the rest is an exploratory scan):")
        st.dataframe(seeded["misfit_scan"], hide_index=True, width="stretch")
        st.markdown("**Noise of each decaying schedule over constant rate** (paired seeds):")
        st.dataframe(seeded["noise_vs_constant"], hide_index=True, width="stretch")
        st.markdown("**Schedule model**: error of the α fitted on linear decay, and each curve's own best α:")
        st.dataframe(sched_model["errors"], hide_index=True, width="stretch")
        st.markdown("**Frontier**: the optimal horizon of each size read off the envelope (NaN: no whole interval):")
        st.dataframe(front["optimal"], hide_index=True, width="stretch")
        st.markdown("**Caveats.**\n" + "\n".join(f"- {c}" for c in prose.CAVEATS))

# --------------------------------------------------------------------------- below the tabs, whichever is open
ui.page_end(verdict, paper, ui.view_snippet(M, "noise"), cli="python -m toymodels reproduce supercollapse --quick",
            shown={f"Δ/σ, {settings}": (f"M.noise_curves(result, {gamma!r}, {schedule!r}, {frac!r})['summary']"
                                         "['ratio']", f"{noise['summary']['ratio']:.2f}")})
