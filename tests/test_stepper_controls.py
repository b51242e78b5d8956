"""What a stepper view's controls mean, in the pure model: the capture picker's choices, where
a jump to the first divergence lands, each speed's play clock, the still a page without a
kernel shows, and a binary frame as the raw-frame panel shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab import stepper as model
from streamcalls_lab.check import Call, Text, turn_bytes
from streamcalls_lab.stepper import Speed, choices, divergence_step, first_divergence, still_step

from .conftest import DATA

CAPTURE = DATA / "anthropic-messages" / "two-calls-long-args.sse"
ONE_FRAGMENT = turn_bytes("openai-chat", [Call("lookup", "call_1", ('{"id": 1}',))])


@pytest.fixture(scope="module")
def stepper() -> scl.Stepper:
    return scl.Stepper(CAPTURE)


# -- the picker ------------------------------------------------------------------------------
def test_a_folders_choices_are_its_captures_in_load_order() -> None:
    picked = choices(DATA)
    assert [c.label for c in picked] == list(dict.fromkeys(scl.load(DATA)["turn"]))
    assert all(c.problem is None and c.turn is None for c in picked)


def test_a_choice_of_a_file_steps_through_that_file_with_its_timing() -> None:
    choice = next(c for c in choices(DATA) if c.label == "openai-chat/short-call")
    assert choice.source == DATA / "openai-chat" / "short-call.sse"
    assert len(choice.stepper()) == len(scl.Stepper(choice.source))


def test_an_unreadable_entry_is_offered_with_its_problem(tmp_path: Path) -> None:
    (tmp_path / "gone.sse").symlink_to(tmp_path / "nowhere.sse")
    (tmp_path / "ok.sse").write_bytes(ONE_FRAGMENT)
    gone, ok = choices(tmp_path)
    assert (gone.label, ok.label) == ("gone", "ok") and ok.problem is None
    assert gone.problem is not None and "dangling symlink" in gone.problem
    with pytest.raises(ValueError, match=r"gone: .*dangling symlink"):
        gone.stepper()


def test_a_folder_with_no_capture_says_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match=r"1 \.txt"):
        choices(tmp_path)


# -- the jump to the first divergence -----------------------------------------------------------
def test_the_jump_lands_on_the_first_step_any_variant_differs(stepper: scl.Stepper) -> None:
    at = divergence_step(stepper)
    assert at is not None and stepper.state(at).diverged
    assert not any(stepper.state(i).diverged for i in range(at))


def test_the_jump_for_a_variant_lands_where_that_one_first_differs(stepper: scl.Stepper) -> None:
    at = divergence_step(stepper, "trim")
    assert at is not None and "trim" in stepper.state(at).diverged
    assert all("trim" not in stepper.state(i).diverged for i in range(at))
    assert at != divergence_step(stepper)  # a later one than the first of all


def test_the_jump_for_the_correct_handler_is_the_first_of_any(stepper: scl.Stepper) -> None:
    assert divergence_step(stepper, "correct") == divergence_step(stepper)


def test_there_is_no_jump_when_nothing_diverges() -> None:
    clean = scl.Stepper(ONE_FRAGMENT, faults={"trim": scl.FAULTS["trim"]})  # no edge space
    assert first_divergence(clean) == {} and divergence_step(clean) is None


def test_there_is_no_jump_for_a_variant_that_never_diverges(stepper: scl.Stepper) -> None:
    assert divergence_step(stepper, "key_by_last") is None


# -- speeds -------------------------------------------------------------------------------------
def test_the_slowest_speed_is_about_two_events_a_second() -> None:
    slowest = model.SPEEDS[0]
    assert slowest.per_second == 2.0
    assert model.pace(model.Clock((0.0, 0.1, 0.2), True), slowest).interval == 500


@pytest.mark.parametrize("rate", [2.0, 5.0, 0.5])
def test_an_event_rate_is_one_step_per_tick_every_thousandth_of_its_rate(rate: float) -> None:
    clock = model.Clock(tuple(i * 0.001 for i in range(30)), True)
    p = model.pace(clock, Speed("x", per_second=rate))
    assert (p.step, p.interval, p.max, p.per_event) == (1, round(1000 / rate), 29, True)


def test_an_event_rate_takes_one_interval_per_step_to_play() -> None:
    clock = model.Clock(tuple(i * 0.001 for i in range(13)), True)  # 12 steps after step 0
    assert model.pace(clock, Speed("x", per_second=2.0)).seconds == 6.0


def test_a_factor_takes_the_recorded_duration_over_the_factor_to_play() -> None:
    clock = model.Clock((0.0, 1.0, 4.0), True)
    assert model.pace(clock, Speed("2×", 2.0), 50).seconds == pytest.approx(2.0, abs=0.05)


def test_an_event_rate_ignores_the_recorded_gaps() -> None:
    clock = model.Clock((0.0, 0.0, 0.0, 9.0), True)  # three at once, then a long wait
    p = model.pace(clock, Speed("x", per_second=2.0))
    assert [p.step_of(v) for v in range(4)] == [0, 1, 2, 3]
    assert [p.value_of(i) for i in range(4)] == [0, 1, 2, 3]


def test_a_factor_keeps_the_recorded_clock(stepper: scl.Stepper) -> None:
    clock = model.clock(stepper, CAPTURE)
    p = model.pace(clock, Speed("5×", 5.0), 50)
    assert (p.step, p.max, p.interval, p.per_event) == (
        *model.play_range(clock, 5.0, 50), 50, False)
    assert model.pace(clock, 5.0, 50) == p  # a bare factor means the same


@pytest.mark.parametrize("bad", [{}, {"factor": 1.0, "per_second": 2.0}, {"per_second": 0.0},
                                 {"factor": -1.0}])
def test_a_speed_is_one_positive_rate(bad: dict) -> None:
    with pytest.raises(ValueError):
        Speed("x", **bad)


def test_an_event_rate_on_a_one_event_turn_stays_on_it() -> None:
    p = model.pace(model.Clock((0.0,), False), Speed("x", per_second=2.0))
    assert (p.max, p.step_of(5)) == (0, 0)


def test_moving_to_a_step_puts_the_clock_where_it_shows_that_step(stepper: scl.Stepper) -> None:
    clock = model.clock(stepper, CAPTURE)
    last_of_time = [i for i in range(len(clock.times))
                    if i + 1 == len(clock.times) or clock.times[i + 1] > clock.times[i]]
    # (a clock at 0 shows step 0: what stop rewinds to)
    assert all(model.step_of(clock, model.ms_of(clock, i)) == i for i in last_of_time
               if clock.times[i] > 0)


# -- the still ----------------------------------------------------------------------------------
def test_the_still_is_the_middle_fragment_of_the_call_sent_in_most(stepper: scl.Stepper) -> None:
    at = still_step(stepper)
    event = stepper.state(at).event
    assert event["kind"] == "args_delta"
    ev = stepper.events
    sent = ev[(ev["kind"] == "args_delta") & (ev["fragment"].fillna("") != "")]
    longest = sent.groupby("block").size().idxmax()
    mine = list(sent.index[sent["block"] == longest])
    assert event["block"] == longest and mine.index(at) == (len(mine) - 1) // 2


def test_the_still_shows_a_buffer_part_filled(stepper: scl.Stepper) -> None:
    step = stepper.state(still_step(stepper))
    key = model.CallKey(step.event["choice"], step.event["block"])
    assert step.buffers[key] and key not in {model.CallKey(c.get("choice"), c["block"])
                                             for c in step.finished}


def test_a_turn_with_no_call_in_two_fragments_is_still_at_its_middle() -> None:
    prose = scl.Stepper(turn_bytes("openai-chat", [Text(("a", "b", "c")),
                                                   Call("t", "c1", ('{}',))]))
    assert still_step(prose) == (len(prose) - 1) // 2


def test_a_one_event_turn_is_still_at_step_zero() -> None:
    assert still_step(scl.Stepper(b"data: [DONE]\n\n")) == 0


# -- a binary frame -----------------------------------------------------------------------------
def test_a_bedrock_frame_is_its_headers_and_payload_not_its_bytes_as_text() -> None:
    stepper = scl.Stepper(turn_bytes("bedrock-converse", [Call("lookup", "t1",
                                                               ('{"id": "é"}',))]))
    for i in range(len(stepper)):
        step = stepper.state(i)
        assert step.frame is not None and step.frame.startswith("event-stream message: ")
        assert f":event-type (string) = {step.event['event']}" in step.frame
        assert step.frame.endswith(step.event["data"]) and "\ufffd" not in step.frame


def test_a_text_frame_is_its_text() -> None:
    stepper = scl.Stepper(ONE_FRAGMENT)
    assert stepper.state(0).frame.startswith("data: {")


# -- a relayed turn: the provider's stream beside the browser-side one ----------------------
RELAYED = [Text(("Let me ", "look.")),
           Call("lookup", "toolu_1", ('{"city": "Zü', 'rich", "n": 2', "0}")),
           Call("ticket", "toolu_2", ('{"note": "see *both*', ' files"}'))]


def seen(stepper: scl.Stepper, i: int) -> tuple:
    """What the correct handler has at step ``i``, whatever the format keys it by."""
    snap = stepper.state(i).correct.snapshot
    return (sorted(snap.buffers.values()), snap.message,
            [(c["tool"], c["args"]) for c in snap.finished])


@pytest.mark.parametrize("fmt", ["anthropic-messages", "openai-chat", "openai-responses"])
def test_a_written_turn_is_told_back_as_its_script(fmt: str) -> None:
    told = model.script_of(scl.Stepper(turn_bytes(fmt, RELAYED)))
    assert told.segments == tuple(RELAYED) and not told.cut and not told.interleave


def test_a_turn_cut_inside_its_last_call_is_told_as_cut() -> None:
    told = model.script_of(scl.Stepper(turn_bytes("anthropic-messages", RELAYED, cut=True)))
    assert told.cut and told.segments[-1] == RELAYED[-1]


def test_a_cut_turn_with_an_earlier_call_never_stopped_cannot_be_told() -> None:
    """Chat stops every call at its finish: cut before it, two calls are open, and a
    stream that ends each call on its own would have to invent the first one's end."""
    with pytest.raises(ValueError, match="left open before the end"):
        model.script_of(scl.Stepper(turn_bytes("openai-chat", RELAYED, cut=True)))


