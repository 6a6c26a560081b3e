"""RLVR's page through the router: defaults, its knobs, the upload, hostile uploads."""
import pytest

from tests.apptest_helpers import open_page
from toymodels import rlvr as M


def _page():
    return open_page("rlvr")


def test_page_defaults():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "RLVR & reasoning"
    assert not at.error


def test_page_upload_valid_and_invalid_csv():
    at = _page()
    at.file_uploader(key="rl_upload").set_value(("mine.csv", M.TEMPLATE_COUNTS.encode(), "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    at.file_uploader(key="rl_upload").set_value(("bad.csv", b"model,problem,n,c\nm,p,3,9\n", "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert any("c > n in data row 1" in e.value.replace("\\", "") for e in at.error)  # ui.plain escapes


@pytest.mark.parametrize("payload", [b"model,problem,n,c\nm,p,5,1e300\n",
                                     b"model,problem,n,c\nm,p,5," + b"7" * 100_000 + b"x\n",
                                     b"model,problem,n," + b"c" * 100_000 + b"\nm,p,5,1\n"])
def test_page_upload_errors_are_short_and_never_crash(payload):
    """Issue 14, findings 1 and 9: no traceback, and no 100,000-character echo of the upload."""
    at = _page()
    at.file_uploader(key="rl_upload").set_value(("x" * 300 + ".csv", payload, "text/csv")).run()
    assert not at.exception, at.exception
    assert at.error and all(len(e.value) < 600 for e in at.error), [len(e.value) for e in at.error]
