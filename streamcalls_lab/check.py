"""``check_handler``: run anyone's accumulator against every split that breaks the classic ones.

The suite is exhaustive where it is cheap to be: each argument document is cut at every
single split point, in all three wire formats, and a turn with multi-byte characters is
cut at every byte for handlers that take bytes. Each failure is described as a
:class:`~streamcalls_lab.faults.Symptom` and put down to the classes whose spec recognises
it (a missing space can only be ``trim``; a bare quote where ``\\"`` was sent could be
``decode_each`` or ``markdown_bubble``); the report names the fewest classes that explain
every failure, each with its smallest failing example. The rules live in
:mod:`streamcalls_lab.faults`, one spec per class, shared with the torture harness.

The turns are written by each format's own writer (:mod:`streamcalls_lab.turns`), without the
generator's flush model: the suite needs exact control of every cut, including a stream that
ends right after the closing brace, and thousands of turns built in well under a second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import pandas as pd

from . import _deepjson as deepjson
from . import turns
from ._replay import Tape, read_all
from .accumulate import event_dict
from .decode import EventDecoder
from .faults import CLASSES as CLASSES  # the report's classes, read from the specs
from .faults import (
    ESCAPE,
    SURFACE,
    Seen,
    Sent,
    Symptom,
    classify,
    cover,
    describe,
    parses,
    summary,
    symptoms,
)
from .producers.quirks import QUIRKS, with_implied
from .providers import FORMATS, INTERLEAVING
from .turns import Call, Segment, Text

Handler = type | Callable[[list[dict[str, Any]]], list[Mapping[str, Any]]]
REPORT_COLUMNS = ("class", "format", "family", "example", "expected", "got", "detail",
                  "failures", "summary", "families")
"""The report's columns; ``summary`` is the class's one line (what was assumed, what to do),
``families`` every family the class failed on (comma-separated, sorted): ``family`` is only
its smallest example's."""

# Argument documents. Each is cut at every split point; together they have spaces inside
# strings, every kind of escape, raw non-ASCII, an emoji (raw and as a surrogate pair),
# Markdown syntax inside values, and a top-level value that is not an object.
DOCUMENTS = {
    "spaces": '{"summary": "urgent request from ops about the March invoice run"}',
    "escapes": '{"text": "line one\\nline two", "quote": "say \\"hi\\"", "dir": "C:\\\\tmp"}',
    "unicode_escape": '{"name": "caf\\u00e9 cr\\u00e8me"}',
    "non_ascii": '{"city": "Zürich", "note": "naïve café"}',
    "emoji": '{"reaction": "👍🏽 done", "escaped": "\\ud83d\\ude00"}',
    "markdown": '{"note": "see *both* files", "code": "`x`"}',
    "top_level_number": "1024",
}
TWO_CALLS = ('{"city": "Paris"}', '{"city": "Rome"}')
PARALLEL_TOOLS = ("get_weather", "get_time")
TRUNCATED = '{"limit": 20, "status": "refunded"}'
PROSE = (("Let me check", " that for you."), ("Done", ", both are booked."))
# A turn with multi-byte characters everywhere, cut at every byte for byte-level handlers.
BYTES_TEXT = ("Voilà — 東京", " 🌧️ ok.")
BYTES_ARGS = ('{"city": "Zü', 'rich", "note": "naïve ', 'café 👍🏽"}')


# -- writing turns: each format's own writer (``FORMAT.write``), through streamcalls_lab.turns
TURN_FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")
"""The wire formats the suite writes turns in (the breaker writes its turns in them too)."""
MULTI_CHOICE = tuple(f for f in TURN_FORMATS if FORMATS[f].choices is not None)
"""Those of them whose responses can carry several choices (``WireFormat.choices``)."""


def turn_bytes(fmt: str, segments: Sequence[Segment], cut: bool = False,
               interleave: bool = False) -> bytes:
    """The body of a turn in one wire format (written by the format's writer); ``cut`` ends
    it right after the last segment's last fragment, which must be a call; ``interleave``
    announces every call first, then alternates their fragments (normal in the
    :data:`INTERLEAVING` formats)."""
    if interleave and fmt not in INTERLEAVING:
        raise ValueError(f"{fmt} cannot interleave calls; these can: {', '.join(INTERLEAVING)}")
    return turns.turn_bytes(fmt, turns.script(segments, cut=cut, interleave=interleave))


def expected_calls(fmt: str, segments: Sequence[Segment], cut: bool) -> list[dict[str, Any]]:
    """The calls a correct handler hands on, with each format's block numbering."""
    turn = turns.script(segments, cut=cut)
    return turns.expected_calls(turns.write(fmt, turn), turn)


