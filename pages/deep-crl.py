"""1000-layer RL (Wang et al., NeurIPS 2025): contrastive RL in 2-D mazes, and what depth does to it."""
from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import ui
from toymodels import crl as M
from toymodels import crl_critic as C
from toymodels import store, topic
from toymodels.topic import InputError, Verdict

paper = ui.paper_header(M.TOPIC)
ui.claim_box(paper)



def available(name: str) -> bool:
    """Whether a declared view is stored (shipped and fresh, or cached): the page never starts the hour-long
    offline experiments on load."""
    fn, kwargs = topic.view_call(M, name)
    return store.lookup(fn, **kwargs)[0]


runs = {d: ui.view(M, f"train_d{d}") for d in M.DEFAULT_DEPTHS}
MISSING = ("The offline critic experiment is not shipped in this build yet: run `python -m toymodels precompute "
           "deep-crl --view critic --view critic_search --view summary` (about an hour of CPU).")
if available("critic"):
    ui.result_strip(ui.shipped_verdict(M.TOPIC)[0])
    head, critic = ui.view(M, "summary"), ui.view(M, "critic")
    verdict = M.verdict(head)
    cs, wide = critic["summary"], critic["wide"]
    per_seed_c = critic["per_seed"]
    deep_d = int(cs.depth.max())
else:
    ui.result_strip(Verdict(None, MISSING, "n/a", "time at goal 11 → 286"))
    _per_seed = pd.concat([r["final"] for r in runs.values()], ignore_index=True)
    head = {"per_seed": _per_seed, "summary": M.summarise(_per_seed), "chance_accuracy": 1 / M.DEFAULT.batch_size}
    critic = verdict = None


@st.cache_resource
def corridor_distances(maze: str):
    grid = C.make_grid(maze)
    return grid, C.geodesic(grid)


def depth_axis(values):
    return alt.X("depth:Q", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=list(values)), title="depth")


def per_depth_chart(pts: pd.DataFrame, mean: pd.DataFrame, metric: str, title: str, domain=None) -> alt.Chart:
    """Seeds as grey points, mean ± standard error as a line with bars."""
    x = depth_axis(sorted(set(pts.depth)))
    y_scale = alt.Scale(domain=domain) if domain else alt.Scale(zero=False)
    m = mean.assign(lo=mean[f"{metric}_mean"] - mean[f"{metric}_sem"], hi=mean[f"{metric}_mean"] + mean[f"{metric}_sem"])
    dots = alt.Chart(pts).mark_point(opacity=0.45, size=35, color="#999").encode(
        x=x, y=alt.Y(f"{metric}:Q", title=title, scale=y_scale),
        tooltip=["depth", "seed", alt.Tooltip(f"{metric}:Q", format=".3f")])
    line = alt.Chart(m).mark_line(point=True).encode(
        x=x, y=alt.Y(f"{metric}_mean:Q", title=title, scale=y_scale),
        tooltip=["depth", alt.Tooltip(f"{metric}_mean:Q", format=".3f", title="mean"),
                 alt.Tooltip(f"{metric}_sem:Q", format=".3f", title="s.e.m.")])
    bars = alt.Chart(m).mark_errorbar(ticks=True).encode(x=x, y=alt.Y("lo:Q", title=title, scale=y_scale), y2="hi:Q")
    return dots + bars + line


# --------------------------------------------------------------------------- the one picture
st.header("What depth does here")
left, right = st.columns(2)
with left:
    if critic is None:
        st.info(MISSING, icon=":material/hourglass_top:")
    else:
        ccfg = critic["config"]
        pairs = (f"far pairs (corridor distance ≥ 2/(1 − γ) = {2 / (1 - ccfg['gamma']):.0f} moves, a random walk "
                 f"almost never covers in one {ccfg['episode_len']}-step episode)" if ccfg["far_only"] else
                 "held-out (state, goal) pairs")
        st.markdown(f"**Offline critic, end of training** ({C.GRID_LABELS[ccfg['maze']]}): Spearman ρ of −Q with "
                    f"corridor distance, on {pairs}")
        wide_pt = pd.DataFrame([{"depth": 4, "rho": wide["spearman"], "what": f"depth 4, width {wide['width']} "
                                 f"({wide['params']:,} parameters, as depth {deep_d})"}])
        chart = per_depth_chart(per_seed_c, cs, "spearman_geodesic", "ρ(−Q, corridor)")
        chart += alt.Chart(wide_pt).mark_point(shape="diamond", size=140, filled=True, color=ui.PALETTE[1]).encode(
            x=depth_axis(cs.depth), y="rho:Q", tooltip=["what", alt.Tooltip("rho:Q", format=".3f")])
        st.altair_chart(chart.properties(height=280), width="stretch")
        st.caption(f"Grey: seeds; line: mean ± s.e.m. over {int(cs.n_seeds.iloc[0])} seeds, each the mean of the "
                   f"evaluations in the last quarter of {ccfg['steps']:,} SGD steps; orange diamond: the wide depth-4 "
                   f"control with the parameters of depth {deep_d}. Ranking by straight-line distance scores "
                   f"ρ = {critic['euclid_scored_spearman']:.2f} on these pairs.")
