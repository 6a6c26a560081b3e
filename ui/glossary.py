"""Terms of art defined where they are used: ``term`` links a word to its definition (shown on hover, and in the
page's glossary at the bottom, where the link leads); ``glossary`` draws that list. The definitions live in
``toymodels.glossary``."""
from __future__ import annotations

import streamlit as st

from toymodels import glossary as G

ANCHOR = "glossary"


def _definition(word: str, topic: str | None) -> str:
    found = G.terms(topic).get(word) or G.STATUS.get(word)
    if found is None:
        raise KeyError(f"{word!r} is not in toymodels.glossary (topic {topic!r})")
    return found


def definition(word: str, topic: str | None = None) -> str:
    """``word``'s definition as plain text (for a widget's help); KeyError for a word the glossary lacks."""
    return _definition(word, topic)


def term(word: str, topic: str | None = None, shown: str | None = None) -> str:
    """Markdown for ``word`` (or ``shown``) linked to the glossary, its definition as the link's hover text.
    Raises KeyError for a word the glossary lacks (a page cannot link a term it never defines)."""
    title = _definition(word, topic).replace("\\", "").replace('"', "'")
    return f'[{shown or word}](#{ANCHOR} "{title}")'


def glossary(topic: str | None, words: list[str] | None = None, verdict=None, key: str = "glossary") -> None:
    """The page's glossary: ``words`` (default: every term of the topic), the common terms the ledger's tests
    use (those named in ``verdict``'s claims: Clopper-Pearson, Newcombe, ...), then the four status words, each
    with its definition, under a heading that ``term`` links to."""
    names = words if words is not None else list(G.topic_terms(topic))
    if verdict is not None:
        fields = ("test", "uncertainty", "reason", "ours", "note")
        said = " ".join(str(getattr(j, f, "") or "") for j in verdict.claims for f in fields)
        names += [w for w in G.COMMON if w not in names and w.lower() in said.lower()]
    with st.container(key=key):
        st.subheader("Terms used on this page", anchor=ANCHOR)
        lines = [f"- **{w}**: {_definition(w, topic)}" for w in names]
        lines += [f"- **{w}**: {d}" for w, d in G.STATUS.items()]
        half = (len(lines) + 1) // 2
        left, right = st.columns(2)  # two columns on a wide screen, one after the other on a phone
        left.markdown("\n".join(lines[:half]))
        right.markdown("\n".join(lines[half:]))


def blocks(parts) -> None:
    """A topic's explainer text (from its ``prose`` module), in order: each part markdown, or ``("tex", r"...")``
    an equation on its own line (``st.latex``), or ``("caption", "...")`` small print."""
    show = {"md": st.markdown, "tex": st.latex, "caption": st.caption}
    if any(not isinstance(part, str) and part[0] == "tex" for part in parts):  # a wide equation scrolls on a phone
        st.html("<style>.katex-display {overflow-x: auto; overflow-y: hidden;}</style>")
    for part in parts:
        kind, text = ("md", part) if isinstance(part, str) else part
        show[kind](text)
