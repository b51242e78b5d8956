"""Each fault: one decision changed, visible on a turn that exposes it, invisible otherwise."""

from __future__ import annotations

import inspect

import pytest

from streamcalls_lab import FAULTS, Accumulator
from streamcalls_lab.check import (
    INTERLEAVING,
    TURN_FORMATS,
    Call,
    Segment,
    Text,
    events_of,
    turn_bytes,
    two_choice_turn,
)
from streamcalls_lab.faults import (
    Sent,
    bubble_text,
    classify,
    deleted_only,
    interleaves,
    lenient_value,
    partly_decoded,
    symptoms,
    unescape_fragment,
)

from .conftest import REPO

PLAIN = [Call("lookup", "toolu_1", ('{"city":"Pa', 'ris"}'))]


def _one(doc: tuple[str, ...]) -> list[Segment]:
    return [Call("lookup", "toolu_1", doc)]


# name -> (a turn that exposes the fault, a turn that does not)
CASES: dict[str, tuple[list[Segment], list[Segment]]] = {
    "trim": (_one(('{"q": "urgent', ' request"}')), PLAIN),
    "decode_each": (_one(('{"q": "caf\\u00', 'e9"}')), PLAIN),
    "parse_to_finish": (_one(("1", "024")), PLAIN),
    "lenient_parse": (_one(('{"limit": 2', "0}")), _one(("{", '"limit": 20}'))),
    "key_by_name": ([Call("weather", "toolu_1", ('{"city":"Paris"}',)),
                     Call("weather", "toolu_2", ('{"city":"Rome"}',))],
                    [Call("weather", "toolu_1", ('{"city":"Paris"}',)),
                     Call("time", "toolu_2", ('{"city":"Rome"}',))]),
    "markdown_bubble": (_one(('{"note": "see *both*', ' files"}')), PLAIN),
    # every call exposes it (Anthropic's stop names no id either): only prose is safe
    "key_by_id": (PLAIN, [Text(("No call here.",))]),
}


def _finish(cls: type, segments: list[Segment], fmt: str = "anthropic-messages") -> object:
    acc = cls()
    try:
        for event in events_of(turn_bytes(fmt, segments)):
            acc.feed(event)
        return acc.finish()
    except ValueError as e:
        return f"raised {e}"


CONTRACT = ["trim", "decode_each", "parse_to_finish", "lenient_parse", "key_by_name",
            "decode_chunks", "markdown_bubble"]
"""The design contract's seven, in its order."""


def test_the_contract_names_every_fault() -> None:
    assert [name for name in FAULTS if name in CONTRACT] == CONTRACT
    docs = (REPO / "docs" / "contract.md").read_text("utf-8")
    assert [name for name in FAULTS if f"`{name}`" not in docs] == []


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_overrides_exactly_one_decision(name: str) -> None:
    cls = FAULTS[name]
    changed = [k for k, v in vars(cls).items() if inspect.isfunction(v) and not k.startswith("__")]
    assert issubclass(cls, Accumulator) and len(changed) == 1


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_docstring_names_its_bug_and_a_public_report(name: str) -> None:
    doc = FAULTS[name].__doc__ or ""
    assert doc.startswith(f"{name}:") and "#" in doc


EACH_FAULT_IN_EACH_FORMAT = pytest.mark.parametrize(
    ("name", "fmt"), [(name, fmt) for name in CASES for fmt in TURN_FORMATS])


@EACH_FAULT_IN_EACH_FORMAT
def test_fault_diverges_where_exposed(name: str, fmt: str) -> None:
    exposing, _ = CASES[name]
    assert _finish(FAULTS[name], exposing, fmt) != _finish(Accumulator, exposing, fmt)


@EACH_FAULT_IN_EACH_FORMAT
def test_fault_agrees_where_not_exposed(name: str, fmt: str) -> None:
    _, clean = CASES[name]
    assert _finish(FAULTS[name], clean, fmt) == _finish(Accumulator, clean, fmt)


