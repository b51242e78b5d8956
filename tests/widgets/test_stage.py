"""The stage app without a browser: its scenes, moving between them, reset, and what it shows."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
import subprocess

import pytest

from streamcalls_lab import breaker
from streamcalls_lab.breaker import PRESETS
from streamcalls_lab.widgets import StageView
from streamcalls_lab.widgets.stage import SCRIPT, scenes, stage_html

from ..conftest import REPO

IMG = "<img src=x onerror=alert(1)>"


def test_there_is_a_scene_for_every_fault_with_a_preset_in_the_scripted_order() -> None:
    assert sorted(scenes()) == sorted(PRESETS)
    assert scenes() == [n for n in SCRIPT if n in PRESETS] + [
        n for n in PRESETS if n not in SCRIPT]


def test_next_and_previous_walk_the_scenes_and_wrap_round() -> None:
    view = StageView(delay=0)
    assert view.name == scenes()[0] and view.setup() == PRESETS[view.name]
    view.next()
    assert view.name == scenes()[1] and view.setup() == PRESETS[scenes()[1]]
    view.previous()
    view.previous()
    assert view.name == scenes()[-1]
    view.next()
    assert view.scene == 0


def test_reset_restores_the_scene_after_edits() -> None:
    view = StageView(["decode_chunks", "trim"], delay=0)
    view.read_size.value = 0
    view.args.value = '{"a": 1}'
    view.reset_button.click()
    assert view.setup() == PRESETS["decode_chunks"] and view.name == "decode_chunks"


def test_the_buttons_move_the_scene() -> None:
    view = StageView(["trim", "decode_each"], delay=0)
    view.next_button.click()
    assert view.name == "decode_each"
    view.previous_button.click()
    assert view.name == "trim"


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_scene_shows_the_controls_its_preset_sets(name: str) -> None:
    view = StageView([name], delay=0)
    shown = set(view.controls.children)
    preset = PRESETS[name]
    assert {view.args, view.split} <= shown
    assert (view.read_size in shown) == (preset.read_size is not None)
    assert (view.earlier in shown) == (preset.earlier is not None)
    assert view.setup() == preset


def test_the_scene_shows_its_fault_beside_the_correct_result_with_the_verdict() -> None:
    view = StageView(["trim"], delay=0)
    html = view.output.value
    assert "scl-stage-result" in html and "✗" in html
    assert html.count('class="scl-stage-who"') == 2
    assert "1 / 1" in view.head.value and "trim" in view.head.value


def test_a_fault_that_gives_the_same_result_says_so() -> None:
    result = breaker.run(breaker.Setup('{"a": 1}'))
    assert "the same" in stage_html(result, "trim").html


def test_typed_markup_is_shown_as_text_on_the_stage() -> None:
    view = StageView(["trim"], delay=0)
    view.args.value = '{"t": "' + IMG + '"}'
    assert IMG not in view.output.value and "&lt;img" in view.output.value


def test_an_empty_order_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one scene"):
        StageView([])


def demo_recipe() -> str:
    if not shutil.which("make"):
        pytest.skip("needs make")
    made = subprocess.run(["make", "-n", "-s", "-f", str(REPO / "Makefile"), "demo",
                           "VENV=/nonexistent", "DEMO_PORT=9999"], cwd=REPO,
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    return made.stdout


def test_make_demo_serves_the_stage_app_with_the_offline_template_and_the_culler() -> None:
    recipe = demo_recipe()
    assert "notebooks/stage/stage.ipynb" in recipe and "--port=9999" in recipe
    assert "--template=streamcalls" in recipe
    assert f"JUPYTER_CONFIG_PATH={REPO / 'share' / 'jupyter' / 'config'}" in recipe
    assert (REPO / "notebooks" / "stage" / "stage.ipynb").is_file()


def test_the_demo_config_culls_a_kernel_that_lost_its_page_only() -> None:
    config = json.loads((REPO / "share" / "jupyter" / "config" / "voila.json").read_text())
    culler = config["MappingKernelManager"]
    assert culler["cull_idle_timeout"] > 0 and culler["cull_interval"] > 0
    assert culler["cull_connected"] is False  # a page still open keeps its kernel


def _sides(html: str) -> tuple[str, str]:
    """The correct row's and the fault row's markup."""
    correct = html.rindex("<", 0, html.index('class="scl-stage-row'))
    fault = html.rindex("<", 0, html.index("scl-stage-fault"))
    return html[correct:fault], html[fault:]


def _text(markup: str) -> str:
    """What the audience reads: tags dropped, the row's heading dropped, spaces collapsed."""
    text = html_module.unescape(re.sub(r"<[^>]+>", " ", markup))
    return " ".join(text.split(" hands on ", 1)[-1].split())


