"""The page's sentences, built from the analyser's numbers: what to notice, the captions, the rows set beside the
paper's numbers, the methods note. The page lays them out; nothing here imports Streamlit or decides a claim (the
ledger does). ``terms``: the page's glossary links by word (markdown), passed in."""
from __future__ import annotations

from typing import Any, Mapping

from . import config as C


def fmt(x, spec: str) -> str:
    """A number, or "n/a" for a missing one."""
    return "n/a" if x is None or x != x else format(x, spec)


def short_prompt(prompt: str, examples: Mapping[str, str], limit: int = 30) -> str:
    """A prompt's first words, whole, up to ``limit`` characters (an axis label: the chart never cuts it); the
    example set's prompts (``examples``: name -> prompt) by their names (metaphor, Saturday, motto)."""
    named = {p: w for w, p in examples.items()}
    if prompt in named:
        return named[prompt]
    out = ""
    for w in str(prompt).split():
        if len(out) + len(w) + 1 > limit:
            break
        out = f"{out} {w}".strip()
    return out or str(prompt)[:limit]


EXAMPLE_CAPTION = ("**Illustrative text written by this project, not model output.** Four made-up 'models' × three "
                   "prompts × four responses, arranged so that the *metaphor* prompt is a hivemind (almost every "
                   "answer is 'time is a river'), the *Saturday* prompt is diverse, and on the *motto* prompt each "
                   "model repeats itself while models differ.")
COLLECT_CAPTION = ("Gather your own: `python -m toymodels hivemind collect --base-url http://localhost:8000/v1 --model "
                   "NAME --prompts prompts.txt --n 20` samples any OpenAI-compatible endpoint (vLLM, Ollama, "
                   "llama.cpp) into this format; add `--min-p 0.1 --top-p 1.0 --temperature 2.0` for the paper's "
                   "diversity-oriented decoding.")
CALIBRATION_CAPTION = ("In MiniLM, 0.8 is about a paraphrase (the same content in other words); the same idea in "
                       "other words sits near 0.6. The paper's calibration pairs (App. Tables 13-15: essays at "
                       "0.606-0.996, wedding vows 0.819-0.965) are measured with text-embedding-3-small and are not "
                       "available to us as text.")

#: the lab notebook's definitions, for ``ui.blocks`` (two columns: the first five parts, then the rest)
MEASURES = (
    "**Intra-model repetition**: per model *m* and prompt *q*, the mean over its *n* responses' pairs, diagonal "
    "excluded; then the share of pools above τ (the paper: 79% above 0.8).",
    ("tex", r"\bar s_{m,q}=\frac{2}{n(n-1)}\sum_{i<j}\cos(e_i,e_j)"),
    ("tex", r"\text{share}(\tau)=\frac{\#\{(m,q):\ \bar s_{m,q}>\tau\}}{\#\{(m,q)\}}"),
    "**Inter-model homogeneity**: all cross pairs per prompt, then averaged over the prompts *Q* both models answered "
    "(the paper: 0.71–0.82).",
    ("tex", r"\bar s_{a,b}=\frac{1}{|Q|}\sum_{q\in Q}\frac{1}{n_a n_b}\sum_{i\in a}\sum_{j\in b}\cos(e_i,e_j)"),
    "**Vendi score**: the effective number of distinct responses (1 = all identical, *n* = all orthogonal). For n > d "
    "it uses the d × d dual form, which has the same non-zero eigenvalues.",
    ("tex", r"\begin{gathered}\mathrm{VS}=\exp\Big(-\sum_i \lambda_i\log\lambda_i\Big),\\ "
            r"\lambda=\mathrm{eig}\big(EE^\top/n\big)=\mathrm{eig}\big(E^\top E/n\big)\end{gathered}"),
    "**Cluster mixing**: for each response, the number of distinct models among its *N* nearest neighbours (same "
    "prompt, itself excluded), averaged over responses (the paper: ~8 models among the top 50 of 25 × 50 pooled "
    "responses).",
    "**Null floor**: mean similarity of responses to *different* prompts (the paper: 0.1–0.2).",
)


def headline_notice(real: Mapping[str, Any], terms: Mapping[str, str]) -> str:
    """What to notice beside the headline figure (SmolLM2's pools against the null floor)."""
    tp = real["summary"].get("top-p", {})
    mp = real["summary"].get("min-p", {})
    a8 = tp.get("above_0.8", {})
    lo, hi = a8.get("ci", (float("nan"), float("nan")))
    return (f"{a8.get('count', 0)} of {a8.get('n', 0)} pools reach 0.8 ({terms['Clopper-Pearson']} 95% "
            f"[{lo:.2f}, {hi:.2f}]): SmolLM2's pools average {tp.get('open_mean_similarity', float('nan')):.2f} "
            + (f"with top-p and {mp['open_mean_similarity']:.2f} with min-p, " if mp else "")
            + f"against {tp.get('null_floor', float('nan')):.2f} for answers to different prompts (the "
            f"{terms['null floor']}). {terms['MiniLM']} is not the paper's embedder: read against the floor.")


def headline_caption(real: Mapping[str, Any], terms: Mapping[str, str], paper: Mapping[str, Any]) -> str:
    """Under the headline figure: what the bars are, and where the paper's numbers come from."""
    return (f"Bars: the share of the open-ended prompts whose {terms['pool']} of {real['n']} answers has this mean "
            f"similarity, under {terms['top-p']} and {terms['min-p']} decoding; grey: pools of answers to different "
            f"prompts. The paper: {paper['share_above_08'].source} and {paper['share_above_08_minp'].source}, 25 "
            f"models × 100 queries × 50 answers, {paper['embedder'].value}.")


