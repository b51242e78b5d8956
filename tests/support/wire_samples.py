"""Realistic sample streams of the formats the kit has no public recordings of, written from
the providers' documentation (each builder names its page). Tests and conformance checks
build on these; nothing here is read back by the library.

- Cohere v2 chat: https://docs.cohere.com/v2/docs/streaming, .../tool-use-streaming
- Ollama ``/api/chat``: https://github.com/ollama/ollama/blob/main/docs/api.md
- Bedrock InvokeModelWithResponseStream: https://docs.aws.amazon.com/bedrock/latest/
  APIReference/API_runtime_InvokeModelWithResponseStream.html and each model family's
  inference parameters page (Claude, Llama, Titan, Mistral, Nova).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from streamcalls_lab.framing.eventstream import event_message, exception_message
from streamcalls_lab.framing.sse import sse_body, sse_frame

Call = tuple[str, str, list[str]]
"""A tool call: (id, name, its argument fragments as streamed)."""

WEATHER: list[Call] = [
    ("get_weather_k2m9x1", "get_weather", ['{"', "location", '": "', "Paris", ", FR", '", "',
                                          "unit", '": "', "celsius", '"}']),
    ("get_time_p0q7w3", "get_time", ['{"tz": ', '"Europe/Paris', '"}']),
]


# -- Cohere v2 chat (SSE, each frame named by its type) --------------------------------------

def cohere_events(calls: Iterable[Call] = WEATHER, *, plan: str = "I will look it up.",
                  text: list[str] | None = None, finish: str = "TOOL_CALL") -> list[dict]:
    """The events of one Cohere v2 turn: the plan, each call, then any answer text."""
    out: list[dict] = [{"id": "5d9a1f0e-8c55-4f7d-9a63-1b2c3d4e5f60", "type": "message-start",
                        "delta": {"message": {"role": "assistant", "content": [],
                                              "tool_plan": "", "tool_calls": [],
                                              "citations": []}}}]
    out += [{"type": "tool-plan-delta", "delta": {"message": {"tool_plan": word}}}
            for word in re.findall(r" ?[^ ]+", plan)]  # " will": a word and its space
    for i, (call_id, name, fragments) in enumerate(calls):
        out.append({"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": {
            "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}}}})
        out += [{"type": "tool-call-delta", "index": i, "delta": {"message": {"tool_calls": {
            "function": {"arguments": frag}}}}} for frag in fragments]
        out.append({"type": "tool-call-end", "index": i})
    if text:
        out.append({"type": "content-start", "index": 0,
                    "delta": {"message": {"content": {"type": "text", "text": ""}}}})
        out += [{"type": "content-delta", "index": 0,
                 "delta": {"message": {"content": {"text": t}}}} for t in text]
        out.append({"type": "content-end", "index": 0})
    out.append({"type": "message-end", "delta": {"finish_reason": finish, "usage": {
        "billed_units": {"input_tokens": 31, "output_tokens": 24},
        "tokens": {"input_tokens": 1212, "output_tokens": 60}}}})
    return out


def cohere(*events: dict, named: bool = True) -> bytes:
    """Events as Cohere frames them: ``event: <type>`` then ``data: <json>`` (or data alone)."""
    return sse_body(sse_frame(json.dumps(e), event=e["type"] if named else None)
                    for e in events)


# -- Ollama /api/chat (NDJSON) -----------------------------------------------------------------

_OLLAMA = {"model": "qwen3:8b", "created_at": "2025-06-02T10:15:01.123456Z"}


def ollama_line(content: str = "", *, tool_calls: list[dict] | None = None,
                thinking: str | None = None, done: bool = False) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    line = {**_OLLAMA, "message": message, "done": done}
    if done:
        line.update(done_reason="stop", total_duration=4883583458, load_duration=1334875,
                    prompt_eval_count=26, prompt_eval_duration=342546000, eval_count=282,
                    eval_duration=4535599000)
    return line


def ollama_call(name: str, arguments: object, *, index: int | None = None,
                call_id: str | None = None) -> dict:
    fn: dict = {"name": name, "arguments": arguments}
    if index is not None:
        fn["index"] = index
    tc: dict = {"function": fn}
    if call_id is not None:
        tc["id"] = call_id
    return tc


def ollama_turn() -> list[dict]:
    """Thinking, two calls whole in one line, then the done line (as ``qwen3`` answers)."""
    return [
        ollama_line(thinking="The user wants the weather"),
        ollama_line(thinking=" in Paris."),
        ollama_line(tool_calls=[
            ollama_call("get_weather", {"location": "Paris, FR", "unit": "celsius"}, index=0),
            ollama_call("get_time", {"tz": "Europe/Paris"}, index=1),
        ]),
        ollama_line(done=True),
    ]


def ndjson(*lines: dict | str, eol: str = "\n") -> bytes:
    """One JSON text per line, compact as Go's encoder writes it (a str is sent as it stands)."""
    return "".join((x if isinstance(x, str) else json.dumps(x, separators=(",", ":"),
                                                            ensure_ascii=False)) + eol
                   for x in lines).encode()


