"""1000-layer RL (Wang et al., NeurIPS 2025): contrastive RL in a 2-D maze, and what depth does to it."""
from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import crl as M

BUDGET = 90.0  # cost units (≈ seconds on an idle 2-core CPU) one live run or sweep may take

paper = ui.paper_header(M.TOPIC)
ui.claim_box(paper)

# --------------------------------------------------------------------------- the toy
st.header("The toy: contrastive RL in a point-mass maze")
left, right = st.columns([3, 2])
with left:
    st.markdown(
        "A point mass moves in the U-maze of JaxGCRL, $s' = s + 0.75\\,a$ with $a\\in[-1,1]^2$ (cells are 2.5 units, "
        "so the paper's success radius 0.5 is a fifth of a cell); a move into a wall is rejected. There is **no "
        "reward**: the agent only learns which future states follow which state-action pairs.")
    st.markdown("**Critic**: two encoders and a negative, unsquared $L_2$ energy, trained with forward InfoNCE over "
                "the batch (the other rows' goals are the negatives) plus a logsumexp penalty:")
    st.latex(r"f(s,a,g) = -\lVert \phi(s,a) - \psi(g) \rVert_2,\qquad L_{ij} = f(s_i,a_i,g_j)")
    st.latex(r"\mathcal L_{\text{critic}} = -\frac1B\sum_i\Big[L_{ii} - \log\sum_j e^{L_{ij}}\Big]"
             r" + 0.1\cdot\frac1B\sum_i\Big(\log\sum_j e^{L_{ij}}\Big)^2")
    st.markdown("**Actor**: tanh-Gaussian, $\\log\\sigma = -5 + 3.5(\\tanh(\\cdot)+1)$, automatic entropy tuning "
                "towards $-0.5|A|$:")
    st.latex(r"\begin{aligned}\mathcal L_{\text{actor}} &= \mathbb E\big[\alpha \log\pi(a\mid s,g) - f(s,a,g)\big],\\ "
             r"\log\pi(a) &= \log\mathcal N(u) - \textstyle\sum_k\log(1-\tanh^2 u_k)\end{aligned}")
    st.markdown("**Hindsight relabeling**: the goal of $(s_t,a_t)$ is a strictly future state of the same episode,")
    st.latex(r"g = s_{t+d},\qquad P(d) \propto \gamma^{\,d-1},\ d\in\{1,\dots,T-1-t\},\ \gamma=0.99")
with right:
    st.markdown("**Residual MLP** (actor, φ and ψ, same depth and width):")
    st.latex(r"\begin{aligned}h_0 &= \text{Swish}(\text{LN}(W_0x)),\\ h_{k+1} &= h_k + "
             r"\big[\text{Swish}\circ\text{LN}\circ\text{Dense}\big]^{\times 4}(h_k)\end{aligned}")
    st.markdown("*Depth* counts only the Dense layers inside the blocks: depth 4 is one block (six Dense layers in "
                "all), depth 64 is sixteen blocks. Ablations drop the skip, drop LayerNorm or use ReLU.")
    with st.expander("Where the toy departs from the paper's code", icon=":material/info:"):
        st.markdown(
            "- **Scale:** 256 environments × 200-step episodes, 20 iterations × 200 SGD steps at batch 256 "
            "(~1M environment steps, 4k SGD steps) instead of 100–400M steps and batch 512; width 64 instead of "
            "256; depths 4–16 precomputed instead of 4–1024.\n"
            "- **Three changes the paper notes' CPU runs needed to reach the far goal at all** (each is a switch in "
            "`toymodels.crl.Config`; the *paper-exact* box below turns them off): half of the actor's goals come "
            "from another row (as in the original contrastive-RL code); α starts at 0.1 with log-α learning rate "
            "3e-3 (paper: 1.0 and 3e-4); walls stop each axis of a move separately, so the agent slides along them "
            "(paper's Ant simply collides).\n"
            "- **Metrics:** success = within 0.5 of the far goal at any of 200 steps; time at goal = steps within "
            "0.5, out of 200 (the paper counts out of 1000); both averaged over 128 evaluation episodes and the "
            "last 5 of 20 evaluations, deterministic actions $\\tanh(\\mu)$.")

# --------------------------------------------------------------------------- precomputed comparison
maze = ui.compute(M.maze_view, "u_maze", label="Maze…")
views = M.shipped_views()
runs = {d: ui.compute(M.train, replace(M.DEFAULT, depth=d), label=f"Training depth {d}…")
        for d in M.DEFAULT_DEPTHS if f"train_d{d}" in views}
