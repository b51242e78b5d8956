"""The breaker view keeps up: edits wait for the controls to be still, say they are being
computed, never leave a verdict of other input on screen; a short text clamps the split and
says so; reset and choosing the same preset again restore the setup. No browser: widget
values are set from Python, inside an event loop where the wait needs one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from streamcalls_lab import breaker
from streamcalls_lab.breaker import PRESETS
from streamcalls_lab.widgets import BreakerView
from streamcalls_lab.widgets.breaker import OWN

DELAY = 0.05


def in_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The arguments of every setup the model was run on."""
    seen: list[str] = []
    real = breaker.run

    def counting(setup: breaker.Setup, *args: Any, **kwargs: Any) -> breaker.Result:
        seen.append(setup.args)
        return real(setup, *args, **kwargs)

    monkeypatch.setattr(breaker, "run", counting)
    return seen


def test_an_edit_waits_and_says_it_is_computing_with_no_verdict_shown() -> None:
    async def go() -> None:
        view = BreakerView("trim", delay=DELAY)
        assert "✗" in view.output.value
        view.args.value = '{"summary": "a b"}'
        assert view.pending
        assert "computing" in view.output.value and "✗" not in view.output.value
        assert view.current() is None  # the result held is the old text's
        view.flush()
        assert not view.pending and view.current() is view.result
        assert view.result is not None and view.result.setup.args == '{"summary": "a b"}'
    in_loop(go)


def test_a_burst_of_keystrokes_runs_the_model_once_on_the_last(runs: list[str]) -> None:
    async def go() -> None:
        view = BreakerView("trim", delay=DELAY)
        runs.clear()
        for text in ('{"a"', '{"a": ', '{"a": 1', '{"a": 1}'):
            view.args.value = text
        await asyncio.sleep(DELAY * 6)
        assert runs == ['{"a": 1}']
        assert not view.pending and view.current() is not None
    in_loop(go)


def test_the_result_shown_is_always_the_one_of_the_text_shown() -> None:
    async def go() -> None:
        view = BreakerView("trim", delay=DELAY)
        for text in ('{"x": "one two"}', '{"x": "three four"}'):
            view.args.value = text
            await asyncio.sleep(DELAY * 6)
            result = view.current()
            assert result is not None and result.setup.args == text == view.args.value
    in_loop(go)


def test_with_no_event_loop_an_edit_is_shown_at_once() -> None:
    view = BreakerView("trim", delay=DELAY)
    view.split.value = 3
    assert not view.pending and view.current() is not None


def test_a_text_shorter_than_the_split_clamps_it_and_says_so() -> None:
    view = BreakerView("trim", delay=0)
    wanted = PRESETS["trim"].split
    view.args.value = "Hi"
    assert view.split.value == 2
    assert f"it was at {wanted}" in view.status.value
    view.args.value = "Hi there, this sentence is longer than the split was."
    assert view.split.value == wanted and view.status.value == ""


def test_typing_a_sentence_a_key_at_a_time_keeps_the_split_where_it_was() -> None:
    view = BreakerView("trim", delay=0)
    sentence = "Please open a ticket for the March invoice run"
    for n in range(len(sentence) + 1):
        view.args.value = sentence[:n]
    assert view.split.value == PRESETS["trim"].split


def test_moving_the_split_by_hand_is_where_it_goes_back_to() -> None:
    view = BreakerView("trim", delay=0)
    view.split.value = 5
    view.args.value = "abc"
    view.args.value = "abcdefgh"
    assert view.split.value == 5


def test_reset_restores_the_preset_after_edits() -> None:
    view = BreakerView("decode_chunks", delay=0)
    view.args.value = '{"a": 1}'
    view.read_size.value = 3
    view.provider.value = "openai-chat"
    view.reset()
    assert view.setup() == PRESETS["decode_chunks"]
    assert view.preset.value == "decode_chunks"


def test_reset_button_restores_the_preset() -> None:
    view = BreakerView("trim", delay=0)
    view.split.value = 3
    view.reset_button.click()
    assert view.setup() == PRESETS["trim"]


def test_an_edit_lets_the_same_preset_be_chosen_again() -> None:
    view = BreakerView("trim", delay=0)
    view.split.value = 3
    assert view.preset.value == OWN
    view.preset.value = "trim"
    assert view.setup() == PRESETS["trim"]


def test_a_second_call_for_one_block_is_not_called_held_back() -> None:
    from streamcalls_lab import breaker as model
    from streamcalls_lab.widgets.breaker import render

    html = render(model.run(model.PRESETS["blank_id_new_call"]), ["blank_id_new_call"]).html
    assert "no second call: one was sent" in html and "held back" not in html


# -- one panel per section: only the controls the section's idea needs, beside the result --

def _panel_controls(view: BreakerView) -> list[Any]:
    panel = view.widget.children[0]
    assert "scl-breaker-controls" in panel._dom_classes
    return list(panel.children)


def test_the_playground_keeps_every_control_stacked_above_the_result() -> None:
    from streamcalls_lab.widgets.breaker import CONTROLS

    view = BreakerView("trim", delay=0)
    assert view.control_names == CONTROLS
    assert view.widget.children[-1] is view.output  # the result under the controls


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_section_panel_holds_what_its_preset_sets_and_keeps_the_rest(name: str) -> None:
    from streamcalls_lab.widgets.breaker import ALWAYS, CONTROLS

    view = BreakerView(name, show=[name], delay=0)
    shown = _panel_controls(view)
    assert view.widget.children[1].children[-1] is view.output  # the result beside them
    setup = PRESETS[name]
    wanted = {"every": setup.every, "read_size": setup.read_size, "cut_off": setup.cut_off,
              "earlier": setup.earlier, "before": setup.before, "after": setup.after,
              "quirks": setup.quirks}
    for control, value in wanted.items():
        assert (getattr(view, control) in shown) == bool(value), (name, control)
    assert all(getattr(view, c) in shown for c in ALWAYS)
    assert len(view.control_names) < len(CONTROLS)
    assert view.setup() == setup  # the hidden controls still hold the preset's values


def test_also_adds_a_control_the_exercise_asks_about_and_rejects_a_made_up_one() -> None:
    from streamcalls_lab.widgets.breaker import needed

    assert "every" not in needed("trim")
    view = BreakerView("trim", show=["trim"], also=["every"], delay=0)
    assert view.every in _panel_controls(view)
    with pytest.raises(ValueError, match="no such control: colour"):
        needed("trim", ["colour"])


def test_a_section_showing_several_faults_can_pick_among_their_presets() -> None:
    view = BreakerView("finish_gate", show=["finish_gate", "delta_only"], delay=0)
    assert view.preset in _panel_controls(view)
    view.preset.value = "delta_only"
    assert view.setup() == PRESETS["delta_only"]
