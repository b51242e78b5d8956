"""WebSocket session logs (``.wslog``): one message a line, a direction mark, its byte length.

The replay logs GenAI SDK tests record of a Live session keep each WebSocket message as
``<direction> <length> <message>``: a mark for who sent it, the message's length in bytes
(UTF-8), then the message as sent (JSON). Marks read: :data:`SERVER` (``<``, ``recv``...)
and :data:`CLIENT` (``>``, ``send``...). Each line becomes the kit's JSON line for a
WebSocket message, ``{"source": "server" | "client", "message": {...}}`` (the shape
:mod:`~streamcalls_lab.providers.gemini_live` and ``openai-realtime`` read), so the
message's JSON is re-serialised (``rebuilt`` says so) and no timing is kept.

The length is checked: a line whose message is not as long as it says was cut or altered,
and is a :class:`CaptureError` naming the line and its byte, as is a mark this does not know
or a message that is not JSON. The file must open with such a line, so a file that merely
ends in ``.wslog`` is not taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson

from .. import _deepjson as deepjson
from ..errors import CaptureError
from .stream import Stream

SERVER = frozenset(("<", "<<", "<-", "recv", "received", "server", "in"))
CLIENT = frozenset((">", ">>", "->", "send", "sent", "client", "out"))
REBUILT = ("rebuilt from a WebSocket session log: each message re-serialised as a JSON line "
           "with its direction; no timing")
_LINE = re.compile(rb"(\S+)[ \t]+(\d{1,12})[ \t]+(.*)", re.S)


def _message(line: bytes, n: int, at: int, source: str) -> bytes:
    found = _LINE.fullmatch(line.rstrip(b"\r\n"))
    if found is None:
        raise CaptureError(source, at, f"line {n} is not '<direction> <length> <message>'")
    mark, length, message = found.groups()
    direction = mark.decode("latin-1").lower()
    if direction not in SERVER | CLIENT:
        raise CaptureError(source, at, f"line {n}: unknown direction mark {mark[:20]!r}")
    if int(length) != len(message):
        raise CaptureError(source, at, f"line {n}: the message is {len(message)} bytes, the "
                                       f"log says {int(length)}: cut or altered")
    try:
        payload = deepjson.parse(message)
    except orjson.JSONDecodeError as e:
        raise CaptureError(source, at, f"line {n}: the message is not JSON: {e}") from None
    side = "server" if direction in SERVER else "client"
    return orjson.dumps({"source": side, "message": payload}) + b"\n"


def streams(path: Path) -> Iterator[Stream]:
    """The one session a log holds, as JSON lines."""
    out, at = [], 0
    for n, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
        if line.strip():
            out.append(_message(line, n, at, str(path)))
        at += len(line)
    if not out:
        raise CaptureError(str(path), 0, "no messages: the log is empty")
    meta = {"source": "ws-session-log", "origin": path.name, "rebuilt": REBUILT,
            "note": REBUILT}
    yield Stream(path.name.removesuffix(path.suffix), b"".join(out), None, meta)
