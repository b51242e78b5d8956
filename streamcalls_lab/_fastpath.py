"""load()'s fast path: a whole capture's frames normalised together.

Most captures are one complete body framed the usual way (all ``data:`` lines, or
``event:`` then ``data:``). For those, :func:`~.sse.split_whole` frames the body with
counts and splits done in C, and :func:`hot_rows` decodes the frames that need no state
(the deltas, nearly all of a stream) into typed structs at once, as each format's ``hot``
describes them. The few frames left (announcements, stops) go through ``normalize`` one by
one, in order, as always. This module is the only place that does either.

Anything unusual sends the whole capture back to the incremental decoder: a frame that
does not decode or normalise, a format no frame of the first window shows. So this path
never reports a problem; it only ever gives the rows that path would give, faster, and
``tests/test_fastpath.py`` checks that it does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import compress, count, repeat
from operator import add
from typing import Any, NamedTuple

import msgspec
import orjson

from .events import DONE_RAW, DONE_ROWS, PAYLOAD_ERRORS, Ev, Hot, HotRows, conflict
from .framing.sse import split_whole
from .providers import READERS, Reader, sniff
from .providers.misread import foreigner, holds_call, suspect

_COLD_ERRORS = (*PAYLOAD_ERRORS, orjson.JSONDecodeError)
_new = tuple.__new__  # a Whole from a tuple, without the Python-level __new__
# msgspec stops nesting where Python's recursion limit says (about a thousand levels, less on a
# deeper stack); orjson reads up to 1,024: such a frame is left to normalize, which reads it
_DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)


class Whole(NamedTuple):
    """A capture's rows, frame by frame."""

    bounds: list[int]
    """Each frame's byte offset, then the end of the capture."""
    provider: str
    rows: list[Sequence[Ev]]
    """Each frame's normalised events (one or more), or :data:`~.events.HOT` for a frame
    whose rows are in ``hot``."""
    raws: list[bytes]
    """Each frame's data line."""
    hot: HotRows
    """The rows of the frames the format's ``Hot`` read, as columns (their frame numbers
    count from the capture's first frame)."""


WINDOW = 1 << 20
"""A body is split and decoded this many bytes (give or take a frame) at a time, so a long
single capture holds its intermediate lines and structs for one window only."""


def whole_rows(body: bytes, provider: str = "auto", *, raws: bool = True) -> Whole | None:
    """The rows of a whole capture, or None when it needs the incremental decoder.

    ``raws=False`` keeps no data lines (``Whole.raws`` is then empty): load() without
    ``raw=True`` needs none. A body of one window is :func:`wholes`'s; a longer one is read
    here a window at a time, its windows' rows put end to end.
    """
    if len(body) <= WINDOW:
        return wholes((body,), provider, raws=raws)[0]
    fmt = None
    bounds: list[int] = []
    rows: list[Sequence[Ev]] = []
    kept: list[bytes] = []
    hot = HotRows()
    frames = foreigners = 0  # what a misread is told by (providers.misread), as the decoder
    calls_shown = False
    for start, stop in _windows(body):
        split = split_whole(body[start:stop] if start or stop < len(body) else body)
        if split is None:
            return None
        where, events, lines = split
        parsed: dict[int, Any] = {}  # frames parsed to find the format are not parsed again
        if fmt is None:
            if provider == "auto":
                found = _shown(events, lines, parsed)
                if found is None:
                    return None  # no window shows it at once: the decoder holds frames
                provider = found
            fmt = READERS[provider]()
        got = _rows(fmt, events, lines, parsed)
        if got is None:
            return None
        got, foreign, calls, cols = got
        frames += len(lines) - lines.count(DONE_RAW)
        foreigners += foreign
        calls_shown = calls_shown or calls
        if rows:  # this window's frames are numbered after the last window's
            cols.frame[:] = map(add, cols.frame, repeat(len(rows)))
        hot.frame += cols.frame
        hot.extend(cols)
        rows += got
        bounds += map(add, where[:-1], repeat(start)) if start else where[:-1]
        if raws:
            kept += lines
    bounds.append(len(body))
    assert fmt is not None  # split_whole gives at least one frame
    if suspect(frames, foreigners, calls_shown):
        return None
    return Whole(bounds, fmt.name, rows, kept, hot)


def wholes(bodies: Sequence[bytes], provider: str = "auto", *, raws: bool = True,
           ) -> list[Whole | None]:
    """:func:`whole_rows` of each body, a stage at a time over all of them (framing, the
    format, the stateless frames, the others) rather than every stage of one body, then of
    the next: the same work and the same rows, in about a tenth less CPU time for a few
    dozen captures (each stage's code and data stay in the caches). Meant for a group of
    bodies of about a :data:`WINDOW` together; a longer body is read by itself."""
    out: list[Whole | None] = [None] * len(bodies)
    split = []
    for k, body in enumerate(bodies):
        if len(body) > WINDOW:
            out[k] = whole_rows(body, provider, raws=raws)
        elif (got := split_whole(body)) is not None:
            split.append((k, *got))
    shown = []
    for k, where, events, lines in split:
        parsed: dict[int, Any] = {}
        found = _shown(events, lines, parsed) if provider == "auto" else provider
        if found is not None:
            shown.append((k, where, events, lines, parsed, READERS[found]()))
    hots = [_hot(fmt.hot, events, lines) for _, _, events, lines, _, fmt in shown]
    for (k, where, events, lines, parsed, fmt), (rows, cols) in zip(shown, hots, strict=True):
        cold = _cold(fmt, events, lines, parsed, rows)
        if cold is not None and not suspect(len(lines) - lines.count(DONE_RAW), *cold):
            out[k] = _new(Whole, (where, fmt.name, rows, lines if raws else [], cols))
    return out


