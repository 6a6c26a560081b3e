"""The tables the page draws, built from stored results (light: numpy and pandas, no torch). Statistics and
judgements stay in ``analysis``; this module only reshapes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import analysis as A
from . import circuits as C
from .config import ARM_LABELS_LMC, LAMBDAS  # noqa: F401 - the page reads them here

ARM_LABELS = {"L0v": "0 layers, variable period", "L1v": "1 layer, variable period",
              "L2v": "2 layers, variable period", "L1f": "1 layer, fixed period", "L2f": "2 layers, fixed period"}


# --------------------------------------------------------------------------- one run (the live view, ``run``)


def run_curves(runs: dict) -> pd.DataFrame:
    """Long table of the held-out curves of several runs (``{"0": run, "1": run, "2": run}``): layers, step,
    copy_loss, induction (the best last-layer head), prev_token (the best layer-1 head)."""
    rows = []
    for n, r in runs.items():
        ind, prev = np.asarray(r["induction"]), np.asarray(r["prev_token"])
        for i, s in enumerate(r["eval_step"]):
            rows.append({"layers": int(n), "step": int(s), "copy_loss": float(r["eval_loss"][i]),
                         "induction": float(ind[i, -1].max()) if ind.shape[1] else np.nan,
                         "prev_token": float(prev[i, 0].max()) if prev.shape[1] else np.nan})
    return pd.DataFrame(rows)


def best_heads(run: dict) -> dict:
    """The heads a page shows for a trained run: the last layer's best induction head and layer 1's best
    previous-token head (final scores), with their scores."""
    ind, prev = np.asarray(run["induction"])[-1], np.asarray(run["prev_token"])[-1]
    if not ind.shape[0]:
        return {}
    h = int(ind[-1].argmax())
    out = {"induction_layer": ind.shape[0], "induction_head": h, "induction": float(ind[-1, h])}
    p = int(prev[0].argmax())
    out.update({"prev_head": p, "prev_token": float(prev[0, p])})
    return out


def attention_frame(sample: dict, seq: int, layer: int, head: int) -> pd.DataFrame:
    """One held-out sequence's attention map of one head (layer 1-based) as a long table: query, key, weight, the
    two tokens, and whether the key is a prefix match of the query (the token after an earlier occurrence)."""
    tok = np.asarray(sample["tokens"])[seq]
    per = int(np.asarray(sample["period"])[seq])
    A_ = np.asarray(sample["attn"], dtype=np.float64)[seq, layer - 1, head]
    T = len(tok)
    rows = []
    for t in range(T):
        for j in range(t + 1):
            rows.append({"query": t, "key": j, "weight": float(A_[t, j]), "query_token": int(tok[t]),
                         "key_token": int(tok[j]),
                         "prefix_match": bool(t >= per and j >= 1 and tok[j - 1] == tok[t])})
    return pd.DataFrame(rows)


def matrix_frame(M: np.ndarray, row: str, col: str, value: str = "value", causal: bool = False) -> pd.DataFrame:
    """A matrix as a long table for a heatmap. ``causal``: a position-by-position QK circuit, kept where a query
    can see the key (key <= query) and centred per row over those keys (softmax ignores a constant per query)."""
    M = np.asarray(M, dtype=np.float64)
    r, c = np.meshgrid(np.arange(M.shape[0]), np.arange(M.shape[1]), indexing="ij")
    frame = pd.DataFrame({row: r.ravel(), col: c.ravel(), value: M.ravel()})
    if causal:
        frame = frame[frame[col] <= frame[row]]
        frame[value] = frame[value] - frame.groupby(row)[value].transform("mean")
    return frame


def circuit_matrices(params: dict, heads: dict) -> dict:
    """The three circuits the page draws for a trained 2-layer model (single-instance weights): the previous-token
    head's positional QK circuit (T x T), the induction head's token QK circuit through K-composition with it
    (query token x the key's previous token, V x V) and the induction head's OV circuit (V x V)."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    h2, h1 = heads["induction_head"], heads["prev_head"]
    return {"prev_qk_positions": C.qk_positions(p, 0, h1), "induction_qk": C.induction_qk(p, h2, h1),
            "induction_ov": C.ov_tokens(p, 1, h2)}


def head_table(run: dict) -> pd.DataFrame:
    """Per head of a trained run: layer, head, induction, previous-token and copying score."""
    return pd.DataFrame(run["heads"]) if "heads" in run else pd.DataFrame()


# --------------------------------------------------------------------------- the study


def final_losses(study: dict) -> pd.DataFrame:
    """Per arm and seed: the final held-out copy loss, and on the other period mode's held-out set."""
    rows = []
    for name, arm in study["arms"].items():
        for s, own, cross in zip(arm["seeds"], A.final(arm), arm["cross_loss"]):
            rows.append({"arm": name, "setting": ARM_LABELS.get(name, name), "layers": int(name[1]),
                         "period": "variable" if name.endswith("v") else "fixed", "seed": int(s),
                         "copy_loss": float(own), "other_period_loss": float(cross)})
    return pd.DataFrame(rows)


def study_curves(study: dict, arm: str, every: int = 1) -> pd.DataFrame:
    """Long table of one arm's held-out curves per seed (every ``every``-th evaluation): seed, step, copy_loss,
    induction (best last-layer head), prev_token (best layer-1 head)."""
    a = study["arms"][arm]
    ind, prev = np.asarray(a["induction"]), np.asarray(a["prev_token"])
    rows = []
    for e, s in enumerate(a["seeds"]):
        for i in range(0, len(a["eval_step"]), every):
            rows.append({"seed": int(s), "step": int(a["eval_step"][i]), "copy_loss": float(a["eval_loss"][e, i]),
                         "induction": float(ind[e, i, -1].max()) if ind.shape[2] else np.nan,
                         "prev_token": float(prev[e, i, 0].max()) if prev.shape[2] else np.nan})
    return pd.DataFrame(rows)


def phase_table(study: dict) -> pd.DataFrame:
    return pd.DataFrame(A.phase(study["arms"]["L2v"]))


def mechanism_table(study: dict) -> pd.DataFrame:
    """Per seed of the 2-layer variable-period arm: the composition, copying and knock-out numbers."""
    arm = study["arms"]["L2v"]
    comp = pd.DataFrame(A.composition_rows(arm, study["k_baseline"])).drop(columns=["holds"])
    cop = pd.DataFrame(A.copying_rows(arm))[["seed", "copying"]]
    d_prev, d_other = A.knockout_delta(arm)
    ko = pd.DataFrame({"seed": arm["seeds"], "knockout_prev_heads": d_prev, "knockout_other_head": d_other,
                       "copy_loss": A.final(arm)})
    return comp.merge(cop, on="seed").merge(ko, on="seed")


def symmetry_table(study: dict) -> pd.DataFrame:
    sym = study["arms"]["L2v"]["symmetry"]
    labels = {"none": "as trained (no operation on the stream)", "rms": "x / rms(x) (no gain)",
              "tanh": "tanh on the stream", "rms_gain": "LayerNorm-style gain g ⊙ x / rms(x)"}
    return pd.DataFrame([{"residual stream": labels[op], "largest |Δ logit|": float(np.max(sym[op])),
                          "smallest over seeds": float(np.min(sym[op])),
                          "largest |logit|": float(np.max(sym[f"{op}_scale"]))} for op in labels])


def lmc_frame(study: dict, pair: int | None = None) -> pd.DataFrame:
    """Loss along the straight line between two models, per arm: pair, arm, lambda, loss (all pairs when ``pair``
    is None)."""
    lm = study["arms"]["L2v"]["lmc"]
    seeds = study["arms"]["L2v"]["seeds"]
    losses = np.asarray(lm["losses"])
    pairs = range(losses.shape[0]) if pair is None else [pair]
    return pd.DataFrame([{"pair": f"{seeds[2 * k]}-{seeds[2 * k + 1]}", "arm": arm, "lambda": float(lam),
                          "loss": float(losses[k, a, i])}
                         for k in pairs for a, arm in enumerate(lm["arms"]) for i, lam in enumerate(lm["lambdas"])])


def lmc_table(study: dict) -> pd.DataFrame:
    return pd.DataFrame(A.lmc_rows(study["arms"]["L2v"]["lmc"], study["arms"]["L2v"]["seeds"]))


# --------------------------------------------------------------------------- the real model


def real_frame(res: dict) -> pd.DataFrame:
    """Per head of SmolLM2: layer (from 1), head, prefix-matching score, its control on random tokens, copying score,
    and whether it meets the registered rule."""
    pre, cp, ctrl = (np.asarray(res[k]) for k in ("prefix", "copying", "prefix_control"))
    L, H = pre.shape
    return pd.DataFrame([{"layer": layer + 1, "head": h, "prefix": float(pre[layer, h]),
                          "control": float(ctrl[layer, h]), "copying": float(cp[layer, h]),
                          "induction_head": bool(pre[layer, h] >= A.REAL_PREFIX and cp[layer, h] >= A.REAL_COPYING
                                                 and ctrl[layer, h] < A.REAL_CONTROL)}
                         for layer in range(L) for h in range(H)])
