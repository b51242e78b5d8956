"""``load()``: captured bytes to a dataframe with one row per wire event."""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain, compress, repeat
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from . import _columns as columns
from ._fastpath import Whole, whole_rows, wholes
from .decode import UNKNOWN, Decoded, EventDecoder, check_provider
from .errors import CaptureError
from .events import KINDS, Ev, HotRows
from .framing import decode_any
from .framing.frame import Frame
from .framing.sse import has_comment_line
from .providers import FORMATS
from .sources import Capture, Source, resolve

_new = tuple.__new__  # a Decoded from a tuple, without the Python-level __new__
_OFFSET, _T, _DATA = attrgetter("offset"), attrgetter("t"), attrgetter("data")
_STATED = {name: f.stated_time for name, f in FORMATS.items() if f.stated_time is not None}
"""The formats whose frames state their receive time (``WireFormat.stated_time``)."""
_EV_TYPES = "ssisssississ"  # each Ev field's column: string or integer (columns.unzipped)
_BATCH = 1024  # rows gathered before they go into the columns (a long capture's frames go)
_PIECE = 1 << 16  # a whole body is decoded this many bytes at a time: its frames are let go
COLUMNS = (
    "turn", "seq", "offset", "t", "provider", "event", "kind", "block", "choice", "call_id",
    "tool", "fragment", "chars", "wire_chars", "frame", "final", "problem", "repeats",
    "reason", "quirk",
)


def frames(source: Source, *, strict: bool = True, name: str | None = None) -> Iterator[Frame]:
    """Frames of a source, in order (all captures of a directory, one after another); each
    capture is SSE, NDJSON or AWS event-stream, whichever its first bytes show.

    An entry that cannot be read, or a recording marked as broken off, raises (strict) or
    gives a frame whose ``problem`` names the file and why (lenient), as ``load()`` does.
    """
    for cap in resolve(source, name, require=True):
        if cap.problem is not None:
            if strict:
                raise cap.problem
            yield _problem_frame(cap.problem, named=True)
            continue
        size = 0

        def counted(chunks: Iterable[bytes | tuple[float, bytes]]) -> Iterator[Any]:
            nonlocal size
            for chunk in chunks:
                size += len(chunk[1] if isinstance(chunk, tuple) else chunk)
                yield chunk

        yield from decode_any(counted(cap.chunks), cap.name, strict=strict)
        if (cut := cap.broke_off(size)) is not None:
            if strict:
                raise cut
            yield _problem_frame(cut, named=True)


def _problem_frame(e: CaptureError, *, named: bool = False) -> Frame:
    """An empty frame at the byte ``e`` names, carrying its reason (and its file's name)."""
    return Frame(e.offset, e.offset, "", "", problem=f"{e.source}: {e.reason}" if named
                 else e.reason)


