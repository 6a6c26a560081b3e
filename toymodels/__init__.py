"""toymodels: faithful toy models of the NeurIPS 2025 best papers (the award papers, and a few more of 2025: the
registry lists them).

One package per topic (``toymodels.<topic>``, listed by ``toymodels.registry``), each following one contract
(``toymodels.topic``: views, bounds, progress; ``toymodels.knobs``: each knob declared once), plus the shared core:
``claims`` (the ledger), ``errors``, ``store`` and ``shipped`` (shipped results, the disk cache, verdicts),
``freshness`` (the build-time check of shipped results), ``device`` and ``threads`` (where tensors live, thread
policy), ``realmodels`` (the real pretrained LMs, loaded once per process), ``tables`` (a visitor's table header),
``glossary`` (terms of art) and ``cli`` (``python -m toymodels``). This package never imports Streamlit.
"""

__version__ = "0.1.0"