def _bytes_finish(cls: type, body: bytes, cut: int) -> object:
    acc = cls()
    try:
        acc.feed_bytes(body[:cut])
        acc.feed_bytes(body[cut:])
        return acc.finish()
    except UnicodeDecodeError as e:
        return f"raised {e}"


NON_ASCII = turn_bytes("openai-chat", [Call("lookup", "call_1", ('{"city": "Zü', 'rich"}'))])


def test_decode_chunks_raises_on_a_read_that_splits_a_character() -> None:
    cut = NON_ASCII.index("ü".encode()) + 1
    assert str(_bytes_finish(FAULTS["decode_chunks"], NON_ASCII, cut)).startswith("raised")


def test_decode_chunks_agrees_when_reads_end_between_characters() -> None:
    cut = NON_ASCII.index("ü".encode())
    assert (_bytes_finish(FAULTS["decode_chunks"], NON_ASCII, cut)
            == _bytes_finish(Accumulator, NON_ASCII, cut))


def test_trim_glues_words_and_still_parses() -> None:
    calls = _finish(FAULTS["trim"], _one(('{"q": "urgent', ' request"}')))
    assert calls[0]["input"] == {"q": "urgentrequest"}


def test_decode_each_raises_on_a_backslash_n_split() -> None:
    assert str(_finish(FAULTS["decode_each"], _one(('{"t": "a\\', 'nb"}')))).startswith("raised")


def test_decode_each_turns_a_whole_escape_into_its_character() -> None:
    calls = _finish(FAULTS["decode_each"], _one(('{"q": "caf\\u00e9"', "}")))
    assert calls[0]["args"] == '{"q": "café"}'


def test_decode_each_breaks_the_json_on_an_escaped_quote() -> None:
    calls = _finish(FAULTS["decode_each"], _one(('{"q": "say \\"hi\\""', "}")))
    assert calls[0]["error"] is not None


def test_unescape_fragment_refuses_a_cut_unicode_escape() -> None:
    with pytest.raises(ValueError, match="cut"):
        unescape_fragment('"caf\\u00')


def test_parse_to_finish_hands_on_the_first_parsing_prefix() -> None:
    assert _finish(FAULTS["parse_to_finish"], _one(("1", "024")))[0]["args"] == "1"


def test_parse_to_finish_hands_on_a_call_cut_right_after_its_brace() -> None:
    body = turn_bytes("openai-chat", [Call("lookup", "call_1", ('{"a": 1}',))], cut=True)
    acc = FAULTS["parse_to_finish"]()
    for event in events_of(body):
        acc.feed(event)
    assert [c["args"] for c in acc.finish()] == ['{"a": 1}']


def test_lenient_parse_shows_two_for_a_limit_of_twenty() -> None:
    calls = _finish(FAULTS["lenient_parse"], _one(('{"limit": 2', "0}")))
    assert (calls[0]["args"], calls[0]["input"]) == ('{"limit": 2', {"limit": 2})


def test_lenient_value_reads_a_prefix_strict_json_rejects() -> None:
    assert lenient_value('{"q": "par') == {"q": "par"}


def test_key_by_name_hands_on_one_merged_call() -> None:
    exposing, _ = CASES["key_by_name"]
    calls = _finish(FAULTS["key_by_name"], exposing)
    assert [c["args"] for c in calls] == ['{"city":"Paris"}{"city":"Rome"}']


PARALLEL = [Call("weather", "call_1", ('{"city":', '"Paris"}')),
            Call("time", "call_2", ('{"tz":', '"CET"}'))]


def _interleaved(cls: type, fmt: str) -> list[str]:
    acc = cls()
    for event in events_of(turn_bytes(fmt, PARALLEL, interleave=True)):
        acc.feed(event)
    return [c["args"] for c in acc.finish()]


@pytest.mark.parametrize("fmt", INTERLEAVING)
def test_key_by_last_hands_the_earlier_of_interleaved_calls_on_empty(fmt: str) -> None:
    """(Responses repeats each call's arguments in its done event, and a call whose buffer
    got no fragment takes them from there: only the later call shows the mix.)"""
    earlier = "" if fmt == "openai-chat" else '{"city":"Paris"}'
    assert _interleaved(FAULTS["key_by_last"], fmt) == [earlier, '{"city":{"tz":"Paris"}"CET"}']


