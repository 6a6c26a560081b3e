"""1000-layer RL (Wang et al., NeurIPS 2025): contrastive RL in 2-D mazes, and what depth does to it. The page opens
on the registered online test (60 seeds per depth, shipped); nothing on it trains unless you press Train."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import toymodels.deep_crl as M
import ui
from toymodels.deep_crl import prose

A = M.analysis
TOPIC = M.TOPIC
paper = ui.paper_header(TOPIC)
verdict, fresh = ui.shipped_verdict(TOPIC)

# --------------------------------------------------------------------------- the shipped runs (never recomputed here)
runs = {d: r for d in M.ONLINE60_DEPTHS if (r := M.stored(f"online60_d{d}")) is not None}   # registered, issue 41
critic = M.stored("critic_fresh")        # the registered offline run (issue 41, seeds 108-115): the ledger's
if critic is None:
    critic = M.stored("critic")          # the first offline seeds (100-107)
table = A.online_table(runs) if runs else None
shallow, deep = A.PRIMARY
test = A.online_rule_test(table) if runs and {shallow, deep} <= set(runs) else None
deepest = max(runs) if runs else None
seed_labels = sorted(int(s) for s in table.seed.unique()) if table is not None else [0]
first_solved = int(table[(table.depth == deep) & table.solved].seed.min()) if test and test["solved_deep"] else None
T = {w: ui.term(w, TOPIC) for w in ("contrastive RL", "far goal", "solved seed", "residual block", "critic",
                                     "value map", "Spearman ρ", "time at goal")}
T["solves"] = ui.term("solved seed", TOPIC, shown="solves")
T["Fisher"] = ui.term("Fisher's exact test", TOPIC, shown="Fisher's exact test")
T["Newcombe"] = ui.term("Newcombe", TOPIC, shown="Newcombe interval")

TOUR = [
    ui.Step("The headline test", f"Each dot is one agent (one seed) trained online on the U-maze, {M.ONLINE60.seeds} "
            f"fresh seeds per depth. A seed *solves* the task when it reaches the far goal in more than "
            f"{A.SOLVED_AT:.0%} of its final evaluation episodes: success is nearly all-or-nothing per seed.",
            look_at=f"the seeds solved at depth {shallow} and at depth {deep} (the counts above the dots), and "
            "Fisher's p beside the chart", target="headline-figure",
            predict=f"The paper's depth {shallow} → {deep} step multiplies time at goal 5-9× on its Ant mazes. "
                    f"On our 2-D maze, with {M.ONLINE60.seeds} seeds per depth, what does it do?",
            choices=("solves many more seeds", "a few more seeds", "no change")),
    ui.Step("One seed that solves, one that does not", "The rollouts show two evaluation episodes of a shallow "
            "and a deep agent from the start (grey ring) to the far goal (red ring), 2 cells away in a straight "
            "line and about 6 along the corridor.",
            settings={"crl_view_depth": str(deep), **({"crl_view_seed": str(first_solved)} if first_solved else {})},
            look_at="whether each path goes around the wall", target="crl-agents"),
    ui.Step("The value map (Fig. 9)", "The critic's value f(s, π(s, g), g) for the far goal over the maze. The "
            "paper's depth-64 critic follows the corridor, its depth-4 critic the straight line through the wall.",
            settings={"crl_view_depth": str(deepest or deep)}, look_at="ρ with the straight line and with the "
            "corridor under each map, and the sentence under the maps", target="crl-agents",
            predict="Does our deeper critic's value follow the corridor (around the wall) or the straight line "
                    "(through it)?", choices=("the corridor", "the straight line")),
    ui.Step("Offline: the paper expects no depth gain (§4.6)", "Without exploration (a random walk collects the "
            "data), the paper found little evidence that depth helps. " + (
                "Our registered test of it, an offline critic at depths 4 to 64 against a wide depth-4 critic with "
                "the same parameters, has not run in this build." if critic is None else
                "Our offline critics test it: depth 64 against depth 4, and against a wide depth-4 critic with "
                "the same parameters."),
            look_at="the offline claim in the ledger" if critic is None else
            "the diamond (wide, depth 4) beside the depth-64 seeds", target="crl-offline"),
    ui.Step("Train your own", "More seeds are the experiment that decides a depth effect here: a run costs about "
            "a minute per 5 seeds at depth 4 (the estimate is shown before you press Train).",
            settings={"crl_depth": 8, "crl_seeds": 4, "crl_seed": 200, "crl_iters": 20, "crl_tabs": "Train your own"},
            look_at="the estimated CPU time, then the success of your seeds", target="crl-train"),
]
active = ui.tour(TOUR)


#: an ablation's label on a narrow axis: the words before its parenthesis ("full", not "full (residual + ...)")
SHORT_AB = "split(datum.label, ' (')[0]"


def depth_axis(values):
    return alt.X("depth:O", title="depth (Dense layers in residual blocks)", sort=[str(v) for v in values],
                 axis=alt.Axis(labelAngle=0))


# --------------------------------------------------------------------------- the headline figure, and our number
fig_col, side_col = st.columns([3, 2], gap="medium")
with fig_col.container(key="headline-figure"):
    if not runs:
        st.info("The powered online test is not shipped in this build: its claim in the ledger says why and how "
                "to ship it.", icon=":material/hourglass_top:")
    else:
        dots = table.assign(depth=table.depth.astype(str), outcome=np.where(table.solved, "solved", "not solved"))
        summ = A.online_summary(table)
        x = depth_axis(sorted(runs))
        points = alt.Chart(dots).mark_point(filled=True, size=60, opacity=0.85).encode(
            x=x, xOffset=alt.XOffset("jitter:Q", scale=alt.Scale(domain=[-0.5, 0.5])),
            y=alt.Y("success:Q", title="final success rate (far goal)", scale=alt.Scale(domain=[0, 1.12]),
                    axis=alt.Axis(values=[0, 0.2, 0.4, 0.6, 0.8, 1.0])),
            color=alt.Color("outcome:N", title=None, scale=alt.Scale(domain=["solved", "not solved"],
                                                                     range=[ui.PALETTE[2], ui.PALETTE[3]]),
                            legend=alt.Legend(orient="bottom")),
            tooltip=["depth", "seed", alt.Tooltip("success:Q", format=".2f"),
                     alt.Tooltip("time_at_goal:Q", format=".0f", title="time at goal (of 200)")]
        ).transform_calculate(jitter="(datum.seed * 7919 % 97) / 97 * 0.8 - 0.4")
        thr = pd.DataFrame({"y": [A.SOLVED_AT], "t": [f"solved above {A.SOLVED_AT:g}"]})
        rule = alt.Chart(thr).mark_rule(strokeDash=[4, 4], color=ui.NEUTRAL).encode(y="y:Q")
        rule_text = alt.Chart(thr).mark_text(align="left", dx=4, dy=-6, x=0, color=ui.NEUTRAL).encode(
            y="y:Q", text="t:N")
        counts = summ.assign(depth=summ.depth.astype(str),
                             label=[f"{k} of {n} seeds solved" for k, n in zip(summ.solved, summ.n_seeds)])
        rate = alt.Chart(counts).mark_text(fontSize=13, fontWeight="bold", color=ui.NEUTRAL, baseline="middle").encode(
            x=x, y=alt.datum(1.07), text="label:N")
        title = f"Does depth help the agent reach the far goal? Online, {M.ONLINE60.seeds} seeds per depth"
        ui.chart((rule + rule_text + points + rate).properties(height=270, title=title), "deep-crl-online-seeds",
                 data=table,
                 span=0.6, alt_text="Final success rate of every online agent, one dot per seed, at depth "
                 + ", ".join(map(str, sorted(runs))))
        st.caption(f"Each dot: one seed's success rate over its last 5 evaluations (128 episodes each, within 0.5 "
                   f"of the far goal at any of 200 steps); {runs[min(runs)]['sgd_steps']:,} SGD steps and "
                   f"{runs[min(runs)]['env_steps']:,} environment steps per seed. Depth: Dense layers, in "
                   f"{ui.term('residual block', TOPIC, shown='residual blocks')} of 4.")

with side_col:
    notice = prose.headline_notice(test, runs, deep, shallow, T)
    ui.headline_claim(verdict, notice=notice, ours_label=f"Our toy, {M.ONLINE60.seeds} seeds per depth")
    st.caption(f"{T['contrastive RL']}: no reward; a {T['critic']} learns which states lead to which goals. The "
               f"paper's number is {T['time at goal']} on Ant mazes (of 1000 steps), ours seeds solved on a 2-D "
               "point-mass maze: the same question, not the same scale.")

ui.ledger_strip(verdict)

# --------------------------------------------------------------------------- the story
if len(runs) > 1 and ui.shown("agents", active):
    with st.container(key="crl-agents"):
        st.subheader("What a seed does: rollouts and the critic's value map")
        maze = ui.view(M, "maze_u")
        cell, res = maze["cell"], maze["res"]
        free = np.asarray(maze["free"])
        H, W = free.shape
        walls = pd.DataFrame([{"x": (c - 0.5) * cell, "x2": (c + 0.5) * cell, "y": (r - 0.5) * cell,
                               "y2": (r + 0.5) * cell} for r, c in zip(*np.nonzero(free == 0))])
        xs = alt.Scale(domain=[-0.5 * cell, (W - 0.5) * cell], nice=False)
        ys = alt.Scale(domain=[(H - 0.5) * cell, -0.5 * cell], nice=False)

        def wall_layer():
            return alt.Chart(walls).mark_rect(color="#9D755D").encode(
                x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2")

        v1, v2 = st.columns(2)
        deep_options = [d for d in runs if d != min(runs)]
        with v1:
            view_depth = int(ui.choice(st.selectbox, "Deep agent shown", {str(d): str(d) for d in deep_options},
                                       key="crl_view_depth", default=str(deep_options[-1])))
        with v2:
            view_seed = int(ui.choice(st.selectbox, "Seed", {str(s): str(s) for s in seed_labels}, key="crl_view_seed"))
        pair = [min(runs), view_depth]

        def seed_row(d: int) -> int:
            ps = pd.DataFrame(runs[d]["per_seed"])
            return int(np.flatnonzero(ps.seed.to_numpy() == view_seed)[0])

        traj_rows, marks = [], None
        for d in pair:
            tr = np.asarray(runs[d]["trajectories"])[seed_row(d)]
            for j in range(tr.shape[0]):
                traj_rows += [{"depth": f"depth {d}", "episode": j, "step": k, "row": float(px), "col": float(py)}
                              for k, (px, py) in enumerate(tr[j])]
            if marks is None:
                goal_xy = np.asarray(runs[d]["traj_goals"])[seed_row(d), 0]
                marks = pd.DataFrame([{"what": "start", "row": float(tr[0, 0, 0]), "col": float(tr[0, 0, 1])},
                                      {"what": "goal", "row": float(goal_xy[0]), "col": float(goal_xy[1])}])
        traj = pd.DataFrame(traj_rows)
        ring = alt.Chart(marks).mark_point(filled=False, size=500, strokeWidth=2).encode(
            x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
            color=alt.Color("what:N", scale=alt.Scale(domain=["start", "goal"], range=[ui.NEUTRAL, ui.PALETTE[3]]),
                            legend=None))
        paths = alt.Chart(traj).mark_line(opacity=0.9, strokeWidth=2.4).encode(
            x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
            color=alt.Color("depth:N", scale=alt.Scale(domain=[f"depth {d}" for d in pair],
                                                       range=[ui.PALETTE[0], ui.PALETTE[1]]), title=None),
            detail="episode:N", order="step:Q", tooltip=["depth", "episode", "step"])

        def qmap_chart(d: int) -> alt.Chart:
            q = np.asarray(runs[d]["qmap"])[seed_row(d)]
            pos = np.asarray(maze["grid_pos"])
            ok = np.isfinite(q)
            h = cell / res / 2
            df = pd.DataFrame({"row": pos[..., 0][ok], "col": pos[..., 1][ok], "f": q[ok]})
            df = df.assign(x=df.col - h, x2=df.col + h, y=df.row - h, y2=df.row + h)
            heat = alt.Chart(df).mark_rect().encode(
                x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2",
                color=alt.Color("f:Q", scale=alt.Scale(scheme="viridis"), legend=None),
                tooltip=[alt.Tooltip("f:Q", format=".2f")])
            return (wall_layer() + heat + ring).resolve_scale(color="independent").properties(height=230)

        m1, m2, m3 = st.columns(3)
        with m1:
            st.markdown(f"**Rollouts, seed {view_seed}**")
            ui.chart((wall_layer() + paths + ring).resolve_scale(color="independent").properties(height=230),
                     "deep-crl-rollouts", data=traj, alt_text="Two evaluation episodes of a shallow and a deep agent")
        for col, d in ((m2, pair[0]), (m3, pair[1])):
            fin = pd.DataFrame(runs[d]["per_seed"]).iloc[seed_row(d)]
            with col:
                st.markdown(f"**f(s, π(s,g), g), depth {d}** (success {fin.success:.2f})")
                ui.chart(qmap_chart(d), f"deep-crl-qmap-d{d}",
                         alt_text=f"The depth-{d} critic's value for the far goal")
                st.caption(f"ρ with the straight line {fin.spearman_euclid:.2f}, with the corridor "
                           f"{fin.spearman_corridor:.2f}")
        cor = A.corridor_test(table, min(runs), max(runs)) if len(runs) > 1 else None
        if cor:
            st.markdown(prose.corridor_text(cor))

        curves = A.online_curve_means(runs)
        st.markdown("**Training curves** (mean over seeds): the critic learns at every depth (its accuracy picks the "
                    f"right goal among {M.DEFAULT.batch_size}, chance {1 / M.DEFAULT.batch_size:.4f}); success comes "
                    "late, and for some seeds never.")
        cc = st.columns(3)
        for col, metric, title in zip(cc, ("success", "critic_accuracy", "alpha"),
                                      ("success rate", "critic accuracy", "entropy coefficient α")):
            with col:
                ui.chart(alt.Chart(curves).mark_line(point=True).encode(
                    x=alt.X("env_steps:Q", title="environment steps", axis=alt.Axis(format="~s")),
                    y=alt.Y(f"{metric}:Q", title=title, scale=alt.Scale(zero=True)),
                    color=alt.Color("depth:O", title="depth", legend=alt.Legend(orient="top")),
                    tooltip=["depth", "env_steps", alt.Tooltip(f"{metric}:Q", format=".3f")]).properties(height=240),
                    f"deep-crl-curve-{metric}", alt_text=f"{title} against environment steps, per depth")

if ui.shown("offline", active):
    with st.container(key="crl-offline"):
        st.subheader("Offline, the paper expects no depth gain (§4.6)")
        if critic is None:
            st.markdown(prose.offline_pending(M.PAPER['offline']))
            st.info("The offline critic on its registered seeds is not shipped in this build: the offline claim in the "
                    "ledger below says why and how to ship it.", icon=":material/hourglass_top:")
        else:
            pc, ct, ccfg = A.critic_paired(critic), A.critic_table(critic), critic["config"]
            ps = pd.DataFrame(critic["per_seed"])
            base = ps[ps.width == ccfg["width"]].assign(depth=lambda d: d.depth.astype(str))
            wide = ps[ps.width != ccfg["width"]].assign(depth="4 (wide)")
            both = pd.concat([base, wide], ignore_index=True)
            order = [str(d) for d in critic["depths"]] + ["4 (wide)"]
            ui.chart(alt.Chart(both).mark_point(filled=True, size=70).encode(
                x=alt.X("depth:N", sort=order, title="critic depth", axis=alt.Axis(labelAngle=0)),
                y=alt.Y("spearman_geodesic:Q", title="ρ(−Q, corridor distance), unseen far pairs",
                        scale=alt.Scale(zero=False)),
                color=alt.Color("depth:N", sort=order, legend=None,
                                scale=alt.Scale(domain=order, range=ui.PALETTE[:len(order) - 1] + [ui.NEUTRAL])),
                shape=alt.Shape("depth:N", sort=order, legend=None,
                                scale=alt.Scale(domain=order, range=["circle"] * (len(order) - 1) + ["diamond"])),
                tooltip=["depth", "width", "seed", "params", alt.Tooltip("spearman_geodesic:Q", format=".3f")])
                     .properties(height=300), "deep-crl-offline", data=both,
                     alt_text="Spearman rho of each offline critic with corridor distance, per seed and depth")
            st.markdown(prose.offline_text(pc, M.PAPER['offline']))
            st.caption(prose.offline_caption(critic, pc, M.GRID_LABELS[ccfg["maze"]]))

# --------------------------------------------------------------------------- knobs


@ui.fragment
def train_your_own() -> None:
    """Train your own agents: a knob here reruns this section alone."""
    st.markdown("Settings take effect when you press **Train**; runs are cached for every visitor. Seeds are the "
                "experiment that decides a depth effect here (success is nearly all-or-nothing per seed).")
    cfg = ui.form(M.KNOBS, M.DEFAULT, ["crl_maze", "crl_depth", "crl_width", "crl_batch", "crl_iters", "crl_seeds",
                                       "crl_seed", "crl_ablation"])
    k = st.columns(4)
    cfg = ui.form(M.KNOBS, cfg, ["crl_lift"], columns=1, where=k[0])
    cfg = M.paper_exact(cfg) if ui.knob(M.KNOBS, "crl_exact", where=k[1]) else cfg
    cost = M.expected_seconds(cfg)
    k[2].metric("Estimated CPU time", f"~{cost:.0f} s", help=f"on an idle core; a shared server is slower; limit "
                f"{M.BUDGET:.0f} s")
    if k[3].button("Train", key="crl_train", type="primary", icon=":material/play_arrow:"):
        if not ui.refused(M.train, cfg):
            st.session_state["crl_last"] = cfg
    last = st.session_state.get("crl_last")
    if last is not None:
        with ui.guard():
            mine = ui.compute(M.train, last, label="Training…", run=True, seconds=M.expected_seconds(last))
        f = mine["final"]
        st.markdown(f"**Your run** ({last.maze}, depth {last.depth}, width {last.width}, batch {last.batch_size}, "
                    f"{last.iterations * last.sgd_steps:,} SGD steps, {last.seeds} seed(s)): success "
                    + ", ".join(f"{s:.2f}" for s in f.success) + f"; seeds solved {A.solved(f)} of {len(f)}; "
                    f"critic accuracy {f.critic_accuracy.mean():.3f} (chance "
                    f"{mine['chance_accuracy']:.4f}).")
        cur = mine["curves"].assign(seed=mine["curves"].seed.astype(str))
        r1, r2 = st.columns(2)
        for col, metric in ((r1, "success"), (r2, "critic_accuracy")):
            with col:
                ui.chart(alt.Chart(cur).mark_line(point=True).encode(
                    x="iteration:Q", y=alt.Y(f"{metric}:Q"), color="seed:N",
                    tooltip=["iteration", "seed", metric]).properties(height=200), f"deep-crl-mine-{metric}",
                    data=mine["curves"], alt_text=f"{metric} of your run per seed")
    st.session_state["_crl_cfg_shown"] = cfg  # "Code for this view" (at the bottom) names these settings


@ui.fragment
def sweep() -> None:
    """A one-knob sweep on the settings above."""
    s1, s2, s3 = st.columns([1, 2, 1])
    param = ui.knob(M.KNOBS, "crl_sweep_param", where=s1)
    values = ui.knob(M.KNOBS, f"crl_sweep_values_{param}", where=s2)
    if s3.button("Run sweep", key="crl_sweep", icon=":material/play_arrow:"):
        if not ui.refused(M.sweep, M.DEFAULT, param, list(values)):
            st.session_state["crl_sweep_last"] = (param, list(values))
    if st.session_state.get("crl_sweep_last"):
        p, vals = st.session_state["crl_sweep_last"]
        with ui.guard():
            sw = ui.compute(M.sweep, M.DEFAULT, p, vals, label="Sweeping…", run=True)
        tab = sw["summary"].assign(**{p: sw["summary"][p].astype(str)})
        ui.chart(alt.Chart(tab).mark_point(size=80, filled=True).encode(
            x=alt.X(f"{p}:N", sort=[str(v) for v in vals]), y=alt.Y("success:Q", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("critic_accuracy:Q", title="critic acc."),
            tooltip=[p, "seed", "success", "time_at_goal", "critic_accuracy"]).properties(height=260),
            "deep-crl-sweep", data=tab, alt_text=f"Success per seed against {p}")


# --------------------------------------------------------------------------- train your own, details, the lab notebook
TABS = ["Train your own", "Offline critic in detail", "Ablations", "Paper's numbers", "Lab notebook"]
tab_train, tab_critic, tab_ablations, tab_paper, tab_lab = st.tabs(TABS, key="crl_tabs", bind="query-params")
# Only the open tab is drawn (a tab click reruns the page); each tab's body is a function called when it is open.


def train_tab() -> None:
    if ui.shown("train", active):
        with st.container(key="crl-train"):
            st.subheader("Train your own")
            train_your_own()
    if ui.shown("sweep", active):
        st.subheader("Sweep one knob")
        sweep()


if tab_train.open:
    with tab_train:
        train_tab()


def critic_tab() -> None:
    if critic is None:
        st.info("The offline critic is not shipped in this build.", icon=":material/hourglass_top:")
    else:
        ccfg = critic["config"]
        st.markdown(
            "The critic alone, without exploration: a uniform random walk on the grid collects the data; the "
            "paper's critic (residual encoders, $f(s,a,g)=-\\lVert\\phi(s,a)-\\psi(g)\\rVert_2$, forward InfoNCE + "
            f"0.1·logsumexp², goals relabeled with γ = {ccfg['gamma']}) trains on it. Ground truth comes without "
            "the network: corridor distance by breadth-first search, and the exact occupancy of the walk, "
            r"$p(g\mid s,a)=\sum_d c_d\,[P_aP^{d-1}]_{sg}$. Scored pairs are held out of training and farther apart "
            f"than 2/(1 − γ) = {2 / (1 - ccfg['gamma']):.0f} moves ({critic['n_scored_pairs']:,} pairs): a "
            f"{ccfg['episode_len']}-step walk practically never holds both ends, so the critic must stitch "
            "(the analogue of the paper's Fig. 11).")
        st.dataframe(A.critic_table(critic), hide_index=True, width="stretch", column_config={
            "rho_corridor": st.column_config.NumberColumn("ρ corridor", format="%.3f"),
            "rho_corridor_sem": st.column_config.NumberColumn("± s.e.m.", format="%.3f"),
            "rho_occupancy": st.column_config.NumberColumn("ρ occupancy", format="%.3f"),
            "retrieval": st.column_config.NumberColumn("top-1 retrieval", format="%.3f"),
            "retrieval_sem": st.column_config.NumberColumn("±", format="%.3f")})
        st.caption(f"Top-1 retrieval: of 16 random candidate goals, does the highest Q pick the one nearest along the "
                   f"corridors? Random picks score {critic['random_retrieval']:.3f}, straight-line distance "
                   f"{critic['euclid_retrieval']:.3f}. ρ occupancy: Spearman of f(s, a, g) with the exact p(g | s, a) "
                   "(on far pairs most of it is exactly 0, so this column says little).")
        band = A.critic_curve_bands(critic)
        order = list(dict.fromkeys(band.sort_values(["width", "depth"]).net))
        colour = alt.Color("net:N", title=None, sort=order, legend=alt.Legend(orient="bottom", columns=2),
                           scale=alt.Scale(domain=order, range=ui.PALETTE[:len(order)]))
        basec = alt.Chart(band).encode(x=alt.X("step:Q", title="SGD step"), color=colour)
        ui.chart((basec.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", title="ρ(−Q, corridor)",
                                                               scale=alt.Scale(zero=False)), y2="hi:Q")
                  + basec.mark_line().encode(y="mean:Q", tooltip=["net", "step", alt.Tooltip("mean:Q", format=".3f"),
                                                                 alt.Tooltip("sem:Q", format=".3f")]))
                 .properties(height=280), "deep-crl-offline-curves", data=band,
                 alt_text="Offline critics' rho against SGD steps, mean and s.e.m. over seeds")
        lead = A.critic_lead(critic)
        st.markdown(f"Learning speed: the deepest critic's largest lead over depth 4 is {lead['lead']:+.3f} at step "
                    f"{lead['step']:,} (wide critic there: {lead['wide']:.3f} against {lead['deep']:.3f}); at the "
                    f"end it is {lead['final_lead']:+.3f}.")
        grid = critic["free"]
        free_c = np.asarray(grid).astype(bool)
        goal = critic["goal_cell"]
        rr, cc_ = np.nonzero(free_c)
        seed_q = int(ui.choice(st.selectbox, "Seed", {str(k): f"seed {int(ccfg['seed']) + k}"
                                                      for k in range(int(ccfg["seeds"]))}, key="crl_critic_seed"))

        def maze_chart(values: np.ndarray, title: str) -> alt.Chart:
            df = pd.DataFrame({"r": rr, "c": cc_, "v": values})
            wl = pd.DataFrame(np.argwhere(~free_c), columns=["r", "c"])
            sx = alt.Scale(domain=[-0.5, free_c.shape[1] - 0.5], nice=False)
            sy = alt.Scale(domain=[free_c.shape[0] - 0.5, -0.5], nice=False)
            enc = dict(x=alt.X("x:Q", scale=sx, axis=None), x2="x2", y=alt.Y("y:Q", scale=sy, axis=None), y2="y2")
            box = dict(x="datum.c - 0.5", x2="datum.c + 0.5", y="datum.r - 0.5", y2="datum.r + 0.5")
            heat = alt.Chart(df).transform_calculate(**box).mark_rect().encode(
                **enc, color=alt.Color("v:Q", scale=alt.Scale(scheme="viridis"), legend=None),
                tooltip=["r", "c", alt.Tooltip("v:Q", format=".2f")])
            wall = alt.Chart(wl).transform_calculate(**box).mark_rect(color="#9D755D").encode(**enc)
            mark = alt.Chart(pd.DataFrame([{"r": goal[0], "c": goal[1]}])).mark_point(
                shape="cross", size=120, color=ui.PALETTE[3], filled=True).encode(
                x=alt.X("c:Q", scale=sx, axis=None), y=alt.Y("r:Q", scale=sy, axis=None))
            return (wall + heat + mark).properties(height=240, title=title)

        names = [str(d) for d in critic["depths"]]
        wide_name = next(n for n in critic["runs"] if "x" in n)
        qcols = st.columns(len(names) + 1)
        for col, name in zip(qcols, names + [wide_name]):
            q = np.asarray(critic["runs"][name]["qmap"])[int(seed_q)]
            d, _, w = name.partition("x")
            with col:
                ui.chart(maze_chart(q[rr, cc_], f"Q, depth {d}" + (f" × width {w}" if w else "")),
                         f"deep-crl-critic-q-{name}", alt_text=f"Q over the maze for the centre goal, critic {name}")
        st.caption("Yellow = high (near the goal, red cross). A critic that learned the walls is bright along the "
                   "corridor leading in through the gaps, not in a disc around the goal.")


if tab_critic.open:
    with tab_critic:
        critic_tab()


def ablations_tab() -> None:
    ab_runs = {ab: M.stored(f"ablation20_{ab}") for ab in M.ABLATIONS}
    if any(r is None for r in ab_runs.values()):
        st.info("The ablation runs are not shipped in this build: the ablations claim in the ledger says why "
                "and how to ship them.", icon=":material/hourglass_top:")
    else:
        ab = A.ablation_test(ab_runs["none"]["per_seed"], {k: r["per_seed"] for k, r in ab_runs.items()
                                                           if k != "none"})
        ab = ab.assign(label=[M.ABLATION_LABELS[a] for a in ab.ablation])
        per = pd.concat([r["per_seed"].assign(label=M.ABLATION_LABELS[k]) for k, r in ab_runs.items()],
                        ignore_index=True)
        ui.chart(alt.Chart(per).mark_point(filled=True, size=80).encode(
            y=alt.Y("label:N", title=None, sort=list(ab.label), axis=alt.Axis(labelLimit=0, labelExpr=SHORT_AB)),
            x=alt.X("success:Q", title="final success rate", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("label:N", legend=None), tooltip=["label", "seed", alt.Tooltip("success:Q", format=".2f")])
                 .properties(height=180), "deep-crl-ablations", data=per,
                 alt_text="Final success per seed of the full network and each ablation at depth 8")
        st.dataframe(ab[["label", "n_seeds", "solved", "success_mean", "critic_accuracy_mean", "p_hurts"]],
                     hide_index=True, width="stretch", column_config={
                         "label": "network", "success_mean": st.column_config.NumberColumn("mean success",
                                                                                           format="%.2f"),
                         "critic_accuracy_mean": st.column_config.NumberColumn("critic accuracy", format="%.3f"),
                         "p_hurts": st.column_config.NumberColumn("Fisher p (ablation hurts)", format="%.2f")})
        st.caption(f"Depth {M.ABLATION_DEPTH}, {M.ABLATION20.seeds} fresh seeds each (400-419, registered in issue "
                   "41). The paper finds that dropping the skips or LayerNorm, or ReLU instead of Swish, hurts at "
                   "large depth.")


if tab_ablations.open:
    with tab_ablations:
        ablations_tab()


def paper_tab() -> None:
    p1, p2 = st.columns(2)
    t1 = pd.DataFrame(M.PAPER["table1"].value)
    p1.dataframe(t1.rename(columns={"depth_4": "depth 4", "depth_64": "depth 64"}), hide_index=True, width="stretch")
    curves_p = pd.DataFrame(M.PAPER["curves"].value)
    with p2:
        ui.chart(alt.Chart(curves_p).mark_line(point=True).encode(
            x=alt.X("depth:Q", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=[4, 8, 16, 32, 64])),
            y=alt.Y("time_at_goal:Q", title="time at goal (paper, of 1000)"),
            color=alt.Color("task:N", title=None, legend=alt.Legend(orient="bottom", columns=2, labelLimit=0)),
            tooltip=["task", "depth", "time_at_goal"]).properties(height=300),
            "deep-crl-paper-curves", alt_text="The paper's time at goal against depth on four tasks")
    st.caption(f"The paper's numbers ({M.PAPER['table1'].source} and {M.PAPER['curves'].source}), quoted as "
               "references: time at goal out of 1000 steps.")


if tab_paper.open:
    with tab_paper:
        paper_tab()


def lab_tab() -> None:
    st.markdown("Every configuration tried on this topic, failures included, in the order it was tried (the "
                "runs that decide the claims now are the shipped views above).")
    st.table(pd.DataFrame(M.NOTEBOOK).astype(str).set_index("when"))  # mixed columns (3, "3 / 2") as text
    search = M.stored("critic_search")
    if search is not None:
        tab = pd.DataFrame(search["table"])
        d0, d1 = search["depths"][0], search["depths"][-1]
        ss = A.search_summary(search)
        st.markdown(f"**The offline search** (issue 20): every regime at depth {d0} and {d1}, {int(tab.seeds.min())} "
                    f"seeds and {int(tab.steps.min()):,} SGD steps for most rows. *Depth helps*: the gain in ρ exceeds "
                    f"twice its standard error and 0.01; it does in {len(ss['helps'])} of {ss['n']} regimes.")
        st.dataframe(tab[["what", "seeds", "steps", "batch_size", "euclid_scored_spearman", f"spearman_d{d0}",
                          f"spearman_d{d1}", "gain_spearman", "gain_sem", "depth_helps", "cpu_s"]],
                     hide_index=True, width="stretch")
    with st.expander("Equations and where the toy departs from the paper's code", icon=":material/info:"):
        ui.blocks(prose.EQUATIONS)
    with st.expander("What it would take to see the paper's depth gains", icon=":material/lightbulb:"):
        ui.blocks(prose.SCALE)


if tab_lab.open:
    with tab_lab:
        lab_tab()

# --------------------------------------------------------------------------- the ledger, terms, cite/code/present
_yours = st.session_state.get("_crl_cfg_shown", M.DEFAULT)
_snippet = ("from toymodels.threads import set_thread_policy\n\nset_thread_policy(1)  # one thread, as the page\n"
            "import toymodels.deep_crl as M\n\nA = M.analysis\n"
            "# the registered runs as shipped (60 seeds per depth; recomputing one: python -m toymodels precompute "
            "deep-crl --view online60_d8)\n"
            "runs = {d: M.stored(f'online60_d{d}') for d in M.ONLINE60_DEPTHS}\n"
            "result = A.online_rule_test(A.online_table(runs))\n")
_shown = {} if not test else {
    f"seeds solved at depth {deep}": ("result['solved_deep']", test["solved_deep"]),
    f"seeds solved at depth {shallow}": ("result['solved_shallow']", test["solved_shallow"]),
    "Fisher's exact test, one-sided p": ("result['p_value']", f"{test['p_value']:.3g}")}
ui.page_end(verdict, paper, _snippet + "# your own run, with the settings of the 'Train your own' tab (minutes "
            "of CPU):\n# " + ui.call_snippet("deep_crl", "train", _yours).split("\n")[-2] + "\n",
            cli="python -m toymodels reproduce deep-crl --quick", shown=_shown)
