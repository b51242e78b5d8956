"""OpenAI Chat Completions: tool calls ride inside ``delta.tool_calls``, keyed by index.

https://platform.openai.com/docs/api-reference/chat-streaming

Only the first chunk of a call carries its ``id`` and name; later chunks carry
the index and an ``arguments`` fragment. ``finish_reason`` ends every open
call at once, and ``data: [DONE]`` ends the stream. Many OpenAI-compatible
servers (Mistral, OpenRouter, Groq, vLLM) speak this format too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import zip_longest
from typing import Any

import msgspec

from ..events import (
    DONE,
    HOT,
    INT64,
    Ev,
    Hot,
    HotRows,
    Index,
    array,
    decoded,
    fragment_row,
    maybe_text,
    obj,
    stated,
    text,
)
from ..events import index as block_index
from ..turns import (
    Call,
    Role,
    Script,
    Text,
    Transform,
    WireFrame,
    renumbered,
    shared,
    with_gaps,
)
from ._identity import Identities
from ._written import args_in_announcement, restated
from .as_written import escaped_wire_length, wire_length, wire_lengths
from .spec import Answer, Envelope, Fields, Flush, Streaming, WireFormat

EVENT = "chat.completion.chunk"


# A text row is ("text_delta", the "content" string), an argument row ("args_delta", the
# "arguments" string): normalize and the fast path's _hot_rows build both the same way.


# A chunk as typed structs, for hot_rows. Every field a real server was seen to send is
# declared (the others are Any, parsed and ignored), so a chunk with anything else is left
# to normalize(); the fields hot_rows reads are Any too and are checked where it reads them.
class _Function(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    name: Any = msgspec.UNSET  # UNSET, not None: a null name is a quirk normalize notes
    arguments: Any = None


class _ToolCall(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    index: Index | None = None
    id: Any = msgspec.UNSET
    type: Any = msgspec.UNSET
    function: _Function | None = None


class _Delta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    role: Any = None
    content: Any = None
    tool_calls: list[_ToolCall] | None = None
    refusal: Any = None
    reasoning: Any = None
    reasoning_content: Any = None
    reasoning_details: Any = None
    annotations: Any = None
    channel: Any = None
    token_id: Any = None


class _Choice(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    index: Index | None = None
    delta: _Delta | None = None
    logprobs: Any = None
    finish_reason: Any = None
    native_finish_reason: Any = None
    content_filter_results: Any = None
    matched_stop: Any = None
    stop_reason: Any = None
    token_ids: Any = None
    text: Any = None
    seed: Any = None


# (fields in the order OpenAI sends them: msgspec looks for the next key where it expects it)
class _Chunk(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: Any = None
    object: Any = None
    created: Any = None
    model: Any = None
    service_tier: Any = None
    system_fingerprint: Any = None
    choices: list[_Choice] | msgspec.UnsetType | None = msgspec.UNSET
    usage: Any = None
    obfuscation: Any = None
    error: Any = msgspec.UNSET
    provider: Any = None
    prompt_filter_results: Any = None
    x_groq: Any = None


class OpenAIChat:
    name = "openai-chat"
    hot: Hot

    def __init__(self) -> None:
        # Per (choice, index): with n > 1 each choice is a message of its own, whose
        # tool_calls count their indexes from 0 again.
        self._ids: dict[tuple[int, int], str | None] = {}  # call announced at each key
        self._who = Identities()  # the id and name each call has by now
        self._open: list[tuple[int, int]] = []

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        # not ``[DONE]``: the AI SDK UI stream and Assistants end with it too
        return isinstance(payload, dict) and (payload.get("object") == EVENT
                                              or "choices" in payload)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        name = payload.get("object") or event
        if "error" in payload and not payload.get("choices"):
            err = payload["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            return [Ev.provider_error(name, msg)]
        out: list[Ev] = []
        changed: list[Ev] = []  # identity that changed: after the chunk's rows
        arg_lengths: list[int] | None = None
        nargs = 0  # argument strings seen in this chunk
        bare = None if payload.get("choices") else _no_choices(
            "usage" in payload and payload["usage"] is not None,
            "prompt_filter_results" in payload, "moderation" in payload)
        for number, choice in enumerate(payload.get("choices") or ()):
            k = choice.get("index")
            k = number if k is None else block_index(k, "choices[].index")
            delta = choice.get("delta")
            if delta is None and not (choice.get("finish_reason") or {"message", "text"}
                                      & choice.keys()):
                bare = NO_DELTA
            if delta is None and "message" in choice:  # a whole chat.completion (no stream)
                delta = obj(choice["message"], "choices[].message")  # read as one delta
            if delta is None and choice.get("text"):  # legacy Completions: text, no delta
                frag = text(choice["text"], "choices[].text")
                out.append(fragment_row(name, "text_delta", None, frag,
                                        wire_length(data, "text", frag), k))
            delta = delta or {}
            content = delta.get("content")
            if isinstance(content, list):
                out += _content_parts(name, content, data, k)
            elif content:
                content = text(content, "delta.content")
                out.append(fragment_row(name, "text_delta", None, content,
                                        wire_length(data, "content", content), k))
            calls = delta.get("tool_calls") or ()
            legacy = delta.get("function_call")
            if legacy is not None:  # the deprecated single call: no id, no index
                calls = [*calls, {"index": 0, "function": obj(legacy, "delta.function_call")}]
            for pos, tc in enumerate(calls):
                index = tc.get("index", pos)
                fn = tc.get("function") or {}
                cid, tool, args = tc.get("id"), fn.get("name"), fn.get("arguments")
                # each checked (in this order, as the errors name them) only where it may fail
                if type(index) is not int or index not in INT64:
                    block_index(index, "tool_calls[].index")
                if cid is not None and type(cid) is not str:
                    maybe_text(cid, "tool_calls[].id")
                if tool is not None and type(tool) is not str:
                    maybe_text(tool, "function.name")
                if args is not None and type(args) is not str:
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
                key = (k, index)
                # An empty or null id or name is no id or name (blank_identity): only a real
                # id that differs starts a new call at an index already announced.
                known = self._ids.get(key, _UNSEEN)
                if known is _UNSEEN:
                    new = cid is not None or tool is not None
                else:
                    new = bool(cid) and cid != known
                if new:
                    self._ids[key] = cid
                    self._who.announce(key, cid, tool)
                    if key not in self._open:
                        self._open.append(key)
                    out.append(_new(Ev, (name, "call_start", index, cid, tool, None, None,
                                         None, None, k, None,
                                         _blank(tc, fn, "the announcement"))))
                    if args:  # some servers send the whole call in its first chunk
                        out.append(fragment_row(name, "args_delta", index, args, wire, k)
                                   ._replace(quirk="args_in_announcement: argument text on "
                                             "the fragment that announces the call"))
                else:
                    quirk = _blank(tc, fn, "a follow-on fragment") or _repeated(
                        cid, tool, known, self._who.known(key)[1])
                    # a late id or name is the call's; a different one is not
                    if (cid or tool) and (
                            row := self._who.see(name, key, cid, tool, index, k)) is not None:
                        changed.append(row)
                    quirk = quirk or self._who.late("a follow-on fragment")
                    row = fragment_row(name, "args_delta", index, args,
                                       None if args is None else wire, k, cid, tool)
                    out.append(row if quirk is None else row._replace(quirk=quirk))
            finish = choice.get("finish_reason")
            if finish:
                out.extend(self._stop_all(name, k, stated(finish)))
        return out + changed if out else [Ev(name, "other", quirk=bare)]

    def _stop_all(self, name: str, choice: int, reason: str | None) -> list[Ev]:
        """finish_reason ends the choice's message: one row for it, then one per call.

        The row with no block closes everything of that choice, a call whose index was
        later re-used by another call included; the per-call rows say which were open.
        """
        # (rows made as tuples: Ev's keyword constructor costs twice as much, a row a finish)
        stops = [_new(Ev, (name, "block_stop", None, None, None, None, None, None, None, choice,
                           reason, None))]
        if self._open:
            stops += [_new(Ev, (name, "block_stop", index, None, None, None, None, None, None,
                                choice, None, None))
                      for k, index in self._open if k == choice]
            self._open = [key for key in self._open if key[0] != choice]
        return stops


_UNSEEN = object()
_new = tuple.__new__
NO_DELTA = "empty_choices: a choice with no delta (a content filter's annotation)"


def _no_choices(usage: bool, filtered: bool, moderation: bool) -> str:
    """The empty_choices note for a chunk with no choices, saying what it carries instead."""
    what = [w for w, has in (("usage: documented with stream_options.include_usage, but "
                              "a reader of choices[0] fails on it", usage),
                             ("prompt filter results", filtered),
                             ("moderation results", moderation)) if has]
    return f"empty_choices: a chunk with no choices ({'; '.join(what) or 'nothing else'})"


def _blank(tc: dict[str, Any], fn: dict[str, Any], where: str) -> str | None:
    """The blank_identity note for a ``tool_calls`` entry that sends ``""`` or ``null`` as its
    id, type or name (a key left out is no quirk: that is how the format sends it)."""
    if tc.get("id", True) and tc.get("type", True) and fn.get("name", True):
        return None  # (each left out or not blank: what nearly every announcement is)
    blank = [f'{field} {"null" if holder[field] is None else chr(34) * 2}'
             for holder, field in ((tc, "id"), (tc, "type"), (fn, "name"))
             if field in holder and not holder[field]]
    return f"blank_identity: {', '.join(blank)} on {where}" if blank else None


def _repeated(cid: Any, tool: Any, known_id: Any, known_name: Any) -> str | None:
    """The repeated_identity note for a follow-on fragment that sends its call's id or name
    again (a name appended to the first would read ``final_resultfinal_result``)."""
    again = [f for f, v, k in (("id", cid, known_id), ("name", tool, known_name)) if v and v == k]
    return f"repeated_identity: {' and '.join(again)} sent again" if again else None


def _hot_rows(at: list[int], structs: list[_Chunk | None], events: list[str],
              raws: list[bytes], out: list[Any], cols: HotRows) -> None:
    """Each chunk that neither opens nor closes a call: text, a bare argument fragment, or
    nothing (a role, usage); those need none of the call state. Any other is left None.
    One loop per capture, with no call per chunk and no tuple per row (the rows go into the
    columns): this is most of a Chat stream."""
    unset, function = msgspec.UNSET, _Function()
    frame, event, kind, block, fragment, wire, choice = cols.appenders()
    for i, chunk in decoded(at, structs):
        name = chunk.object or events[i]
        if chunk.error is not unset or type(name) is not str:
            continue
        choices = chunk.choices
        if choices is unset and chunk.object != EVENT:
            continue  # not the format's signature: normalize, and misread.foreign, read it
        if not choices:
            out[i] = (Ev(name, "other", quirk=_no_choices(
                chunk.usage is not None, chunk.prompt_filter_results is not None, False)),)
            continue
        first = choices[0]
        if len(choices) > 1 or first.finish_reason:
            continue
        delta = first.delta
        if delta is None:
            if not first.text:
                out[i] = (Ev(name, "other", quirk=NO_DELTA),)
            continue
        content, calls = delta.content, delta.tool_calls
        if content and type(content) is not str:
            continue  # typed parts, or a wrong type normalize() reports
        if calls:  # one bare fragment, or normalize reads the chunk (and nothing is written)
            call = calls[0]
            fn = call.function or function
            slot, args = call.index, fn.arguments
            if len(calls) > 1 or type(slot) is not int or call.id is not unset \
                    or fn.name is not unset or call.type in (None, "") \
                    or not (args is None or type(args) is str):
                continue
        elif not content:
            frame(i)
            event(name)
            kind("other")
            block(None)
            fragment(None)
            wire(None)
            choice(None)
            out[i] = HOT
            continue
        k = first.index or 0  # a missing index is the first choice's position
        plain = raws[i].find(b"\\") < 0  # nothing escaped: each length is the text's
        if content:
            frame(i)
            event(name)
            kind("text_delta")
            block(None)
            fragment(content)
            wire(len(content) if plain else escaped_wire_length(raws[i], "content", content))
            choice(k)
        if calls:
            frame(i)
            event(name)
            kind("args_delta")
            block(slot)
            fragment(args)
            wire(None if args is None else len(args) if plain
                 else escaped_wire_length(raws[i], "arguments", args))
            choice(k)
        out[i] = HOT


OpenAIChat.hot = Hot(msgspec.json.Decoder(_Chunk).decode, _hot_rows)


def _content_parts(name: str, parts: list[Any], data: str, choice: int) -> list[Ev]:
    """Content sent as a list of typed parts (Mistral): text parts are text, the rest other."""
    out = []
    for part in parts:
        if part.get("type") == "text":
            frag = text(part["text"], "content[].text")
            out.append(fragment_row(name, "text_delta", None, frag,
                                    wire_length(data, "text", frag), choice))
        else:  # thinking and other part types
            out.append(Ev(name, "other", choice=choice))
    return out


def whole(payload: Any, data: str) -> Answer | None:
    """A whole ``chat.completion`` (a request without ``"stream": true``): its first
    choice's calls (``function.arguments`` the string sent; a legacy ``function_call`` has
    no id), ``finish_reason`` and content; None for any other payload (a chunk has
    ``delta`` where a completion has ``message``)."""
    if not (isinstance(payload, dict) and payload.get("object", "chat.completion")
            == "chat.completion" and isinstance(payload.get("choices"), list)
            and all(isinstance(c, dict) and "message" in c for c in payload["choices"])):
        return None
    if not payload["choices"]:
        return Answer((), None)
    choice = payload["choices"][0]
    message = obj(choice["message"], "choices[].message")
    calls = [obj(tc, "message.tool_calls[]") for tc in
             array(message.get("tool_calls") or [], "message.tool_calls")]
    if message.get("function_call") is not None:
        calls.append({"function": obj(message["function_call"], "message.function_call")})
    content = message.get("content") or ""
    if isinstance(content, list):  # typed parts (Mistral): the text parts
        parts = [obj(part, "content[]") for part in content]
        content = "".join(text(p["text"], "content[].text") for p in parts
                          if p.get("type") == "text")
    return Answer(
        tuple({"call_id": maybe_text(tc.get("id"), "tool_calls[].id"),
               "tool": text(obj(tc["function"], "function")["name"], "function.name"),
               "args": text(tc["function"].get("arguments", ""), "function.arguments")}
              for tc in calls),
        maybe_text(choice.get("finish_reason"), "choices[].finish_reason"),
        text(content, "message.content"))


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as Chat Completions streams it: one chunk per fragment under one choice; a
    call announced by its first ``tool_calls`` entry (id, name, empty arguments), then
    fragments by ``index``; ``finish_reason`` in a chunk of its own; then ``[DONE]``.

    With a :class:`~.turns.Style` it looks recorded: OpenAI's chunk head (``service_tier``,
    ``system_fingerprint``), 0-15 characters of ``obfuscation`` padding on every chunk, a
    usage chunk with no choices before ``[DONE]``.
    """
    style = turn.style
    frames: list[WireFrame] = []
    if style is not None:
        head = {"id": "chatcmpl-" + style.ident(29), "object": EVENT, "created": style.created,
                "model": style.model, "service_tier": "default",
                "system_fingerprint": "fp_" + style.ident(10, "0123456789abcdef")}
    else:
        head = {"id": "chatcmpl-lab", "object": EVENT, "created": 0, "model": turn.model}

    def chunk(delta: dict[str, Any] | None, role: Role = "other", segment: int | None = None,
              fragment: str | None = None, block: int | None = None,
              finish: str | None = None, usage: Any = None) -> None:
        choices = [] if delta is None else [
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            if style is not None else {"index": 0, "delta": delta, "finish_reason": finish}]
        payload = {**head, "choices": choices}
        if style is not None:  # real chunks carry 0-15 characters of random padding
            payload |= {"usage": usage, "obfuscation": style.ident(style.rng.randrange(16))}
        frames.append(WireFrame(payload, None, role, segment, fragment, block))

    has_text = any(isinstance(s, Text) for s in turn.segments)
    chunk({"role": "assistant", "content": "", "refusal": None} if style and has_text else
          {"role": "assistant", "content": None} if style else
          {"role": "assistant", "content": ""}, "head")
    calls = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            for piece in seg.fragments:
                chunk({"content": piece}, "text", n, piece)
            continue
        block = calls
        chunk({"tool_calls": [{"index": block, "id": seg.call_id, "type": "function",
                               "function": {"name": seg.tool, "arguments": ""}}]},
              "call_start", n, block=block)
        for piece in seg.fragments:
            chunk({"tool_calls": [{"index": block, "function": {"arguments": piece}}]},
                  "args", n, piece, block)
        calls += 1
    chunk({}, "finish", finish="tool_calls" if calls else "stop")
    if style is not None:
        out = style.output_tokens
        chunk(None, usage={
            "prompt_tokens": style.input_tokens, "completion_tokens": out,
            "total_tokens": style.input_tokens + out,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0}})
    frames.append(WireFrame(DONE, None, "end"))
    return frames


