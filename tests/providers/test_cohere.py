"""Cohere v2 chat streams normalised to the contract's kinds."""

from __future__ import annotations

import json

import pytest

import streamcalls_lab as scl

from ..conftest import CAPTURES
from ..support.wire_samples import (
    WEATHER,
    call_triples,
    cohere,
    cohere_events,
    ndjson,
    rows_of,
)

VERCEL = sorted((CAPTURES / "other").glob("vercel__ai__cohere-*.jsonl"))



def test_it_is_detected_from_the_payload_without_event_lines() -> None:
    assert set(scl.load(cohere(*cohere_events(), named=False)).provider) == {"cohere-chat"}


def test_a_tool_call_is_announced_filled_and_stopped_by_its_tool_call_index() -> None:
    events = cohere_events([("c1", "f", ['{"a"', ": 1}"])], plan="x")
    rows = rows_of(cohere(*events))
    assert rows[2:6] == [("tool-call-start", "call_start", 0, "-"),
                         ("tool-call-delta", "args_delta", 0, '{"a"'),
                         ("tool-call-delta", "args_delta", 0, ": 1}"),
                         ("tool-call-end", "block_stop", 0, "-")]


def test_the_start_names_the_call() -> None:
    df = scl.load(cohere(*cohere_events()))
    starts = df[df.kind == "call_start"]
    assert list(zip(starts.call_id, starts.tool, strict=True)) == [(i, n) for i, n, _ in WEATHER]


def test_the_tool_plan_is_text() -> None:
    df = scl.load(cohere(*cohere_events(plan="I will look")))
    plan = df[df.event == "tool-plan-delta"]
    assert set(plan.kind) == {"text_delta"} and "".join(plan.fragment) == "I will look"


def test_answer_text_is_text_with_a_start_and_no_block() -> None:
    rows = rows_of(cohere(*cohere_events([], plan="", text=["Sun", "ny"], finish="COMPLETE")))
    assert [r for r in rows if r[0].startswith("content")] == [
        ("content-start", "text_start", None, "-"), ("content-delta", "text_delta", None, "Sun"),
        ("content-delta", "text_delta", None, "ny"), ("content-end", "other", None, "-")]


def test_thinking_content_is_other() -> None:
    events = [{"type": "content-start", "index": 0,
               "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}}},
              {"type": "content-delta", "index": 0,
               "delta": {"message": {"content": {"thinking": "hmm"}}}}]
    assert [r[1] for r in rows_of(cohere(*events))] == ["other", "other"]


def test_message_end_is_the_turn_stop() -> None:
    assert rows_of(cohere(*cohere_events()))[-1] == ("message-end", "turn_stop", None, "-")


def test_argument_wire_chars_count_the_escapes() -> None:
    df = scl.load(cohere(*cohere_events([("c", "f", ['{"q": "a\\"b"}'])])))
    frag = df[df.kind == "args_delta"].iloc[0]
    assert frag.wire_chars == len(json.dumps(frag.fragment)) - 2 > frag.chars


def test_calls_join_each_calls_fragments() -> None:
    out = scl.calls(cohere(*cohere_events()))
    assert list(out.args) == ["".join(f) for _, _, f in WEATHER]
    assert out.complete.all() and out.valid_json.all()


def test_a_call_cut_off_before_its_end_is_not_complete() -> None:
    events = cohere_events()
    cut = next(i for i, e in enumerate(events) if e["type"] == "tool-call-end")
    assert not scl.calls(cohere(*events[:cut])).complete.any()


def test_a_delta_of_the_wrong_type_names_its_offset() -> None:
    events = cohere_events([("c", "f", ["{}"])], plan="x")
    events[3]["delta"]["message"]["tool_calls"]["function"]["arguments"] = 5
    body = cohere(*events)
    at = body.index(b"event: tool-call-delta")
    with pytest.raises(scl.CaptureError, match=rf"byte {at}: .*arguments should be a string"):
        scl.load(body)


# -- independent references ------------------------------------------------------------------


def sdk_calls(body: bytes) -> list[tuple[str, str, str]]:
    """(id, name, arguments) per call as the cohere SDK reads the stream: its own HTTP client
    (an in-memory transport), SSE reader and event types; the arguments joined by index."""
    cohere_sdk = pytest.importorskip("cohere")
    import httpx

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = cohere_sdk.ClientV2(api_key="fake", base_url="http://sdk-reference.invalid",
                                 httpx_client=httpx.Client(transport=httpx.MockTransport(serve)))
    calls: dict[int, list[str]] = {}
    for ev in client.chat_stream(model="command-a-03-2025",
                                 messages=[{"role": "user", "content": "x"}]):
        if ev.type == "tool-call-start":
            tc = ev.delta.message.tool_calls
            calls[ev.index] = [tc.id, tc.function.name, tc.function.arguments or ""]
        elif ev.type == "tool-call-delta":
            calls[ev.index][2] += ev.delta.message.tool_calls.function.arguments
    return [tuple(c) for _, c in sorted(calls.items())]


@pytest.mark.parametrize("calls", [WEATHER, WEATHER[:1], [("c", "f", [])],
                                   [("c", "f", ['{"s": "\\u00e9\\n', '\\"q\\""}'])]],
                         ids=["two", "one", "no-args", "escapes"])
def test_the_cohere_sdk_reads_the_same_calls(calls: list) -> None:
    body = cohere(*cohere_events(calls))
    assert call_triples(scl.calls(body)) == sdk_calls(body)


@pytest.mark.skipif(not VERCEL, reason="real Cohere chunk logs not found")
@pytest.mark.parametrize("path", VERCEL, ids=lambda p: p.stem)
def test_real_cohere_events_reframed_as_sse_agree_with_the_sdk(path) -> None:
    """The AI SDK's chunk logs hold real Cohere events without their framing: re-framed as
    SSE they load as Cohere, and give the calls the cohere SDK gives."""
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    body = cohere(*events)
    df = scl.load(body)
    assert set(df.provider) == {"cohere-chat"} and df.problem.isna().all()
    assert call_triples(scl.calls(df)) == sdk_calls(body)


@pytest.mark.skipif(not VERCEL, reason="real Cohere chunk logs not found")
def test_a_chunk_log_loads_as_cohere_over_ndjson_too() -> None:
    """The same events one per line (no SSE): the framing and the format are found apart."""
    path = next(p for p in VERCEL if "tool-call" in p.name)
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert scl.calls(ndjson(*lines)).args.tolist() == scl.calls(cohere(*lines)).args.tolist()