@pytest.mark.parametrize("fmt", INTERLEAVING)
def test_the_correct_handler_keeps_interleaved_calls_apart(fmt: str) -> None:
    assert _interleaved(Accumulator, fmt) == ['{"city":"Paris"}', '{"tz":"CET"}']


@pytest.mark.parametrize("fmt", TURN_FORMATS)
def test_key_by_last_agrees_when_calls_arrive_one_after_another(fmt: str) -> None:
    assert _finish(FAULTS["key_by_last"], PARALLEL, fmt) == _finish(Accumulator, PARALLEL, fmt)


def test_markdown_bubble_eats_the_asterisks_it_hands_on() -> None:
    exposing, _ = CASES["markdown_bubble"]
    assert _finish(FAULTS["markdown_bubble"], exposing)[0]["args"] == '{"note": "see both files"}'


def test_markdown_bubble_puts_the_arguments_on_the_message_surface() -> None:
    acc = FAULTS["markdown_bubble"]()
    for event in events_of(turn_bytes("anthropic-messages", [Text(("Hi.",)), *PLAIN])):
        acc.feed(event)
    assert acc.message == 'Hi.{"city":"Paris"}'


@pytest.mark.parametrize(("source", "shown"), [
    ("# Q3 plan", "Q3 plan"),
    ("> cited", "cited"),
    ("a `code` span", "a code span"),
    ('say \\"hi\\"', 'say "hi"'),
    ("<b>x</b> & y", "x & y"),
])
def test_bubble_text_keeps_what_the_rendered_bubble_shows(source: str, shown: str) -> None:
    assert bubble_text(source) == shown


@pytest.mark.parametrize("fmt", TURN_FORMATS)
def test_key_by_id_hands_the_arguments_on_under_no_id(fmt: str) -> None:
    calls = _finish(FAULTS["key_by_id"], PARALLEL, fmt)
    nameless = [c["args"] for c in calls if c["call_id"] is None]
    assert nameless == ['{"city":"Paris"}{"tz":"CET"}']
    # The announced calls' buffers got no fragment: empty, but where a done event repeats
    # their arguments (Responses), taken from there.
    named = [c["args"] for c in calls if c["call_id"] is not None]
    if fmt == "openai-responses":
        assert named == ['{"city":"Paris"}', '{"tz":"CET"}']
    else:
        assert all(args == "" for args in named)


TWO_CHOICES = [Call("weather", "call_a", ('{"city":', '"Paris"}')),
               Call("weather", "call_b", ('{"city":', '"Rome"}'))]


def _two_choices(cls: type) -> list[tuple[object, str]]:
    acc = cls()
    for event in events_of(two_choice_turn(TWO_CHOICES)):
        acc.feed(event)
    return [(c["choice"], c["args"]) for c in acc.finish()]


def test_one_choice_runs_the_two_choices_calls_into_the_last_announced() -> None:
    assert _two_choices(FAULTS["one_choice"]) == [(0, ""), (1, '{"city":{"city":"Paris"}"Rome"}')]


def test_the_correct_handler_keeps_each_choices_call() -> None:
    assert _two_choices(Accumulator) == [(0, '{"city":"Paris"}'), (1, '{"city":"Rome"}')]


@pytest.mark.parametrize("fmt", TURN_FORMATS)
def test_one_choice_agrees_on_a_turn_with_one_choice(fmt: str) -> None:
    assert _finish(FAULTS["one_choice"], PARALLEL, fmt) == _finish(Accumulator, PARALLEL, fmt)


def test_interleaves_accepts_a_shuffle_that_keeps_each_order_and_nothing_else() -> None:
    assert interleaves("[(12])", "[1]", "(2)")
    assert not interleaves("[1](2)", "[1]", "(2)")  # one after the other: not mixed
    assert not interleaves("[2(1])", "[1]", "(2)")  # 2 before its own "(": out of order
    assert not interleaves("[(12]", "[1]", "(2)")