def events_of(body: bytes) -> tuple[dict[str, Any], ...]:
    """The events a turn's bytes decode to, as the mappings ``feed`` takes."""
    dec = EventDecoder(strict=False)
    return tuple(event_dict(d) for d in [*dec.feed(body), *dec.close()])


# -- the suite -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    family: str
    format: str
    example: str
    """The case in a line: the fragments as sent (or, for bytes, the cut)."""
    expected: tuple[dict[str, Any], ...]
    text: str
    sent: tuple[Sent, ...]
    """Every call as sent, a cut-off call's partial arguments included."""
    size: int
    """How big the example is: the smallest failing one is reported."""
    events: tuple[dict[str, Any], ...] = ()
    chunks: tuple[bytes, ...] | None = None
    """Set for byte-level cases: the socket reads to feed."""
    escape_cut: bool = False
    """A fragment boundary falls inside a JSON escape."""
    ends_early: bool = False
    """The stream ends right after the last call's last fragment."""
    want: tuple[Seen, ...] = ()
    """``expected`` as ``(call_id, tool, args)``, what a run's calls are compared with."""
    quirks: frozenset[str] = frozenset()
    """The producer quirks the turn was written with."""

    def __post_init__(self) -> None:
        if not self.want and self.expected:  # frozen: set once, here
            object.__setattr__(self, "want", _want(self.expected))


def _want(expected: Iterable[Mapping[str, Any]]) -> tuple[Seen, ...]:
    return tuple([(c["call_id"], c["tool"], c["args"]) for c in expected])


def in_escape(doc: str, cut: int) -> bool:
    return any(m.start() < cut < m.end() for m in ESCAPE.finditer(doc))


def _sent(calls: Iterable[Mapping[str, Any]],
          finished: Iterable[Mapping[str, Any]] | None = None) -> tuple[Sent, ...]:
    """``calls`` as sent; those not among ``finished`` (a cut turn's) never got their stop."""
    done = None if finished is None else {c["call_id"] for c in finished}
    return tuple(Sent(c["call_id"], c["tool"], c["args"], c["block"], c.get("choice"),
                      done is None or c["call_id"] in done) for c in calls)


def _case(family: str, fmt: str, segments: Sequence[Segment], cut: bool = False,
          escape_cut: bool = False, interleave: bool = False,
          quirks: frozenset[str] = frozenset()) -> Case:
    turn = turns.script(segments, cut=cut, interleave=interleave, quirks=quirks)
    whole = turns.script(segments, interleave=interleave, quirks=quirks)  # nothing cut
    frames = turns.write(fmt, turn)
    body = turns.body(fmt, frames)
    segments = list(turns.prepared(turn).segments)  # what the quirks made of the content
    shown = " + ".join(repr(list(s.fragments)) for s in segments if isinstance(s, Call))
    if interleave:
        shown += ", the calls' frames interleaved"
    texts = [s for s in segments if isinstance(s, Text)]
    if texts:
        shown = f"prose {list(texts[0].fragments)!r}, call {shown}"
    if cut:
        shown += " then the stream ends"
    text = "".join(f for s in texts for f in s.fragments)
    finished = turns.expected_calls(frames, turn)
    sent = _sent(turns.expected_calls(turns.write(fmt, whole), whole), finished)  # cut ones too
    if quirks:
        shown += f", the producer sending {', '.join(sorted(quirks))}"
    return Case(family, fmt, shown, tuple(finished), text, sent,
                len(text) + sum(len(c.args) for c in sent), events_of(body),
                escape_cut=escape_cut, ends_early=cut, quirks=with_implied(quirks))


def two_choice_turn(choices: Sequence[Segment | Sequence[Segment]],
                    fmt: str | None = None) -> bytes:
    """A turn with ``n`` = ``len(choices)`` choices, each a call (or its own segments: prose
    and calls, its calls numbered from 0), written by the format's writer one choice at a
    time and combined as the format carries choices (``WireFormat.choices``; Chat's take
    turns, then one ``[DONE]``). ``fmt``: one of ``MULTI_CHOICE``, the first by default."""
    fmt = fmt or MULTI_CHOICE[0]
    combine = FORMATS[fmt].choices
    if combine is None:
        raise ValueError(f"{fmt} carries one choice a stream; these carry several: "
                         f"{', '.join(MULTI_CHOICE)}")
    per_choice = [turns.write(fmt, turns.script(segments)) for segments in _per_choice(choices)]
    return turns.body(fmt, combine(per_choice))