if len(runs) < 2 or 4 not in runs:
    st.error(f"The precomputed depth comparison is missing from this build: run `python -m toymodels precompute "
             f"{M.TOPIC}`. You can still train your own agents below.")
    runs = {}
if runs:
    per_seed = pd.concat([r["final"] for r in runs.values()], ignore_index=True)
    summary = M.summarise(per_seed)
    chance = 1.0 / M.DEFAULT.batch_size
    st.header("What depth does here")
    st.caption(f"Precomputed with `python -m toymodels precompute {M.TOPIC}`: depths {', '.join(map(str, runs))}, "
               f"{M.DEFAULT.seeds} seeds each (seeds are instances of one batched model), "
               f"{runs[4]['env_steps']:,} environment steps and {runs[4]['sgd_steps']:,} SGD steps per run, "
               f"computed on {runs[4]['device']}.")


    def depth_chart(metric: str, title: str, scale_max: float | None = None) -> alt.Chart:
        pts = per_seed.assign(seed=per_seed.seed.astype(str))
        mean = summary.assign(lo=summary[f"{metric}_mean"] - summary[f"{metric}_sem"],
                              hi=summary[f"{metric}_mean"] + summary[f"{metric}_sem"])
        x = alt.X("depth:Q", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=list(runs)), title="depth")
        y_scale = alt.Scale(domain=[0, scale_max]) if scale_max else alt.Undefined
        dots = alt.Chart(pts).mark_point(opacity=0.45, size=40).encode(
            x=x, y=alt.Y(f"{metric}:Q", title=title, scale=y_scale), color=alt.value("#999"),
            tooltip=["depth", "seed", alt.Tooltip(f"{metric}:Q", format=".3f")])
        line = alt.Chart(mean).mark_line(point=True).encode(
            x=x, y=alt.Y(f"{metric}_mean:Q", title=title), tooltip=["depth", alt.Tooltip(f"{metric}_mean:Q", format=".3f", title="mean"),
                                                alt.Tooltip(f"{metric}_sem:Q", format=".3f", title="s.e.m."),
                                                "n_seeds"])
        bars = alt.Chart(mean).mark_errorbar(ticks=True).encode(x=x, y=alt.Y("lo:Q", title=title), y2="hi:Q")
        return (dots + bars + line).properties(height=260)


    c1, c2, c3 = st.columns(3)
    c1.altair_chart(depth_chart("success", "success rate, far goal", 1.0), width="stretch")
    c2.altair_chart(depth_chart("time_at_goal", "time at goal (steps of 200)", 200.0), width="stretch")
    c3.altair_chart(depth_chart("critic_accuracy", f"critic accuracy (chance 1/{M.DEFAULT.batch_size})", None),
                    width="stretch")
    st.caption("Grey points: individual seeds; line: mean ± standard error over seeds. Critic accuracy is the share of "
               f"the training batch whose own future state gets the highest logit (chance {chance:.4f}).")

    s4, sD = summary.iloc[0], summary.iloc[-1]
    reached = per_seed.assign(ok=per_seed.success >= 0.5).groupby("depth").ok.agg(["sum", "size"])
    seeds_text = ("Seeds whose agent reaches the far goal in at least half of the episodes: " + ", ".join(
        f"depth {d}: {int(r['sum'])} of {int(r['size'])}" for d, r in reached.iterrows()) + ". ")
    gap = sD["success_mean"] - s4["success_mean"]
    noise = 2 * max(s4["success_sem"], sD["success_sem"], 0.05)
    if gap > noise:
        verdict = (f"In this toy, depth {int(sD.depth)} reaches the far goal more often than depth 4 "
                   f"({sD.success_mean:.2f} vs {s4.success_mean:.2f}), a gain larger than twice the seed error.")
    elif gap < -noise:
        verdict = (f"In this toy, depth does **not** help: depth {int(sD.depth)} reaches the far goal less often than "
                   f"depth 4 ({sD.success_mean:.2f} vs {s4.success_mean:.2f}).")
    else:
        verdict = (f"In this toy there is **no depth gain** that stands out from the seed spread: success "
                   f"{s4.success_mean:.2f} ± {s4.success_sem:.2f} at depth 4 vs {sD.success_mean:.2f} ± "
                   f"{sD.success_sem:.2f} at depth {int(sD.depth)}.")
    best = summary.loc[summary.success_mean.idxmax()]
    if int(best.depth) not in (4, int(sD.depth)):
        verdict += (f" The mean is not monotone in depth: it peaks at depth {int(best.depth)} "
                    f"({best.success_mean:.2f} ± {best.success_sem:.2f}) and falls back at depth {int(sD.depth)}; "
                    f"with a fixed budget of {runs[4]['sgd_steps']:,} SGD steps the deeper nets may also simply be "
                    "under-trained.")
    st.markdown(
        verdict + " " + seeds_text + (" With 3 seeds and all-or-nothing seeds this is suggestive, not settled; and it is a gain in a "
                   "2-D point maze over a few thousand SGD steps, far from the paper's 100–400M-step regime. "
                   if gap > noise else
                   " The paper's own analysis says why a 2-D point mass is the hardest place to see its effect: the "
                   "depth advantage grows with observation size (Humanoid, 268-d, gains most; arm tasks, 17-d, least) "
                   "and needs online data collected by the deep agent itself, at 100–400M environment steps. Here the "
                   "observation is 2-D, the budget ~1M steps, and the networks 64 wide. ") + (
            f"What the toy *does* show: the critic learns at every depth (accuracy {summary.critic_accuracy_mean.min():.2f}"
            f"–{summary.critic_accuracy_mean.max():.2f} against chance {chance:.4f})"
            if summary.critic_accuracy_mean.min() > 10 * chance else
            "Even the critic stays close to chance at some depth in this budget") +
        ", and the outcome per seed is close to all-or-nothing, so a handful of seeds decides the average.")

    # --------------------------------------------------------------------------- rollouts and value maps
    st.header("In the maze")
    cell, res = maze["cell"], maze["res"]
    walls = pd.DataFrame([{"x": (c - 0.5) * cell, "x2": (c + 0.5) * cell, "y": (r - 0.5) * cell, "y2": (r + 0.5) * cell}
                          for r, c in zip(*np.nonzero(maze["free"] == 0))])
    H, W = maze["free"].shape
    xs = alt.Scale(domain=[-0.5 * cell, (W - 0.5) * cell], nice=False)
    ys = alt.Scale(domain=[(H - 0.5) * cell, -0.5 * cell], nice=False)
    side = 300


    def wall_layer():
        return alt.Chart(walls).mark_rect(color="#8c6d4f").encode(
            x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2")


    view_cols = st.columns([1, 1, 2])
    deep_options = [d for d in runs if d != 4]
    view_depth = view_cols[0].selectbox("Deep agent shown", deep_options, index=len(deep_options) - 1,
                                        key="crl_view_depth", bind="query-params")
    best_seed = int(np.argmax(runs[deep_options[-1]]["final"].success.to_numpy()))
    view_seed = view_cols[1].selectbox("Seed", list(range(M.DEFAULT.seeds)), index=best_seed, key="crl_view_seed",
                                       bind="query-params")
    if view_depth not in runs or not 0 <= int(view_seed) < M.DEFAULT.seeds:
        st.warning("That depth or seed is not precomputed; showing the defaults.")
        view_depth, view_seed = deep_options[-1], 0
    view_seed = int(view_seed)

    traj_rows = []
    for d in (4, view_depth):
        tr, goals = runs[d]["trajectories"], runs[d]["traj_goals"]
        for j in range(min(2, tr.shape[1])):
            for step, (px, py) in enumerate(tr[view_seed, j]):
                traj_rows.append({"depth": f"depth {d}", "episode": j, "step": step, "row": float(px), "col": float(py)})
    traj = pd.DataFrame(traj_rows)
    goal_xy = runs[4]["traj_goals"][view_seed, 0]
    marks = pd.DataFrame([{"what": "start", "row": float(traj.row.iloc[0]), "col": float(traj.col.iloc[0])},
                          {"what": "goal", "row": float(goal_xy[0]), "col": float(goal_xy[1])}])
    paths = alt.Chart(traj).mark_line(opacity=0.85, strokeWidth=2.4).encode(
        x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
        color=alt.Color("depth:N", scale=alt.Scale(domain=[f"depth {d}" for d in (4, view_depth)],
                                                   range=[ui.PALETTE[0], ui.PALETTE[1]]), legend=None),
        detail="episode:N", order="step:Q", tooltip=["depth", "episode", "step"])
    goal_ring = alt.Chart(marks).mark_point(filled=False, size=900, strokeWidth=2).encode(
        x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
        color=alt.Color("what:N", scale=alt.Scale(domain=["start", "goal"], range=["#333", "#E45756"]), legend=None),
        tooltip=["what"])
    m1, m2, m3 = st.columns(3)
    m1.markdown(f"**Rollouts, seed {view_seed}**: :blue[depth 4], :orange[depth {view_depth}]")
    m1.altair_chart((wall_layer() + paths + goal_ring).resolve_scale(color="independent").properties(
        width=side, height=side * H / W), width="content")


    def qmap_chart(d: int) -> alt.Chart:
        q = runs[d]["qmap"][view_seed]
        pos = maze["grid_pos"]
        ok = np.isfinite(q)
        h = cell / res / 2
        df = pd.DataFrame({"row": pos[..., 0][ok], "col": pos[..., 1][ok], "f": q[ok]})
        df = df.assign(x=df.col - h, x2=df.col + h, y=df.row - h, y2=df.row + h)
        fin = runs[d]["final"].iloc[view_seed]
        heat = alt.Chart(df).mark_rect().encode(
            x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2",
            color=alt.Color("f:Q", scale=alt.Scale(scheme="viridis"), legend=None),
            tooltip=[alt.Tooltip("f:Q", format=".2f")])
        return (wall_layer() + heat + goal_ring).resolve_scale(color="independent").properties(
            width=side, height=side * H / W), fin


    for col, d in ((m2, 4), (m3, view_depth)):
        chart, fin = qmap_chart(d)
        col.markdown(f"**Critic value f(s, π(s,g), g), depth {d}**")
        col.altair_chart(chart, width="content")
        col.caption(f"Spearman ρ of −f with straight-line distance {fin.spearman_euclid:.2f}, with corridor "
                    f"distance {fin.spearman_corridor:.2f}")
    rho = summary[["depth", "spearman_euclid_mean", "spearman_corridor_mean"]]
    st.caption(
        "Left: the two first evaluation episodes of each agent from the start cell (black ring) to the far goal (red "
        "ring), which is 2 cells away in a straight line but 6 along the corridor. Middle and right: the critic's value "
        "f(s, π(s,g), g) for that goal, over the maze (the paper's Fig. 9; yellow = high value, i.e. 'close'). ρ is the Spearman correlation of −f with "
        "straight-line and with corridor distance; a critic that 'understands' the wall correlates better with the "
        "corridor. Mean over seeds: " + "; ".join(
            f"depth {int(r.depth)}: straight {r.spearman_euclid_mean:.2f}, corridor {r.spearman_corridor_mean:.2f}"
            for r in rho.itertuples()) + ".")

    # --------------------------------------------------------------------------- training curves
    curves = pd.concat([r["curves"].assign(depth=d) for d, r in runs.items()], ignore_index=True)
    mean_curves = curves.groupby(["depth", "iteration", "env_steps"], as_index=False)[
        ["success", "critic_accuracy", "alpha", "entropy"]].mean()
    long = mean_curves.rename(columns={"success": "success rate (far goal)", "critic_accuracy": "critic accuracy",
                                       "alpha": "entropy coefficient α"}).melt(
        id_vars=["depth", "iteration", "env_steps"], var_name="metric",
        value_vars=["success rate (far goal)", "critic accuracy", "entropy coefficient α"])
    curve_chart = alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("env_steps:Q", title="environment steps"), y=alt.Y("value:Q", title=None),
        color=alt.Color("depth:O", title="depth"),
        tooltip=["depth", "iteration", "env_steps", alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=300, height=200).facet(column=alt.Column("metric:N", title=None, sort=[
        "success rate (far goal)", "critic accuracy", "entropy coefficient α"])).resolve_scale(y="independent")
    st.subheader("Training curves (mean over seeds)")
    st.altair_chart(curve_chart, width="content")
    ui.download_csv(curves, "crl_curves.csv", key="dl-curves")

    # --------------------------------------------------------------------------- ablations
    st.subheader(f"Architecture ablations (depth {M.ABLATION_DEPTH})")
    ab_rows = []
    SHORT = {"none": "full", "no_residual": "no residual", "no_layernorm": "no LayerNorm", "relu": "ReLU"}
    for ab in M.ABLATIONS:
        name = f"ablation_{ab}"
        if ab == "none" and M.ABLATION_DEPTH in runs:
            res = runs[M.ABLATION_DEPTH]
        elif name in M.shipped_views():
            fn, args, kwargs = M.shipped_views()[name]
            res = ui.compute(fn, *args, label=f"Ablation {ab}…", **kwargs)
        else:
            continue
        ab_rows.append(res["final"].assign(ablation=SHORT[ab]))
    if len(ab_rows) > 1:
        ab = pd.concat(ab_rows, ignore_index=True)
        ab_sum = ab.groupby("ablation", as_index=False)[["success", "critic_accuracy", "time_at_goal"]].agg(["mean", "sem"])
        ab_sum.columns = ["ablation"] + [f"{a}_{b}" for a, b in ab_sum.columns[1:]]
        a1, a2 = st.columns(2)
        for col, metric, title in ((a1, "success", "success rate"), (a2, "critic_accuracy", "critic accuracy")):
            sem = ab_sum[f"{metric}_sem"].fillna(0)
            base = alt.Chart(ab_sum.assign(lo=(ab_sum[f"{metric}_mean"] - sem).clip(lower=0),
                                           hi=ab_sum[f"{metric}_mean"] + sem))
            col.altair_chart((base.mark_bar().encode(
                y=alt.Y("ablation:N", title=None, sort=list(SHORT.values())), x=alt.X(f"{metric}_mean:Q", title=title),
                tooltip=["ablation", alt.Tooltip(f"{metric}_mean:Q", format=".3f")])
                + base.mark_errorbar().encode(y=alt.Y("ablation:N", sort=list(SHORT.values())),
                                              x=alt.X("lo:Q", title=title), x2="hi:Q")).properties(height=160),
                width="stretch")
        full = ab_sum.set_index("ablation").loc["full"]
        words = []
        for r in ab_sum.itertuples():
            if r.ablation == "full":
                continue
            se = float(np.hypot(np.nan_to_num(r.success_sem), np.nan_to_num(full.success_sem)))
            diff = r.success_mean - full.success_mean
            how = ("clearly lower" if diff < -2 * max(se, 0.05) else "clearly higher" if diff > 2 * max(se, 0.05)
                   else "not clearly different")
            se_a = float(np.hypot(np.nan_to_num(r.critic_accuracy_sem), np.nan_to_num(full.critic_accuracy_sem)))
            diff_a = r.critic_accuracy_mean - full.critic_accuracy_mean
            how_a = ("clearly lower" if diff_a < -2 * se_a else "clearly higher" if diff_a > 2 * se_a
                     else "not clearly different")
            words.append(f"**{r.ablation}**: success {how} ({r.success_mean:.2f} vs {full.success_mean:.2f}), critic "
                         f"accuracy {how_a} ({r.critic_accuracy_mean:.3f} vs {full.critic_accuracy_mean:.3f})")
        others = ab_sum[ab_sum.ablation != "full"]
        lower = int((others.success_mean < full.success_mean).sum())
        st.markdown(f"In this toy at depth {M.ABLATION_DEPTH}, {M.DEFAULT.seeds} seeds each, against the full "
                    "architecture: " + "; ".join(words) + f". {lower} of {len(others)} ablations have a lower mean "
                    "success than the full architecture. The paper finds that each of the three changes hurts at "
                    "large depth. 'Clearly' means by more than twice the combined standard error of the seeds.")
    else:
        st.info("The ablation runs are not precomputed in this build; use *Train your own* or *Sweep* below with an "
                "ablation.")

    # --------------------------------------------------------------------------- reproduce panel
    st.header("Reproduce: ours beside the paper")
    t4, tD = s4["time_at_goal_mean"], sD["time_at_goal_mean"]
    ui.reproduce_panel([
        {"quantity": "critic accuracy (share of batch, depth 4 / deepest)",
         "ours": f"{s4.critic_accuracy_mean:.3f} / {sD.critic_accuracy_mean:.3f} (chance {chance:.4f})",
         "paper": None, "note": "the paper reports no accuracy; the notes' CPU runs got 0.24–0.29"},
        {"quantity": f"success, far goal, depth 4 → {int(sD.depth)}",
         "ours": f"{s4.success_mean:.2f} → {sD.success_mean:.2f}", "paper": None,
         "note": "the paper reports time at goal, not success"},
        {"quantity": f"time at goal, depth 4 → {int(sD.depth)}",
         "ours": f"{t4:.0f} → {tD:.0f} of 200 ({tD / t4:.1f}×)" if t4 > 0 else f"{t4:.0f} → {tD:.0f} of 200",
         "paper": "Ant U4-Maze 11.4 → 286 of 1000 (25×, depth 4 → 64)", "note": "different body, maze, scale"},
        {"quantity": "critic follows the corridor, not the straight line (Fig. 9)",
         "ours": f"ρ corridor {sD.spearman_corridor_mean:.2f} vs straight {sD.spearman_euclid_mean:.2f} "
                 f"(depth {int(sD.depth)})",
         "paper": "depth 64 follows the corridor, depth 4 the straight line", "note": "Spearman ρ of −f vs distance"},
    ], verdict=verdict.replace("**", "") + " " + seeds_text + (
        " The direction matches the paper; the scale (a 2-D point mass, ~1M environment steps, depth ≤ 16) does not "
        "allow a comparison of the size of the gain." if gap > noise else
        " The paper's depth effect needs high-dimensional observations and 100M+ environment steps; this 2-D toy on a "
        "CPU budget does not reproduce it."), reproduced=bool(gap > noise))
    with st.expander("The paper's Table 1 and depth curves (references, time at goal out of 1000)", expanded=True):
        p1, p2 = st.columns(2)
        p1.dataframe(M.PAPER_TABLE1.rename(columns={"depth_4": "depth 4", "depth_64": "depth 64"}), hide_index=True)
        p2.altair_chart(alt.Chart(M.PAPER_CURVES).mark_line(point=True).encode(
            x=alt.X("depth:Q", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=list(M.DEPTHS))),
            y=alt.Y("time_at_goal:Q", title="time at goal (paper, of 1000)"),
            color=alt.Color("task:N", title=None, legend=alt.Legend(orient="right")),
            tooltip=["task", "depth", "time_at_goal"]).properties(height=340),
            width="stretch")

