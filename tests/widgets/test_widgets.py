"""The views, without a browser: set widget values, click buttons, read the HTML they show."""

from __future__ import annotations

import html
import re

import pytest

import streamcalls_lab as scl
from streamcalls_lab import breaker, display
from streamcalls_lab.breaker import PRESETS, Setup
from streamcalls_lab.check import Call, Text, turn_bytes
from streamcalls_lab.stepper import Speed, choices, first_divergence, still_step
from streamcalls_lab.widgets import BreakerView, StepperView, overview, stepper_view
from streamcalls_lab.widgets import breaker as breaker_view

from ..conftest import DATA, FORMATS

CAPTURE = DATA / "anthropic-messages" / "two-calls-long-args.sse"
IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
HOSTILE_ARGS = '{"title": "' + IMG + '", "body": "' + SCRIPT + '"}'
RAW_TAG = re.compile(r"<\s*(img|script)\b", re.IGNORECASE)
ROW = re.compile(r'<span class="scl-block">(.*?)</span></td><td>.*?</td><td>'
                 r'(<code class="scl-frag scl-buffer">.*?</code>)</td>', re.DOTALL)


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def shown_buffers(markup: str) -> dict[str, str]:
    """The buffers table of a stepper view's HTML, as the reader sees it."""
    return {text_of(block): text_of(code) for block, code in ROW.findall(markup)}


def as_shown(buffers: dict) -> dict[str, str]:
    """What the model's buffers look like once drawn (line breaks as symbols)."""
    return {str(k): text_of(display.visible(v)) for k, v in buffers.items()}


# -- the breaker view ------------------------------------------------------------------------
def test_the_breaker_starts_from_its_preset_and_shows_the_faults_reason() -> None:
    view = BreakerView("lenient_parse")
    assert view.setup() == PRESETS["lenient_parse"]
    assert html.escape(view.result.faults["lenient_parse"].reason) in view.output.value


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_comes_back_whole_from_the_controls(name: str) -> None:
    assert BreakerView(name).setup() == PRESETS[name]  # quirks and formats included


def test_a_server_quirk_chosen_in_the_view_is_written_into_the_turn() -> None:
    view = BreakerView("trim")
    view.provider.value = "openai-chat"
    view.quirks.value = ("empty_choices",)
    assert view.setup().quirks == ("empty_choices",)
    assert view.result is not None and view.result.setup.quirks == ("empty_choices",)


def test_a_quirk_the_format_cannot_carry_is_refused_by_name() -> None:
    view = BreakerView("trim")
    view.provider.value = "anthropic-messages"
    view.quirks.value = ("empty_choices",)
    assert view.result is None and "server quirks" in view.output.value


def test_moving_the_split_reruns_the_model() -> None:
    view = BreakerView("trim")
    view.split.value = 5
    assert view.result.setup.split == 5
    assert "trim" not in view.result.broken()
    assert "✗" not in view.output.value.split("<b>trim</b>")[1].split("</tr>")[0]


def test_typing_arguments_resizes_the_slider_and_offers_new_boundaries() -> None:
    view = BreakerView("trim")
    view.args.value = '{"n": 20}'
    assert view.split.max == 9 and view.split.value <= 9
    assert ("between two digits (at 7)", 7) in view.boundary.options
    assert view.result.setup.args == '{"n": 20}'


def test_picking_a_boundary_moves_the_split() -> None:
    view = BreakerView("decode_each")
    _label, at = next(o for o in view.boundary.options if "\\n" in o[0])
    view.boundary.value = at
    assert view.split.value == at and view.result.setup.split == at


def test_dragging_the_split_away_clears_the_picked_boundary() -> None:
    view = BreakerView("decode_each")
    view.boundary.value = view.boundary.options[1][1]
    view.split.value = 2
    assert view.boundary.value == breaker_view.NO_BOUNDARY


@pytest.mark.parametrize("provider", FORMATS)
def test_the_format_buttons_change_the_wire_format(provider: str) -> None:
    view = BreakerView("trim")
    view.provider.value = provider
    assert view.result.setup.provider == provider
    assert scl.load(view.result.body)["provider"].iloc[0] == provider


def test_choosing_a_preset_loads_all_of_its_setup() -> None:
    view = BreakerView("trim")
    view.preset.value = "key_by_name"
    assert view.setup() == PRESETS["key_by_name"]
    assert view.focus == "key_by_name"
    assert 'class="scl-fault scl-focus"><td><b>key_by_name</b>' in view.output.value


def test_read_size_zero_means_one_read_and_the_checkbox_cuts_the_stream() -> None:
    view = BreakerView("decode_chunks")
    view.read_size.value = 0
    assert len(view.result.reads) == 1 and "decode_chunks" not in view.result.broken()
    view.cut_off.value = True
    assert view.result.correct.calls == ()