def _per_choice(choices: Sequence[Segment | Sequence[Segment]]) -> list[list[Segment]]:
    return [[c] if isinstance(c, Call | Text) else list(c) for c in choices]


def two_choice_calls(choices: Sequence[Segment | Sequence[Segment]]) -> list[dict[str, Any]]:
    """The calls a correct handler hands on from :func:`two_choice_turn`."""
    out = []
    for n, segments in enumerate(_per_choice(choices)):
        calls = [seg for seg in segments if isinstance(seg, Call)]
        out += [{"block": i, "choice": n, "call_id": c.call_id, "tool": c.tool,
                 "args": "".join(c.fragments)} for i, c in enumerate(calls)]
    return out


def _two_choices(fmt: str, calls: Sequence[Call]) -> Case:
    expected = two_choice_calls(calls)
    shown = " + ".join(f"choice {n}: {list(c.fragments)!r}" for n, c in enumerate(calls))
    sent = _sent(expected)
    return Case("two_choices", fmt, shown + ", the choices' chunks alternating",
                tuple(expected), "", sent, sum(len(c.args) for c in sent),
                events_of(two_choice_turn(calls, fmt)))


def _splits(doc: str) -> Iterable[tuple[int, tuple[str, str]]]:
    for k in range(1, len(doc)):
        yield k, (doc[:k], doc[k:])


@cache
def event_cases() -> tuple[Case, ...]:
    """Every event-level case, built once."""
    cases: list[Case] = []
    for fmt in TURN_FORMATS:
        for name, doc in DOCUMENTS.items():
            for k, frags in _splits(doc):
                cases.append(_case(name, fmt, [Call("lookup", "call_1", frags)],
                                   escape_cut=in_escape(doc, k)))
        a, b = TWO_CALLS
        for k in range(1, max(len(a), len(b)) - 1):
            calls = [Call("get_weather", f"call_{n}", (d[:min(k, len(d) - 1)],
                                                      d[min(k, len(d) - 1):]))
                     for n, d in enumerate((a, b), 1)]
            cases.append(_case("two_calls_one_tool", fmt, calls))
            if fmt in INTERLEAVING:  # two tools, so only the interleaving can merge them
                tools = [Call(tool, c.call_id, c.fragments)
                         for tool, c in zip(PARALLEL_TOOLS, calls, strict=True)]
                cases.append(_case("interleaved_calls", fmt, tools, interleave=True))
            if fmt in MULTI_CHOICE:  # n=2: each choice numbers its calls from 0
                cases.append(_two_choices(fmt, calls))
        doc = DOCUMENTS["spaces"]
        for k in (k for k, c in enumerate(doc) if c == " "):  # a fragment that is one space
            cases.append(_case("blank_fragment", fmt,
                               [Call("lookup", "call_1", (doc[:k], " ", doc[k + 1:]))]))
        for _, frags in _splits(doc):
            segs: list[Segment] = [Text(PROSE[0]), Call("lookup", "call_1", frags),
                                   Text(PROSE[1])]
            cases.append(_case("prose_around", fmt, segs))
        for k in range(1, len(TRUNCATED) + 1):
            cases.append(_case("truncated", fmt, [Call("lookup", "call_1", (TRUNCATED[:k],))],
                               cut=True))
        cases += producer_cases(fmt)
    return tuple(cases)


PRODUCER_SPLITS = (3, 9, 14)
"""Where the producer families cut each of their two calls' arguments."""


def producer_families(fmt: str) -> tuple[str, ...]:
    """The producer quirks a correct client can survive (nothing destroyed) that ``fmt`` can
    carry, each a family of the suite (interleaved calls have their own)."""
    return tuple(q for q in FORMATS[fmt].quirks
                 if not QUIRKS[q].destroys and q != "interleaved_calls")


def producer_calls(k: int) -> list[Call]:
    """The two calls every producer family sends (to different tools, one document with
    non-ASCII text and one with escapes), each cut into two fragments at ``k``."""
    docs = (DOCUMENTS["non_ascii"], DOCUMENTS["escapes"])
    return [Call(tool, f"call_{n}", (doc[:k], doc[k:]))
            for n, (tool, doc) in enumerate(zip(PARALLEL_TOOLS, docs, strict=True), 1)]


def producer_cases(fmt: str) -> list[Case]:
    """Two calls written with each producer quirk ``fmt`` can carry, cut a few ways: what
    clients assume about producers, at the event level."""
    return [_case(quirk, fmt, producer_calls(k), quirks=frozenset({quirk}))
            for quirk in producer_families(fmt) for k in PRODUCER_SPLITS]


