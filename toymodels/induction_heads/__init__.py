"""Induction heads and the residual stream: Elhage et al., "A Mathematical Framework for Transformer Circuits"
(2021), Olsson et al., "In-context Learning and Induction Heads" (2022), and Theus et al., "Generalized Linear Mode
Connectivity for Transformers" (NeurIPS 2025).

Attention-only transformers (no MLP, no LayerNorm: the circuit algebra is exact) learn to continue sequences of
random tokens repeated with a variable period. Two layers form induction heads (a layer-1 previous-token head read
by a layer-2 head through K-composition) and copy; one layer cannot. The residual stream has no privileged basis,
which is why two trained models line up once an orthogonal map of it is found (Theus et al.). SmolLM2-135M shows
the same heads in a real model.

The package reads like the papers: ``config`` (configurations, bounds, cost; light) <- ``data`` (repeated random
tokens) <- ``model`` (the batched attention-only transformer and its measurement pass) <- ``training`` <-
``experiments`` (every bounded call, the registered study); ``circuits`` (QK/OV circuits, copying and composition
scores, rotations; numpy), ``lmc`` (Theus et al.'s weight matching and loss barrier), ``realmodel`` (SmolLM2),
``analysis`` (the claims' registered thresholds, per seed), ``notebook`` (every configuration tried). Importing the
package imports no torch.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from toymodels.claims import (
    Claim,
    Evidence,
    Quote,
    all_of,
    claims,
    clopper_pearson,
    exact,
    paper_numbers,
    pending,
    precondition,
    share,
    superiority,
)
from toymodels.errors import NotStored
from toymodels.topic import View, lazy_exports, views

from . import analysis as A
from .analysis import PHASE_GAP, REAL_COPYING, REAL_PREFIX  # noqa: F401 - the page quotes these thresholds
from .config import (  # noqa: F401 - the page reads these here
    BOUNDS,
    KNOBS,
    LIVE,
    MAX_SECONDS,
    PERIOD_LABELS,
    PERIODS,
    Config,
    LiveConfig,
    StudyConfig,
    expected_seconds,
    live_seconds,
    log_periods,
    uniform_loss,
)
from .notebook import LAB_NOTEBOOK  # noqa: F401
from .summary import (  # noqa: F401 - the tables the page draws
    ARM_LABELS,
    ARM_LABELS_LMC,
    LAMBDAS,
    attention_frame,
    best_heads,
    circuit_matrices,
    final_losses,
    head_table,
    lmc_frame,
    lmc_table,
    matrix_frame,
    mechanism_table,
    phase_table,
    real_frame,
    run_curves,
    study_curves,
    symmetry_table,
)

TOPIC = "induction-heads"

PAPER = paper_numbers(
    one_layer=Quote("no induction", "Elhage et al. 2021, § One-layer attention-only transformers",
                    "one attention layer implements bigrams and skip-trigrams; copying the token after an earlier "
                    "occurrence of the current token needs two heads composed across layers"),
    two_layers=Quote("induction heads", "Elhage et al. 2021, § Two-layer attention-only transformers",
                     "a two-layer attention-only model forms induction heads: [A][B] ... [A] -> [B]"),
    phase_change=Quote("together", "Olsson et al. 2022, Argument 1 (phase change)",
                       "induction heads form in a phase change, at the same point in training as a sudden improvement "
                       "of in-context learning"),
    copying=Quote("positive eigenvalues", "Elhage et al. 2021, § Copying / OV eigenvalues",
                  "induction heads copy: their OV circuits have mostly positive eigenvalues (copying score near 1)"),
    k_composition=Quote("previous-token head", "Elhage et al. 2021, § K-composition (induction heads)",
                        "the induction head's keys read a layer-1 previous-token head (K-composition)"),
    no_basis=Quote("no privileged basis", "Elhage et al. 2021, § Residual stream (privileged basis)",
                   "without elementwise operations on it the residual stream can be rotated by any orthogonal map "
                   "without changing the model's function"),
    lmc=Quote("low barrier", "Theus et al. 2025, Abstract and § Weight matching",
              "aligned by permutations, orthogonal maps of the residual stream and head circuits, independently "
              "trained transformers are connected by low- or zero-barrier linear paths; permutations alone do not "
              "suffice"),
    real=Quote("induction heads", "Olsson et al. 2022, § Per-token losses and induction heads in large models",
               "trained language models have heads that prefix-match on repeated random tokens and copy"),
)

#: the two other papers the page rests on (the registry's paper is Olsson et al. 2022)
EXTRA_BIBTEX = """@article{elhage2021mathematical,
  title   = {{A Mathematical Framework for Transformer Circuits}},
  author  = {Elhage, Nelson and Nanda, Neel and Olsson, Catherine and Henighan, Tom and Joseph, Nicholas and
             Mann, Ben and Askell, Amanda and Bai, Yuntao and Chen, Anna and Conerly, Tom and others},
  journal = {Transformer Circuits Thread},
  year    = {2021},
  url     = {https://transformer-circuits.pub/2021/framework/index.html}
}

@inproceedings{theus2025generalized,
  title     = {{Generalized Linear Mode Connectivity for Transformers}},
  author    = {Theus, Alexander and Cabodi, Alessandro and Anagnostidis, Sotiris and Orvieto, Antonio and
               Singh, Sidak Pal and Boeva, Valentina},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS 2025)},
  year      = {2025},
  eprint    = {2506.22712},
  archivePrefix = {arXiv},
  url       = {https://arxiv.org/abs/2506.22712}
}
"""

STUDY = StudyConfig(run=Config(eval_every=10))
REAL = dict(n_seq=32, block=50, seed=1)

VIEWS = views(
    View("study", ".experiments:study", dict(cfg=STUDY), label="Training 5 arms x 20 seeds…",
         seconds=sum(expected_seconds(Config(n_layers=n, period_mode=m, eval_every=STUDY.run.eval_every),
                                      STUDY.n_seeds) for n, m in STUDY.arms)),
    View("live", ".experiments:compare_depths", dict(live=LiveConfig()), label="Training 0, 1 and 2 layers…",
         seconds=live_seconds(LiveConfig())),
    View("smollm2", ".experiments:real_model", dict(REAL), label="Measuring SmolLM2-135M's heads…", seconds=60.0),
)
HEADLINE = "study"

REGISTERED = "commit 6aac5bb (2026-11-27)"   # the commit that wrote the claims' rules and thresholds

_SEEDS = f"{STUDY.n_seeds} fresh seeds ({STUDY.first_seed}-{STUDY.first_seed + STUDY.n_seeds - 1})"
_SETUP = (f"d = 64, 4 heads, vocabulary 64, 32 positions, Adam 1e-3, batch 64, {STUDY.run.steps:,} steps, "
          "PyTorch's default initialisation")
_SHARE = (f"share rule: reproduced when the 95% Clopper-Pearson interval of the share of seeds excludes "
          f"{A.SHARE_NULL:g}, not reproduced when it excludes {A.SHARE_EFFECT:g}")


def _study(views) -> dict:
    return views["study"]


def _needs(view: str):
    """A claim's decide function that reads ``view``: "not testable here" by the rule ``pending`` while the view's
    registered run is not in this build."""
    def wrap(fn):
        def decide(views) -> Evidence:
            why = VIEWS[view].pending
            if why:
                return Evidence("n/a", pending(why), seeds=0, note=why)
            return fn(views)
        decide.__name__ = fn.__name__
        return decide
    return wrap


def _share_ev(rows: list[dict], what: str, ours: str, metrics: dict, note: str = "") -> Evidence:
    k, n = sum(r["holds"] for r in rows), len(rows)
    lo, hi = clopper_pearson(k, n)
    return Evidence(ours.format(k=k, n=n), share(k, n, effect=A.SHARE_EFFECT, null=A.SHARE_NULL, what=what),
                    seeds=n, uncertainty=f"95% Clopper-Pearson [{lo:.2f}, {hi:.2f}]", note=note,
                    metrics={"k": k, "n": n, **metrics})


@_needs("study")
def _depth(views) -> Evidence:
    arms = _study(views)["arms"]
    l1, l2 = A.final(arms["L1v"]), A.final(arms["L2v"])
    m, lo, hi = A.t_interval(l1 - l2)
    n = len(l1)
    k2, k1 = int((l2 <= A.COPIES).sum()), int((l1 >= A.NO_COPY).sum())
    d = all_of(superiority(m, (lo, hi), effect=A.DEPTH_EFFECT, null=A.DEPTH_NULL, n=n,
                           what="1-layer minus 2-layer copy loss (nats)"),
               share(k2, n, effect=A.SHARE_EFFECT, null=A.SHARE_NULL, what="2-layer seeds that copy"),
               share(k1, n, effect=A.SHARE_EFFECT, null=A.SHARE_NULL, what="1-layer seeds that do not"))
    return Evidence(f"2 layers {np.median(l2):.2f}, 1 layer {np.median(l1):.2f} nats", d, seeds=n,
                    uncertainty=f"difference {m:.2f}, 95% t [{lo:.2f}, {hi:.2f}]",
                    note=f"Median held-out copy loss over {n} seeds: 2 layers {np.median(l2):.3f} (range "
                         f"{l2.min():.3f}-{l2.max():.3f}), 1 layer {np.median(l1):.3f} ({l1.min():.3f}-"
                         f"{l1.max():.3f}); log 13 = {A.LOG_PERIODS:.3f}, uniform log 64 = {math.log(64):.3f}. "
                         f"{k2}/{n} two-layer seeds copy (loss ≤ {A.COPIES:g}), {k1}/{n} one-layer seeds do not "
                         f"(≥ {A.NO_COPY:g}).",
                    metrics={"loss_2layer_median": float(np.median(l2)), "loss_1layer_median": float(np.median(l1)),
                             "loss_0layer_median": float(np.median(A.final(arms["L0v"]))) if "L0v" in arms else None,
                             "difference": m, "difference_ci": [lo, hi], "copy_2layer": k2, "nocopy_1layer": k1})


@_needs("study")
def _fixed(views) -> Evidence:
    arms = _study(views)["arms"]
    own, cross = A.final(arms["L1f"]), np.asarray(arms["L1f"]["cross_loss"])
    rows = [{"holds": bool(o <= A.FIXED_COPIES and c >= A.NO_COPY)} for o, c in zip(own, cross)]
    return _share_ev(rows, "1-layer fixed-period seeds that copy by an offset", "{k}/{n} seeds",
                     {"own_loss_median": float(np.median(own)), "variable_loss_median": float(np.median(cross))},
                     note=f"The 1-layer model trained on period 16: held-out copy loss {np.median(own):.3f} (median; "
                          f"max {own.max():.3f}) on period 16, {np.median(cross):.2f} on variable periods (min "
                          f"{cross.min():.2f}): it reads a fixed offset, not the previous occurrence.")


def _median(x) -> float:
    """The median of the finite values (NaN, and no warning, when there are none: no seed crossed)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(np.median(x)) if x.size else float("nan")


