"""The lecturer's citation and code: BibTeX for the paper and this app, and the code that rebuilds a view."""
from __future__ import annotations

import dataclasses
from typing import Any

import streamlit as st

from toymodels.registry import Paper


def app_version() -> tuple[str, str | None]:
    """``(version, commit)`` of this app: the package version and the git commit the code was served from
    (read from ``.git`` without running git; None when there is no repository, as in an installed package)."""
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    try:
        ver = version("toymodels")
    except PackageNotFoundError:
        ver = "0"
    git = Path(__file__).resolve().parent.parent / ".git"
    commit = None
    try:
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            path = git / ref
            if path.is_file():
                commit = path.read_text().strip()
            elif (git / "packed-refs").is_file():
                for line in (git / "packed-refs").read_text().splitlines():
                    if line.endswith(" " + ref):
                        commit = line.split()[0]
        else:
            commit = head
    except OSError:
        commit = None
    return ver, (commit[:12] if commit else None)


def bibtex(paper: Paper) -> str:
    """BibTeX for the paper (from the registry) and for this app (version and commit)."""
    surname = paper.authors.split(",")[0].split()[-1].lower()
    first_word = next(w for w in paper.title.lower().split() if w.isalpha() and len(w) > 3)
    authors = " and ".join(a.strip() for a in paper.authors.replace(" and ", ", ").split(","))
    venue, year = paper.venue, paper.year
    ver, commit = app_version()
    return (f"@inproceedings{{{surname}{year}{first_word},\n  title     = {{{paper.title}}},\n"
            f"  author    = {{{authors}}},\n  booktitle = {{{venue}}},\n  year      = {{{year}}},\n"
            f"  eprint    = {{{paper.arxiv}}},\n  archivePrefix = {{arXiv}},\n"
            f"  url       = {{{paper.arxiv_url}}}\n}}\n\n"
            f"@software{{toymodels_explorer,\n  title   = {{NeurIPS 2025 Best Papers Explorer: toy models, "
            f"claim by claim}},\n  version = {{{ver}}},\n  note    = {{commit {commit or 'unknown'}}},\n"
            f"  year    = {{2026}}\n}}\n")


def cite(paper: Paper) -> None:
    """A "Cite" block: BibTeX for the paper and for this app."""
    with st.expander("Cite", icon=":material/format_quote:"):
        st.code(bibtex(paper), language="bibtex")
        st.caption("Every number marked *paper* names its figure or table; every other number is computed by "
                   "`toymodels` at the commit above.")


def call_snippet(package: str, function: str, *args, **kwargs) -> str:
    """Python that rebuilds a view: ``import toymodels.<package> as M`` then ``M.<function>(...)`` with the exact
    arguments (dataclasses as their constructor calls) of the current knobs."""
    def show(v: Any) -> str:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields_ = ", ".join(f"{f.name}={show(getattr(v, f.name))}" for f in dataclasses.fields(v) if f.init)
            return f"M.{type(v).__name__}({fields_})"
        return repr(v)

    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return f"import toymodels.{package} as M\n\nresult = M.{function}({', '.join(parts)})\n"


def code_for_view(snippet: str, cli: str | None = None) -> None:
    """"Code for this view": the Python that rebuilds what is on screen (``call_snippet``) and the command line
    that reproduces the headline."""
    with st.expander("Code for this view", icon=":material/code:"):
        st.code(snippet, language="python")
        if cli:
            st.caption("The headline, from the command line (its last line is JSON):")
            st.code(cli, language="bash")
