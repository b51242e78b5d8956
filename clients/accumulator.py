"""A straightforward, correct accumulator of streamed tool calls, for the adapters here.

Feed it each SSE event's ``data`` (already parsed out of the stream by the library under
test); it prints one JSON line per finished call, as the torture harness expects:
``{"call_id", "tool", "args"}`` with ``args`` the fragments joined, byte-exact.

``bugs`` switches on classic mistakes, so the harness's own tests have a broken client per
class (the correct client has none): each is one decision changed, and several can be on at
once (one client with two bugs must be named for both). Which
classes have one is said by their specs (``client=True`` in ``streamcalls_lab.faults``);
only a broken client imports the kit, to check the name it was given.
"""

from __future__ import annotations

import json
import os
import re
import sys

# Imports a client's every start pays for (a process per case, or per job): no dataclasses
# (20 ms of CPU each start) and no typing at run time (annotations are never evaluated).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_ESCAPE = re.compile(r'(?:\\u[0-9a-fA-F]{4})+|\\["\\/bfnrt]')


class Buffer:
    """One call's fragments as they come."""

    __slots__ = ("call_id", "handed_on", "parts", "tool")

    def __init__(self, call_id: str, tool: str) -> None:
        self.call_id, self.tool = call_id, tool
        self.parts: list[str] = []
        self.handed_on = -1
        """How many parts the buffer had when it was last handed on (-1: never)."""


def client_bugs() -> tuple[str, ...]:
    """Every class with a deliberately broken client, from the specs (``decode_chunks`` is
    reference.py's: it is in the transport, not here). The torture harness passes the
    names in ``STREAMCALLS_BUGS``; run by hand, a broken client reads the specs itself."""
    if names := os.environ.get("STREAMCALLS_BUGS"):
        return tuple(names.split(","))
    from streamcalls_lab.faults import SPECS  # the kit's venv (pandas: seconds per case)

    return tuple(name for name, spec in SPECS.items() if spec.client)


def _decode_escapes(fragment: str) -> str:
    """The decode_each bug: a fragment's escapes decoded on their own (a cut one raises)."""
    if re.search(r'\\(u[0-9a-fA-F]{0,3})?$', _ESCAPE.sub("", fragment)):
        raise ValueError(f"cannot decode {fragment!r} on its own")
    return _ESCAPE.sub(lambda m: json.loads(f'"{m.group()}"'), fragment)


