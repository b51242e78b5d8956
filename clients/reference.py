"""The correct client, standard library only: HTTP/1.1 on a socket, gzip, an incremental
UTF-8 decoder and an SSE line parser written to the spec, over the straightforward
accumulator.

``--bug NAME`` makes it one of the deliberately broken clients the harness's tests
catch: the transport's here (``decode_chunks``: each read decoded on its own, and its
silent form ``decode_chunks_replace``, with ``errors="replace"``; ``content_encoding``: asks
for gzip and reads the bytes as they come; ``splitlines``: lines cut by ``str.splitlines()``),
the others in accumulator.py.
``--accept-encoding VALUE`` is what it asks for (default ``gzip``; ``identity``: never
gzip). It runs in both of the harness's modes (loop.py).

The formats accumulator.py reads itself (Anthropic, Chat, Responses, the UI message stream)
go through the SSE parser here; every other format the harness serves (Gemini, Bedrock,
Cohere, Ollama, Mistral, ...: any framing) is read through the kit's own byte layer and
its correct accumulator (``streamcalls_lab.accumulate``), the handler ``check_handler``
holds every other to, and a broken one is that class's handler (``faults.SPECS``).


    python -m streamcalls_lab torture --client "python clients/reference.py"
"""

from __future__ import annotations

import codecs
import json
import os
import re
import socket
import sys
import urllib.parse
import zlib

from accumulator import Accumulator, bug_from_argv, emit
from loop import each_case

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEParser:
    """Lines end at CRLF, CR or LF (a CR at the end of a read may be half of a CRLF)."""

    def __init__(self, on_data, splitlines: bool = False) -> None:
        self.on_data = on_data
        self.splitlines = splitlines
        self.rest = ""
        self.after_cr = False
        self.data: list[str] = []

    def feed(self, text: str) -> None:
        if self.after_cr and text.startswith("\n"):
            text = text[1:]
        self.after_cr = False
        joined = self.rest + text
        if self.splitlines:  # the bug: str.splitlines() also ends lines at U+2028 and more
            pieces = joined.splitlines(keepends=True)
            ended = [piece for piece in pieces if piece.splitlines()[0] != piece]
            self.rest = "" if len(ended) == len(pieces) else pieces[-1]
            self.after_cr = joined.endswith("\r")
            for piece in ended:
                self.line(piece.splitlines()[0])
            return
        lines = _LINE_END.split(joined)
        self.rest = lines.pop()
        self.after_cr = joined.endswith("\r")
        for line in lines:
            self.line(line)

    def line(self, line: str) -> None:
        if not line:
            if self.data:
                self.on_data("\n".join(self.data))
            self.data = []
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            if name == "data":
                self.data.append(value[1:] if value.startswith(" ") else value)


# The transport's bugs, here rather than in the accumulator: how each read is decoded.
READ_ERRORS = {"decode_chunks": "strict", "decode_chunks_replace": "replace"}
TRANSPORT_BUGS = (*READ_ERRORS, "content_encoding", "splitlines")


def _option(name: str, default: str) -> str:
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args else default


class KitReader:
    """Any format and framing, read by the kit's byte layer into its accumulator; the
    transport's bugs done to the bytes first, as the SSE path does them to text."""

    def __init__(self, bugs: frozenset[str], fmt: str) -> None:
        from streamcalls_lab.accumulate import Accumulator as Correct
        from streamcalls_lab.faults import SPECS
        from streamcalls_lab.framing import FRAMINGS
        from streamcalls_lab.providers import FORMATS

        handled = sorted(bugs - set(TRANSPORT_BUGS))
        if len(handled) > 1:  # the kit's faulty handlers each change one decision
            raise SystemExit(f"--bug {','.join(handled)}: the kit has one handler per bug")
        handler = SPECS[handled[0]].handler if handled else Correct
        if handler is None:
            raise SystemExit(f"--bug {handled[0]}: the kit has no handler for it")
        # the transport's bugs are done to the bytes (one at a time: the first named)
        self.bug = next((b for b in sorted(bugs) if b in TRANSPORT_BUGS), None)
        self.acc = handler()
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.rest = ""
        # AWS event-stream is binary: a client that handles each read on its own parses
        # each read as whole messages (no UTF-8 to cut: a payload is whole in its message)
        self.messages = FRAMINGS[FORMATS[fmt].framing] if FORMATS[fmt].framing == (
            "eventstream") else None

    def feed(self, chunk: bytes) -> None:
        if self.bug in READ_ERRORS and self.messages is not None:
            from streamcalls_lab.errors import CaptureError

            try:  # a message split across reads raises
                whole = self.messages.decoder("<read>", strict=True)
                whole.feed(chunk)
                whole.close()
            except CaptureError:
                if self.bug == "decode_chunks":
                    raise
                return  # the silent form (a try/except around each read): the read is lost
        elif self.bug in READ_ERRORS:  # each read decoded on its own
            chunk = chunk.decode("utf-8", READ_ERRORS[self.bug]).encode("utf-8")
        elif self.bug == "splitlines":  # lines cut by str.splitlines(), joined back with \n
            text = self.rest + self.decoder.decode(chunk)
            pieces = text.splitlines(keepends=True)
            self.rest = pieces.pop() if pieces and pieces[-1] == pieces[-1].rstrip(
                "\r\n") else ""
            chunk = "".join(p.splitlines()[0] + "\n" for p in pieces).encode("utf-8")
        self.acc.feed_bytes(chunk)

    def end(self) -> None:
        if self.rest:
            self.acc.feed_bytes(self.rest.encode("utf-8"))
        for call in self.acc.finish():
            emit(call["call_id"], call["tool"], args=call["args"])