@_needs("study")
def _phase(views) -> Evidence:
    rows = A.phase(_study(views)["arms"]["L2v"])
    gap, width = _median([r["gap"] for r in rows]), _median([r["width"] for r in rows])
    fall = (f"The loss falls from log 13 to half of it in {width:.0f} steps (median)" if np.isfinite(width) else
            "No seed's loss fell from log 13 to half of it within the run")
    cross = (f" and the induction score crosses its half-rise {gap:+.0f} steps from the loss's crossing (median; "
             if np.isfinite(gap) else ", but no seed's induction score crossed its half-rise in the run ("
             if np.isfinite(width) else ", so no crossing of the induction score could be timed against it (")
    return _share_ev(rows, "2-layer seeds with the phase change", "{k}/{n} seeds",
                     {"gap_median": gap, "width_median": width, "t_loss_median": _median([r["t_loss"] for r in rows])},
                     note=f"{fall}{cross}registered: within ±{A.PHASE_GAP} steps, fall within {A.PHASE_WIDTH} steps).")


@_needs("study")
def _copying(views) -> Evidence:
    rows = A.copying_rows(_study(views)["arms"]["L2v"])
    cs = np.array([r["copying"] for r in rows])
    return _share_ev(rows, "2-layer seeds whose induction head copies", "{k}/{n} seeds",
                     {"copying_median": float(np.median(cs)), "copying_min": float(cs.min())},
                     note=f"OV copying score of the top induction head: median {np.median(cs):.3f}, min "
                          f"{cs.min():.3f} (registered: ≥ {A.COPYING_MIN:g}).")


