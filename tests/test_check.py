"""check_handler: clears the correct handler, names every fault by its own class."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab import FAULTS, Accumulator, check_handler
from streamcalls_lab.check import (
    CLASSES,
    INTERLEAVING,
    REPORT_COLUMNS,
    TURN_FORMATS,
    Call,
    Text,
    _interleaves,
    byte_turns,
    deleted_only,
    event_cases,
    expected_calls,
    partly_decoded,
    turn_bytes,
)


def test_the_correct_accumulator_passes_clean() -> None:
    report = check_handler(Accumulator)
    assert report.empty and report.attrs["cases"] > 5000


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_is_caught_under_its_own_class_only(name: str) -> None:
    assert list(check_handler(FAULTS[name])["class"]) == [name]


def test_report_has_the_contract_columns() -> None:
    assert tuple(check_handler(FAULTS["trim"]).columns) == REPORT_COLUMNS


def test_the_trim_example_loses_data_inside_a_string_not_a_space_between_tokens() -> None:
    row = check_handler(FAULTS["trim"]).iloc[0]
    expected, got = ast.literal_eval(row["expected"]), ast.literal_eval(row["got"])
    assert json.loads(got) != json.loads(expected)  # still JSON, but the data changed


def test_the_example_is_the_smallest_this_class_alone_explains() -> None:
    row = check_handler(FAULTS["lenient_parse"]).iloc[0]
    assert (row["family"], row["got"]) == ("truncated", repr('{"limit": 2'))


def _fed(events: list[dict[str, Any]]) -> Accumulator:
    acc = Accumulator()
    for event in events:
        acc.feed(event)
    return acc


def _correct_function(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _fed(events).finish()


def test_a_function_over_events_is_accepted_and_cleared() -> None:
    report = check_handler(_correct_function)
    assert report.empty and report.attrs["cases"] == len(event_cases())


def test_a_function_that_hands_on_unfinished_calls_is_flagged() -> None:
    def eager(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [buf.result() for buf in _fed(events).calls]  # ignores the stop

    assert "lenient_parse" in set(check_handler(eager)["class"])


def test_a_handler_that_raises_is_a_crash() -> None:
    class Broken(Accumulator):
        def stop(self, event: Any) -> None:
            raise RuntimeError("boom")

    row = check_handler(Broken).iloc[0]
    assert (row["class"], row["got"]) == ("crash", "raised RuntimeError: boom")


@pytest.mark.parametrize("fmt", TURN_FORMATS)
def test_the_builders_write_turns_calls_reads_back(fmt: str) -> None:
    segments = [Text(("Hi", " there")), Call("a", "c1", ('{"x": ', "1}")),
                Call("a", "c2", ('{"y":', " 2}"))]
    table = scl.calls(turn_bytes(fmt, segments))
    got = table[["block", "call_id", "tool", "args"]].to_dict("records")
    assert got == expected_calls(fmt, segments, cut=False)


@pytest.mark.parametrize("fmt", TURN_FORMATS)
def test_a_cut_turn_ends_without_any_stop(fmt: str) -> None:
    body = turn_bytes(fmt, [Call("a", "c1", ('{"x": 1}',))], cut=True)
    assert not scl.calls(body)["complete"].any()


def test_the_classes_are_the_fault_names_then_the_bugs_no_fault_shows() -> None:
    assert CLASSES[:len(FAULTS)] == tuple(FAULTS) and len(set(CLASSES)) == len(CLASSES)


def test_interleaved_cases_are_in_every_format_that_allows_them_and_only_there() -> None:
    formats = {c.format for c in event_cases() if c.family == "interleaved_calls"}
    assert formats == set(INTERLEAVING) == {"openai-chat", "openai-responses"}


PARALLEL = [Call("a", "c1", ('{"x":', " 1}")), Call("b", "c2", ('{"y":', " 2}"))]


@pytest.mark.parametrize("fmt", INTERLEAVING)
def test_an_interleaved_turn_announces_both_calls_before_alternating_fragments(fmt: str) -> None:
    rows = scl.load(turn_bytes(fmt, PARALLEL, interleave=True))
    rows = rows[rows.kind.isin(["call_start", "args_delta"])]
    first, second = expected_calls(fmt, PARALLEL, cut=False)
    assert list(zip(rows.kind, rows.block, strict=True)) == [
        ("call_start", first["block"]), ("call_start", second["block"]),
        ("args_delta", first["block"]), ("args_delta", second["block"]),
        ("args_delta", first["block"]), ("args_delta", second["block"])]


@pytest.mark.parametrize("fmt", INTERLEAVING)
def test_interleaved_calls_read_back_as_written(fmt: str) -> None:
    table = scl.calls(turn_bytes(fmt, PARALLEL, interleave=True))
    got = table[["block", "call_id", "tool", "args"]].to_dict("records")
    assert got == expected_calls(fmt, PARALLEL, cut=False)


def test_anthropic_turns_cannot_interleave() -> None:
    with pytest.raises(ValueError, match="cannot interleave"):
        turn_bytes("anthropic-messages", [Call("a", "c1", ("{}",))], interleave=True)


def test_interleaves_accepts_a_shuffle_that_keeps_each_order_and_nothing_else() -> None:
    assert _interleaves("[(12])", "[1]", "(2)")
    assert not _interleaves("[1](2)", "[1]", "(2)")  # one after the other: not mixed
    assert not _interleaves("[2(1])", "[1]", "(2)")  # 2 before its own "(": out of order
    assert not _interleaves("[(12]", "[1]", "(2)")


def test_the_byte_turns_hold_multi_byte_characters() -> None:
    assert all(len(body) > len(body.decode()) for body, _, _ in byte_turns().values())


def test_deleted_only_accepts_removed_spaces_only() -> None:
    assert deleted_only('{"a": "x y"}', '{"a":"xy"}', str.isspace)
    assert not deleted_only('{"a": "x y"}', '{"a": "x z"}', str.isspace)


def test_partly_decoded_accepts_some_escapes_as_characters() -> None:
    assert partly_decoded('"caf\\u00e9 \\n"', '"café \\n"')
    assert not partly_decoded('"caf\\u00e9"', '"cafe"')