# --------------------------------------------------------------------------- train your own
st.header("Train your own")
st.markdown("Settings take effect when you press **Train**. Runs are bounded to about a minute on 2 CPU cores; "
            "finished runs are cached for every visitor. Two experiments worth running: **more seeds** at depths 4 and "
            "16 (success is nearly all-or-nothing per seed, so 3 seeds cannot settle a depth effect), and the "
            "**lifted observation** — (x, y) mapped through a fixed random network to 128 dimensions, "
            r"$x \mapsto 2\tanh(\tanh(xW_1+b_1)W_2)$ — to probe the paper's point that depth pays off most "
            "with large observations.")
k = st.columns(4)
maze_name = k[0].selectbox("Maze", list(M.MAZES), format_func=M.MAZE_LABELS.get, key="crl_maze",
                           bind="query-params")
depth = k[1].selectbox("Depth (Dense layers in blocks)", [4, 8, 16, 32, 64], key="crl_depth", bind="query-params")
width = k[2].selectbox("Width", [32, 64, 128, 256], index=1, key="crl_width", bind="query-params")
batch = k[3].selectbox("Batch size", [64, 128, 256, 512], index=2, key="crl_batch", bind="query-params")
k = st.columns(4)
iters = k[0].number_input("Iterations (×200 SGD steps)", 1, 60, M.DEFAULT.iterations, key="crl_iters",
                          bind="query-params")
