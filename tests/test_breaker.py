"""The breaking-a-stream model: the turn it writes, and what each handler makes of it."""

from __future__ import annotations

from dataclasses import replace

import pytest

import streamcalls_lab as scl
from streamcalls_lab import breaker
from streamcalls_lab.breaker import PRESETS, Setup, char_diff, run

from .conftest import DATA, FORMATS

DOC = '{"summary": "urgent request from ops"}'


def test_split_and_spacing_cut_the_arguments_exactly_there() -> None:
    setup = Setup(DOC, split=13, every=10)
    assert setup.boundaries() == (10, 13, 20, 30)
    assert setup.fragments() == (DOC[:10], DOC[10:13], DOC[13:20], DOC[20:30], DOC[30:])


def test_a_split_at_either_end_is_no_cut() -> None:
    assert Setup(DOC, split=0).fragments() == Setup(DOC, split=len(DOC)).fragments() == (DOC,)


def test_cut_off_sends_the_text_up_to_the_split_only() -> None:
    setup = Setup(DOC, split=13, every=5, cut_off=True)
    assert "".join(setup.fragments()) == DOC[:13]
    assert setup.boundaries() == (5, 10)


@pytest.mark.parametrize("provider", FORMATS)
def test_the_written_turn_carries_the_fragments_as_cut(provider: str) -> None:
    setup = Setup(DOC, split=13, every=7, provider=provider)
    deltas = scl.load(breaker.turn_body(setup))
    sent = deltas.loc[deltas["kind"] == "args_delta", "fragment"].dropna()
    assert tuple(f for f in sent if f) == setup.fragments()


@pytest.mark.parametrize("provider", FORMATS)
def test_the_correct_handler_hands_on_exactly_what_was_typed(provider: str) -> None:
    text = '{"a": "x\\n\\"y\\" é 👍", "b": [1, 2]} trailing text, not JSON'
    result = run(Setup(text, split=9, every=3, provider=provider, read_size=2))
    assert [c["args"] for c in result.correct.calls] == [text]
    assert result.correct.error is None


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wire format"):
        breaker.turn_body(Setup(DOC, provider="gemini"))


def test_a_cut_outside_the_arguments_is_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        breaker.turn_body(Setup(DOC, cuts=(len(DOC) + 5,)))


def test_reads_rejoin_to_the_body() -> None:
    body = breaker.turn_body(Setup(DOC))
    reads = breaker.split_reads(body, 7)
    assert b"".join(reads) == body and {len(r) for r in reads[:-1]} == {7}
    assert breaker.split_reads(body, None) == (body,)
    with pytest.raises(ValueError):
        breaker.split_reads(body, 0)


@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("name", list(PRESETS))
def test_each_preset_breaks_its_own_fault_in_every_format_it_can_be_written_in(
        name: str, provider: str) -> None:
    if provider not in PRESETS[name].formats():
        with pytest.raises(ValueError, match="cannot carry"):
            breaker.turn_body(replace(PRESETS[name], provider=provider))
        return
    result = run(replace(PRESETS[name], provider=provider))
    assert name in result.broken()
    assert result.faults[name].reason


def test_every_fault_has_a_preset() -> None:
    assert list(PRESETS) == list(scl.FAULTS)


def test_interleaved_calls_can_be_written_where_the_format_allows_them_only() -> None:
    assert PRESETS["key_by_last"].formats() == ("openai-chat", "openai-responses")
    assert PRESETS["one_choice"].formats() == ("openai-chat",)


# The same preset with the one condition it depends on taken away.
DEFUSED = {
    "trim": {"split": None},
    "decode_each": {"args": '{"text": "line one, line two"}'},
    "parse_to_finish": {"cut_off": False},
    "lenient_parse": {"split": None},
    "key_by_name": {"earlier": None},
    "key_by_last": {"interleave": False},
    "one_choice": {"two_choices": False},
    "decode_chunks": {"read_size": None},
}


@pytest.mark.parametrize("name", list(DEFUSED))
def test_without_its_condition_the_preset_no_longer_breaks_its_fault(name: str) -> None:
    assert name not in run(replace(PRESETS[name], **DEFUSED[name])).broken()


def test_markdown_bubble_breaks_any_turn_with_a_call() -> None:
    result = run(Setup('{"id": 7}'))
    assert result.faults["markdown_bubble"].reason == "argument text on the message surface"


def test_a_cut_off_call_is_held_back_by_the_correct_handler_only() -> None:
    result = run(PRESETS["parse_to_finish"])
    assert result.correct.calls == ()
    handed = result.faults["parse_to_finish"].calls
    assert [c["args"] for c in handed] == [PRESETS["parse_to_finish"].args]
    (diff,) = result.faults["parse_to_finish"].diffs
    assert diff.sent is None and diff.got == PRESETS["parse_to_finish"].args


