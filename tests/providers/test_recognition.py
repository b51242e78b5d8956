"""A format claims a stream only on its own signatures, and nothing is misread in silence.

``[DONE]`` and event names several protocols send (``recognise.SHARED``) name no format; the
format is the first frame's that shows one, the frames before it read by it. Streams of
protocols the kit does not read (LangGraph Platform, MCP, Assistants) are named with why. A
turn written in one format is never claimed by another (a property over every pair).
"""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcalls_lab as scl
from streamcalls_lab._fastpath import whole_rows
from streamcalls_lab.events import DONE, is_done
from streamcalls_lab.framing import decode_any
from streamcalls_lab.producers.quirks import with_implied
from streamcalls_lab.providers import FORMATS, INTERLEAVING, READERS, sniff
from streamcalls_lab.providers.recognise import SHARED
from streamcalls_lab.turns import Call, Script, Text, body, write

from ..support.compare import assert_same
from ..support.sse_turns import sse
from ..support.wire_samples import ndjson

NAMES = sorted(FORMATS)

LANGGRAPH = sse(
    ("metadata", {"run_id": "1ef4a9b8-0c1d-6e2f-8a3b-4c5d6e7f8a9b", "attempt": 1}),
    ("messages/partial", [{"type": "AIMessageChunk", "id": "run-1", "content": "",
                           "tool_calls": [{"name": "search", "args": {}, "id": "call_1",
                                           "type": "tool_call"}]}]),
    ("messages/partial", [{"type": "AIMessageChunk", "id": "run-1", "content": "",
                           "tool_calls": [{"name": "search", "args": {"q": "x"},
                                           "id": "call_1", "type": "tool_call"}]}]),
    ("end", None),
)
LANGGRAPH_TUPLES = sse(
    ("metadata", {"run_id": "1ef4a9b8-0c1d-6e2f-8a3b-4c5d6e7f8a9b", "attempt": 1}),
    ("messages", [{"type": "AIMessageChunk", "content": "", "id": "run-1",
                   "tool_call_chunks": [{"name": "search", "args": "", "id": "call_1",
                                         "index": 0, "type": "tool_call_chunk"}]},
                  {"langgraph_node": "agent", "langgraph_step": 1}]),
    ("updates|agent:1", {"agent": {"messages": []}}),
    ("values", {"messages": []}),
    ("end", None),
)
ASSISTANTS = sse(
    ("thread.run.created", {"id": "run_1", "object": "thread.run", "status": "queued"}),
    ("thread.run.step.delta", {"id": "step_1", "object": "thread.run.step.delta", "delta": {
        "step_details": {"type": "tool_calls", "tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}}),
    ("done", "[DONE]"),
)
MCP = sse(
    ("message", {"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": 1, "progress": 1}}),
    ("message", {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": "Sunny, 21 C"}], "isError": False}}),
)


def _claims(raw: bytes) -> list[tuple[str, list[str]]]:
    """Each frame with every reader that claims it ([DONE] too: it names no format)."""
    out = []
    for fr in decode_any([raw], strict=False):
        if fr.problem is not None:
            continue
        payload = DONE if is_done(fr.data) else orjson.loads(fr.data)
        out.append((fr.data[:60], [n for n, r in READERS.items() if r.sniff(fr.event, payload)]))
    return out


# -- what decides nothing alone ----------------------------------------------------------------
def test_done_alone_names_no_format() -> None:
    df = scl.load(b"data: [DONE]\n\n")
    assert set(df.provider) == {"unknown"}
    assert df.problem.str.contains("`[DONE]` ends the streams of several", regex=False).all()


@pytest.mark.parametrize("name", sorted(SHARED))
def test_an_event_name_several_protocols_send_names_no_format(name: str) -> None:
    assert sniff(name, {"run_id": "r1", "attempt": 1}) is None


def test_frames_before_the_first_signature_are_read_by_the_format_it_shows() -> None:
    raw = ndjson({"metadata": {"usage": {"inputTokens": 1}}},
                 {"messageStart": {"role": "assistant"}},
                 {"messageStop": {"stopReason": "end_turn"}})
    df = scl.load(raw)
    assert set(df.provider) == {"bedrock-converse"} and df.problem.isna().all()
    assert list(df.event) == ["metadata", "messageStart", "messageStop"]


def test_the_fast_path_finds_the_format_past_frames_that_show_none() -> None:
    raw = sse(("end", {"note": 1}), ("message_start", {"type": "message_start", "message": {}}),
              ("message_stop", {"type": "message_stop"}))
    whole = whole_rows(raw)
    assert whole is not None and whole.provider == "anthropic-messages"
    assert_same(raw)


# -- streams of protocols the kit does not read are named --------------------------------------
def test_a_langgraph_run_stream_is_named_not_read_as_bedrock() -> None:
    df = scl.load(LANGGRAPH)  # strict: a stream of unknown format is no error
    assert set(df.provider) == {"unknown"}
    assert df.problem.str.startswith("looks like a LangGraph Platform run stream").all()


def test_a_langgraph_snapshot_is_said_to_be_one() -> None:
    df = scl.load(LANGGRAPH)
    partial = df[df.event == "messages/partial"]
    assert partial.problem.str.contains("a snapshot of each message so far").all()


def test_a_langgraph_messages_tuple_stream_is_named() -> None:
    df = scl.load(LANGGRAPH_TUPLES)
    assert set(df.provider) == {"unknown"}
    assert df.problem.str.startswith("looks like a LangGraph Platform run stream").all()


def test_a_frame_showing_nothing_says_what_its_stream_looks_like() -> None:
    df = scl.load(LANGGRAPH)
    end = df[df.event == "end"].problem.iloc[0]
    assert end.startswith("looks like a LangGraph Platform run stream (as its 'metadata' "
                          "events show; this frame: event 'end')")


def test_an_assistants_run_stream_ending_in_done_is_read_as_assistants_not_chat() -> None:
    df = scl.load(ASSISTANTS)
    assert set(df.provider) == {"openai-assistants"} and df.problem.isna().all()
    assert len(scl.calls(df)) >= 1


def test_an_mcp_streamable_http_response_is_named_with_where_its_call_is() -> None:
    df = scl.load(MCP)
    assert set(df.provider) == {"unknown"}
    assert df.problem.str.startswith("looks like an MCP streamable-HTTP response").all()
    assert df.problem.str.contains("`tools/call`", regex=False).all()


@pytest.mark.parametrize("name", ["ai-sdk-ui", "ag-ui"])
def test_no_lookalike_names_a_format_the_kit_reads(name: str) -> None:
    raw = body(name, write(name, Script((Text(("Hi",)),))))
    assert set(scl.load(raw).provider) == {name}


# -- a turn written in one format is never claimed by another ----------------------------------
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ARGS = st.dictionaries(st.sampled_from(["city", "q", "días", "n"]),
                        st.one_of(_TEXT, st.integers(-5, 5), st.booleans()), max_size=3)


@st.composite
def turns(draw: st.DrawFn, name: str) -> Script:
    """A turn ``name``'s writer can write: prose and calls in any fragments, with any of
    the quirks the format can carry, interleaved where its fragments name their call."""
    prefix, size = FORMATS[name].call_ids
    segments: list[Text | Call] = []
    for k in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            segments.append(Text(tuple(draw(st.lists(_TEXT.filter(bool), min_size=1,
                                                     max_size=3)))))
        else:
            args = json.dumps(draw(_ARGS), ensure_ascii=draw(st.booleans()))
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(args) - 1)), max_size=3)))
            pieces = tuple(args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)],
                                                     strict=True) if args[a:b])
            segments.append(Call(draw(st.sampled_from(["get_weather", "search"])),
                                 prefix + f"{k}Zq8Lm2Xr7Tn4Wv1Yp6Bs3Kd9"[:size], pieces))
    quirks = draw(st.sets(st.sampled_from(sorted(FORMATS[name].quirks)), max_size=2)
                  if FORMATS[name].quirks else st.just(set()))
    interleave = name in INTERLEAVING and draw(st.booleans())
    return Script(tuple(segments), quirks=frozenset(with_implied(quirks)),
                  interleave=interleave)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_turn_written_in_one_format_is_claimed_by_no_other(name: str, data) -> None:
    turn = data.draw(turns(name))
    try:
        frames = write(name, turn)
    except ValueError:  # (quirks this turn's content cannot carry)
        return
    raw = body(name, frames)
    claims = _claims(raw)
    assert all(who in ([], [name]) for _, who in claims), claims
    assert set(scl.load(raw, strict=False).provider) == {name}