def test_show_limits_the_rows_to_the_faults_asked_for() -> None:
    view = BreakerView("trim", show=["trim"])
    rows = re.findall(r'class="scl-fault[^"]*"><td><b>(\w+)</b>', view.output.value)
    assert rows == ["trim"]


def test_the_static_form_is_what_the_widget_shows() -> None:
    view = BreakerView("key_by_name")
    bundle = view._repr_mimebundle_()
    assert view.static().html == view.output.value == bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_lost_and_added_text_is_marked() -> None:
    out = breaker_view.render(breaker.run(PRESETS["key_by_name"]), ["key_by_name"]).html
    assert '<mark class="scl-got">{&quot;order_id&quot;: &quot;B-2093&quot;}</mark>' in out
    assert "not handed on" in out


def test_the_overview_has_a_row_per_preset() -> None:
    out = overview(servers=True).html
    assert len(re.findall(r'class="scl-overview"><td><b>', out)) == len(PRESETS)


def test_the_overview_leaves_server_side_presets_out_until_asked() -> None:
    client = [n for n, s in PRESETS.items() if not s.quirks]
    out = overview().html
    assert len(re.findall(r'class="scl-overview"><td><b>', out)) == len(client)
    assert "<th>finish_gate</th>" not in out and "<th>trim</th>" in out


# -- the stepper view ------------------------------------------------------------------------
@pytest.fixture
def view() -> StepperView:
    """A fresh stepper view of the two-call capture (its first step shown)."""
    return StepperView(CAPTURE)


def test_next_moves_the_model_and_the_shown_buffers_follow(view: StepperView) -> None:
    for _ in range(20):
        view.next.click()
    assert view.index == view.stepper.index == 20
    assert 'step <b class="scl-index">20</b>' in view.output.value
    assert shown_buffers(view.output.value) == as_shown(view.stepper.state(20).buffers)
    assert len(shown_buffers(view.output.value)) == 2


def test_back_goes_one_step_and_stops_at_the_start(view: StepperView) -> None:
    view.go(3)
    view.back.click()
    assert view.index == 2
    view.go(0)
    view.back.click()
    assert view.index == 0


def test_next_stops_at_the_last_event(view: StepperView) -> None:
    view.go(len(view.stepper) - 1)
    view.next.click()
    assert view.index == len(view.stepper) - 1


def test_the_play_clock_lands_on_the_step_recorded_at_that_time(view: StepperView) -> None:
    view.play.value = 3000
    assert view.index == view.clock.at(3.0) > 0


def test_moving_the_slider_moves_the_play_clock_without_jumping_back(view: StepperView) -> None:
    view.slider.value = 1  # shares t = 0 with the events around it
    assert view.index == 1 and view.play.value == int(view.clock.times[1] * 1000)


def test_speed_scales_the_play_step(view: StepperView) -> None:
    view.speed.value = next(s for s in stepper_view.SPEEDS if s.factor == 5.0)
    assert view.play.step == 5 * stepper_view.TICK_MS


@pytest.mark.parametrize("speed", stepper_view.SPEEDS, ids=lambda s: s.label)
def test_playing_to_the_end_at_any_speed_lands_on_the_last_step(
    speed: Speed, view: StepperView,
) -> None:
    view.speed.value = speed
    while view.play.value + view.play.step <= view.play.max:  # what the Play widget does
        view.play.value += view.play.step
    assert view.index == len(view.stepper) - 1
    assert "handed on" in view.output.value


def test_stop_rewinds_to_the_first_step(view: StepperView) -> None:
    view.go(30)
    view.play.value = view.play.min  # the Play widget's stop
    assert view.index == 0


def test_the_step_head_counts_events_as_the_caption_does(view: StepperView) -> None:
    n = len(view.stepper)
    view.go(n - 1)
    assert f"(event {n} of {n})" in text_of(view.output.value)


def test_the_handler_menu_shows_that_variants_buffers(view: StepperView) -> None:
    view.go(40)
    view.handler.value = "trim"
    want = view.stepper.state(40).variants["trim"].snapshot.buffers
    assert shown_buffers(view.output.value) == as_shown(want)
    assert want != view.stepper.state(40).buffers


def test_the_variants_table_says_when_each_went_wrong(view: StepperView) -> None:
    view.go(len(view.stepper) - 1)
    assert "agrees again now" in view.output.value  # parse_to_finish: early, then stopped
    assert "step 54: raised ValueError" in view.output.value


def test_the_stepper_static_form_is_what_the_widget_shows(view: StepperView) -> None:
    view.go(12)
    assert view._repr_mimebundle_()["text/html"] == view.static().html == view.output.value


