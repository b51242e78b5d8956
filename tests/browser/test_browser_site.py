"""`make site` in a real browser: every page of the static course opens offline and runs nothing.

The site is built once, on a copy of the bundled data with a hostile capture planted in it
(markup in its arguments, its prose and its file name), then each page is opened from disk
in Debian's Chromium with every request that would leave the machine aborted and recorded.
The same build is read as a reader sees it: body text at least 16 px in a readable measure,
code on a tinted block, and every figure named by its own title (a PNG's alt text from its
matplotlib titles, an SVG's from its ``<title>``), never nbconvert's placeholder. (One build
for both: executing the course is this module's whole cost.)
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from streamcalls_lab.static_site import build_site

from ..conftest import REPO
from ..support.xss import HOSTILE, IMG, XSS_STATE

if TYPE_CHECKING:
    from streamcalls_lab.static_site import Page

pytestmark = [pytest.mark.browser]

COURSE = sorted((REPO / "notebooks").glob("*.ipynb"))
PLANTED = f"zz {IMG}.sse"  # a turn's name is captured text too
# Recorded before any page script: every Content-Security-Policy refusal on the page.
RECORD_VIOLATIONS = """
window.__blocked = [];
document.addEventListener('securitypolicyviolation',
  e => window.__blocked.push(e.violatedDirective + ' ' + (e.blockedURI || e.sample)));
"""
LIVE_MARKUP = ("() => document.querySelectorAll("
               "'script, iframe, object, embed, [onerror], [onload]').length")
# The notebooks that draw figures of both kinds (01: a matplotlib timeline and the calls
# diagram; 02: matplotlib panels).
DRAWN = ["01-anatomy-of-a-streamed-turn", "02-fragment-size"]
PLACEHOLDERS = {"", "No description has been provided for this image", "figure",
                "a figure without a title", "a drawing without a title"}
FONT_PX = "px => parseFloat(getComputedStyle(document.querySelector(px)).fontSize)"
ALTS = "() => [...document.querySelectorAll('img')].map(i => i.getAttribute('alt'))"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Page]]:
    from .conftest import course_data

    data = tmp_path_factory.mktemp("data") / "hostile-data"
    shutil.copytree(course_data(), data)
    (data / "anthropic-messages" / PLANTED).write_bytes(HOSTILE)
    out = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STREAMCALLS_CAPTURES", str(data / "no-real-captures-here"))
        pages = build_site(out, data)
    return out, pages


def open_offline(page: Any, path: Path) -> None:
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(path.as_uri())
    page.wait_for_timeout(200)  # any onerror handler would have fired by now


def test_the_site_has_an_index_linking_every_notebook(site: tuple[Path, list[Page]]) -> None:
    out, pages = site
    assert [p.path.stem for p in pages] == [p.stem for p in COURSE]
    index = (out / "index.html").read_text()
    assert all(f'href="{p.path.name}"' in index for p in pages)


def test_every_notebook_ran_without_error_on_a_folder_with_a_hostile_capture(
    site: tuple[Path, list[Page]],
) -> None:
    assert {p.path.stem: p.errors for p in site[1]} == {p.stem: 0 for p in COURSE}


def test_every_page_opens_offline_and_runs_nothing(
    page: Any, left_machine: list[str], site: tuple[Path, list[Page]], artifacts: Path
) -> None:
    out, pages = site
    for path in [out / "index.html", *(p.path for p in pages)]:
        open_offline(page, path)
        assert page.evaluate(LIVE_MARKUP) == 0, path.name
        assert page.evaluate("() => window.__blocked") == [], path.name
        assert page.evaluate(XSS_STATE) == "undefined", path.name
        page.screenshot(path=str(artifacts / f"site-{path.stem}.png"))
    assert left_machine == []


def test_plots_are_images_inside_the_page(site: tuple[Path, list[Page]]) -> None:
    html = site[1][1].path.read_text()  # 02: the fragment-size plots
    assert re.search(r'<img [^>]*src="data:image/png;base64,', html)


BARE_WIDGET = re.compile(r"\b\w*(?:Box|Slider|Button|Dropdown|Play|Textarea|Output)\(")


def test_widgets_show_their_static_rendering(page: Any, site: tuple[Path, list[Page]]) -> None:
    by_stem = {p.path.stem: p.path for p in site[1]}
    for path in by_stem.values():  # no widget left as its Python repr, e.g. "VBox(children=…"
        open_offline(page, path)
        assert not BARE_WIDGET.findall(page.inner_text("body")), path.name
    open_offline(page, by_stem["03-breaking-a-stream"])
    assert page.locator(".scl-breaker-view, .scl-view").count() >= 1
    assert "Handed on" in page.inner_text("body")
    open_offline(page, by_stem["04-step-through-an-accumulator"])
    assert page.locator("[class^='scl-stepper'], [class*=' scl-stepper']").count() >= 1


def test_the_planted_capture_is_shown_as_characters(
    page: Any, left_machine: list[str], site: tuple[Path, list[Page]], artifacts: Path
) -> None:
    """Fails if escaping were removed: raw markup would be elements, not text on the page."""
    shown = {}
    for p in site[1]:
        open_offline(page, p.path)
        shown[p.path.stem] = page.inner_text("body")
        assert page.evaluate(LIVE_MARKUP) == 0, p.path.name
        assert page.evaluate(XSS_STATE) == "undefined", p.path.name
    assert [stem for stem, text in shown.items() if IMG in text]  # e.g. its turn name
    assert left_machine == []


def test_the_checks_see_markup_that_was_not_escaped(page: Any, tmp_path: Path) -> None:
    """The control: a page whose output holds raw markup trips both checks above."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from streamcalls_lab.static_site import export

    cell = new_code_cell("", outputs=[new_output("display_data", data={"text/html": IMG})])
    raw = tmp_path / "raw.html"
    raw.write_text(export(new_notebook(cells=[cell]), "raw"))
    open_offline(page, raw)
    assert page.evaluate(LIVE_MARKUP) == 1
    assert page.evaluate("() => window.__blocked.length") >= 1  # the handler, refused
    assert IMG not in page.inner_text("body")


