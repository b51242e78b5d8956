"""load()'s fast path: a whole capture's frames normalised together.

Most captures are one complete body framed the usual way (all ``data:`` lines, or
``event:`` then ``data:``). For those, :func:`~.sse.split_whole` frames the body with
counts and splits done in C, and each format's ``hot_rows`` decodes the frames that need
no state (the deltas, nearly all of a stream) into typed structs at once. The few frames
left (announcements, stops) go through ``normalize`` one by one, in order, as always.

Anything unusual sends the whole capture back to the incremental decoder: a frame that
does not decode or normalise, a format not yet known from the first frame. So this path
never reports a problem; it only ever gives the rows that path would give, faster, and
``tests/test_bulk.py`` checks that it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import orjson

from .providers import DONE, FORMATS, PAYLOAD_ERRORS, Ev, sniff
from .sse import split_whole

_COLD_ERRORS = (*PAYLOAD_ERRORS, orjson.JSONDecodeError)
_DONE_ROWS = (Ev("[DONE]", "turn_stop"),)


class Whole(NamedTuple):
    """A capture's rows, frame by frame."""

    bounds: list[int]
    """Each frame's byte offset, then the end of the capture."""
    provider: str
    rows: list[Sequence[Ev]]
    """Each frame's normalised events (one or more)."""
    raws: list[bytes]
    """Each frame's data line."""


def normalise_whole(body: bytes, provider: str = "auto") -> Whole | None:
    """The rows of a whole capture, or None when it needs the incremental decoder."""
    split = split_whole(body)
    if split is None:
        return None
    bounds, events, raws = split
    parsed = {}  # the first frame, parsed to find the format, is not parsed again
    if provider == "auto":
        try:
            first = DONE if raws[0] == b"[DONE]" else orjson.loads(raws[0])
        except orjson.JSONDecodeError:
            return None
        found = sniff(events[0], first)
        if found is None:
            return None  # a ping first: the decoder holds frames until the format shows
        provider, parsed[0] = found, first
    fmt = FORMATS[provider]()
    rows = fmt.hot_rows(events, raws)
    normalize = fmt.normalize
    for i in [i for i, r in enumerate(rows) if r is None]:
        raw = raws[i]
        if raw == b"[DONE]":  # the end-of-stream sentinel, whatever the format
            rows[i] = _DONE_ROWS
            continue
        try:
            payload = parsed.pop(i) if i in parsed else orjson.loads(raw)
            rows[i] = normalize(events[i], payload, raw.decode())
        except _COLD_ERRORS:
            return None  # the decoder says why, in strict or lenient mode
    return Whole(bounds, fmt.name, rows, raws)