class HTTPError(Exception):
    """The response broke HTTP/1.1's framing (as http.client's IncompleteRead would say)."""


class Response:
    """An HTTP/1.1 response read off a socket (RFC 9112): its head, then its body piece by
    piece as the reads come, the chunked framing (section 7.1) undone, a piece never
    spanning two chunks. Here rather than http.client, which imports ssl and the email
    package: 60 ms of CPU at every start of a client started once per case."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buf = sock, b""
        status, *fields = self._until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        self.status = int(status.split(" ", 2)[1])
        self.headers: dict[str, str] = {}
        for line in fields:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise HTTPError(f"the connection closed inside the body ({self.buf!r} pending)")
        return data

    def _until(self, end: bytes) -> bytes:
        """Bytes up to ``end`` (taken off, not returned), reading more as needed."""
        while end not in self.buf:
            self.buf += self._recv()
        line, _, self.buf = self.buf.partition(end)
        return line

    def _take(self, left: int) -> Iterator[bytes]:
        """The next ``left`` bytes, as they come."""
        while left:
            if not self.buf:
                self.buf = self._recv()
            piece, self.buf = self.buf[:left], self.buf[left:]
            left -= len(piece)
            yield piece

    def pieces(self) -> Iterator[bytes]:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            while size := int(self._until(b"\r\n").split(b";")[0].strip(), 16):
                yield from self._take(size)
                if self._until(b"\r\n"):
                    raise HTTPError("a chunk's data did not end with CRLF")
            while self._until(b"\r\n"):  # the trailer section, to its empty line
                pass
        elif "content-length" in self.headers:
            yield from self._take(int(self.headers["content-length"]))
        else:  # read to the close
            if self.buf:
                yield self.buf
            while data := self.sock.recv(65536):
                yield data


def _reads(bugs: frozenset[str]) -> Iterator[bytes]:
    """The case's body, read by read (gunzipped unless the bug is not to)."""
    base = urllib.parse.urlsplit(os.environ["STREAMCALLS_BASE_URL"])
    body = json.dumps({"stream": True}).encode()
    head = (f"POST {os.environ['STREAMCALLS_PATH']} HTTP/1.1\r\nHost: {base.netloc}\r\n"
            f"Accept-Encoding: {_option('--accept-encoding', 'gzip')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    with socket.create_connection((base.hostname, base.port), timeout=30) as sock:
        sock.sendall(head.encode("latin-1") + body)
        resp = Response(sock)
        gunzip = zlib.decompressobj(wbits=31) if (
            resp.headers.get("content-encoding") == "gzip"
            and "content_encoding" not in bugs) else None
        for chunk in resp.pieces():
            yield gunzip.decompress(chunk) if gunzip is not None else chunk


def main() -> None:
    bugs = bug_from_argv()
    fmt = os.environ["STREAMCALLS_FORMAT"]
    if not hasattr(Accumulator, "_" + fmt.replace("-", "_")):
        reader = KitReader(bugs, fmt)
        for chunk in _reads(bugs):
            reader.feed(chunk)
        reader.end()
        return
    acc = Accumulator(fmt, bugs - set(TRANSPORT_BUGS))
    decoder = codecs.getincrementaldecoder("utf-8")()
    errors = next((READ_ERRORS[b] for b in sorted(bugs) if b in READ_ERRORS), None)
    parser = SSEParser(acc.event, splitlines="splitlines" in bugs)
    for chunk in _reads(bugs):
        parser.feed(chunk.decode("utf-8", errors) if errors
                    else decoder.decode(chunk))
    parser.feed(decoder.decode(b"", final=True))
    acc.end()


if __name__ == "__main__":
    each_case(main)
