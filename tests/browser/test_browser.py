"""In a real browser: hostile captures never execute (notebook 1's run: test_browser_course).

Headless Debian Chromium against a JupyterLab on 127.0.0.1 (fixtures in browser_fixtures).
Screenshots land in artifacts/browser/ for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import streamcalls_lab as scl
from streamcalls_lab import display

from ..support.xss import HOSTILE, IMG, SCRIPT, XSS_STATE

if TYPE_CHECKING:
    from .conftest import Server

pytestmark = [pytest.mark.browser]



def hostile_html() -> str:
    """Everything display.py would show of the hostile capture."""
    deltas = scl.load(HOSTILE, name="hostile")
    shown = display.trace(deltas, "hostile") + display.table(scl.calls(deltas))
    return str(shown + display.diff(IMG + SCRIPT, SCRIPT) + display.code_block(HOSTILE))


def test_escaped_captures_run_nothing_in_a_browser(page: Any, artifacts: Path) -> None:
    page.set_content(f"<!DOCTYPE html><html><body>{hostile_html()}</body></html>")
    page.wait_for_timeout(300)  # any onerror handler would have fired by now
    assert page.evaluate(XSS_STATE) == "undefined"
    text = page.inner_text("body")
    assert IMG in text and SCRIPT in text  # shown to the reader as characters
    page.screenshot(path=str(artifacts / "xss-escaped.png"), full_page=True)


def test_the_payload_would_run_if_it_were_not_escaped(page: Any) -> None:
    """The control: the same browser does run it raw, so the test above can fail."""
    page.set_content(f"<!DOCTYPE html><html><body>{IMG}</body></html>")
    page.wait_for_function("() => window.__xss !== undefined", timeout=5000)
    assert page.evaluate("() => window.__xss") == 1


def test_a_saved_page_runs_nothing(page: Any, tmp_path: Path) -> None:
    deltas = scl.load(HOSTILE, name="hostile")
    saved = display.table(scl.calls(deltas)).save(tmp_path / "calls.html")
    page.goto(saved.as_uri())
    page.wait_for_timeout(300)
    assert page.evaluate(XSS_STATE) == "undefined"
    assert IMG[:9] in page.inner_text("body")


def xss_notebook(root: Path, cells: list[str], name: str) -> str:
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / name)
    return name


def test_jupyterlab_shows_a_hostile_capture_as_text(
    page: Any, jupyter_lab: Server, artifacts: Path
) -> None:
    capture = jupyter_lab.root / "hostile.sse"
    capture.write_bytes(HOSTILE)
    name = xss_notebook(jupyter_lab.root, [
        "import streamcalls_lab as scl\nfrom streamcalls_lab import display\n"
        "deltas = scl.load('hostile.sse')",
        "display.trace(deltas, 'hostile')",
        "display.table(scl.calls(deltas))",
    ], "xss.ipynb")
    jupyter_lab.run_all_cells(page, name)
    page.wait_for_timeout(300)
    assert jupyter_lab.error_outputs(page) == []
    assert page.evaluate(XSS_STATE) == "undefined"
    shown = page.locator(".jp-OutputArea-output").all_inner_texts()
    assert any(IMG[:9] in text for text in shown)
    page.screenshot(path=str(artifacts / "xss-in-jupyterlab.png"))


def test_jupyterlab_would_run_the_payload_from_unescaped_html(
    page: Any, jupyter_lab: Server
) -> None:
    """The control for JupyterLab: outputs made in the session are trusted and not sanitised."""
    name = xss_notebook(jupyter_lab.root, [
        f"from IPython.display import HTML\nHTML({IMG!r})",
    ], "xss-control.ipynb")
    jupyter_lab.run_all_cells(page, name)
    page.wait_for_function("() => window.__xss !== undefined", timeout=10000)
    assert page.evaluate("() => window.__xss") == 1