@_needs("study")
def _prev(views) -> Evidence:
    s = _study(views)
    rows = A.composition_rows(s["arms"]["L2v"], s["k_baseline"])
    fixed = np.asarray(s["arms"]["L2f"]["prev_token"])[:, -1, 0].max(-1) if "L2f" in s["arms"] else None
    k = np.array([r["k_comp"] for r in rows])
    ps = np.array([r["prev_score"] for r in rows])
    fixed_txt = "" if fixed is None else (f" With a fixed period the best layer-1 previous-token score is "
                                          f"{np.median(fixed):.2f} (median).")
    return _share_ev(rows, "2-layer seeds with a composing previous-token head", "{k}/{n} seeds",
                     {"k_comp_median": float(np.median(k)), "prev_score_median": float(np.median(ps)),
                      "k_threshold": rows[0]["threshold"]},
                     note=f"Best layer-1 previous-token score {np.median(ps):.2f} (median); its K-composition with "
                          f"the top induction head {np.median(k):.3f} (median) against the random baseline's "
                          f"{A.K_QUANTILE:.0%} quantile {rows[0]['threshold']:.3f}.{fixed_txt}")


@_needs("study")
def _knockout(views) -> Evidence:
    arm = _study(views)["arms"]["L2v"]
    d_prev, d_other = A.knockout_delta(arm)
    have = np.isfinite(d_prev)
    pre = precondition(have.mean() >= A.SHARE_EFFECT, f"only {have.sum()}/{len(have)} seeds have a previous-token "
                                                      "head to knock out")
    m, lo, hi = A.t_interval(d_prev[have]) if have.sum() > 1 else (float("nan"),) * 3
    d = pre or superiority(m, (lo, hi), effect=A.KNOCK_EFFECT, null=A.KNOCK_NULL, n=int(have.sum()),
                           what="rise of the copy loss (nats)")
    mo = float(np.nanmedian(d_other))
    return Evidence(f"+{m:.2f} nats" if math.isfinite(m) else "n/a", d, seeds=int(have.sum()),
                    uncertainty=f"95% t [{lo:.2f}, {hi:.2f}]",
                    note=f"Zeroing the layer-1 previous-token heads raises the held-out copy loss by {m:.2f} nats "
                         f"(mean); zeroing the layer-1 head with the lowest previous-token score instead: "
                         f"{mo:+.2f} (median).",
                    metrics={"delta": m, "delta_ci": [lo, hi], "delta_other_median": mo})


