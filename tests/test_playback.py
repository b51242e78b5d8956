"""The stepper's clock and history: recorded pace, the step at a moment, what went wrong when."""

from __future__ import annotations

import math

import pytest

import streamcalls_lab as scl
from streamcalls_lab import playback
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
