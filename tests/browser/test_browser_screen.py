"""One idea per screen: notebooks 03 and 04 run in JupyterLab at 1280x800, and each section's
controls and its result are in the viewport together (03: every section's panel beside its
result; 04: the whole stepper viewer, its buttons above the step that scrolls under them).
Hooks: ``scl-breaker-controls``, ``scl-results``, ``scl-stepper-view``, ``scl-next``,
``scl-stepper-output``. Screenshots land in artifacts/browser/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .conftest import Server

pytestmark = [pytest.mark.browser]

WIDTH, HEIGHT = 1280, 800
N03, N04 = "03-breaking-a-stream.ipynb", "04-step-through-an-accumulator.ipynb"
RUN_S = 300
TOP = "el => el.scrollIntoView({block: 'start'})"


@pytest.fixture(scope="module")
def screen(chromium: Any, jupyter_lab: Server) -> Iterator[dict[str, Any]]:
    """Both notebooks run at once, each in a tab of a 1280x800 window."""
    from .conftest import block_remote

    context = chromium.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    left = block_remote(context)
    pages = {}
    for name in (N03, N04):
        pages[name] = context.new_page()
        jupyter_lab.open_notebook(pages[name], jupyter_lab.copy_notebook(name))
    for name, page in pages.items():
        jupyter_lab.start_run_all(page, name, timeout_s=RUN_S)
    for name, page in pages.items():
        jupyter_lab.wait_all_ran(page, name, timeout_s=RUN_S)
        assert jupyter_lab.error_outputs(page) == []
    yield pages
    assert left == []
    context.close()


def in_view(locator: Any) -> bool:
    box = locator.bounding_box()
    return (box is not None and box["y"] >= 0 and box["x"] >= 0
            and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= WIDTH)


def test_each_section_of_03_has_its_controls_beside_its_result(
    screen: dict[str, Any], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    page = screen[N03]
    views = page.locator(".scl-breaker-view:has(.scl-breaker-controls)")
    expect(views.first).to_be_visible(timeout=15_000)
    assert views.count() >= 10  # a panel per section, the playground keeps its stack
    for i in range(views.count()):
        view = views.nth(i)
        panel = view.locator(".scl-breaker-controls").first
        view.evaluate(TOP)
        expect(view.locator(".scl-results").first).to_be_visible(timeout=15_000)
        result = view.locator(".scl-breaker-output").first
        page.wait_for_timeout(200)
        assert in_view(panel), f"section {i}: its controls are not all on screen"
        assert in_view(result), f"section {i}: its result is not all on screen"
        # beside, not under: the result starts level with the controls
        assert result.bounding_box()["x"] > panel.bounding_box()["x"] + 200
        if i == 0:
            page.screenshot(path=str(artifacts / "03-section-at-1280x800.png"))


def test_04s_viewer_fits_the_screen_with_its_controls_and_step(
    screen: dict[str, Any], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    page = screen[N04]
    view = page.locator(".scl-stepper-view").first
    expect(view.locator(".scl-stepper-output .scl-index")).to_be_visible(timeout=15_000)
    view.evaluate(TOP)
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "04-stepper-at-1280x800.png"))
    assert in_view(view.locator(".scl-next").first)
    assert in_view(view.locator(".scl-stepper-output").first)
    before = view.locator(".scl-index").first.inner_text()
    view.locator(".scl-next").first.click()
    expect(view.locator(".scl-index").first).not_to_have_text(before, timeout=15_000)
