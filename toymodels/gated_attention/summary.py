"""Gated attention: the shipped views' numbers, read for the claims and the page (light: numpy, pandas, scipy).

Every statistic a claim decides on or the page shows is computed here, from the views' tables: the share of the
baseline's sink a gate removes (F-Attn as excess over the uniform floor), its t-interval over seeds, the
massive-activation criterion per seed, the control table of both tasks.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .config import VARIANTS
from .notebook import meets_bands

#: A sink exists in a run when the baseline's F-Attn is at least this many times the uniform floor.
SINK_PRESENT = 2.0
#: The massive-activation criterion, one band for every seed (fixed before the runs of MACT_SEEDS): the first
#: token's largest |h| is at least MACT_RATIO_MIN times its layer's median in some layer of the baseline, and
#: G1's largest such ratio (over all layers, the last included) is at least MACT_CUT_MIN times lower.
MACT_RATIO_MIN = 100.0
MACT_CUT_MIN = 5.0


def t_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper) of the Student-t confidence interval of the mean of ``x`` (NaN bounds for n < 2)."""
    from scipy.special import stdtrit  # = scipy.stats.t.ppf, bit for bit, without importing scipy.stats

    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan"), float("nan")
    half = float(stdtrit(len(x) - 1, 0.5 + level / 2) * x.std(ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion k / n."""
    from scipy.special import betaincinv  # = scipy.stats.beta.ppf, bit for bit, without importing scipy.stats

    a = 1 - level
    lo = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, a / 2))
    hi = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - a / 2))
    return lo, hi


def removal_table(sweep: dict) -> pd.DataFrame:
    """One row per gated variant and seed of a seed sweep: F-Attn, the uniform floor, the same seed's baseline
    F-Attn, ``remaining`` = (F − floor) / (F_baseline − floor), the share of the baseline's excess over the floor
    that the variant keeps, and ``removed`` = 1 − remaining (paper, floor ≈ 0 at its context length: G1
    0.467 → 0.048 removes 0.90); ``sink`` says whether that seed's baseline has a sink at all (F-Attn ≥
    SINK_PRESENT × floor: otherwise the share is undefined and the seed is left out)."""
    s = sweep["summary"]
    base = s[s.variant == "baseline"].set_index("seed")
    rows = []
    for r in s[s.variant != "baseline"].itertuples():
        fb = float(base.loc[r.seed, "fattn"])
        floor = float(r.floor)
        rem = (float(r.fattn) - floor) / (fb - floor) if fb > floor else float("nan")
        rows.append({"variant": r.variant, "seed": int(r.seed), "fattn": float(r.fattn), "floor": floor,
                     "fattn_baseline": fb, "sink": bool(fb >= SINK_PRESENT * floor), "remaining": rem,
                     "removed": 1 - rem, "gate_mean": r.gate_mean, "val_loss": float(r.val_loss),
                     "val_loss_baseline": float(base.loc[r.seed, "val_loss"]), "bayes_ce": float(r.bayes_ce)})
    return pd.DataFrame(rows)


def removal(sweep: dict, variant: str) -> dict:
    """The share of the baseline's sink that ``variant`` removes, over the seeds whose baseline has a sink:
    mean, 95% t-interval, seeds used, mean F-Attn of the variant and of the baseline, the floor."""
    t = removal_table(sweep)
    t = t[t.variant == variant]
    used = t[t.sink]
    m, lo, hi = t_interval(used.removed)
    return {"variant": variant, "removed": m, "lo": lo, "hi": hi, "n": int(len(used)), "n_run": int(len(t)),
            "fattn": float(t.fattn.mean()), "fattn_baseline": float(t.fattn_baseline.mean()),
            "floor": float(t.floor.mean()), "seeds": [int(x) for x in used.seed]}


def control_table(sweeps: dict[str, dict], paper: dict[str, float | None]) -> pd.DataFrame:
    """The controls on every task, one row per task and gated variant: mean F-Attn (baseline and variant), the
    floor, the share of the sink removed with its 95% interval, the gate mean, beside the paper's F-Attn and the
    share it removes (``paper``: variant -> F-Attn, with the baseline's under ``"baseline"``)."""
    rows = []
    for task, sweep in sweeps.items():
        t = removal_table(sweep)
        for v in dict.fromkeys(t.variant):
            r = removal(sweep, v)
            g = t[t.variant == v].gate_mean.astype(float)
            pv, pb = paper.get(v), paper.get("baseline")
            rows.append({"task": task, "variant": v, "label": VARIANTS[v], "fattn_baseline": r["fattn_baseline"],
                         "fattn": r["fattn"], "floor": r["floor"], "removed": r["removed"], "removed_lo": r["lo"],
                         "removed_hi": r["hi"], "seeds": r["n"], "gate_mean": float(g.mean()) if g.notna().any()
                         else None, "paper_fattn": pv,
                         "paper_removed": None if pv is None or pb is None else 1 - pv / pb})
    return pd.DataFrame(rows)


def mact_seed_table(sweep: dict) -> pd.DataFrame:
    """Per seed of the massive-activation sweep: the first token's largest |h| over its layer's median (max over
    layers) for the baseline and G1 elementwise, the cut (baseline / G1), whether the seed meets the criterion
    (MACT_RATIO_MIN, MACT_CUT_MIN), the paper's M-Act (largest |h| per layer, averaged over layers), mean F-Attn
    and the last layer's F-Attn of each (G1 can build a sink there)."""
    s = sweep["summary"].set_index(["variant", "seed"])
    lay = sweep["layers"]
    last = int(lay.layer.max())
    rows = []
    for seed in sweep["seeds"]:
        b, g = s.loc[("baseline", seed)], s.loc[("g1_elementwise", seed)]
        ll = lay[(lay.seed == seed) & (lay.layer == last)].set_index("variant")
        cut = float(b.bos_ratio) / float(g.bos_ratio)
        rows.append({"seed": int(seed), "bos_ratio_baseline": float(b.bos_ratio),
                     "bos_layer_baseline": int(b.bos_layer),
                     "bos_ratio_g1": float(g.bos_ratio), "bos_layer_g1": int(g.bos_layer), "cut": cut,
                     "meets": bool(b.bos_ratio >= MACT_RATIO_MIN and cut >= MACT_CUT_MIN),
                     "mact_baseline": float(b.mact), "mact_g1": float(g.mact),
                     "fattn_baseline": float(b.fattn), "fattn_g1": float(g.fattn),
                     "last_layer_fattn_baseline": float(ll.loc["baseline", "fattn"]),
                     "last_layer_fattn_g1": float(ll.loc["g1_elementwise", "fattn"]),
                     "val_loss_baseline": float(b.val_loss), "val_loss_g1": float(g.val_loss),
                     "bayes_ce": float(b.bayes_ce)})
    return pd.DataFrame(rows)


def loss_table(sweep: dict) -> pd.DataFrame:
    """Per seed: the validation loss of the baseline and of G1 elementwise, their excess over the realised Bayes
    cross-entropy of the same tokens, and G1 minus baseline."""
    s = sweep["summary"].set_index(["variant", "seed"])
    rows = []
    for seed in sweep["seeds"]:
        b, g = s.loc[("baseline", seed)], s.loc[("g1_elementwise", seed)]
        rows.append({"seed": int(seed), "val_loss_baseline": float(b.val_loss), "val_loss_g1": float(g.val_loss),
                     "excess_baseline": float(b.val_loss - b.bayes_ce), "excess_g1": float(g.val_loss - g.bayes_ce),
                     "g1_minus_baseline": float(g.val_loss - b.val_loss)})
    return pd.DataFrame(rows)


def sink_metrics(sink: dict) -> dict:
    """The sink comparison's numbers (flat), for the verdict and the quick reproduction."""
    s = sink["summary"].set_index("variant")
    b, g = s.loc["baseline"], s.loc["g1_elementwise"]
    m = {"fattn_floor": float(sink["floor"]), "fattn_baseline": float(b.fattn), "fattn_g1": float(g.fattn),
         "sink_cut_g1": float(b.fattn / g.fattn), "baseline_sink_over_floor": float(b.fattn / sink["floor"]),
         "sink_rate_baseline": float(b.sink_rate), "sink_rate_g1": float(g.sink_rate),
         "gate_mean_g1": float(g.gate_mean), "val_loss_baseline": float(b.val_loss), "val_loss_g1": float(g.val_loss),
         "bayes_ce": float(sink["bayes_ce"]), "n_heads": int(sink["config"]["n_heads"])}
    for key, col in (("mact_ratio", "mact_ratio"), ("first_token_max", "first_token_max")):
        m[f"{key}_baseline"], m[f"{key}_g1"] = float(b[col]), float(g[col])
    m["mact_token_baseline"] = int(b.mact_pos)
    m["mact_where_baseline"] = f"{b.mact_kind}, layer {b.mact_layer}, pos {b.mact_pos}"
    return m


def mact_metrics(mact: dict) -> dict:
    """The massive-activation comparison's numbers (flat)."""
    s = mact["summary"].set_index("variant")
    b, g = s.loc["baseline"], s.loc["g1_elementwise"]
    m = {"mact_ratio_baseline": float(b.mact_ratio), "mact_ratio_g1": float(g.mact_ratio),
         "mact_token_baseline": int(b.mact_pos), "mact_where_baseline": f"{b.mact_kind}, layer {b.mact_layer}, "
                                                                          f"pos {b.mact_pos}",
         "first_token_max_baseline": float(b.first_token_max), "first_token_max_g1": float(g.first_token_max),
         "mact_val_loss_baseline": float(b.val_loss), "mact_val_loss_g1": float(g.val_loss),
         "mact_bayes_ce": float(mact["bayes_ce"]), "n_heads": int(mact["config"]["n_heads"]),
         "mact_fattn_baseline": float(b.fattn), "mact_fattn_g1": float(g.fattn),
         # the paper's M-Act: the largest |h| of each layer's output, averaged over layers (scale-dependent)
         "mact_paper_def_baseline": float(b.mact), "mact_paper_def_g1": float(g.mact)}
    if "g1_headshared" in s.index:
        h = s.loc["g1_headshared"]
        m.update(fattn_headshared=float(h.fattn), mact_ratio_headshared=float(h.mact_ratio),
                 gate_mean_headshared=float(h.gate_mean))
    m.update(bos_ratio_baseline=float(b.bos_ratio), bos_layer_baseline=int(b.bos_layer),
             bos_ratio_g1=float(g.bos_ratio), bos_layer_g1=int(g.bos_layer))
    m["massive_found"] = meets_bands(b.mact_ratio, b.mact_kind, g.mact_ratio, b.bos_ratio, g.bos_ratio)
    return m


def pair_summary(res: dict, variant: str) -> dict:
    """What the page shows of one comparison (``experiments.compare``): the baseline against ``variant`` (F-Attn,
    its multiple of the uniform floor, the share of the sink removed, the largest activation's ratio and where it
    sits, val losses against the realised Bayes CE)."""
    s = res["summary"].set_index("variant")
    b, g = s.loc["baseline"], s.loc[variant]
    floor = float(res["floor"])
    return {"floor": floor, "fattn_baseline": float(b.fattn), "fattn": float(g.fattn),
            "over_floor_baseline": float(b.fattn) / floor, "over_floor": float(g.fattn) / floor,
            "removed": 1 - (float(g.fattn) - floor) / (float(b.fattn) - floor) if b.fattn > floor else float("nan"),
            "mact_ratio_baseline": float(b.mact_ratio), "mact_ratio": float(g.mact_ratio),
            "mact_where_baseline": f"{b.mact_kind}, layer {b.mact_layer}",
            "bos_ratio_baseline": float(b.bos_ratio), "bos_ratio": float(g.bos_ratio),
            "val_loss_baseline": float(b.val_loss), "val_loss": float(g.val_loss), "bayes_ce": float(res["bayes_ce"]),
            "gate_mean": None if g.gate_mean is None or g.gate_mean != g.gate_mean else float(g.gate_mean),
            "val_loss_2x_baseline": float(b.val_loss_2x), "val_loss_2x": float(g.val_loss_2x)}


#: The late gate "removes" the sink when its final F-Attn is closer to the gate-from-step-0 model's than to the
#: ungated baseline's (paper App. A.7: a gate added during continued training does not remove an existing sink).
def midway_summary(mid: dict, sink: dict) -> dict:
    """The gate added halfway (``experiments.gate_midway``) against the same seed's baseline and gate-from-step-0
    runs of the sink comparison: final F-Attn of each, and whether the late gate undoes the sink."""
    s = sink["summary"].set_index("variant")
    fb, f0 = float(s.loc["baseline", "fattn"]), float(s.loc["g1_elementwise", "fattn"])
    fm = float(mid["summary"]["fattn"])
    return {"fattn_baseline": fb, "fattn_gate_from_start": f0, "fattn_gate_late": fm, "switch": int(mid["switch"]),
            "gate_mean_late": float(mid["summary"]["gate_mean"]), "late_gate_removes": bool(fm < (fb + f0) / 2)}


def mact_seen_table(mact: dict, seed: int = 0) -> pd.DataFrame:
    """``mact_seed_table`` of one shipped comparison of the massive-activation configuration (``compare_all``'s
    ``mact``, seed 0: the seed the search picked the configuration on, so never a claim's seed)."""
    return mact_seed_table({"summary": mact["summary"].assign(seed=seed), "layers": mact["layers"].assign(seed=seed),
                            "seeds": [seed]})