# -- the quirks a Chat producer can send, each written into a turn's frames ----------------
def alongside(per_choice: Sequence[list[WireFrame]]) -> list[WireFrame]:
    """Several choices' turns as one response with ``n`` = ``len(per_choice)``: each choice's
    frames (as :func:`write` writes one) carry its ``index`` and take turns with the
    others', each choice's ``finish_reason`` in its own chunk; one ``[DONE]`` ends them."""
    def as_choice(n: int, f: WireFrame) -> WireFrame:
        if f.data is not None:  # data written out already cannot be renumbered
            raise ValueError("alongside renumbers payloads; this frame's data is fixed text")
        return replace(f, payload={**f.payload, "choices": [
            {**c, "index": n} for c in f.payload["choices"]]})
    tagged = [[as_choice(n, f) for f in frames if f.payload is not DONE]
              for n, frames in enumerate(per_choice)]
    mixed = [f for group in zip_longest(*tagged) for f in group if f is not None]
    return [*mixed, WireFrame(DONE, None, "end")]


def _entry(f: WireFrame) -> dict[str, Any]:
    """The ``tool_calls`` entry a call frame carries."""
    return f.payload["choices"][0]["delta"]["tool_calls"][0]


def _set_fragment(f: WireFrame, text: str) -> None:
    _entry(f)["function"]["arguments"] = text


