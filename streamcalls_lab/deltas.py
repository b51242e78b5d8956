"""``load()``: captured bytes to a dataframe with one row per wire event."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import orjson
import pandas as pd

from .errors import CaptureError
from .providers import DONE, FORMATS, KINDS, Ev, sniff
from .sources import Capture, Source, resolve
from .sse import Frame, decode_frames

UNKNOWN = "unknown"
COLUMNS = (
    "turn", "seq", "offset", "t", "provider", "event", "kind", "block", "call_id",
    "tool", "fragment", "chars", "wire_chars", "frame", "final", "problem",
)


def frames(source: Source, *, strict: bool = True, name: str | None = None) -> Iterator[Frame]:
    """SSE frames of a source, in order (all captures of a directory, one after another)."""
    for cap in resolve(source, name):
        yield from decode_frames(cap.chunks, cap.name, strict=strict)


class _Columns:
    """Column lists grown row by row, turned into a dataframe once at the end."""

    def __init__(self, raw: bool) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in COLUMNS if c != "chars"}
        self.raw: list[str | None] | None = [] if raw else None

    def add(self, turn: str, seq: int, fr: Frame, n: int, provider: str, ev: Ev) -> None:
        c = self.cols
        c["turn"].append(turn)
        c["seq"].append(seq)
        c["offset"].append(fr.offset)
        c["t"].append(fr.t)
        c["provider"].append(provider)
        c["event"].append(ev.event)
        c["kind"].append(ev.kind)
        c["block"].append(ev.block)
        c["call_id"].append(ev.call_id)
        c["tool"].append(ev.tool)
        c["fragment"].append(ev.fragment)
        c["wire_chars"].append(ev.wire_chars)
        c["frame"].append(n)
        c["final"].append(ev.final)
        c["problem"].append(ev.problem)
        if self.raw is not None:
            self.raw.append(fr.data)

    def frame(self) -> pd.DataFrame:
        c = self.cols
        fragment = pd.array(c["fragment"], dtype="str")
        df = pd.DataFrame(
            {
                "turn": pd.array(c["turn"], dtype="str"),
                "seq": pd.array(c["seq"], dtype="int64"),
                "offset": pd.array(c["offset"], dtype="int64"),
                "t": pd.array(c["t"], dtype="float64"),
                "provider": pd.Categorical(c["provider"]),
                "event": pd.array(c["event"], dtype="str"),
                "kind": pd.Categorical(c["kind"], categories=KINDS),
                "block": pd.array(c["block"], dtype="Int64"),
                "call_id": pd.array(c["call_id"], dtype="str"),
                "tool": pd.array(c["tool"], dtype="str"),
                "fragment": fragment,
                "chars": pd.Series(fragment).str.len().astype("Int64"),
                "wire_chars": pd.array(c["wire_chars"], dtype="Int64"),
                "frame": pd.array(c["frame"], dtype="int64"),
                "final": pd.array(c["final"], dtype="str"),
                "problem": pd.array(c["problem"], dtype="str"),
            }
        )
        if self.raw is not None:
            df["data"] = pd.array(self.raw, dtype="str")
        return df


def _undetected(event: str, payload: Any) -> Ev:
    """A frame of a stream whose format never showed itself."""
    if event == "error" or (isinstance(payload, dict) and "error" in payload):
        err = payload.get("error", payload) if isinstance(payload, dict) else payload
        msg = err.get("message", err) if isinstance(err, dict) else err
        return Ev(event, "error", problem=f"provider error: {str(msg)[:300]}")
    return Ev(event, "other")


def _load_one(cap: Capture, provider: str, strict: bool, out: _Columns) -> None:
    if provider != "auto" and provider not in FORMATS:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(FORMATS)}")
    fmt = FORMATS[provider]() if provider != "auto" else None
    pending: list[tuple[Frame, int, Any]] = []
    seq = 0

    def emit(fr: Frame, n: int, evs: list[Ev]) -> None:
        nonlocal seq
        name = fmt.name if fmt is not None else UNKNOWN
        for ev in evs:
            out.add(cap.name, seq, fr, n, name, ev)
            seq += 1

    def problem(fr: Frame, n: int, reason: str) -> None:
        if strict:
            raise CaptureError(cap.name, fr.offset, reason)
        emit(fr, n, [Ev(fr.event, "error", problem=reason)])

    def interpret(fr: Frame, n: int, payload: Any) -> None:
        if payload is DONE:  # the end-of-stream sentinel, whatever the format
            emit(fr, n, [Ev("[DONE]", "turn_stop")])
            return
        try:
            evs = fmt.normalize(fr.event, payload, fr.data)
        except (KeyError, TypeError, AttributeError, IndexError) as e:
            problem(fr, n, f"unexpected {fmt.name} payload: {type(e).__name__}: {e}")
            return
        emit(fr, n, evs)

    for n, fr in enumerate(decode_frames(cap.chunks, cap.name, strict=strict)):
        if fr.problem is not None:
            emit(fr, n, [Ev(fr.event, "error", problem=fr.problem)])
            continue
        if fr.data == "[DONE]":
            payload: Any = DONE
        else:
            try:
                payload = orjson.loads(fr.data)
            except orjson.JSONDecodeError as e:
                problem(fr, n, f"invalid JSON in data: {e}")
                continue
        if fmt is None:
            found = sniff(fr.event, payload)
            if found is None:
                pending.append((fr, n, payload))
                continue
            fmt = FORMATS[found]()
            for held in pending:
                interpret(*held)
            pending.clear()
        interpret(fr, n, payload)
    for fr, n, payload in pending:  # the format never showed itself
        emit(fr, n, [_undetected(fr.event, payload)])


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
    out = _Columns(raw)
    for cap in resolve(source, name):
        _load_one(cap, provider, strict, out)
    return out.frame()


def nan_to_none(value: Any) -> Any:
    """Missing values from a dataframe row (NaN, NA) as None."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value