def test_interleaved_calls_are_told_as_interleaved() -> None:
    calls = RELAYED[1:]
    told = model.script_of(scl.Stepper(turn_bytes("openai-chat", calls, interleave=True)))
    assert told.interleave and told.segments == tuple(calls)


def test_a_turn_of_two_choices_is_not_told_as_one() -> None:
    from streamcalls_lab.check import two_choice_turn

    body = two_choice_turn([RELAYED[1], RELAYED[2]])
    with pytest.raises(ValueError, match="several choices"):
        model.script_of(scl.Stepper(body))


@pytest.mark.parametrize("fmt", ["anthropic-messages", "openai-responses"])
def test_each_provider_step_is_matched_by_a_browser_step_showing_the_same(fmt: str) -> None:
    """Formats that end each call on its own, as the UI stream does."""
    pair = model.relay(RELAYED, fmt)
    assert pair.formats == (fmt, "ai-sdk-ui")
    for i in range(len(pair.provider)):
        assert seen(pair.browser, pair.browser_step(i)) == seen(pair.provider, i)


def test_each_browser_step_is_matched_by_a_provider_step_showing_the_same() -> None:
    pair = model.relay(RELAYED)
    for j in range(len(pair.browser)):
        assert seen(pair.provider, pair.provider_step(j)) == seen(pair.browser, j)