def test_a_slow_speed_plays_one_event_per_tick_at_its_rate(view: StepperView) -> None:
    view.speed.value = stepper_view.SPEEDS[0]  # 2 events a second
    assert (view.play.step, view.play.interval) == (1, 500)
    view.play.value += view.play.step
    assert view.index == 1


def test_the_timing_label_follows_the_speed_chosen(view: StepperView) -> None:
    slowest = stepper_view.SPEEDS[0]
    view.speed.value = slowest
    seconds = (len(view.stepper) - 1) / slowest.per_second
    assert view.timing.value == f"{slowest.label}: {seconds:.1f} s in all"


def test_changing_speed_keeps_the_step_shown(view: StepperView) -> None:
    view.go(40)
    for speed in (stepper_view.SPEEDS[0], stepper_view.SPEEDS[-1], stepper_view.SPEEDS[1]):
        view.speed.value = speed
        assert view.index == 40
        assert view.pace.step_of(view.play.value) == 40


def test_every_control_has_a_tooltip(view: StepperView) -> None:
    controls = (view.back, view.next, view.jump, view.slider, view.play, view.speed,
                view.handler, view.capture)
    assert all(c.tooltip for c in controls)


def test_the_jump_goes_to_the_first_divergence_of_the_variant_shown(view: StepperView) -> None:
    view.handler.value = "trim"
    assert view.jump_to_divergence() == view.index == first_divergence(view.stepper)["trim"][0]
    assert "trim" in view.status.value


def test_the_jump_with_the_correct_handler_goes_to_the_first_divergence_of_any(
    view: StepperView,
) -> None:
    view.go(100)
    view.jump.click()
    assert view.index == min(at for at, _ in first_divergence(view.stepper).values())


def test_the_jump_says_so_when_the_variant_never_diverges(view: StepperView) -> None:
    view.go(7)
    view.handler.value = "key_by_last"
    assert view.jump_to_divergence() is None
    assert view.index == 7 and "never differs" in view.status.value


def test_a_folder_fills_the_capture_picker_and_a_pick_steps_through_that_capture() -> None:
    view = StepperView(CAPTURE, choices=DATA)
    labels = [label for label, _ in view.capture.options]
    assert labels == [c.label for c in choices(DATA)]
    assert labels[view.capture.value] == "anthropic-messages/two-calls-long-args"
    view.go(5)
    view.capture.value = labels.index("openai-chat/same-tool-twice")
    assert view.index == 0 and view.stepper.turn == "same-tool-twice"
    assert len(view.stepper) == len(scl.Stepper(DATA / "openai-chat" / "same-tool-twice.sse"))
    assert view.slider.max == len(view.stepper) - 1
    assert view.clock.recorded  # its timing sidecar read


def test_picking_an_unreadable_entry_says_why_and_keeps_the_controls(tmp_path) -> None:
    (tmp_path / "gone.sse").symlink_to(tmp_path / "nowhere.sse")
    (tmp_path / "ok.sse").write_bytes(CAPTURE.read_bytes())
    view = StepperView(tmp_path / "ok.sse", choices=tmp_path)
    labels = [label for label, _ in view.capture.options]
    assert labels == ["gone (cannot be read)", "ok"]
    view.capture.value = 0
    assert "dangling symlink" in text_of(view.output.value)


def test_a_capture_outside_the_folder_is_offered_as_given() -> None:
    view = StepperView(CAPTURE.read_bytes(), choices=DATA / "openai-chat")
    first = view.capture.options[0][0]
    assert first.endswith("(as given)") and view.capture.value == 0
    view.capture.value = 1
    view.capture.value = 0
    assert view.stepper.turn == "<bytes>"


def test_a_fresh_stepper_leaves_a_still_of_a_call_half_sent() -> None:
    view = StepperView(CAPTURE)
    still = view._repr_mimebundle_()["text/html"]
    at = still_step(view.stepper)
    assert at > 0 and f'step <b class="scl-index">{at}</b>' in still
    assert "A still of step" in text_of(still)
    assert view.index == 0 and 'step <b class="scl-index">0</b>' in view.output.value


def test_a_bedrock_frame_is_shown_decoded_not_as_mojibake() -> None:
    body = turn_bytes("bedrock-converse", [Call("lookup", "t1", ('{"id": ', '"A-1"}'))])
    view = StepperView(body)
    for i in range(len(view.stepper)):
        view.go(i)
        frame = text_of(re.search(r'<pre class="scl-code scl-frame">(.*?)</pre>',
                                  view.output.value, re.S).group(1))
        assert ":event-type (string) = " in frame and "\ufffd" not in frame
        assert "\x00" not in frame and "\\x00" not in frame  # the prelude, raw or escaped