@_needs("study")
def _basis(views) -> Evidence:
    sym = _study(views)["arms"]["L2v"]["symmetry"]
    h = A.symmetry_holds(sym)
    n = len(np.asarray(sym["none"]))
    d = exact(h["holds"], f"on {n} trained models, a random rotation changes no logit by more than "
                          f"{A.ROT_TOL:g} (worst {h['none']['max']:.1e}; with x/rms(x) {h['rms']['max']:.1e}), while "
                          f"tanh and a LayerNorm gain change some logit by at least {A.BREAK_MIN:g} (smallest "
                          f"{h['tanh']['min']:.2f}, {h['rms_gain']['min']:.2f})")
    return Evidence(f"max |Δ logit| {h['none']['max']:.0e}", d, seeds=1,
                    note=f"Float64, {n} models (seeds), each its own Haar-random rotation. Largest change: "
                         f"rotation only {h['none']['max']:.1e}; with x/rms(x) {h['rms']['max']:.1e}; with tanh "
                         f"{h['tanh']['max']:.2f}; with a LayerNorm gain {h['rms_gain']['max']:.2f}.",
                    metrics={op: h[op]["max"] for op in ("none", "rms", "tanh", "rms_gain")})


def _lmc_rows(views) -> tuple[list[dict], dict]:
    s = _study(views)
    lm = s["arms"]["L2v"]["lmc"]
    rows = A.lmc_rows(lm, s["arms"]["L2v"]["seeds"])
    med = {a: float(np.median([r[f"barrier_{a}"] for r in rows])) for a in lm["arms"]}
    return rows, med


def _barriers_text(rows, med) -> str:
    return (f"Loss barrier (median over {len(rows)} pairs, nats): no alignment {med['none']:.2f}, heads as circuits "
            f"{med['circuits']:.2f}, permutations {med['permutation']:.2f}, orthogonal {med['orthogonal']:.2f}.")