def test_a_raising_handler_is_an_outcome_not_a_crash() -> None:
    out = run(PRESETS["decode_each"]).faults["decode_each"]
    assert out.error is not None and out.error.startswith("raised ValueError")
    assert out.calls == () and out.reason == out.error


def test_merged_calls_show_as_one_call_holding_both_and_one_missing() -> None:
    setup = PRESETS["key_by_name"]
    diffs = run(setup).faults["key_by_name"].diffs
    assert [d.got for d in diffs] == [setup.earlier + setup.args, None]
    assert [d.sent for d in diffs] == [setup.earlier, setup.args]


def test_the_diff_marks_exactly_the_lost_space() -> None:
    spans = run(PRESETS["trim"]).faults["trim"].diffs[0].spans
    assert [(s.op, s.sent, s.got) for s in spans if s.op != "equal"] == [("delete", " ", "")]


def test_the_message_diff_shows_the_arguments_added_to_the_surface() -> None:
    out = run(PRESETS["markdown_bubble"]).faults["markdown_bubble"]
    added = "".join(s.got for s in out.message_diff if s.op != "equal")
    assert added == PRESETS["markdown_bubble"].args


def test_the_bubble_hands_on_the_rendered_text_without_its_asterisks() -> None:
    (diff,) = run(PRESETS["markdown_bubble"]).faults["markdown_bubble"].diffs
    lost = "".join(s.sent for s in diff.spans if s.op != "equal")
    assert "see both attachments" in diff.got and lost.count("*") == 2


def test_char_diff_spans_rebuild_both_texts() -> None:
    spans = char_diff("abc def", "abXdf!")
    assert "".join(s.sent for s in spans) == "abc def"
    assert "".join(s.got for s in spans) == "abXdf!"
    assert [s.op for s in char_diff("same", "same")] == ["equal"]


def test_summary_has_a_row_per_handler() -> None:
    table = run(PRESETS["trim"]).summary()
    assert list(table["handler"]) == ["correct", *scl.FAULTS]
    assert table.set_index("handler").loc["trim", "broken"]


def test_in_string_marks_characters_between_quotes_only() -> None:
    text = '{"a": "b\\"c"}'
    inside = "".join("x" if f else "." for f in breaker.in_string(text))
    assert inside == "..x....xxxx.."


def test_landmarks_point_inside_escapes_and_between_digits() -> None:
    marks = dict((at, label) for label, at in breaker.landmarks('{"n": 20, "t": "a\\nb\\u00e9"}'))
    assert "escape \\n" in marks[18]
    assert "\\u00 | e9" in marks[24]
    assert "digits" in marks[7]
    assert list(marks) == sorted(marks)


def test_a_short_fixture_catches_fewer_faults_than_a_long_one() -> None:
    table = breaker.catches(DATA / "anthropic-messages").set_index("turn")
    assert table.loc["short-call", "caught"] < table.loc["two-calls-long-args", "caught"]
    assert table["key_by_name"].to_dict() == {t: t == "same-tool-twice" for t in table.index}


def test_catches_in_small_reads_adds_decode_chunks() -> None:
    recorded = breaker.catches(DATA / "anthropic-messages" / "two-calls-long-args.sse")
    small = breaker.catches(DATA / "anthropic-messages" / "two-calls-long-args.sse",
                            read_size=3)
    assert not recorded["decode_chunks"].iloc[0] and small["decode_chunks"].iloc[0]


def test_the_bubble_shows_what_the_renderer_made_of_the_arguments() -> None:
    result = run(Setup('{"note": "ship *both* parts", "tag": "`x`"}'))
    b = result.faults["markdown_bubble"].bubble
    assert b is not None and "<em>both</em>" in b.html and "<code>x</code>" in b.html
    assert "*both*" not in b.shown and "ship both parts" in b.shown
    lost = "".join(s.sent for s in b.lost if s.op != "equal")
    assert lost.count("*") == 2 and lost.count("`") == 2


def test_the_rendered_bubble_is_sanitised() -> None:
    b = breaker.bubble('<img src=x onerror=alert(1)> and <script>alert(2)</script>')
    assert "onerror" not in b.html and "<script" not in b.html


def test_only_a_rendering_handler_has_a_bubble() -> None:
    result = run(Setup('{"id": 7}'))
    assert result.correct.bubble is None and result.faults["trim"].bubble is None


def test_the_parse_to_finish_preset_stops_the_stream_at_its_split() -> None:
    setup = PRESETS["parse_to_finish"]
    assert setup.cut_off and setup.split == len(setup.args) == setup.end()


def test_catches_can_stop_after_a_few_captures_and_says_how_many_there_were() -> None:
    table = breaker.catches(DATA, limit=2)
    assert len(table) == 2 and table.attrs["captures"] == len(list(DATA.rglob("*.sse")))
