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