class Accumulator:
    def __init__(self, fmt: str, bugs: frozenset[str] = frozenset()) -> None:
        if unknown := sorted(bugs - set(known := client_bugs())):
            raise SystemExit(f"unknown bug {unknown[0]!r}: one of {', '.join(known)}")
        self.fmt, self.bugs = fmt, bugs
        self.by_index: dict[int, Buffer] = {}
        self.by_id: dict[str, Buffer] = {}
        self.order: list[Buffer] = []
        self.raw: str | None = None
        """The event's data as it came, when the library under test gives it."""
        self.fragmented: set[int] = set()
        """The indices some argument fragment came for."""
        self.ids: dict[str, int] = {}
        """The UI message stream's toolCallIds, each given an index in order of first sight."""

    # -- what the formats share ------------------------------------------------------------
    def start(self, index: int, call_id: str, tool: str) -> bool:
        """An announcement; True when it started a call (not one repeated or merged)."""
        old = self.by_index.get(index)
        if "merged_calls" in self.bugs and old is not None:
            return False  # keyed by index alone: a reused index keeps appending to the old call
        if "key_by_name" in self.bugs:
            same = next((b for b in self.order if b.tool == tool), None)
            if same is not None:
                self.by_index[index] = same
                return False
        if "index_as_position" in self.bugs and self.fmt == "openai-chat" and (
                old is None or old.call_id != call_id) and index != len(self.order):
            raise IndexError("list index out of range")  # calls[index] of a list of calls
        if old is not None and old.call_id == call_id:
            if "name_concatenated" in self.bugs:
                old.tool += tool  # the name appended from every chunk that repeats it
            return False  # some servers repeat the id (and name) on every chunk
        buf = Buffer(call_id, tool)
        self.by_index[index] = buf
        self.by_id[call_id] = buf
        self.order.append(buf)
        return True

    def buffer(self, index: int, call_id: str | None, new: bool = False) -> Buffer | None:
        """The call an event is for: by its index, or (key_by_id) by the id it carries.
        After the announcement that is none, so fragments all go to one nameless buffer
        (made by the first, when ``new``)."""
        if "key_by_id" not in self.bugs:
            return self.by_index[index]
        key = call_id or ""
        if new and key not in self.by_id:
            self.by_id[key] = buf = Buffer(key, "")
            self.order.append(buf)
        return self.by_id.get(key)

    def fragment(self, index: int, text: str, call_id: str | None = None) -> None:
        self.fragmented.add(index)
        buf = self.order[-1] if "key_by_last" in self.bugs else self.buffer(index, call_id,
                                                                          new=True)
        assert buf is not None
        if "trim" in self.bugs:
            text = text.strip()
        if "decode_each" in self.bugs:
            text = _decode_escapes(text)
        buf.parts.append(text)
        if "parse_to_finish" in self.bugs and buf.handed_on < 0:
            try:
                json.loads("".join(buf.parts))
            except ValueError:
                return
            self.hand_on(buf)

    def stop(self, buf: Buffer | None) -> None:
        if buf is not None and "lost_on_truncation" not in self.bugs:
            self.hand_on(buf)

    def terminal(self) -> None:
        """The stream's own end marker ([DONE], message_stop, response.completed)."""
        if "lost_on_truncation" in self.bugs:
            for buf in self.order:
                self.hand_on(buf)

    def hand_on(self, buf: Buffer) -> None:
        if "empty_args_dropped" in self.bugs and not "".join(buf.parts):
            return  # waits for arguments that parse; a no-argument call has none
        # Once per call; the buggy keyings hand a buffer on again when it grew since.
        if buf.handed_on >= 0 and (not self.bugs & {"merged_calls", "key_by_name"}
                                   or buf.handed_on == len(buf.parts)):
            return
        buf.handed_on = len(buf.parts)
        emit(buf.call_id, buf.tool, args="".join(buf.parts))

    # -- per format ----------------------------------------------------------------------
    def event(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self.terminal()
            return
        self.raw = data
        try:
            self.payload(json.loads(data))
        finally:
            self.raw = None

    def as_sent(self, key: str, value: Any) -> str:
        """A call's arguments sent as a JSON object (``key`` in the event), as the text the
        server wrote when the event's data is at hand (the arguments byte-exact), else as
        the parsed value written back."""
        decoder = json.JSONDecoder()
        for m in re.finditer(rf'"{re.escape(key)}"\s*:\s*', self.raw or ""):
            try:
                got, end = decoder.raw_decode(self.raw or "", m.end())
            except ValueError:
                continue
            if got == value:
                return (self.raw or "")[m.end():end]
        return json.dumps(value, ensure_ascii=False)

    def done_arguments(self, index: int, args: Any) -> None:
        """A done event's arguments: the call's text when no fragment came (some servers
        send them only there)."""
        buf = self.by_index.get(index)
        if ("delta_only" not in self.bugs and isinstance(args, str) and args and buf is not None
                and index not in self.fragmented):
            self.fragment(index, args)

    def payload(self, p: dict[str, Any]) -> None:
        """One event's parsed data (what an SDK's plain iteration yields, as a dict)."""
        getattr(self, "_" + self.fmt.replace("-", "_"))(p)

    def _anthropic_messages(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "content_block_start" and p["content_block"]["type"] == "tool_use":
            block = p["content_block"]
            self.start(p["index"], block["id"], block["name"])
            if block.get("input") and "announcement_args_dropped" not in self.bugs:
                # the input sent whole with the announcement: the call's first fragment
                self.fragment(p["index"], self.as_sent("input", block["input"]))
        elif kind == "content_block_delta" and p["delta"]["type"] == "input_json_delta":
            self.fragment(p["index"], p["delta"]["partial_json"])
        elif kind == "content_block_stop" and p["index"] in self.by_index:
            if "finish_gate" not in self.bugs:
                self.stop(self.buffer(p["index"], None))
        elif kind == "message_delta" and "finish_gate" in self.bugs:
            if (p.get("delta") or {}).get("stop_reason") == "tool_use":
                for buf in self.order:
                    self.stop(buf)
        elif kind == "message_stop":
            self.terminal()

    def _openai_chat(self, p: dict[str, Any]) -> None:
        # every choice a chunk has (a usage chunk has none); a choice may have no delta
        choices = [p["choices"][0]] if "choices_index0" in self.bugs else p.get("choices") or []
        for choice in choices:
            calls = (choice.get("delta") or {}).get("tool_calls") or []
            for call in calls[:1] if "one_call_per_chunk" in self.bugs else calls:
                fn = call.get("function") or {}
                # an empty or null id on a later fragment continues the call at its index
                announced = "id" in call if "blank_id_new_call" in self.bugs else bool(
                    call.get("id"))
                started = announced and self.start(call["index"], call["id"] or "",
                                                   fn.get("name") or "")
                old = self.by_index.get(call["index"])
                if "blank_identity_copied" in self.bugs and not announced and old is not None:
                    # every key a fragment has copied onto the call, "" and null too
                    old.call_id = call.get("id", old.call_id)
                    old.tool = fn.get("name", old.tool)
                elif old is not None and not old.tool and fn.get("name"):
                    old.tool = fn["name"]  # a name first sent after the id is the call's
                if fn.get("arguments") and not (started
                                                and "announcement_args_dropped" in self.bugs):
                    self.fragment(call["index"], fn["arguments"], call.get("id"))
            finish = choice.get("finish_reason")
            if finish and ("finish_gate" not in self.bugs or finish == "tool_calls"):
                for buf in self.order:
                    self.stop(buf)

    def _openai_responses(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        item = p.get("item") or {}
        if kind == "response.output_item.added" and item.get("type") == "function_call":
            self.start(p["output_index"], item["call_id"], item["name"])
            if item.get("arguments") and "announcement_args_dropped" not in self.bugs:
                self.fragment(p["output_index"], item["arguments"], item["call_id"])
        elif kind == "response.function_call_arguments.delta":
            self.fragment(p["output_index"], p["delta"], p.get("call_id"))
        elif kind == "response.function_call_arguments.done" or (
                kind == "response.output_item.done" and item.get("type") == "function_call"):
            done = p.get("arguments") if kind.endswith("arguments.done") else item.get(
                "arguments")
            self.done_arguments(p["output_index"], done)
            self.stop(self.buffer(p["output_index"], item.get("call_id")))
        elif kind == "response.completed":
            self.terminal()

    def _ai_sdk_ui(self, p: dict[str, Any]) -> None:
        # calls are keyed by toolCallId (no index): each gets one in order of first sight
        kind = p.get("type")
        if kind not in ("tool-input-start", "tool-input-delta", *_UI_ENDS):
            if kind == "finish":
                self.terminal()
            return
        call_id = p["toolCallId"]
        index = self.ids.setdefault(call_id, len(self.ids))
        if kind == "tool-input-start" or index not in self.by_index:
            self.start(index, call_id, p.get("toolName") or "")  # an end may come unannounced
        if kind == "tool-input-delta":
            self.fragment(index, p["inputTextDelta"], call_id)
        elif kind in _UI_ENDS:
            given = p.get("input")  # tool-input-error: the text that did not parse
            self.done_arguments(index, given if isinstance(given, str) or given is None
                                else self.as_sent("input", given))
            self.stop(self.buffer(index, call_id))

    def end(self) -> None:
        """The connection closed. Chat has no per-call stop: a call is finished once a later
        one starts, so every buffer a later announcement followed is handed on when the stream
        is cut: all but the last announced, and key_by_id's nameless buffer (which no
        announcement started) where a call was announced after it was made."""
        if "eof_as_stop" in self.bugs:
            for buf in self.order:  # every call still open counts as stopped
                self.hand_on(buf)
            return
        if self.fmt == "openai-chat" and not self.bugs & {"lost_on_truncation", "finish_gate"}:
            last = max((n for n, buf in enumerate(self.order) if buf.call_id), default=0)
            for buf in self.order[:last]:
                self.hand_on(buf)


_UI_ENDS = ("tool-input-available", "tool-input-error")
_UNSET: Any = object()


def emit(call_id: str, tool: str, *, args: str | None = _UNSET, input: Any = None) -> None:
    """One finished call, as the harness reads it: the exact ``args`` (null too, when the
    library gives None), else parsed ``input``."""
    out = {"call_id": call_id, "tool": tool}
    out.update({"args": args} if args is not _UNSET else {"input": input})
    print(json.dumps(out, ensure_ascii=False), flush=True)


def emit_added_up(chunks: Iterable[Any]) -> None:
    """LangChain's way: message chunks added up with ``+``, the finished message's
    ``tool_calls`` (parsed args) emitted."""
    message = None
    for chunk in chunks:
        message = chunk if message is None else message + chunk
    for call in (message.tool_calls if message is not None else []):
        emit(call["id"], call["name"], input=call["args"])


def bug_from_argv() -> frozenset[str]:
    """``--bug NAME`` on the command line (``--bug A,B``: both mistakes in one client), or
    none."""
    args = sys.argv[1:]
    return frozenset(args[args.index("--bug") + 1].split(",")) if "--bug" in args else frozenset()
