"""Shared Streamlit furniture for every page, one concern per module; pages write ``import ui`` and call
``ui.<name>``. Nothing here does science: that lives in ``toymodels``.

  ``compute``  compute slots, ``compute``, ``view``,               ``memory``  allocator policy, the shared memo
               ``view_or_compute``, ``guard``                       ``links``   link hygiene, the bad-link notice
  ``ledger``   ``paper_header``, ``headline``, ``ledger_strip``,     ``tour``    guided tours and lesson links
               ``claims_table``, ``page_end``                       ``cite``    BibTeX, "Code for this view",
  ``form``     ``form``/``knob`` from KNOBS, ``choice``                         ``share`` (cite, code, present)
  ``charts``   theme, palette, ``chart`` with downloads, CSV        ``glossary`` ``term``, ``glossary``
  ``errors``   one error handler for pages and fragments, ``plain``

The functions ``ui.compute``, ``ui.form``, ``ui.tour``, ``ui.cite`` and ``ui.glossary`` shadow their modules'
names as attributes of ``ui``; reach a module's private names with ``from ui.compute import SLOTS``
(``sys.modules`` holds the module).
"""
from .charts import NEUTRAL, PALETTE, SLIDE_WIDTH, chart, csv_safe, download_csv, export_svg
from .cite import Code, app_version, bibtex, call_snippet, cite, code_for_view, presenter_link, share, view_snippet
from .compute import AUTO_SECONDS, SLOTS, compute, guard, refused, view, view_or_compute
from .errors import fragment, plain, report_error
from .form import choice, form, knob, read_link, submitted
from .glossary import blocks, definition, glossary, term
from .ledger import (
                     caveats,
                     claims_table,
                     device_caption,
                     headline,
                     headline_claim,
                     lab_table,
                     ledger_strip,
                     page_end,
                     paper_header,
                     reproduce_panel,
                     shipped_verdict,
                     status_legend,
                     status_word,
)
from .links import in_link, link_notice, link_warning
from .tour import Step, shown, tour

__all__ = ["AUTO_SECONDS", "Code", "NEUTRAL", "PALETTE", "SLIDE_WIDTH", "SLOTS", "Step", "app_version", "bibtex",
           "blocks", "call_snippet", "caveats", "chart", "choice", "cite", "claims_table", "code_for_view", "compute",
           "csv_safe", "definition", "device_caption", "download_csv", "export_svg", "form", "fragment", "glossary",
           "guard", "headline", "headline_claim", "in_link", "knob", "lab_table", "ledger_strip", "link_notice",
           "link_warning", "page_end", "paper_header", "plain", "presenter_link", "read_link", "refused",
           "report_error", "reproduce_panel", "share", "shipped_verdict", "shown", "status_legend", "status_word",
           "submitted", "term", "tour", "view", "view_or_compute", "view_snippet"]
