"""SVG diagrams of the turn on screen: what the course draws, computed from the capture itself.

``calls_diagram`` draws each call of a turn as the correct accumulator met it (announcement,
its fragments as boxes, the buffer they were joined into, the stop that closed it);
``layers_diagram`` draws the two layers of concatenation (a socket read that ends inside a
character, then fragments joined into arguments). Both read ``load()`` rows and the kit's own
:class:`~.accumulate.Accumulator`, so a diagram is true for any capture, and both return SVG
text: every captured string passes through :func:`.display.inert` (characters that would act
become escapes) and is then XML-escaped, so nothing captured is ever live markup.
"""

from __future__ import annotations

import codecs
import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ._calls import _CALL_KINDS, _FED
from .accumulate import Accumulator, CallBuffer, present
from .display import inert
from .framing.sse import is_utf8

_CHAR_W = 7.3  # px per character of the 12 px monospace text
_PAD = 8
_BOX_H = 24
_GAP = 6
WIDTH = 920
MAX_FRAGMENTS = 48
"""Fragments drawn per call; the rest are one box that counts them (a call can have
thousands)."""
MAX_SHOWN = 32
"""Characters of a fragment or buffer drawn in its box; its ``<title>`` holds all of it."""
_STYLE = (
    "<style>text{font:12px monospace;white-space:pre}.cap{font:bold 13px sans-serif}"
    ".note{font:12px sans-serif}.ann{fill:#dbeafe;stroke:#1d4ed8}.frag{fill:#fef9c3;"
    "stroke:#a16207}.buf{fill:#dcfce7;stroke:#15803d}.stop{fill:#e5e7eb;stroke:#374151}"
    ".none{fill:#fee2e2;stroke:#b91c1c;stroke-dasharray:4 3}.cut{fill:#fecaca;stroke:#b91c1c}"
    ".byte{fill:#f3f4f6;stroke:#9ca3af}</style>"
)


def _x(text: str) -> str:
    """Text for SVG: already inert, now XML-escaped (quotes too, for attributes)."""
    return html.escape(text, quote=True)


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """A captured string as drawn in a box: inert, spaces as ``␣`` (a fragment's edge space
    is data), cut to ``limit`` characters."""
    return inert(text, limit).replace(" ", "␣")


@dataclass(frozen=True)
class DrawnCall:
    """One call as the diagram draws it, read off the kit's accumulator."""

    buffer: CallBuffer
    stop: str | None
    """The provider's name of the event that closed the call (None: no stop came)."""


def turn_calls(deltas: pd.DataFrame, turn: str) -> list[DrawnCall]:
    """The calls of one turn of a ``load()`` table, in order of announcement, each with its
    fragments (exactly as sent) and the event that closed it."""
    rows = deltas[(deltas["turn"] == turn) & deltas["kind"].isin(list(_CALL_KINDS))]
    acc = Accumulator()
    stops: dict[int, str] = {}
    names = rows["event"].tolist() if "event" in rows else [None] * len(rows)
    fed = zip(*(rows[c].tolist() if c in rows else [None] * len(rows) for c in _FED),
              strict=True)
    for name, values in zip(names, fed, strict=True):
        event = {k: present(v) for k, v in zip(_FED, values, strict=True)}
        open_before = {id(b) for b in acc.calls if not b.complete}
        acc.feed(event)
        for buf in acc.calls:
            if id(buf) in open_before and buf.complete:
                stops[id(buf)] = str(present(name) or event["kind"])
    return [DrawnCall(b, stops.get(id(b))) for b in acc.calls]


