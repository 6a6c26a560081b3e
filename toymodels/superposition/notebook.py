"""The lab notebook: every configuration tried for the superposition toy, including the failures (the page's last
tab shows it)."""
import pandas as pd

TRIED = pd.DataFrame([
    ("4000 × 256, lr 1e-2 (notes' CPU setting)", "strong α_m 0.84 (0.96 on m ≥ 20)", "under-trained at m = 80"),
    ("4000 × 128, paper-large lr (old --quick)", "strong α_m 0.78–0.83",
     "under-trained: loss at m = 80 0.136 vs 0.084"),
    ("12000 × 128, paper-large lr (issue 15 re-check)", "strong α_m 1.03 (1.10 on m ≥ 20)",
     "converged by the 2 % rule"),
    ("exponential τ = 39 (400 rescaled to n = 1000)", "strong α_m 1.59", "N_eff = 78 ≈ max m: the exponent breaks"),
    ("exponential τ = 400 / 1000 at n = 10240, 4000 steps", "0.78 / 0.75", "under-training again, not the profile"),
    ("padding all widths to the widest", "1.25× faster than a loop", "replaced by per-width batches sharing data"),
    ("per-width batches sharing data, dense gradients", "0.91× the same engine fed one model at a time",
     "batching alone buys nothing: the products dominate"),
    ("+ sparse output side (z > 0 on < 1 %), fused Adam, sparse evaluation",
     "4.2× less CPU than plain PyTorch per model (178 vs 753 s)",
     "the shipped configuration, bench/bench_superposition.py --full"),
], columns=["what", "result", "reading"])