@_needs("study")
def _lmc(views) -> Evidence:
    rows, med = _lmc_rows(views)
    ratio = np.array([r["ratio"] for r in rows])
    return _share_ev(rows, "pairs with a low barrier after orthogonal alignment", "{k}/{n} pairs",
                     {**{f"barrier_{a}_median": v for a, v in med.items()}, "ratio_median": float(np.median(ratio))},
                     note=_barriers_text(rows, med) + f" Orthogonal over unaligned: {np.median(ratio):.2f} (median; "
                                                      f"registered: at most {A.LMC_RATIO:g}).")


@_needs("study")
def _beyond_perm(views) -> Evidence:
    rows, med = _lmc_rows(views)
    diff = np.array([r["barrier_permutation"] - r["barrier_orthogonal"] for r in rows])
    m, lo, hi = A.t_interval(diff)
    d = superiority(m, (lo, hi), effect=A.LMC_EFFECT, null=0.0, n=len(rows),
                    what="permutation-aligned minus orthogonally aligned barrier (nats)")
    return Evidence(f"{m:+.2f} nats", d, seeds=len(rows), uncertainty=f"95% t [{lo:.2f}, {hi:.2f}]",
                    note=_barriers_text(rows, med), metrics={"difference": m, "difference_ci": [lo, hi]})


@_needs("smollm2")
def _real(views) -> Evidence:
    res = views["smollm2"]
    heads = A.real_heads(res)
    clean = [h for h in heads if h["control"] < A.REAL_CONTROL]
    pre = precondition(len(heads) == 0 or len(clean) > 0,
                       "every head meeting the rule also attends to the same offset on random tokens (the score would "
                       "not measure prefix matching)")
    d = pre or exact(len(clean) >= 1, f"{len(clean)} of SmolLM2's {np.asarray(res['prefix']).size} heads prefix-match "
                                      f"(≥ {A.REAL_PREFIX:g}) and copy (≥ {A.REAL_COPYING:g})")
    best = heads[0] if heads else None
    top = np.unravel_index(np.argmax(res["prefix"]), np.asarray(res["prefix"]).shape)
    where = "" if best is None else f"; best L{best['layer']}H{best['head']}: prefix {best['prefix']:.2f}, copying " \
                                    f"{best['copying']:.2f}"
    return Evidence(f"{len(clean)} induction heads{where}", d, seeds=1,
                    note=f"{res['n_seq']} sequences of {res['block']} random tokens repeated once (registered seed "
                         f"{res['seed']}; layers numbered 1-30). Highest prefix-matching score: layer {top[0] + 1} "
                         f"head {top[1]}, "
                         f"{float(np.max(res['prefix'])):.2f} (uniform attention would give {res['uniform']:.3f}).",
                    metrics={"n_induction_heads": len(clean), "prefix_max": float(np.max(res["prefix"])),
                             "heads": [{k: v for k, v in h.items()} for h in clean[:12]]})


