"""Grokking without networks: a kernel machine that learns its metric from its own gradients (RFM) groks modular
addition. The page opens on the shipped p = 61 run; the knobs below re-run it (p = 31 in about a second)."""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.grokking as M
import ui
from toymodels.grokking import prose

TOPIC = M.TOPIC
TRAIN_C, TEST_C, CIRC_C, CTRL_C, MSE_C = ui.PALETTE[0], ui.PALETTE[1], ui.PALETTE[2], ui.PALETTE[5], ui.PALETTE[3]
DEFAULT = M.Config()

RUN_KNOBS = ["gk_p", "gk_frac", "gk_iters", "gk_L", "gk_s", "gk_seed"]
TABS = ["The story", "Lab notebook"]

paper = ui.paper_header(TOPIC)
verdict, fresh = ui.shipped_verdict(TOPIC)

TOUR = [
    ui.Step("The jump", "The official setting: p = 61, half of the 3,721 pairs for training. Train accuracy is 1 from "
            "the first solve; test accuracy sits at zero for about ten iterations of RFM, then climbs to 1 within a "
            "few more.", settings={"gk_p": 61, "gk_ctrl": "rfm", "gk_op": "x+y", "gk_frac": 0.5},
            look_at="the test-accuracy line, and where it leaves zero", target="headline-figure"),
    ui.Step("The loss tells you nothing", "The test loss (MSE) is flat for the first iterations, exactly while the "
            "accuracy is zero. Nothing in it announces the jump.",
            settings={"gk_p": 61, "gk_ctrl": "rfm", "gk_tabs": TABS[0]},
            look_at="the test-MSE chart, iterations 0 to 6", target="chart-grokking-test-loss",
            predict="While test accuracy sits at zero, what does the test loss do?",
            choices=("it falls steadily", "it stays flat")),
    ui.Step("The features move first", "The circulant deviation D of M's x-y block falls steadily from the first "
            "iteration, long before the accuracy moves: the metric turns block-circulant, and the jump follows.",
            settings={"gk_p": 61, "gk_ctrl": "rfm", "gk_iter": 5, "gk_tabs": TABS[0]},
            look_at="the heatmap at iteration 5: stripes along the diagonals, and D beside it",
            target="chart-grokking-metric"),
    ui.Step("Structure is all it takes", "Skip learning: give the kernel a random circulant metric (the paper's "
            "control). One solve, no iteration, and it generalises. M = I never does.",
            settings={"gk_p": 61, "gk_ctrl": "random_circulant"}, look_at="the control's test accuracy",
            target="headline-figure", predict="A random block-circulant metric, no learning at all: does the kernel "
            "generalise?", choices=("yes", "no")),
    ui.Step("Smaller p, slower jump", "At p = 31 the same run takes about a second: the jump starts later and is "
            "still climbing after 40 iterations.", settings={"gk_p": 31, "gk_ctrl": "rfm", "gk_iter": 39},
            look_at="the test accuracy at the last iteration", target="chart-grokking-accuracy", compute=True),
]
active = ui.tour(TOUR)

# --------------------------------------------------------------------------- layout: the picture first
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col:
    headline_box = st.container(key="headline-figure")
with side_col:
    side_box = st.container()
    run_box = st.expander("Change the run: p, training fraction, iterations, bandwidth, AGOP power, seed, metric",
                          icon=":material/tune:", expanded=ui.in_link(*RUN_KNOBS, "gk_op", "gk_ctrl"))
strip_box = st.container()
story, notebook = st.tabs(TABS, key="gk_tabs", bind="query-params")  # the notebook draws only when open
with story:
    story_box = st.container()
    sweep_box = st.container()
ledger_box = st.container()  # below the tabs, whichever is open (the ledger strip's link lands here)

with run_box:
    cfg = ui.form(M.KNOBS, DEFAULT, RUN_KNOBS, columns=2)
    cfg = ui.form(M.KNOBS, cfg, ["gk_op", "gk_ctrl"], columns=1)
    knob_cfg = cfg
    n_train, n_test, _, _ = M.sizes(cfg)
    st.caption(f"{n_train:,} training pairs, {n_test:,} test pairs, inputs of {2 * cfg.p} numbers. Defaults are "
               "the official train_kernel.py settings; bounds keep one run under a minute and a half.")
    shown_default = False
    try:
        with ui.guard():
            res = ui.compute(M.run, cfg, label="Iterating RFM…", seconds=M.expected_seconds(cfg))
    except np.linalg.LinAlgError:
        st.warning(f"{prose.SINGULAR} The figures show the shipped default run (p = 61).", icon=":material/error:")
        res, cfg, shown_default = ui.view(M, "default"), DEFAULT, True
    if res is None:
        res, cfg, shown_default = ui.view(M, "default"), DEFAULT, True

