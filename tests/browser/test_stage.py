"""`make demo` in a real browser: the stage app at 1280×720, its keys, and no kernel left over.

Voila is started as the Makefile starts it (the offline template, share/jupyter/config's
culling), on a free port with a token and private Jupyter directories, with the culler's
timeouts shortened so a kernel that lost its page goes in seconds, not a minute. The tests that
only look and press keys share one page (``shown``), brought back to a scene as the keys do;
each page is a kernel and a render, about ten seconds of CPU on a busy machine. The tests of
reloads, windows, dead kernels and closed pages open their own. The first screen's
screenshot and the load time land in artifacts/browser/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from streamcalls_lab.breaker import PRESETS
from streamcalls_lab.widgets.stage import scenes

from ..conftest import REPO
from .conftest import RENDER_TIMEOUT_MS, UPDATE_TIMEOUT_MS, block_remote, voila_server

if TYPE_CHECKING:
    from .conftest import Server

pytestmark = [pytest.mark.browser]

NOTEBOOK = REPO / "notebooks" / "stage" / "stage.ipynb"
SHARE = REPO / "share" / "jupyter"
SCREEN = {"width": 1280, "height": 720}
# Ten seconds idle, not Voila's minute: long enough that a page still connecting on a busy
# machine (CI runs the browser modules on both workers) keeps its kernel, short enough that a
# vanished page's kernel goes well inside GONE_S.
CULL = ["--MappingKernelManager.cull_idle_timeout=10", "--MappingKernelManager.cull_interval=1"]
GONE_S = 45.0
ORDER = scenes()


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    paths = {"JUPYTER_PATH": SHARE, "JUPYTER_CONFIG_PATH": SHARE / "config"}
    with voila_server(tmp_path_factory.mktemp("stage"), NOTEBOOK, paths, *CULL) as server:
        yield server


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The stage with the demo's own culling (a minute): a page that takes seconds to connect
    on a loaded machine must not lose its kernel to the culling tests' ten seconds."""
    paths = {"JUPYTER_PATH": SHARE, "JUPYTER_CONFIG_PATH": SHARE / "config"}
    with voila_server(tmp_path_factory.mktemp("steady"), NOTEBOOK, paths) as server:
        yield server


@pytest.fixture
def screen(chromium: Any) -> Iterator[Any]:
    """A page of its own at 1280×720."""
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    yield page
    context.close()


@dataclass
class Shown:
    """The module's shared stage page: how long its first scene took, and every request it
    tried to send off this machine (each aborted)."""

    page: Any
    took: float
    left: list[str]


@pytest.fixture(scope="module")
def shown(chromium: Any, steady: Server) -> Iterator[Shown]:
    context = chromium.new_context(viewport=SCREEN)
    left = block_remote(context)
    page = context.new_page()
    took = open_stage(page, steady)
    page.wait_for_load_state("networkidle", timeout=RENDER_TIMEOUT_MS)
    yield Shown(page, took, left)
    context.close()


@pytest.fixture
def first(shown: Shown) -> Any:
    """The shared page at 1280×720 on the first scene, as it starts."""
    shown.page.set_viewport_size(SCREEN)
    go_to(shown.page, 0)
    return shown.page


def go_to(page: Any, index: int) -> None:
    """Bring the page to scene ``index`` as it starts, with the keys (a reset where it is
    already there), waiting for each step: no navigation, so no new kernel."""
    from playwright.sync_api import expect

    n, head_ = len(ORDER), page.locator(".scl-stage-head")
    head_.click()  # the focus off any field: letters are keys
    now = int(count(page).split(" / ")[0]) - 1
    ahead = (index - now) % n
    steps = [("r", now)] if ahead == 0 else (
        [("n", (now + k) % n) for k in range(1, ahead + 1)] if ahead <= n - ahead
        else [("p", (now - k) % n) for k in range(1, n - ahead + 1)])
    for key, scene in steps:
        drawn = head_.get_attribute("data-shown")  # a reset draws the same count again
        page.keyboard.press(key)
        expect(head_).not_to_have_attribute("data-shown", drawn or "", timeout=UPDATE_TIMEOUT_MS)
        expect(page.locator(".scl-stage-count")).to_have_text(f"{scene + 1} / {n}")
    expect(page.locator(".scl-stage textarea")).to_have_value(
        PRESETS[ORDER[index]].args, timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator(".scl-stage-verdict")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)