CLAIMS = claims(
    Claim("depth", "headline", "Two attention-only layers learn to copy the token after an earlier occurrence "
          "of the current one (induction); one layer cannot.", PAPER["one_layer"].source,
          f"{PAPER['two_layers'].value} (2 layers) / {PAPER['one_layer'].value} (1 layer)",
          f"On {_SEEDS} per depth ({_SETUP}), random tokens repeated with a period drawn from 4-16, held-out copy "
          f"loss at step {STUDY.run.steps:,}: all of (a) superiority: the mean paired difference 1-layer minus "
          f"2-layer, 95% t-interval, null {A.DEPTH_NULL:g} nat, effect {A.DEPTH_EFFECT:g} nats (the issue's pilot); "
          f"(b) the 2-layer model copies (loss ≤ {A.COPIES:g}) and (c) the 1-layer model does not (loss ≥ "
          f"{A.NO_COPY:g}), each by the {_SHARE}.", _depth, registered=REGISTERED),
    Claim("fixed-period-trap", "control", "With a fixed period one layer suffices, by a fixed positional offset "
          "that fails when the period varies: only variable periods separate one layer from two.",
          "issue #42 pilot (a control of this toy)", "copy loss 0.021 with 1 layer and period 16",
          f"On {_SEEDS}, the 1-layer model trained on period 16: held-out copy loss ≤ {A.FIXED_COPIES:g} on period "
          f"16 and ≥ {A.NO_COPY:g} on variable periods 4-16, by the {_SHARE}.", _fixed, registered=REGISTERED),
    Claim("phase-change", "headline", "Induction heads form in a phase change: the in-context loss falls abruptly "
          "in the same window in which the induction score rises.", PAPER["phase_change"].source,
          str(PAPER["phase_change"].value),
          f"On {_SEEDS}, 2 layers, variable periods, held-out set measured every {STUDY.run.eval_every} steps: the "
          f"copy loss falls from log 13 to half of log 13 within {A.PHASE_WIDTH} steps, and the best layer-2 "
          f"head's induction (prefix-matching) score crosses halfway between its first and last value within "
          f"±{A.PHASE_GAP} steps of the loss crossing half of log 13 (linear interpolation between evaluations); "
          f"{_SHARE}.", _phase, registered=REGISTERED),
    Claim("copying", "mechanism", "Induction heads copy: the OV circuit of the layer-2 head with the highest "
          "induction score has mostly positive eigenvalues.", PAPER["copying"].source, str(PAPER["copying"].value),
          f"On {_SEEDS}, 2 layers, variable periods: the eigenvalue copying score sum(λ)/sum(|λ|) of W_E W_V W_O W_U "
          f"of the top induction head is ≥ {A.COPYING_MIN:g}, by the {_SHARE}.", _copying, registered=REGISTERED),
    Claim("previous-token-head", "mechanism", "The induction head's keys read a previous-token head of layer 1 "
          "(K-composition).", PAPER["k_composition"].source, str(PAPER["k_composition"].value),
          f"On {_SEEDS}, 2 layers, variable periods: the best layer-1 head has a previous-token score ≥ "
          f"{A.PREV_MIN:g} and its K-composition score with the top induction head, ||W_QK W_OVᵀ||_F / "
          f"(||W_QK||_F ||W_OV||_F), exceeds the {A.K_QUANTILE:.0%} quantile of the same score for 2,000 draws of "
          f"Gaussian matrices of the same shapes (seed 12345, fixed before the run), by the {_SHARE}.", _prev,
          registered=REGISTERED),
    Claim("knockout", "mechanism", "The composition is causal: zeroing the layer-1 previous-token heads breaks "
          "copying.", PAPER["k_composition"].source, "copying breaks",
          f"On {_SEEDS}, 2 layers, variable periods (precondition: at least {A.SHARE_EFFECT:.0%} of seeds have a "
          f"layer-1 head with a previous-token score ≥ {A.PREV_MIN:g}): superiority of the rise of the held-out copy "
          f"loss when those heads' outputs are zeroed, 95% t-interval, null {A.KNOCK_NULL:g} nat, effect "
          f"{A.KNOCK_EFFECT:g} nats (back to what one layer can do).", _knockout, registered=REGISTERED),
    Claim("no-privileged-basis", "mechanism", "The residual stream has no privileged basis: rotating it by any "
          "orthogonal map leaves the logits unchanged, unless an elementwise operation (a nonlinearity, a "
          "LayerNorm gain) acts on it.", PAPER["no_basis"].source, str(PAPER["no_basis"].value),
          f"Exact rule, on the {STUDY.n_seeds} trained 2-layer variable-period models in float64, each with its own "
          f"Haar-random rotation: the largest change of a held-out logit is ≤ {A.ROT_TOL:g} for the model as "
          f"trained and with x / rms(x) on the residual stream, and ≥ {A.BREAK_MIN:g} with tanh or a LayerNorm-style "
          "gain g ⊙ x / rms(x) (g = 1 + 0.5 z) on it.", _basis, registered=REGISTERED),
    Claim("lmc-low-barrier", "mechanism", "Independently trained transformers are connected by a low-loss straight "
          "line once aligned by an orthogonal map of the residual stream, with their heads matched (Theus et al., "
          "NeurIPS 2025).", PAPER["lmc"].source, str(PAPER["lmc"].value),
          f"On {STUDY.lmc_pairs} disjoint pairs of the 2-layer variable-period seeds (100-101, 102-103, ...): the "
          f"loss barrier sup_λ [L(λθ_A + (1-λ)θ_B) - (λL_A + (1-λ)L_B)] on λ = 0, 0.1, ..., 1 (held-out copy loss), "
          f"after Theus et al.'s weight matching (heads as circuits, orthogonal Procrustes map of the residual stream "
          f"and head permutations, 15 iterations), is at most {A.LMC_RATIO:g} x the barrier of the weights as "
          f"trained, on a pair; {_SHARE}.", _lmc, registered=REGISTERED),
    Claim("lmc-beyond-permutations", "mechanism", "Permutations alone do not align transformers: the orthogonal "
          "map of the residual stream lowers the barrier further (Theus et al.).", PAPER["lmc"].source,
          "permutations alone do not suffice",
          f"On the same {STUDY.lmc_pairs} pairs: superiority of the mean paired difference (barrier after "
          f"permutation-only weight matching minus barrier after orthogonal weight matching), 95% t-interval, null "
          f"0, effect {A.LMC_EFFECT:g} nat (pilot pair 0-1: 1.2).", _beyond_perm, registered=REGISTERED),
    Claim("smollm2-induction-heads", "headline", "A real language model has induction heads: heads that "
          "prefix-match on repeated random tokens and copy.", PAPER["real"].source, str(PAPER["real"].value),
          f"Exact rule on SmolLM2-135M-Instruct (fixed model, fixed inputs: {REAL['n_seq']} sequences of "
          f"{REAL['block']} distinct random token ids repeated once, seed {REAL['seed']}): at least one head with a "
          f"prefix-matching score ≥ {A.REAL_PREFIX:g} (attention from the second copy to the token after the "
          f"current token's first occurrence) and an OV eigenvalue copying score ≥ {A.REAL_COPYING:g}; "
          f"precondition: such a head attends < {A.REAL_CONTROL:g} to the same offset on random tokens that do not "
          "repeat.", _real, registered=REGISTERED),
)


