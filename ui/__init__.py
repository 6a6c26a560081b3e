"""Shared Streamlit furniture for every page, one concern per module; pages write ``import ui`` and call
``ui.<name>``. Nothing here does science: that lives in ``toymodels``.

  ``compute``  compute slots, ``compute``, ``view``, ``guard``      ``memory``  allocator policy, the shared memo
  ``ledger``   ``paper_header``, ``headline``, ``ledger_strip``,     ``links``   link hygiene, the bad-link notice
               ``claims_table``, verdicts                           ``tour``    guided tours and lesson links
  ``form``     ``form``/``knob`` from KNOBS, ``choice``                  ``cite``    BibTeX, "Code for this view",
  ``charts``   theme, palette, ``chart`` with downloads, CSV                    ``share`` (cite, code, present)
  ``errors``   one error handler for pages and fragments, ``plain`` ``glossary`` ``term``, ``glossary``

The functions ``ui.compute``, ``ui.form``, ``ui.tour``, ``ui.cite`` and ``ui.glossary`` shadow their modules'
names as attributes of ``ui``; reach a module's private names with ``from ui.compute import SLOTS``
(``sys.modules`` holds the module).
"""
from .charts import NEUTRAL, PALETTE, SLIDE_WIDTH, chart, csv_safe, download_csv, export_svg
from .cite import app_version, bibtex, call_snippet, cite, code_for_view, presenter_link, share, view_snippet
from .compute import AUTO_SECONDS, SLOTS, compute, guard, view
from .errors import fragment, plain, report_error
from .form import choice, form, knob, read_link, submitted
from .glossary import definition, glossary, term
from .ledger import (
                     claims_table,
                     device_caption,
                     headline,
    headline_claim,
                     ledger_strip,
                     paper_header,
                     reproduce_panel,
                     shipped_verdict,
                     status_legend,
                     status_word,
)
from .links import in_link, link_notice, link_warning
from .tour import Step, shown, tour

__all__ = ["AUTO_SECONDS", "NEUTRAL", "PALETTE", "SLIDE_WIDTH", "SLOTS", "Step", "app_version", "bibtex",
           "call_snippet", "chart", "choice", "cite", "claims_table", "code_for_view", "compute", "csv_safe",
           "definition", "device_caption", "download_csv", "export_svg", "form", "fragment", "glossary", "guard",
           "headline",
           "headline_claim", "in_link", "knob", "ledger_strip", "link_notice", "link_warning", "paper_header", "plain",
           "presenter_link", "read_link",
           "report_error", "reproduce_panel", "share", "shipped_verdict", "shown", "status_legend", "status_word",
           "submitted", "term", "tour", "view", "view_snippet"]