# -- Bedrock InvokeModelWithResponseStream (AWS event-stream of base64 chunks) -----------------

METRICS = {"amazon-bedrock-invocationMetrics": {"inputTokenCount": 412, "outputTokenCount": 71,
                                                "invocationLatency": 1843,
                                                "firstByteLatency": 602}}


def invoke_chunk(inner: dict | str) -> bytes:
    """One ``chunk`` message: the model's event, base64 in ``{"bytes": …}``."""
    raw = inner if isinstance(inner, str) else json.dumps(inner)
    payload = json.dumps({"bytes": base64.b64encode(raw.encode()).decode(), "p": "abcdefgh"})
    return event_message("chunk", payload.encode())


def invoke(*inners: dict | str, exception: tuple[str, str] | None = None) -> bytes:
    body = b"".join(map(invoke_chunk, inners))
    if exception is not None:
        name, message = exception
        body += exception_message(name, json.dumps({"message": message}).encode())
    return body


def claude_events(calls: Iterable[Call] = WEATHER, text: str = "Let me check.") -> list[dict]:
    """Anthropic Messages events as Claude on Bedrock streams them (metrics on the stop)."""
    out: list[dict] = [
        {"type": "message_start", "message": {
            "id": "msg_bdrk_01XyZ", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-20250514", "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 412, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text",
                                                                      "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                              "text": text}},
        {"type": "content_block_stop", "index": 0},
    ]
    for i, (call_id, name, fragments) in enumerate(calls, start=1):
        out.append({"type": "content_block_start", "index": i, "content_block": {
            "type": "tool_use", "id": "toolu_bdrk_" + call_id, "name": name, "input": {}}})
        out += [{"type": "content_block_delta", "index": i, "delta": {
            "type": "input_json_delta", "partial_json": f}} for f in ["", *fragments]]
        out.append({"type": "content_block_stop", "index": i})
    out += [{"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                "stop_sequence": None},
             "usage": {"output_tokens": 71}},
            {"type": "message_stop", **METRICS}]
    return out


def nova_events(calls: Iterable[Call] = WEATHER[:1]) -> list[dict]:
    """Amazon Nova on the invoke API: ConverseStream's events, each under its own key."""
    out: list[dict] = [{"messageStart": {"role": "assistant"}},
                       {"contentBlockDelta": {"delta": {"text": "Checking."},
                                              "contentBlockIndex": 0}},
                       {"contentBlockStop": {"contentBlockIndex": 0}}]
    for i, (call_id, name, fragments) in enumerate(calls, start=1):
        out.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id,
                                                                "name": name}},
                                          "contentBlockIndex": i}})
        out.append({"contentBlockDelta": {"delta": {"toolUse": {"input": "".join(fragments)}},
                                          "contentBlockIndex": i}})
        out.append({"contentBlockStop": {"contentBlockIndex": i}})
    out += [{"messageStop": {"stopReason": "tool_use"}},
            {"metadata": {"usage": {"inputTokens": 300, "outputTokens": 40}}, **METRICS}]
    return out


def llama_events(words: Iterable[str] = ("Paris", " is", " mild.")) -> list[dict]:
    out = [{"generation": w, "prompt_token_count": None, "generation_token_count": i + 1,
            "stop_reason": None} for i, w in enumerate(words)]
    out.append({"generation": "", "prompt_token_count": 18, "generation_token_count": 4,
                "stop_reason": "stop", **METRICS})
    return out