def _shown(events: list[str], lines: list[bytes], parsed: dict[int, Any]) -> str | None:
    """The format of the first frame that shows one, as the decoder finds it: the frames
    before it (a ping, ``[DONE]``, an event every protocol names alike) are read by it too.
    Each frame parsed on the way is kept in ``parsed``; None when no frame shows a format
    or one is not JSON (the decoder says why)."""
    for i, line in enumerate(lines):
        if line == DONE_RAW:  # (is_done of bytes)
            continue
        try:
            payload = parsed[i] = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        found = sniff(events[i], payload)
        if found is not None:
            return found
    return None


def _windows(body: bytes) -> Iterator[tuple[int, int]]:
    """``body`` in spans of about :data:`WINDOW` bytes, each ending with a blank line (in the
    usual framing, the end of a frame; anything else fails :func:`split_whole` on its own)."""
    gap = b"\r\n\r\n" if b"\r" in body else b"\n\n"
    start = 0
    while len(body) - start > WINDOW:
        at = body.find(gap, start + WINDOW)
        if at < 0:
            break
        yield start, at + len(gap)
        start = at + len(gap)
    if start < len(body) or not body:
        yield start, len(body)


def _rows(fmt: Reader, events: list[str], raws: list[bytes], parsed: dict[int, Any],
          ) -> tuple[list[Sequence[Ev]], int, bool, HotRows] | None:
    """Each frame's rows: the stateless ones together (in columns), then the rest in order;
    how many of the rest are of another protocol (``misread.foreigner``: a frame the typed
    structs read carries the format's signature by construction), and whether one holds a
    call."""
    rows, cols = _hot(fmt.hot, events, raws)
    got = _cold(fmt, events, raws, parsed, rows)
    if got is None:
        return None
    return rows, *got, cols  # type: ignore[return-value]  # no None is left


def _cold(fmt: Reader, events: list[str], raws: list[bytes], parsed: dict[int, Any],
          rows: list[Sequence[Ev] | None]) -> tuple[int, bool] | None:
    """:func:`_rows` of the frames ``_hot`` left (None in ``rows``), in order, into
    ``rows``: how many are of another protocol, and whether one holds a call; None where
    one does not decode or normalise."""
    normalize = fmt.normalize
    foreign = foreigner(fmt.name)
    foreigners = 0
    calls = False
    for i in [i for i, r in enumerate(rows) if r is None]:
        raw = raws[i]
        if raw == DONE_RAW:  # the end-of-stream sentinel, whatever the format (is_done of bytes)
            rows[i] = DONE_ROWS
            continue
        try:
            payload = parsed.pop(i) if i in parsed else orjson.loads(raw)
            got = rows[i] = normalize(events[i], payload, raw.decode())
        except _COLD_ERRORS:
            return None  # the decoder says why, in strict or lenient mode
        if got and got[-1][1] == "error" and conflict(got) is not None:  # (a call each, else)
            return None  # (likewise: strict mode raises on it)
        if foreign(events[i], payload, got):
            foreigners += 1
            calls = calls or holds_call(raw, payload)
    return foreigners, calls


def hot_rows(hot: Hot | None, events: list[str], raws: list[bytes]) -> list[Sequence[Ev] | None]:
    """The rows of the frames that need no state, decoded together; None for the rest.

    For each frame either exactly what the format's ``normalize`` gives for it, or None:
    that frame is then normalised on its own, in order with the other Nones. (The fast
    path keeps the rows in columns, :func:`_hot`; this gives them as rows.)
    """
    rows, cols = _hot(hot, events, raws)
    for i, ev in cols.evs():
        rows[i] = (*rows[i], ev)
    return rows


def _hot(hot: Hot | None, events: list[str], raws: list[bytes],
         ) -> tuple[list[Sequence[Ev] | None], HotRows]:
    """Each frame's rows as ``Hot.rows`` leaves them: None (to normalise), :data:`HOT` (the
    rows are in the columns) or its rows; and those columns."""
    rows: list[Sequence[Ev] | None] = [None] * len(raws)
    cols = HotRows()
    if hot is None:
        return rows, cols
    pick = hot.event
    if pick is None:
        at, datas = list(range(len(raws))), raws
    else:
        at = list(compress(count(), map(pick, events)))
        datas = list(map(raws.__getitem__, at))
    if DONE_RAW in datas:  # (looked for in C, a comparison a line)
        if datas[-1] == DONE_RAW and datas.count(DONE_RAW) == 1:  # as a Chat stream ends
            del at[-1]
            datas = datas[:-1]  # (a copy: datas may be raws)
        else:
            at = [i for i in at if raws[i] != DONE_RAW]
            datas = list(map(raws.__getitem__, at))
    hot.rows(at, decode_each(hot.decode, datas), events, raws, rows, cols)
    return rows, cols


def decode_each(decode: Callable[[bytes], Any], raws: list[bytes]) -> list[Any]:
    """``decode`` of every data line, None where it fails.

    The typed payload structs forbid unknown fields, so every byte of a payload is parsed
    (as orjson would), and anything unexpected leaves the frame to ``normalize``: a payload
    nested deeper than msgspec goes (``RecursionError``) too.
    """
    try:
        return list(map(decode, raws))  # the usual case: no Python code per frame
    except _DECODE_ERRORS:
        pass
    out = []
    for raw in raws:
        try:
            out.append(decode(raw))
        except _DECODE_ERRORS:
            out.append(None)
    return out