class _Columns:
    """Rows gathered turn by turn, typed into columns once at the end.

    Each turn's :class:`Decoded` tuples are unzipped in C as the turn ends, and only what
    the columns need is kept: the frames (with their whole ``data`` text) are let go then,
    so a long load holds little more than its result. The fast path's hot rows come as
    columns already (``events.HotRows``: no tuple per row) and are kept apart; each row,
    of either kind, has an order key, and the two kinds are put in order once, in C, when
    the columns are built.
    """

    def __init__(self, raw: bool) -> None:
        self.raw = raw
        self.turns: list[str] = []
        self.counts: list[int] = []
        self.size = 0  # rows so far, of both kinds: the next row's number in the table
        # Each row's order key is worked out at the end, with numpy, from these (no Python
        # int per row): a turn's first key, then its row's frame (a fast-path turn: hot
        # and other rows interleave by frame) or its place among the turn's rows.
        self.spans: list[int] = []  # keys each turn takes: its frames, or its rows
        self.by_frame: list[bool] = []  # a fast-path turn
        self.colds: list[int] = []  # each turn's rows held as Ev tuples
        self.hots: list[int] = []  # each turn's hot rows
        # the rows as Ev tuples (the incremental decoder's, the fast path's other frames)
        self.offset: list[int] = []
        self.t: list[float] = []
        self.data: list[str] = []
        self.numbers: list[int] = []
        self.providers: list[str] = []
        self.evs: list[Ev] = []
        # the hot rows, in columns (hot.frame is not kept: hot_numbers are their frames)
        self.hot = HotRows()
        # every fast-path turn's frame offsets end to end, and where each turn's start: a hot
        # row's offset is looked up with numpy at the end, not put in a list row by row
        self.bounds: list[int] = []
        self.bases: list[int] = []  # each turn's first place in bounds
        self.hot_data: list[str] = []
        self.hot_numbers: list[int] = []
        self.hot_t: list[tuple[int, np.ndarray]] = []  # timed turns' hot rows: first, times
        self.turn_providers: list[str] = []  # each turn's, for its hot rows (one per turn)
        self.repeats: dict[int, int] = {}  # row -> frames it stands for, where more than 1
        self._origin: float | None = None  # the turn's first stated receive time

    def add(self, turn: str, decoded: list[Decoded], *, more: bool = False) -> None:
        """The rows of one turn, or (``more``) the next rows of the turn added last."""
        if more:
            self.counts[-1] += len(decoded)
            self.spans[-1] += len(decoded)
            self.colds[-1] += len(decoded)
        else:
            self.turns.append(turn)
            self.counts.append(len(decoded))
            self.spans.append(len(decoded))
            self.by_frame.append(False)
            self.colds.append(len(decoded))
            self.hots.append(0)
            self.turn_providers.append("")  # (no hot rows)
            self.bases.append(len(self.bounds))
            self._origin = None
        if not decoded:
            return
        self.size += len(decoded)
        frames, numbers, providers, evs = zip(*decoded, strict=True)
        self.offset += map(_OFFSET, frames)
        stated = _STATED.get(providers[-1])
        self.t += map(_T, frames) if stated is None else self._stated(frames, stated)
        if self.raw:
            self.data += map(_DATA, frames)
        self.numbers += numbers
        self.providers += providers
        self.evs += evs

    def _stated(self, frames: tuple[Frame, ...], stated: Any) -> list[float]:
        """Each frame's time: its read's, or, where no read was timed, the receive time its
        data states, in seconds since the turn's first stated time."""
        out: list[float] = []
        last: tuple[Frame | None, float] = (None, math.nan)
        for fr in frames:
            if fr is last[0]:  # several rows of one frame
                out.append(last[1])
                continue
            t = fr.t
            if math.isnan(t) and fr.problem is None:
                at = stated(fr.data)
                if at is not None:
                    if self._origin is None:
                        self._origin = at
                    t = at - self._origin
            last = (fr, t)
            out.append(t)
        return out

    def add_whole(self, turn: str, whole: Whole, times: np.ndarray | None = None) -> None:
        """The rows of one whole turn from the fast path, frame by frame; ``times``, each
        frame's time where its reads were timed (else every row's is NaN)."""
        bounds, provider, rows, raws, hot = whole
        n = len(rows)
        cold = list(compress(range(n), rows))  # the frames with rows of their own (HOT is ())
        evs = list(chain.from_iterable(compress(rows, rows)))
        c, m = len(evs), len(hot.frame)
        self.turns.append(turn)
        self.counts.append(c + m)
        self.size += c + m
        self.spans.append(n)
        self.by_frame.append(True)
        self.colds.append(c)
        self.hots.append(m)
        self.turn_providers.append(provider)
        self.bases.append(len(self.bounds))
        if c:
            at = times.take(cold).tolist() if times is not None else None
            if c == len(cold):  # one row per frame, as most frames
                self.offset += map(bounds.__getitem__, cold)
                self.numbers += cold
                datas = map(bytes.decode, map(raws.__getitem__, cold))
            else:
                counts = list(map(len, compress(rows, rows)))
                self.offset += chain.from_iterable(map(repeat, map(bounds.__getitem__, cold),
                                                       counts))
                self.numbers += chain.from_iterable(map(repeat, cold, counts))
                datas = chain.from_iterable(map(repeat, map(bytes.decode,
                                                            map(raws.__getitem__, cold)),
                                                counts))
                if at is not None:
                    at = list(chain.from_iterable(map(repeat, at, counts)))
            if self.raw:
                self.data += datas
            self.t += repeat(math.nan, c) if at is None else at
            self.providers += repeat(provider, c)
            self.evs += evs
        if m:
            frames = hot.frame
            if times is not None:  # (untimed hot rows cost nothing here: NaN is the default)
                self.hot_t.append((len(self.hot_numbers), times.take(frames)))
            self.hot.extend(hot)
            self.bounds += bounds
            self.hot_numbers += frames
            if self.raw:
                self.hot_data += map(bytes.decode, map(raws.__getitem__, frames))

    def _hot_times(self, nh: int) -> np.ndarray:
        """The hot rows' times: NaN but in the turns read with timed reads."""
        out = np.full(nh, math.nan)
        for first, times in self.hot_t:
            out[first:first + len(times)] = times
        return out

    def _keys(self, hot_frames: np.ndarray, cold_frames: np.ndarray) -> np.ndarray:
        """Each row's order key, the hot rows' first: its turn's first key plus its frame
        (a fast-path turn) or its place among the turn's rows (the others)."""
        spans = np.array(self.spans, dtype=np.int64)
        firsts = np.cumsum(spans) - spans
        hots = np.array(self.hots, dtype=np.int64)
        colds = np.array(self.colds, dtype=np.int64)
        hot = np.repeat(firsts, hots) + hot_frames
        places = np.arange(len(cold_frames), dtype=np.int64) - np.repeat(
            np.cumsum(colds) - colds, colds)
        cold = np.repeat(firsts, colds) + np.where(
            np.repeat(np.array(self.by_frame, dtype=bool), colds), cold_frames, places)
        return np.concatenate((hot, cold))

    def _hot_offsets(self, hot_frames: np.ndarray) -> np.ndarray:
        """Each hot row's byte offset: its frame's, in its turn's bounds."""
        if not len(hot_frames):
            return hot_frames
        turns = np.repeat(np.array(self.bases, dtype=np.int64),
                          np.array(self.hots, dtype=np.int64))
        return _array(self.bounds, "int64")[turns + hot_frames]

    def _providers(self, order: np.ndarray | None) -> pd.Categorical:
        """The ``provider`` column: a hot row's is its turn's (repeated as codes, no str
        per row), the others' their own; categories in sorted order, as
        :func:`columns.category` gives them."""
        hots = np.array(self.hots, dtype=np.int64)
        seen = set(self.providers)
        seen.update(compress(self.turn_providers, self.hots))
        if not all(type(p) is str for p in seen):  # (never so: columns.category says why)
            return columns.category(columns.interleaved(
                (list(chain.from_iterable(map(repeat, self.turn_providers, self.hots))),
                 self.providers), order, "s"))
        cats = sorted(seen)
        where = {p: i for i, p in enumerate(cats)}
        codes = np.concatenate((
            np.repeat(np.array([where.get(p, -1) for p in self.turn_providers],
                               dtype=np.int64), hots),
            columns.codes(self.providers, where)))  # (every one a str of ``where``)
        return pd.Categorical.from_codes(codes if order is None else codes[order],
                                         categories=pd.Index(cats, dtype="str"))

    def _kinds(self, cold: Any, order: np.ndarray | None, nc: int) -> Any:
        """The ``kind`` column: each part's codes among :data:`KINDS` (the hot rows' by a
        lookup each, the others' through Arrow's dictionary), put in order as numbers."""
        hot = columns.codes(self.hot.kind, _KIND_CODES)
        cold_codes = columns.codes(cold, _KIND_CODES) if nc else np.empty(0, np.int64)
        if hot is None or cold_codes is None:  # an odd value: columns.category reports it
            return columns.interleaved((self.hot.kind, cold if nc else ()), order, "s")
        codes = np.concatenate((hot, cold_codes))
        return pd.Categorical.from_codes(codes if order is None else codes[order],
                                         categories=pd.Index(KINDS, dtype="str"))

    def frame(self) -> pd.DataFrame:
        nh, nc = len(self.hot_numbers), len(self.evs)
        n = nh + nc
        # The numbers as arrays once, each taking its list's place (8 bytes a value, not a
        # list's pointer to an int): each row's frame serves the order keys and the column.
        hot_frames = self.hot_numbers = _array(self.hot_numbers, "int64")  # type: ignore[assignment]
        cold_frames = self.numbers = _array(self.numbers, "int64")  # type: ignore[assignment]
        self.bounds = _array(self.bounds, "int64")  # type: ignore[assignment]
        self.offset = _array(self.offset, "int64")  # type: ignore[assignment]
        hot_offsets = self._hot_offsets(hot_frames)
        order = None  # rows of one kind only are in order as they stand
        if nh and nc:
            keys = self._keys(hot_frames, cold_frames)
            order = np.argsort(keys, kind="stable")  # (a cold frame's rows keep their order)
            del keys
        cold: Any = ()
        where = None  # each cold row's place in the table
        if nc:
            cold = columns.unzipped(self.evs, _EV_TYPES)
            if cold is None:
                cold = list(zip(*self.evs, strict=True))
            elif order is not None:
                places = np.empty(n, dtype=np.int64)
                places[order] = np.arange(n, dtype=np.int64)
                where = places[nh:]
        fields = []
        for at, (name, kind) in enumerate(zip(Ev._fields, _EV_TYPES, strict=True)):
            if name == "kind":  # a category: its codes are put in order (_kinds)
                fields.append(cold[at] if nc else ())
                continue
            if name in HotRows.FIELDS:
                hot = getattr(self.hot, name)
            elif where is not None and kind == "s":  # missing in every hot row
                fields.append(columns.scattered(cold[at], where, n))
                continue
            else:
                hot = columns.nulls(nh, kind)
            fields.append(columns.interleaved((hot, cold[at] if nc else ()), order, kind))
        (event, kind, block, call_id, tool, fragment, wire, final, problem, choice, reason,
         quirk) = fields  # (kind: the cold rows' only; _kinds adds the hot rows')
        counts = np.array(self.counts, dtype="int64")
        firsts = np.repeat(np.cumsum(counts) - counts, counts)  # each row's turn starts here
        df = events_frame(
            turn=columns.repeated(self.turns, counts),
            seq=np.arange(n, dtype="int64") - firsts,
            offset=_ordered(hot_offsets, self.offset, order, "int64"),
            t=_ordered(self._hot_times(nh), self.t, order, "float64"),
            provider=self._providers(order),
            event=event, kind=self._kinds(kind, order, nc), block=block, choice=choice,
            call_id=call_id, tool=tool,
            fragment=fragment, wire_chars=wire, frame=_ordered(hot_frames, cold_frames, order,
                                                               "int64"),
            final=final, problem=problem, reason=reason, quirk=quirk,
            copy=False,  # every column was made here for this table: pandas need not copy
        )
        if self.repeats:
            repeats = df["repeats"].to_numpy(copy=True)
            repeats[list(self.repeats)] = list(self.repeats.values())
            df["repeats"] = repeats
        if self.raw:
            df["data"] = columns.strings(
                columns.interleaved((self.hot_data, self.data), order, "s"))
        return df


_KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}


def _ordered(hot: Any, cold: Any, order: np.ndarray | None, dtype: str) -> np.ndarray:
    """A numeric column of the hot rows' values, then the others', in ``order``."""
    both = np.concatenate((_array(hot, dtype), _array(cold, dtype)))
    return both if order is None else both[order]


def _array(values: Any, dtype: str) -> np.ndarray:
    """``values`` (a list of numbers) as an array, in one pass: ``np.asarray`` looks at every
    value twice (once for the dtype it would choose, once to store it)."""
    if isinstance(values, np.ndarray):
        return values
    return np.fromiter(values, dtype=dtype, count=len(values))


def events_frame(
    *, turn: Any, seq: Any, offset: Any, t: Any, provider: Any, event: Any, kind: Any,
    block: Any, call_id: Any, tool: Any, fragment: Any, wire_chars: Any, frame: Any,
    final: Any, problem: Any, choice: Any = None, repeats: Any = None, reason: Any = None,
    quirk: Any = None, copy: bool = True,
) -> pd.DataFrame:
    """The ``load()`` table from its columns: the one place the schema's dtypes are set.

    ``copy=False`` takes the arrays as the table's own (no copy, each column its own block):
    for a caller that made them for this table alone and keeps no reference to them."""
    frag = columns.strings(fragment)
    return pd.DataFrame(
        {
            "turn": turn,  # already a str column: columns.repeated(names, counts)
            "seq": np.asarray(seq, dtype="int64"),
            "offset": np.asarray(offset, dtype="int64"),
            "t": np.asarray(t, dtype="float64"),
            "provider": provider if isinstance(provider, pd.Categorical)
            else columns.category(provider if hasattr(provider, "__len__") else list(provider)),
            "event": columns.strings(event),
            "kind": kind if isinstance(kind, pd.Categorical) else columns.category(kind, KINDS),
            "block": columns.ints(block),
            "choice": columns.ints([None] * len(block) if choice is None else choice),
            "call_id": columns.strings(call_id),
            "tool": columns.strings(tool),
            "fragment": frag,
            "chars": columns.lengths(frag),
            "wire_chars": columns.ints(wire_chars),
            "frame": np.asarray(frame, dtype="int64"),
            "final": columns.strings(final),
            "problem": columns.strings(problem),
            "repeats": np.ones(len(kind), dtype="int64") if repeats is None
            else np.asarray(repeats, dtype="int64"),
            "reason": columns.strings([None] * len(kind) if reason is None else reason),
            "quirk": columns.strings([None] * len(kind) if quirk is None else quirk),
        },
        copy=copy,
    )