def test_a_capture_without_timing_says_so() -> None:
    view = StepperView(CAPTURE.read_bytes())
    assert "no recorded timing" in view.output.value


# -- captured and typed text never becomes markup --------------------------------------------
def assert_escaped(markup: str) -> None:
    assert RAW_TAG.search(markup) is None
    assert "&lt;img src=x onerror=alert(1)&gt;" in markup


def test_the_tag_check_catches_unescaped_markup() -> None:
    with pytest.raises(AssertionError):
        assert_escaped(f"<div>{IMG}</div>")


@pytest.mark.parametrize("name", list(PRESETS))
def test_hostile_arguments_are_escaped_in_the_breaker(name: str) -> None:
    view = BreakerView(name)
    view.args.value = HOSTILE_ARGS
    view.earlier.value = HOSTILE_ARGS
    view.before.value = IMG
    view.after.value = SCRIPT
    view.every.value = 4
    for markup in (view.output.value, view.static().html, view._repr_mimebundle_()["text/html"]):
        assert_escaped(markup)
        assert RAW_TAG.search(markup.replace("&lt;script&gt;", "")) is None


def test_hostile_presets_are_escaped_in_the_overview() -> None:
    hostile = {"x": Setup(HOSTILE_ARGS, split=12, before=SCRIPT, earlier=IMG)}
    assert_escaped(overview(hostile).html)


def test_hostile_captures_are_escaped_at_every_step_of_the_stepper() -> None:
    turn = [Text(("Filed: ", IMG)),
            Call("create_ticket", "toolu_x", ('{"title": "', IMG[:9], IMG[9:], '", "b": "',
                                              SCRIPT[:10], SCRIPT[10:], '"}'))]
    view = StepperView(turn_bytes("anthropic-messages", turn))
    for handler in ["correct", *scl.FAULTS]:
        view.handler.value = handler
        for i in range(len(view.stepper)):
            view.go(i)
            assert RAW_TAG.search(view.output.value) is None
    view.go(len(view.stepper) - 1)
    assert_escaped(view.static().html)


def test_the_bubble_is_shown_rendered_as_escaped_text_with_what_it_ate_marked() -> None:
    view = BreakerView("markdown_bubble", show=["markdown_bubble"])
    view.args.value = '{"note": "ship *both* parts <img src=x onerror=alert(1)>"}'
    markup = view.output.value
    assert "&lt;em&gt;both&lt;/em&gt;" in markup  # the renderer's HTML, as characters
    assert RAW_TAG.search(markup) is None and "<em>" not in markup
    assert '<mark class="scl-lost">*</mark>' in markup


def test_the_parse_to_finish_preset_shows_its_split_at_the_end_of_the_arguments() -> None:
    view = BreakerView("parse_to_finish")
    assert view.split.value == len(view.args.value) and view.cut_off.value


# -- a relayed turn: the provider's stream and the browser's, side by side --------------------
def test_switching_to_the_browser_stream_lands_on_its_matching_step() -> None:
    view = StepperView.relayed(CAPTURE)
    view.go(60)
    view.stream.value = 1
    assert view.stepper is view.relay.browser
    assert view.index == view.relay.browser_step(60)
    assert view.slider.max == len(view.relay.browser) - 1
    view.stream.value = 0
    assert view.stepper is view.relay.provider and view.index == 60


def test_the_relayed_view_shows_both_streams_side_by_side() -> None:
    view = StepperView.relayed(CAPTURE)
    view.go(60)
    shown = text_of(view.output.value)
    j = view.relay.browser_step(60)
    assert "anthropic-messages (stepping): step 60" in shown
    assert f"ai-sdk-ui (at its matching step): step {j}" in shown
    assert '"type":"tool-input-delta"' in shown


def test_hostile_text_is_escaped_in_both_streams_of_a_relay() -> None:
    turn = [Text(("Filed: ", IMG)), Call("t", "toolu_x", ('{"b": "', SCRIPT[:10], SCRIPT[10:],
                                                          '"}'))]
    view = StepperView.relayed(turn)
    for i in range(len(view.stepper)):
        view.go(i)
        assert RAW_TAG.search(view.output.value) is None


def test_a_plain_view_has_no_stream_switch() -> None:
    view = StepperView(CAPTURE)
    assert view.relay is None and "scl-relay" not in view.output.value


def test_an_empty_buffer_beside_is_said_to_be_empty() -> None:
    view = StepperView.relayed(CAPTURE)
    buffers = [view.stepper.state(i).buffers for i in range(len(view.stepper))]
    view.go(next(i for i, held in enumerate(buffers) if held and not any(held.values())))
    assert "(empty)" in text_of(view.output.value.split("scl-beside", 1)[1])