def running(server: Server, kernel: str) -> bool:
    """Whether the server still has this kernel (Voila answers for one kernel at a time)."""
    request = urllib.request.Request(f"{server.base}/api/kernels/{kernel}",
                                     headers={"Authorization": f"token {server.token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return bool(json.load(response).get("id") == kernel)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False
        raise


def kernel_processes(server: Server) -> list[int]:
    """The kernels' processes the server started (ipykernel, a dependency, brings psutil)."""
    psutil = pytest.importorskip("psutil")
    children = psutil.Process(server.process.pid).children(recursive=True)
    return [p.pid for p in children if "ipykernel" in " ".join(p.cmdline())]


def open_stage(page: Any, server: Server) -> float:
    """Open the app and wait for the first scene's result; the seconds that took."""
    from playwright.sync_api import expect

    t0 = time.monotonic()
    page.goto(server.url(""), timeout=RENDER_TIMEOUT_MS)
    expect(page.locator(".scl-stage-result")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    return time.monotonic() - t0


def kernel_of(page: Any) -> str:
    return str(page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId"))


def head(page: Any) -> str:
    return str(page.locator(".scl-stage-head").inner_text())


def inside(box: dict[str, float] | None) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and (
        box["x"] + box["width"] <= SCREEN["width"]) and (
        box["y"] + box["height"] <= SCREEN["height"])


def test_the_first_screen_shows_a_control_beside_its_result_in_large_type(
        shown: Shown, first: Any, artifacts: Path) -> None:
    screen, took = first, shown.took
    (artifacts / "stage-load.txt").write_text(f"stage app: first scene shown {took:.1f} s "
                                              "after the page was asked for\n")
    print(f"stage app load: {took:.1f} s")
    assert f"1 / {len(ORDER)}" in head(screen) and ORDER[0] in head(screen)
    textarea = screen.locator(".scl-stage textarea")
    assert textarea.input_value() == PRESETS[ORDER[0]].args
    for element in (textarea, screen.locator(".scl-stage .widget-slider").first,
                    screen.locator(".scl-stage-verdict"), screen.locator("button.scl-stage-next")):
        assert inside(element.bounding_box()), element
    sizes = screen.evaluate("""() => [...document.querySelectorAll(
        '.scl-stage-result code, .scl-stage-verdict')]
        .map(e => parseFloat(getComputedStyle(e).fontSize))""")
    assert sizes and min(sizes) >= 24, sizes
    assert "r reset" in screen.locator(".scl-stage-keys").inner_text()
    screen.screenshot(path=str(artifacts / "stage-first-screen.png"))


def test_the_keys_move_through_the_scenes(first: Any) -> None:
    from playwright.sync_api import expect

    screen = first
    heading = screen.locator(".scl-stage-head")
    for key, scene in (("n", 1), ("n", 2), ("p", 1), ("ArrowRight", 2), ("PageUp", 1),
                       ("ArrowLeft", 0), ("p", len(ORDER) - 1)):
        screen.keyboard.press(key)
        expect(heading).to_contain_text(f"{scene + 1} / {len(ORDER)}",
                                        timeout=UPDATE_TIMEOUT_MS)
        assert ORDER[scene] in head(screen)
        expect(screen.locator(".scl-stage textarea")).to_have_value(
            PRESETS[ORDER[scene]].args, timeout=UPDATE_TIMEOUT_MS)
    screen.locator("button.scl-stage-next").click()  # a click leaves the focus on the button
    expect(heading).to_contain_text(f"1 / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)
    screen.keyboard.press("ArrowRight")
    expect(heading).to_contain_text(f"2 / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)
    screen.locator(".scl-stage .noUi-handle, .scl-stage .widget-slider input").first.focus()
    screen.keyboard.press("ArrowRight")  # moves the split, not the scene
    screen.wait_for_timeout(500)
    assert f"2 / {len(ORDER)}" in head(screen)


@dataclass
class Walked:
    """What each scene showed, stepped through in order with the next button."""

    misfits: list[tuple[str, str]]  # (scene, part) that lay outside the screen
    pictographs: dict[str, set[str]]  # scene: characters only an emoji font draws


@pytest.fixture(scope="module")
def walked(shown: Shown) -> Walked:
    """Every scene once on the shared page at 1280×720, a screenshot of each."""
    from playwright.sync_api import expect

    from .conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screen = shown.page
    screen.set_viewport_size(SCREEN)
    go_to(screen, 0)
    walk = Walked([], {})
    for scene, name in enumerate(ORDER):
        if scene:
            screen.locator("button.scl-stage-next").click()
        expect(screen.locator(".scl-stage-count")).to_have_text(
            f"{scene + 1} / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)
        expect(screen.locator(".scl-stage-verdict")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
        screen.screenshot(path=str(ARTIFACTS / f"stage-{scene + 1:02d}-{name}.png"))
        for part in (".scl-stage textarea", ".scl-stage-verdict", "button.scl-stage-next",
                     ".scl-breaker-status"):
            if not inside(screen.locator(part).bounding_box()):
                walk.misfits.append((name, part))
        text = screen.locator(".scl-stage").inner_text()
        emoji = set(re.findall("[\U0001F000-\U0001FAFF\uFE0F]", text))
        if emoji:
            walk.pictographs[name] = emoji
    return walk


def test_every_scene_fits_one_screen(walked: Walked) -> None:
    """Its controls, its verdict and the buttons, with no scrolling, scene after scene."""
    assert walked.misfits == []


def test_every_character_on_the_stage_has_a_font_the_kit_relies_on(walked: Walked) -> None:
    """No pictograph that only an emoji font draws, on any scene (the results, the head,
    the controls' labels and options)."""
    assert walked.pictographs == {}


def test_typing_shows_the_new_result_and_reset_restores_the_scene(
        first: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    screen = first
    textarea = screen.locator(".scl-stage textarea")
    output = screen.locator(".scl-breaker-output")
    status = screen.locator(".scl-breaker-status")
    verdict, sent = screen.locator(".scl-stage-verdict"), screen.locator(".scl-stage-sent")
    before = verdict.inner_text(), sent.inner_text()
    split = PRESETS[ORDER[0]].split
    textarea.fill("")
    textarea.type("Hello, a sentence", delay=20)  # keystroke by keystroke, debounced
    expect(output).to_contain_text("Hello, a sentence", timeout=UPDATE_TIMEOUT_MS)
    expect(status).to_contain_text(f"it was at {split}")  # shorter than the split: said so
    screen.screenshot(path=str(artifacts / "stage-typed.png"))
    screen.locator(".scl-stage-head").click()  # the focus off the field: r is a key again
    screen.keyboard.press("r")
    expect(textarea).to_have_value(PRESETS[ORDER[0]].args, timeout=UPDATE_TIMEOUT_MS)
    expect(verdict).to_have_text(before[0], timeout=UPDATE_TIMEOUT_MS)
    expect(sent).to_have_text(before[1])
    expect(status).to_have_text("")
    textarea.fill('{"summary": "another one"}')
    expect(output).to_contain_text("another one", timeout=UPDATE_TIMEOUT_MS)
    screen.locator("button.scl-stage-reset").click()
    expect(verdict).to_have_text(before[0], timeout=UPDATE_TIMEOUT_MS)
    expect(sent).to_have_text(before[1])


def test_a_letter_typed_in_the_text_is_text_not_a_key(first: Any) -> None:
    from playwright.sync_api import expect

    screen = first
    textarea = screen.locator(".scl-stage textarea")
    textarea.click()
    textarea.press("Control+End")
    textarea.type("np")
    expect(textarea).to_have_value(PRESETS[ORDER[0]].args + "np")
    assert f"1 / {len(ORDER)}" in head(screen)


def test_the_stage_fetches_nothing_from_off_this_machine(shown: Shown, walked: Walked) -> None:
    """From its load to the network going quiet, and through every scene."""
    assert shown.left == []


def test_closing_the_page_leaves_no_kernel(chromium: Any, stage: Server) -> None:
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    open_stage(page, stage)
    kernel = kernel_of(page)
    assert running(stage, kernel)
    page.close(run_before_unload=True)  # as a browser closes a tab
    context.close()
    assert wait_gone(stage, kernel), f"kernel {kernel} still running"


def test_a_page_that_vanished_without_a_word_has_its_kernel_culled(
        chromium: Any, stage: Server) -> None:
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    open_stage(page, stage)
    kernel = kernel_of(page)
    assert running(stage, kernel)
    context.close()  # no beforeunload: a crashed tab, a dropped network
    assert wait_gone(stage, kernel), f"kernel {kernel} never culled"


def test_once_every_page_is_closed_no_kernel_process_is_left(stage: Server) -> None:
    """After the other tests' pages (each closed one way or the other): none at all."""
    deadline = time.monotonic() + GONE_S
    while kernel_processes(stage) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert kernel_processes(stage) == []


def wait_gone(server: Server, kernel: str) -> bool:
    deadline = time.monotonic() + GONE_S
    while time.monotonic() < deadline:
        if not running(server, kernel):
            return True
        time.sleep(0.5)
    return False


# -- surviving a bad moment -------------------------------------------------------------------
SIZES = ({"width": 1280, "height": 720}, {"width": 1920, "height": 1080},
         {"width": 1024, "height": 768})


def kernel_pid(server: Server, kernel: str) -> int:
    """The process of this kernel (its connection file is named for its id)."""
    psutil = pytest.importorskip("psutil")
    for child in psutil.Process(server.process.pid).children(recursive=True):
        if kernel in " ".join(child.cmdline()):
            return int(child.pid)
    raise AssertionError(f"no process for kernel {kernel}")


def count(page: Any) -> str:
    return str(page.locator(".scl-stage-count").inner_text())


def test_a_reload_and_a_second_window_land_on_the_scene_in_the_address(
        chromium: Any, screen: Any, steady: Server) -> None:
    from playwright.sync_api import expect

    screen.goto(steady.url("?scene=12"), timeout=RENDER_TIMEOUT_MS)
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"12 / {len(ORDER)}", timeout=RENDER_TIMEOUT_MS)
    assert ORDER[11] in head(screen)
    screen.keyboard.press("n")
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"13 / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)
    expect(screen).to_have_url(re.compile(rf"[?&]scene={ORDER[12]}(&|$)"))
    screen.reload(timeout=RENDER_TIMEOUT_MS)
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"13 / {len(ORDER)}", timeout=RENDER_TIMEOUT_MS)
    second = chromium.new_context(viewport=SCREEN)
    try:
        other = second.new_page()
        other.goto(screen.url, timeout=RENDER_TIMEOUT_MS)
        expect(other.locator(".scl-stage-count")).to_have_text(
            f"13 / {len(ORDER)}", timeout=RENDER_TIMEOUT_MS)
        assert ORDER[12] in head(other)
    finally:
        second.close()


def test_presses_while_the_kernel_is_paused_coalesce_to_the_last_with_a_busy_mark(
        first: Any, steady: Server, artifacts: Path) -> None:
    from playwright.sync_api import expect

    screen = first
    pid = kernel_pid(steady, kernel_of(screen))
    busy = screen.locator("#scl-stage-busy")
    expect(busy).to_be_hidden()
    os.kill(pid, signal.SIGSTOP)
    try:
        for _ in range(3):
            screen.keyboard.press("n")
        expect(busy).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
        screen.screenshot(path=str(artifacts / "stage-busy.png"))
        assert count(screen) == f"1 / {len(ORDER)}"
    finally:
        os.kill(pid, signal.SIGCONT)
    # the first press was already on its way; the two after it are one
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"3 / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)
    expect(busy).to_be_hidden(timeout=UPDATE_TIMEOUT_MS)
    screen.wait_for_timeout(1500)
    assert count(screen) == f"3 / {len(ORDER)}"


def test_a_dead_kernel_is_announced_and_enter_restarts_on_the_same_scene(
        screen: Any, steady: Server, artifacts: Path) -> None:
    from playwright.sync_api import expect

    screen.goto(steady.url("?scene=4"), timeout=RENDER_TIMEOUT_MS)
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"4 / {len(ORDER)}", timeout=RENDER_TIMEOUT_MS)
    kernel = kernel_of(screen)
    dead = screen.locator("#scl-stage-dead")
    expect(dead).to_be_hidden()
    os.kill(kernel_pid(steady, kernel), signal.SIGKILL)
    expect(dead).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    assert "Enter" in dead.inner_text()
    screen.screenshot(path=str(artifacts / "stage-dead.png"))
    screen.keyboard.press("Enter")
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"4 / {len(ORDER)}", timeout=RENDER_TIMEOUT_MS)
    expect(dead).to_be_hidden()
    assert kernel_of(screen) != kernel
    screen.keyboard.press("n")  # the keys work again
    expect(screen.locator(".scl-stage-count")).to_have_text(
        f"5 / {len(ORDER)}", timeout=UPDATE_TIMEOUT_MS)


def _within(box: dict[str, float] | None, size: dict[str, int]) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and (
        box["x"] + box["width"] <= size["width"]) and (
        box["y"] + box["height"] <= size["height"])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_the_stage_fills_the_screen_and_its_controls_are_usable(
        shown: Shown, artifacts: Path, size: dict[str, int]) -> None:
    """At a laptop's, a full-HD and a projector's size: the type grows with the screen, the
    result fills the width, and the quirk list and the read-size slider are wide enough to
    use (scenes that set them). The shared page is resized, as a window dragged to a
    projector is."""
    from playwright.sync_api import expect

    page = shown.page
    page.set_viewport_size(size)
    quirky = next(i for i, n in enumerate(ORDER) if PRESETS[n].quirks)
    reading = next(i for i, n in enumerate(ORDER) if PRESETS[n].read_size)
    tag = f"{size['width']}x{size['height']}"
    for index in (quirky, reading):
        go_to(page, index)
        expect(page.locator(".scl-stage-verdict")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
        page.screenshot(path=str(artifacts / f"stage-{tag}-{ORDER[index]}.png"))
        for part in (".scl-stage textarea", ".scl-stage-verdict", "button.scl-stage-next"):
            assert _within(page.locator(part).bounding_box(), size), (tag, part)
        stage_box = page.locator(".scl-stage").bounding_box()
        assert stage_box and stage_box["width"] >= 0.9 * size["width"], stage_box
        unit = min(size["width"] / 100, size["height"] / 56.2)
        code = page.evaluate("""() => parseFloat(getComputedStyle(
            document.querySelector('.scl-stage-result code')).fontSize)""")
        assert code >= 1.8 * unit, (tag, code)  # grows with the screen, not fixed pixels
        if index == quirky:
            select = page.locator(".scl-stage select[multiple]").bounding_box()
            assert select and select["width"] >= 0.2 * size["width"], select
            names = page.evaluate("""() => [...document.querySelectorAll(
                '.scl-stage select[multiple] option')].map(o => o.scrollWidth <=
                o.parentElement.clientWidth)""")
            assert names and all(names), "an option's name is clipped"
        else:
            track = page.locator(".scl-stage .widget-slider .noUi-target, "
                                 ".scl-stage .widget-slider .slider-container")
            widths = [b["width"] for b in (t.bounding_box() for t in track.all()) if b]
            assert widths and min(widths) >= 0.12 * size["width"], widths
        labels = page.evaluate("""() => [...document.querySelectorAll(
            '.scl-stage button')].filter(b => b.scrollWidth > b.clientWidth + 1)
            .map(b => b.innerText)""")
        assert labels == [], f"{tag}: button labels clipped"
