"""check_handler: clears the correct handler, names every fault by its own class."""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab import FAULTS, Accumulator, check, check_handler, faults
from streamcalls_lab.accumulate import byte_decoder, event_dict
from streamcalls_lab.check import (
    CLASSES,
    INTERLEAVING,
    MULTI_CHOICE,
    REPORT_COLUMNS,
    TURN_FORMATS,
    Call,
    Text,
    byte_turns,
    event_cases,
    expected_calls,
    turn_bytes,
    two_choice_calls,
    two_choice_turn,
)
from streamcalls_lab.faults import CALLS, FOUND_BY_THE_KIT, SPECS, BugClass, Symptom
from streamcalls_lab.providers import FORMATS

from .support.checked import checked


def test_the_correct_accumulator_passes_clean() -> None:
    report = checked(Accumulator)
    assert report.empty and report.attrs["cases"] > 5000


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_is_caught_under_its_own_class_only(name: str) -> None:
    assert list(checked(FAULTS[name])["class"]) == [name]


class _WritesToItsEvents(Accumulator):
    """A handler the kit does not know may write to the events it is fed."""

    def feed(self, event: Mapping[str, Any]) -> None:
        event["seen"] = True  # type: ignore[index]
        super().feed(event)


@pytest.mark.parametrize("handler", [Accumulator, *FAULTS.values(), _WritesToItsEvents],
                         ids=lambda h: h.__name__)
