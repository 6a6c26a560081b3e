"""Transductive online learning: the mistake game, with exact Littlestone dimension and exact transductive value."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.transductive as M
import ui
from toymodels.transductive import prose

TOPIC = "transductive"
TOUR = [
    ui.Step("Seeing the sequence first helps",
            "The class G has Littlestone dimension 3: in the standard game an adversary forces 3 mistakes. Announce "
            "the sequence first and the best it can force drops to 2. Both numbers are exact.",
            settings={"cls": "G", "mode": "compare", "game": "transductive", "la": "SOA", "lb": "Rank rule"},
            look_at="M_tr and LD under '2 · Its numbers'", target="tr-numbers"),
    ui.Step("The standard game is worth LD",
            "Let the adversary pick points as it goes: against any learner it forces LD mistakes, and an optimal "
            "learner (SOA) makes no more. Play the learner yourself and count.",
            settings={"cls": "G", "mode": "learner", "game": "standard"},
            look_at="'Mistakes so far' when the game ends, against LD", target="tr-game"),
    ui.Step("Two copies: the 2/3 ratio",
            "G × G is two copies of G on disjoint points: LD and M_tr both add, 6 against 4. Copies of a small class "
            "were the best construction before this paper (BKM 1997): M_tr = 2d/3.",
            settings={"cls": "GxG"}, look_at="M_tr = 4 against LD = 6", target="tr-numbers",
            predict="G has LD = 3 and M_tr = 2. Two disjoint copies of G have LD = 6: what is their M_tr?",
            choices=("3", "4", "6")),
    ui.Step("No gap for thresholds",
            "Thresholds on 7 points have LD = 3 and M_tr = 3: the adversary announces a binary-search order and "
            "loses nothing. Seeing the sequence helps only for some classes.",
            settings={"cls": "thresholds", "n": 7}, look_at="M_tr = LD", target="tr-numbers",
            predict="Thresholds on 7 points (LD = 3): does announcing the sequence first save the learner a mistake?",
            choices=("yes: M_tr < LD", "no: M_tr = LD")),
    ui.Step("Why the √d law cannot show here",
            "The paper's law needs d in the thousands: its constants (√d/10 for d ≥ 800, 48√d for d ≥ 43) are "
            "vacuous at the d we can solve exactly. The points follow 2d/3 at best, above √d.",
            settings={"cls": "G"}, look_at="every point above the √d line", target="headline-figure"),
]

paper = ui.paper_header(TOPIC)
verdict, _fresh = ui.shipped_verdict(TOPIC)
active = ui.tour(TOUR)
LD, MTR = ui.term("Littlestone dimension", TOPIC, "Littlestone dimension d"), ui.term("transductive", TOPIC)
T = {w: ui.term(w, TOPIC) for w in ("M_tr", "version space", "tree class", "SOA", "Halving", "rank rule",
                                     "VC dimension", "BKM 1997")}

# --------------------------------------------------------------------------- the headline figure
scal = ui.view(M, "scaling")
tab = scal["table"]
dmax = int(tab.d.max())
ref = pd.DataFrame({"d": np.linspace(1, dmax, 60)})
ref = pd.concat([ref.assign(y=ref.d, line="d (standard)"),
                 ref.assign(y=2 * ref.d / 3, line="2d/3 (BKM 1997)"),
                 ref.assign(y=np.sqrt(ref.d), line="√d")])
# the classes' legend inside the plot's empty upper-left corner (no point or line reaches it, down to a phone's
# width), the lines' legend in one row below: side by side they do not fit a phone
lines = alt.Chart(ref).mark_line(strokeDash=[5, 4], strokeWidth=1.5).encode(
    x="d:Q", y="y:Q", color=alt.Color("line:N", title="reference lines", sort=None,
                                      scale=alt.Scale(range=[ui.NEUTRAL, ui.PALETTE[5], ui.PALETTE[2]]),
                                      legend=alt.Legend(orient="bottom", direction="horizontal",
                                                        symbolStrokeWidth=2)))
short = {"G^k (k≥3 by additivity)": "G^k (k ≥ 3: additivity)", "presets": "presets", "random trees": "random trees"}
agg = (tab.assign(family=tab.family.map(lambda f: short.get(f, f)))
       .groupby(["family", "d", "m_tr", "exact"]).size().reset_index(name="classes"))
pts = alt.Chart(agg).mark_point(filled=True, opacity=0.85, color=ui.PALETTE[0]).encode(
    x=alt.X("d:Q", title="Littlestone dimension d (standard game)"),
    y=alt.Y("m_tr:Q", title="M_tr (exact)"),
    size=alt.Size("classes:Q", legend=None, scale=alt.Scale(range=[40, 300])),
    shape=alt.Shape("family:N", title="classes", legend=alt.Legend(orient="top-left")),
    tooltip=["family", "d", "m_tr", "classes", "exact"])
law = {j.id: j for j in verdict.claims}["sqrt-law"].metrics
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    ui.chart(alt.layer(lines, pts).resolve_scale(color="independent").properties(
        height=320, title="Mistakes an adversary forces: transductive (M_tr) against standard (d)"),
        "transductive_scaling", data=agg, span=0.6,
        alt_text="M_tr against the Littlestone dimension d for classes solved exactly, with the lines d, 2d/3 and √d")
with side_col:
    ui.headline_claim(verdict, notice=prose.headline_notice(law))
    st.caption(f"d: the {LD} (the standard game's value). {T['M_tr']}: the {MTR} game's value (the sequence "
               f"of points announced first). 2d/3: the bound before this paper ({T['BKM 1997']}).")
ui.ledger_strip(verdict)

# --------------------------------------------------------------------------- the story: how often, and always
gap = ui.view(M, "gap_sweep")
summ = M.gap_table(gap)
st.subheader("How often does seeing the sequence help?")
band = alt.Chart(summ).mark_area(opacity=0.25, color=ui.PALETTE[0]).encode(
    x=alt.X("p:Q", title="off-path probability p"), y=alt.Y("ci_lo:Q", title="share of classes with M_tr < LD",
                                                            axis=alt.Axis(format="%")), y2="ci_hi:Q")
line = alt.Chart(summ).mark_line(point=True, color=ui.PALETTE[0]).encode(
    x="p:Q", y="gap_fraction:Q",
    tooltip=["p", "classes", "gap_count", alt.Tooltip("gap_fraction:Q", format=".1%"),
             alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
             alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high")])
notes_pts = alt.Chart(summ.dropna(subset=["notes_gap_fraction"])).mark_point(
    shape="diamond", size=110, filled=True, color=ui.PALETTE[3]).encode(
    x="p:Q", y="notes_gap_fraction:Q", tooltip=["p", alt.Tooltip("notes_gap_fraction:Q", format=".1%",
                                                                 title="notes' own draw")])
e1, e2 = st.columns([3, 2])
with e1:
    ui.chart((band + line + notes_pts).properties(
        height=260, title="Share with M_tr < LD, 95% band (diamonds: the notes' own draw)"),
        "transductive_gap_share", data=summ,
        alt_text="Share of random depth-2 tree classes with M_tr below LD against p, with 95% intervals")
e2.markdown(prose.gap_text(summ, M.gap_pairs(gap), T['tree class']))
SWEEP_IDS = ("sw_depth", "sw_p", "sw_steps", "sw_n", "sw_seed")
with st.expander("Sweep your own random tree classes",
                 icon=":material/tune:", expanded=ui.in_link(*SWEEP_IDS)
                 or "tr_sweep_args" in st.session_state):
    ui.download_csv(gap["classes"], "transductive_gap_default.csv", label="Download the shipped sweep (CSV)",
                    key="tr_dl_default")
    sw = ui.form(M.KNOBS, None, ["sw_depth", "sw_p", "sw_steps", "sw_n", "sw_seed"], columns=3, key="tr_sweep",
                 submit="Run sweep (about 2 ms per class at depth 1–2, 0.15 s at depth 3; with progress)")
    go = ui.submitted("tr_sweep")
    if go:
        ps = [round(float(v), 3) for v in np.linspace(sw["p_range"][0], sw["p_range"][1], int(sw["steps"]))]
        st.session_state["tr_sweep_args"] = dict(depth=int(sw["depth"]), ps=ps, samples=int(sw["samples"]),
                                                 seed=int(sw["seed"]))
    args = st.session_state.get("tr_sweep_args")
    res = None
    if args:
        with ui.guard():  # computes on the press of Run sweep only; later reruns show the stored result
            res = ui.compute(M.gap_sweep, **args, label="Sweeping random tree classes…", run=bool(go))
    if res is not None:
        ch = alt.Chart(res["summary"]).mark_line(point=True).encode(
            x=alt.X("p:Q", title="off-path probability p"),
            y=alt.Y("gap_fraction:Q", title="share with M_tr < LD", axis=alt.Axis(format="%")),
            tooltip=["p", "classes", "gap_count", alt.Tooltip("gap_fraction:Q", format=".1%"), "min_ratio", "ld"])
        ui.chart(ch.properties(height=260, title=f"Depth-{args['depth']} tree classes, {args['samples']} per p"),
                 "transductive_sweep", data=res["summary"], alt_text="Share of random tree classes with M_tr below LD "
                                                                     "against p")
        ui.download_csv(res["classes"], f"transductive_gap_depth{args['depth']}.csv", key="tr_dl")
    else:
        st.caption("Press **Run sweep** to compute (the chart above shows the shipped depth-2 sweep).")

checks = ui.view(M, "exact_checks")
cs = checks["summary"]
VIOLATIONS = ["std_ne_ld", "solver_ne_brute", "chain_broken", "below_bound"]
broken = int(cs[VIOLATIONS].to_numpy().sum())
st.subheader("The relations hold on every small class" if not broken else "The relations on every small class")
st.markdown(f"On all {int(cs.loc[cs.family == 'exhaustive', 'classes'].iloc[0])} classes on at most 3 points and "
            f"{int(cs.loc[cs.family == 'random', 'classes'].iloc[0])} random classes on 4–5 points, four checks: "
            "the standard game's brute-force value equals LD, our M_tr equals brute force over every order, "
            f"{T['VC dimension']} ≤ M_tr ≤ LD, and M_tr is never below Theorem B.1's bound. **Violations found: "
            f"{broken}** (by family and check in the expander below).")
with st.expander("The toy, its exact values, the checks", icon=":material/functions:"):
    ui.blocks(prose.GAMES)
    st.markdown("**The checks, by family** (each column counts violations):")
    st.dataframe(cs.rename(columns={"std_ne_ld": "M_std ≠ LD", "solver_ne_brute": "solver ≠ brute force",
                                    "chain_broken": "VC ≤ M_tr ≤ LD broken", "below_bound": "below Thm B.1 bound",
                                    "max_bound": "largest Thm B.1 bound", "max_ld": "largest LD"}),
                 hide_index=True, width="stretch")

# --------------------------------------------------------------------------- choose a class
st.subheader("1 · Choose a hypothesis class")
c1, c2, c3, c4, c5 = st.columns([3, 1, 1, 1, 1])
preset = ui.knob(M.KNOBS, "cls", where=c1)
# only the knobs the chosen class reads are drawn (a phone stacks them: four idle sliders are a screen)
n_pts = ui.knob(M.KNOBS, "n", where=c2) if preset in M.SIZED_PRESETS else M.KNOBS["n"].default
if preset == "tree":
    depth, p_off = ui.knob(M.KNOBS, "depth", where=c3), ui.knob(M.KNOBS, "p", where=c4)
    seed = ui.knob(M.KNOBS, "seed", where=c5)
else:
    depth, p_off, seed = (M.KNOBS[k].default for k in ("depth", "p", "seed"))
text = ui.knob(M.KNOBS, "rows") if preset == "custom" else M.KNOBS["rows"].default


def solve_class(H):
    """The class's exact numbers, without letting a link start a long solve.

    A result already stored (shipped, or solved by any visitor) is shown at once. Otherwise the solver runs at
    once only within ``M.LINK_TR_SECONDS`` of estimated CPU (its meter counts the work before doing it, so
    this is a bound, not a hope); a class that needs more waits for a button that states the cost. A class
    over the solver's own limits (memory or ``M.MAX_TR_SECONDS``) is refused with what it would cost."""
    summary = ui.compute(M.class_summary, H, run=False)  # stored: free; never computes
    if summary is not None:
        return summary
    M.class_summary.budget(H)  # a class the solver already refused is refused again at once
    try:
        return ui.compute(M.class_summary, H, max_work=M.LINK_TR_WORK, run=True, label="Solving the class exactly…")
    except M.CostLimit as exc:
        cost = exc.cost
    M.class_summary.budget(H)  # refused at once when the check already shows the full solve would be refused
    more = max(M.LINK_TR_SECONDS, cost["seconds"])  # the work the check reached (the full solve does it too)
    st.info(f"Solving this class exactly needs more than {more:.1f} s of CPU, so a link does not start it by "
            "itself.", icon=":material/hourglass_top:")
    if st.button(f"Solve it exactly: more than {more:.1f} s of CPU (stopped at {M.MAX_TR_SECONDS:g} s or "
                 f"{M.MAX_TR_BYTES // 2**20} MB)", key="tr_solve", icon=":material/play_arrow:", type="primary"):
        return ui.compute(M.class_summary, H, run=True, label="Solving the class exactly…")
    return None


