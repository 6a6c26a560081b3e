"""Terms of art, defined once: the words of the ledger, the statistics its tests use, and each topic's own
jargon. Pages link a term's first use to its definition (``ui.term``) and list the terms at the bottom
(``ui.glossary``). Plain text (no Streamlit, no markdown beyond ``_x_`` subscripts written as text)."""
from __future__ import annotations

from typing import Mapping

#: the four statuses of a claim (the same words as ``toymodels.claims``)
STATUS = {
    "reproduced": "The claim's test, written and committed before the run that decided it, passed on our runs.",
    "not reproduced": "That test failed on our runs: our toy does not show the claim at the tested size.",
    "illustrated": "The toy shows the claim, but a setting was chosen by looking at these very numbers, so it "
                   "cannot count as a test.",
    "not testable here": "Our toy cannot decide the claim: no run yet, too few seeds for the test's power, or "
                         "beyond what a toy can show (the reason is given).",
}

#: statistics and words the ledger's tests use on every page
COMMON = {
    "seed": "The number that fixes a run's random choices (initial weights, data order, samples). Same seed, "
            "same numbers on the CPU; claims over seeds report their spread.",
    "95% CI": "A 95% confidence interval: a range built so that, over repeated experiments, it contains the "
              "true value 95% of the time.",
    "bootstrap": "An interval from resampling the data (here usually the seeds) with replacement many times and "
                 "reading the spread of the recomputed statistic.",
    "Clopper-Pearson": "The exact confidence interval of a share k of n (e.g. seeds that show an effect), from "
                       "the binomial distribution; conservative for small n.",
    "Newcombe": "Newcombe's interval for the difference of two shares (k1/n1 − k2/n2), built from each share's "
                "Wilson interval.",
    "Fisher's exact test": "A test of whether two shares differ, exact for small counts (it enumerates every "
                           "table with the same margins).",
    "TOST": "Two one-sided tests: the way to show that an effect is absent, by showing it is smaller than a "
            "margin in both directions (a 90% interval inside ± the margin).",
    "pre-registered": "Written and committed, with its thresholds, before the run that decides it, so the "
                      "numbers could not shape the test.",
}