with right:
    s = head["summary"]
    st.markdown("**Online agent** (U-maze, far goal behind the wall): success rate")
    st.altair_chart(per_depth_chart(head["per_seed"], s, "success", "success rate", [0, 1]).properties(height=280),
                    width="stretch")
    st.caption(f"Grey: seeds; line: mean ± s.e.m. over {int(s.n_seeds.iloc[0])} seeds; "
               f"{M.DEFAULT.iterations * M.DEFAULT.sgd_steps:,} SGD steps per run.")
if critic is not None:
    # the learning-speed picture: critic quality against SGD steps, per depth (mean ± s.e.m. over seeds)
    cur = critic["curves"].assign(net=lambda d: np.where(d.width == ccfg["width"], "depth " + d.depth.astype(str),
                                                         "depth 4, width " + d.width.astype(str)))
    band = cur.groupby(["net", "depth", "width", "step"], as_index=False).spearman_geodesic.agg(["mean", "sem"])
    band = band.assign(lo=band["mean"] - band["sem"], hi=band["mean"] + band["sem"])
    order = [f"depth {d}" for d in cs.depth] + [f"depth 4, width {wide['width']}"]
    colour = alt.Color("net:N", title=None, sort=order, scale=alt.Scale(domain=order, range=ui.PALETTE[:len(order)]),
                       legend=alt.Legend(symbolOpacity=1))
    base = alt.Chart(band).encode(x=alt.X("step:Q", title="SGD step"), color=colour)
    st.markdown("**The same critics against training steps**: ρ(−Q, corridor distance) on the same pairs")
    st.altair_chart((base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", title="ρ(−Q, corridor)",
                                                                 scale=alt.Scale(zero=False)), y2="hi:Q")
                     + base.mark_line().encode(
                         y="mean:Q", strokeDash=alt.condition(alt.datum.width != ccfg["width"], alt.value([5, 3]),
                                                              alt.value([1, 0])),
                         tooltip=["net", "step", alt.Tooltip("mean:Q", format=".3f"),
                                  alt.Tooltip("sem:Q", format=".3f", title="s.e.m.")])).properties(height=300),
                    width="stretch")
    deep = band[(band.depth == deep_d) & (band.width == ccfg["width"])].set_index("step")
    shallow = band[(band.depth == 4) & (band.width == ccfg["width"])].set_index("step")
    wide_c = band[band.width != ccfg["width"]].set_index("step")
    lead = deep["mean"] - shallow["mean"]
    early = int(lead.idxmax())
    c4, cD = cs.iloc[0], cs.iloc[-1]
    gain, se, beyond = M.depth_gain(c4.spearman_geodesic_mean, c4.spearman_geodesic_sem, cD.spearman_geodesic_mean,
                                    cD.spearman_geodesic_sem, 0.01)
    _, _, beats_wide = M.depth_gain(wide["spearman"], wide["spearman_sem"], cD.spearman_geodesic_mean,
                                    cD.spearman_geodesic_sem, 0.01)
    _, _, early_beats_wide = M.depth_gain(wide_c.loc[early, "mean"], wide_c.loc[early, "sem"],
                                          deep.loc[early, "mean"], deep.loc[early, "sem"], 0.01)
    faster = lead.loc[early] > 0.02
    st.markdown(
        (f"**Early in training depth {deep_d} leads**: at step {early:,}, ρ {deep.loc[early, 'mean']:.3f} against "
         f"{shallow.loc[early, 'mean']:.3f} at depth 4 ({lead.loc[early]:+.3f}); the wide depth-4 critic with as "
         f"many parameters has {wide_c.loc[early, 'mean']:.3f}"
         + (", so there depth beats width beyond seed noise. " if early_beats_wide else
            ", so the speed comes with the parameters, not with depth. ") if faster else
         f"Depth {deep_d} never leads depth 4 by more than {lead.loc[early]:+.3f} in ρ during training. ")
        + f"**At the end of training** depth {deep_d} leads depth 4 by {gain:+.3f} ± {se:.3f} (s.e.), "
        + ("beyond twice the seed error" if beyond else "within twice the seed error")
        + f"; the wide critic ends at {wide['spearman']:.3f}, and depth {deep_d} "
        + f"{'beats' if beats_wide else 'does not beat'} it beyond seed noise. "
        + ("So in this regime depth buys a better critic, and width does not." if beyond and beats_wide else
           "The deeper critic ends higher, but a wide one with as many parameters matches it: the gain is the "
           "parameter count's, not depth's." if beyond else
           "So depth buys speed here, not a better end point." if faster else
           "So depth buys neither speed nor a better end point here."))
if verdict is not None:
    st.markdown(verdict.summary)
