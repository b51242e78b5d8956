"""Tool calls as the official SDKs assemble them from a captured SSE body.

An independent reference for conformance tests: the bytes go through each SDK's
own HTTP client (over an in-memory ``httpx2.MockTransport``), SSE decoder and
streaming accumulator, so nothing here shares code with ``streamcalls_lab``.
Offline: the transport never opens a socket and the API keys are fake.

What counts as a tool call is what the caller must execute: Anthropic
``tool_use`` blocks, Chat Completions ``tool_calls`` of choice 0, Responses
``function_call`` items. Server-side tools (``server_tool_use``, ``mcp_call``,
``shell_call``, ...) and Responses ``tool_search_call`` items (whose arguments
are an object, not a streamed string) are left out.

When the SDK raises mid-stream (an ``error`` event, JSON the Anthropic SDK
cannot partially parse, an event order its state machine rejects),
``sdk_calls`` returns what the SDK had accumulated up to that point, as a user
catching the exception would hold it. ``sdk_run`` also returns the exception,
so a conformance test can decide not to compare against a stream the SDK
rejected.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:  # imported where used: 3.6 s of CPU, paid only where an SDK test runs
    import openai

PROVIDERS = ("anthropic-messages", "openai-chat", "openai-responses")

_BASE_URL = "http://sdk-reference.invalid"
_USER = [{"role": "user", "content": "x"}]


@dataclass
class SdkResult:
    calls: list[dict]
    error: Exception | None = None


def sdk_calls(provider: str, body: bytes) -> list[dict]:
    """provider in {"anthropic-messages", "openai-chat", "openai-responses"}.
    Returns one dict per tool call, in order:
    {"block": int, "call_id": str|None, "tool": str|None, "args": str}
    where args is the raw argument STRING the SDK accumulated (not a parsed object).

    block is the Anthropic content-block index, the Chat ``tool_calls[].index``
    or the Responses ``output_index``. args is "" when the SDK holds no argument
    text at all (Anthropic keeps no buffer for a block without deltas; the Chat
    snapshot has None when no chunk carried ``arguments``).
    """
    return sdk_run(provider, body).calls


def sdk_run(provider: str, body: bytes) -> SdkResult:
    """Like ``sdk_calls``, plus the exception the SDK raised, if any."""
    try:
        runner = _RUNNERS[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}") from None
    with warnings.catch_warnings():
        # The SDKs re-serialise items of types their unions don't know (web_search_call with
        # newer actions); pydantic warns about it, which is noise for the tool calls.
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
        return runner(body)


def sdk_decode_baseline(body: bytes) -> int:
    """Decode body with the anthropic SDK's own SSEDecoder (anthropic._streaming.SSEDecoder,
    iter_bytes) and json.loads every data payload; return the number of events.
    Used as the speed peer in benchmarks."""
    from anthropic._streaming import SSEDecoder

    n = 0
    for sse in SSEDecoder().iter_bytes(iter((body,))):
        # The OpenAI formats end with a non-JSON sentinel; count it as an event all the same.
        if sse.data and sse.data != "[DONE]":
            json.loads(sse.data)
        n += 1
    return n


def _http_client(body: bytes) -> httpx2.Client:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def _drain(stream: Any) -> Exception | None:
    try:
        for _ in stream:
            pass
    except Exception as exc:  # the reference records whatever the SDK raises
        return exc
    return None


def _run_anthropic(body: bytes) -> SdkResult:
    import anthropic

    client = anthropic.Anthropic(
        api_key="sk-ant-fake", base_url=_BASE_URL, http_client=_http_client(body), max_retries=0
    )
    with client, client.messages.stream(model="reference", max_tokens=1, messages=_USER) as stream:
        error = _drain(stream)
        # Unlike current_message_snapshot, this does not assert when message_start never came.
        snapshot = stream._current_snapshot_or_none()
        # The snapshot only holds the parsed `input`; the raw deltas live in this private buffer.
        bufs: dict[int, bytes] = stream._MessageStream__json_bufs
    calls = [
        {
            "block": i,
            "call_id": block.id,
            "tool": block.name,
            "args": bufs.get(i, b"").decode("utf-8"),
        }
        for i, block in enumerate(snapshot.content if snapshot else [])
        if block.type == "tool_use"
    ]
    return SdkResult(calls, error)


def _openai_client(body: bytes) -> openai.OpenAI:
    import openai

    return openai.OpenAI(
        api_key="sk-fake", base_url=_BASE_URL, http_client=_http_client(body), max_retries=0
    )


def _chat_snapshot(body: bytes) -> tuple[Any, Exception | None]:
    """The SDK's accumulated completion (None when no chunk got through) and its error."""
    client = _openai_client(body)
    with client, client.chat.completions.stream(model="reference", messages=_USER) as stream:
        error = _drain(stream)
        # get_final_completion() would also parse arguments; the raw snapshot is what we want.
        try:
            return stream.current_completion_snapshot, error
        except AssertionError:  # no chunk got through
            return None, error


def _run_openai_chat(body: bytes) -> SdkResult:
    snapshot, error = _chat_snapshot(body)
    choices = [c for c in (snapshot.choices if snapshot else []) if c.index == 0]
    tool_calls = (choices[0].message.tool_calls or []) if choices else []
    calls = [
        {
            # accumulate_delta inserts by index, so list position can differ from it.
            "block": getattr(tc, "index", pos),
            "call_id": tc.id,
            "tool": tc.function.name,
            "args": tc.function.arguments or "",
        }
        for pos, tc in enumerate(tool_calls)
        if getattr(tc, "function", None) is not None
    ]
    return SdkResult(calls, error)


def sdk_chat_texts(body: bytes) -> tuple[dict[int, str], Exception | None]:
    """Each choice's message content as the openai SDK's stream state assembles it."""
    snapshot, error = _chat_snapshot(body)
    choices = snapshot.choices if snapshot else []
    return {c.index: c.message.content or "" for c in choices}, error


def _run_openai_responses(body: bytes) -> SdkResult:
    client = _openai_client(body)
    with client, client.responses.stream(model="reference", input="x") as stream:
        error = _drain(stream)
        # Items as opened by output_item.added and grown by the argument deltas, by output_index.
        items = stream._state._output_items
    calls = [
        {
            "block": index,
            "call_id": item.call_id,
            "tool": item.name,
            "args": item.arguments or "",
        }
        for index, item in sorted(items.items())
        if item.type == "function_call"
    ]
    return SdkResult(calls, error)


_RUNNERS: dict[str, Callable[[bytes], SdkResult]] = {
    "anthropic-messages": _run_anthropic,
    "openai-chat": _run_openai_chat,
    "openai-responses": _run_openai_responses,
}
