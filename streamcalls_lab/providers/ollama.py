"""Ollama's native API (``POST /api/chat``, and ``/api/generate``): one JSON object per line.

https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion

The framing is NDJSON (:mod:`streamcalls_lab.ndjson`), not SSE. Each line is a whole
response so far: ``message.content`` is a text fragment (``response`` for ``/api/generate``),
``message.thinking`` the model's reasoning, and ``message.tool_calls`` calls that arrive
whole, ``function.arguments`` a JSON object, with no id and often no index. Calls are
numbered in order of arrival, as Gemini's are; each is announced, given its arguments as
one fragment (the object's text exactly as it stood in the line, as for Gemini) and stopped,
in one line. ``"done": true`` ends the turn; an ``{"error": …}`` line is the server's error.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, array, fragment_row, maybe_text, obj, stated, text
from ..turns import Script, Text, WireFrame, json_object, raw, raw_json
from .as_written import exact_span, object_after, object_text, wire_length
from .recognise import ByKeys
from .spec import Answer, Envelope, Fields, Streaming, WireFormat


class Ollama:
    name = "ollama"
    hot = None  # the fast path reads SSE captures only, and this is NDJSON

    def __init__(self) -> None:
        self._calls = 0  # calls so far in the turn: the next one's block

    # Every line says whether it is the last (``done``) and holds a message or a response.
    sniff = ByKeys({"message": None, "response": None}, needs={"done": bool})

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        calls = self._calls
        try:
            return self._line(payload, data)
        except Exception:
            self._calls = calls  # a line reported as a problem numbers no call
            raise

    def _line(self, payload: Any, data: str) -> list[Ev]:
        payload = obj(payload, "an Ollama line")
        done = payload.get("done")
        if done is not None and type(done) is not bool:
            raise TypeError(f"done should be a boolean, not {type(done).__name__}")
        name = "done" if done else "chunk"
        if "error" in payload:
            return [Ev.provider_error("error", payload["error"])]
        out: list[Ev] = []
        message = obj(payload.get("message") or {}, "message")
        content = message.get("content") if "message" in payload else payload.get("response")
        key = "content" if "message" in payload else "response"
        if content:
            frag = text(content, key)
            out.append(fragment_row(name, "text_delta", None, frag, wire_length(data, key, frag)))
        at = 0
        for tc in array(message.get("tool_calls") or [], "message.tool_calls"):
            at = self._call(name, obj(tc, "tool_calls[]"), data, at, out)
        if done:
            out.append(Ev(name, "turn_stop", reason=stated(payload.get("done_reason"))))
        return out or [Ev(name, "other")]  # thinking alone, or nothing new

    def _call(self, name: str, tc: dict[str, Any], data: str, at: int, out: list[Ev]) -> int:
        """A whole call: announced, its arguments in one fragment, stopped."""
        fn = obj(tc.get("function"), "tool_calls[].function")
        tool = text(fn.get("name"), "function.name")
        call_id = maybe_text(tc.get("id"), "tool_calls[].id")
        span = exact_span(data, "function", fn, at, len(data), "tool_calls[].function")
        block = self._calls
        self._calls += 1
        out.append(Ev(name, "call_start", block, call_id, tool))
        args = fn.get("arguments")
        if type(args) is str:  # a server that sends the arguments as a string
            out.append(fragment_row(name, "args_delta", block, args,
                                 wire_length(data[span[0]:span[1]], "arguments", args)))
        elif args is not None:
            frag = object_text(data, "arguments", args, *span, "function.arguments")
            out.append(fragment_row(name, "args_delta", block, frag, len(frag)))
        out.append(Ev(name, "block_stop", block))
        return span[1]


def whole(payload: Any, data: str) -> Answer | None:
    """A whole answer (a request with ``"stream": false``: the one line, ``done`` true): its
    calls (``function.arguments`` the object exactly as written, or the string a server
    sent), ``done_reason`` and ``message.content`` (``response`` for ``/api/generate``);
    None for any other payload."""
    if not (isinstance(payload, dict) and payload.get("done") is True
            and ("message" in payload or "response" in payload)):
        return None
    message = obj(payload.get("message") or {}, "message")
    calls, at = [], 0
    for tc in array(message.get("tool_calls") or [], "message.tool_calls"):
        fn = obj(obj(tc, "tool_calls[]").get("function"), "tool_calls[].function")
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args, at = object_after(data, "arguments", args, at, "function.arguments")
        calls.append({"call_id": maybe_text(tc.get("id"), "tool_calls[].id"),
                      "tool": text(fn.get("name"), "function.name"), "args": args})
    said = message.get("content") if "message" in payload else payload.get("response")
    return Answer(tuple(calls), maybe_text(payload.get("done_reason"), "done_reason"),
                  text(said or "", "content"))


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``/api/chat`` streams it, one JSON object a line: a line per text
    fragment, each call whole in a line of its own (``arguments`` the object as given), then
    the ``done`` line."""
    head = {"model": turn.model, "created_at": "2026-01-01T00:00:00Z"}
    frames = []
    calls = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            frames += [WireFrame({**head, "message": {"role": "assistant", "content": piece},
                                  "done": False}, None, "text", n, piece)
                       for piece in seg.fragments]
            continue
        args = json_object(seg.args, FORMAT.name)
        payload = {**head, "message": {"role": "assistant", "content": "", "tool_calls": [
            {"id": seg.call_id, "function": {"name": seg.tool, "arguments": raw(0)}}]},
            "done": False}
        frames.append(WireFrame(payload, None, "call_start", n, args, calls,
                                raw_json(payload, [args])))
        calls += 1
    frames.append(WireFrame({**head, "message": {"role": "assistant", "content": ""},
                             "done_reason": "stop", "done": True}, None, "end"))
    return frames


FORMAT = WireFormat.of(
    Ollama,
    framing="ndjson",
    docs="https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion",
    path="/api/chat",
    events={"call_start": ("chunk", "done"), "args_delta": ("chunk", "done"),
            "block_stop": ("chunk", "done"), "text_delta": ("chunk", "done"),
            "turn_stop": ("done",), "error": ("error",), "other": ("chunk", "done")},
    fields=Fields(call_id=("id",), tool=("name",), fragment=("arguments",),
                  whole=("arguments",), text=("content", "response")),
    envelope=Envelope(
        containers=frozenset(("message", "tool_calls", "function")),
        schema=frozenset(("role", "name", "model", "done_reason")),
        top=frozenset(("model", "done_reason")),
    ),
    write=write,
    quirks=dict.fromkeys(("call_in_text", "line_separator_in_data")),
    calls_whole=True,
    call_ids_sent=False,  # Ollama added tool_calls[].id late; older servers send none
    whole=whole,
    streaming=Streaming("stream"),
)