def titan_events(words: Iterable[str] = ("Paris is", " mild.")) -> list[dict]:
    out: list[dict] = [{"outputText": w, "index": 0, "totalOutputTextTokenCount": i + 1,
                        "completionReason": None, "inputTextTokenCount": 5}
                       for i, w in enumerate(words)]
    out[-1] = {**out[-1], "completionReason": "FINISH", **METRICS}
    return out


def mistral_events(words: Iterable[str] = ("Paris", " is mild.")) -> list[dict]:
    out: list[dict] = [{"outputs": [{"text": w, "stop_reason": None}]} for w in words]
    out.append({"outputs": [{"text": "", "stop_reason": "stop"}], **METRICS})
    return out


# -- the checks every new format's tests share ----------------------------------------------------

def assert_registered_and_detected(body: bytes, provider: str) -> None:
    """The format is in the registry under ``provider`` and every row of ``body`` is read as it."""
    import streamcalls_lab as scl
    from streamcalls_lab.providers import READERS

    assert provider in READERS
    assert set(scl.load(body).provider) == {provider}


def assert_chunking_changes_nothing(body: bytes, *, strict: bool = True) -> None:
    """Splits into two reads (every position of a short body, some 100 spread over a long
    one), and one byte at a time, load exactly the rows of one read."""
    import streamcalls_lab as scl

    whole = scl.load(body, name="t", strict=strict)
    for cut in range(1, len(body), max(1, len(body) // 100)):
        assert scl.load([body[:cut], body[cut:]], name="t", strict=strict).equals(whole), cut
    one_by_one = scl.load([body[i : i + 1] for i in range(len(body))], name="t", strict=strict)
    assert one_by_one.equals(whole)


def call_triples(calls: Any) -> list[tuple]:
    """(call_id, tool, args) of each row of a ``calls()`` table: what an SDK's calls compare to."""
    return list(zip(calls.call_id, calls.tool, calls.args, strict=True))


def rows_of(body: bytes, **options: object) -> list[tuple]:
    """(event, kind, block, fragment) of each row, None for an empty block and "-" for no
    fragment: what most of the new formats' tests compare."""
    import streamcalls_lab as scl

    df = scl.load(body, **options)
    return list(zip(df.event, df.kind.astype(str),
                    df.block.astype(object).where(df.block.notna(), None),
                    df.fragment.fillna("-"), strict=True))


def assert_refused(body: bytes, why: str) -> None:
    """A strict load refuses ``body`` for ``why`` (a regex); a lenient one keeps the frame as
    one error row: what every format's tests hold a field of the wrong type to."""
    import pytest

    import streamcalls_lab as scl

    with pytest.raises(scl.CaptureError, match=why):
        scl.load(body)
    assert scl.load(body, strict=False).kind.tolist().count("error") == 1


def finished_calls(body: bytes, *columns: str) -> list[tuple]:
    """``columns`` (call_id, block, args unless named) of each call of ``body``, once every
    call is checked finished: what a test of calls kept apart compares."""
    import streamcalls_lab as scl

    table = scl.calls(body)
    assert table.complete.all(), table.problem.tolist()
    return list(zip(*(table[c] for c in columns or ("call_id", "block", "args")), strict=True))


def interleaved(start: Callable[[str, str], Any], piece: Callable[[str, str], Any],
                end: Callable[[str, str, dict], Any]) -> list[Any]:
    """Two calls open at once, their fragments interleaved, the first ended while the second
    still fills, as a format's events: ``start(id, tool)`` announces a call, ``piece(id,
    fragment)`` fills it and ``end(id, tool, args)`` ends it. They read to
    :data:`KEPT_APART` in every format that keys its fragments by call id."""
    return [start("a", "f"), start("b", "g"), piece("b", '{"y":'), piece("a", '{"x":'),
            piece("a", "1}"), end("a", "f", {"x": 1}), piece("b", "2}"),
            end("b", "g", {"y": 2})]


KEPT_APART = [("a", 0, '{"x":1}'), ("b", 1, '{"y":2}')]
"""(call_id, block, args) of the calls :func:`interleaved` writes."""
