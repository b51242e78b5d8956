"""The correct client, standard library only: HTTP, gzip, an incremental UTF-8 decoder and
an SSE line parser written to the spec, over the straightforward accumulator.

``--bug NAME`` makes it one of the deliberately broken clients the harness's tests
catch: the transport's here (``decode_chunks``: each read decoded on its own, and its
silent form ``decode_chunks_replace``, with ``errors="replace"``; ``content_encoding``: asks
for gzip and reads the bytes as they come; ``splitlines``: lines cut by ``str.splitlines()``),
the others in accumulator.py.
``--accept-encoding VALUE`` is what it asks for (default ``gzip``; ``identity``: never
gzip). It runs in both of the harness's modes (loop.py).

    python -m streamcalls_lab torture --client "python clients/reference.py"
"""

from __future__ import annotations

import codecs
import http.client
import json
import os
import re
import sys
import urllib.parse
import zlib

from accumulator import Accumulator, bug_from_argv
from loop import each_case

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


def main() -> None:
    bugs = bug_from_argv()
    fmt = os.environ["STREAMCALLS_FORMAT"]
    base = urllib.parse.urlsplit(os.environ["STREAMCALLS_BASE_URL"])
    acc = Accumulator(fmt, bugs - set(TRANSPORT_BUGS))
    conn = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
    conn.request("POST", os.environ["STREAMCALLS_PATH"], body=json.dumps({"stream": True}),
                 headers={"content-type": "application/json",
                          "accept-encoding": _option("--accept-encoding", "gzip")})
    resp = conn.getresponse()
    gunzip = zlib.decompressobj(wbits=31) if (resp.getheader("content-encoding") == "gzip"
                                              and "content_encoding" not in bugs) else None
    decoder = codecs.getincrementaldecoder("utf-8")()
    errors = next((READ_ERRORS[b] for b in sorted(bugs) if b in READ_ERRORS), None)
    parser = SSEParser(acc.event, splitlines="splitlines" in bugs)
    while chunk := resp.read1(65536):
        if gunzip is not None:
            chunk = gunzip.decompress(chunk)
        parser.feed(chunk.decode("utf-8", errors) if errors
                    else decoder.decode(chunk))
    parser.feed(decoder.decode(b"", final=True))
    acc.end()
    conn.close()


if __name__ == "__main__":
    each_case(main)
