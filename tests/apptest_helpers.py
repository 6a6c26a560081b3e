"""Open the app as AppTest does it for a visitor: Home.py (the router) first, then one page."""
from streamlit.testing.v1 import AppTest

from toymodels.registry import REPO_ROOT, get_paper


def open_home(timeout: float = 120) -> AppTest:
    return AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=timeout).run()


def open_page(topic: str, timeout: float = 120) -> AppTest:
    """Run Home.py, switch to the topic's page through the router, and return the AppTest."""
    return open_home(timeout).switch_page(get_paper(topic).page).run()


def open_link(topic: str, params: dict, timeout: float = 120) -> AppTest:
    """A shared link in a fresh session: the topic's page with ``params`` in its URL."""
    at = open_home(timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(get_paper(topic).page).run()


def page_tabs(topic: str) -> tuple[str, tuple[str, ...]] | None:
    """The page's query-bound tabs: ``(key, labels)`` of its ``st.tabs(TABS, key=..., bind="query-params")`` (read
    from the page's source), or None for a page without. Only the open tab's content runs (``tab.open``), so a test
    of a widget in another tab opens the page on that tab: ``open_tab(topic, label)``."""
    import ast

    page = REPO_ROOT / get_paper(topic).page
    tree = ast.parse(page.read_text())
    consts = {t.id: n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "tabs":
            kw = {k.arg: k.value for k in node.keywords}
            if "key" not in kw or getattr(kw.get("bind"), "value", None) != "query-params":
                continue
            labels = node.args[0]
            labels = consts.get(labels.id, labels) if isinstance(labels, ast.Name) else labels
            return kw["key"].value, tuple(ast.literal_eval(labels))
    return None


def open_tab(topic: str, label: str, params: dict | None = None, timeout: float = 120) -> AppTest:
    """A shared link that opens the topic's page on the tab ``label`` (see ``page_tabs``), with ``params``."""
    found = page_tabs(topic)
    if found is None or label not in found[1]:
        raise KeyError(f"{topic}: no query-bound tab {label!r} (tabs: {found})")
    return open_link(topic, {found[0]: label, **(params or {})}, timeout)