def test_the_report_is_the_same_when_each_handler_decodes_the_bytes_itself(
        handler: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte cases hand one decoded run of each case to every handler that reads bytes as
    the Accumulator does (the breaker's replay; its own decoder where its reads differ):
    nothing in a report may depend on it."""
    replayed = checked(handler)
    monkeypatch.setattr(check, "_tape", lambda chunks: None)  # every read its own decoding
    own = check_handler(handler)
    assert replayed.to_dict("records") == own.to_dict("records")
    assert replayed.attrs == own.attrs


def test_report_has_the_contract_columns() -> None:
    assert tuple(checked(FAULTS["trim"]).columns) == REPORT_COLUMNS


def test_the_trim_example_loses_data_inside_a_string_not_a_space_between_tokens() -> None:
    row = checked(FAULTS["trim"]).iloc[0]
    expected, got = ast.literal_eval(row["expected"]), ast.literal_eval(row["got"])
    assert json.loads(got) != json.loads(expected)  # still JSON, but the data changed


def test_the_example_is_the_smallest_this_class_alone_explains() -> None:
    # a cut stream is eof_as_stop's as much as lenient_parse's: the example is a whole one
    row = checked(FAULTS["lenient_parse"]).iloc[0]
    assert (row["family"], row["got"]) == ("unicode_escape", repr('{"name": "'))


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

    assert list(check_handler(eager)["class"]) == ["eof_as_stop"]


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


def test_a_cut_cases_calls_are_sent_unfinished_where_their_stop_never_came() -> None:
    """What a recogniser reads of a cut case: which calls never got their stop (a client
    keyed by id cannot hand those on, a cut stream's class can)."""
    cut = [c for c in event_cases() if c.ends_early]
    assert cut and all(c.sent for c in cut)
    for case in cut:
        done = {e["call_id"] for e in case.expected}
        assert {s.call_id for s in case.sent if s.finished} == done, case.example
    assert all(s.finished for c in event_cases() if not c.ends_early for s in c.sent)


def test_the_classes_are_the_specs_and_the_faults_those_with_a_handler_in_that_order() -> None:
    assert list(CLASSES) == list(SPECS)
    assert list(FAULTS) == [n for n, s in SPECS.items() if s.handler is not None]
    assert all(FAULTS[n] is s.handler for n, s in SPECS.items() if s.handler is not None)


CITATION = re.compile(r"^[\w.-]+/[\w.-]+(#\d+| PR #\d+)$")


@pytest.mark.parametrize("name", list(SPECS))
def test_every_class_has_a_recogniser_a_summary_a_citation_and_a_preset_if_it_has_a_handler(
        name: str) -> None:
    spec = SPECS[name]
    assert spec.name == name and callable(spec.recognise)
    assert spec.summary.strip() and "\n" not in spec.summary and spec.summary.endswith(".")
    assert spec.cites and all(CITATION.match(c) or c == FOUND_BY_THE_KIT for c in spec.cites)
    if spec.handler is not None:
        assert isinstance(spec.preset, Mapping) and spec.preset, f"{name} has no preset"


def test_a_class_with_a_handler_cannot_be_registered_without_a_preset() -> None:
    with pytest.raises(ValueError, match="preset"):
        faults.register(BugClass("x", "x.", (FOUND_BY_THE_KIT,), lambda s: False, Accumulator))
    assert "x" not in SPECS


def test_the_report_carries_each_classs_summary() -> None:
    report = checked(FAULTS["key_by_id"])
    assert list(report["summary"]) == [SPECS["key_by_id"].summary]


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


def test_the_byte_turns_hold_multi_byte_characters() -> None:
    assert all(len(body) > len(body.decode()) for body, _, _ in byte_turns().values())


# -- two choices (Chat with n = 2), each with a call at index 0 -------------------------------
CHOICES = [Call("get_weather", "call_a", ('{"x":', "1}")),
           Call("get_weather", "call_b", ('{"y":', "2}"))]


def test_the_two_choices_family_is_in_the_formats_that_carry_choices_and_reads_back() -> None:
    declared = {f for f in TURN_FORMATS if FORMATS[f].choices is not None}
    assert declared == set(MULTI_CHOICE) == {"openai-chat"}
    assert {c.format for c in event_cases() if c.family == "two_choices"} == declared
    for fmt in MULTI_CHOICE:
        table = scl.calls(two_choice_turn(CHOICES, fmt))
        got = table[["block", "choice", "call_id", "tool", "args"]].to_dict("records")
        assert got == two_choice_calls(CHOICES)
    with pytest.raises(ValueError, match="one choice a stream; these carry several: openai-chat"):
        two_choice_turn(CHOICES, "anthropic-messages")


def test_keying_by_block_alone_is_caught_on_two_choices_and_nowhere_else() -> None:
    report = checked(FAULTS["one_choice"])
    assert list(zip(report["class"], report["family"], strict=True)) == [
        ("one_choice", "two_choices")]


# -- a class of your own, registered the documented way ------------------------------------
class UpperName(Accumulator):
    """name_upper_cased: each tool name is upper-cased when its call is announced (a client
    that normalises names for a lookup table and hands the normalised one on)."""

    def start_call(self, event: Mapping[str, Any]) -> None:
        super().start_call(event)
        self.calls[-1].tool = (self.calls[-1].tool or "").upper()


def _upper_named(s: Symptom) -> bool:
    pairs, missing, extra = s.matched
    differ = [(want, have) for want, have in pairs if want != have]
    return (s.aspect == CALLS and bool(differ) and not missing and not extra and all(
        have[2] == want[2] and have[1] == str(want[1]).upper() for want, have in differ))


def test_a_new_fault_is_other_until_its_spec_is_registered_then_its_own_class() -> None:
    assert set(checked(UpperName)["class"]) == {"identity"}  # a fallback explains it
    faults.register(BugClass(
        "name_upper_cased", "Upper-cased the tool name it handed on; hand on the name as "
        "announced.", (faults.FOUND_BY_THE_KIT,), _upper_named, UpperName,
        preset={"args": '{"city": "Paris"}', "split": 1}))
    try:
        assert FAULTS["name_upper_cased"] is UpperName
        assert list(CLASSES).index("name_upper_cased") < list(CLASSES).index("identity")
        assert list(checked(UpperName)["class"]) == ["name_upper_cased"]
        assert checked(Accumulator).empty
        assert all(list(checked(f)["class"]) == [n] for n, f in FAULTS.items()
                   if n in ("trim", "lenient_parse", "key_by_id"))
    finally:
        faults.unregister("name_upper_cased")
    assert "name_upper_cased" not in CLASSES and "name_upper_cased" not in FAULTS


# -- identity that arrives late or changes (issue #29): producer families -----------------
def test_late_and_changed_identity_are_families_the_correct_handler_passes() -> None:
    families = {(c.format, c.family) for c in event_cases()}
    assert ("openai-chat", "late_identity") in families
    assert ("openai-responses", "identity_changed") in families


def test_a_handler_that_ignores_a_late_name_fails_the_late_identity_family() -> None:
    class AnnouncementOnly(Accumulator):
        def identify(self, buf: Any, event: Any) -> None:
            pass  # only the announcement names a call (what the kit did before #29)

    report = check_handler(AnnouncementOnly)
    assert set(report["family"]) == {"late_identity"}


def test_a_handler_that_takes_the_last_value_fails_the_identity_changed_family() -> None:
    class LastWins(Accumulator):
        def stop(self, event: Any) -> None:
            buf = self.by_key.get(self.key(event))
            if buf is not None and event.get("call_id"):
                buf.call_id = event["call_id"]  # the done event's id replaces the first
            super().stop(event)

    report = check_handler(LastWins)
    assert set(report["family"]) == {"identity_changed"}

# -- a class is recognised by its mistake, whichever way the handler goes on from it ---------
class TrimLeft(Accumulator):
    """trim, lstrip(): only the leading whitespace of each fragment is lost."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        buf.parts.append(fragment.lstrip())


class TrimRight(Accumulator):
    """trim, rstrip(): only the trailing whitespace of each fragment is lost."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        buf.parts.append(fragment.rstrip())


class TrimSkipBlank(Accumulator):
    """trim, skip: a fragment that is only whitespace is skipped as "empty"
    (discourse/discourse-ai#499)."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        if fragment.strip():
            buf.parts.append(fragment)


class DecodeEachDrop(Accumulator):
    """decode_each, drop: a fragment that cannot be decoded alone is dropped (issue 29)."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        with contextlib.suppress(ValueError):
            buf.parts.append(faults.unescape_fragment(fragment))


class DecodeEachKeepRaw(Accumulator):
    """decode_each, skip: a fragment that cannot be decoded alone is kept undecoded, and
    the rest of its cut escape is read afresh in the next fragment."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        try:
            buf.parts.append(faults.unescape_fragment(fragment))
        except ValueError:
            buf.parts.append(fragment)


class DecodeChunksReplace(faults.DecodeChunks):
    """decode_chunks, replace: errors="replace" turns a cut character into U+FFFD."""

    def read(self, chunk: bytes) -> bytes:
        return chunk.decode("utf-8", "replace").encode("utf-8")


class DecodeChunksIgnore(faults.DecodeChunks):
    """decode_chunks, drop: errors="ignore" loses a cut character."""

    def read(self, chunk: bytes) -> bytes:
        return chunk.decode("utf-8", "ignore").encode("utf-8")


class EmptyArgsRaise(Accumulator):
    """empty_args_dropped, raise: a finished call's arguments go through json.loads, which
    raises on the "" a no-argument call may finish with."""

    def is_finished(self, buf: Any) -> bool:
        if buf.complete:
            json.loads(buf.args)
        return buf.complete


class SplitlinesSkip(faults.Splitlines):
    """splitlines, skip: an event whose data line was cut at a separator no longer parses,
    and is skipped as a bad event (its fragment is lost)."""

    def events_from_bytes(self, chunk: bytes) -> list[dict[str, Any]]:
        if self._decoder is None:
            self._decoder = byte_decoder()
        out = []
        for decoded in self._decoder.feed(self.read(chunk)):
            with contextlib.suppress(ValueError):
                out.append(event_dict(decoded))
        return out


class MarkdownBubbleShown(Accumulator):
    """markdown_bubble, shown only: argument fragments are appended to the chat bubble like
    prose, while the call itself is handed on intact."""

    def add_fragment(self, buf: Any, fragment: str) -> None:
        self.add_text(fragment, buf.choice)
        super().add_fragment(buf, fragment)


VARIANTS = {"trim": (TrimLeft, TrimRight, TrimSkipBlank),
            "decode_each": (DecodeEachDrop, DecodeEachKeepRaw),
            "decode_chunks": (DecodeChunksReplace, DecodeChunksIgnore),
            "empty_args_dropped": (faults.EmptyArgsDropped, EmptyArgsRaise),
            "splitlines": (faults.Splitlines, SplitlinesSkip),
            "markdown_bubble": (faults.MarkdownBubble, MarkdownBubbleShown)}


@pytest.mark.parametrize(("name", "handler"),
                         [(n, h) for n, hs in VARIANTS.items() for h in hs],
                         ids=[h.__name__ for hs in VARIANTS.values() for h in hs])
def test_each_variant_of_a_mistake_is_named_for_its_class_and_nothing_else(
        name: str, handler: type) -> None:
    assert name in SPECS and list(checked(handler)["class"]) == [name]
