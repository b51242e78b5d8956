"""The whole course in a real browser: each notebook runs in JupyterLab, and its widgets respond.

One JupyterLab (browser_fixtures' session server) and one page of it for the module, as a
reader has it: every notebook open in that one JupyterLab and all running at once, with every
request that would leave the machine aborted and recorded. (A page per notebook loaded the
whole application nine times over; on a loaded machine each costs seconds of CPU, and each
idle one keeps polling the server.) Each notebook's checks look only inside its own panel.
A screenshot of each lands in artifacts/browser/. The
interactions are checked against the pure models (``Stepper``, ``breaker.run``), through
stable hooks only: the kit's CSS classes (``scl-table``, ``scl-stepper-view``,
``scl-stepper-output``, ``scl-index``, ``scl-next``, ``scl-speed``, ``scl-buffers``,
``scl-block``, ``scl-buffer``, ``scl-breaker-view``, ``scl-breaker-output``), widget
descriptions ("start from") and option labels ("20×"), and the controls' own elements
(select, textarea, the Play widget's first button).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab import breaker, display

from ..conftest import REPO
from ..support.xss import IMG, XSS_STATE

if TYPE_CHECKING:
    from .conftest import Server

# Every module that uses the jupyter_lab fixture runs on one worker (conftest.one_worker_scope),
# so they share one server.
pytestmark = [pytest.mark.browser]

COURSE = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
UPDATE_MS = 15_000
PLAY_MS = 90_000
RUN_S = 300
CLICKS = 20
LIVE = "script, iframe, object, embed, [onerror], [onload], [onclick], [onmouseover]"


ERROR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


@dataclass
class Tab:
    """One notebook's panel in the course's JupyterLab page."""

    page: Any
    root: Any  # a locator for this notebook's panel: its checks look nowhere else
    errors: list[str] | None = None  # None: still running
    stderr: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)  # the page's, shared by every panel


@dataclass
class Course:
    """Notebooks run so far, by name; the page's requests that tried to leave the machine."""

    lab: Server
    page: Any
    left: list[str]
    dialogs: list[str] = field(default_factory=list)
    tabs: dict[str, Tab] = field(default_factory=dict)

    def start(self, names: list[str]) -> None:
        """Open every notebook in the one JupyterLab page, then start Run All in each: all
        open before any waits for its kernel, so the kernels start side by side."""
        copies = [self.lab.copy_notebook(name) for name in names]
        if not self.tabs:
            self.lab.open_notebook(self.page, copies[0])
        for copy in copies[int(not self.tabs):]:
            self.lab.open_another(self.page, copy)
        for name, copy in zip(names, copies, strict=True):
            panel = self.lab.panel_id(self.page, copy, timeout_s=RUN_S)
            self.tabs[name] = Tab(self.page, self.page.locator(f"[id='{panel}']"),
                                  dialogs=self.dialogs)
        for copy in copies:
            self.lab.start_run_all(self.page, copy, timeout_s=RUN_S)

    def run(self, name: str) -> Tab:
        """The panel of ``name``, shown, once its Run All finished, with what it showed."""
        if name not in self.tabs:
            self.start([name])
        tab = self.tabs[name]
        if tab.errors is None:
            self.lab.wait_all_ran(self.page, name, timeout_s=RUN_S)
            # a panel found by the wrong id would have no cells, and so no errors either
            assert tab.root.locator(".jp-CodeCell").count() > 0, f"no cells in {name}'s panel"
            tab.errors = tab.root.locator(ERROR).all_text_contents()
            tab.stderr = tab.root.locator(STDERR).all_text_contents()
            self.dialogs += self.page.locator(".jp-Dialog").all_inner_texts()
        self.lab.show(self.page, name)
        return tab


@pytest.fixture(scope="module")
def course(chromium: Any, jupyter_lab: Server) -> Iterator[Course]:
    from .conftest import block_remote

    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    left = block_remote(context)
    course = Course(jupyter_lab, context.new_page(), left)
    course.page.on("dialog", lambda d: (course.dialogs.append(d.message), d.dismiss()))
    course.start(COURSE)  # all at once: page loads overlap the kernels' work
    yield course
    context.close()


@pytest.mark.parametrize("name", COURSE, ids=[n[:2] for n in COURSE])
def test_notebook_runs_in_jupyterlab_without_error_or_dialog(
    course: Course, name: str, artifacts: Path
) -> None:
    tab = course.run(name)
    first = tab.root.locator(".jp-OutputArea-output").first
    if first.count():
        first.scroll_into_view_if_needed()
    tab.page.screenshot(path=str(artifacts / f"course-{Path(name).stem}.png"))
    assert tab.errors == []
    assert tab.stderr == []
    assert tab.dialogs == []
    assert course.left == []


def test_notebook_1_shows_the_event_table(course: Course, artifacts: Path) -> None:
    tab = course.run("01-anatomy-of-a-streamed-turn.ipynb")
    page = tab.page
    # the first event table (the notebook shows smaller tables before it)
    trace_table = tab.root.locator(".jp-OutputArea-output table.scl-table",
                               has_text="call_start").first
    trace = trace_table.inner_text()
    assert "call_start" in trace and "args_delta" in trace and "block_stop" in trace
    assert tab.root.locator(".jp-OutputArea-output img").count() >= 1  # the timeline figure
    trace_table.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "01-anatomy-in-jupyterlab.png"))