is_rfm = cfg.control == "rfm"
s = M.summary(res)
curves = M.iteration_table(res)
where = prose.where(cfg)
agop, rfm = ui.term("AGOP", TOPIC), ui.term("RFM", TOPIC)
n_splits = next((j.seeds for j in verdict.claims if j.kind == "headline"), 0)


def _iteration_axis():
    return alt.X("iteration:Q", title="RFM iteration", scale=alt.Scale(domain=[0, max(1, s["iters"] - 1)], nice=False))


# --------------------------------------------------------------------------- the headline figure
with headline_box:
    if shown_default and knob_cfg != DEFAULT:
        st.info(f"This is the shipped run ({where}), not your settings: press the button beside it to run yours.",
                icon=":material/info:")
    if is_rfm:
        acc = curves.melt("iteration", ["train_acc", "test_acc"], var_name="curve", value_name="accuracy")
        acc["curve"] = acc["curve"].map({"train_acc": "train accuracy", "test_acc": "test accuracy"})
        refs = pd.DataFrame({"accuracy": [s["random_circulant_test_acc"], s["identity_test_acc"]],
                             "curve": ["random circulant M", "M = I"]})
        domain = ["train accuracy", "test accuracy", "random circulant M", "M = I"]
        color = alt.Color("curve:N", title=None, legend=alt.Legend(labelLimit=0, columns=2, orient="bottom"),
                          scale=alt.Scale(domain=domain, range=[TRAIN_C, TEST_C, CIRC_C, CTRL_C]))
        refs["iteration"] = s["iters"] - 1
        refs["text"] = [f"random circulant M: {s['random_circulant_test_acc']:.1%}",
                        f"M = I: {s['identity_test_acc']:.1%}"]
        top = alt.layer(
            alt.Chart(refs).mark_rule(strokeDash=[5, 4], strokeWidth=1.6).encode(y="accuracy:Q", color=color),
            alt.Chart(refs).mark_text(align="right", dy=-9, fontSize=12).encode(
                x=alt.X("iteration:Q"), y="accuracy:Q", text="text:N", color=color),
            alt.Chart(acc).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
                x=_iteration_axis(), y=alt.Y("accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])),
                color=color, tooltip=["curve", "iteration", alt.Tooltip("accuracy:Q", format=".3f")]),
        ).properties(height=270)
        st.markdown("**Test accuracy jumps long after train accuracy is perfect**")
        ui.chart(top, "grokking-accuracy", data=curves, span=0.6,
                 alt_text="Train and test accuracy against RFM iteration, with the controls as dashed lines")
        st.caption(f"This run: {where}.")
    else:
        st.markdown(f"**{M.CONTROL_LABELS[cfg.control]}**: one kernel solve with a fixed metric, no iteration "
                    f"({where}).")
        cols = st.columns(3)
        cols[0].metric("Test accuracy, this metric", f"{s['final_test_acc']:.1%}")
        cols[1].metric("Random circulant M, same split", f"{s['random_circulant_test_acc']:.1%}")
        cols[2].metric("M = I, same split", f"{s['identity_test_acc']:.1%}")
        st.caption(f"Train accuracy {s['min_train_acc']:.1%}.")
        if cfg.control == "random_circulant" and cfg.op == "x-y":
            st.caption(prose.SQRTM_NOTE)

with side_box:
    ui.headline_claim(verdict, notice=prose.headline_notice(s, is_rfm), ours_label=f"Our toy, {n_splits} fresh splits")
    st.caption(f"The figure is one run of {rfm}, a kernel machine whose metric is the {agop} of its own "
               f"predictor; the number is the claim's test on {n_splits} fresh splits.")

with strip_box:
    ui.ledger_strip(verdict)