class _Canvas:
    """Boxes and arrows laid out left to right, wrapping at the canvas width."""

    def __init__(self, title: str, description: str) -> None:
        self.parts: list[str] = []
        self.title, self.description = title, description
        self.y = 8.0

    def caption(self, text: str, cls: str = "cap") -> None:
        self.y += 16
        self.parts.append(f'<text class="{cls}" x="8" y="{self.y:.0f}">{_x(text)}</text>')
        self.y += 8

    def row(self, boxes: Sequence[tuple[str, str, str]]) -> None:
        """``boxes``: (css class, text drawn, full text for the box's title), joined by
        arrows, wrapped onto as many lines as they need."""
        x, y = 8.0, self.y
        for i, (cls, text, full) in enumerate(boxes):
            w = len(text) * _CHAR_W + 2 * _PAD
            if i and x + w > WIDTH - 8:
                x, y = 8.0, y + _BOX_H + _GAP
            self.parts.append(
                f'<g><title>{_x(full)}</title><rect class="{cls}" x="{x:.0f}" y="{y:.0f}" '
                f'width="{w:.0f}" height="{_BOX_H}" rx="3"/><text x="{x + _PAD:.0f}" '
                f'y="{y + 16:.0f}">{_x(text)}</text></g>')
            x += w + _GAP
        self.y = y + _BOX_H + _GAP

    def svg(self) -> str:
        height = self.y + 8
        return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" '
                f'height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" '
                f'aria-labelledby="t d"><title id="t">{_x(self.title)}</title>'
                f'<desc id="d">{_x(self.description)}</desc>{_STYLE}{"".join(self.parts)}</svg>')


def _fragment_boxes(parts: Sequence[str]) -> list[tuple[str, str, str]]:
    boxes = [("frag", shown(p), f"fragment {i + 1}: {inert(p)}")
             for i, p in enumerate(parts[:MAX_FRAGMENTS])]
    if len(parts) > MAX_FRAGMENTS:
        more = len(parts) - MAX_FRAGMENTS
        boxes.append(("frag", f"… {more} more", f"{more} more fragments, not drawn"))
    return boxes


def _call_row(canvas: _Canvas, n: int, drawn: DrawnCall) -> None:
    buf = drawn.buffer
    where = f"block {buf.block}" + ("" if not buf.choice else f" of choice {buf.choice}")
    canvas.caption(f"call {n}, {where}: {inert(buf.tool or '(no name)', 60)}")
    announce = f"announce {inert(buf.tool or '?', 24)} {inert(buf.call_id or '', 24)}".strip()
    full = f"announcement: tool {inert(buf.tool)}, id {inert(buf.call_id)}, {where}"
    stop = (("stop", drawn.stop, f"stop: {drawn.stop} closed {where}") if drawn.stop else
            ("none", "no stop", "no stop came: the correct handler hands nothing on"))
    canvas.row([("ann", announce, full), *_fragment_boxes([p for p in buf.parts if p])])
    canvas.row([("buf", f"buffer = {shown(buf.args)}",
                 f"buffer of {where}, joined as sent: {inert(buf.args)}"), stop])


def calls_diagram(deltas: pd.DataFrame, turn: str) -> str:
    """SVG: each call of ``turn`` as announcement → fragments → buffer for its block → stop."""
    drawn = turn_calls(deltas, turn)
    canvas = _Canvas(
        f"The calls of {inert(turn, 80)}: announcement, fragments, buffer per block, stop",
        f"{len(drawn)} calls; each fragment box holds one argument fragment exactly as sent "
        "(a space drawn as ␣); the green box is the buffer those fragments were joined into, "
        "the last box the event that closed the call.")
    for n, call in enumerate(drawn, 1):
        _call_row(canvas, n, call)
    if not drawn:
        canvas.caption("this turn has no tool call", "note")
    return canvas.svg()


@dataclass(frozen=True)
class Split:
    """A read boundary that falls inside a character."""

    start: int
    """Byte offset of the character."""
    char: str
    boundary: int
    """Byte offset of the read boundary inside it."""


