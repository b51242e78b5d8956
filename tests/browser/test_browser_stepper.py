"""The stepper's stage controls in a real browser: picker, tooltips, slow play, the jump.

A notebook holding the cell notebook 04 builds its view with (``StepperView(CAPTURE,
choices=DATA)``) runs in JupyterLab; each control is driven through the CSS class the view
gives it (``scl-capture``, ``scl-jump``, ``scl-speed``, ``scl-play``, ``scl-next``, ...) and
what it shows is checked against the pure model (``Stepper``, ``divergence_step``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

import streamcalls_lab as scl
from streamcalls_lab.stepper import divergence_step, relay

if TYPE_CHECKING:
    from .conftest import Server

pytestmark = [pytest.mark.browser]

NOTEBOOK = "stepper-controls.ipynb"
CELL = """import os
from pathlib import Path

from streamcalls_lab.widgets import StepperView

DATA = Path(os.environ["STREAMCALLS_DATA"])
CAPTURE = DATA / "anthropic-messages" / "two-calls-long-args.sse"
view = StepperView(CAPTURE, choices=DATA)
view"""
RELAY_CELL = """pair = StepperView.relayed(CAPTURE)
pair"""
PICKED = "openai-chat/two-calls-long-args"
UPDATE_MS = 15_000
# the tooltip a control shows: its element's title, or that of the element inside it
TITLE = "el => el.title || (el.querySelector('[title]') || {}).title || ''"
# every index the view draws, in order, from now on
WATCH = """() => {
  window.__shown = [];
  const out = document.querySelector('.scl-stepper-view .scl-stepper-output');
  new MutationObserver(() => {
    const i = out.querySelector('.scl-index');
    if (i) window.__shown.push(i.textContent);
  }).observe(out, {childList: true, subtree: true, characterData: true});
}"""
CONTROLS = ("scl-back", "scl-next", "scl-jump", "scl-step-slider", "scl-play", "scl-speed",
            "scl-handler", "scl-capture")


@pytest.fixture(scope="module")
def stepper_page(chromium: Any, jupyter_lab: Server) -> Iterator[tuple[Any, Any]]:
    """The notebook run in JupyterLab: its page and its stepper view."""
    from .conftest import block_remote

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(CELL), nbformat.v4.new_code_cell(RELAY_CELL)]
    nbformat.write(nb, jupyter_lab.root / NOTEBOOK)
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    left = block_remote(context)
    page = context.new_page()
    jupyter_lab.run_all_cells(page, NOTEBOOK)
    assert jupyter_lab.error_outputs(page) == []
    yield page, page.locator(".scl-stepper-view").first
    assert left == []
    context.close()


def data() -> Path:
    from .conftest import course_data

    return course_data()


def index_of(view: Any) -> Any:
    return view.locator(".scl-stepper-output .scl-index")


def test_every_control_shows_a_tooltip(stepper_page: tuple[Any, Any]) -> None:
    from playwright.sync_api import expect

    _, view = stepper_page
    expect(view).to_be_visible(timeout=UPDATE_MS)
    titles = {cls: view.locator(f".{cls}").first.evaluate(TITLE) for cls in CONTROLS}
    assert all(titles.values()), titles


def test_the_picker_steps_through_the_capture_picked(
    stepper_page: tuple[Any, Any], artifacts: Path,
) -> None:
    from playwright.sync_api import expect

    page, view = stepper_page
    view.locator("button.scl-next").click()
    expect(index_of(view)).to_have_text("1", timeout=UPDATE_MS)
    view.locator(".scl-capture select").select_option(label=PICKED)
    expect(index_of(view)).to_have_text("0", timeout=UPDATE_MS)
    n = len(scl.Stepper(data() / "openai-chat" / "two-calls-long-args.sse"))
    expect(view.locator(".scl-stepper-output")).to_contain_text(f"(event 1 of {n})",
                                                                timeout=UPDATE_MS)
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "stepper-picked.png"))


def test_the_jump_lands_on_the_first_divergence_the_model_finds(
    stepper_page: tuple[Any, Any],
) -> None:
    from playwright.sync_api import expect

    _, view = stepper_page
    view.locator(".scl-capture select").select_option(label=PICKED)
    want = divergence_step(scl.Stepper(data() / "openai-chat" / "two-calls-long-args.sse"),
                           "trim")
    assert want is not None and want > 0
    view.locator(".scl-handler select").select_option(label="trim")
    view.locator("button.scl-jump").click()
    expect(index_of(view)).to_have_text(str(want), timeout=UPDATE_MS)
    expect(view.locator(".scl-stepper-status")).to_contain_text("trim", timeout=UPDATE_MS)


def test_two_events_a_second_plays_every_step_in_turn(
    stepper_page: tuple[Any, Any], artifacts: Path,
) -> None:
    """At 2 events a second play shows step after step, none skipped (at 20x it leaps)."""
    from playwright.sync_api import expect

    page, view = stepper_page
    view.locator(".scl-handler select").select_option(label="correct")
    # another capture than the one shown: a pick starts it from step 0
    view.locator(".scl-capture select").select_option(label="anthropic-messages/short-call")
    expect(index_of(view)).to_have_text("0", timeout=UPDATE_MS)
    view.locator(".scl-speed select").select_option(label="2 events a second")
    # the kernel has put the play clock on that speed once the label says so: a click
    # before then plays at the recorded pace, which leaps
    expect(view.locator(".scl-timing")).to_contain_text("2 events a second", timeout=UPDATE_MS)
    play = view.locator(".scl-play button").first
    page.evaluate(WATCH)
    play.click()
    # four steps recorded as shown (polling the index instead can miss one that a busy
    # machine drew for less than a poll's interval, and wait on it forever)
    page.wait_for_function("() => new Set(window.__shown).size >= 4", timeout=UPDATE_MS)
    play.click()  # pause
    shown = [int(i) for i in dict.fromkeys(page.evaluate("window.__shown"))]
    assert shown[:4] == [1, 2, 3, 4]
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "stepper-slow-play.png"))


def test_the_browser_stream_switch_lands_on_the_matching_step(
    stepper_page: tuple[Any, Any], artifacts: Path,
) -> None:
    from playwright.sync_api import expect

    page, _ = stepper_page
    pair = page.locator(".scl-stepper-view").nth(1)
    capture = data() / "anthropic-messages" / "two-calls-long-args.sse"
    want = relay(capture)
    at = divergence_step(want.provider)
    assert at is not None
    pair.locator("button.scl-jump").click()
    expect(index_of(pair)).to_have_text(str(at), timeout=UPDATE_MS)
    pair.locator(".scl-stream button", has_text="browser: ai-sdk-ui").click()
    expect(index_of(pair)).to_have_text(str(want.browser_step(at)), timeout=UPDATE_MS)
    expect(pair.locator(".scl-relay")).to_contain_text("ai-sdk-ui (stepping)",
                                                      timeout=UPDATE_MS)
    pair.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "stepper-relayed.png"))