_AHEAD = 32
"""Captures read, then read by the fast path (``_fastpath.wholes``: a stage at a time), as a
group, before their rows are gathered: each stage run over a few captures in a row, rather
than all of them a capture at a time (a read's four system calls, then the fast path, then
the columns, and again), takes less CPU time for the same instructions (measured on 671 real
captures: the caches stay warm for each stage's code and data)."""
_AHEAD_BYTES = 1 << 20  # (and no more bytes than this at once, but for one capture alone)


Ahead = tuple[Capture, bytes | CaptureError | None, Whole | Exception | None,
              list[tuple[float, int]] | None]
"""A capture read ahead: its body (None where the fast path does not read it, or the error
reading it raised), the fast path's rows of it (None: the decoder reads it, or the error
the fast path raised), each raised at the capture's turn, as it was before, and its
recorded reads (time, size) where it has them."""


def _timed_body(cap: Capture) -> tuple[bytes | None, list[tuple[float, int]] | None]:
    """A timed capture's body and reads, where the fast path can give each frame its time:
    that of the read holding the frame's last byte, as the decoder does, which needs each
    frame's end. Reads that do not cover the body (the decoder says so) and a comment frame
    (the fast path passes over it, so a frame's end is not the next one's start) are left
    to the decoder: (None, None)."""
    got = cap.timed()
    if got is None:
        return None, None
    body, reads = got
    if sum(n for _, n in reads) != len(body) or has_comment_line(body):
        return None, None
    return body, reads