seeds = k[1].number_input("Seeds (batched)", 1, 8, M.DEFAULT.seeds, key="crl_seeds", bind="query-params")
seed = k[2].number_input("First seed", 0, 10_000, 0, key="crl_seed", bind="query-params")
ablation = k[3].selectbox("Ablation", list(M.ABLATIONS), format_func=M.ABLATION_LABELS.get, key="crl_ablation",
                          bind="query-params")
k = st.columns(4)
lift = k[0].selectbox("Observation", [0, 128], format_func=lambda v: "raw 2-D (x, y)" if v == 0 else
                      f"lifted to {v}-d by a fixed random map", key="crl_lift", bind="query-params")
exact = k[1].toggle("Paper-exact (no departures)", False, key="crl_exact", bind="query-params")
go = k[3].button("Train", key="crl_train", type="primary", icon=":material/play_arrow:")

try:
    cfg = M.validate(replace(M.DEFAULT, maze=maze_name, depth=int(depth), width=int(width), batch_size=int(batch),
                             iterations=int(iters), seeds=int(seeds), seed=int(seed), ablation=ablation,
                             obs_lift=int(lift)))
    if exact:
        cfg = M.paper_exact(cfg)
    cost = M.cost_units(cfg)
except (ValueError, TypeError) as exc:
    st.error(f"Invalid settings: {exc}")
    cfg, cost = None, float("inf")