def _set_block(f: WireFrame, block: int) -> None:
    if f.role in ("call_start", "args"):
        _entry(f)["index"] = block


def _follow_ons(frames: list[WireFrame], turn: Script) -> list[tuple[int, WireFrame]]:
    """Each fragment frame that follows its call's announcement, with the call's ordinal."""
    order = {n: k for k, n in enumerate(i for i, s in enumerate(turn.segments)
                                        if not isinstance(s, Text))}
    return [(order[f.segment], f) for f in frames if f.role == "args" and f.segment in order]


def _blank_identity(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Follow-on fragments with a blank identity, as servers send it: ``"id": ""`` and
    ``"name": ""`` under ``"type": "function"`` on the first call's (DashScope, LM Studio:
    lmstudio-ai/lmstudio-bug-tracker#649), ``null`` id, type and name on the second's (an
    OpenAI-compatible upstream in xintaofei/deepseek-acp#4)."""
    for k, f in _follow_ons(frames, turn):
        blank, kind = ("", "function") if k % 2 == 0 else (None, None)
        entry = _entry(f)
        f.payload["choices"][0]["delta"]["tool_calls"][0] = {
            "index": entry["index"], "id": blank, "type": kind,
            "function": {"name": blank, "arguments": entry["function"]["arguments"]}}
    return frames


def _repeated_identity(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Every fragment repeats its call's id, type and name (llama.cpp before PR #13800)."""
    calls = [s for s in turn.segments if isinstance(s, Call)]
    for k, f in _follow_ons(frames, turn):
        entry = _entry(f)
        f.payload["choices"][0]["delta"]["tool_calls"][0] = {
            "index": entry["index"], "id": calls[k].call_id, "type": "function",
            "function": {"name": calls[k].tool, "arguments": entry["function"]["arguments"]}}
    return frames


def _late_identity(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Each call announced with its id and an empty ``function``; its name comes with its
    first argument fragment (a producer that streams the name as a token like the rest)."""
    calls = [s for s in turn.segments if isinstance(s, Call)]
    named: set[int] = set()
    for f in frames:
        if f.role == "call_start":
            entry = _entry(f)
            entry["function"] = {k: v for k, v in entry["function"].items() if k != "name"}
    for k, f in _follow_ons(frames, turn):
        if k not in named:
            named.add(k)
            entry = _entry(f)
            entry["function"] = {"name": calls[k].tool, **entry["function"]}
    return frames


# Each call's first fragment sent on the chunk that announces it (llama.cpp#22722).
_args_in_announcement = args_in_announcement(_set_fragment)


def _empty_arguments(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """A call with no argument text announced with ``"arguments": null`` (pydantic-ai#1654)."""
    has_args = {f.segment for f in frames if f.role == "args"}
    for f in frames:
        if f.role == "call_start" and f.segment not in has_args:
            _entry(f)["function"]["arguments"] = None
    return frames


def _empty_choices(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Azure's prompt-filter chunk first, a content-filter choice with no delta after the
    first fragment, a usage chunk with no choices last (autogen#6465, CopilotKit#2468)."""
    safe = {"filtered": False, "severity": "safe"}
    filters = {k: safe for k in ("hate", "self_harm", "sexual", "violence")}
    head = WireFrame({"choices": [], "created": 0, "id": "", "model": "", "object": "",
                      "prompt_filter_results": [{"prompt_index": 0,
                                                 "content_filter_results": filters}]})
    annotation = WireFrame({"id": "", "object": "", "created": 0, "model": "", "choices": [
        {"index": 0, "finish_reason": None, "content_filter_results": filters,
         "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 9}}],
        "usage": None})
    usage = WireFrame({**frames[0].payload, "choices": [], "usage": {
        "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
    first = next((i for i, f in enumerate(frames) if f.role in ("args", "text")), 0)
    return [head, *frames[:first + 1], annotation, *frames[first + 1:-1], usage, frames[-1]]


def _whole_calls_in_one_chunk(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Every call sent whole, all of them in one chunk (Groq: ogx PR #630, litellm#7621)."""
    calls = [f for f in frames if f.role == "call_start"]
    if not calls:
        return frames
    entries = []
    for f in calls:
        seg = turn.segments[f.segment] if f.segment is not None else None
        entry = _entry(f)
        entries.append({**entry, "function": {**entry["function"], "arguments": seg.args
                                              if isinstance(seg, Call) else ""}})
    first = calls[0]
    whole = WireFrame({**first.payload, "choices": [{**first.payload["choices"][0], "delta": {
        "tool_calls": entries}}]}, None, "call_start", first.segment,
        "".join(e["function"]["arguments"] for e in entries[:1]), first.block,
        also=tuple((f.segment, f.block) for f in calls[1:] if f.segment is not None
                   and f.block is not None))
    out: list[WireFrame] = []
    for f in frames:  # the calls' frames give way to the one chunk, where the first stood
        if f.role not in ("call_start", "args"):
            out.append(f)
        elif f is first:
            out.append(whole)
    return out


QUIRKS: dict[str, Transform | None] = {
    "blank_identity": _blank_identity,
    "repeated_identity": _repeated_identity,
    "late_identity": _late_identity,
    "args_in_announcement": _args_in_announcement,
    "empty_arguments": _empty_arguments,
    # ``finish_reason: "stop"`` after the calls (vllm PR #9209, named tool_choice).
    "stop_reason_mismatch": restated("finish", ("choices", 0, "finish_reason"), "stop"),
    "empty_choices": _empty_choices,
    "index_gap": renumbered(_set_block, with_gaps),
    "whole_calls_in_one_chunk": _whole_calls_in_one_chunk,
    **shared(_set_block, _set_fragment),
}
"""What a Chat producer can send, and how each is written (None: only the content changes)."""


FORMAT = WireFormat.of(
    OpenAIChat,
    docs="https://platform.openai.com/docs/api-reference/chat-streaming",
    interleaves=True,
    path="/v1/chat/completions",
    events={
        "call_start": (EVENT, "chat.completion"),
        "args_delta": (EVENT, "chat.completion"),
        "block_stop": (EVENT, "chat.completion"),
        "text_delta": (EVENT, "chat.completion", "text_completion"),
        "turn_stop": ("[DONE]",),
        "error": (EVENT, "error"),
        "other": (EVENT,),
    },
    fields=Fields(call_id=("id", "tool_call_id"), tool=("name",), fragment=("arguments",),
                  whole=("arguments", "failed_generation"), text=("content", "text")),
    envelope=Envelope(
        containers=frozenset(("choices", "delta", "message", "tool_calls", "function", "usage",
                              "error", "prompt_tokens_details", "completion_tokens_details",
                              "content", "function_call")),  # Mistral's parts; legacy calls
        schema=frozenset(("type", "object", "role", "name", "model", "finish_reason",
                          "service_tier", "system_fingerprint")),
        numbers=frozenset(("index", "created", "prompt_tokens", "completion_tokens",
                           "total_tokens", "cached_tokens", "reasoning_tokens", "audio_tokens",
                           "accepted_prediction_tokens", "rejected_prediction_tokens")),
        ids=frozenset(("id",)),
        top=frozenset(("object", "model", "created", "service_tier", "system_fingerprint")),
    ),
    write=write,
    choices=alongside,
    quirks=QUIRKS,
    tool_stop=frozenset(("tool_calls", "function_call")),
    counts_calls=True,
    whole=whole,
    streaming=Streaming("stream", only=("stream_options",)),
    aliases=("openai-compatible", "chat-completions"),
    flush=Flush("gpt-4o-2024-08-06", parallel_args="measured"),
)
