"""One metadata registry for every topic: the NeurIPS 2025 award papers and a few more toy models of 2025.

The home page's cards, each page's header, the command line's topic list and the
router in ``Home.py`` all read this table, so a paper is described in one place.
Numbers in ``headline`` are the *paper's* numbers, quoted as references; every
number a page shows beside them comes from running ``toymodels``.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

AWARD = "Best Paper"
RUNNER_UP = "Runner-up"
MORE = "More toy models of 2025"  # solvable toy models of 2025 beyond the award papers (their venue names itself)
NEURIPS = "Advances in Neural Information Processing Systems (NeurIPS 2025)"
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Paper:
    topic: str        # the CLI topic and the page's URL path
    module: str       # the toymodels package that implements the toy (the topic, with "_" for "-")
    short_title: str  # navigation label and browser-tab title
    icon: str
    title: str
    authors: str
    award: str        # AWARD, RUNNER_UP, or MORE (not an award paper)
    track: str
    arxiv: str        # arXiv id
    code: str | None  # official code repository (owner/name), or None
    tldr: str         # the idea in plain words
    claim: str        # the paper's headline claim in one sentence
    headline: str     # the paper's headline number, quoted
    venue: str = NEURIPS  # where the paper appeared, as its own page states (for the citation and the badge)
    year: int = 2025

    @property
    def arxiv_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"

    @property
    def code_url(self) -> str | None:
        return f"https://github.com/{self.code}" if self.code else None

    @property
    def page(self) -> str:
        """Path of the Streamlit page, relative to the repository root.

        Named after the topic, so the page's URL path (/topic) is also the name Streamlit infers from the
        file: on a cold server the first request of a deep link is then found (see ``ui.paper_header``).
        """
        return f"pages/{self.topic}.py"

    @property
    def has_page(self) -> bool:
        return (REPO_ROOT / self.page).is_file()

    @property
    def import_name(self) -> str | None:
        """The package to import for this topic (``toymodels.<module>``), or None if it is not built yet."""
        name = f"toymodels.{self.module}"
        return name if importlib.util.find_spec(name) is not None else None

    def load(self):
        """Import and return the toymodels package behind this paper, or None if not built yet."""
        name = self.import_name
        return None if name is None else importlib.import_module(name)

    @property
    def implemented(self) -> bool:
        """True when the package exists and defines ``reproduce``."""
        return self.import_name is not None and hasattr(self.load(), "reproduce")


PAPERS: tuple[Paper, ...] = (
    Paper(
        topic="diffusion",
        module="diffusion",
        short_title="Diffusion memorization",
        icon=":material/blur_on:",
        title="Why Diffusion Models Don't Memorize: The Role of Implicit Dynamical Regularization in Training",
        authors="Tony Bonnaire, Raphaël Urfin, Giulio Biroli, Marc Mézard",
        award=AWARD,
        track="Main track",
        arxiv="2505.17638",
        code="tbonnair/Why-Diffusion-Models-Don-t-Memorize",
        tldr="A diffusion model trained on n examples learns to generate good samples after a fixed number "
        "of steps, but only starts copying its training set after a number of steps that grows with n, "
        "so early stopping inside that widening window generalises.",
        claim="Generation quality is reached at τ_gen independent of the training-set size n, while "
        "memorisation starts at τ_mem ∝ n.",
        headline="τ_gen ≈ 100K SGD steps for every n; memorisation sets in at τ/n ≈ 300 (CelebA 32×32, U-Net)",
    ),
    Paper(
        topic="gated-attention",
        module="gated_attention",
        short_title="Gated attention",
        icon=":material/tune:",
        title="Gated Attention for Large Language Models: Non-linearity, Sparsity, and Attention-Sink-Free",
        authors="Zihan Qiu, Zekun Wang, Bo Zheng, Zeyu Huang, Kaiyue Wen, Songlin Yang, Rui Men, Le Yu, "
        "Fei Huang, Suozhi Huang, Dayiheng Liu, Jingren Zhou, Junyang Lin",
        award=AWARD,
        track="Main track",
        arxiv="2505.06708",
        code="qiuzh20/gated_attention",
        tldr="Multiply each attention head's output by a sigmoid gate computed from the token's own hidden "
        "state. The gate adds a non-linearity, is sparse, and removes the 'attention sink' on the first token.",
        claim="An elementwise, head-specific sigmoid gate after scaled dot-product attention (G1) lowers "
        "perplexity, stabilises training and removes the attention sink and massive activations.",
        headline="First-token attention 46.7% → 4.8%; massive activation 1053 → 94; PPL 6.026 → 5.761 (15A2B MoE)",
    ),
    Paper(
        topic="deep-crl",
        module="deep_crl",
        short_title="1000-layer RL",
        icon=":material/layers:",
        title="1000 Layer Networks for Self-Supervised RL: Scaling Depth Can Enable New Goal-Reaching Capabilities",
        authors="Kevin Wang, Ishaan Javali, Michał Bortkiewicz, Tomasz Trzciński, Benjamin Eysenbach",
        award=AWARD,
        track="Main track",
        arxiv="2503.14858",
        code="wang-kevin3290/scaling-crl",
        tldr="Contrastive RL learns to reach goals with no reward at all; making its residual networks much "
        "deeper (up to 1024 layers) unlocks qualitatively new goal-reaching behaviour.",
        claim="Scaling the depth of contrastive-RL encoders and actor from 4 to 64+ layers multiplies "
        "goal-reaching performance, with jumps at critical depths.",
        headline="Time at goal, depth 4 → 64: Ant U4-Maze 11.4 → 286 (25×), Ant Big Maze 61 → 441 (7.3×)",
    ),
    Paper(
        topic="hivemind",
        module="hivemind",
        short_title="Artificial hivemind",
        icon=":material/hive:",
        title="Artificial Hivemind: The Open-Ended Homogeneity of Language Models (and Beyond)",
        authors="Liwei Jiang, Yuanjun Chai, Margaret Li, Mickel Liu, Raymond Fok, Nouha Dziri, Yulia Tsvetkov, "
        "Maarten Sap, Alon Albalak, Yejin Choi",
        award=AWARD,
        track="Datasets & Benchmarks",
        arxiv="2510.22954",
        code="liweijiang/artificial-hivemind",
        tldr="Ask many language models the same open-ended question many times: each model repeats itself, "
        "and different models give strikingly similar answers.",
        claim="Language models show strong intra-model repetition and inter-model homogeneity on open-ended "
        "prompts, measured by embedding similarity of sampled responses.",
        headline="In 79% of prompts a model's 50 responses have mean similarity > 0.8; "
        "cross-model similarity 0.71–0.82",
    ),
    Paper(
        topic="superposition",
        module="superposition",
        short_title="Superposition & scaling",
        icon=":material/stacked_line_chart:",
        title="Superposition Yields Robust Neural Scaling",
        authors="Yizhou Liu, Ziming Liu, Jeff Gore",
        award=RUNNER_UP,
        track="Main track",
        arxiv="2505.10465",
        code="liuyz0/SuperpositionScaling",
        tldr="When a model packs many more features than it has dimensions (strong superposition), its loss "
        "falls as 1/width no matter how feature frequencies are distributed.",
        claim="In strong superposition the loss scales as 1/m with model width m, robustly across feature-"
        "frequency distributions; in weak superposition the exponent follows the data, α − 1.",
        headline="Strong-superposition exponent α_m ≈ 1 (1.01±0.05, 1.0±0.1, 0.89±0.05 across three "
        "frequency profiles)",
    ),
    Paper(
        topic="rlvr",
        module="rlvr",
        short_title="RLVR & reasoning",
        icon=":material/psychology:",
        title="Does Reinforcement Learning Really Incentivize Reasoning Capacity in LLMs Beyond the Base Model?",
        authors="Yang Yue, Zhiqi Chen, Rui Lu, Andrew Zhao, Zhaokai Wang, Yang Yue, Shiji Song, Gao Huang",
        award=RUNNER_UP,
        track="Main track",
        arxiv="2504.13837",
        code="LeapLabTHU/limit-of-RLVR",
        tldr="RL with verifiable rewards makes a model find correct answers in fewer tries, but given many "
        "tries the base model solves as many problems or more: RL sharpens, it does not expand.",
        claim="RLVR raises pass@1 but base models overtake RL-trained models at large k: the problems RL "
        "solves are largely a subset of what the base model can already sample.",
        headline="Omni-MATH train: pass@1 9.9 → 26.1 after GRPO, but pass@256 67.2 → 66.3",
    ),
    Paper(
        topic="transductive",
        module="transductive",
        short_title="Transductive online learning",
        icon=":material/sports_esports:",
        title="Optimal Mistake Bounds for Transductive Online Learning",
        authors="Zachary Chase, Steve Hanneke, Shay Moran, Jonathan Shafer",
        award=RUNNER_UP,
        track="Main track",
        arxiv="2512.12567",
        code=None,
        tldr="In online learning an adversary forces d mistakes (the Littlestone dimension); if the learner "
        "sees the unlabeled points in advance, the adversary can only force about √d.",
        claim="With Littlestone dimension d, the optimal mistake bound is d in standard online learning and "
        "Θ(√d) in the transductive setting: a quadratic gap, and it is tight.",
        headline="M_tr = Θ(√d) versus M_std = d (previous best lower bound: Ω(log d))",
    ),
    Paper(
        topic="grokking",
        module="grokking",
        short_title="Grokking without networks",
        icon=":material/grain:",
        title="Emergence in non-neural models: grokking modular arithmetic via average gradient outer product",
        authors="Neil Mallinar, Daniel Beaglehole, Libin Zhu, Adityanarayanan Radhakrishnan, Parthe Pandit, "
        "Mikhail Belkin",
        award=MORE,
        track="Main track",
        arxiv="2407.20199",
        code="nmallinar/rfm-grokking",
        tldr="A kernel machine with no neural network groks modular addition: iterate 'solve the kernel "
        "regression, then set the kernel's metric to the average gradient outer product (AGOP)'. Test accuracy "
        "sits at zero while training accuracy is perfect, then jumps to 100 %, because the learned metric turns "
        "block-circulant.",
        claim="Recursive Feature Machines (a kernel machine whose Mahalanobis metric is the AGOP of its own "
        "predictor) grok modular arithmetic: test accuracy jumps from ~0 to 100 % long after training accuracy is "
        "perfect, with a flat early test loss, and the jump is explained by block-circulant features.",
        headline="Test accuracy ≈ 0 % → 100 % over RFM iterations with training accuracy 100 % throughout "
        "(x + y mod 61, half the pairs for training)",
        venue="International Conference on Machine Learning (ICML 2025)",
    ),
    Paper(
        topic="supercollapse",
        module="supercollapse",
        short_title="Supercollapse",
        icon=":material/ssid_chart:",
        title="Scaling Collapse Reveals Universal Dynamics in Compute-Optimally Trained Neural Networks",
        authors="Shikai Qiu, Lechao Xiao, Andrew Gordon Wilson, Jeffrey Pennington, Atish Agarwala",
        award=MORE,
        track="Main track",
        arxiv="2507.02119",
        code="shikaiqiu/supercollapse",
        tldr="Train models of several sizes, each for its compute-optimal number of steps, and rescale every loss "
        "curve so that it ends at (1, 1): the curves fall on one line. With learning-rate decay they agree more "
        "closely than two random seeds of the same model do.",
        claim="Normalised loss curves of compute-optimally trained models of different sizes collapse onto one "
        "universal curve; with learning-rate decay the spread across sizes falls below the seed-to-seed noise "
        "(supercollapse), and the collapse breaks when the training horizon is scaled sub-optimally.",
        headline="Spread across sizes Δ < seed noise σ with linear decay (supercollapse, Fig. 1c); schedule "
        "constant α = 0.21 (CIFAR-5M), 0.26 (MLP)",
        venue="International Conference on Machine Learning (ICML 2025)",
    ),
    Paper(
        topic="induction-heads",
        module="induction_heads",
        short_title="Induction heads",
        icon=":material/content_copy:",
        title="In-context Learning and Induction Heads",
        authors="Catherine Olsson, Nelson Elhage, Neel Nanda, Nicholas Joseph, Nova DasSarma, Tom Henighan, "
        "Ben Mann, Amanda Askell, Yuntao Bai, Anna Chen, Tom Conerly, Dawn Drain, Deep Ganguli, Zac Hatfield-Dodds, "
        "Danny Hernandez, Scott Johnston, Andy Jones, Jackson Kernion, Liane Lovitt, Kamal Ndousse, Dario Amodei, "
        "Tom Brown, Jack Clark, Jared Kaplan, Sam McCandlish, Chris Olah",
        award=MORE,
        track="Main track",
        arxiv="2209.11895",
        code=None,
        tldr="Two attention-only layers learn to copy what followed the previous occurrence of the current token (an "
        "induction head); one layer cannot. The residual stream has no privileged basis: the symmetry Theus et al. "
        "(NeurIPS 2025) use to line two trained models up.",
        claim="Two-layer attention-only transformers form induction heads (a previous-token head composed with a "
        "copying head) in a phase change that coincides with the drop of the in-context loss; one layer cannot "
        "copy, and real language models carry the same heads.",
        headline="Induction heads form at the same point in training as a sudden drop of the in-context loss "
        "(Olsson et al., Argument 1); one attention-only layer cannot form them (Elhage et al. 2021)",
        venue="Transformer Circuits Thread",
        year=2022,
    ),
)

TOPICS: tuple[str, ...] = tuple(p.topic for p in PAPERS)
_BY_TOPIC = {p.topic: p for p in PAPERS}


def get_paper(topic: str) -> Paper:
    """Look a paper up by its topic name; a clear KeyError names the valid topics."""
    try:
        return _BY_TOPIC[topic]
    except KeyError:
        raise KeyError(f"unknown topic {topic!r}; topics are: {', '.join(TOPICS)}") from None


def read_verdicts() -> dict:
    """topic -> verdict record from ``results/verdicts.json``, as ``precompute`` last wrote it ({} when there is
    none or it is damaged). Light on purpose: Home reads it on a cold server without importing numpy, pandas or
    torch. The folder is ``store.RESULTS_DIR`` when the store is loaded (tests move it), else its default.

    Validated on read: a record of the wrong shape (valid JSON, wrong types) is left out, so Home shows that
    paper without a badge rather than failing for every visitor."""
    import json
    import sys

    store = sys.modules.get("toymodels.store")
    results = store.RESULTS_DIR if store is not None else Path(__file__).resolve().parent / "results"
    try:
        path = results / "verdicts.json"
        if not path.is_file() or path.stat().st_size > 4 << 20:
            return {}
        index = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict):
        return {}
    return {topic: record for topic, record in index.items() if topic in _BY_TOPIC and valid_verdict_record(record)}


# What a record of the verdict index holds: field -> accepted types (every field is required).
VERDICT_RECORD = {"reproduced": (bool, type(None)), "badge": str, "ours": str, "paper": str, "summary": str,
                  "fresh": bool}
CLAIM_FIELDS = ("id", "kind", "status", "ours", "paper")


def valid_verdict_record(record) -> bool:
    """True when ``record`` has every field of ``VERDICT_RECORD`` with its type (strings of at most 2,000
    characters), and its claims (if any) at most 50 rows of ``CLAIM_FIELDS`` strings of at most 500."""
    if not isinstance(record, dict) or not all(
            isinstance(record.get(name, ...), types) and len(str(record[name])) <= 2000
            for name, types in VERDICT_RECORD.items()):
        return False
    claims = record.get("claims", [])
    return isinstance(claims, list) and len(claims) <= 50 and all(
        isinstance(c, dict) and all(isinstance(c.get(k), str) and len(c[k]) <= 500 for k in CLAIM_FIELDS)
        for c in claims)