with st.expander("What it would take", icon=":material/lightbulb:"):
    st.markdown(
        "- **The paper's scale.** Its depth gains come at 100–400M environment steps, batch 512, width 256 and "
        "depth up to 1024; here ~1M environment steps and a few thousand SGD steps, width 64, depth ≤ 64. On this "
        "CPU a depth-64 step costs ~11× a depth-4 step, which is what bounds the runs below.\n"
        "- **A budget that ends before the small critic catches up.** Offline, the depth-4 critic is the last to "
        "level off (the curves above), and a wide depth-4 critic with the deep one's parameters learns as fast and "
        "ends as high as the deep ones: here parameters buy speed, and at a fixed step budget speed is an end-point "
        "gain. Whether the paper's gains are of this kind is what training its depth-4 agents several times longer, "
        "and a wide control, would show; this toy cannot tell.\n"
        "- **A task a shallow net cannot fit.** Where every (state, goal) pair is covered by the data, a depth-4 "
        "critic already learns the walls; in stitching the deeper critics end higher, but so does a wide one. The "
        "paper's biggest gains are on the largest observations (Humanoid, 268-d): the search's random 64-d lift and "
        "27×27 maze are small steps that way; a 268-d body is beyond a shared 2-core CPU.\n"
        "- **Online data from the deep agent itself.** The paper's collector experiment finds that depth pays off "
        "only when the deep agent also collects the data; an offline critic on a random walk cannot show that, and "
        "the online toy's success is all-or-nothing per seed (about 10 seeds per depth would be needed).")

# --------------------------------------------------------------------------- details, folded
tab_critic, tab_search, tab_online, tab_paper, tab_train = st.tabs(
    ["Offline critic", "Search: where does depth matter?", "Online agent", "Paper's numbers", "Train your own"])