@pytest.mark.parametrize("fmt", ["anthropic-messages", "openai-chat", "openai-responses"])
def test_the_matching_step_is_the_last_that_shows_no_more(fmt: str) -> None:
    """Chat ends its calls only at the finish: the browser waits there, never ahead."""
    pair = model.relay(RELAYED, fmt)
    for i in range(len(pair.provider)):
        j, here = pair.browser_step(i), model.progress(pair.provider, i)
        assert all(a <= b for a, b in zip(model.progress(pair.browser, j), here, strict=True))
        if j + 1 < len(pair.browser):
            ahead = model.progress(pair.browser, j + 1)
            assert any(a > b for a, b in zip(ahead, here, strict=True))


def test_a_capture_is_relayed_as_recorded_beside_the_stream_sent_on_from_it() -> None:
    pair = model.relay(CAPTURE)
    recorded = scl.Stepper(CAPTURE)
    assert pair.formats == ("anthropic-messages", "ai-sdk-ui")
    assert len(pair.provider) == len(recorded)
    last = pair.browser.state(len(pair.browser) - 1)
    assert [c["args"] for c in last.finished] == [
        c["args"] for c in recorded.state(len(recorded) - 1).finished]


def test_the_browser_stream_is_named_for_the_turn_it_was_sent_on_from() -> None:
    assert model.relay(CAPTURE).browser.turn == "two-calls-long-args, sent on as ai-sdk-ui"
