"""WebSocket sessions through the recording proxy: each message read off the frames as they
pass, and kept as the kit's JSON line for it.

The proxy relays a session's frames both ways unchanged (byte-exact, masked as the client
masked them); beside that, each side's bytes go through a real incremental frame parser
(wsproto's ``FrameDecoder``, RFC 6455 §5), one per direction: the server's frames unmasked,
the client's masked, as RFC 6455 §5.1 requires. A message (a text or binary frame and its
continuations, control frames allowed between them, §5.4) becomes one line when its last
frame ends::

    {"source": "server" | "client", "time": <seconds since the epoch>, "message": <JSON>}

the shape :mod:`~streamcalls_lab.providers.gemini_live` and ``openai-realtime`` read (and
the ``.wslog`` import writes), in the order the messages passed (a read's messages are saved
before it is sent on, so no answer is saved before what it answers). The message is put in
as it came, byte for byte; only a line break in it (JSON's whitespace between tokens, the
only place a JSON text can hold one) becomes a space, so the line stays one line (the
provenance counts them). Gemini Live sends its JSON in binary frames: a binary message that
is UTF-8 JSON is kept the same way.

Nothing is dropped in silence: a message that is not UTF-8 (§8.1 makes that a failure for
a text frame), not JSON, or longer than :data:`MAX_MESSAGE` is a line with ``problem``
(why) and ``bytes`` (its size) in place of ``message``, which both readers report
(:func:`~streamcalls_lab.events.ws_message`), so ``load()`` names it (strict: a
:class:`~streamcalls_lab.errors.CaptureError` at its byte; lenient: a problem row). A frame
that breaks the protocol stops the parsing of that side (the frames are still relayed: the
endpoints judge them); a session that ends inside a message or frame is marked cut off.

Compressed messages (permessage-deflate, RFC 7692) are never saved as text: the proxy takes
the client's extension offer out of the handshake, so the server sends none (the provenance
says so); a server that compresses all the same sets RSV1, which the parser refuses.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass

import orjson
from wsproto.frame_protocol import FrameDecoder, Opcode, ParseFailed

from .. import _deepjson as deepjson

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
"""RFC 6455 §1.3: the GUID a server's ``Sec-WebSocket-Accept`` hashes with the client's key."""
MAX_MESSAGE = 64 * 1024**2
"""The largest message kept (default): a longer one is a ``problem`` line, never held whole."""
SUFFIX = ".ndjson"
EXTENSIONS = "sec-websocket-extensions"


def _tokens(headers: Iterable[tuple[str, str]], name: str) -> list[str]:
    return [t.strip().lower() for k, v in headers if k.lower() == name for t in v.split(",")]


def is_upgrade(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a request asks to become a WebSocket (RFC 6455 §4.1: ``Upgrade: websocket``
    and ``Connection: Upgrade``)."""
    headers = list(headers)
    return "websocket" in _tokens(headers, "upgrade") and "upgrade" in _tokens(
        headers, "connection")


