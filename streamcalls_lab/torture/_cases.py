"""The torture harness's cases: the bytes to serve, how to cut and frame them, the calls
expected.

The argument documents are :mod:`streamcalls_lab.check`'s, and every turn is written by its
format's own writer (:mod:`streamcalls_lab.turns`), so a case is the same stream a correct
provider sends, framed by the format's own framing (``framing.FRAMINGS``). What only a real
transport shows is made here for every framing (read boundaries, chunked framing, gzip) and
by each framing's own ``transports`` (SSE's line ends, comments, ``retry:`` and ``id:``
fields; NDJSON's blank and long lines; event-stream messages split across reads; a JSON
array's element boundaries); the stream-level cases (interleaved calls, index reuse, a cut,
no terminal event) are the writer's own options, served where the format can carry them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import turns
from ..check import (
    BYTES_ARGS,
    BYTES_TEXT,
    DOCUMENTS,
    ESCAPE,
    PRODUCER_SPLITS,
    TRUNCATED,
    TURN_FORMATS,
    TWO_CALLS,
    in_escape,
    producer_calls,
    producer_families,
)
from ..events import DONE
from ..framing import FRAMINGS, Framing, Served
from ..framing.spec import cut as _cut
from ..providers import FORMATS
from ..turns import Call, Script, Segment, Text, WireFrame

SUITES = ("quick", "full")
def served_formats() -> tuple[str, ...]:
    """Every registered format with a writer and a path, as the registry stands now."""
    return tuple(name for name, f in FORMATS.items() if f.write is not None and f.path)


SERVED_FORMATS = served_formats()
"""The formats the harness serves: every registered format with a writer and a path (the
provider formats the check suite writes, the AI SDK UI message stream an agent server sends
on to the browser, and every other). A client is run only on the formats it is given (by
default the provider formats)."""
CallTuple = tuple[str, str, Any]
"""(call_id, tool, args): args is the exact string, or the parsed value when compared so."""
PATHS = {fmt: FORMATS[fmt].path or "/" for fmt in SERVED_FORMATS}


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
    """Served gzip-encoded, flushed after every read, to a client whose ``Accept-Encoding``
    allows it (plain to the others, noted as a tolerance)."""
    chunk_sizes: tuple[int, ...] | None = None
    """Re-frame the body as HTTP chunks of these sizes (cycled), written a few bytes at a time."""
    ends_early: bool = False
    """The stream stops before its end (a call's stop or the terminal event never comes)."""
    escape_cut: bool = False
    mixed: str = ""
    """For interleaved calls: every fragment joined in arrival order, what one buffer gets."""
    quirks: frozenset[str] = frozenset()
    """The producer quirks the turn was written with (``producers.QUIRKS``): a class only a
    quirk exposes is named only where it was sent."""

    @property
    def body(self) -> bytes:
        return b"".join(self.reads)

    @property
    def size(self) -> int:
        return sum(map(len, self.sent)) + len(self.reads)


def framing(fmt: str) -> Framing:
    """The framing ``fmt`` is served in."""
    return FRAMINGS[FORMATS[fmt].framing]


def _framed(fmt: str, frames: Sequence[WireFrame]) -> list[bytes]:
    """Each frame framed as ``fmt`` frames it, one server write each."""
    return framing(fmt).pieces(frames)


def _written(fmt: str, turn: Script) -> tuple[list[WireFrame], tuple[CallTuple, ...]]:
    frames = turns.write(fmt, turn)
    return frames, tuple((c["call_id"], c["tool"], c["args"])
                         for c in turns.expected_calls(frames, turn))


def _event_case(family: str, fmt: str, segments: Sequence[Segment], cut: bool = False,
                *, escape_cut: bool = False, shown: str = "", **options: Any) -> WireCase:
    turn = turns.script(segments, cut=cut, **options)
    frames, expected = _written(fmt, turn)
    example = shown or " + ".join(repr(list(c.fragments)) for c in turn.calls)
    mixed = "".join(f.fragment or "" for f in frames if f.role == "args") if (
        turn.interleave) else ""
    return WireCase(family, fmt, example + (" then the stream ends" if cut else ""), expected,
                    tuple(c.args for c in turn.calls), (b"".join(_framed(fmt, frames)),),
                    ends_early=cut, escape_cut=escape_cut, mixed=mixed, quirks=turn.quirks)


def _split_points(doc: str, quick: int, n: int) -> list[int]:
    """``quick`` first, then up to ``n`` cuts spread over the document, escapes included."""
    inside = [m.start() + 1 for m in ESCAPE.finditer(doc)]
    spread = [round(i * len(doc) / (n + 1)) for i in range(1, n + 1)]
    picked = dict.fromkeys([quick, *inside[:2], *spread])
    return [k for k in picked if 0 < k < len(doc)]


_QUICK_SPLIT = {"spaces": DOCUMENTS["spaces"].index(" request"),
                "escapes": DOCUMENTS["escapes"].index(', "quote"'),
                "top_level_number": 2}


def _carries(fmt: str, args: str) -> bool:
    """Whether ``fmt`` sends ``args`` as a call's arguments and finishes the call: a format
    that sends an object cannot send a bare number (its writer refuses), and the AI SDK's
    streams end such a call with an error instead; such a case would blame a correct client
    for what the format lacks."""
    from .._calls import calls
    from ..loader import load

    try:
        body = turns.turn_bytes(fmt, turns.script([Call("lookup", "call_1", (args,))]))
    except ValueError:
        return False
    return bool(calls(load(body, strict=False))["complete"].all())


def _document_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    for name, doc in DOCUMENTS.items():
        if (not full and name not in _QUICK_SPLIT) or not _carries(fmt, doc):
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
    if FORMATS[fmt].streams_args:  # Vertex AI's streamFunctionCallArguments: value pieces
        rome = TWO_CALLS[1].replace(" ", "")  # the writer splits values, not the text
        yield _event_case("streamed_args", fmt, [
            Call("get_weather", f"call_{n}", (d,)) for n, d in enumerate((STREAMED, rome), 1)],
            streamed_args=True, shown="two calls, their arguments streamed as value pieces "
            f"by JSON Path: {STREAMED} and {rome}")
    if FORMATS[fmt].calls_whole:  # no stream can end inside a call, or interleave two
        yield from _no_terminal(fmt, a)
        return
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
    yield _event_case("interleaved", fmt, pair, interleave=True,
                      shown="two calls announced, then their fragments alternating: "
                      f"{list(weather.fragments)!r} with {list(clock.fragments)!r}")
    yield from _no_terminal(fmt, a)
    yield from _whitespace_after(fmt)


WHITESPACE_AFTER = ('{"limit": 2', '0, "status":', ' "refunded"}', "\n\n")
"""A call's arguments whose object is whole before their last fragment, whitespace after it
(JSON allows it; OpenAI's JSON-mode docs warn that a model may send whitespace on and on):
a strict parse succeeds a fragment early, a partial parser reads the first fragment, and
only the stop says the call is done. It tells a client that hands on at the first strict
parse (``parse_to_finish``) from one handing on at the close (``eof_as_stop``) or at a
partial parser's first value (``lenient_parse``) on a stream that is not cut, and (a space
starting a fragment) from one stripping each fragment (``trim``)."""


def _whitespace_after(fmt: str) -> Iterator[WireCase]:
    case = _event_case("whitespace_after_args", fmt,
                       [Call("lookup", "call_1", WHITESPACE_AFTER)])
    if [args for _, _, args in case.expected] == ["".join(WHITESPACE_AFTER)]:
        yield case  # only where the format sends the text as written (not a parsed object)


STREAMED = '{"city":"São Paulo","days":[1,2],"metric":true,"note":null,"at":{"lat":-23.5}}'
"""Compact arguments (what a streamed call is assembled as) with a leaf of every kind."""


def _no_terminal(fmt: str, a: str) -> Iterator[WireCase]:
    weather = Call("get_weather", "call_1", ('{"ci', 'ty": "Pa', 'ris"}'))
    clock = Call("get_time", "call_2", ('{"tz"', ': "Europe/', 'Rome"}'))
    frames, expected = _written(fmt, turns.script([weather, clock]))
    last = frames[-1]
    name = "[DONE]" if last.payload is DONE else str(last.event or last.payload.get("type"))
    yield WireCase("no_terminal", fmt, "every call finished, then the stream ends without "
                   + name, expected, (weather.args, clock.args),
                   (b"".join(_framed(fmt, frames[:-1])),), ends_early=True)


NOT_SERVED = {("ai-sdk-ui", "empty_arguments"): (
    "the UI stream's writer ends a call with no argument text with tool-input-error, which a "
    "UI client rightly never runs; ai's own server sends such a call as tool-input-available "
    "with input {} (parseToolCall takes '' for {}), so the stream never carries the quirk")}
"""Producer families a format can carry but the harness does not serve in it, and why: a
correct client of that format must not hand on the call as the case expects."""


def served_families(fmt: str) -> tuple[str, ...]:
    """The producer families served in ``fmt``: those it can carry, less :data:`NOT_SERVED`."""
    return tuple(q for q in producer_families(fmt) if (fmt, q) not in NOT_SERVED)


def _producer_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    """What servers send that a correct client survives: each quirk the format can carry
    (``check.producer_families``), written into two calls, as its own family."""
    for quirk in served_families(fmt):
        for k in PRODUCER_SPLITS if full else PRODUCER_SPLITS[1:2]:
            calls = producer_calls(k)
            shown = " + ".join(repr(list(c.fragments)) for c in calls)
            yield _event_case(quirk, fmt, calls, quirks=frozenset({quirk}),
                              shown=f"{shown}, the server sending {quirk}")


def _inside_characters(body: bytes) -> list[int]:
    """Cut points inside every multi-byte UTF-8 character: one per character."""
    return [k for k in range(1, len(body)) if body[k] & 0xC0 == 0x80
            and body[k - 1] & 0xC0 != 0x80]


def _transport_cases(fmt: str, full: bool) -> Iterator[WireCase]:
    turn = turns.script([Text(BYTES_TEXT), Call("lookup", "call_1", BYTES_ARGS)])
    frames, want = _written(fmt, turn)
    sent = tuple(c.args for c in turn.calls)
    body = b"".join(_framed(fmt, frames))

    def case(family: str, example: str, reads: Iterable[bytes], **kw: Any) -> WireCase:
        return WireCase(family, fmt, example, want, sent, tuple(reads), **kw)

    inside = _inside_characters(body)
    yield case("utf8_read_split", f"reads cut inside each of the {len(inside)} multi-byte "
               "characters (é, —, 東, 🌧️, 👍🏽 …)", _cut(body, inside))
    if full:
        for k in inside[:: max(1, len(inside) // 3)][:3]:
            yield case("utf8_read_split", f"reads cut at byte {k}: {body[k - 6:k]!r} | "
                       f"{body[k:k + 6]!r}", _cut(body, [k]))
    yield case("one_byte_reads", f"{len(body)} bytes in reads of 1 byte",
               _cut(body, range(1, len(body))))
    yield case("odd_chunks", "HTTP chunks of 1, 3, 5 … 17 bytes, written 5 bytes at a time "
               "(chunk headers cut across reads)", (body,), chunk_sizes=(1, 3, 5, 7, 9, 11,
                                                                           13, 15, 17))
    yield case("gzip", "content-encoding: gzip, flushed after every event",
               _framed(fmt, frames), gzip=True)
    served = Served(keepalive=FORMATS[fmt].keepalive)
    for t in framing(fmt).transports(frames, served):
        if t.family in _NEEDS_READING and not _reads_as_sent(t.reads, want):
            continue  # the format names its events only there: a correct client needs them
        yield case(t.family, t.example, t.reads)


_NEEDS_READING = frozenset({"no_event_lines"})
"""Transport families that drop something a format may need (its event names): served only
where the kit's own reader still reads the calls sent."""


def _reads_as_sent(reads: Sequence[bytes], want: tuple[CallTuple, ...]) -> bool:
    from .._calls import calls
    from ..loader import load

    table = calls(load(b"".join(reads), strict=False))
    return set(want) <= {(r.call_id, r.tool, r.args) for r in table.itertuples()}


_BUILT: dict[tuple[str, bool], tuple[object, tuple[WireCase, ...]]] = {}
"""Each format's cases as built for its registered spec: writing and reading back every
turn costs a tenth of a second a format, and a test session asks for them hundreds of
times (cases are frozen, so they are shared)."""


def _format_cases(fmt: str, full: bool) -> tuple[WireCase, ...]:
    """Every case of one format in a suite, built again only when its spec was replaced."""
    spec = FORMATS[fmt]
    built = _BUILT.get((fmt, full))
    if built is None or built[0] is not spec:
        made = tuple(c for make in (_document_cases, _stream_cases, _producer_cases,
                                    _transport_cases) for c in make(fmt, full))
        _BUILT[fmt, full] = built = (spec, made)
    return built[1]


def cases(formats: Sequence[str] = TURN_FORMATS, suite: str = "quick",
          families: Sequence[str] | None = None) -> list[WireCase]:
    """The cases of a suite: ``quick`` (a few per family, for tests) or ``full``;
    ``families`` keeps only those."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: one of {', '.join(SUITES)}")
    served = served_formats()
    unknown = [f for f in formats if f not in served]
    if unknown:
        raise ValueError(f"unknown format {unknown[0]!r}: one of {', '.join(served)}")
    full = suite == "full"
    out = [c for fmt in formats for c in _format_cases(fmt, full)]
    if families is None:
        return out
    # a family is unknown only when no served format has it (a producer family is served
    # only where its format can carry the quirk, a framing's transports only in its formats)
    anywhere = {c.family for c in out}
    if set(families) - anywhere:
        anywhere |= {c.family for f in served if f not in formats
                     for c in _format_cases(f, full)}
    unknown = sorted(set(families) - anywhere)
    if unknown:
        raise ValueError(f"unknown family {unknown[0]!r}")
    kept = [c for c in out if c.family in families]
    if not kept:
        raise ValueError(f"no case of {', '.join(sorted(families))} in {', '.join(formats)}: "
                         "a producer family is served only where its format can carry the quirk, a "
                         "framing's transport family only in its formats")
    return kept