H, summary = None, None
try:
    if preset == "custom":
        H, notes = M.parse_class(text)
        for note in notes:
            st.warning(f"Your class: {ui.plain(note)}.", icon=":material/content_copy:")
    else:
        H = M.preset_class(preset, n=int(n_pts), depth=int(depth), p=float(p_off), seed=int(seed))
    summary = solve_class(H)
except M.InputError as exc:  # the message may quote the visitor's text: shown as plain characters
    ui.report_error(exc, "This class cannot be used")

if summary is not None:
    # ----------------------------------------------------------------------- its numbers
    st.subheader("2 · Its numbers (all exact)")
    # a row that wraps (two or three to a line on a phone) instead of columns that stack one under the other
    row = st.container(key="tr-numbers", horizontal=True, gap="medium")
    row.metric("points × hypotheses", f"{summary['points']} × {summary['hypotheses']}", width="content")
    DEF = {w: ui.definition(w, TOPIC) for w in ("VC dimension", "M_tr", "Littlestone dimension", "Halving")}
    row.metric("VC dimension", summary["vc"], help=DEF["VC dimension"], width="content")
    row.metric("M_tr (transductive)", summary["m_tr"], help=DEF["M_tr"], width="content")
    row.metric("LD (standard game)", summary["ld"], help=DEF["Littlestone dimension"], width="content")
    row.metric("⌊log₂|H|⌋ (Halving)", summary["halving"],
               help=f"{DEF['Halving']} Here log₂|H| = {summary['log2_size']:.2f}.", width="content")
    chain = pd.DataFrame({"quantity": ["VC", "M_tr", "LD", "⌊log₂|H|⌋"],
                          "value": [summary["vc"], summary["m_tr"], summary["ld"], summary["halving"]],
                          "meaning": ["largest shattered set", "value of the transductive game",
                                      "value of the standard game", "Halving's mistake bound"]})
    base = alt.Chart(chain).encode(
        x=alt.X("quantity:N", sort=list(chain.quantity), title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", title="mistakes", scale=alt.Scale(domain=[0, max(chain.value) * 1.2 + 0.5], nice=False)),
        tooltip=["quantity", "value", "meaning"])
    bars = base.mark_bar(opacity=0.85).encode(color=alt.Color("quantity:N", legend=None, sort=list(chain.quantity)))
    labels = base.mark_text(dy=-8, fontSize=14).encode(text="value:Q")
    ch_l, ch_r = st.columns([2, 3])
    with ch_l:
        ui.chart((bars + labels).properties(height=230, title="VC ≤ M_tr ≤ LD ≤ ⌊log₂|H|⌋"), "transductive_chain",
                 data=chain, alt_text="Bars: VC dimension, M_tr, LD and the Halving bound of the chosen class")
    with ch_r:
        if not summary["chain_holds"]:
            st.error("The chain VC ≤ M_tr ≤ LD ≤ ⌊log₂|H|⌋ is violated: this is a bug, please report it.")
        st.markdown(prose.chain_text(summary))

    # ----------------------------------------------------------------------- the game
    st.container(key="tr-game").subheader("3 · Play the game")
    g1, g2, g3 = st.columns([2, 2, 3])
    mode, game = ui.knob(M.KNOBS, "mode", where=g1), ui.knob(M.KNOBS, "game", where=g2)
    learners = (f"The learners: {T['SOA']} (optimal in the standard game), {T['Halving']} (majority vote), the "
                f"{T['rank rule']} (optimal for an announced order). ")
    with g3:
        if mode == "adversary":
            opponent = ui.knob(M.KNOBS, "opp", default="Rank rule" if game == "transductive" else "SOA")
            st.caption(learners)
        elif mode == "compare":
            pair_a, pair_b = ui.knob(M.KNOBS, "la"), ui.knob(M.KNOBS, "lb")
            st.caption(learners)
        else:
            st.caption("The adversary plays the minimax-optimal strategy: it can always force "
                       + ("M_tr" if game == "transductive" else "LD") + " mistakes, and never more against "
                       f"optimal play. The {T['version space']}: the hypotheses left after the labels so far.")
    order = summary["order"] if game == "transductive" else None

    def version_space_chart(alive: list, asked: list, current=None):
        """The class as a heat map: live hypotheses in colour, eliminated ones grey; the current point outlined."""
        live = set(alive)
        show = (list(alive) + [i for i in range(len(H)) if i not in live])[:48]
        rows = [{"hypothesis": f"h{r}", "point": f"x{x}", "label": int(H[r, x]),
                 "status": "consistent" if r in live else "eliminated", "asked": x in asked, "now": x == current}
                for r in show for x in range(H.shape[1])]
        colour = alt.condition(alt.datum.status == "consistent",
                               alt.Color("label:N", legend=alt.Legend(title="h(x)"),
                                         scale=alt.Scale(domain=[0, 1], range=[ui.PALETTE[4], ui.PALETTE[1]])),
                               alt.value(ui.NEUTRAL))
        base = alt.Chart(pd.DataFrame(rows)).encode(
            x=alt.X("point:N", sort=[f"x{x}" for x in range(H.shape[1])], title=None,
                    axis=alt.Axis(orient="top", labelAngle=0)),
            y=alt.Y("hypothesis:N", sort=[f"h{r}" for r in show], title=None, axis=alt.Axis(labelOverlap=False)))
        cells = base.mark_rect(stroke="white").encode(
            color=colour, tooltip=["hypothesis", "point", "label", "status", "asked"])
        text_ = base.mark_text(fontSize=11).encode(
            text="label:N",
            color=alt.condition(alt.datum.status == "consistent", alt.value("#1f3b57"), alt.value("#d9d9d9")))
        marks = base.mark_rect(fill=None, strokeWidth=2.5).encode(
            stroke=alt.condition(alt.datum.now, alt.value(ui.PALETTE[3]), alt.value("transparent")))
        return (cells + text_ + marks).properties(
            height=alt.Step(18), title=f"Version space: {len(alive)}/{len(H)} consistent"
            + ("" if len(H) <= 48 else " (first 48 rows shown)"))

    if mode in ("learner", "adversary"):
        # The visitor's moves are the only game state; every rerun replays them through M.play.
        sig = f"{H.shape}:{hash(H.tobytes())}:{mode}:{game}:{mode == 'adversary' and opponent}"
        if st.session_state.get("tr_game", {}).get("sig") != sig:
            st.session_state["tr_game"] = {"sig": sig, "moves": []}
        if st.button("New game", key="tr_new", icon=":material/restart_alt:"):
            st.session_state["tr_game"] = {"sig": sig, "moves": []}
        moves = list(st.session_state["tr_game"]["moves"])
        try:
            if mode == "learner":
                transcript, state = M.play(H, M.HumanLearner(H, moves), M.make_adversary(game, H, order),
                                           with_state=True)
            else:
                transcript, state = M.play(H, M.make_learner(opponent, H, order),
                                           M.HumanAdversary(H, game, moves, order), with_state=True)
        except M.InputError as exc:  # a stale move (cannot happen through the buttons): start over
            ui.report_error(exc, "The game was reset")
            st.session_state["tr_game"] = {"sig": sig, "moves": []}
            st.rerun()

        def move(value: int) -> None:
            st.session_state["tr_game"]["moves"].append(int(value))
            st.rerun()

        if game == "transductive":
            st.markdown(f"**The sequence, announced up front:** {' → '.join(f'x{x}' for x in summary['order'])}  "
                        + ("(chosen by the optimal adversary)" if mode == "learner" else
                           "(the optimal order; as the adversary you choose the labels)"))
        info, board = st.columns([2, 3])
        x = state["point"]
        with info:
            st.metric("Mistakes so far", state["mistakes"])
            if state["over"]:
                target = summary["m_tr"] if game == "transductive" else summary["ld"]
                st.success(f"Game over after {state['rounds']} rounds (one hypothesis left, so every further "
                           f"label is known): **{state['mistakes']} mistake{'s' if state['mistakes'] != 1 else ''}**. "
                           f"The optimal value of this game is {target} "
                           f"({'M_tr' if game == 'transductive' else 'LD'}).", icon=":material/flag:")
            elif state["waiting"] == "prediction":
                st.markdown(f"Round {state['rounds'] + 1}: the adversary asks **x{x}**. Your prediction?")
                b0, b1 = st.columns(2)
                if b0.button("Predict 0", key="tr_p0", width="stretch"):
                    move(0)
                if b1.button("Predict 1", key="tr_p1", width="stretch"):
                    move(1)
                st.caption(f"Value of the rest of the game: {state['value']} more mistakes can be forced.")
            elif state["waiting"] == "point":
                st.markdown(f"Round {state['rounds'] + 1}: pick the next point to ask (only points that still split "
                            "the version space are useful).")
                cols = st.columns(min(len(state["choices"]), 8) or 1)
                for i, xx in enumerate(state["choices"]):
                    if cols[i % len(cols)].button(f"x{xx}", key=f"tr_ask{xx}"):
                        move(xx)
            else:  # waiting for the visitor's label
                st.markdown(f"Round {state['rounds'] + 1}: point **x{x}**. {opponent} predicts "
                            f"**{state['prediction']}**. Your label?")
                b0, b1 = st.columns(2)
                if b0.button("Label 0", key="tr_l0", disabled=0 not in state["choices"], width="stretch"):
                    move(0)
                if b1.button("Label 1", key="tr_l1", disabled=1 not in state["choices"], width="stretch"):
                    move(1)
                if len(state["choices"]) < 2:
                    st.caption("Only one label is consistent with a hypothesis still in the class.")
            if len(transcript):  # the rounds so far (none before the first move)
                show = transcript.assign(point=transcript.point.map(lambda v: f"x{v}"))
                st.dataframe(show[["round", "point", "prediction", "label", "mistake", "size_after"]],
                             hide_index=True, width="stretch", height=min(220, 38 + 35 * len(show)))
        with board:
            ui.chart(version_space_chart(state["alive"], transcript.point.tolist(), None if state["over"] else x),
                     "transductive_version_space", alt_text="The class as a heat map: live hypotheses in colour, "
                                                            "eliminated ones grey, the current point outlined")
    else:
        runs = {name: M.play(H, M.make_learner(name, H, order), M.make_adversary(game, H, order))
                for name in dict.fromkeys([pair_a, pair_b])}
        cols = st.columns(2)
        for col, name in zip(cols, [pair_a, pair_b]):
            df = runs[name]
            col.metric(f"{name}: mistakes", int(df.mistake.sum()))
            col.dataframe(df[["round", "point", "prediction", "label", "mistake", "size_after", "value_before"]],
                          hide_index=True, width="stretch", height=240)
        long = pd.concat([df.assign(learner=name) for name, df in runs.items()])
        if len(long):
            chart = alt.Chart(long).mark_line(point=True).encode(
                x=alt.X("round:O", title="round"),
                y=alt.Y("size_after:Q", title="|version space| after the round", scale=alt.Scale(type="log", base=2)),
                color=alt.Color("learner:N", title="learner"),
                tooltip=["learner", "round", "point", "prediction", "label", "mistake", "size_after"])
            ui.chart(chart.properties(height=260, title="The version space shrinking round by round"),
                     "transductive_compare", data=long, alt_text="Size of the version space after each round, "
                                                                 "one line per learner")
        st.caption(prose.COMPARE_CAPTION.format(value="M_tr" if game == "transductive" else "LD"))

# --------------------------------------------------------------------------- share, reproduce, lab notebook


def _class_code() -> str:
    """The Python expression of the class on screen."""
    if preset == "custom":
        return "M.parse_class(" + repr(text[:2000]) + ")[0]"
    return f"M.preset_class({preset!r}, n={int(n_pts)}, depth={int(depth)}, p={float(p_off)}, seed={int(seed)})"


ui.page_end(verdict, paper, ui.call_snippet("transductive", "class_summary", ui.Code(_class_code())),
            cli="python -m toymodels reproduce transductive --quick --out out/", device=False,
            shown={} if summary is None else {"M_tr": ("result['m_tr']", summary["m_tr"]),
                                              "LD": ("result['ld']", summary["ld"])})
t_repro, t_lab = st.columns(2)
with t_repro.expander("Our exact values beside the project's notes", icon=":material/fact_check:"):
    hl = ui.view(M, "headline")
    st.markdown("The notes' values are exact CPU brute force written before this code; not numbers from the paper, "
                "which gives none for small classes.")
    st.dataframe(pd.DataFrame(prose.notes_rows(hl, M.NOTES)), hide_index=True, width="stretch")
with t_lab.expander("Lab notebook: every configuration tried", icon=":material/science:"):
    st.markdown("**Every configuration tried**, failures included (`toymodels.transductive.NOTEBOOK`).")
    st.dataframe(pd.DataFrame(M.NOTEBOOK), hide_index=True, width="stretch",
                 column_config={"outcome": st.column_config.TextColumn(width="large")})
    st.markdown(f"**Caveats.** {prose.CAVEATS}")
ui.device_caption()
