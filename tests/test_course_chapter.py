"""The course puts the chapter's faults first and keeps the server-side ones behind a toggle;
a prediction asked over some variants is answered over those alone."""

from __future__ import annotations

from pathlib import Path

import streamcalls_lab as scl
from streamcalls_lab import breaker
from streamcalls_lab.course import chapter, stepping
from streamcalls_lab.stepper import history
from streamcalls_lab.widgets import Overview, StepperView

REPO = Path(__file__).resolve().parents[1]
TWO_CALLS = REPO / "data" / "anthropic-messages" / "two-calls-long-args.sse"


def test_the_chapter_faults_come_first_and_server_side_ones_only_on_request() -> None:
    plain, everything = chapter.in_order(), chapter.in_order(servers=True)
    assert plain[:len(chapter.CHAPTER)] == list(chapter.CHAPTER)
    assert sorted(everything) == sorted(scl.FAULTS)
    hidden = set(everything) - set(plain)
    # server-side means: its preset needs a quirk; a chapter fault never does
    assert hidden == {n for n, s in breaker.PRESETS.items() if s.quirks}
    assert hidden and not hidden & set(chapter.CHAPTER)


def test_the_overview_hides_server_side_columns_until_the_toggle() -> None:
    view = Overview()
    assert "finish_gate" not in view.output.value and "trim" in view.output.value
    view.servers.value = True
    assert "finish_gate" in view.output.value


def test_the_first_prediction_is_answered_only_by_the_variants_it_lists() -> None:
    stepper = scl.Stepper(TWO_CALLS)
    candidates = chapter.in_order(stepper.faults)
    _, names = stepping.first_to_go_wrong(stepper, candidates)
    assert names and set(names) <= set(candidates)
    _, any_names = stepping.first_to_go_wrong(stepper)
    # on this turn a server-side variant ties for first: without `among` it is in the answer
    assert set(any_names) - set(candidates)
    assert set(stepping.wrong_then_right(stepper, candidates)) <= set(candidates)


def test_a_history_table_lists_the_chapter_first_and_counts_what_it_left_out() -> None:
    stepper = scl.Stepper(TWO_CALLS)
    full = history(stepper, len(stepper) - 1)
    shown = stepping.chapter_first(full)
    assert list(shown["variant"])[:len(chapter.CHAPTER)] == list(chapter.CHAPTER)
    assert len(shown) + len(shown.attrs["hidden"]) == len(full)
    assert "index_as_position" in shown.attrs["hidden_wrong"]
    assert len(stepping.chapter_first(full, servers=True)) == len(full)


def test_the_stepper_view_lists_server_side_variants_on_the_toggle() -> None:
    view = StepperView(TWO_CALLS)
    view.go(len(view.stepper) - 1)
    assert "index_as_position" not in view.output.value
    assert "scl-servers-hidden" in view.output.value
    view.servers.value = True
    assert "index_as_position" in view.output.value
