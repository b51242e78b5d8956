"""HTTP/1.1 message framing held to RFC 9112, for every message the kit parses.

A proxy that reads a message's length one way while the server behind it reads it
another is desynchronised: the rest of one client's body becomes another client's
request (request smuggling). So ``proxy`` and ``serve`` take only framing that can
be read one way, and refuse the rest with 400 and a closed connection before any
of it goes on:

- every line of the head ends in CRLF, and holds no other CR, LF or NUL (§2.2);
- the request line is ``method SP target SP HTTP/x.y`` (no HTTP/0.9 line, no tabs or
  doubled spaces, §3), its target a path or an http(s) URL (§3.2: put after an
  upstream's address, ``@host/x`` would name another host);
- no line folded onto the one before it (obs-fold: a line starting with SP/HTAB,
  §5.2), no whitespace between a field name and its colon (§5.1), no ``_`` in a field
  name (a CGI-style server behind reads it as ``-``), no control character but HTAB in
  a value and no whitespace around it but SP and HTAB (RFC 9112 §5.1 OWS: no ``\x0b``,
  no NBSP);
- ``CONNECT`` answered 501 (RFC 9110 §9.3.6: a tunnel neither offers);
- ``Host`` at most once (§3.2);
- ``Content-Length`` at most once, as 1*DIGIT of at most 18 significant digits (§6.3):
  a repeated one is refused even when the copies agree, since a server behind may add
  them up or take either;
- ``Transfer-Encoding`` only as a single, final ``chunked`` (§6.1, §6.3): a coding
  this does not know (``xchunked``), ``gzip`` alone or ``chunked, gzip`` is 400,
  a coding before ``chunked`` 501; never with ``Content-Length``, never in HTTP/1.0;
- chunk-size lines of 1*HEXDIG (with extensions free of control characters), each
  chunk followed by CRLF (§7.1).

A body is read in pieces of at most :data:`PIECE` bytes, never whole; a declared
size over the reader's maximum is refused (413) before any of it is read.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

PIECE = 1 << 16
"""The most of a body read (and held) at once."""
MAX_LINE = 8192
"""The longest chunk-size or trailer line read."""
MAX_TRAILERS = 100
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\0-\x08\x0a-\x1f\x7f]*)?\r\n")
_CONTROL = re.compile(rb"[\0-\x08\x0a-\x1f\x7f]")  # field-value: no C0 control but HTAB
_REQUEST_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ ]+ HTTP/[0-9]\.[0-9]")


class BadMessage(ValueError):
    """Framing that cannot be read one way only: answered with ``status`` and a closed
    connection."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class Framing:
    """How a message's body is delimited: ``chunked``, else ``length`` bytes."""

    length: int = 0
    chunked: bool = False


def check_line(line: bytes, *, first: bool = False) -> None:
    """One line of a head (the request line when ``first``, else a field line, with its
    CRLF): raises :class:`BadMessage` for bare CR or LF, NUL, obs-fold and a bad name."""
    if not line.endswith(b"\r\n"):
        raise BadMessage("a line of the head does not end in CRLF")
    body = line[:-2]
    if b"\r" in body or b"\n" in body or b"\0" in body:
        raise BadMessage("a bare CR, LF or NUL in the head")
    if first:  # method SP target SP HTTP/x.y: no HTTP/0.9 line, which has no headers
        if _REQUEST_LINE.fullmatch(body) is None:
            raise BadMessage("a request line that is not 'method target HTTP/x.y'")
        return
    if not body:
        return
    if body[:1] in (b" ", b"\t"):
        raise BadMessage("a header folded over two lines (obs-fold)")
    name, colon, value = body.partition(b":")
    if not colon or not _TOKEN.fullmatch(name):
        raise BadMessage("a header line that is not 'name: value' (a space before the "
                         "colon, or no colon)")
    if b"_" in name:  # CGI/WSGI-style servers read it as '-': Transfer_Encoding is two things
        raise BadMessage("a header name with '_' (a server behind may read it as '-')")
    if _CONTROL.search(value):
        raise BadMessage("a control character in a header value")
    text = value.decode("latin-1").strip(" \t")
    if text != text.strip():  # NBSP, \x85, \x1c...: whitespace only to str.strip()
        raise BadMessage("a header value with whitespace around it that is not SP or HTAB "
                         "(RFC 9112 OWS)")


def check_target(method: str, target: str) -> None:
    """A request target in origin form (``/path?query``) or absolute form
    (``http://host/path``) (RFC 9112 §3.2); anything else
    (``v1/x``, ``@host/x``, and ``*``, which has no path to put a prefix before) is
    400: put after an upstream's address it names another URL, or none."""
    if method == "CONNECT":  # RFC 9110 §9.3.6: a tunnel, which neither proxy nor serve offers
        raise BadMessage("CONNECT (a tunnel) is not supported", 501)
    if target.startswith("/"):
        return
    scheme, sep, _ = target.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        return
    raise BadMessage("a request target that is not a path (origin form) or a URL")


