"""Hypothesis over hostile request framing (issue #22): heads and bodies built from the
pieces smuggling is made of are either read one way only or refused with the kit's own
error, by the framing rules alone and through the proxy; nothing else escapes, and nothing
refused goes upstream."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab.traffic import _http1 as http1
from streamcalls_lab.traffic.proxy import RecordingProxy

from ..support.upstreams import Upstream

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
LIVE = settings(FUZZ, max_examples=25)

_NAMES = [b"Content-Length", b"content-length", b"Transfer-Encoding", b"X-Pad", b"Host",
          b"Content-Length ", b" Transfer-Encoding", b"\tX-Pad"]
_VALUES = [b"2", b"0", b"-1", b"+2", b"2, 2", b"0x2", b"99999999999", b"chunked",
           b"xchunked", b"chunked, gzip", b"gzip, chunked", b"gzip", b"CHUNKED", b"a\rb",
           b"a\0b", b" 2 ", b""]
_ENDS = [b"\r\n", b"\n", b"\r", b"\r\n "]
field_lines = st.lists(
    st.tuples(st.sampled_from(_NAMES), st.sampled_from([b":", b": ", b" :"]),
              st.sampled_from(_VALUES), st.sampled_from(_ENDS)).map(b"".join),
    max_size=5)
_CHUNKS = [b"2\r\n{}\r\n", b"0\r\n\r\n", b"2;x=y\r\n{}\r\n", b"zz\r\n", b"2\n{}\r\n",
           b"2\r\n{}XX", b" 2\r\n{}\r\n", b"10000000000000000\r\n", b"1000000000000\r\n",
           b"0\r\nx-t: 1\r\n\r\n", b"0\r\n x-t: 1\r\n\r\n", b"{}"]
bodies = st.lists(st.one_of(st.sampled_from(_CHUNKS), st.binary(max_size=8)),
                  max_size=6).map(b"".join)


def _framing(lines: list[bytes]) -> http1.Framing:
    """The framing of a head of ``lines``, by the rules the servers apply."""
    for line in [*lines, b"\r\n"]:
        http1.check_line(line)
    headers = [tuple(p.strip() for p in line.decode("latin-1").split(":", 1))
               for line in lines]
    return http1.framing(headers, max_body=10**6)  # type: ignore[arg-type]


@FUZZ
@given(lines=field_lines)
def test_a_head_is_read_one_way_or_refused(lines: list[bytes]) -> None:
    try:
        frame = _framing(lines)
    except http1.BadMessage as e:
        assert e.status in (400, 413, 501)
        return
    names = [line.split(b":", 1)[0].lower() for line in lines]
    assert all(line.endswith(b"\r\n") and b"\r" not in line[:-2] for line in lines)
    assert not any(line[:1] in (b" ", b"\t") for line in lines)  # no fold
    assert names.count(b"content-length") <= 1
    if frame.chunked:
        assert b"content-length" not in names and names.count(b"transfer-encoding") == 1


_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r\n")
_TRAILER = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\r\n\0]*")


def _chunks(body: bytes, limit: int) -> bytes | None:
    """RFC 9112 section 7.1, restated: the chunks' data, or None where it is not that."""
    out, at = b"", 0
    while (found := _SIZE.match(body, at)) is not None:
        n, at = int(found.group(1), 16), found.end()
        if n == 0:
            while (end := body.find(b"\r\n", at)) >= 0:
                line, at = body[at:end], end + 2
                if not line:
                    return out
                if not _TRAILER.fullmatch(line):
                    return None
            return None
        if len(out) + n > limit or body[at + n:at + n + 2] != b"\r\n":
            return None
        out, at = out + body[at:at + n], at + n + 2
    return None


@FUZZ
@given(body=bodies)
def test_a_chunked_body_is_its_chunks_or_refused(body: bytes) -> None:
    try:
        got: bytes | None = b"".join(http1.pieces(
            io.BufferedReader(io.BytesIO(body)),  # type: ignore[arg-type]
            http1.Framing(chunked=True), max_body=10**6))
    except http1.BadMessage as e:
        assert e.status in (400, 413)
        got = None
    assert got == _chunks(body, 10**6)


@LIVE
@given(lines=field_lines, body=bodies)
def test_the_proxy_forwards_only_what_it_reads_one_way(
    lines: list[bytes], body: bytes, tmp_path_factory: object,
) -> None:
    try:
        frame = _framing(lines)
    except http1.BadMessage:
        frame = None
    out = Path(tmp_path_factory.mktemp("fuzz"))  # type: ignore[attr-defined]
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + b"".join(lines)
    with Upstream() as upstream, RecordingProxy(upstream.base, out) as proxy, \
            socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(head + b"\r\n" + body)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while more := sock.recv(65536):
            answer += more
    if frame is None:
        assert re.match(rb"HTTP/1\.1 (400|413|501) ", answer), answer[:80]
        assert upstream.seen == []
    for _, headers, _ in upstream.seen:  # what went on is framed by the proxy, once
        assert b"content-length" in headers or b"transfer-encoding" in headers
        assert b"x-pad" not in headers or b"\r" not in headers[b"x-pad"]