def test_deleted_only_accepts_removed_spaces_only() -> None:
    assert deleted_only('{"a": "x y"}', '{"a":"xy"}', str.isspace)
    assert not deleted_only('{"a": "x y"}', '{"a": "x z"}', str.isspace)


def test_partly_decoded_accepts_some_escapes_as_characters() -> None:
    assert partly_decoded('"caf\\u00e9 \\n"', '"café \\n"')
    assert not partly_decoded('"caf\\u00e9"', '"cafe"')


# -- recognisers for what a client made of a producer's quirk -------------------------------
def _classes(expected, got, **kw) -> list[frozenset[str]]:
    sent = [Sent(i, t, a) for i, t, a in expected]
    return [classify(s) for s in symptoms(sent=sent, expected=expected, got=got, **kw)]


def test_a_name_run_together_once_per_repeat_is_name_concatenated_with_or_without_the_id(
        ) -> None:
    want = [("call_1", "final_result", '{"a": 1}')]
    assert _classes(want, [("call_1", "final_resultfinal_result", '{"a": 1}')]) == [
        {"name_concatenated"}]
    assert _classes(want, [("call_1call_1", "final_resultfinal_result", '{"a": 1}')]) == [
        {"name_concatenated"}]  # the openai helper appends the repeated id as well
    assert _classes(want, [("call_1call_1", "final_result", '{"a": 1}')]) == [{"identity"}]
    assert _classes(want, [("call_1", "final_resultfinal", '{"a": 1}')]) == [{"identity"}]


def test_a_no_argument_call_handed_on_with_null_arguments_is_null_arguments() -> None:
    want = [("call_1", "llm_version", "")]
    assert _classes(want, [("call_1", "llm_version", None)]) == [{"null_arguments"}]
    assert _classes(want, [("call_1", "llm_version", "{}")]) != [{"null_arguments"}]


def test_a_blank_identity_copied_over_the_announced_one_is_blank_identity_copied() -> None:
    want = [("call_1", "get_weather", '{"a": 1}'), ("call_2", "get_time", '{"b": 2}')]
    blanked = [("", "", '{"a": 1}'), (None, None, '{"b": 2}')]
    on = {"quirks": frozenset({"blank_identity"})}
    # one run alone: a client keyed by id could have made it too (the suite tells them apart)
    assert _classes(want, blanked, **on) == [{"blank_identity_copied", "key_by_id"}]
    assert _classes(want, [], error="AssertionError", **on) == [{"blank_identity_copied"}]
    # an error that no check of a blank value raises is no evidence of it: a crash
    assert _classes(want, [], error="RuntimeError: boom", **on) == [{"crash"}]
    assert "blank_identity_copied" not in _classes(want, blanked)[0]  # none was sent blank


def test_a_call_split_at_a_blank_id_is_blank_id_new_call_as_text_or_parsed() -> None:
    on = {"quirks": frozenset({"blank_identity"})}
    want = [("call_1", "f", '{"a": 1}')]
    assert _classes(want, [("call_1", "f", ""), ("", "", '{"a": 1}')], **on) == [
        {"blank_id_new_call", "key_by_id"}]  # alike in one run, told apart over the suite
    assert _classes([("call_1", "f", {"a": 1})], [("call_1", "f", {}), (None, "", {"a": 1})],
                    parsed=True, **on) == [{"blank_id_new_call"}]


def test_no_arguments_where_they_came_only_in_done_is_delta_only_as_text_or_parsed() -> None:
    on = {"quirks": frozenset({"args_only_in_done"})}
    assert _classes([("call_1", "f", '{"a": 1}')], [("call_1", "f", "")], **on) == [
        {"delta_only"}]
    assert _classes([("call_1", "f", {"a": 1})], [("call_1", "f", {})], parsed=True,
                    **on) == [{"delta_only"}]