def stepper_capture() -> Path:
    """Notebook 4's CAPTURE: the bundled two-call turn under STREAMCALLS_DATA."""
    from .conftest import course_data

    return course_data() / "anthropic-messages" / "two-calls-long-args.sse"


def drawn(text: str) -> str:
    """A buffer as the view draws it (line breaks and tabs as symbols), as plain text."""
    return html.unescape(re.sub(r"<[^>]+>", "", display.visible(text)))


def stepper_on_page(course: Course) -> tuple[Any, Any, Any]:
    """Notebook 04's page, its first stepper view, and the step index that view shows."""
    tab = course.run("04-step-through-an-accumulator.ipynb")
    view = tab.root.locator(".scl-stepper-view").first
    return tab.page, view, view.locator(".scl-stepper-output .scl-index")


def test_clicking_next_in_jupyterlab_shows_the_steppers_buffers(
    course: Course, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    page, view, index = stepper_on_page(course)
    expect(view).to_be_visible(timeout=UPDATE_MS)
    expect(index).to_have_text("0", timeout=UPDATE_MS)
    for i in range(1, CLICKS + 1):
        view.locator("button.scl-next").click()
        expect(index).to_have_text(str(i), timeout=UPDATE_MS)

    want = scl.Stepper(stepper_capture()).state(CLICKS).buffers
    rows = view.locator(".scl-stepper-output table.scl-buffers tbody tr")
    shown = {rows.nth(i).locator(".scl-block").inner_text():
             rows.nth(i).locator("code.scl-buffer").inner_text()
             for i in range(rows.count())}
    assert len(want) == 2
    assert shown == {str(k): drawn(v) for k, v in want.items()}
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "04-stepper-in-jupyterlab.png"))


def test_stepper_play_at_20x_ends_on_the_last_step(course: Course, artifacts: Path) -> None:
    """From wherever the slider is (the test above leaves it part way)."""
    from playwright.sync_api import expect

    page, view, index = stepper_on_page(course)
    last = len(scl.Stepper(stepper_capture())) - 1
    view.locator(".scl-speed select").select_option(label="20×")
    # pressed before the kernel has retimed the clock, play runs at the old speed
    expect(view.locator(".scl-timing")).to_contain_text("20×", timeout=PLAY_MS)
    view.locator(".widget-play button, .jupyter-widget-play button").first.click()
    expect(index).to_have_text(str(last), timeout=PLAY_MS)
    view.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "course-04-played-at-20x.png"))


def verdicts(output: Any) -> dict[str, str]:
    """Each handler's row of a breaker table: first cell -> the row's text."""
    rows = output.locator("table tr")
    shown = {}
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        if cells.count():
            shown[cells.first.inner_text().strip()] = rows.nth(i).inner_text()
    return shown


def choose_preset(view: Any, name: str) -> None:
    from playwright.sync_api import expect

    start_from = view.locator(".widget-dropdown", has_text="start from").locator("select")
    start_from.select_option(label=name)
    expect(view.locator("textarea")).to_have_value(breaker.PRESETS[name].args,
                                                   timeout=UPDATE_MS)


def breaker_from_preset(course: Course, preset: str) -> tuple[Any, Any, Any]:
    """Notebook 03's page, its first breaker playground started from ``preset``, and the
    playground's output."""
    tab = course.run("03-breaking-a-stream.ipynb")
    playground = tab.root.locator(".scl-breaker-view").first
    choose_preset(playground, preset)
    return tab.page, playground, playground.locator(".scl-breaker-output")


@pytest.mark.parametrize("preset", list(breaker.PRESETS))
def test_breaker_preset_marks_the_faults_the_model_finds_broken(
    course: Course, preset: str
) -> None:
    from playwright.sync_api import expect

    page, _, output = breaker_from_preset(course, preset)
    expect(output).to_contain_text(preset, timeout=UPDATE_MS)
    broken = set(breaker.run(breaker.PRESETS[preset]).broken())
    assert preset in broken  # what a preset is for: a setup in which its fault bites
    page.wait_for_timeout(300)  # the output is redrawn whole; let the last redraw land
    rows = verdicts(output)
    shown = {name for name in breaker.PRESETS if "✗" in rows.get(name, "")}
    assert shown == broken & set(rows)


def test_the_markdown_bubble_shows_markup_in_arguments_inert(
    course: Course, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    page, playground, output = breaker_from_preset(course, "markdown_bubble")
    typed = '{"note": "see *both* ' + IMG + ' [link](javascript:window.__xss=3)"}'
    playground.locator("textarea").fill(typed)
    expect(output).to_contain_text(f"{len(typed)} characters", timeout=UPDATE_MS)
    page.wait_for_timeout(300)
    bubble = verdicts(output).get("markdown_bubble", "")
    assert "✗" in bubble  # the renderer changed the arguments ...
    assert output.locator(LIVE).count() == 0  # ... and nothing in what it shows can run
    assert output.locator("a[href^='javascript' i]").count() == 0
    assert page.evaluate(XSS_STATE) == "undefined"
    output.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "course-03-markdown-bubble.png"))
