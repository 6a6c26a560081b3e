"""The lecturer's citation and code: BibTeX for the paper and this app, and the code that rebuilds a view."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

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
        if git.is_file():  # a git worktree: ".git" names the worktree's own directory
            git = Path(git.read_text().split("gitdir:", 1)[1].strip())
        common = git / "commondir"  # a worktree's branches live in the main repository
        shared = (git / common.read_text().strip()).resolve() if common.is_file() else git
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            path = next((d / ref for d in (git, shared) if (d / ref).is_file()), None)
            if path is not None:
                commit = path.read_text().strip()
            elif (shared / "packed-refs").is_file():
                for line in (shared / "packed-refs").read_text().splitlines():
                    if line.endswith(" " + ref):
                        commit = line.split()[0]
        else:
            commit = head
    except OSError:
        commit = None
    return ver, (commit[:12] if commit else None)


APP_TITLE = "NeurIPS 2025 Best Papers Explorer: toy models, claim by claim"
APP_AUTHOR = "NeurIPS 2025 Best Papers Explorer contributors"
URL_ENV = "TOYMODELS_URL"


def app_url() -> str:
    """Where this app is served: ``TOYMODELS_URL`` (a hosted demo sets it), else the address the visitor's
    browser used (its scheme, host and port), else a local server's default."""
    import os
    from urllib.parse import urlsplit

    env = os.environ.get(URL_ENV, "").strip()
    if env:
        return env
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        parts = urlsplit((st.context.url if get_script_run_ctx(suppress_warning=True) is not None else "") or "")
        if parts.scheme in ("http", "https") and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}/"
    except Exception:  # noqa: BLE001 - no browser session (tests, the command line)
        pass
    return "http://localhost:8501/"


def _protect(title: str) -> str:
    """A title for BibTeX: in an extra pair of braces, so no style lowercases its acronyms or names."""
    return "{{" + title.replace("{", "").replace("}", "") + "}}"


def bibtex(paper: Paper) -> str:
    """BibTeX for the paper (from the registry) and for this app (author, version, commit and address).
    Titles are brace-protected."""
    surname = paper.authors.split(",")[0].split()[-1].lower()
    first_word = next(w for w in paper.title.lower().split() if w.isalpha() and len(w) > 3)
    authors = " and ".join(a.strip() for a in paper.authors.replace(" and ", ", ").split(","))
    venue, year = paper.venue, paper.year
    ver, commit = app_version()
    return (f"@inproceedings{{{surname}{year}{first_word},\n  title     = {_protect(paper.title)},\n"
            f"  author    = {{{authors}}},\n  booktitle = {{{venue}}},\n  year      = {{{year}}},\n"
            f"  eprint    = {{{paper.arxiv}}},\n  archivePrefix = {{arXiv}},\n"
            f"  url       = {{{paper.arxiv_url}}}\n}}\n\n"
            f"@software{{toymodels_explorer,\n  title   = {_protect(APP_TITLE)},\n"
            f"  author  = {{{{{APP_AUTHOR}}}}},\n  version = {{{ver}}},\n"
            f"  note    = {{commit {commit or 'unknown'}}},\n  url     = {{{app_url()}}},\n"
            f"  year    = {{2026}}\n}}\n")


def cite(paper: Paper) -> None:
    """A "Cite" block: BibTeX for the paper and for this app."""
    with st.expander("Cite", icon=":material/format_quote:"):
        _cite_body(paper)


def _cite_body(paper: Paper) -> None:
    st.code(bibtex(paper), language="bibtex")
    st.caption("Every number marked *paper* names its figure or table; every other number is computed by "
               "`toymodels` at the commit above.")


#: the first lines of every "Code for this view": one thread, as the page computes (torch's and BLAS's sums
#: depend on the thread count, so a number computed on two threads can differ in its last digits, or more
#: after training)
THREADS_PREAMBLE = ("from toymodels.threads import set_thread_policy\n\n"
                    "set_thread_policy(1)  # one thread, as the page: sums in torch and BLAS depend on the thread "
                    "count\n")


class Code(str):
    """An expression shown as itself in a code snippet (``call_snippet(..., ui.Code("df"))`` writes ``df``)."""

    def __repr__(self) -> str:
        return str(self)