# --------------------------------------------------------------------------- the story
with story_box:
    with st.expander("The model: kernel regression, then the metric from its own gradients",
                     icon=":material/functions:"):
        ui.blocks(prose.model(agop))
    if is_rfm:
        st.subheader("The loss does not announce the jump; the features move first")
        left, right = st.columns(2)
        with left:
            st.markdown("**Test loss (MSE): flat while the accuracy is zero**")
            bottom = alt.Chart(curves).mark_line(color=MSE_C, point=alt.OverlayMarkDef(size=18, color=MSE_C)).encode(
                x=_iteration_axis(), y=alt.Y("test_mse:Q", title="test MSE", scale=alt.Scale(zero=False)),
                tooltip=["iteration", alt.Tooltip("test_mse:Q", format=".5f")]).properties(height=240)
            ui.chart(bottom, "grokking-test-loss", data=curves, alt_text="Test MSE against RFM iteration")
            st.caption(prose.loss_caption(s))
        with right:
            st.markdown("**The metric turns circulant first**")
            base = alt.Chart(curves).encode(x=_iteration_axis())
            dual = alt.layer(
                base.mark_line(color=CIRC_C, point=alt.OverlayMarkDef(size=18, color=CIRC_C)).encode(
                    y=alt.Y("circulant_deviation:Q", title="circulant deviation D (green)",
                            scale=alt.Scale(domain=[0, 1])),
                    tooltip=["iteration", alt.Tooltip("circulant_deviation:Q", format=".3f", title="D")]),
                base.mark_line(color=TEST_C, strokeDash=[4, 3]).encode(
                    y=alt.Y("test_acc:Q", title="test accuracy (orange, dashed)", scale=alt.Scale(domain=[0, 1])),
                    tooltip=["iteration", alt.Tooltip("test_acc:Q", format=".3f", title="test accuracy")]),
            ).resolve_scale(y="independent").properties(height=240)
            ui.chart(dual, "grokking-circulant-deviation", data=curves,
                     alt_text="Circulant deviation D of the metric's off-diagonal block against RFM iteration, beside "
                              "test accuracy")
            st.caption(prose.deviation_caption(s))
        st.latex(prose.DEVIATION)

    @ui.fragment
    def _heatmap() -> None:
        n = len(res["M"])
        st.subheader("The metric, iteration by iteration" if is_rfm else "The metric")
        left, right = st.columns([3, 2], vertical_alignment="center")
        with right:  # the knob beside the figure it drives
            t = ui.knob(M.KNOBS, "gk_iter", hi=n - 1) if n > 1 else 0
        frame = M.metric_frame(res["M"][t])
        lim = float(frame["value"].abs().max()) or 1.0
        p_ = cfg.p
        ticks = [0, p_ - 1, p_, 2 * p_ - 1]
        heat = alt.Chart(frame).mark_rect().encode(
            x=alt.X("col:O", title=f"column (0-{p_ - 1}: x digit, {p_}-{2 * p_ - 1}: y digit)",
                    axis=alt.Axis(values=ticks, labelAngle=0)),
            y=alt.Y("row:O", title="row", axis=alt.Axis(values=ticks)),
            color=alt.Color("value:Q", scale=alt.Scale(scheme="blueorange", domain=[-lim, lim]),
                            title="M off its diagonal", legend=alt.Legend(orient="right")),
            tooltip=["row", "col", alt.Tooltip("value:Q", format=".4f")],
        ).properties(height=420)
        label = "the fixed metric" if not is_rfm else f"M after iteration {t}"
        with left:
            ui.chart(heat, f"grokking-metric-{t}", key="chart-grokking-metric", data=frame, span=0.6,
                     alt_text=f"Heatmap of {label} with its diagonal left out")
        with right:
            if is_rfm:
                st.metric("Circulant deviation D", f"{res['circulant_deviation'][t]:.3f}")
                st.metric(f"Test accuracy at iteration {t}", f"{res['test_acc'][t]:.3f}")
            st.caption(prose.heatmap_caption(label, t, is_rfm, res["circulant_deviation"][t], agop,
                                             ui.term("block-circulant", TOPIC)))

    _heatmap()

    study_box = st.container()


