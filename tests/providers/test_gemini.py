"""Gemini ``streamGenerateContent?alt=sse`` normalised to the contract's kinds."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcalls_lab as scl
from streamcalls_lab._fastpath import whole_rows as normalise_whole
from streamcalls_lab.loader import load_captures
from streamcalls_lab.providers import READERS as FORMATS
from streamcalls_lab.providers import sniff
from streamcalls_lab.sources import Capture

from ..conftest import CAPTURES
from ..support.compare import assert_frames_equal, assert_same
from ..support.gemini_turns import USAGE, call, chunk, gemini, genai_responses
from ..support.sse_turns import START, TOOL, assert_refused_naming


def rows(body: bytes, **options: object) -> list[tuple]:
    df = scl.load(body, **options)
    return list(zip(df.kind.astype(str), df.block.astype(object).where(df.block.notna(), None),
                    df.fragment.fillna("-"), strict=True))


# -- what each part becomes ----------------------------------------------------------------

def test_gemini_is_detected() -> None:
    assert set(scl.load(gemini(chunk({"text": "Hi"}))).provider) == {"gemini"}


def test_a_text_part_is_a_text_delta_with_its_escaped_length() -> None:
    frag = 'a "quoted"\n\u00e9'
    row = scl.load(gemini(chunk({"text": frag}))).iloc[0]  # json.dumps escapes é as \u00e9
    assert (row.kind, row.fragment, row.chars, row.wire_chars) == (
        "text_delta", frag, len(frag), len(json.dumps(frag)) - 2)


def test_each_text_part_of_a_chunk_has_its_own_escaped_length() -> None:
    df = scl.load(gemini(chunk({"text": "a\nb"}, {"text": "é"})))
    assert list(df.wire_chars) == [4, 6]


def test_a_thought_part_is_other() -> None:
    body = gemini(chunk({"text": "Let me think", "thought": True}, {"text": "Hi"}))
    assert rows(body) == [("other", None, "-"), ("text_delta", None, "Hi")]


def test_parts_that_are_neither_text_nor_a_call_are_other() -> None:
    body = gemini(chunk({"thoughtSignature": "c2ln"}, {"executableCode": {"code": "1"}}))
    assert rows(body) == [("other", None, "-"), ("other", None, "-")]


def test_a_usage_only_chunk_is_other() -> None:
    assert rows(gemini({"usageMetadata": USAGE})) == [("other", None, "-")]


def test_a_function_call_is_announced_filled_and_stopped_in_its_part() -> None:
    df = scl.load(gemini(chunk(call("lookup", {"q": "x"}))))
    assert list(df.kind.astype(str)) == ["call_start", "args_delta", "block_stop"]
    assert (df.tool[0], df.block[0], df.fragment[1]) == ("lookup", 0, '{"q": "x"}')
    assert df.call_id.isna().all()


def test_a_function_call_id_is_the_call_id() -> None:
    row = scl.load(gemini(chunk(call("lookup", id="fc_7")))).iloc[0]
    assert (row.kind, row.call_id) == ("call_start", "fc_7")


def test_calls_are_numbered_in_order_across_the_turn() -> None:
    body = gemini(chunk(call("a"), call("b")), chunk(call("c")))
    df = scl.load(body)
    starts = df[df.kind == "call_start"]
    assert (list(starts.tool), list(starts.block), list(starts.frame)) == (
        ["a", "b", "c"], [0, 1, 2], [0, 0, 1])


def test_args_are_the_exact_text_of_the_data_line() -> None:
    args = '{ "a" :1 ,"args":{"x":"\\u00e9\\"}"} , "b": [ 2.50 ] }'
    data = ('{"candidates": [{"content": {"parts": [{"toolCall": {"args": {"a": 1}}}, '
            '{"functionCall": {"args" :  ' + args + ' , "name": "f"}}]}}]}')
    row = scl.load(gemini(data)).iloc[2]
    assert (row.kind, row.fragment, row.chars, row.wire_chars) == (
        "args_delta", args, len(args), len(args))


def test_a_key_orjson_overrode_is_not_taken_for_the_args() -> None:
    data = '{"candidates": [{"content": {"parts": [{"functionCall": ' \
           '{"name": "f", "args": {"old": 1}, "args": {"new": 2}}}]}}]}'
    assert scl.load(gemini(data)).fragment[1] == '{"new": 2}'


def test_args_whose_key_is_escaped_are_a_problem_not_a_guess() -> None:
    data = '{"candidates": [{"content": {"parts": [{"functionCall": ' \
           '{"name": "f", "\\u0061rgs": {"a": 1}}}]}}]}'
    with pytest.raises(scl.CaptureError, match=r"functionCall\.args: not found as written"):
        scl.load(gemini(data))


def test_a_call_without_args_has_no_fragment() -> None:
    body = gemini(chunk({"functionCall": {"name": "now"}}))
    assert rows(body) == [("call_start", 0, "-"), ("block_stop", 0, "-")]


def test_finish_reason_is_a_turn_stop_after_the_chunks_parts() -> None:
    body = gemini(chunk({"text": "Hi"}), chunk(call("f"), finish="STOP"))
    assert [r[0] for r in rows(body)] == [
        "text_delta", "call_start", "args_delta", "block_stop", "turn_stop"]


def test_a_blocked_prompt_ends_the_turn() -> None:
    body = gemini({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": USAGE})
    assert rows(body) == [("turn_stop", None, "-")]


def test_a_candidate_index_left_out_is_the_first_candidate() -> None:
    cand = chunk({"text": "Hi"})
    del cand["candidates"][0]["index"]
    assert rows(gemini(cand)) == [("text_delta", None, "Hi")]


def test_an_error_payload_is_an_error_row_naming_the_provider_error() -> None:
    err = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    df = scl.load(gemini(chunk({"text": "Hi"}), err))  # strict: a valid wire event
    assert list(df.kind.astype(str)) == ["text_delta", "error"]
    assert df.problem[1] == "provider error: RESOURCE_EXHAUSTED: Quota exceeded"


# -- a field of the wrong type is reported, never coerced -----------------------------------

WRONG = {
    "name as a number": (chunk(call(5)), "functionCall.name should be a string, not int"),
    "name left out": (chunk({"functionCall": {"args": {}}}),
                      "functionCall.name should be a string, not NoneType"),
    "args as a string": (chunk(call("f", '{"a": 1}')),
                         "functionCall.args should be an object, not str"),
    "id as a number": (chunk(call("f", id=3)), "functionCall.id should be a string, not int"),
    "text as a number": (chunk({"text": 1}), "parts[].text should be a string, not int"),
    "thought as a string": (chunk({"text": "x", "thought": "yes"}),
                            "parts[].thought should be a boolean, not str"),
    "parts as an object": ({"candidates": [{"content": {"parts": {"text": "x"}}}]},
                           "content.parts should be a list, not dict"),
    "willContinue as a string": (chunk(call("f", willContinue="yes")),
                                 "functionCall.willContinue should be a boolean, not str"),
    "a piece with two values": (chunk(call("f", willContinue=False, partialArgs=[
        {"jsonPath": "$.a", "stringValue": "x", "numberValue": 1}])),
                                "partialArgs[] should hold one value"),
    "finishReason as a number": (chunk(finish=None, finishReason=1),
                                 "candidates[].finishReason should be a string, not int"),
}


@pytest.mark.parametrize(("payload", "reason"), WRONG.values(), ids=WRONG)
def test_a_field_of_the_wrong_type_is_an_error_naming_the_field(payload: dict, reason: str) -> None:
    assert_refused_naming(gemini(chunk({"text": "Hi"}), payload), reason)


def test_a_chunk_reported_as_a_problem_numbers_no_call() -> None:
    body = gemini(chunk(call("a"), call(5)), chunk(call("b")))
    df = scl.load(body, strict=False)
    assert list(df.kind.astype(str)) == ["error", "call_start", "args_delta", "block_stop"]
    assert df.block[1] == 0


# -- calls, detection, the fast path ---------------------------------------------------------

def test_calls_are_complete_with_their_args() -> None:
    body = gemini(chunk({"text": "Sure."}, call("a", {"n": 1}, id="x")),
                  chunk(call("b", {"s": "é"}), finish="STOP"))
    table = scl.calls(body)
    assert list(table.tool) == ["a", "b"] and list(table.block) == [0, 1]
    assert list(table.args) == ['{"n": 1}', '{"s": "\\u00e9"}']
    assert table.complete.all() and table.valid_json.all()
    assert table.call_id[0] == "x" and pd.isna(table.call_id[1])


OTHERS = [
    ("message", {"object": "chat.completion.chunk", "choices": [], "usage": {}}),
    ("message", {"choices": [{"index": 0, "delta": {"content": "x"}}]}),
    ("message_start", START),
    ("content_block_start", TOOL),
    ("response.created", {"type": "response.created", "response": {}}),
]
HYBRIDS = [  # another format's frame carrying a Gemini key too: no real stream sends one
    ("message", {"type": "message_start", "candidates": [], "usageMetadata": {}},
     "anthropic-messages"),
    ("message", {"choices": [], "usageMetadata": {}}, "openai-chat"),
]


@pytest.mark.parametrize(("event", "payload"), OTHERS)
def test_frames_of_the_other_formats_are_never_taken_for_gemini(event: str, payload) -> None:
    assert not FORMATS["gemini"].sniff(event, payload)


@pytest.mark.parametrize(("event", "payload", "provider"), HYBRIDS)
def test_a_hybrid_frame_is_read_as_the_format_its_type_or_choices_name(
        event: str, payload, provider: str) -> None:
    """Gemini's signature is positive (a key of its own), so such a frame shows two formats;
    the registry lists the formats that name themselves first."""
    assert sniff(event, payload) == provider


@pytest.mark.parametrize("payload", [
    chunk({"text": "Hi"}), {"usageMetadata": USAGE}, {"promptFeedback": {"blockReason": "X"}},
])
def test_gemini_frames_are_taken_by_no_other_format(payload: dict) -> None:
    assert sniff("message", payload) == "gemini"
    assert [n for n, f in FORMATS.items() if f.sniff("message", payload)] == ["gemini"]


@pytest.mark.parametrize("body", [
    gemini(chunk({"text": "Hi"}), chunk(call("a"), call("b", {"x": [1]}), finish="STOP")),
    gemini(chunk(call("a"), call(5)), chunk(call("b"))),
    gemini({"usageMetadata": USAGE}, chunk(call("f", id="i")), {"error": {"message": "m"}}),
    gemini(chunk({"text": "x", "thought": True}), '{"candidates": 1}', "[DONE]"),
])
def test_hand_built_streams_load_the_same_either_way(body: bytes) -> None:
    assert_same(body)
    assert_same(body, "gemini")


# -- every real recording ----------------------------------------------------------------------
GEMINI = sorted((CAPTURES / "gemini").glob("*.sse"))
real = pytest.mark.skipif(not GEMINI, reason="real Gemini captures not found")


def _payload_calls(path: Path) -> list[tuple[str, object, object]]:
    """(name, args, id) of every functionCall part, read straight from the data lines."""
    out = []
    for line in path.read_bytes().splitlines():
        if line.startswith(b"data:"):
            for cand in orjson.loads(line[5:]).get("candidates", []):
                for part in cand.get("content", {}).get("parts", []):
                    if "functionCall" in part:
                        fc = part["functionCall"]
                        out.append((fc["name"], fc.get("args"), fc.get("id")))
    return out


@real
def test_every_real_capture_loads_strictly_as_gemini() -> None:
    df = scl.load(CAPTURES / "gemini")
    assert set(df.provider) == {"gemini"}
    assert df.turn.nunique() == len(GEMINI)
    assert not (df.kind == "error").any()


@real
@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem[:60])
def test_every_real_call_has_the_args_of_its_payload(path: Path) -> None:
    table = scl.calls(path)
    assert table.complete.all() and table.valid_json.all()
    got = [(t, orjson.loads(a), None if pd.isna(i) else i)
           for t, a, i in zip(table.tool, table.args, table.call_id, strict=True)]
    assert got == _payload_calls(path)


@real
def test_real_captures_load_the_same_either_way() -> None:
    bodies = {p.stem: p.read_bytes() for p in GEMINI}
    # Google frames with CRLF; the fast path takes them (all but one capture that mixes line
    # ends), and the same bytes with LF.
    lf = {name: body.replace(b"\r\n", b"\n") for name, body in bodies.items()}
    crlf = [b for b in bodies.values() if b.count(b"\r") == b.count(b"\r\n") == b.count(b"\n")]
    assert len(crlf) >= len(bodies) - 1
    assert all(normalise_whole(body) is not None for body in (*crlf, *lf.values()))
    for variant in (bodies, lf):
        caps = [Capture(name, [body]) for name, body in variant.items()]
        fast = load_captures(caps, raw=True)
        slow = load_captures(caps, raw=True, bulk=False)
        assert_frames_equal(fast, slow)


_DAMAGE = [b"\xff", b"\\", b'"', b"}", b"\n", b"\n\n", b"\r", b"data: ", b",", b'"args": ']


@pytest.mark.skipif(not GEMINI, reason="real Gemini captures not found")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GEMINI or [Path()]), st.floats(0, 1), st.sampled_from(_DAMAGE),
       st.booleans())
def test_damaged_real_captures_load_the_same_either_way(seed: Path, where: float, text: bytes,
                                                        replace: bool) -> None:
    body = seed.read_bytes()  # CRLF, as Google sends it
    at = int(where * len(body))
    assert_same(body[:at] + text + body[at + len(text) * replace:])



def _sdk_stream(body: bytes) -> tuple[list[tuple[str, object, object]], list[str]]:
    """(name, args, id) of each call and each answer text, as the google-genai SDK reads
    them (:func:`genai_responses`)."""
    calls, text = [], []
    for response in genai_responses(body):
        for cand in response.candidates or []:
            for part in (cand.content and cand.content.parts) or []:
                if part.function_call is not None:
                    fc = part.function_call
                    calls.append((fc.name, fc.args, fc.id))
                if part.text is not None and not part.thought:
                    text.append(part.text)
    return calls, text


@real
@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem[:60])
def test_the_google_genai_sdk_reads_the_same_calls_and_text(path: Path) -> None:
    """An independent reference, which shares no code with the kit."""
    calls, text = _sdk_stream(path.read_bytes())
    table = scl.calls(path)
    assert [(t, orjson.loads(a), None if pd.isna(i) else i) for t, a, i in
            zip(table.tool, table.args, table.call_id, strict=True)] == calls
    df = scl.load(path)
    assert list(df.fragment[df.kind == "text_delta"]) == text
