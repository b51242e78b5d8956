"""Fixture tools: re-cut and cut off a turn, and the five-property coverage check."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import calls, fixtures, load
from streamcalls_lab.fixtures import (
    PROPERTIES,
    boundaries,
    coverage,
    coverage_by_turn,
    cuts_inside_escapes,
    escape_spans,
    has_non_ascii,
    resplit,
    truncate,
)
from streamcalls_lab.generate import ToolCall, generate, serialize

from .conftest import DATA, FORMATS, capture_files

LONG = {"order_id": "A-4417", "description": "Zoë: \"cracked\"\n" + "lid split, *both* 📷 " * 25}
SHORT = {"order_id": "A-4417"}


def _fragments(body: bytes, call: int = 0) -> list[str]:
    df = load(body)
    blocks = list(df.loc[df["kind"] == "call_start", "block"])
    rows = df[(df["kind"] == "args_delta") & (df["block"] == blocks[call])]
    return [f for f in rows["fragment"].fillna("") if f]


def _row(body: bytes) -> dict:
    return coverage_by_turn(body).iloc[0].to_dict()


# -- text helpers ----------------------------------------------------------------------------
def test_escape_spans_cover_short_and_unicode_escapes():
    args = r'{"a":"x\ny\u00e9\\"}'
    assert [args[s:e] for s, e in escape_spans(args)] == ["\\n", "\\u00e9", "\\\\"]


def test_non_ascii_counts_literal_and_escaped_characters_only():
    assert has_non_ascii('"é"') and has_non_ascii(r'"\u00e9"')
    assert not has_non_ascii(r'"\u0041 plain"')


def test_boundaries_ignore_empty_fragments():
    assert boundaries(["", "ab", "", "c", "de"]) == [2, 3]


def test_a_cut_inside_an_escape_is_one_strictly_between_its_ends():
    args = r'"a\nb"'  # the escape is at 2..4
    assert cuts_inside_escapes(args, [2, 3, 4]) == [3]


# -- resplit ---------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("cuts", [[5], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]])
def test_resplit_cuts_the_call_exactly_and_keeps_its_arguments(provider, cuts):
    turn = generate([("lookup_order", SHORT), ("create_ticket", LONG)], provider=provider,
                    before="Sure.", seed=1)
    body = resplit(turn.body, cuts, call=1)
    assert boundaries(_fragments(body, 1)) == cuts
    table = calls(body)
    assert list(table["args"]) == list(turn.args) and table["complete"].all()


@pytest.mark.parametrize("provider", FORMATS)
def test_resplit_leaves_the_other_calls_fragments_alone(provider):
    turn = generate([("lookup_order", SHORT), ("create_ticket", LONG)], provider=provider, seed=1)
    assert _fragments(resplit(turn.body, [3], call=1), 0) == _fragments(turn.body, 0)


def test_resplit_takes_a_mapping_of_calls_to_cuts():
    turn = generate([("a", SHORT), ("b", SHORT)], provider="anthropic-messages", seed=1)
    body = resplit(turn.body, {0: [1], 1: [2, 4]})
    assert [boundaries(_fragments(body, n)) for n in (0, 1)] == [[1], [2, 4]]


def test_resplit_keeps_every_byte_before_the_first_fragment():
    turn = generate([("create_ticket", LONG)], provider="anthropic-messages", seed=1)
    first = load(turn.body).query("kind == 'args_delta' and fragment != ''")["offset"].iloc[0]
    assert resplit(turn.body, [7])[:first] == turn.body[:first]


def test_resplit_renumbers_responses_events_without_a_gap():
    turn = generate([("create_ticket", LONG)], provider="openai-responses", seed=1)
    data = load(resplit(turn.body, [2, 3]), raw=True)["data"]
    assert [orjson.loads(d)["sequence_number"] for d in data] == list(range(len(data)))


def test_resplit_refuses_a_call_that_does_not_exist():
    turn = generate([("a", SHORT)], provider="openai-chat")
    with pytest.raises(IndexError):
        resplit(turn.body, [1], call=3)


@pytest.mark.captures
@pytest.mark.parametrize("provider", FORMATS)
def test_resplit_works_on_a_real_capture(captures, provider):
    path = next(p for p in capture_files(provider)
                if len(c := calls(p)) and c["complete"].all() and c["chars"].iloc[0] > 8)
    args = calls(path)["args"].iloc[0]
    body = resplit(path, [1, 3, 5])
    assert calls(body)["args"].iloc[0] == args
    assert boundaries(_fragments(body))[:3] == [1, 3, 5]


# -- truncate --------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", FORMATS)
def test_truncate_ends_after_a_whole_frame_with_the_call_unfinished(provider):
    turn = generate([("create_ticket", LONG)], provider=provider, seed=2)
    body = truncate(turn.body, at=100)
    row = calls(body).iloc[0]  # strict load: a frame cut in half would raise
    assert body.endswith(b"\n\n") and not row["complete"]
    assert 0 < len(row["args"]) <= 100 and turn.args[0].startswith(row["args"])


def test_truncate_before_the_first_fragment_keeps_the_announcement():
    turn = generate([("create_ticket", LONG)], provider="openai-chat", seed=2)
    row = calls(truncate(turn.body, at=0)).iloc[0]
    assert (row["tool"], row["args"]) == ("create_ticket", "")


def test_truncate_refuses_a_cut_past_the_end():
    turn = generate([("a", SHORT)], provider="openai-chat")
    with pytest.raises(ValueError, match="does not cut"):
        truncate(turn.body, at=len(turn.args[0]))


# -- coverage: each property, both ways -------------------------------------------------------
@pytest.mark.parametrize("provider", FORMATS)
def test_two_calls_needs_two_calls_in_one_turn(provider):
    one = generate([("a", SHORT)], provider=provider).body
    two = generate([("a", SHORT), ("a", SHORT)], provider=provider).body
    assert (_row(one)["two_calls"], _row(two)["two_calls"]) == (False, True)


@pytest.mark.parametrize("provider", FORMATS)
def test_long_args_needs_400_chars_in_dozens_of_fragments(provider):
    long_args = serialize(LONG, provider)
    assert len(long_args) >= 400
    many = generate([("t", long_args)], provider=provider).body
    few = generate([ToolCall("t", long_args, cuts=[100, 200])], provider=provider).body
    short = generate([("t", SHORT)], provider=provider).body
    assert [_row(b)["long_args"] for b in (many, few, short)] == [True, False, False]


@pytest.mark.parametrize("provider", FORMATS)
def test_escape_split_needs_a_cut_inside_an_escape(provider):
    args = serialize(LONG, provider)
    inside = args.index("\\n") + 1
    split = generate([ToolCall("t", args, cuts=[inside])], provider=provider).body
    beside = generate([ToolCall("t", args, cuts=[inside + 1])], provider=provider).body
    assert (_row(split)["escape_split"], _row(beside)["escape_split"]) == (True, False)


def test_escape_split_needs_non_ascii_in_the_same_call():
    args = '{"note": "a\\nb"}'
    body = generate([ToolCall("t", args, cuts=[args.index("\\n") + 1])]).body
    assert not _row(body)["escape_split"]


def test_escape_split_counts_a_cut_inside_a_unicode_escape():
    args = '{"city": "Besan\\u00e7on"}'
    body = generate([ToolCall("t", args, cuts=[args.index("\\u") + 4])]).body
    assert _row(body)["escape_split"]


@pytest.mark.parametrize("provider", FORMATS)
def test_prose_around_in_one_turn_needs_text_on_both_sides(provider):
    both = generate([("a", SHORT)], provider=provider, before="Let me look.", after="Done.").body
    before = generate([("a", SHORT)], provider=provider, before="Let me look.").body
    assert (_row(both)["prose_around"], _row(before)["prose_around"]) == (True, False)


@pytest.mark.parametrize("provider", FORMATS)
def test_prose_after_the_result_may_come_in_the_next_turn(tmp_path, provider):
    generate([("a", SHORT)], provider=provider, before="Let me look.").write(
        tmp_path / "chat__i0.sse")
    generate(provider=provider, before="It shipped.").write(tmp_path / "chat__i1.sse")
    generate(provider=provider, before="Unrelated.").write(tmp_path / "other__i1.sse")
    table = coverage_by_turn(tmp_path).set_index("turn")
    assert table.loc["chat__i0", "prose_around"]


@pytest.mark.parametrize("provider", FORMATS)
def test_an_earlier_turn_or_another_conversation_does_not_count_as_after(tmp_path, provider):
    generate(provider=provider, before="Hello.").write(tmp_path / "chat__i0.sse")
    generate([("a", SHORT)], provider=provider, before="Let me look.").write(
        tmp_path / "chat__i1.sse")
    generate(provider=provider, before="Unrelated.").write(tmp_path / "other__i2.sse")
    assert not coverage(tmp_path).loc[provider, "prose_around"]


@pytest.mark.parametrize("provider", FORMATS)
def test_cut_off_needs_a_fragment_and_no_stop(provider):
    cut = generate([("t", LONG)], provider=provider, truncate=0.5).body
    announced_only = generate([("t", LONG)], provider=provider, truncate=0.0001).body
    whole = generate([("t", LONG)], provider=provider).body
    assert [_row(b)["cut_off"] for b in (cut, announced_only, whole)] == [True, False, False]


# -- coverage: the table -----------------------------------------------------------------------
def test_coverage_has_a_row_for_every_format_even_without_captures():
    table = coverage(generate([("a", SHORT)], provider="openai-chat").body)
    assert list(table.index[:3]) == list(FORMATS)
    assert list(table.columns) == [*PROPERTIES, "turns"]
    assert not table.loc["anthropic-messages", list(PROPERTIES)].any()
    assert table.loc["anthropic-messages", "turns"] == 0


def test_coverage_takes_loads_dataframe_too():
    body = generate([("a", SHORT), ("b", SHORT)], provider="openai-responses").body
    pd.testing.assert_frame_equal(coverage(load(body)), coverage(body))


def test_coverage_refuses_a_calls_table():
    body = generate([("a", SHORT)]).body
    with pytest.raises(TypeError, match="load"):
        coverage(calls(body))


def test_the_coverage_subcommand_prints_the_table(tmp_path, capsys):
    from streamcalls_lab.cli import main

    generate([("a", SHORT), ("b", SHORT)], provider="openai-chat").write(tmp_path / "t.sse")
    assert main(["coverage", str(tmp_path)]) == 0
    chat = next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("openai-chat"))
    assert chat.split()[1:3] == ["True", "False"]


# -- which faults a folder catches, on all of it or on a spread sample ------------------------
def test_caught_runs_every_capture_of_a_small_folder_and_says_so() -> None:
    found = fixtures.caught(DATA, sample=100)
    assert found.attrs["how"] == f"all {found.attrs['captures']} captures"
    assert len(found) == found.attrs["captures"] == found.attrs["ran"]


def test_caught_names_each_capture_as_the_folder_loads_it() -> None:
    found = fixtures.caught(DATA, sample=100)
    assert set(found["turn"]) == set(scl.load(DATA)["turn"])


def test_caught_on_a_sample_says_it_is_a_sample_spread_across_formats() -> None:
    found = fixtures.caught(DATA, sample=3)
    assert found.attrs["ran"] == 3 and found.attrs["how"].startswith("a sample of 3 of ")
    assert found["provider"].nunique() == 3  # one of each bundled format, not the first three


# -- what the five properties miss ---------------------------------------------------------------
def test_needs_names_what_each_fault_s_own_turn_holds_beyond_the_five() -> None:
    assert "same tool" in fixtures.needs("key_by_name")
    assert "interleave" in fixtures.needs("key_by_last")
    assert "right after a call's last fragment" in fixtures.needs("parse_to_finish")
    assert "middle of a call's arguments (cut_off)" in fixtures.needs("eof_as_stop")
    assert "(escape_split)" in fixtures.needs("decode_each")
    assert "before a space inside a string" in fixtures.needs("trim")
    assert "multi-byte character" in fixtures.needs("decode_chunks")
    assert "stop_reason_mismatch" in fixtures.needs("finish_gate")
    assert all(fixtures.needs(f) for f in scl.FAULTS)


def test_adds_counts_only_faults_the_base_set_misses() -> None:
    faults = list(scl.FAULTS)
    base = pd.DataFrame([{"turn": "a", "provider": "p", **dict.fromkeys(faults, False)}])
    base.loc[0, "trim"] = True
    more = pd.DataFrame([
        {"turn": "x", "provider": "p", **dict.fromkeys(faults, False), "trim": True},
        {"turn": "y", "provider": "q", **dict.fromkeys(faults, False), "trim": True,
         "key_by_name": True, "finish_gate": True},
    ])
    out = fixtures.adds(base, more)
    assert list(out["turn"]) == ["y", "x"] and list(out["n"]) == [2, 0]
    assert out.loc[0, "adds"] == "key_by_name, finish_gate"
