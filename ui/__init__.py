"""Shared Streamlit furniture for every page, one concern per module; pages write ``import ui`` and call
``ui.<name>``. Nothing here does science: that lives in ``toymodels``.

  ``compute``  compute slots, ``compute``, ``view``, ``guard``      ``memory``  allocator policy, the shared memo
  ``ledger``   ``paper_header``, ``claims_table``, verdicts          ``links``   link hygiene, the bad-link notice
  ``form``     widgets bound to the link by stable ids              ``tour``    guided tours and lesson links
  ``charts``   theme, palette, ``chart`` with downloads, CSV        ``cite``    BibTeX, "Code for this view"
  ``errors``   one error handler for pages and fragments, ``plain``

The functions ``ui.compute``, ``ui.form``, ``ui.tour`` and ``ui.cite`` shadow their modules' names as attributes
of ``ui``; reach a module's private names with ``from ui.compute import SLOTS`` (``sys.modules`` holds the module).
"""
from .charts import NEUTRAL, PALETTE, chart, csv_safe, download_csv
from .cite import app_version, bibtex, call_snippet, cite, code_for_view
from .compute import AUTO_SECONDS, SLOTS, compute, guard, view
from .errors import fragment, plain, report_error
from .form import choice
from .ledger import claims_table, device_caption, paper_header, reproduce_panel, shipped_verdict
from .links import link_notice, link_warning
from .tour import Step, shown, tour

__all__ = ["AUTO_SECONDS", "NEUTRAL", "PALETTE", "SLOTS", "Step", "app_version", "bibtex", "call_snippet", "chart",
           "choice", "cite", "claims_table", "code_for_view", "compute", "csv_safe", "device_caption",
           "download_csv", "fragment", "guard", "link_notice", "link_warning", "paper_header", "plain",
           "report_error", "reproduce_panel", "shipped_verdict", "shown", "tour", "view"]
