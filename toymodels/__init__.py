"""toymodels: faithful toy models of the NeurIPS 2025 best papers (the seven award papers and two more of 2025).

One package per topic (``toymodels.<topic>``, listed by ``toymodels.registry``), each following one contract
(``toymodels.topic``: views, claims, bounds), plus the shared core: ``claims`` (the ledger), ``store`` and
``shipped`` (shipped results, the disk cache, verdicts), ``freshness`` (the build-time check of shipped results),
``device`` and ``threads`` (where tensors live, thread policy) and ``cli`` (``python -m toymodels``). This package
never imports Streamlit.
"""

__version__ = "0.1.0"
