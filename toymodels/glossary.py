"""Terms of art, defined once: the words of the ledger and the statistics its tests use here, each topic's own
jargon in its ``prose.TERMS``. Pages link a term's first use to its definition (``ui.term``) and list the terms
at the bottom (``ui.glossary``). Plain text (no Streamlit, no markdown beyond ``_x_`` subscripts written as text)."""
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


def topic_terms(topic: str) -> Mapping[str, str]:
    """The topic's own terms (``TERMS`` in ``toymodels/<topic>/prose.py``; none for a topic without one)."""
    import importlib

    name = f"toymodels.{topic.replace('-', '_')}.prose"
    try:
        prose = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if name.startswith(f"{e.name}"):   # no such topic or no prose module; any other missing import is raised
            return {}
        raise
    return getattr(prose, "TERMS", {})


def terms(topic: str | None = None) -> dict[str, str]:
    """Every term a page of ``topic`` may define: the topic's own, then the common ones."""
    return {**(topic_terms(topic) if topic else {}), **COMMON}