def analyser_notice(s: Mapping[str, Any], pp, prompts: Mapping[str, str]) -> str:
    """What to notice in the analyser's figure (``pp``: the per-prompt table indexed by prompt; ``prompts``: the
    example set's, by name): the three example prompts by name, or any data's three levels against the null
    floor."""
    if s.get("example_set") and set(prompts.values()) <= set(pp.index):
        met, sat, mot = (pp.loc[prompts[w]] for w in ("metaphor", "saturday", "motto"))
        return (f"On *metaphor*, different models are about as similar as one model with itself "
                f"({met['cross_model_similarity']:.2f} vs {met['intra_similarity']:.2f}): the hivemind pattern. On "
                f"*motto* each model repeats itself ({mot['intra_similarity']:.2f}) but models differ "
                f"({mot['cross_model_similarity']:.2f}); *Saturday* sits near the null floor "
                f"({sat['intra_similarity']:.2f} vs {s['null_pair_similarity']:.2f}). Text we wrote, to show the "
                "measurement: read it against the null floor (grey dots), not the paper's 0.8 (red dashes).")
    return (f"Within a model {fmt(s['intra_model_similarity'], '.3f')}, across models "
            f"{fmt(s['inter_model_similarity'], '.3f')}, against a null floor of "
            f"{fmt(s['null_pair_similarity'], '.3f')} (pairs of responses to different prompts, grey dots). "
            "MiniLM's levels sit below the paper's embedder's: compare with the floor, not with the 0.8 line.")


def reproduce_rows(es: Mapping[str, Any], vendi_fixture: float, paper: Mapping[str, Any]) -> list[dict]:
    """Our numbers on the example set beside the paper's (``es``: the headline view's summary)."""
    lo_p, hi_p = paper["inter_model_range"].value
    return [
        {"quantity": "Vendi score of [[1,.9,0],[.9,1,0],[0,0,1]]", "ours": vendi_fixture,
         "paper": C.VENDI_README_SCORE, "note": "vendi-score README (not the paper); checks our eigenvalue entropy"},
        {"quantity": "Share of (model, prompt) pools with mean similarity > 0.8",
         "ours": es["share_pools_above_0.8"], "paper": paper["share_above_08"].value,
         "note": "illustrative example set; paper: 25 models × 100 queries × 50"},
        {"quantity": "Inter-model mean similarity", "ours": es["inter_model_similarity"],
         "paper": f"{lo_p:.2f}–{hi_p:.2f}", "note": "example set (mixes a hivemind and a diverse prompt)"},
        {"quantity": "Null floor: responses to different prompts", "ours": es["null_pair_similarity"],
         "paper": "{:.1f}–{:.1f}".format(*paper["null_floor_range"].value),
         "note": "MiniLM vs text-embedding-3-small"},
        {"quantity": f"Distinct models among {es['mixing_N']} nearest neighbours", "ours": es["mixing_at_N"],
         "paper": "~8 of 25 (top-50)", "note": "example set has 4 models, 16 responses per prompt"},
    ]


def methods() -> str:
    """The lab notebook's note on the embedder, the lexical metrics and the caps (markdown)."""
    return (
        f"* **Embedder:** {C.EMBEDDER}; vectors are L2-normalised, so the similarity matrix is one product "
        "$EE^\\top$. Each distinct text is embedded once per server (a cache keyed by its SHA-256), in batches of "
        f"at most {C.MAX_EMBED_BATCH} (MiniLM's attention scores take about 4 MB a text). The paper uses "
        "OpenAI `text-embedding-3-small`: absolute levels differ between embedders (an independent replication "
        "with MiniLM found a different-prompt floor of 0.099), so compare our numbers with each other and with our "
        "own null floor rather than with the paper's 0.8 literally.\n"
        f"* **Self-BLEU** (Zhu et al. 2018): each response is the hypothesis, the rest of its (model, prompt) pool "
        f"the references, averaged; **sacrebleu {C.SACREBLEU_VERSION}** `BLEU(tokenize='13a', smooth_method='exp', "
        "max_ngram_order=4, effective_order=True)`, scale 0–100, computed from one n-gram pass per response "
        "(identical to the per-hypothesis `sentence_score` loop, see the tests).\n"
        "* **distinct-n** (Li et al. 2016): unique n-grams ÷ total n-grams in a pool (lower-cased word tokens). "
        "**TTR** = types ÷ tokens per response; **MATTR** = mean TTR over sliding windows (length-robust). "
        "**Compression ratio** = UTF-8 bytes ÷ gzip bytes of the pool (higher = more repetitive).\n"
        f"* **Caps:** at most {C.MAX_RESPONSES:,} responses, each truncated to {C.MAX_CHARS:,} characters (with a "
        f"notice); at most {C.MAX_MODELS} models, {C.MAX_PROMPTS} prompts and {C.MAX_POOL:,} responses per (model, "
        f"prompt) pool; model names up to {C.MAX_MODEL_CHARS} and prompts up to {C.MAX_PROMPT_CHARS:,} characters; "
        f"uploads up to {C.MAX_UPLOAD_BYTES // 1_000_000} MB, {C.MAX_ROWS:,} rows and {C.MAX_COLUMNS} columns. "
        f"More than {C.AUTO_EMBED_MAX} new responses wait for a button that says how long embedding takes. Your "
        "names and texts are shown as plain text.")


#: the topic's own terms of art (``toymodels.glossary.terms`` adds the common ones; pages link them with ``ui.term``)
TERMS: Mapping[str, str] = {
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
}
