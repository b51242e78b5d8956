"""The stepper's clock and history: recorded pace, the step at a moment, what went wrong when."""

from __future__ import annotations

import math

import pytest

import streamcalls_lab as scl
from streamcalls_lab import stepper as playback
from streamcalls_lab.stepper import first_divergence

from .conftest import DATA

TIMED = DATA / "anthropic-messages" / "two-calls-long-args.sse"


def test_a_capture_with_a_sidecar_plays_at_its_recorded_times() -> None:
    stepper = scl.Stepper(TIMED)
    clock = playback.clock(stepper, TIMED)
    recorded = scl.load(TIMED)["t"].tolist()
    assert clock.recorded
    assert all(math.isclose(a, b) for a, b in zip(clock.times, recorded, strict=True))


def test_bytes_without_timing_are_spaced_evenly() -> None:
    stepper = scl.Stepper(TIMED.read_bytes())
    clock = playback.clock(stepper, TIMED.read_bytes(), gap=0.5)
    assert not clock.recorded
    assert clock.times[:3] == (0.0, 0.5, 1.0) and len(clock.times) == len(stepper)


def test_times_never_go_back() -> None:
    times = playback.clock(scl.Stepper(TIMED), TIMED).times
    assert list(times) == sorted(times)


def test_step_at_is_the_last_event_already_arrived() -> None:
    times = [0.0, 0.0, 0.5, 1.0]
    assert playback.step_at(times, 0.0) == 1
    assert playback.step_at(times, 0.7) == 2
    assert playback.step_at(times, 99) == 3
    assert playback.step_at(times, -1) == 0


def test_step_at_needs_steps() -> None:
    with pytest.raises(ValueError):
        playback.step_at([], 0.0)


def test_history_names_each_variants_first_divergence() -> None:
    stepper = scl.Stepper(TIMED)
    table = playback.history(stepper, len(stepper) - 1).set_index("variant")
    expected = first_divergence(stepper)
    assert list(table.index) == list(scl.FAULTS)
    for name, (step, reason) in expected.items():
        assert table.loc[name, "first_step"] == step
        assert table.loc[name, "first_reason"] == reason
    assert table["first_step"].isna().sum() == len(scl.FAULTS) - len(expected)


def test_history_tells_an_early_handoff_that_agrees_again_from_a_lasting_one() -> None:
    stepper = scl.Stepper(TIMED)
    table = playback.history(stepper, len(stepper) - 1).set_index("variant")
    assert table.loc["parse_to_finish", "now"] == ""  # early, then its stop came
    assert table.loc["trim", "now"] != ""


def test_history_is_empty_before_anything_goes_wrong() -> None:
    table = playback.history(scl.Stepper(TIMED), 0)
    assert table["first_step"].isna().all() and (table["now"] == "").all()


def played(start: int, step: int, end: int) -> int:
    """Where a Play widget stops: it adds ``step`` each tick while that stays within ``end``."""
    value = start
    while value + step <= end:
        value += step
    return value


@pytest.mark.parametrize("speed", [0.5, 1.0, 2.0, 5.0, 20.0, 100.0])
@pytest.mark.parametrize("duration", [0.0, 0.001, 0.999, 1.0, 7.377, 61.25])
def test_play_ends_on_the_last_step_at_any_speed(speed: float, duration: float) -> None:
    clock = playback.Clock((0.0, 0.0, duration / 2, duration), True)
    step, end = playback.play_range(clock, speed, 50)
    for start in (0, 1, step // 2, int(duration * 500)):
        assert playback.step_of(clock, played(start, step, end)) == 3


def test_play_on_a_recorded_turn_ends_on_its_last_step_at_every_speed() -> None:
    stepper = scl.Stepper(TIMED)
    clock = playback.clock(stepper, TIMED)
    for speed in (0.5, 1.0, 2.0, 5.0, 20.0):
        step, end = playback.play_range(clock, speed, 50)
        assert playback.step_of(clock, played(0, step, end)) == len(stepper) - 1


def test_play_step_scales_with_speed_and_never_stalls() -> None:
    clock = playback.Clock((0.0, 1.0), True)
    assert playback.play_range(clock, 5.0, 50)[0] == 250
    assert playback.play_range(clock, 0.001, 50)[0] == 1
    with pytest.raises(ValueError):
        playback.play_range(clock, 0.0, 50)


def test_a_clock_at_its_start_shows_step_zero_even_when_several_events_share_it() -> None:
    clock = playback.Clock((0.0, 0.0, 0.0, 0.5), True)
    assert playback.step_of(clock, 0) == 0
    assert playback.step_of(clock, 1) == 2
    assert playback.step_of(clock, 500) == 3


def test_moving_to_a_step_puts_the_clock_at_its_time() -> None:
    clock = playback.Clock((0.0, 0.25, 0.5), True)
    assert [playback.ms_of(clock, i) for i in range(3)] == [0, 250, 500]


def test_history_up_to_a_step_ignores_what_goes_wrong_later() -> None:
    stepper = scl.Stepper(TIMED)
    first = first_divergence(stepper)
    upto = min(step for step, _ in first.values())
    table = playback.history(stepper, upto).set_index("variant")
    assert set(table.index[table["first_step"].notna()]) == {
        name for name, (step, _) in first.items() if step <= upto}