def call_snippet(package: str, function: str, *args, **kwargs) -> str:
    """Python that rebuilds a view: ``import toymodels.<package> as M`` then ``M.<function>(...)`` with the exact
    arguments (dataclasses as their constructor calls) of the current knobs."""
    def show(v: Any) -> str:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields_ = ", ".join(f"{f.name}={show(getattr(v, f.name))}" for f in dataclasses.fields(v) if f.init)
            return f"M.{type(v).__name__}({fields_})"
        return repr(v)

    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return (f"{THREADS_PREAMBLE}import toymodels.{package} as M\n\n"
            f"result = M.{function}({', '.join(parts)})\n")


def view_snippet(module, name: str) -> str:
    """Python that reads a shipped view of the page (``toymodels.shipped.load_view``: no recomputation), naming the
    call that made it and its cost, for a snippet whose number comes from a precomputed study."""
    v = module.VIEWS[name]
    package = module.__name__.removeprefix("toymodels.")
    ref = v.ref(module.__name__)
    fn = ref.__name__ if callable(ref) else ref.rpartition(":")[2]
    try:
        from toymodels import shipped

        call = call_snippet(package, fn, **shipped.view_arguments(module, name)).rsplit("result = ", 1)[1].strip()
    except Exception:  # noqa: BLE001 - arguments that need another stored view: name the view only
        call = f"M.{fn}(...)"
    if "\n" in call or len(call) > 400:  # an argument that prints as a table (another view's data): name it only
        call = f"M.{fn}(...)"
    cost = f", about {v.seconds / 60:.0f} CPU-minutes" if v.seconds and v.seconds >= 90 else (
        f", about {v.seconds:.0f} CPU-s" if v.seconds else "")
    return (f"{THREADS_PREAMBLE}import toymodels.{package} as M\nfrom toymodels import shipped\n\n"
            f"result = shipped.load_view(M, {name!r})  # as shipped with the app; it was made by\n"
            f"# {call}{cost}\n")


def prints(shown: Mapping[str, tuple[str, Any]]) -> str:
    """Lines that print the numbers a page shows: ``{label: (expression over result, value shown)}`` ->
    ``print("label:", expression)  # the page shows value``."""
    out = []
    for label, (expr, value) in shown.items():
        out.append(f"print({label + ':'!r}, {expr})  # the page shows {value}; it is {expr}")
    return "\n".join(out) + ("\n" if out else "")


def code_for_view(snippet: str, cli: str | None = None, shown: Mapping[str, tuple[str, Any]] | None = None,
                  expander: bool = True) -> None:
    """"Code for this view": the Python that rebuilds what is on screen (``call_snippet``), ending in lines that
    print the numbers the page shows and name the key that holds each (``shown``: ``{label: (expression over
    result, value shown)}``), and the command line that reproduces the headline."""
    box = st.expander("Code for this view", icon=":material/code:") if expander else st.container()
    with box:
        st.code(snippet + (prints(shown) if shown else ""), language="python")
        if cli:
            st.caption("The headline, from the command line (its last line is JSON):")
            st.code(cli, language="bash")


def presenter_link(path: str) -> str:
    """The page's link for a projector: light theme, sidebar collapsed (``?embed_options=light_theme&present=1``;
    Home.py collapses the sidebar when ``present`` is in the link)."""
    return f"{app_url().rstrip('/')}/{path.lstrip('/')}?embed_options=light_theme&present=1"


def share(paper: Paper, snippet: str, cli: str | None = None, shown: Mapping[str, tuple[str, Any]] | None = None,
          key: str = "share") -> None:
    """Cite, Code for this view and Present, in one place (the same on every page): three expanders side by
    side (stacked on a phone)."""
    with st.container(key=key):
        st.subheader("Cite, code, present", anchor="share")
        cite_col, code_col, show_col = st.columns([1, 1, 1])
        with cite_col.expander("Cite", icon=":material/format_quote:"):
            _cite_body(paper)
        with code_col.expander("Code for this view", icon=":material/code:"):
            code_for_view(snippet, cli, shown, expander=False)
        with show_col.expander("Present this page", icon=":material/co_present:"):
            st.markdown("For a projector: the light theme, the sidebar folded away. Open this link (it keeps "
                        "no knob settings; add a tour step with `&tour=1`):")
            st.code(presenter_link(paper.topic), language=None, wrap_lines=True)
            st.caption("Every figure has SVG and PNG buttons under it, drawn at least as wide as on a 1400 px "
                       "screen, on white.")


