"""The static site as a reader sees it in Chromium: body text at least 16 px in a readable
measure, code on a tinted block, and every figure named by its own title (a PNG's alt text
from its matplotlib titles, an SVG's from its ``<title>``), never
nbconvert's placeholder.

Built on the bundled data from the notebooks that draw figures of both kinds (01: a
matplotlib timeline and the calls diagram; 02: matplotlib panels), to keep the build short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamcalls_lab.static_site import build_site

from ..conftest import REPO

pytestmark = [pytest.mark.browser]

NOTEBOOKS = [REPO / "notebooks" / "01-anatomy-of-a-streamed-turn.ipynb",
             REPO / "notebooks" / "02-fragment-size.ipynb"]
PLACEHOLDERS = {"", "No description has been provided for this image", "figure",
                "a figure without a title", "a drawing without a title"}
FONT_PX = "px => parseFloat(getComputedStyle(document.querySelector(px)).fontSize)"
ALTS = "() => [...document.querySelectorAll('img')].map(i => i.getAttribute('alt'))"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .conftest import course_data

    out = tmp_path_factory.mktemp("site")
    pages = build_site(out, course_data(), notebooks=NOTEBOOKS)
    assert [p.errors for p in pages] == [0, 0]
    return out


def test_body_text_is_at_least_16px_in_a_readable_measure(page: Any, site: Path) -> None:
    page.set_viewport_size({"width": 1600, "height": 900})
    for name in ["index.html", *(f"{nb.stem}.html" for nb in NOTEBOOKS)]:
        page.goto((site / name).as_uri())
        paragraph = "main p" if name == "index.html" else ".jp-RenderedMarkdown p"
        assert page.evaluate(FONT_PX, paragraph) >= 16, name
        assert page.evaluate(FONT_PX, "body") >= 16, name
        width = page.evaluate("() => document.querySelector('main').getBoundingClientRect()"
                              ".width")
        assert width <= 62 * 17 + 1, name  # about 80 characters a line, not the whole screen


def test_code_cells_read_as_code_blocks(page: Any, site: Path) -> None:
    page.goto((site / f"{NOTEBOOKS[0].stem}.html").as_uri())
    size = page.evaluate(FONT_PX, ".jp-InputArea-editor pre, .highlight pre")
    assert 14 <= size <= 17
    ground = page.evaluate("() => getComputedStyle(document.querySelector('.highlight pre'))"
                           ".backgroundColor")
    assert ground not in ("rgba(0, 0, 0, 0)", "transparent")


def test_every_figure_is_named_by_its_own_title(page: Any, site: Path) -> None:
    named = 0
    for nb in NOTEBOOKS:
        page.goto((site / f"{nb.stem}.html").as_uri())
        alts = page.evaluate(ALTS)
        assert alts and not set(alts) & PLACEHOLDERS, (nb.stem, alts)
        named += len(alts)
        if nb.stem.startswith("01"):  # the calls diagram, named by its SVG <title>
            assert any(a.startswith("The calls of") for a in alts), alts
    assert named >= 3