def framing(headers: Iterable[tuple[str, str]], version: str = "HTTP/1.1", *,
            max_body: int | None = None, request: bool = True) -> Framing:
    """The framing ``headers`` declare, or :class:`BadMessage` when it is ambiguous (see
    the module docstring); a ``Content-Length`` over ``max_body`` is 413."""
    lengths: list[str] = []
    codings: list[str] = []
    hosts = 0
    for name, value in headers:
        key = name.lower()
        hosts += key == "host"
        if key == "content-length":
            lengths.append(value.strip())
        elif key == "transfer-encoding":
            codings += [c.strip().lower() for c in value.split(",")]
    if request and hosts > 1:  # §3.2: which one names the target depends on who reads it
        raise BadMessage("Host given more than once")
    if codings:
        if version == "HTTP/1.0":
            raise BadMessage("Transfer-Encoding in an HTTP/1.0 message")
        if lengths:
            raise BadMessage("both Transfer-Encoding and Content-Length")
        if codings[-1] != "chunked" or codings.count("chunked") != 1:
            raise BadMessage(f"Transfer-Encoding {', '.join(codings)[:60]!r}: chunked must "
                             "be the last coding, once")
        if len(codings) > 1:
            raise BadMessage(f"transfer coding {codings[0][:30]!r} is not supported", 501)
        return Framing(chunked=True)
    if len(lengths) > 1:
        raise BadMessage("Content-Length given more than once")
    if not lengths:
        return Framing()
    text = lengths[0]
    if not text.isascii() or not text.isdigit():
        raise BadMessage(f"Content-Length {text[:40]!r} is not a number of bytes")
    digits = text.lstrip("0") or "0"
    if len(digits) > 18:  # past any body, and int() refuses 4,300 digits with a ValueError
        raise BadMessage(f"a Content-Length of {len(digits)} digits", 413 if request else 400)
    length = int(digits)
    if request and max_body is not None and length > max_body:
        raise BadMessage(f"a body of {length} bytes is over the {max_body} this reads", 413)
    return Framing(length=length)


def check_response(headers: Iterable[tuple[str, str]], version: int) -> Framing:
    """The framing of an upstream's answer (``headers`` as http.client parsed them,
    ``version`` as it gives it: 10, 11), or :class:`BadMessage`: a folded or CR-split line
    survives in a value, and the length rules are a request's."""
    headers = list(headers)
    if any("\r" in v or "\n" in v for _, v in headers):
        raise BadMessage("a header folded over two lines, or a bare CR")
    return framing(headers, f"HTTP/{version / 10:.1f}", request=False)


def pieces(rfile: io.BufferedIOBase, frame: Framing, *, max_body: int | None = None,
           size: int = PIECE) -> Iterator[bytes]:
    """The body ``frame`` delimits, read from ``rfile`` in pieces of at most ``size``
    bytes; :class:`BadMessage` for a chunk framing error, a body that ends early, or
    chunks adding up past ``max_body`` (413, before that chunk is read)."""
    if not frame.chunked:
        left = frame.length
        while left:
            data = rfile.read1(min(left, size))  # what has come, not a wait for all
            if not data:
                raise BadMessage("the body ended before its Content-Length")
            left -= len(data)
            yield data
        return
    total = 0
    while True:
        line = rfile.readline(MAX_LINE + 1)
        found = _CHUNK_SIZE.fullmatch(line)
        if found is None:
            raise BadMessage("a chunk-size line that is not hex digits and CRLF")
        n = int(found.group(1), 16)
        if n == 0:
            break
        total += n
        if max_body is not None and total > max_body:
            raise BadMessage(f"chunks adding up to over the {max_body} bytes this reads",
                             413)
        while n:
            data = rfile.read1(min(n, size))
            if not data:
                raise BadMessage("the body ended inside a chunk")
            n -= len(data)
            yield data
        if rfile.read(2) != b"\r\n":
            raise BadMessage("a chunk not followed by CRLF")
    for _ in range(MAX_TRAILERS + 1):  # trailer fields, then the blank line
        line = rfile.readline(MAX_LINE + 1)
        check_line(line)
        if line == b"\r\n":
            return
    raise BadMessage(f"more than {MAX_TRAILERS} trailer lines")


class Tap:
    """A reader that keeps every line read through it (a head's lines, as sent)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner = inner
        self.lines: list[bytes] = []

    def readline(self, limit: int = -1) -> bytes:
        line = self.inner.readline(limit)
        self.lines.append(line)
        return line

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)