@cache
def byte_turns() -> dict[str, tuple[bytes, tuple[dict[str, Any], ...], str]]:
    """Per format: the multi-byte turn's body, its expected calls and its text."""
    segments = [Text(BYTES_TEXT), Call("lookup", "call_1", BYTES_ARGS)]
    return {fmt: (turn_bytes(fmt, segments), tuple(expected_calls(fmt, segments, False)),
                  "".join(BYTES_TEXT)) for fmt in TURN_FORMATS}


def byte_cases() -> Iterable[Case]:
    """Every split of each multi-byte turn into two reads, and one read per byte; and a turn
    carrying U+2028 in its data, in small reads (``splitlines`` cuts lines there)."""
    separated = frozenset({"line_separator_in_data"})
    segments = [Text(BYTES_TEXT), Call("lookup", "call_1", BYTES_ARGS)]
    for fmt in TURN_FORMATS:
        if separated <= set(FORMATS[fmt].quirks):
            case = _case("line_separator_bytes", fmt, segments, quirks=separated)
            body = turns.turn_bytes(fmt, turns.script(segments, quirks=separated))
            yield replace(case, chunks=tuple(body[i:i + 7] for i in range(0, len(body), 7)),
                          events=())
    for fmt, (body, expected, text) in byte_turns().items():
        sent, want = _sent(expected), _want(expected)  # once per turn, not per cut
        for k in range(1, len(body)):
            where = f"{body[max(0, k - 8):k]!r} | {body[k:k + 8]!r}"
            yield Case("bytes", fmt, f"reads cut at byte {k}: {where}", expected, text, sent,
                       len(body), chunks=(body[:k], body[k:]), want=want)
        yield Case("bytes", fmt, f"{len(body)} bytes in reads of 1 byte", expected, text,
                   sent, len(body) + 1, chunks=tuple(body[i:i + 1] for i in range(len(body))),
                   want=want)


def case_count(with_bytes: bool = True) -> int:
    """How many cases ``check_handler`` runs (for the benchmark)."""
    n = len(event_cases())
    if with_bytes:
        n += sum(len(body) for body, _, _ in byte_turns().values())
    return n


# -- running a handler ---------------------------------------------------------------------
@dataclass
class Outcome:
    calls: list[Mapping[str, Any]] = field(default_factory=list)
    message: str | None = None
    error: BaseException | None = None


@cache
def _tape(chunks: tuple[bytes, ...]) -> Tape:
    """A byte case's reads through the byte layer, once for every handler checked: a
    handler that reads bytes as the Accumulator does is given its events (the breaker's
    replay), which were half of every run when each handler decoded them itself. A turn
    cut into two reads is cut from its tape in reads of one byte (its own case), not
    decoded again: the two-read cases, one a byte of every turn, were most of the decoding."""
    if len(chunks) == 2:
        return Tape.cut(_bytewise(b"".join(chunks)), len(chunks[0]))
    return Tape(chunks)


@cache
def _bytewise(body: bytes) -> Tape:
    return _tape(tuple(body[i:i + 1] for i in range(len(body))))


def _kits(handler: type) -> bool:
    """One of the kit's own handlers: it only reads the events it is fed (the breaker
    feeds them the tape's read-only ones), so it is given those, not copies; a handler
    from elsewhere may write to its events and gets its own."""
    return handler.__module__.split(".")[0] == __name__.split(".")[0]


def _run(handler: Handler, case: Case) -> Outcome:
    out = Outcome()
    try:
        if isinstance(handler, type):
            h = handler()
            if case.chunks is not None:
                read_all(h, case.chunks, _tape(case.chunks), own_events=not _kits(handler))
            else:
                for event in case.events:
                    h.feed(dict(event))
            out.calls = list(h.finish())
            message = getattr(h, "message", None)
            out.message = message if isinstance(message, str) else None
        else:
            out.calls = list(handler([dict(e) for e in case.events]))
    except Exception as e:  # the handler under test may raise anything; that is a finding
        out.error = e
    return out


# -- explaining a failure ------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    case: Case
    classes: frozenset[str]
    """The classes whose spec recognises the symptom: any of them could explain it."""
    expected: str
    got: str
    detail: str
    aspect: str
    same_value: bool = False
    """The arguments differ as text but parse to the same value (nothing of the data lost)."""


def _same_value(s: Symptom) -> bool:
    differ = [(w, h) for w, h in s.matched[0] if w != h]
    if len(differ) != 1:
        return False
    (want, have), = differ
    return (isinstance(have[2], str) and parses(have[2]) and parses(want[2])
            and deepjson.loads(have[2]) == deepjson.loads(want[2]))