with sweep_box:
    if ui.shown("sweep", active):
        st.subheader("Sweep a knob")
        st.markdown(prose.SWEEP_INTRO)
        c = st.columns([1, 2])
        param = ui.knob(M.KNOBS, "gk_sweep", where=c[0])
        picked = ui.knob(M.KNOBS, f"gk_sweep_{param}", where=c[1])
        if picked and knob_cfg.control == "rfm":
            values = sorted(float(v) for v in picked)
            cost = sum(M.expected_seconds(M.Config(**{**knob_cfg.__dict__, param: v})) for v in values)
            try:
                with ui.guard():
                    sw = ui.compute(M.sweep, knob_cfg, param, values, label="Sweeping…", seconds=cost)
            except np.linalg.LinAlgError:
                st.warning(f"{prose.SINGULAR} One of the sweep's runs stopped there.", icon=":material/error:")
                sw = None
            if sw is not None:
                table, long = M.sweep_table(sw), M.sweep_curves(sw)
                label = M.SWEEP_LABELS[param]
                lines = alt.Chart(long).mark_line(point=alt.OverlayMarkDef(size=14)).encode(
                    x=alt.X("iteration:Q", title="RFM iteration"),
                    y=alt.Y("test_acc:Q", title="test accuracy", scale=alt.Scale(domain=[0, 1])),
                    color=alt.Color("value:O", title=label, scale=alt.Scale(scheme="viridis")),
                    tooltip=[alt.Tooltip("value:Q", title=label), "iteration",
                             alt.Tooltip("test_acc:Q", format=".3f", title="test accuracy"),
                             alt.Tooltip("circulant_deviation:Q", format=".3f", title="D")]).properties(height=280)
                ui.chart(lines, f"grokking-sweep-{param}", data=long,
                         alt_text=f"Test accuracy against RFM iteration for several values of the {label}")
                st.dataframe(table, hide_index=True, width="stretch")
        elif knob_cfg.control != "rfm":
            st.caption("A sweep runs RFM: set the metric to RFM above.")

with ledger_box:
    ui.page_end(verdict, paper, ui.call_snippet("grokking", "run", cfg),
                cli="python -m toymodels reproduce grokking --quick",
                shown={"final test accuracy": ("result['test_acc'][-1]", f"{s['final_test_acc']:.3f}"),
                    "circulant deviation D, last iteration": ("result['circulant_deviation'][-1]",
                                                              f"{s['D_last']:.3f}")})

# --------------------------------------------------------------------------- the lab notebook
with notebook:
    if notebook.open:
        ui.lab_table(M.LAB_NOTEBOOK, alt="Every configuration tried: pilots, timings, tests and the cost model")
        st.subheader("Per iteration, this run")
        st.dataframe(curves, hide_index=True, width="stretch")
        ui.download_csv(curves, "grokking-iterations.csv")
        study_table_box = st.container()
        ui.caveats(prose.CAVEATS)

# --------------------------------------------------------------------------- the deciding study, drawn last
# (into its boxes above): were its view missing, ui.view would stop the script here, after the rest is drawn.
if ui.shown("seeds", active):
    with study_box:
        st.subheader("Twenty splits, the same story")
        study = ui.view(M, "seeds")
        ss = M.study_summary(study)
        st.markdown(f"**What to notice:** {prose.study_notice(ss, study, s)}")
        long = M.study_curves(study)
        lines = alt.Chart(long).mark_line(strokeWidth=1.2, opacity=0.6).encode(
            x=alt.X("iteration:Q", title="RFM iteration"), detail="seed:N",
            tooltip=["seed", "iteration", alt.Tooltip("test_acc:Q", format=".3f"),
                     alt.Tooltip("circulant_deviation:Q", format=".3f", title="D")])
        left, right = st.columns(2)   # two charts, not alt.hconcat (which overflows the column when stretched)
        with left:
            ui.chart(lines.encode(y=alt.Y("test_acc:Q", title="test accuracy"), color=alt.value(TEST_C)).properties(
                height=300, title="test accuracy, one line per split"), "grokking-splits-test-accuracy", data=long,
                alt_text="Test accuracy against iteration for twenty random splits")
        with right:
            ui.chart(lines.encode(y=alt.Y("circulant_deviation:Q", title="D", scale=alt.Scale(domain=[0, 1])),
                                  color=alt.value(CIRC_C)).properties(height=300, title="circulant deviation D"),
                     "grokking-splits-circulant-deviation", data=long,
                     alt_text="Circulant deviation D against iteration for twenty random splits")
    if notebook.open:
        with study_table_box:
            st.subheader("Per split, the deciding study")
            table = M.seed_table(study)
            st.dataframe(table, hide_index=True, width="stretch")
            ui.download_csv(table, "grokking-splits.csv")