def _frame_times(bounds: list[int], reads: list[tuple[float, int]]) -> np.ndarray:
    """Each frame's time (``bounds``: each frame's offset and, last, the body's end): the
    time of the read that holds its last byte (an empty read holds none)."""
    ends = np.cumsum(np.fromiter((n for _, n in reads), np.int64, len(reads)))
    times = np.fromiter((t for t, _ in reads), np.float64, len(reads))
    return times[np.searchsorted(ends, np.asarray(bounds[1:], dtype=np.int64), side="left")]


def _read_ahead(captures: Iterable[Capture], provider: str, raw: bool, bulk: bool,
                ) -> Iterator[list[Ahead]]:
    """The captures in groups of :data:`_AHEAD` (or :data:`_AHEAD_BYTES`), each read and
    read by the fast path before the group is given. Nothing is raised early: a read's
    error is given in its place, and an error of ``captures`` itself after the group of
    the captures before it."""
    caps: list[Capture] = []
    bodies: list[bytes | CaptureError | None] = []
    timings: list[list[tuple[float, int]] | None] = []
    size = 0
    failed: Exception | None = None
    items = iter(captures)
    while True:
        try:
            cap = next(items, None)
        except Exception as e:  # (raised after the captures before it, as it was)
            failed, cap = e, None
        if cap is not None:
            body: bytes | CaptureError | None = None
            reads = None
            if bulk and cap.problem is None and cap.cut_off is None:
                try:
                    body = cap.whole()
                    if body is None:
                        body, reads = _timed_body(cap)
                except CaptureError as e:
                    body = e
                if type(body) is bytes:
                    size += len(body)
            caps.append(cap)
            bodies.append(body)
            timings.append(reads)
        if caps and (cap is None or len(caps) >= _AHEAD or size >= _AHEAD_BYTES):
            yield list(zip(caps, bodies, _wholes(bodies, provider, raw), timings, strict=True))
            caps, bodies, timings, size = [], [], [], 0
        if cap is None:
            break
    if failed is not None:
        raise failed


