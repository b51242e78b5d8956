"""The torture harness's cases: the bytes to serve, how to cut and frame them, the calls
expected.

The argument documents and turn builders are :mod:`streamcalls_lab.check`'s; what only a
real transport shows (read boundaries, chunked framing, gzip, line ends, comments) and the
stream-level cases (interleaved calls, index reuse, no terminal event) are made here by
rewriting those turns' frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise, zip_longest
from typing import Any

from ..check import (
    DOCUMENTS,
    ESCAPE,
    TRUNCATED,
    TURN_FORMATS,
    TWO_CALLS,
    Call,
    byte_turns,
    expected_calls,
    in_escape,
    turn_bytes,
)

SUITES = ("quick", "full")
CallTuple = tuple[str, str, Any]
"""(call_id, tool, args): args is the exact string, or the parsed value when compared so."""
PATHS = {"anthropic-messages": "/v1/messages", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses"}




# -- cases ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class WireCase:
    """One case: the bytes to serve, how to cut and frame them, and the calls expected."""

    family: str
    format: str
    example: str
    expected: tuple[CallTuple, ...]
    sent: tuple[str, ...]
    """Every call's arguments as sent, a cut-off call's included."""
    reads: tuple[bytes, ...]
    """The body, one server write (and so, as near as TCP allows, one client read) each."""
    gzip: bool = False
    chunk_sizes: tuple[int, ...] | None = None
    """Re-frame the body as HTTP chunks of these sizes (cycled), written a few bytes at a time."""
    ends_early: bool = False
    """The stream stops before its end (a call's stop or the terminal event never comes)."""
    escape_cut: bool = False
    mixed: str = ""
    """For interleaved calls: every fragment joined in arrival order, what one buffer gets."""

    @property
    def body(self) -> bytes:
        return b"".join(self.reads)

    @property
    def size(self) -> int:
        return sum(map(len, self.sent)) + len(self.reads)


def _expected(fmt: str, segments: Sequence[Call], cut: bool = False) -> tuple[CallTuple, ...]:
    return tuple((c["call_id"], c["tool"], c["args"])
                 for c in expected_calls(fmt, segments, cut))


def _frames(body: bytes) -> list[bytes]:
    """The body's events, each with its blank line (the builders write ``\\n`` only)."""
    return [f + b"\n\n" for f in body.split(b"\n\n") if f]


def _payload(frame: bytes) -> dict[str, Any] | None:
    for line in frame.split(b"\n"):
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            value = json.loads(line[6:])
            return value if isinstance(value, dict) else None
    return None


def _frame(payload: Mapping[str, Any], event: bytes | None) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return (b"event: " + event + b"\n" if event else b"") + b"data: " + data + b"\n\n"


def _as_sent(fmt: str, body: bytes) -> bytes:
    """The check suite's turn with the fields the providers always send and SDKs rely on
    (usage, a response's output list, a message item's content part), so a client that
    fails here fails on the stream, not on a skeleton of it."""
    out: list[bytes] = []
    items: list[dict[str, Any]] = []
    ids: dict[int, str] = {}
    for frame in _frames(body):
        p = _payload(frame)
        event = _event_name(frame)
        kind = p.get("type") if p else None
        extra: list[bytes] = []
        if p is None:
            pass
        elif fmt == "openai-chat":
            p = {"id": p["id"], "object": p["object"], "created": 0, "model": "torture",
                 "choices": p["choices"]}
        elif kind == "message_start":
            p["message"].update(stop_sequence=None, usage={"input_tokens": 1,
                                                           "output_tokens": 1})
        elif kind == "message_delta":
            p["delta"].setdefault("stop_sequence", None)
            p["usage"] = {"output_tokens": 1}
        elif kind in ("response.created", "response.completed"):
            p["response"].update(object="response", created_at=0, model="torture",
                                 output=items if kind == "response.completed" else [])
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = p["item"]
            ids[p["output_index"]] = item["id"]
            done = kind.endswith("done")
            item["status"] = "completed" if done else "in_progress"
            if item["type"] == "message":
                text = "".join(t for t in _texts(out, p["output_index"]))
                item["content"] = [{"type": "output_text", "text": text, "annotations": []}
                                   ] if done else []
                if not done:
                    extra.append(_frame({"type": "response.content_part.added",
                                         "item_id": item["id"], "output_index": p["output_index"],
                                         "content_index": 0, "part": {
                                             "type": "output_text", "text": "",
                                             "annotations": []}},
                                        b"response.content_part.added"))
            if done:
                items.append(item)
        elif kind in ("response.output_text.delta", "response.function_call_arguments.delta",
                      "response.function_call_arguments.done"):
            p["item_id"] = ids[p["output_index"]]
        out.append(frame if p is None else _frame(p, event))
        out += extra
    return b"".join(out)


def _texts(frames: Sequence[bytes], index: int) -> Iterator[str]:
    for frame in frames:
        p = _payload(frame)
        if p and p.get("type") == "response.output_text.delta" and p["output_index"] == index:
            yield p["delta"]


def _turn(fmt: str, segments: Sequence[Call], cut: bool = False) -> bytes:
    return _as_sent(fmt, turn_bytes(fmt, segments, cut))


def _event_name(frame: bytes) -> bytes | None:
    return frame[7:frame.index(b"\n")] if frame.startswith(b"event: ") else None


def _role(fmt: str, p: Mapping[str, Any] | None) -> tuple[str, int] | None:
    """Which call a frame belongs to and what it does there (start, delta, stop)."""
    if p is None:
        return None
    kind = p.get("type")
    if fmt == "anthropic-messages":
        if kind == "content_block_start" and p["content_block"]["type"] == "tool_use":
            return "start", p["index"]
        if kind == "content_block_delta" and p["delta"]["type"] == "input_json_delta":
            return "delta", p["index"]
        return ("stop", p["index"]) if kind == "content_block_stop" else None
    if fmt == "openai-chat":
        calls = (p.get("choices") or [{}])[0].get("delta", {}).get("tool_calls")
        if not calls:
            return None
        return ("start" if "id" in calls[0] else "delta"), calls[0]["index"]
    if kind == "response.output_item.added" and p["item"]["type"] == "function_call":
        return "start", p["output_index"]
    if kind == "response.function_call_arguments.delta":
        return "delta", p["output_index"]
    if kind in ("response.function_call_arguments.done", "response.output_item.done") and (
            kind != "response.output_item.done" or p["item"]["type"] == "function_call"):
        return "stop", p["output_index"]
    return None


def _interleave(fmt: str, body: bytes) -> bytes:
    """Both calls announced first, then their fragments alternating, then their stops."""
    head: list[bytes] = []
    tail: list[bytes] = []
    starts: list[bytes] = []
    stops: list[bytes] = []
    deltas: dict[int, list[bytes]] = {}
    for frame in _frames(body):
        role = _role(fmt, _payload(frame))
        if role is None:
            (tail if starts else head).append(frame)
        else:
            what, key = role
            {"start": starts, "stop": stops}.get(what, deltas.setdefault(key, [])).append(frame)
    mixed = [f for group in zip_longest(*deltas.values()) for f in group if f]
    return b"".join([*head, *starts, *mixed, *stops, *tail])


def _reindex(fmt: str, body: bytes, old: int, new: int) -> bytes:
    """Every frame of block ``old`` renumbered ``new``: a server that reuses an index."""
    out = []
    for frame in _frames(body):
        p = _payload(frame)
        role = _role(fmt, p)
        if p is None or role is None or role[1] != old:
            out.append(frame)
            continue
        if fmt == "openai-chat":
            p["choices"][0]["delta"]["tool_calls"][0]["index"] = new
        else:
            p["index" if fmt == "anthropic-messages" else "output_index"] = new
        out.append(_frame(p, _event_name(frame)))
    return b"".join(out)


def _event_case(family: str, fmt: str, segments: Sequence[Call], cut: bool = False,
                *, escape_cut: bool = False, shown: str = "") -> WireCase:
    body = _turn(fmt, segments, cut)
    example = shown or " + ".join(repr(list(s.fragments)) for s in segments)
    return WireCase(family, fmt, example + (" then the stream ends" if cut else ""),
                    _expected(fmt, segments, cut), tuple("".join(s.fragments) for s in segments),
                    (body,), ends_early=cut, escape_cut=escape_cut)


def _split_points(doc: str, quick: int, n: int) -> list[int]:
    """``quick`` first, then up to ``n`` cuts spread over the document, escapes included."""
    inside = [m.start() + 1 for m in ESCAPE.finditer(doc)]
    spread = [round(i * len(doc) / (n + 1)) for i in range(1, n + 1)]
    picked = dict.fromkeys([quick, *inside[:2], *spread])
    return [k for k in picked if 0 < k < len(doc)]


_QUICK_SPLIT = {"spaces": DOCUMENTS["spaces"].index(" request"),
                "escapes": DOCUMENTS["escapes"].index(', "quote"'),
                "top_level_number": 2}


def _document_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    for name, doc in DOCUMENTS.items():
        if not full and name not in _QUICK_SPLIT:
            continue
        ks = _split_points(doc, _QUICK_SPLIT.get(name, len(doc) // 2), 2) if full else [
            _QUICK_SPLIT[name]]
        for k in ks:
            yield _event_case(name, fmt, [Call("lookup", "call_1", (doc[:k], doc[k:]))],
                              escape_cut=in_escape(doc, k))


def _stream_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    a, b = TWO_CALLS
    for k in (8, 3, 12) if full else (8,):
        yield _event_case("two_calls_one_tool", fmt, [
            Call("get_weather", f"call_{n}", (d[:k], d[k:])) for n, d in enumerate((a, b), 1)])
    for k in (len(TRUNCATED), 9, 1) if full else (len(TRUNCATED),):
        yield _event_case("truncated", fmt, [Call("lookup", "call_1", (TRUNCATED[:k],))],
                          cut=True)
    for k in (12, 30) if full else (12,):
        yield _event_case("cut_after_a_call", fmt, [
            Call("get_weather", "call_1", (a[:6], a[6:])),
            Call("lookup", "call_2", (TRUNCATED[:k],))], cut=True)
    weather = Call("get_weather", "call_1", ('{"ci', 'ty": "Pa', 'ris"}'))
    clock = Call("get_time", "call_2", ('{"tz"', ': "Europe/', 'Rome"}'))
    pair = [weather, clock]
    plain = _turn(fmt, pair)
    mixed = "".join(f for g in zip_longest(weather.fragments, clock.fragments) for f in g if f)
    yield WireCase("interleaved", fmt, "two calls announced, then their fragments "
                   "alternating: " + repr(list(weather.fragments)) + " with "
                   + repr(list(clock.fragments)), _expected(fmt, pair),
                   ("".join(weather.fragments), "".join(clock.fragments)),
                   (_interleave(fmt, plain),), mixed=mixed)
    second = 1
    yield WireCase("index_reuse", fmt, "a second call (new id, other tool) sent under the "
                   "first call's index after it finished", _expected(fmt, pair),
                   ("".join(weather.fragments), "".join(clock.fragments)),
                   (_reindex(fmt, plain, second, 0),))
    frames = _frames(plain)
    yield WireCase("no_terminal", fmt, "every call finished, then the stream ends without "
                   + _terminal_name(frames[-1]), _expected(fmt, pair),
                   ("".join(weather.fragments), "".join(clock.fragments)),
                   (b"".join(frames[:-1]),), ends_early=True)


def _terminal_name(frame: bytes) -> str:
    p = _payload(frame)
    return "[DONE]" if p is None else str(p.get("type"))


def _inside_characters(body: bytes) -> list[int]:
    """Cut points inside every multi-byte UTF-8 character: one per character."""
    return [k for k in range(1, len(body)) if body[k] & 0xC0 == 0x80
            and body[k - 1] & 0xC0 != 0x80]


def _cut(body: bytes, points: Iterable[int]) -> tuple[bytes, ...]:
    edges = [0, *sorted(set(points)), len(body)]
    return tuple(body[i:j] for i, j in pairwise(edges) if j > i)


def _with_lines(body: bytes, end: bytes) -> bytes:
    return body.replace(b"\n", end)


def _commented(fmt: str, body: bytes) -> bytes:
    frames = _frames(body)
    ping = (b'event: ping\ndata: {"type": "ping"}\n\n' if fmt == "anthropic-messages"
            else b"")
    out = [b": keep-alive\n\n", frames[0], ping]
    for n, frame in enumerate(frames[1:]):
        out += [b":\n" if n % 2 else b": still here\n", frame]
        if n % 3 == 0:
            out.append(b": ping\n\n")
    return b"".join(out)


def _with_retry(body: bytes) -> bytes:
    """A block holding only ``retry:`` first (it dispatches nothing), one inside an event."""
    frames = _frames(body)
    return b"retry: 3000\n\n" + frames[0] + b"retry: 1000\n" + b"".join(frames[1:])


def _with_ids(body: bytes) -> bytes:
    """``id:`` on every event and a keep-alive comment block between events: a block with
    no data dispatches nothing, even once a last event id is set."""
    return b"".join(b"id: %d\n" % n + f + b": keep-alive\n\n"
                    for n, f in enumerate(_frames(body)))


def _transport_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    raw, expected, _ = byte_turns()[fmt]
    body = _as_sent(fmt, raw)
    want = tuple((c["call_id"], c["tool"], c["args"]) for c in expected)
    sent = tuple(c["args"] for c in expected)

    def case(family: str, example: str, reads: tuple[bytes, ...], **kw: Any) -> WireCase:
        return WireCase(family, fmt, example, want, sent, reads, **kw)

    inside = _inside_characters(body)
    yield case("utf8_read_split", f"reads cut inside each of the {len(inside)} multi-byte "
               "characters (é, —, 東, 🌧️, 👍🏽 …)", _cut(body, inside))
    if full:
        for k in inside[:: max(1, len(inside) // 3)][:3]:
            yield case("utf8_read_split", f"reads cut at byte {k}: {body[k - 6:k]!r} | "
                       f"{body[k:k + 6]!r}", _cut(body, [k]))
    crlf = _with_lines(body, b"\r\n")
    between = [k for k in range(1, len(crlf)) if crlf[k - 1:k + 1] == b"\r\n"]
    yield case("cr_lf_read_split", "CRLF line ends, every read cut between \\r and \\n",
               _cut(crlf, between))
    yield case("one_byte_reads", f"{len(body)} bytes in reads of 1 byte",
               _cut(body, range(1, len(body))))
    yield case("odd_chunks", "HTTP chunks of 1, 3, 5 … 17 bytes, written 5 bytes at a time "
               "(chunk headers cut across reads)", (body,), chunk_sizes=(1, 3, 5, 7, 9, 11,
                                                                           13, 15, 17))
    yield case("gzip", "content-encoding: gzip, flushed after every event",
               tuple(_frames(body)), gzip=True)
    yield case("comments", "comment lines and pings between and inside events",
               tuple(_frames(_commented(fmt, body))))
    yield case("retry_field", "a block holding only 'retry: 3000' before the first event",
               tuple(_frames(_with_retry(body))))
    yield case("ids_and_keepalive", "'id: N' on every event, a ': keep-alive' comment block "
               "after each", tuple(_frames(_with_ids(body))))
    yield case("no_event_lines", "no 'event:' lines: every event's type only in its data "
               "(a valid stream: the SSE event type is then 'message')",
               (b"".join(f[f.index(b"\n") + 1:] if f.startswith(b"event: ") else f
                         for f in _frames(body)),))
    yield case("crlf", "CRLF line ends", (_with_lines(body, b"\r\n"),))
    yield case("cr", "CR line ends", (_with_lines(body, b"\r"),))


def cases(formats: Sequence[str] = TURN_FORMATS, suite: str = "quick",
          families: Sequence[str] | None = None) -> list[WireCase]:
    """The cases of a suite: ``quick`` (a few per family, for tests) or ``full``;
    ``families`` keeps only those."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: one of {', '.join(SUITES)}")
    unknown = [f for f in formats if f not in TURN_FORMATS]
    if unknown:
        raise ValueError(f"unknown format {unknown[0]!r}: one of {', '.join(TURN_FORMATS)}")
    full = suite == "full"
    out = [c for fmt in formats for make in (_document_cases, _stream_cases, _transport_cases)
           for c in make(fmt, full)]
    if families is None:
        return out
    unknown = sorted(set(families) - {c.family for c in out})
    if unknown:
        raise ValueError(f"unknown family {unknown[0]!r}")
    return [c for c in out if c.family in families]


