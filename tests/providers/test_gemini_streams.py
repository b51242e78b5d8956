"""Gemini streams beyond one candidate of whole calls: several candidates (``candidateCount``)
and Vertex AI's streamed function-call arguments (``partialArgs`` / ``willContinue``)."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

import streamcalls_lab as scl

from ..support.gemini_turns import CANDIDATES, STREAMED, call, chunk, gemini, genai_responses, piece
from ..support.wire_samples import assert_chunking_changes_nothing


def test_each_candidate_is_a_choice() -> None:
    df = scl.load(CANDIDATES)
    text = df[df.kind == "text_delta"]
    assert {int(k): "".join(g.fragment) for k, g in text.groupby("choice")} == {
        0: "Sunny", 1: "Rainy"}


def test_a_single_candidate_is_choice_zero() -> None:
    df = scl.load(gemini(chunk({"text": "Hi"}, finish="STOP")))
    assert df.choice.tolist() == [0, 0]


def test_calls_are_numbered_within_each_candidate() -> None:
    out = scl.calls(CANDIDATES)
    assert list(zip(out.choice, out.block, out.args, strict=True)) == [
        (0, 0, '{"city": "Paris"}'), (1, 0, '{"city": "Oslo"}'), (1, 1, "{}")]
    assert out.complete.all()


def test_each_candidates_finish_is_its_own_turn_stop() -> None:
    df = scl.load(CANDIDATES)
    assert df[df.kind == "turn_stop"].choice.tolist() == [0, 1]


def test_the_google_genai_sdk_reads_the_same_candidates() -> None:
    calls, text = [], {}
    for response in genai_responses(CANDIDATES):
        for cand in response.candidates or []:
            for part in cand.content.parts or []:
                if part.function_call is not None:
                    calls.append((cand.index, part.function_call.name, part.function_call.args))
                if part.text is not None:
                    text[cand.index] = text.get(cand.index, "") + part.text
    out = scl.calls(CANDIDATES)
    assert [(c, t, orjson.loads(a)) for c, t, a in
            zip(out.choice, out.tool, out.args, strict=True)] == calls
    df = scl.load(CANDIDATES)
    ours = df[df.kind == "text_delta"].groupby("choice").fragment.agg("".join).to_dict()
    assert ours == text


def test_chunking_changes_nothing_with_candidates() -> None:
    assert_chunking_changes_nothing(CANDIDATES)


# -- Vertex AI streamed arguments -----------------------------------------------------------


def rows(body: bytes) -> list[tuple]:
    df = scl.load(body)
    return list(zip(df.kind.astype(str), df.block.astype(object).where(df.block.notna(), None),
                    df.fragment.fillna("-"), strict=True))


def test_the_part_that_names_the_call_announces_it() -> None:
    df = scl.load(STREAMED)
    start = df[df.kind == "call_start"].iloc[0]
    assert (start.block, start.call_id, start.tool) == (0, "fc_1", "get_weather")


def test_each_piece_is_an_other_row_holding_its_value() -> None:
    got = [r for r in rows(STREAMED) if r[0] == "other"]
    assert got == [("other", 0, "New"), ("other", 0, " York"), ("other", 0, "3"),
                   ("other", 0, "true"), ("other", 0, 'a"b')]


def test_the_end_gives_the_assembled_arguments_then_the_stop() -> None:
    assert rows(STREAMED)[-3:] == [
        ("args_delta", 0, '{"location":"New York","days":3,"opts":{"metric":true},'
                          '"tags":["a\\"b"]}'),
        ("block_stop", 0, "-"), ("turn_stop", None, "-")]


def test_the_assembled_arguments_were_never_on_the_wire() -> None:
    df = scl.load(STREAMED)
    assert pd.isna(df[df.kind == "args_delta"].wire_chars.iloc[0])


def test_calls_give_the_streamed_call_whole_and_valid() -> None:
    out = scl.calls(STREAMED).iloc[0]
    assert (out.tool, out.complete, out.valid_json) == ("get_weather", True, True)
    assert orjson.loads(out.args) == {"location": "New York", "days": 3,
                                      "opts": {"metric": True}, "tags": ['a"b']}


def test_a_streamed_call_cut_off_is_not_complete() -> None:
    cut = STREAMED[: STREAMED.rindex(b"data:")]
    assert not scl.calls(cut).complete.any()


def test_a_whole_call_after_a_streamed_one_is_the_next_block() -> None:
    body = gemini(chunk(call("f", willContinue=True)),
                  chunk({"functionCall": {"partialArgs": [piece("$.a", nullValue=None)]}}),
                  chunk(call("g", {"b": 1})))
    out = scl.calls(body)
    assert list(zip(out.block, out.tool, out.args, strict=True)) == [
        (0, "f", '{"a":null}'), (1, "g", '{"b": 1}')]


def test_a_new_name_while_a_call_streams_is_a_problem() -> None:
    body = gemini(chunk(call("f", willContinue=True)), chunk(call("g", willContinue=True)))
    with pytest.raises(scl.CaptureError, match="a new call began before the streamed one"):
        scl.load(body)


def test_a_path_that_cannot_be_read_is_a_problem_naming_it() -> None:
    body = gemini(chunk(call("f", willContinue=True,
                             partialArgs=[piece("$..x", stringValue="1")])))
    with pytest.raises(scl.CaptureError, match=r"jsonPath '\$\.\.x'"):
        scl.load(body)


def test_the_google_genai_sdk_reads_the_same_pieces() -> None:
    """The SDK does not assemble the pieces; it reads each one, which the rows must match."""
    pieces = []
    for response in genai_responses(STREAMED):
        for part in response.candidates[0].content.parts or []:
            for p in (part.function_call and part.function_call.partial_args) or []:
                pieces.append(next(v for v in (p.string_value, p.number_value, p.bool_value)
                                   if v is not None))
    ours = [r[2] for r in rows(STREAMED) if r[0] == "other"]
    assert len(ours) == len(pieces)  # a number is compared by value: the SDK makes it a float
    assert all(frag == v if isinstance(v, str) else orjson.loads(frag) == v
               for frag, v in zip(ours, pieces, strict=True))


def test_chunking_changes_nothing_when_arguments_stream() -> None:
    assert_chunking_changes_nothing(STREAMED)


def test_a_whole_call_saying_it_will_not_continue_keeps_its_args() -> None:
    out = scl.calls(gemini(chunk(call("f", {"a": 1}, willContinue=False))))
    assert out.args.tolist() == ['{"a": 1}']