def _wholes(bodies: list[bytes | CaptureError | None], provider: str, raw: bool,
            ) -> list[Whole | Exception | None]:
    """The fast path's rows of each body read (``_fastpath.wholes``: a stage at a time over
    the group), None for the others. An exception (never expected) is kept in its body's
    place, to be raised at its capture's turn: the bodies are then read one by one."""
    read = [type(b) is bytes for b in bodies]
    try:
        got: list[Whole | Exception | None] = [*wholes(list(compress(bodies, read)),
                                                       provider, raws=raw)]
    except Exception:
        return [_whole(b, provider, raw) for b in bodies]
    out: list[Whole | Exception | None] = [None] * len(bodies)
    for k, whole in zip(compress(range(len(bodies)), read), got, strict=True):
        out[k] = whole
    return out


def _whole(body: bytes | CaptureError | None, provider: str, raw: bool
           ) -> Whole | Exception | None:
    if type(body) is not bytes:
        return None
    try:
        return whole_rows(body, provider, raws=raw)
    except Exception as e:
        return e


def _load_one(ahead: Ahead, provider: str, strict: bool, out: _Columns, bulk: bool) -> None:
    """One capture's rows; an entry that cannot be read, or a recording that broke off,
    is a :class:`CaptureError` (strict) or an error row (lenient) naming why."""
    cap = ahead[0]
    if cap.problem is not None:
        if strict:
            raise cap.problem
        out.add(cap.name, [_source_problem(cap.problem, 0, UNKNOWN)])
        return
    try:
        _decode_one(ahead, provider, strict, out, bulk and cap.cut_off is None)
    except CaptureError as e:  # lenient decoding never raises: the source itself failed
        if strict or e.source == cap.name:
            raise
        out.add(cap.name, [_source_problem(e, 0, UNKNOWN)])


def _source_problem(e: CaptureError, n: int, provider: str) -> Decoded:
    fr = _problem_frame(e)
    return _new(Decoded, (fr, n, provider, Ev("", "error", problem=f"{e.source}: {e.reason}")))


