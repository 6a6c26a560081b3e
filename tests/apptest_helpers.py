"""Open the app as AppTest does it for a visitor: Home.py (the router) first, then one page."""
from streamlit.testing.v1 import AppTest

from toymodels.registry import REPO_ROOT, get_paper


def open_home(timeout: float = 120) -> AppTest:
    return AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=timeout).run()


def open_page(topic: str, timeout: float = 120) -> AppTest:
    """Run Home.py, switch to the topic's page through the router, and return the AppTest."""
    return open_home(timeout).switch_page(get_paper(topic).page).run()