@ui.fragment
def _critic_tab() -> None:
    """The offline critic: a knob here reruns this tab alone (a fragment)."""
    if critic is None:
        st.info(MISSING, icon=":material/hourglass_top:")
    else:
        st.markdown(
            "The critic alone, without exploration: a uniform random walk on the grid collects the data "
            f"({ccfg['episodes']:,} episodes × {ccfg['episode_len']} steps); the paper's critic "
            "(residual encoders, $f(s,a,g)=-\\lVert\\phi(s,a)-\\psi(g)\\rVert_2$, forward InfoNCE + 0.1·logsumexp², "
            f"goals relabeled with γ = {ccfg['gamma']}) trains on it. Ground truth is computed without the network: "
            "corridor distance by breadth-first search, and the exact occupancy of the walk under the relabeling law, "
            r"$p(g\mid s,a)=\sum_d c_d\,[P_aP^{d-1}]_{sg}$. "
            f"{int(ccfg['heldout'] * 100)}% of (state, goal) pairs never appear as a training pair; the scores use "
            + (f"those whose corridor distance is at least twice the discount horizon, 2/(1 − γ) = "
               f"{2 / (1 - ccfg['gamma']):.0f} moves ({critic['n_scored_pairs']:,} pairs). A {ccfg['episode_len']}-step "
               "random walk practically never holds both ends of such a pair (most are farther apart than its length), "
               "so the critic can rank them only by composing short segments "
               "(*stitching*, where the paper's deep agents reach goals the shallow ones do not)."
               if ccfg["far_only"] else f"those ({critic['n_scored_pairs']:,} pairs)."))
        table = cs.assign(**{"params": [int(per_seed_c[per_seed_c.depth == d].params.iloc[0]) for d in cs.depth]})[
            ["depth", "params", "spearman_geodesic_mean", "spearman_geodesic_sem", "spearman_occupancy_mean",
             "retrieval_mean", "retrieval_sem"]]
        wide_seeds = per_seed_c[per_seed_c.width != ccfg["width"]]
        table = pd.concat([table, pd.DataFrame([{"depth": f"4 (wide {wide['width']})", "params": wide["params"],
                                                 "spearman_geodesic_mean": wide["spearman"],
                                                 "spearman_geodesic_sem": wide["spearman_sem"],
                                                 "spearman_occupancy_mean": wide_seeds.spearman_occupancy.mean(),
                                                 "retrieval_mean": wide["retrieval"],
                                                 "retrieval_sem": wide_seeds.retrieval.sem()}])], ignore_index=True)
        table["depth"] = table["depth"].astype(str)
        st.dataframe(table.rename(columns={
            "spearman_geodesic_mean": "ρ corridor", "spearman_geodesic_sem": "± s.e.m.",
            "spearman_occupancy_mean": "ρ occupancy", "retrieval_mean": "top-1 retrieval", "retrieval_sem": "± "}),
            hide_index=True, width="stretch", column_config={
                c: st.column_config.NumberColumn(format="%.3f") for c in
                ("ρ corridor", "± s.e.m.", "ρ occupancy", "top-1 retrieval", "± ")})
        st.caption(f"Top-1 retrieval: of 16 random candidate goals, does the highest Q pick the one nearest along the "
                   f"corridors? Random picks score {critic['random_retrieval']:.3f}, straight-line distance "
                   f"{critic['euclid_retrieval']:.3f}. ρ occupancy: Spearman of f(s, a, g) with the exact p(g | s, a)"
                   + (" (on far pairs most of it is exactly 0, so this column says little)." if ccfg["far_only"]
                      else "."))

        st.subheader("Against training steps")
        curves = critic["curves"]
        cm = curves[curves.width == critic["config"]["width"]].groupby(["depth", "step"], as_index=False)[
            ["spearman_geodesic", "retrieval"]].mean()
        c1, c2 = st.columns(2)
        for col, metric, title in ((c1, "spearman_geodesic", "ρ(−Q, corridor distance)"),
                                   (c2, "retrieval", "top-1 retrieval")):
            col.altair_chart(alt.Chart(cm).mark_line(point=True).encode(
                x=alt.X("step:Q", title="SGD step"), y=alt.Y(f"{metric}:Q", title=title, scale=alt.Scale(zero=False)),
                color=alt.Color("depth:O", title="depth"),
                tooltip=["depth", "step", alt.Tooltip(f"{metric}:Q", format=".3f")]).properties(height=240),
                width="stretch")
        st.caption("Mean over seeds (the ρ curves with their seed bands are at the top of the page). Whether an early "
                   "gap survives to the end of training is what the table above says.")

        st.subheader("Q over the maze, for the goal at the centre")
        free = np.asarray(critic["free"]).astype(bool)
        goal = critic["goal_cell"]
        rr, cc = np.nonzero(free)

        def maze_chart(values: np.ndarray, title: str) -> alt.Chart:
            df = pd.DataFrame({"r": rr, "c": cc, "v": values})
            walls = pd.DataFrame(np.argwhere(~free), columns=["r", "c"])
            xs = alt.Scale(domain=[-0.5, free.shape[1] - 0.5], nice=False)
            ys = alt.Scale(domain=[free.shape[0] - 0.5, -0.5], nice=False)
            enc = dict(x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2")
            box = dict(x="datum.c - 0.5", x2="datum.c + 0.5", y="datum.r - 0.5", y2="datum.r + 0.5")
            heat = alt.Chart(df).transform_calculate(**box).mark_rect().encode(
                **enc, color=alt.Color("v:Q", scale=alt.Scale(scheme="viridis"), legend=None),
                tooltip=["r", "c", alt.Tooltip("v:Q", format=".2f")])
            wall = alt.Chart(walls).transform_calculate(**box).mark_rect(color="#8c6d4f").encode(**enc)
            mark = alt.Chart(pd.DataFrame([{"r": goal[0], "c": goal[1]}])).mark_point(
                shape="cross", size=120, color="#E45756", filled=True).encode(
                x=alt.X("c:Q", scale=xs, axis=None), y=alt.Y("r:Q", scale=ys, axis=None))
            return (wall + heat + mark).properties(height=260, title=title)

        grid, geo = corridor_distances(critic["config"]["maze"])
        g_id = int(grid.index[goal[0], goal[1]])
        seed_q = st.selectbox("Seed", list(range(critic["config"]["seeds"])), key="crl_critic_seed", bind="query-params")
        q1, q2, q3, q4 = st.columns(4)
        q1.altair_chart(maze_chart(-geo[:, g_id], "truth: −corridor distance"), width="stretch")
        wide_name = f"4x{wide['width']}"
        for col, name, title in ((q2, "4", "Q, depth 4"), (q3, str(deep_d), f"Q, depth {deep_d}"),
                                 (q4, wide_name, f"Q, depth 4 × width {wide['width']}")):
            q = np.asarray(critic["runs"][name]["qmap"])[int(seed_q)]
            rho = C.spearman(-q[rr, cc], geo[:, g_id])
            col.altair_chart(maze_chart(q[rr, cc], f"{title} (ρ {rho:.2f})"), width="stretch")
        st.caption("Yellow = high (near the goal, red cross). A critic that learned the walls is bright along the "
                   "corridor leading in through the gaps, not in a disc around the goal.")


with tab_critic:
    _critic_tab()


@ui.fragment
def _search_tab() -> None:
    """The search: a knob here reruns this tab alone (a fragment)."""
    if not available("critic_search"):
        st.info(MISSING, icon=":material/hourglass_top:")
    else:
        search = ui.view(M, "critic_search")
        tab = search["table"]
        d0, d1 = search["depths"][0], search["depths"][-1]
        st.markdown(f"Every regime tried, each at depth {d0} and depth {d1} (most rows {int(tab.seeds.min())} seeds and "
                    f"{int(tab.steps.min()):,} SGD steps, a short budget; the columns say what each row ran). The end "
                    "of training is the mean over the evaluations in its last quarter. *Depth helps* means the gain in "
                    "ρ exceeds twice its standard error and 0.01. The main view above is the stitching regime run "
                    "long, at five depths, with the wide control.")
        show = tab[["what", "seeds", "steps", "batch_size", "euclid_scored_spearman", f"spearman_d{d0}",
                    f"spearman_d{d1}", "gain_spearman", "gain_sem", f"retrieval_d{d0}", f"retrieval_d{d1}",
                    "depth_helps", "cpu_s"]]
        st.dataframe(show.rename(columns={
            "what": "regime", "batch_size": "batch", "euclid_scored_spearman": "ρ straight line",
            f"spearman_d{d0}": f"ρ depth {d0}", f"spearman_d{d1}": f"ρ depth {d1}", "gain_spearman": "gain",
            "gain_sem": "± s.e.", f"retrieval_d{d0}": f"retrieval {d0}", f"retrieval_d{d1}": f"retrieval {d1}",
            "depth_helps": "depth helps", "cpu_s": "CPU s"}), hide_index=True, width="stretch",
            column_config={"ρ straight line": st.column_config.NumberColumn(format="%.2f"),
                           **{c: st.column_config.NumberColumn(format="%.3f") for c in
                              (f"ρ depth {d0}", f"ρ depth {d1}", "gain", "± s.e.", f"retrieval {d0}",
                               f"retrieval {d1}")},
                           "CPU s": st.column_config.NumberColumn(format="%.0f")})
        helps = tab[tab.depth_helps]
        rest = tab[~tab.depth_helps]
        st.markdown((f"At this short budget depth {d1} leads depth {d0} beyond seed noise in {len(helps)} of {len(tab)} "
                     "regimes" + (f" (not in: {'; '.join(rest.what)})" if len(rest) else "") + ". Most runs are "
                     "still learning when they stop (the curves below): the main view above runs the stitching "
                     "regime five times longer to see whether the gap survives.")
                    if len(helps) else "No regime shows a depth gain beyond seed noise at this budget.")
        st.caption("ρ straight line: Spearman of straight-line with corridor distance on the pairs each row scores, "
                   "what a critic that ignored the walls would get. Also measured before (issue 20, 2 seeds, 2000 "
                   "steps): U4-maze ρ 0.90 at depth 4 and 16; rings 15×15 ρ 0.955 (depth 4), 0.971 (depth 32), 0.963 "
                   "(depth 4 at depth 32's parameters).")
        sc = search["curves"].groupby(["regime", "depth", "step"], as_index=False).spearman_geodesic.mean()
        sc = sc.assign(depth=sc.depth.astype(str))
        st.altair_chart(alt.Chart(sc).mark_line().encode(
            x=alt.X("step:Q", title="SGD step"), y=alt.Y("spearman_geodesic:Q", title="ρ", scale=alt.Scale(zero=False)),
            color=alt.Color("depth:N", title="depth", sort=[str(d0), str(d1)]),
            tooltip=["regime", "depth", "step", alt.Tooltip("spearman_geodesic:Q", format=".3f")]).properties(
                width=150, height=120).facet(facet=alt.Facet("regime:N", title=None, sort=list(tab.regime)), columns=4)
            .resolve_scale(x="independent", y="independent"))
        st.caption("ρ(−Q, corridor distance) against SGD steps, mean over seeds, one panel per regime.")
        ui.download_csv(tab, "crl_critic_search.csv", key="dl-search")


with tab_search:
    _search_tab()


@ui.fragment
def _online_tab() -> None:
    """The online agent: a knob here reruns this tab alone (a fragment)."""
    per_seed, summary = head["per_seed"], head["summary"]
    chance = head["chance_accuracy"]
    st.markdown(
        "A point mass in the JaxGCRL U-maze, $s' = s + 0.75\\,a$, $a\\in[-1,1]^2$, cells 2.5 units; no reward. Actor, "
        "φ and ψ are the paper's residual MLPs (Dense → LayerNorm → Swish, blocks of 4 with a skip), width 64; "
        "tanh-Gaussian SAC-style actor; goals relabeled from the same episode with $P(d)\\propto\\gamma^{d-1}$. "
        f"{M.DEFAULT.seeds} seeds per depth, {runs[4]['env_steps']:,} environment steps and "
        f"{runs[4]['sgd_steps']:,} SGD steps per run.")
    with st.expander("Equations and where the toy departs from the paper's code", icon=":material/info:"):
        st.latex(r"\mathcal L_{\text{critic}} = -\frac1B\sum_i\Big[L_{ii} - \log\sum_j e^{L_{ij}}\Big]"
                 r" + 0.1\cdot\frac1B\sum_i\Big(\log\sum_j e^{L_{ij}}\Big)^2,\quad L_{ij}=f(s_i,a_i,g_j)")
        st.latex(r"\mathcal L_{\text{actor}} = \mathbb E\big[\alpha \log\pi(a\mid s,g) - f(s,a,g)\big]")
        st.markdown(
            "Three departures the notes' CPU runs needed to reach the far goal at all (switches in "
            "`toymodels.crl.Config`; *paper-exact* in *Train your own* turns them off): half of the actor's goals "
            "come from another row; α starts at 0.1 with log-α learning rate 3e-3; walls stop each axis of a move "
            "separately. Success = within 0.5 of the far goal at any of 200 steps; time at goal = steps within "
            "0.5, out of 200 (the paper counts out of 1000); last 5 of 20 evaluations, actions tanh(μ).")
    o1, o2 = st.columns(2)
    o1.altair_chart(per_depth_chart(per_seed, summary, "time_at_goal", "time at goal (of 200)", [0, 200]).properties(
        height=240), width="stretch")
    o2.altair_chart(per_depth_chart(per_seed, summary, "critic_accuracy", f"critic accuracy (chance {chance:.4f})")
                    .properties(height=240), width="stretch")

    maze = ui.view(M, "maze_u")
    cell, res = maze["cell"], maze["res"]
    walls = pd.DataFrame([{"x": (c - 0.5) * cell, "x2": (c + 0.5) * cell, "y": (r - 0.5) * cell, "y2": (r + 0.5) * cell}
                          for r, c in zip(*np.nonzero(np.asarray(maze["free"]) == 0))])
    H, W = np.asarray(maze["free"]).shape
    xs = alt.Scale(domain=[-0.5 * cell, (W - 0.5) * cell], nice=False)
    ys = alt.Scale(domain=[(H - 0.5) * cell, -0.5 * cell], nice=False)

    def wall_layer():
        return alt.Chart(walls).mark_rect(color="#8c6d4f").encode(
            x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2")

    v1, v2 = st.columns(2)
    deep_options = [d for d in runs if d != 4]
    view_depth = v1.selectbox("Deep agent shown", deep_options, index=len(deep_options) - 1, key="crl_view_depth",
                              bind="query-params")
    view_seed = int(v2.selectbox("Seed", list(range(M.DEFAULT.seeds)), key="crl_view_seed", bind="query-params"))
    traj_rows = []
    for d in (4, view_depth):
        tr = np.asarray(runs[d]["trajectories"])
        for j in range(min(2, tr.shape[1])):
            traj_rows += [{"depth": f"depth {d}", "episode": j, "step": k, "row": float(px), "col": float(py)}
                          for k, (px, py) in enumerate(tr[view_seed, j])]
    traj = pd.DataFrame(traj_rows)
    goal_xy = np.asarray(runs[4]["traj_goals"])[view_seed, 0]
    marks = pd.DataFrame([{"what": "start", "row": float(traj.row.iloc[0]), "col": float(traj.col.iloc[0])},
                          {"what": "goal", "row": float(goal_xy[0]), "col": float(goal_xy[1])}])
    ring = alt.Chart(marks).mark_point(filled=False, size=500, strokeWidth=2).encode(
        x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
        color=alt.Color("what:N", scale=alt.Scale(domain=["start", "goal"], range=["#333", "#E45756"]), legend=None))
    paths = alt.Chart(traj).mark_line(opacity=0.85, strokeWidth=2.4).encode(
        x=alt.X("col:Q", scale=xs, axis=None), y=alt.Y("row:Q", scale=ys, axis=None),
        color=alt.Color("depth:N", scale=alt.Scale(domain=[f"depth {d}" for d in (4, view_depth)],
                                                   range=[ui.PALETTE[0], ui.PALETTE[1]]), legend=None),
        detail="episode:N", order="step:Q", tooltip=["depth", "episode", "step"])

    def qmap_chart(d: int) -> alt.Chart:
        q = np.asarray(runs[d]["qmap"])[view_seed]
        pos = np.asarray(maze["grid_pos"])
        ok = np.isfinite(q)
        h = cell / res / 2
        df = pd.DataFrame({"row": pos[..., 0][ok], "col": pos[..., 1][ok], "f": q[ok]})
        df = df.assign(x=df.col - h, x2=df.col + h, y=df.row - h, y2=df.row + h)
        heat = alt.Chart(df).mark_rect().encode(
            x=alt.X("x:Q", scale=xs, axis=None), x2="x2", y=alt.Y("y:Q", scale=ys, axis=None), y2="y2",
            color=alt.Color("f:Q", scale=alt.Scale(scheme="viridis"), legend=None),
            tooltip=[alt.Tooltip("f:Q", format=".2f")])
        return (wall_layer() + heat + ring).resolve_scale(color="independent").properties(height=220)

    m1, m2, m3 = st.columns(3)
    m1.markdown(f"**Rollouts**: :blue[depth 4], :orange[depth {view_depth}]")
    m1.altair_chart((wall_layer() + paths + ring).resolve_scale(color="independent").properties(height=220),
                    width="stretch")
    for col, d in ((m2, 4), (m3, view_depth)):
        fin = runs[d]["final"].iloc[view_seed]
        col.markdown(f"**f(s, π(s,g), g), depth {d}**")
        col.altair_chart(qmap_chart(d), width="stretch")
        col.caption(f"ρ with straight line {fin.spearman_euclid:.2f}, with corridor {fin.spearman_corridor:.2f}")
    st.caption("Left: two evaluation episodes per agent from the start (black ring) to the far goal (red ring), 2 "
               "cells away in a straight line, 6 along the corridor. Middle, right: the critic's value for that goal "
               "(the paper's Fig. 9; yellow = near).")

    curves = pd.concat([r["curves"].assign(depth=d) for d, r in runs.items()], ignore_index=True)
    mc = curves.groupby(["depth", "env_steps"], as_index=False)[["success", "critic_accuracy", "alpha"]].mean()
    st.markdown("**Training curves** (mean over seeds)")
    cols = st.columns(3)
    for col, metric, title in zip(cols, ("success", "critic_accuracy", "alpha"),
                                  ("success rate", "critic accuracy", "entropy coefficient α")):
        col.altair_chart(alt.Chart(mc).mark_line(point=True).encode(
            x=alt.X("env_steps:Q", title="environment steps", axis=alt.Axis(format="~s")),
            y=alt.Y(f"{metric}:Q", title=title), color=alt.Color("depth:O", title="depth"),
            tooltip=["depth", "env_steps", alt.Tooltip(f"{metric}:Q", format=".3f")]).properties(height=200),
            width="stretch")
    ui.download_csv(curves, "crl_curves.csv", key="dl-curves")

    st.markdown(f"**Architecture ablations** (depth {M.ABLATION_DEPTH}, {M.DEFAULT.seeds} seeds)")
    short = {"none": "full", "no_residual": "no residual", "no_layernorm": "no LayerNorm", "relu": "ReLU"}
    ab_runs = {"none": runs[M.ABLATION_DEPTH], **{ab: ui.view(M, f"ablation_{ab}") for ab in M.ABLATIONS[1:]}}
    ab = pd.concat([r["final"].assign(ablation=short[k]) for k, r in ab_runs.items()], ignore_index=True)
    g = ab.groupby("ablation")[["success", "critic_accuracy"]]
    ab_sum = g.mean().add_suffix("_mean").join(g.sem(ddof=1).fillna(0).add_suffix("_sem")).reset_index()
    a1, a2 = st.columns(2)
    for col, metric, title in ((a1, "success", "success rate"), (a2, "critic_accuracy", "critic accuracy")):
        base = alt.Chart(ab_sum.assign(lo=(ab_sum[f"{metric}_mean"] - ab_sum[f"{metric}_sem"]).clip(lower=0),
                                       hi=ab_sum[f"{metric}_mean"] + ab_sum[f"{metric}_sem"]))
        col.altair_chart((base.mark_bar().encode(
            y=alt.Y("ablation:N", title=None, sort=list(short.values())), x=alt.X(f"{metric}_mean:Q", title=title),
            tooltip=["ablation", alt.Tooltip(f"{metric}_mean:Q", format=".3f")])
            + base.mark_errorbar().encode(y=alt.Y("ablation:N", sort=list(short.values())),
                                          x=alt.X("lo:Q", title=title), x2="hi:Q")).properties(height=160),
            width="stretch")
    st.caption("Mean ± s.e.m. over seeds. The paper finds that dropping the skips or LayerNorm, or ReLU instead "
               "of Swish, hurts at large depth; with 3 all-or-nothing seeds at depth 8 these bars overlap.")


with tab_online:
    _online_tab()


with tab_paper:
    p1, p2 = st.columns(2)
    p1.dataframe(M.PAPER_TABLE1.rename(columns={"depth_4": "depth 4", "depth_64": "depth 64"}), hide_index=True,
                 width="stretch")
    p2.altair_chart(alt.Chart(M.PAPER_CURVES).mark_line(point=True).encode(
        x=depth_axis(M.DEPTHS), y=alt.Y("time_at_goal:Q", title="time at goal (paper, of 1000)"),
        color=alt.Color("task:N", title=None), tooltip=["task", "depth", "time_at_goal"]).properties(height=300),
        width="stretch")
    st.caption("The paper's numbers (Table 1 and Fig. 1 data), quoted as references: time at goal out of 1000.")


@ui.fragment
def _train_tab() -> None:
    """Train your own: a knob here reruns this tab alone (a fragment)."""
    st.markdown("Settings take effect when you press **Train**; runs are cached for every visitor. Worth trying: "
                "more seeds at depths 4 and 16 (success is nearly all-or-nothing per seed), and the lifted "
                "observation (x, y) ↦ 2·tanh(tanh(xW₁ + b₁)W₂) in 128-d.")
    spec = M.CONFIG_BOUNDS.specs
    k = st.columns(4)
    maze_name = k[0].selectbox("Maze", list(M.MAZES), key="crl_maze", bind="query-params")
    depth = k[1].selectbox("Depth", list(M.DEPTHS), key="crl_depth", bind="query-params")
    width = k[2].selectbox("Width", M.SWEEP_VALUES["width"], index=1, key="crl_width", bind="query-params")
    batch = k[3].selectbox("Batch", M.SWEEP_VALUES["batch_size"], index=2, key="crl_batch", bind="query-params")
    k = st.columns(4)
    iters = k[0].number_input("Iterations (×200 SGD steps)", int(spec["iterations"].lo), int(spec["iterations"].hi),
                              M.DEFAULT.iterations, key="crl_iters", bind="query-params")
    seeds = k[1].number_input("Seeds (batched)", int(spec["seeds"].lo), int(spec["seeds"].hi), M.DEFAULT.seeds,
                              key="crl_seeds", bind="query-params")
    seed = k[2].number_input("First seed", 0, 10_000, 0, key="crl_seed", bind="query-params")
    ablation = k[3].selectbox("Ablation", list(M.ABLATIONS), key="crl_ablation", bind="query-params")
    k = st.columns(4)
    lift = k[0].selectbox("Observation dim (0 = raw x, y)", [0, M.LIFT_DIM], key="crl_lift", bind="query-params")
    exact = k[1].toggle("Paper-exact (no departures)", False, key="crl_exact", bind="query-params")
    cfg = replace(M.DEFAULT, maze=maze_name, depth=int(depth), width=int(width), batch_size=int(batch),
                  iterations=int(iters), seeds=int(seeds), seed=int(seed), ablation=ablation, obs_lift=int(lift))
    cfg = M.paper_exact(cfg) if exact else cfg
    shipped = [v.arguments()["cfg"] for v in M.VIEWS.values() if v.fn is M.train]
    cost = 0.0 if cfg in shipped else M.cost_units(cfg)
    k[2].metric("Estimated CPU time", "precomputed" if cost == 0 else f"~{cost:.0f} s",
                help=f"on an idle 2-core CPU; a shared server is slower; limit {M.BUDGET:.0f} s")
    go = k[3].button("Train", key="crl_train", type="primary", icon=":material/play_arrow:")
    if go:
        try:
            M.train.budget(cfg=cfg)
            st.session_state["crl_last"] = cfg
        except InputError as exc:
            st.warning(ui.plain(exc))
    last = st.session_state.get("crl_last")
    if last is not None:
        with ui.guard():
            mine = ui.compute(M.train, last, label="Training…", run=True)  # Train was pressed
        f = mine["final"]
        st.markdown(f"**Your run** ({last.maze}, depth {last.depth}, width {last.width}, batch {last.batch_size}, "
                    f"{last.iterations * last.sgd_steps:,} SGD steps, {last.seeds} seed(s)): success "
                    f"{f.success.mean():.2f}, time at goal {f.time_at_goal.mean():.0f}/200, critic accuracy "
                    f"{f.critic_accuracy.mean():.3f} (chance {mine['chance_accuracy']:.4f}), held-out "
                    f"{f.critic_accuracy_fresh.mean():.3f}.")
        cur = mine["curves"].assign(seed=mine["curves"].seed.astype(str))
        r1, r2 = st.columns(2)
        for col, metric in ((r1, "success"), (r2, "critic_accuracy")):
            col.altair_chart(alt.Chart(cur).mark_line(point=True).encode(
                x="iteration:Q", y=alt.Y(f"{metric}:Q"), color="seed:N",
                tooltip=["iteration", "seed", metric]).properties(height=200), width="stretch")
        ui.download_csv(mine["curves"], "crl_my_run.csv", key="dl-mine")

    st.subheader("Sweep")
    s1, s2, s3 = st.columns([1, 2, 1])
    param = s1.selectbox("Parameter", list(M.SWEEP_VALUES), key="crl_sweep_param", bind="query-params")
    choices = M.SWEEP_VALUES[param]
    values = s2.multiselect("Values (base settings above)", choices, default=choices[:2],
                            key=f"crl_sweep_values_{param}", bind="query-params")
    if s3.button("Run sweep", key="crl_sweep", icon=":material/play_arrow:"):
        try:
            M.sweep.budget(cfg=cfg, param=param, values=list(values))
            st.session_state["crl_sweep_last"] = (cfg, param, list(values))
        except InputError as exc:
            st.warning(ui.plain(exc))
    if st.session_state.get("crl_sweep_last"):
        b, p, vals = st.session_state["crl_sweep_last"]
        with ui.guard():
            sw = ui.compute(M.sweep, b, p, vals, label="Sweeping…", run=True)
        tab = sw["summary"].assign(**{p: sw["summary"][p].astype(str)})
        st.altair_chart(alt.Chart(tab).mark_point(size=80).encode(
            x=alt.X(f"{p}:N", sort=[str(v) for v in vals]), y=alt.Y("success:Q", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("critic_accuracy:Q", title="critic acc."),
            tooltip=[p, "seed", "success", "time_at_goal", "critic_accuracy"]).properties(height=260),
            width="stretch")
        ui.download_csv(tab, "crl_sweep.csv", key="dl-sweep")


with tab_train:
    _train_tab()


# --------------------------------------------------------------------------- reproduce panel
st.header("Reproduce: ours beside the paper")
s4, sD = head["summary"].iloc[0], head["summary"].iloc[-1]
rows = [
    {"quantity": f"success, far goal, depth 4 → {int(sD.depth)} (online)",
     "ours": f"{s4.success_mean:.2f} → {sD.success_mean:.2f}", "paper": None,
     "note": "the paper reports time at goal, not success"},
    {"quantity": f"time at goal, depth 4 → {int(sD.depth)}", "ours": f"{s4.time_at_goal_mean:.0f} → "
     f"{sD.time_at_goal_mean:.0f} of 200", "paper": "Ant U4-Maze 11.4 → 286 of 1000 (depth 4 → 64)",
     "note": "different body, maze and scale"},
    {"quantity": "critic accuracy (share of batch)", "ours": f"{s4.critic_accuracy_mean:.3f} / "
     f"{sD.critic_accuracy_mean:.3f} (chance {head['chance_accuracy']:.4f})", "paper": None,
     "note": "the paper reports no accuracy"}]
if critic is not None:
    c4, cD = cs.iloc[0], cs.iloc[-1]
    rows.append({"quantity": f"offline critic ρ with corridor distance, depth 4 → {deep_d}"
                 + (" (far pairs, stitching)" if critic["config"]["far_only"] else ""),
     "ours": f"{c4.spearman_geodesic_mean:.3f} → {cD.spearman_geodesic_mean:.3f} (wide: {wide['spearman']:.3f})",
     "paper": "depth 64 follows the corridor, depth 4 the straight line (Fig. 9)",
     "note": f"straight line alone: ρ = {critic['euclid_scored_spearman']:.2f}"})
ui.reproduce_panel(rows, verdict=verdict)
ui.device_caption()