def _decode_one(ahead: Ahead, provider: str, strict: bool, out: _Columns, bulk: bool
                ) -> None:
    cap, body, whole, reads = ahead
    chunks = cap.chunks
    if bulk:
        if isinstance(body, CaptureError):
            raise body
        if isinstance(whole, Exception):
            raise whole
        if body is not None:
            if whole is not None and whole.provider not in _STATED:  # (its times: below)
                out.add_whole(cap.name, whole,
                              None if reads is None else _frame_times(whole.bounds, reads))
                return
            if reads is None:  # (a timed capture's reads, the decoder takes as recorded)
                chunks = [body]
    dec = EventDecoder(cap.name, provider=provider, strict=strict, fold=not strict)
    rows: list[Decoded] = []
    added = reported = 0
    problems: list[tuple[int, int]] = []  # (row, frame number) of each problem row added

    def flush() -> None:  # the rows so far into columns: their frames are let go
        nonlocal reported
        first = out.size
        if dec.problems != reported:
            reported = dec.problems
            problems.extend((first + i, d.n) for i, d in enumerate(rows) if d.ev.kind == "error")
        out.add(cap.name, rows, more=added > 0)
        rows.clear()

    size = 0
    for chunk in chunks:
        t, chunk = chunk if isinstance(chunk, tuple) else (math.nan, chunk)
        size += len(chunk)
        for at in range(0, len(chunk), _PIECE):  # (the decoder gives the same in any pieces)
            rows += dec.feed(chunk[at:at + _PIECE] if len(chunk) > _PIECE else chunk, t)
            if len(rows) >= _BATCH:
                flush()
                added += 1
    rows += dec.close()
    if (cut := cap.broke_off(size)) is not None:
        if strict:
            raise cut
        rows.append(_source_problem(cut, dec._frames, dec.provider))
    flush()
    for row, n in problems:  # a run's length is known only once it has ended
        if n in dec.runs:
            out.repeats[row] = dec.runs[n]


def load(
    source: Source,
    *,
    provider: str = "auto",
    strict: bool = True,
    name: str | None = None,
    raw: bool = False,
) -> pd.DataFrame:
    """One row per wire event of every capture in ``source``.

    ``strict=False`` turns each problem into a ``kind == "error"`` row (its
    ``problem`` says what and ``offset`` where) and keeps every good row.
    ``raw=True`` adds the frame's ``data`` text as a column.
    """
    caps = resolve(source, name, require=True)
    return load_captures(caps, provider=provider, strict=strict, raw=raw)


def load_captures(
    captures: Iterable[Capture], *, provider: str = "auto", strict: bool = True,
    raw: bool = False, bulk: bool = True,
) -> pd.DataFrame:
    """:func:`load` of captures already resolved (a parallel or Dask worker's share).

    ``bulk=False`` reads every capture with the incremental decoder alone, as the
    reference the fast path (:mod:`.bulk`) is tested against.
    """
    check_provider(provider)  # here too: the fast path makes no EventDecoder
    rebuilt: dict[str, str] = {}
    with gc_paused():
        out = _Columns(raw)
        for group in _read_ahead(captures, provider, raw, bulk):
            for ahead in group:
                _load_one(ahead, provider, strict, out, bulk)
                if ahead[0].rebuilt:
                    rebuilt[ahead[0].name] = ahead[0].rebuilt
            del group, ahead  # (its bodies and rows let go before the next group is read)
        df = out.frame()
        del out  # its lists freed while the collector is paused: none is left to traverse
    if rebuilt:  # turns whose framing, splits and timing an importer rebuilt: not the wire's
        df.attrs["rebuilt"] = rebuilt
    return df


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block.

    A load keeps hundreds of thousands of small tuples alive until the columns are built;
    none of them form cycles, but their number alone makes the collector run over and over
    (it was most of the time of a large load). Reference counting still frees everything.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