def test_body_text_is_at_least_16px_in_a_readable_measure(
    page: Any, site: tuple[Path, list[Page]]
) -> None:
    page.set_viewport_size({"width": 1600, "height": 900})
    for name in ["index.html", *(f"{stem}.html" for stem in DRAWN)]:
        page.goto((site[0] / name).as_uri())
        paragraph = "main p" if name == "index.html" else ".jp-RenderedMarkdown p"
        assert page.evaluate(FONT_PX, paragraph) >= 16, name
        assert page.evaluate(FONT_PX, "body") >= 16, name
        width = page.evaluate("() => document.querySelector('main').getBoundingClientRect()"
                              ".width")
        assert width <= 62 * 17 + 1, name  # about 80 characters a line, not the whole screen


def test_code_cells_read_as_code_blocks(page: Any, site: tuple[Path, list[Page]]) -> None:
    page.goto((site[0] / f"{DRAWN[0]}.html").as_uri())
    size = page.evaluate(FONT_PX, ".jp-InputArea-editor pre, .highlight pre")
    assert 14 <= size <= 17
    ground = page.evaluate("() => getComputedStyle(document.querySelector('.highlight pre'))"
                           ".backgroundColor")
    assert ground not in ("rgba(0, 0, 0, 0)", "transparent")


def test_every_figure_is_named_by_its_own_title(page: Any, site: tuple[Path, list[Page]]) -> None:
    named = 0
    for stem in DRAWN:
        page.goto((site[0] / f"{stem}.html").as_uri())
        alts = page.evaluate(ALTS)
        assert alts and not set(alts) & PLACEHOLDERS, (stem, alts)
        named += len(alts)
        if stem.startswith("01"):  # the calls diagram, named by its SVG <title>
            assert any(a.startswith("The calls of") for a in alts), alts
    assert named >= 3
