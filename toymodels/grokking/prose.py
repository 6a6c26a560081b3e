"""The page's sentences, built from a run's numbers (``summary``, ``study_summary``): what to notice, the
captions under the charts, the caveats. The page lays them out; nothing here imports Streamlit or decides a
claim (the ledger does)."""
from __future__ import annotations

from typing import Any, Mapping

from .config import KNOBS

SINGULAR = ("The kernel matrix became singular during this run, so the kernel regression (ridge λ = 0, as in the "
            "official code) has no solution: the learned metric no longer tells some training pairs apart. This "
            "happens with a large AGOP power s and a small bandwidth L; lower s or raise L.")

SQRTM_NOTE = ("For x − y the official construction takes the square root of a matrix with repeated negative "
              "eigenvalues: scipy's sqrtm then has no principal root and its real part can be non-symmetric (the "
              "kernel only sees M's symmetric part). See the lab notebook.")

#: the circulant deviation of the metric's x-y block
DEVIATION = (r"D(B)=\frac{\lVert B-\operatorname{circ}(B)\rVert_F}{\lVert B-\bar B\rVert_F},\qquad "
             r"\operatorname{circ}(B)_{ij}=\tfrac1p\textstyle\sum_k B_{k,\,k+j-i \bmod p}")
SWEEP_INTRO = ("The run above again for several values of one knob (the other knobs as set above): where the jump "
               "starts, and where test accuracy ends.")

CAVEATS = (
    "**Iteration bookkeeping.** Iteration t solves with the metric M_t (M_0 = I) and reports its accuracies and "
    "loss; D and the heatmap of iteration t are of the metric its AGOP gives, M_{t+1} (the official code logs "
    "the updated M at step t too).",
    "**The split** is a seeded numpy permutation (the official code uses torch's unseeded one).",
    "**The AGOP** is computed exactly, in bounded memory: ∇f_c(x_i) = -(1/L²) M w_ic, so the AGOP is "
    "M H M / L⁴, with H accumulated over chunks of 16 MB and the digit structure of one-hot inputs (tests "
    "compare it with the dense gradient tensor and finite differences).",
    "**M^s** uses the eigendecomposition of the symmetric AGOP (the official code: the real part of "
    "scipy's sqrtm, the same matrix for a PSD AGOP).",
    "**Not tested here:** the paper's neural-network features and its Fourier-multiplication analysis.",
)


def where(cfg) -> str:
    """The run's settings in one phrase."""
    return (f"p = {cfg.p}, {KNOBS['gk_op'].labels[cfg.op]}, {cfg.train_frac:g} of the pairs for training, "
            f"L = {cfg.bandwidth:g}, s = {cfg.power:g}, seed {cfg.seed}")


def headline_notice(s: Mapping[str, Any], rfm: bool) -> str:
    """What to notice in the headline figure."""
    if not rfm:
        return f"This metric is fixed: test accuracy {s['final_test_acc']:.1%} after one solve."
    lvl = f"{s['onset_level']:g}"
    onset = f"never passes {lvl}" if s["onset"] is None else f"passes {lvl} at iteration {s['onset']}"
    return (f"Train accuracy is {s['min_train_acc']:.0%} at every iteration, while test accuracy stays below "
            f"{s['quiet_level']:g} for the first {s['quiet_iters']} iterations and {onset}; by the last it is "
            f"{s['final_test_acc']:.1%}. Dashed: two fixed metrics on the same split, no learning.")


def loss_caption(s: Mapping[str, Any]) -> str:
    """Under the test-loss chart: how long it stays flat."""
    return (f"The test MSE stays within {s['flat_tol']:.0%} of its first value for the first {s['flat_iters']} "
            f"iterations ({s['mse_first']:.4f}), then falls to {s['mse_last']:.4f}.")


def deviation_caption(s: Mapping[str, Any]) -> str:
    """Under the circulant-deviation chart: D falls before the jump."""
    before = "" if s["D_before_onset"] is None else (
        f", to {s['D_before_onset']:.2f} at the last iteration before the jump")
    return (f"D, the distance of M's x-y block from a circulant matrix (0: circulant, about 1: no structure), falls "
            f"from {s['D_first']:.2f}{before}, while test accuracy is still zero; it ends at {s['D_last']:.2f}.")


def study_notice(ss: Mapping[str, Any], study: Mapping[str, Any], s: Mapping[str, Any]) -> str:
    """What to notice in the twenty-split study."""
    return (f"the claims are decided on {ss['n']} fresh random splits (seeds {study['seeds'][0]}-"
            f"{study['seeds'][-1]}), not on the curve above: {ss['grokked']} of {ss['n']} grok. Test accuracy passes "
            f"{s['onset_level']:g} at iteration {ss['onset']} and reaches 0.9 at {ss['t90']} (median, IQR); D has "
            f"fallen to {ss['ratio']} of its first value by then. The random circulant control gives "
            f"{ss['rc_min']:.3f}-{ss['rc_max']:.3f}; M = I at most {ss['identity_max']:.3f}.")


def model(agop: str) -> tuple:
    """The model in words and equations (``agop``: the glossary's link for the word), for ``ui.blocks``."""
    return (f"Kernel regression with the Mahalanobis Gaussian kernel, then the metric from the {agop} of the predictor "
            "at the training points (gradients centred):",
            ("tex", r"K_M(u,v)=\exp\!\Big(-\tfrac{(u-v)^\top M\,(u-v)}{2L^2}\Big),\qquad "
                    r"A=(K_M(X,X)+\lambda I)^{-1}Y,\qquad f(u)=\textstyle\sum_j A_j\,K_M(u,x_j)"),
            ("tex", r"M\;\leftarrow\;\Big(\tfrac1n\textstyle\sum_i \tilde G_i^\top \tilde G_i\Big)^{s},\qquad "
                    r"G_i=\nabla f(x_i)^\top,\quad \tilde G_i=G_i-\tfrac1n\textstyle\sum_k G_k,\quad M_0=I"),
            ("caption", "Inputs one-hot(x) ++ one-hot(y) (2p numbers), targets one-hot((x ∘ y) mod p)."))


def heatmap_caption(label: str, t: int, rfm: bool, deviation: float, agop: str, circulant: str) -> str:
    """Beside the metric's heatmap (``label``: which metric; ``agop``, ``circulant``: the glossary's links)."""
    if not rfm:
        return (f"{label[0].upper() + label[1:]}, its diagonal left out. Its x-y block (top right) has D = "
                f"{deviation:.3f}.")
    return (f"{label}: the {agop} of iteration {t}'s predictor to the power s, which is the next iteration's metric; "
            "its diagonal is left out. The top-right block couples x digits to y digits: "
            f"{circulant} structure shows as stripes along its wrapped diagonals.")


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
    "grokking": "Test accuracy jumping long after training accuracy is perfect.",
    "AGOP": "Average gradient outer product: the mean over training inputs of ∇f ∇fᵀ, the directions in which "
            "the predictor f changes; RFM uses it as the kernel's metric.",
    "RFM": "Recursive Feature Machine: solve a kernel regression, set the kernel's metric to the AGOP of the "
           "solution, repeat.",
    "block-circulant": "A matrix whose blocks are constant along (wrapped) diagonals: the structure modular "
                       "addition has, which the learned metric acquires.",
}
