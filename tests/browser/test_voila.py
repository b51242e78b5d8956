"""`make demo` in a real browser: notebook 3 served by Voila renders its widgets and responds.

Voila is started the way the Makefile starts it, plus a free port on 127.0.0.1, a token and
private Jupyter directories (it has no ``--allow-root``: only its kernels run code). One
page, driven by Debian's Chromium, serves both tests (a Voila page is a kernel and a render);
the screenshot lands in artifacts/browser/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from streamcalls_lab.breaker import PRESETS

from ..conftest import REPO
from .conftest import RENDER_TIMEOUT_MS, UPDATE_TIMEOUT_MS, block_remote, voila_server

if TYPE_CHECKING:
    from .conftest import Server

pytestmark = [pytest.mark.browser]

NOTEBOOK = REPO / "notebooks" / "03-breaking-a-stream.ipynb"
TEMPLATES = REPO / "share" / "jupyter"
IMG = "<img src=x onerror=window.__xss=1>"


def views_in(notebook: Path) -> int:
    """How many breaker views the notebook's code cells make."""
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return len(re.findall(r"\bBreakerView\(", code))


@pytest.fixture(scope="module")
def voila(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Voila serving notebook 3 as `make demo DEMO_NOTEBOOK=...` does: the offline template,
    found on JUPYTER_PATH."""
    with voila_server(tmp_path_factory.mktemp("voila"), NOTEBOOK,
                      {"JUPYTER_PATH": TEMPLATES}) as server:
        yield server


@pytest.fixture(scope="module")
def demo(chromium: Any, voila: Server) -> Iterator[tuple[Any, list[str]]]:
    """The demo's page once the network went quiet, and every request it tried to send off
    this machine (each aborted)."""
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    left = block_remote(context)
    page = context.new_page()
    page.goto(voila.url(""), timeout=RENDER_TIMEOUT_MS)
    expect(page.locator(".scl-breaker-view").first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    page.wait_for_load_state("networkidle", timeout=RENDER_TIMEOUT_MS)
    yield page, left
    context.close()


def test_the_demo_renders_the_breaker_and_answers_typing(
    demo: tuple[Any, list[str]], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    page = demo[0]
    views = page.locator(".scl-breaker-view")
    expect(views.first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    expect(views).to_have_count(views_in(NOTEBOOK), timeout=RENDER_TIMEOUT_MS)
    playground = views.first
    output = playground.locator(".scl-breaker-output")
    expect(output).to_contain_text("Handed on", timeout=UPDATE_TIMEOUT_MS)
    expect(playground.locator("textarea")).to_have_value(PRESETS["trim"].args)
    assert playground.locator(".widget-slider, .jupyter-widget-slider").count() >= 3

    typed = '{"note": "typed in the demo ' + IMG + '"}'
    playground.locator("textarea").fill(typed)
    expect(output).to_contain_text(f"{len(typed)} characters", timeout=UPDATE_TIMEOUT_MS)
    expect(output.locator(".scl-pieces")).to_contain_text("typed in the demo")
    expect(output).to_contain_text(IMG)  # shown as characters ...
    page.wait_for_timeout(300)
    assert page.evaluate("() => typeof window.__xss") == "undefined"  # ... never run
    output.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "03-voila-demo.png"))


def test_the_demo_fetches_nothing_from_off_this_machine(demo: tuple[Any, list[str]]) -> None:
    """Offline use: FontAwesome, fonts, widgets and kernel traffic all come from Voila itself
    (from the load, through the network going quiet, and the typing above)."""
    page, left = demo
    assert left == []
    # The icon font the CDN link would have brought is declared by Voila's own bundle.
    families = page.evaluate("() => [...document.fonts].map(f => f.family)")
    assert any("Font Awesome" in family for family in families), families