def accept_for(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` a server answers ``key`` with (RFC 6455 §4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.strip().encode("latin-1") + GUID).digest()).decode()


def refusal(key: str | None, status: int, headers: Iterable[tuple[str, str]]) -> str | None:
    """Why an upstream's answer to an upgrade is no WebSocket accepted (None when it is one):
    a 101 with ``Upgrade: websocket``, ``Connection: Upgrade`` and the accept ``key`` asks
    for (RFC 6455 §4.1, the client's checks)."""
    headers = list(headers)
    if status != 101:
        return f"the upstream answered {status}, not 101"
    if not is_upgrade(headers):
        return "the upstream's 101 names no 'Upgrade: websocket' and 'Connection: Upgrade'"
    accepts = [v.strip() for k, v in headers if k.lower() == "sec-websocket-accept"]
    if key is None or accepts != [accept_for(key)]:
        return "the upstream's 101 has no Sec-WebSocket-Accept matching the client's key"
    return None


@dataclass(frozen=True)
class Message:
    """One whole message as it passed: ``data`` its payload, or None and ``problem`` why it
    is not kept; ``size`` its length in bytes."""

    source: str
    binary: bool
    data: bytes | None
    size: int
    problem: str | None = None


class Messages:
    """One direction's frames, parsed as they pass (:meth:`feed` each read), into whole
    messages. ``masked``: the side's frames must be masked (the client's)."""

    def __init__(self, source: str, *, masked: bool, max_message: int = MAX_MESSAGE) -> None:
        self.source = source
        self.max_message = max_message
        self._frames = FrameDecoder(client=not masked)
        self._open: bytearray | None = None  # the message being read
        self._binary = False
        self._size = 0
        self._in_frame = False  # the last piece read did not end its frame
        self.offset = 0  # bytes fed
        self.broken: str | None = None
        """Why this side's frames stopped being parsed (a protocol error), if they did."""
        self.closed: list[object] | None = None
        """The Close frame's code and reason, once one passed."""
        self.controls = 0

    def feed(self, data: bytes) -> list[Message]:
        """The messages the bytes ``data`` finish."""
        start, self.offset = self.offset, self.offset + len(data)
        if self.broken is not None or self.closed is not None:
            return []
        self._frames.receive_bytes(data)
        out: list[Message] = []
        try:
            while (frame := self._frames.process_buffer()) is not None:
                out += self._frame(frame.opcode, bytes(frame.payload), frame.frame_finished,
                                   frame.message_finished)
                if self.closed is not None:
                    break
        except ParseFailed as e:
            self.broken = f"a {self.source} frame breaks RFC 6455 ({e}), in the bytes " \
                f"{start}-{self.offset} of its side"
        return out

    def _frame(self, opcode: Opcode, payload: bytes, done: bool, fin: bool) -> list[Message]:
        if opcode.iscontrol():  # whole (at most 125 bytes), between a message's frames
            self.controls += 1
            if opcode is Opcode.CLOSE:
                code = int.from_bytes(payload[:2]) if len(payload) >= 2 else None
                self.closed = [code, payload[2:].decode("utf-8", "replace")]
            return []
        out: list[Message] = []
        if not self._in_frame:  # a frame begins
            if opcode is Opcode.CONTINUATION and self._open is None:
                out.append(Message(self.source, False, None, len(payload),
                                   "a continuation frame with no message begun"))
                self._in_frame = not done
                return out
            if opcode is not Opcode.CONTINUATION:
                if self._open is not None:
                    out.append(self._problem("a message left unfinished by a new one"))
                self._open, self._binary, self._size = bytearray(), opcode is Opcode.BINARY, 0
        if self._open is None:  # the rest of a stray continuation frame
            self._in_frame = not done
            return out
        self._size += len(payload)
        if self._size <= self.max_message:
            self._open += payload
        else:
            self._open.clear()  # never held: only its size is kept
        self._in_frame = not done
        if done and fin:
            if self._size > self.max_message:
                out.append(self._problem(f"a message of {self._size:,} bytes, over the "
                                         f"{self.max_message:,} kept"))
            else:
                out.append(Message(self.source, self._binary, bytes(self._open), self._size))
            self._open = None
        return out

    def _problem(self, why: str) -> Message:
        message = Message(self.source, self._binary, None, self._size, why)
        self._open = None
        return message

    def unfinished(self) -> str | None:
        """Why this side ended early: a protocol error, or the end inside a message or a
        frame; None when it ended between messages."""
        if self.broken is not None:
            return self.broken
        if self._open is not None:
            return f"the {self.source}'s connection ended inside a message ({self._size:,} " \
                "bytes of it)"
        if self._in_frame or len(self._frames.buffer):
            return f"the {self.source}'s connection ended inside a frame"
        return None


def line(message: Message, when: float | None = None) -> tuple[bytes, str | None, bool]:
    """The JSON line for ``message`` (see the module docstring), why it holds no message
    (None when it does), and whether a line break in it became a space."""
    head = b'{"source":"%s","time":%.6f,' % (message.source.encode(),
                                               time.time() if when is None else when)
    why = message.problem
    data = message.data
    if why is None and data is not None:
        kind = "binary" if message.binary else "text"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            why = f"a {kind} message that is not UTF-8 (byte {e.start} of it)"
        else:
            try:
                deepjson.parse(data)
            except orjson.JSONDecodeError as e:
                why = f"a {kind} message that is not JSON ({e})"
    if why is not None:
        return head + orjson.dumps({"problem": why, "bytes": message.size})[1:] + b"\n", \
            why, False
    assert data is not None
    flat = data.replace(b"\r", b" ").replace(b"\n", b" ")
    return head + b'"message":' + flat + b"}\n", None, flat != data