def first_split(raw: bytes, read_size: int) -> Split | None:
    """The first UTF-8 character of ``raw`` (two to four bytes, valid) that a read boundary
    at a multiple of ``read_size`` cuts, or None."""
    i = 0
    while i < len(raw):
        lead = raw[i]
        width = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else (
            4 if 0xF0 <= lead <= 0xF4 else 0)
        if width:
            try:
                char = raw[i:i + width].decode("utf-8")
            except UnicodeDecodeError:
                width = 0
            else:
                cut = (i // read_size + 1) * read_size
                if cut < i + width:
                    return Split(i, char, cut)
        i += width or 1
    return None


def split_read_size(raw: bytes, sizes: range = range(5, 65)) -> int | None:
    """The smallest read size in ``sizes`` at which some read ends inside a character."""
    return next((n for n in sizes if first_split(raw, n) is not None), None)


def _reads(raw: bytes, split: Split, read_size: int) -> list[bytes]:
    first = split.boundary - read_size
    return [raw[first:split.boundary], raw[split.boundary:split.boundary + read_size]]


def _bytes_layer(canvas: _Canvas, raw: bytes, read_size: int | None, what: str) -> None:
    size = read_size or split_read_size(raw)
    split = first_split(raw, size) if size else None
    if split is None or size is None:
        canvas.caption("Layer 1, bytes → characters", "cap")
        ascii_only = raw.isascii()
        canvas.caption("every byte of this capture is ASCII, so no read can end inside a "
                       "character" if ascii_only else f"no read of {size or '5 to 64'} bytes "
                       "ends inside one of this capture's multi-byte characters", "note")
        canvas.caption("decoding each read on its own works here, and breaks on a capture "
                       "with é or an emoji cut between two reads", "note")
        return
    reads = _reads(raw, split, size)
    canvas.caption(f"Layer 1, bytes → characters: {what} in reads of {size} bytes; the read "
                   f"ending at "
                   f"byte {split.boundary} cuts {inert(split.char)!s} "
                   f"({len(split.char.encode())} bytes at offset {split.start})")
    incremental = codecs.getincrementaldecoder("utf-8")("replace")
    incremental.decode(raw[:split.boundary - size])  # the reads before: the state they leave
    for k, data in enumerate(reads):
        start = split.boundary - size if k == 0 else split.boundary
        cells = [("cut" if split.start <= start + j < split.start
                  + len(split.char.encode()) else "byte", f"{b:02x}", f"byte {start + j}: "
                  f"0x{b:02x}") for j, b in enumerate(data)]
        canvas.row([("stop", f"read {k + 1}", f"bytes {start} to {start + len(data) - 1}"),
                    *cells])
        alone = data.decode("utf-8", "replace")
        kept = incremental.decode(data)  # the stream goes on: never final here
        canvas.row([("none", f"decoded alone: {shown(alone, 40)}",
                     f"read {k + 1} decoded on its own: {inert(alone)}"),
                    ("buf", f"incremental: {shown(kept, 40)}",
                     f"read {k + 1} through an incremental decoder: {inert(kept)}")])


def layers_diagram(raw: bytes, deltas: pd.DataFrame, turn: str,
                   read_size: int | None = None) -> str:
    """SVG of the two layers of one capture: reads of ``raw`` cut at ``read_size`` bytes
    (default: the smallest size at which a read ends inside a character) decoded alone and
    incrementally; then the first call of ``turn`` with fragments, its fragments joined."""
    canvas = _Canvas(
        f"Two layers in {inert(turn, 80)}: bytes to characters, fragments to arguments",
        "Layer 1: socket reads of the capture's bytes, each decoded on its own (a character "
        "cut between reads becomes U+FFFD) and through an incremental decoder (it holds the "
        "first bytes until the rest arrive). Layer 2: one call's argument fragments, joined "
        "as sent into its arguments.")
    calls = [c for c in turn_calls(deltas, turn) if any(c.buffer.parts)]
    if is_utf8(raw) or not calls:
        _bytes_layer(canvas, raw, read_size, "the capture's bytes")
    else:  # binary framing (AWS event-stream): text exists only inside the decoded frames
        canvas.caption("this capture's framing is binary, not UTF-8 text: its frames are "
                       "decoded first, and the text they carry is cut like this", "note")
        _bytes_layer(canvas, calls[0].buffer.args.encode(), read_size,
                     "the first call's arguments, as UTF-8")
    canvas.caption("Layer 2, fragments → arguments")
    if not calls:
        canvas.caption("this turn has no argument fragment", "note")
        return canvas.svg()
    buf = calls[0].buffer
    canvas.row([*_fragment_boxes([p for p in buf.parts if p]),
                ("buf", f"arguments = {shown(buf.args)}",
                 f"arguments of {inert(buf.tool)}: {inert(buf.args)}")])
    return canvas.svg()