def test_a_reused_index_compared_parsed_is_merged_calls_when_the_later_call_is_lost() -> None:
    on = {"quirks": frozenset({"index_reuse"})}
    want = [("call_1", "f", {"a": 1}), ("call_2", "g", {"b": 2})]
    for got in ([("call_1", "f", {"a": 1}), ("call_2", "g", {})],
                [("call_1", "f", {"a": 1}), ("call_1", "f", {"a": 1})]):
        # a list read at the index lands the later call in the earlier's slot just so
        assert _classes(want, got, parsed=True, **on) == [{"merged_calls", "index_as_position"}]
    assert _classes(want, [("call_1", "f", {"a": 1}), ("call_2", "g", {"b": 3})], parsed=True,
                    **on) != [{"merged_calls"}]  # other arguments: something else


# -- each class by its own evidence, when a second bug changes the shape (issue 29) ----------
def test_no_arguments_from_done_then_dropped_by_a_parse_gate_is_still_delta_only() -> None:
    on = {"quirks": frozenset({"args_only_in_done"})}
    want = [("call_1", "f", '{"a": 1}'), ("call_2", "g", '{"b": 2}')]
    assert _classes(want, [], **on) == [{"delta_only"}]  # both emptied, then never handed on
    assert _classes(want, [("call_1", "f", "")], **on) == [{"delta_only"}]
    assert "delta_only" not in _classes(want, [])[0]  # the arguments were not done-only
    assert "delta_only" not in _classes(want, [("call_1", "f", '{"a": 1}'),
                                               ("call_9", "h", "")], **on)[0]


def test_interleaved_fragments_in_the_later_call_are_key_by_last_with_the_earlier_dropped(
        ) -> None:
    want = [("call_1", "get_weather", '{"city": "Paris"}'), ("call_2", "get_time", '{"tz": 1}')]
    mixed = '{"city{"tz": "Pa": 1}ris"}'
    assert _classes(want, [("call_1", "get_weather", ""), ("call_2", "get_time", mixed)]) == [
        {"key_by_last"}]
    assert _classes(want, [("call_2", "get_time", mixed)]) == [{"key_by_last"}]
    # the later call lost instead: not the later call's buffer holding both
    assert "key_by_last" not in _classes(want, [("call_1", "get_weather", mixed)])[0]


def test_a_reused_index_is_index_as_position_only_where_the_later_slot_was_left_empty(
        ) -> None:
    on = {"quirks": frozenset({"index_reuse"})}
    want = [("call_1", "f", '{"a": 1}'), ("call_2", "g", '{"b": 2}')]
    merged = [("call_1", "f", '{"a": 1}{"b": 2}')]
    assert _classes(want, merged, **on) == [{"merged_calls"}]  # the later call never started
    assert _classes(want, [*merged, ("call_2", "g", "")], **on) == [
        {"merged_calls", "index_as_position"}]  # a list slot left empty: either


def test_an_index_error_after_whole_calls_on_a_gap_is_index_as_position() -> None:
    want = [("call_1", "f", '{"a": 1}'), ("call_2", "g", '{"b": 2}')]
    sent = [Sent("call_1", "f", '{"a": 1}', 0, 0), Sent("call_2", "g", '{"b": 2}', 0, 0)]
    found = symptoms(sent=sent, expected=want, got=[want[0]],
                     error="exited 1: IndexError: list index out of range")
    assert [classify(s) for s in found] == [{"index_as_position"}]
    whole = [Sent(*w, n, 0) for n, w in enumerate(want)]  # indices that are positions
    found = symptoms(sent=whole, expected=want, got=[want[0]],
                     error="exited 1: IndexError: list index out of range")
    assert "index_as_position" not in classify(found[0])


def test_lenient_parse_only_for_text_a_partial_parser_reads_as_a_value() -> None:
    want = [("call_1", "f", '{"limit": 20}')]
    assert "lenient_parse" in _classes(want, [("call_1", "f", '{"limit": 2')])[0]
    assert "lenient_parse" not in _classes(want, [("call_1", "f", "")])[0]  # reads nothing
    number = [("call_1", "f", "10")]
    assert _classes(number, [("call_1", "f", "1")]) == [{"parse_to_finish", "lenient_parse"}]


