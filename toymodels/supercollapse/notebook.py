"""The lab notebook: every configuration tried while building this toy, failures included, with what it showed.
The page's "Lab notebook" tab shows it as a table. Plain data (no computation); the numbers in ``result`` were
read off runs of this package (CPU, one thread) on the date in ``when``, except rows marked as quoted."""
from __future__ import annotations

NOTEBOOK = (
    {"when": "build", "what": "Recursion against hand arithmetic, p = 128, constant η = 0.2, B = 16",
     "config": "a = b = 1.5, T = 3000", "result": "E L = 1.1249 (t = 10), 0.5308 (100), 0.2577 (1000), 0.2005 "
     "(2999); gradient flow Σ j^-1.5 exp(-0.4 t j^-1.5) + ζ(1.5, 129) gives 1.1236, 0.5234, 0.2536, 0.1973 (the "
     "gap is the SGD noise term)", "verdict": "consistent"},
    {"when": "build", "what": "The paper notes' prototype numbers at the same setting (quoted)",
     "config": "p = 128, constant η = 0.2, B = 16", "result": "1.0688, 0.5067, 0.2352, 0.1780: lower than ours at "
     "every t; 0.1780 at t = 2999 is 0.0016 above the tail ζ(1.5, 129) = 0.1764, which none of η = 0.2, 0.25, "
     "0.3, 0.4 reaches by t = 3000 (0.2005, 0.1947, 0.1913, 0.1882)",
     "verdict": "not matched: the prototype's setting differs in a way we could not identify; we keep the model "
     "as the notes define it"},
    {"when": "build", "what": "Plain sampler (B p normals a step) against the fast one (p + 2B)",
     "config": "p = 128, 3000 steps, 32 seeds", "result": "3.3 s against 0.42 s; both match the recursion "
     "(tests: moments and a two-sample test of the final loss)", "verdict": "fast sampler for the views"},
    {"when": "build", "what": "Recursion cost", "config": "p = 2048, T = 54,306 steps (γ*)",
     "result": "0.73 s for one schedule, 1.9 s for three advanced together (no gain from batching rows)",
     "verdict": "schedules run as rows of one recursion anyway (simpler bookkeeping)"},
    {"when": "build", "what": "Seeded SGD cost", "config": "sizes 64..512, γ*, linear decay, t0 = 300",
     "result": "1.9 s with 8 seeds, 3.8 s with 20 seeds", "verdict": "20 seeds for the shipped grid"},
    {"when": "build", "what": "Rows of the recursion", "config": "two schedules as two rows vs one row each",
     "result": "m @ λ over 2 rows and over 1 row differed in the last bit", "verdict": "row-by-row sums: a row's "
     "numbers no longer depend on the rows beside it (test)"},
    {"when": "build", "what": "Frontier with the notes' horizon t0 = 300", "config": "sizes 32..512, 4 per octave, "
     "constant rate, runs 4x the horizon", "result": "no size was ever optimal inside its own run: p = 64 still "
     "led when the runs ended", "verdict": "failed: runs far too short; the notes' t0 is below the frontier"},
    {"when": "build", "what": "Frontier, long runs", "config": "sizes 32..512, 4 per octave, runs up to 200x the "
     "t0 = 300 horizon", "result": "optimal horizon t_opt(64) = 829 steps, γ̂ = 1.48 over 15 sizes; t_opt / p^1.5 "
     "= 1.58-1.64 for every size", "verdict": "t0 = 830 (the paper's procedure: horizon from the constant-rate "
     "frontier), set before any run of the default views"},
    {"when": "build", "what": "Bootstrap intervals over seeds", "config": "synthetic seeded curves, 4 sizes, "
     "20 seeds", "result": "percentile: reads Δ/σ about √(S/(S-1)) high, and up to √2 x where Δ is pure floor; "
     "BCa: undefined where every resample lies above the point, below the point beside it", "verdict": "percentile "
     "kept, its two biases stated and tested"},
    {"when": "issue 41", "what": "Intervals that contain their estimates", "config": "the noise view recomputed "
     "with the normal bootstrap (point ± 1.96 sd of 2,000 resampled statistics, the same seed draws); SGD results "
     "bit-identical (only the four *_ci arrays and the misfit tables' bounds changed); 331 s CPU, 28 min wall",
     "result": "linear decay at γ*: Δ/σ 0.23, percentile [0.23, 0.37] -> normal [0.15, 0.30]; exact Δ/σ 0.11, "
     "[0.12, 0.14] -> [0.10, 0.13]; decay noise ratio 0.32 [0.27, 0.36]", "verdict": "the percentile interval "
     "excluded its own estimate (the resampled Δ/σ sit above the point): the normal interval contains it by "
     "construction; every status unchanged. The L0 misfit moved out of the paper's ledger into the page's probe"},
)

COLUMNS = ("when", "what", "config", "result", "verdict")
