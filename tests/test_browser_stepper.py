"""In a real browser: notebook 4's stepper runs in JupyterLab and shows the model's buffers.

Headless Debian Chromium against a JupyterLab on 127.0.0.1 (fixtures in browser_fixtures);
the Next button is clicked as a reader would, and what the page shows is compared with the
pure Stepper at that index. The screenshot lands in artifacts/browser/.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab import display

if TYPE_CHECKING:
    from .browser_fixtures import Server

pytest_plugins = ["tests.browser_fixtures"]
pytestmark = pytest.mark.browser

NOTEBOOK = "04-step-through-an-accumulator.ipynb"
CLICKS = 20
STEP_TIMEOUT_MS = 15_000


def drawn(text: str) -> str:
    """A buffer as the view draws it (line breaks and tabs as symbols), as plain text."""
    return html.unescape(re.sub(r"<[^>]+>", "", display.visible(text)))


def test_clicking_next_in_jupyterlab_shows_the_steppers_buffers(
    page: Any, jupyter_lab: Server, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    from .browser_fixtures import course_data

    name = jupyter_lab.copy_notebook(NOTEBOOK)
    jupyter_lab.run_all_cells(page, name)
    assert jupyter_lab.error_outputs(page) == []
    view = page.locator(".scl-stepper-view").first
    expect(view).to_be_visible(timeout=STEP_TIMEOUT_MS)
    index = view.locator(".scl-stepper-output .scl-index")
    expect(index).to_have_text("0", timeout=STEP_TIMEOUT_MS)
    for i in range(1, CLICKS + 1):
        view.locator("button.scl-next").click()
        expect(index).to_have_text(str(i), timeout=STEP_TIMEOUT_MS)

    # The kernel's CAPTURE: the bundled two-call turn under STREAMCALLS_DATA.
    capture = course_data() / "anthropic-messages" / "two-calls-long-args.sse"
    want = scl.Stepper(capture).state(CLICKS).buffers
    rows = view.locator(".scl-stepper-output table.scl-buffers tbody tr")
    shown = {rows.nth(i).locator(".scl-block").inner_text():
             rows.nth(i).locator("code.scl-buffer").inner_text()
             for i in range(rows.count())}
    assert len(want) == 2
    assert shown == {str(k): drawn(v) for k, v in want.items()}
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "04-stepper-in-jupyterlab.png"))