def metrics(views) -> dict:
    """The study's headline numbers (when stored) and the live run's."""
    out = {}
    try:
        arms = _study(views)["arms"]
        for name in arms:
            out[f"copy_loss_{name}_median"] = float(np.median(A.final(arms[name])))
    except (NotStored, KeyError):
        pass
    try:
        live = views["live"]["runs"]
        for n, r in live.items():
            out[f"live_copy_loss_{n}layer"] = float(r["eval_loss"][-1])
    except (NotStored, KeyError):
        pass
    return out


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """The headline: ``quick`` trains the 1- and 2-layer models on variable periods for one seed (the page's live
    comparison, about a minute on one CPU thread) and prints their copy losses; otherwise the registered study
    (5 arms x 20 seeds: hours on one CPU thread, minutes on a GPU)."""
    import pandas as pd

    from toymodels.shipped import reproduce_record
    from toymodels.store import write_tables
    from toymodels.topic import as_progress

    from .experiments import compare_depths, study

    prog = as_progress(progress)
    if quick:
        live = LiveConfig(seed=seed, layers=(1, 2))
        res = compare_depths(live, device=device, progress=prog)
        losses = {f"copy_loss_{n}layer": float(r["eval_loss"][-1]) for n, r in res["runs"].items()}
        if out is not None:
            rows = [{"layers": int(n), "step": int(s), "copy_loss": float(v)} for n, r in res["runs"].items()
                    for s, v in zip(r["eval_step"], r["eval_loss"])]
            write_tables(out, {"copy_loss": pd.DataFrame(rows)})
        return reproduce_record(sys.modules[__name__], {"live": res}, quick, seed, **losses,
                                log_13=A.LOG_PERIODS)
    res = study(StudyConfig(run=STUDY.run, first_seed=STUDY.first_seed + seed), device=device, progress=prog)
    if out is not None:
        rows = [{"arm": a, "seed": s, "copy_loss": float(v)} for a, arm in res["arms"].items()
                for s, v in zip(arm["seeds"], A.final(arm))]
        write_tables(out, {"final_copy_loss": pd.DataFrame(rows)})
    return reproduce_record(sys.modules[__name__], {"study": res}, quick, seed)


__getattr__, __dir__ = lazy_exports(__name__, {
    "run": ".experiments", "compare_depths": ".experiments", "study": ".experiments", "real_model": ".experiments",
    "train": ".training"})