shipped_cfgs = [args[0] for fn, args, _ in M.shipped_views().values() if fn is M.train]
if cfg is not None and cfg in shipped_cfgs:
    cost = 0.0  # precomputed: instant
k[2].metric("Estimated CPU time", ("precomputed" if cost == 0 else f"~{cost:.0f} s") if np.isfinite(cost) else
            "—", help="on an idle 2-core CPU; a shared server is slower")
if go and cfg is not None:
    if cost > BUDGET:
        st.warning(f"This run would take about {cost:.0f} s on 2 cores (limit {BUDGET:.0f} s). Lower the depth, "
                   "width, batch, iterations or seeds.")
    else:
        st.session_state["crl_last"] = cfg
last = st.session_state.get("crl_last")
if last is not None:
    mine = ui.compute(M.train, last, label="Training…")
    f = mine["final"]
    st.markdown(f"**Your run** ({M.MAZE_LABELS[last.maze]}, depth {last.depth}, width {last.width}, batch "
                f"{last.batch_size}, {last.iterations * last.sgd_steps:,} SGD steps, {last.seeds} seed(s), "
                f"{mine['wall_s']:.0f} s): success {f.success.mean():.2f}, time at goal {f.time_at_goal.mean():.0f}"
                f"/200, critic accuracy {f.critic_accuracy.mean():.3f} (chance {mine['chance_accuracy']:.4f}), "
                f"held-out {f.critic_accuracy_fresh.mean():.3f}.")
    cur = mine["curves"].assign(seed=mine["curves"].seed.astype(str))
    st.altair_chart(alt.Chart(cur.melt(id_vars=["iteration", "seed"], value_vars=["success", "critic_accuracy"],
                                       var_name="metric")).mark_line(point=True).encode(
        x="iteration:Q", y=alt.Y("value:Q", title=None), color="seed:N", tooltip=["iteration", "seed", "value"]
    ).properties(width=300, height=200).facet(column=alt.Column("metric:N", title=None)), width="content")
    ui.download_csv(mine["curves"], "crl_my_run.csv", key="dl-mine")

