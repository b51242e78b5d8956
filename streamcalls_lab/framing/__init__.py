"""Framing: how a capture's bytes are cut into frames, and the one place that chooses.

Five framings, each declared once (a ``FRAMING``, :class:`~.spec.Framing`, listed in
:data:`FRAMINGS`), give the same :class:`~.frame.Frame` tuples, so everything above reads any of
them: server-sent events (:mod:`.sse`, what most APIs stream), NDJSON (:mod:`.ndjson`,
Ollama), a streamed JSON array (:mod:`.jsonarray`, Gemini without ``?alt=sse``), AWS
event-stream (:mod:`.eventstream`, Bedrock) and type-prefixed lines (:mod:`.prefixed`, the
AI SDK 4 data stream). Each module reads its framing and writes it
(readers beside writers). :class:`AutoDecoder` picks one from a capture's first bytes;
:mod:`.containers` names the bytes that are none of them (gzip, UTF-16, an HTML page).
"""

from __future__ import annotations

import math as _math
from collections.abc import Iterable as _Iterable
from collections.abc import Iterator as _Iterator

from . import eventstream, jsonarray, ndjson, prefixed, sse
from .eventstream import EventStreamDecoder
from .frame import Frame, FrameDecoder
from .jsonarray import JSONArrayDecoder
from .ndjson import NDJSONDecoder
from .prefixed import PrefixedDecoder
from .spec import Framing, Served, Transport, Values, Written
from .sse import SSEDecoder, decode_frames

__all__ = [
    "FRAMINGS", "AutoDecoder", "EventStreamDecoder", "Frame", "FrameDecoder", "Framing",
    "JSONArrayDecoder", "NDJSONDecoder", "PrefixedDecoder", "SSEDecoder", "Served", "Transport",
    "Values", "Written", "decode_any", "decode_frames", "detect", "framing_of",
]

FRAMINGS: dict[str, Framing] = {
    f.name: f
    for f in (
        eventstream.FRAMING,  # first byte 0 or 1: no text starts so
        prefixed.FRAMING,  # a code, a colon, a JSON value: no SSE or NDJSON line starts so
        jsonarray.FRAMING,  # "[" first
        ndjson.FRAMING,  # "{" first (an SSE line starts with a field name or a colon)
        sse.FRAMING,  # anything else
    )
}
"""Every framing, in the one order a capture's first bytes are asked about: ``load``,
``frames``, the importers, ``redact``, ``replay`` and ``serve`` all choose here."""


def detect(head: bytes) -> Framing | None:
    """The framing a capture starting with ``head`` is in: the first in :data:`FRAMINGS`
    order that claims it; None while one asked before it cannot tell yet (more bytes will)."""
    for framing in FRAMINGS.values():
        claimed = framing.detect(head)
        if claimed is None:
            return None
        if claimed:
            return framing
    raise AssertionError("SSE claims every capture")  # pragma: no cover


def framing_of(body: bytes) -> Framing:
    """The framing of a whole capture (:func:`detect` with every byte there is; a capture too
    short to tell is read as SSE, which reports what is wrong with it)."""
    return detect(body) or FRAMINGS["sse"]


class AutoDecoder:
    """Any framing, chosen from the start of a capture by :func:`detect` (:data:`FRAMINGS`).

    Event-stream when its first byte is 0 or 1 (:func:`~.eventstream.is_eventstream`);
    type-prefixed lines when it starts with a part's code, a colon and a JSON value (``0:"``,
    ``b:{``: :func:`~.prefixed.looks_prefixed`, which no SSE or NDJSON line can); a JSON
    array (Gemini without ``?alt=sse``) when its first byte that is not whitespace opens an
    array, NDJSON when it opens an object (:func:`~.ndjson.looks_like_ndjson`: an SSE line
    starts with a field name or a colon, never ``{`` or ``[``); SSE otherwise. Only a
    leading run of whitespace, and then up to two bytes that may start a part, are held
    back until the choice is made; they hold no frame, so every frame comes out of the
    chosen decoder exactly when it would have.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        self.source = source
        self.strict = strict
        self.decoder: FrameDecoder | None = None
        self.framing: Framing | None = None
        self._held = b""

    def feed(self, chunk: bytes, t: float = _math.nan) -> list[Frame]:
        dec = self.decoder
        if dec is None:
            if not chunk:
                return []
            head = self._held + chunk
            framing = detect(head)
            if framing is None:
                self._held = head
                return []
            dec = self._choose(framing)
            chunk, self._held = head, b""
        return dec.feed(chunk, t)

    def close(self) -> list[Frame]:
        dec = self.decoder
        if dec is None:  # empty, whitespace alone, or a part cut in its first bytes:
            started = self._held.lstrip(b"\xef\xbb\xbf \t\r\n")  # what is wrong with it
            dec = self._choose(FRAMINGS["prefixed" if len(started) > 1 else "sse"])
            if self._held:
                out = dec.feed(self._held)
                return out + dec.close()
        return dec.close()

    def _choose(self, framing: Framing) -> FrameDecoder:
        self.framing = framing
        self.decoder = framing.decoder(self.source, strict=self.strict)
        return self.decoder


def decode_any(
    chunks: _Iterable[bytes | tuple[float, bytes]], source: str = "<bytes>", *, strict: bool = True
) -> _Iterator[Frame]:
    """:func:`~.sse.decode_frames` with the framing chosen by :class:`AutoDecoder`."""
    return decode_frames(chunks, source, strict=strict, framing=AutoDecoder)
