"""OpenAI Chat Completions: tool calls ride inside ``delta.tool_calls``, keyed by index.

https://platform.openai.com/docs/api-reference/chat-streaming

Only the first chunk of a call carries its ``id`` and name; later chunks carry
the index and an ``arguments`` fragment. ``finish_reason`` ends every open
call at once, and ``data: [DONE]`` ends the stream. Many OpenAI-compatible
servers (Mistral, OpenRouter, Groq, vLLM) speak this format too.
"""

from __future__ import annotations

from typing import Any

from . import DONE, Ev, maybe_text, text
from . import index as block_index
from .wire import wire_length, wire_lengths

EVENT = "chat.completion.chunk"
_new = tuple.__new__  # an Ev without NamedTuple's keyword handling, for the per-delta rows


class OpenAIChat:
    name = "openai-chat"

    def __init__(self) -> None:
        self._ids: dict[int, str | None] = {}  # call announced at each index
        self._open: list[int] = []

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return payload is DONE or (
            isinstance(payload, dict)
            and (payload.get("object") == EVENT or "choices" in payload)
        )

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        name = payload.get("object") or event
        if "error" in payload and not payload.get("choices"):
            err = payload["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            return [Ev(name, "error", problem=f"provider error: {msg}")]
        out: list[Ev] = []
        arg_lengths: list[int] | None = None
        nargs = 0  # argument strings seen in this chunk
        for choice in payload.get("choices") or ():
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, list):
                out += _content_parts(name, content, data)
            elif content:
                content = text(content, "delta.content")
                out.append(Ev(name, "text_delta", fragment=content,
                              wire_chars=wire_length(data, "content", content)))
            for pos, tc in enumerate(delta.get("tool_calls") or ()):
                index = tc.get("index", pos)
                fn = tc.get("function") or {}
                cid, tool, args = tc.get("id"), fn.get("name"), fn.get("arguments")
                if type(index) is not int or type(args) is not str or cid is not None \
                        or tool is not None:
                    # checked in full only off the hot path (a bare argument fragment)
                    block_index(index, "tool_calls[].index")
                    maybe_text(cid, "tool_calls[].id")
                    maybe_text(tool, "function.name")
                    maybe_text(args, "function.arguments")
                wire = None
                if isinstance(args, str):
                    if nargs == 0:
                        wire = wire_length(data, "arguments", args)
                    else:  # several calls in one chunk: count the tokens
                        if arg_lengths is None:
                            arg_lengths = wire_lengths(data, "arguments")
                        wire = arg_lengths[nargs] if nargs < len(arg_lengths) else None
                    nargs += 1
                new = (cid is not None and cid != self._ids.get(index)) or (
                    index not in self._ids and tool is not None
                )
                if new:
                    self._ids[index] = cid
                    if index not in self._open:
                        self._open.append(index)
                    out.append(Ev(name, "call_start", index, cid, tool))
                    if args:  # some servers send the whole call in its first chunk
                        out.append(Ev(name, "args_delta", index, fragment=args,
                                      wire_chars=wire))
                else:
                    out.append(_new(Ev, (name, "args_delta", index, cid, tool, args,
                                         wire if args is not None else None, None, None)))
            if choice.get("finish_reason"):
                out.extend(self._stop_all(name))
        return out or [Ev(name, "other")]

    def _stop_all(self, name: str) -> list[Ev]:
        """finish_reason ends the whole message: one row for the message, then one per call.

        The row with no block closes everything, a call whose index was later
        re-used by another call included; the per-call rows say which blocks were open.
        """
        stops = [Ev(name, "block_stop")]
        stops += [Ev(name, "block_stop", index) for index in self._open]
        self._open = []
        return stops


def _content_parts(name: str, parts: list[Any], data: str) -> list[Ev]:
    """Content sent as a list of typed parts (Mistral): text parts are text, the rest other."""
    out = []
    for part in parts:
        if part.get("type") == "text":
            frag = text(part["text"], "content[].text")
            out.append(Ev(name, "text_delta", fragment=frag,
                          wire_chars=wire_length(data, "text", frag)))
        else:  # thinking and other part types
            out.append(Ev(name, "other"))
    return out