# --------------------------------------------------------------------------- sweep
st.header("Sweep")
s = st.columns([1, 2, 1])
param = s[0].selectbox("Parameter", ["depth", "width", "batch_size", "ablation"], key="crl_sweep_param",
                       bind="query-params")
choices = {"depth": [4, 8, 16, 32, 64], "width": [32, 64, 128, 256], "batch_size": [64, 128, 256, 512],
           "ablation": list(M.ABLATIONS)}[param]
values = s[1].multiselect("Values", choices, default=choices[:2], key=f"crl_sweep_values_{param}",
                          bind="query-params")
run_sweep = s[2].button("Run sweep", key="crl_sweep", icon=":material/play_arrow:")
base = cfg if cfg is not None else M.DEFAULT
if values:
    sweep_cost = sum(M.cost_units(replace(base, **{param: v})) for v in values)
    st.caption(f"Base settings from *Train your own*; estimated ~{sweep_cost:.0f} s on 2 idle cores "
               f"(limit {BUDGET:.0f} s).")
if run_sweep:
    if not values:
        st.warning("Pick at least one value.")
    elif sweep_cost > BUDGET:
        st.warning(f"This sweep would take about {sweep_cost:.0f} s (limit {BUDGET:.0f} s): fewer values, fewer "
                   "iterations or seeds, or a smaller base depth.")
    else:
        st.session_state["crl_sweep_last"] = (base, param, list(values))
if st.session_state.get("crl_sweep_last"):
    b, p, vals = st.session_state["crl_sweep_last"]
    sw = ui.compute(M.sweep, b, p, vals, label="Sweeping…")
    tab = sw["summary"]
    tab[p] = tab[p].astype(str)
    st.altair_chart(alt.Chart(tab).mark_point(size=80).encode(
        x=alt.X(f"{p}:N", sort=[str(v) for v in vals]), y=alt.Y("success:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("critic_accuracy:Q", title="critic acc."),
        tooltip=[p, "seed", "success", "time_at_goal", "critic_accuracy"]).properties(height=260), width="stretch")
    ui.download_csv(tab, "crl_sweep.csv", key="dl-sweep")

ui.device_caption()