def test_a_call_handed_on_empty_where_announcements_carry_text_dropped_it() -> None:
    on = {"quirks": frozenset({"args_in_announcement"})}
    want = [("call_1", "f", '{"a": 1}')]
    assert _classes(want, [("call_1", "f", "")], **on) == [{"announcement_args_dropped"}]
    assert "parse_to_finish" in _classes(want, [("call_1", "f", "")])[0]  # no such text: early


def test_calls_dropped_whole_where_announcements_carry_all_their_text_are_that_text_lost(
        ) -> None:
    """The drop variant: the announcement's text lost, then a call with none never handed
    on (a client that also waits for arguments); one_call_per_chunk reads a chunk's first
    call, so a run that handed none on is not its."""
    want = [("call_1", "f", '{"a": 1}'), ("call_2", "g", '{"b": 2}')]
    on = {"quirks": frozenset({"args_in_announcement"})}
    assert _classes(want, [], **on) == [{"announcement_args_dropped"}]
    assert _classes(want, [("call_1", "f", ' 1}')], **on) == [{"announcement_args_dropped"}]
    # a call that came out whole had no text to lose: not this class
    assert "announcement_args_dropped" not in _classes(want, [want[0]], **on)[0]
    assert "announcement_args_dropped" not in _classes(want, [])[0]  # no such text was sent
    chunk = {"quirks": frozenset({"whole_calls_in_one_chunk", "args_in_announcement"})}
    assert _classes(want, [], **chunk) == [{"announcement_args_dropped"}]
    assert _classes(want, [want[0]], **chunk) == [{"one_call_per_chunk"}]


def test_a_blank_id_or_name_is_never_a_name_run_together_zero_times() -> None:
    want = [("call_1", "get_weather", '{"a": 1}')]
    assert "name_concatenated" not in _classes(want, [("", "", '{"a": 1}')])[0]
    assert "name_concatenated" not in _classes(want, [("call_1", "", '{"a": 1}')])[0]


def test_a_list_index_error_on_blank_ids_at_indices_that_are_positions_is_a_call_too_many(
        ) -> None:
    """A blank value read or checked raises a lookup or a check; a list of calls indexed out
    of range where every index is its position had a call too many: the one a blank id
    started."""
    want = [("call_1", "f", '{"a": 1}'), ("call_2", "g", '{"b": 2}')]
    whole = [Sent(*w, n, 0) for n, w in enumerate(want)]
    on = {"quirks": frozenset({"blank_identity"})}
    found = symptoms(sent=whole, expected=want, got=[],
                     error="exited 1: IndexError: list index out of range", **on)
    assert [classify(s) for s in found] == [{"blank_id_new_call"}]
    found = symptoms(sent=whole, expected=want, got=[],
                     error="exited 1: AssertionError", **on)
    assert [classify(s) for s in found] == [{"blank_identity_copied"}]


def test_an_announced_call_cut_before_its_stop_and_handed_on_is_not_key_by_id() -> None:
    """Keyed by id, an announced call comes out only at a stop: the last one, cut before
    it and handed on under its id (empty: its fragments went to the nameless buffer), came
    out at the close, whatever else did."""
    args = '{"limit": 20}'
    got = [("call_1", "lookup", ""), ("", "", args)]
    cut = [Sent("call_1", "lookup", args, 0, 0, finished=False)]
    found = symptoms(sent=cut, expected=[], got=got, ends_early=True)
    assert "key_by_id" not in classify(found[0])
    assert "eof_as_stop" in classify(found[0])
    # the same calls after the call's stop came: the nameless buffer a stop handed on
    stopped = [Sent("call_1", "lookup", args, 0, 0)]
    found = symptoms(sent=stopped, expected=[("call_1", "lookup", args)], got=got)
    assert "key_by_id" in classify(found[0])