def _get(call: Mapping[str, Any], key: str) -> Any:
    try:
        return call.get(key)
    except AttributeError:
        return getattr(call, key, None)


Judged = tuple[frozenset[str], str, str, str, str, bool]
"""What a finding says of its symptom: its classes, ``describe``'s three parts, its aspect,
and whether the arguments parse to the same value."""


def _judged(s: Symptom) -> Judged:
    return (classify(s), *describe(s), s.aspect, _same_value(s))


_PLAIN = (str, type(None))


def _findings(case: Case, out: Outcome,
              judged: dict[tuple[Any, ...], list[Judged]] | None = None) -> list[Finding]:
    """``judged``: what this run of the suite has already made of a run, by everything
    :func:`symptoms` reads of it. A handler's mistake mostly comes out the same in every cut
    of one turn (the byte cases are thousands of cuts of three), so each distinct one is
    described and classified once."""
    got = tuple([(_get(c, "call_id"), _get(c, "tool"), _get(c, "args")) for c in out.calls])
    if out.error is None and got == case.want and out.message in (None, case.text):
        return []  # the common case, decided without building a symptom
    error = "" if out.error is None else f"raised {type(out.error).__name__}: {out.error}"
    key = (case.sent, case.want, got, error, out.message, case.text, case.ends_early,
           case.escape_cut, case.chunks is not None, case.quirks)
    # not remembered: a dict is not hashable, and 1 == True would share a description
    remember = judged is not None and type(out.message) in _PLAIN and all(
        type(x) in _PLAIN for call in got for x in call)
    known = judged.get(key) if remember else None
    if known is None:
        known = [_judged(s) for s in symptoms(
            sent=case.sent, expected=case.want, got=got, error=error, message=out.message,
            text=case.text, ends_early=case.ends_early, escape_cut=case.escape_cut,
            reads_cut=case.chunks is not None, quirks=case.quirks)]
        if remember:
            judged[key] = known
    return [Finding(case, *j) for j in known]


def check_handler(handler: Handler, *, bytes_level: bool | None = None) -> pd.DataFrame:
    """Run ``handler`` against the whole suite; one row per failure class found.

    ``handler`` is a class with the contract's interface (``feed(event)``, ``finish()``;
    instantiated once per turn) or a callable taking a turn's list of events and returning
    its calls. Byte-level cases run when the class has ``feed_bytes`` (or when
    ``bytes_level`` says so). Each row holds the class, the smallest failing example
    (``format``, ``family``, ``example``, ``expected``, ``got``, ``detail``), how many
    failures the class explains, and the class's ``summary``. Empty for a handler with none
    of the failures.
    """
    if bytes_level is None:
        bytes_level = isinstance(handler, type) and hasattr(handler, "feed_bytes")
    cases: Iterable[Case] = event_cases()
    if bytes_level:
        cases = [*cases, *byte_cases()]
    findings: list[Finding] = []
    judged: dict[tuple[Any, ...], list[Judged]] = {}
    n = 0
    for case in cases:
        n += 1
        findings += _findings(case, _run(handler, case), judged)
    best = []
    for cls, found in cover(findings, lambda f: f.classes).items():
        # The smallest example this class alone explains, about the calls if possible,
        # and one that loses data (a space inside a string, not one between tokens).
        best.append((cls, min(found, key=lambda f: (len(f.classes) > 1, f.aspect == SURFACE,
                                                   f.same_value,
                                                   f.case.size, len(f.case.example))),
                     len(found), {f.case.family for f in found}))
    report = report_frame(best)
    report.attrs["cases"] = n
    return report


def report_frame(best: Iterable[tuple[str, Any, int, Iterable[str]]]) -> pd.DataFrame:
    """The report's table (:data:`REPORT_COLUMNS`) from ``(class, finding, failures,
    families)``: a finding here or in :mod:`~.torture` (a ``case`` with its format, family and
    example; ``expected``, ``got``, ``detail``) is the class's smallest failing example, and
    ``families`` every family it failed on."""
    rows = [{"class": cls, "format": f.case.format, "family": f.case.family,
             "example": f.case.example, "expected": f.expected, "got": f.got,
             "detail": f.detail, "failures": failures, "summary": summary(cls),
             "families": ", ".join(sorted(set(families)))}
            for cls, f, failures, families in best]
    return pd.DataFrame(rows, columns=list(REPORT_COLUMNS)).astype(
        {c: "str" for c in REPORT_COLUMNS if c != "failures"} | {"failures": "int64"})
