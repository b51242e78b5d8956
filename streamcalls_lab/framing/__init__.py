"""Framing: how a capture's bytes are cut into frames, and the one place that chooses.

Five framings give the same :class:`~.frame.Frame` tuples, so everything above reads any of
them: server-sent events (:mod:`.sse`, what most APIs stream), NDJSON (:mod:`.ndjson`,
Ollama), a streamed JSON array (:mod:`.jsonarray`, Gemini without ``?alt=sse``), AWS
event-stream (:mod:`.eventstream`, Bedrock) and type-prefixed lines (:mod:`.prefixed`, the
AI SDK 4 data stream). Each module reads its framing and writes it
(readers beside writers). :class:`AutoDecoder` picks one from a capture's first bytes;
:mod:`.containers` names the bytes that are none of them (gzip, UTF-16, an HTML page).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from .eventstream import EventStreamDecoder, is_eventstream
from .frame import Frame, FrameDecoder
from .jsonarray import JSONArrayDecoder, opens_array
from .ndjson import NDJSONDecoder, looks_like_ndjson
from .prefixed import PrefixedDecoder, looks_prefixed
from .sse import SSEDecoder, decode_frames

__all__ = [
    "AutoDecoder", "EventStreamDecoder", "Frame", "FrameDecoder", "JSONArrayDecoder",
    "NDJSONDecoder", "PrefixedDecoder", "SSEDecoder", "decode_any", "decode_frames",
]


class AutoDecoder:
    """SSE, AWS event-stream, NDJSON or a streamed JSON array, chosen from the start of a capture.

    Event-stream when its first byte is 0 or 1 (:func:`is_eventstream`); type-prefixed lines
    when it starts with a part's code, a colon and a JSON value (``0:"``, ``b:{``:
    :func:`~.prefixed.looks_prefixed`, which no SSE or NDJSON line can); NDJSON when its
    first byte that is not whitespace opens a JSON object, a JSON array (Gemini without
    ``?alt=sse``) when it opens an array (:func:`~.ndjson.looks_like_ndjson`: an SSE line
    starts with a field name or a colon, never ``{`` or ``[``); SSE otherwise. Only a
    leading run of whitespace, and then up to two bytes that may start a part, are held
    back until the choice is made; they hold no frame, so every frame comes out of the
    chosen decoder exactly when it would have.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        self.source = source
        self.strict = strict
        self.decoder: FrameDecoder | None = None
        self._held = b""

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Frame]:
        dec = self.decoder
        if dec is None:
            if not chunk:
                return []
            head = self._held + chunk
            prefixed = False if is_eventstream(head[:1]) else looks_prefixed(head)
            if prefixed is None:
                self._held = head
                return []
            if is_eventstream(head[:1]):
                dec = self._choose(EventStreamDecoder)
            elif prefixed:
                dec = self._choose(PrefixedDecoder)
            else:
                ndjson = looks_like_ndjson(head)
                if ndjson is None:
                    self._held = head
                    return []
                if not ndjson:
                    dec = self._choose(SSEDecoder)
                else:
                    dec = self._choose(JSONArrayDecoder if opens_array(head) else NDJSONDecoder)
            chunk, self._held = head, b""
        return dec.feed(chunk, t)

    def close(self) -> list[Frame]:
        dec = self.decoder
        if dec is None:  # empty, whitespace alone, or a part cut in its first bytes:
            started = self._held.lstrip(b"\xef\xbb\xbf \t\r\n")  # what is wrong with it
            dec = self._choose(PrefixedDecoder if len(started) > 1 else SSEDecoder)
            if self._held:
                out = dec.feed(self._held)
                return out + dec.close()
        return dec.close()

    def _choose(self, framing: type[FrameDecoder]) -> FrameDecoder:
        self.decoder = framing(self.source, strict=self.strict)
        return self.decoder


def decode_any(
    chunks: Iterable[bytes | tuple[float, bytes]], source: str = "<bytes>", *, strict: bool = True
) -> Iterator[Frame]:
    """:func:`~.sse.decode_frames` with the framing chosen by :class:`AutoDecoder`."""
    return decode_frames(chunks, source, strict=strict, framing=AutoDecoder)
