"""The lab notebook: every configuration tried for this topic, in order, including the ones that failed, with
what it showed. The page's "Lab notebook" tab shows it as a table; numbers here are as recorded at the time (the
shipped views and the ledger are the current ones)."""

LAB_NOTEBOOK = (
    {"when": "issue 16", "what": "ρ toy: per-problem share ρ of every update; ρ grid 0, 0.05, …, 1 at 150 / 400 / "
                                 "800 steps, seeds 0-2, training problems only",
     "outcome": "every seed in issue 16's regime (pass@1 ≥ ×2.5, 0-8 points lost at k = 256, a crossover) for ρ in "
                "0.5-0.8 at 400 steps; ρ = 0.65, the band's centre, became the default. Fitted: its claims are "
                "illustrated, not reproduced."},
    {"when": "issue 28 (not ours)", "what": "an independent reimplementation of the ρ toy, ρ = 0.65, 2 seeds, with a "
                                            "held-out split (fresh u_i, φ_i = 0)",
     "outcome": "held-out pass@1 gain ×1.20 / ×1.38 / ×1.40 / ×1.34 at 150 / 400 / 800 / 1600 steps, held-out "
                "pass@256 -3.1 / -6.9 / -7.8 / -7.0 points: the gain is per-problem memorisation. Training "
                "pass@256 -1.9 / -4.0 / -3.7 / -1.1: the loss is repaired by long training. Both unlike the paper."},
    {"when": "issue 28 (not ours)", "what": "a sketch of a typed toy: K = 16 types, a = 0.2, lr 0.3, one seed",
     "outcome": "train ×5.2 / ×6.0 / ×6.0 and pass@256 -0.9 / -2.4 / -2.6 points; held-out ×5.7 / ×6.6 / ×6.6 and "
                "+1.4 / -1.3 / -1.3. Our typed toy starts from it, with its a, K and lr unchanged."},
    {"when": "package move (#26)", "what": "the four ρ-toy views recomputed after the move (their definition hashes "
                                           "changed: see the report), 9.6 CPU-s",
     "outcome": "bit-for-bit identical to the bundles shipped before the move."},
    {"when": "typed toy, smoke test", "what": "64 + 64 problems, n = 256, 10 and 20 steps, seed 0 (to run the code)",
     "outcome": "ran; too small to read anything from. Unit tests then ran seeds 0-3 on small configurations."},
    {"when": "deciding run (claims committed in f79af10)", "what": "typed toy, defaults (K = 16, a = 0.2, lr 0.3, "
                                                                   "GRPO), claim seeds 1000-1019, lengths 50-800; "
                                                                   "a-sweep a = 0-0.5, seeds 2000-2004; 26 CPU-s",
     "outcome": "pass@1 x3.93 (train) / x3.89 (held-out) at 150 steps, transfer 0.99; pass@256 change +1.7 / +0.6 / "
                "-0.4 / -2.0 points at 150 / 300 / 450 / 800 steps (train): the loss grows with training, as in "
                "Table 3, but RL is still ahead at k = 256 after 150 steps (claim not reproduced) and only 14/20 "
                "seeds cross by k = 1024 (median k 443; claim not reproduced). With a = 0 RL gains ~10 points at "
                "k = 256; with a = 0.5 it loses ~7 (150 steps). Nothing was tuned after the run."},
)