#: each topic's own terms, by topic (the page's URL path)
TOPIC: Mapping[str, Mapping[str, str]] = {
    "gated-attention": {
        "SDPA": "Scaled dot-product attention: softmax(QKᵀ/√d)·V, the output of one attention head before the "
                "heads are concatenated and multiplied by W_O.",
        "G1": "The paper's best gate position: a sigmoid gate multiplying each head's SDPA output, elementwise "
              "and head-specific, computed from the token's own hidden state.",
        "G2": "A gate on the value projection instead (after W_V), the paper's second position.",
        "attention sink": "A token (here the first) that receives a large share of attention from queries that "
                          "have nothing better to attend to.",
        "F-Attn": "The share of attention on the first token, averaged over heads and queries (the paper's "
                  "measure of the attention sink).",
        "M-Act": "Massive activation: the largest |h| in each layer's residual stream (its output hidden state), "
                 "averaged over layers: the paper's measure of massive activations (Sun et al., 2024, call an "
                 "activation massive at about a thousand times the median |h|).",
        "Bigram-Backcopy": "A synthetic next-token task (Guo et al., 2024) on which small transformers grow an "
                           "attention sink: tokens follow a random bigram chain, except that after a trigger "
                           "token the token before the trigger is copied.",
    },
    "superposition": {
        "superposition": "Representing more features than the model has dimensions, by giving them directions "
                         "that overlap a little.",
        "N_eff": "The effective number of features: how many features carry the probability mass (1 / Σ p_i² "
                 "for feature frequencies p_i).",
        "Welch bound": "The smallest possible mean squared overlap of n unit vectors in m dimensions, "
                       "(n − m)/(m(n − 1)): how tightly features can be packed.",
        "α_m": "The exponent of the loss against the model width m: loss ∝ m^−α_m.",
        "strong superposition": "Every feature keeps a vector of about unit length, so all n features share the "
                                "m dimensions and the loss is their interference (here: γ < 0, a pull toward unit "
                                "norm).",
        "weak superposition": "Only some features (about m) keep a vector; the rest are dropped, and the loss is the "
                              "frequency of what was dropped (here: γ > 0, ordinary weight decay).",
        "mean squared overlap": "⟨(Ŵ_i·Ŵ_j)²⟩: the mean, over all pairs of features, of the squared cosine between "
                                "their (normalised) vectors; 1/m for random directions when m ≪ n.",
        "Eq. 4": "The paper's prediction of the weak-superposition loss: the expected loss of each feature the model "
                 "left out (‖W_i‖ ≤ 1/2), summed.",
    },
    "grokking": {
        "grokking": "Test accuracy jumping long after training accuracy is perfect.",
        "AGOP": "Average gradient outer product: the mean over training inputs of ∇f ∇fᵀ, the directions in which "
                "the predictor f changes; RFM uses it as the kernel's metric.",
        "RFM": "Recursive Feature Machine: solve a kernel regression, set the kernel's metric to the AGOP of the "
               "solution, repeat.",
        "block-circulant": "A matrix whose blocks are constant along (wrapped) diagonals: the structure modular "
                           "addition has, which the learned metric acquires.",
    },
    "transductive": {
        "Littlestone dimension": "The depth of the deepest complete mistake tree a class shatters: the number of "
                                 "mistakes an adversary can force in the standard online game.",
        "transductive": "The learner sees the whole sequence of unlabeled points in advance; only their labels "
                        "are revealed one by one.",
        "VC dimension": "The size of the largest set of points the class labels in every possible way.",
        "M_tr": "The transductive value of a class: the most mistakes an adversary can force when it must announce "
                "the whole sequence of points first (its labels stay adaptive), against the best learner.",
        "version space": "The hypotheses of the class still consistent with every label revealed so far.",
        "tree class": "Points are the nodes of a complete binary tree; each hypothesis walks one root-to-leaf "
                      "path, labelling its nodes by the turns it takes, and gives every node off its path a "
                      "random bit (1 with the off-path probability p). Depth 2: 7 points, LD = 3.",
        "SOA": "Littlestone's Standard Optimal Algorithm: predict the label whose version space has the larger "
               "Littlestone dimension; it makes at most LD mistakes in the standard game.",
        "Halving": "Predict the majority label of the version space: each mistake at least halves it, so at most "
                   "⌊log₂|H|⌋ mistakes.",
        "rank rule": "The optimal transductive learner for an announced order: predict the label whose version "
                     "space is worth more in the rest of the game along that order; at most M_tr mistakes.",
        "BKM 1997": "Ben-David, Kushilevitz and Mansour (1997): the best bound before this paper, M_tr ≤ 2d/3 "
                    "from disjoint copies of a small class, and an Ω(√log d) lower bound.",
    },
    "diffusion": {
        "τ_gen": "The training time at which generated samples become good (the score error has fallen).",
        "τ_mem": "The training time at which the model starts reproducing its training examples.",
        "f_mem": "The fraction of generated samples that are copies of a training example.",
        "EFM": "Empirical flow matching: training on the exact, noiseless target of the empirical optimal "
               "denoiser.",
        "CFM": "Conditional flow matching: the usual training on noisy single-example targets.",
        "GMM": "Gaussian mixture model: the data are drawn from a few Gaussian blobs, so the exact score is known and "
               "a sample's quality can be measured against it.",
        "DDIM": "A deterministic sampler for diffusion models: it runs the learned denoiser backwards from noise in "
                "a fixed number of steps, the same noise giving the same sample.",
    },
    "deep-crl": {
        "contrastive RL": "Reinforcement learning without reward: a critic learns which states lead to which "
                          "goals by telling true (state, future state) pairs from shuffled ones.",
        "critic": "The network that scores a (state, action, goal) triple: here f(s, a, g) = −‖φ(s, a) − ψ(g)‖, "
                  "high when the goal is likely to follow; the actor picks actions that raise it.",
        "far goal": "The test goal of the U-maze: 2 cells from the start in a straight line, about 6 along the "
                    "corridor, behind a wall.",
        "solved seed": "A seed (one agent) whose final success rate at the far goal is above 0.5. Success is "
                       "nearly all-or-nothing per seed, so the test counts solved seeds.",
        "residual block": "Four Dense layers (each followed by LayerNorm and Swish) with a skip connection around "
                          "them; depth counts the Dense layers.",
        "value map": "The critic's value f(s, π(s, g), g) of each position s for one goal g, drawn over the maze "
                     "(the paper's Fig. 9).",
        "Spearman ρ": "The rank correlation of two quantities (1: the same order; 0: unrelated); here of the "
                      "critic's value with minus a distance, along the corridor or in a straight line.",
        "time at goal": "The paper's score: of 1000 environment steps, how many the agent spends at the goal.",
    },
    "rlvr": {
        "RLVR": "Reinforcement learning with verifiable rewards: the reward is 1 when an automatic checker "
                "accepts the answer.",
        "pass@k": "The probability that at least one of k sampled answers is correct (estimated without bias "
                  "from n ≥ k samples).",
        "GRPO": "Group Relative Policy Optimization: sample a group of G answers per problem, score each 1 or 0 by "
                "the checker, and weight each answer's gradient by its reward minus the group's mean, over the "
                "group's standard deviation (no value network).",
        "distilled": "A model trained to imitate a teacher's answers (supervised fine-tuning), not by RL: it can "
                     "learn strategies the base model almost never samples.",
        "atypical problem": "A problem of the toy that its type's usual strategy does not solve: another strategy, "
                            "one the base model samples now and then, does.",
        "crossover k": "The number of samples k at which the base model's pass@k catches up with the RL model's.",
        "ρ toy": "This page's earlier toy: each problem has its own logits beside the shared ones, and a share ρ of "
                 "every update goes to them; ρ was tuned to land in the paper's regime (illustrated, not tested).",
    },
    "hivemind": {
        "homogeneity": "How similar the answers are: within one model (it repeats itself) and across models "
                       "(they answer alike), measured by embedding similarity.",
        "pool": "The answers one model gives to one prompt (here 10, the paper 50); its mean pairwise similarity is "
                "the paper's measure of how much the model repeats itself.",
        "null floor": "The mean similarity of answers to different prompts: what unrelated text scores in the "
                      "embedder's space, the yardstick a similarity is read against.",
        "top-p": "Nucleus sampling: sample from the smallest set of tokens whose probabilities add up to p (here "
                 "0.9, temperature 1), the paper's default decoding.",
        "min-p": "Sample only tokens whose probability is at least a share (here 0.1) of the most likely token's; "
                 "with temperature 2, the paper's diversity-oriented decoding.",
        "MiniLM": "all-MiniLM-L6-v2, a small sentence embedder (384 dimensions) we use to embed answers; the paper "
                  "uses OpenAI's text-embedding-3-small, whose similarities run higher.",
    },
    "supercollapse": {
        "supercollapse": "Normalised loss curves of different model sizes agreeing more closely than two seeds "
                         "of one model do (spread Δ below the seed noise σ).",
        "compute-optimal": "Trained for the number of steps that gives the lowest loss for the compute spent.",
    },
    "induction-heads": {
        "copy loss": "The mean cross-entropy (in nats) of the next token over the positions where it is a copy of "
                     "an earlier one (from the second period on): 0 for perfect copying.",
        "induction head": "An attention head that attends to the token after the previous occurrence of the current "
                          "token and copies it: [A][B] … [A] → [B]. It needs a previous-token head in an earlier "
                          "layer.",
        "attention-only": "A transformer with attention layers and nothing else: no MLP, no LayerNorm, no biases, so "
                          "every path from a token to a logit is a product of weight matrices.",
        "log 13": "The loss of a model that knows the next token is one of the 13 tokens a possible period (4-16) "
                  "back, but not which: log 13 ≈ 2.56 nats. log 64 ≈ 4.16 is a uniform guess.",
        "K-composition": "A layer-2 head's keys reading what a layer-1 head wrote into the residual stream: how an "
                         "induction head finds the token after the previous occurrence.",
        "privileged basis": "Coordinates of the residual stream that mean something on their own; an attention-only "
                            "model has none (any rotation gives the same function).",
        "barrier": "How far the loss rises above the straight line between two models when their weights are "
                   "interpolated; a low barrier means the two are linearly mode-connected.",
    },
}


def terms(topic: str | None = None) -> dict[str, str]:
    """Every term a page of ``topic`` may define: the topic's own, then the common ones."""
    return {**(TOPIC.get(topic, {}) if topic else {}), **COMMON}