FAILURE_MARKS = ("scl-got", "scl-gap", "scl-bad", "scl-stage-missing", "scl-stage-extra")


@pytest.mark.parametrize("name", scenes())
def test_every_scene_draws_its_fault_on_the_handed_on_line(name: str) -> None:
    html = stage_html(breaker.run(PRESETS[name]), name).html
    correct, fault = _sides(html)
    assert _text(correct), f"{name}: the correct row is blank"
    assert _text(fault) != _text(correct), f"{name}: the handed-on line reads as the correct one"
    assert any(m in fault for m in FAILURE_MARKS), f"{name}: nothing marked as wrong"


def test_a_doubled_name_is_marked_in_the_label() -> None:
    _, fault = _sides(stage_html(breaker.run(PRESETS["name_concatenated"]),
                                 "name_concatenated").html)
    assert re.search(r'<mark class="scl-got">(final_result)+</mark>', fault)


def test_a_call_handed_on_twice_under_one_block_is_drawn_as_an_extra_call() -> None:
    _, fault = _sides(stage_html(breaker.run(PRESETS["blank_id_new_call"]),
                                 "blank_id_new_call").html)
    assert fault.count("scl-stage-extra") == 1 and "id " in _text(fault)


def test_a_call_lost_is_drawn_struck_through_and_an_empty_one_is_not_blank() -> None:
    correct, fault = _sides(stage_html(breaker.run(PRESETS["empty_args_dropped"]),
                                       "empty_args_dropped").html)
    assert "no argument text" in _text(correct)
    assert "scl-stage-missing" in fault and "<del>" in fault


def test_a_call_filed_under_no_id_shows_the_id_and_name_it_lost() -> None:
    correct, fault = _sides(stage_html(breaker.run(PRESETS["key_by_id"]), "key_by_id").html)
    assert "toolu_01break02" in _text(correct) and "(blank)" in _text(fault)
    assert '<mark class="scl-got">(no name)</mark>' in fault


@pytest.mark.parametrize(("query", "index"), [
    ("scene=12", 11), ("token=abc&scene=key_by_id", SCRIPT.index("key_by_id")),
    ("scene=0", 0), ("scene=999", 0), ("scene=nonesuch", 0), ("", 0), ("scene=%31%32", 11),
    ("scene=٣", 0), ("scene=3&scene=5", 4)])
def test_the_address_names_the_scene_by_number_or_name(query: str, index: int) -> None:
    from streamcalls_lab.widgets.stage import scene_in

    assert scene_in(query, scenes()) == index


def test_the_stage_opens_on_the_scene_in_the_address_and_the_head_carries_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUERY_STRING", "scene=key_by_id")
    view = StageView.from_address(delay=0)
    assert view.name == "key_by_id" and view.setup() == PRESETS["key_by_id"]
    assert 'data-scene="key_by_id"' in view.head.value
    shown = re.search(r'data-shown="(\d+)"', view.head.value)
    view.reset()  # a redraw of the same scene is a new drawing: the page's keys wait on it
    assert shown and f'data-shown="{int(shown[1]) + 1}"' in view.head.value


def test_no_character_on_the_stage_needs_an_emoji_font() -> None:
    view = StageView(["decode_chunks"], delay=0)
    assert "👍" in PRESETS["decode_chunks"].args
    assert not re.search("[\U0001F000-\U0001FAFF\uFE0F]", view.output.value)
    assert "U+1F44D" in view.output.value and "U+1F3FD" in view.output.value
