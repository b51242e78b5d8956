"""Whether a response body echoes a request credential, in any form a stream can carry it.

A server that quotes a client's key back rarely quotes it whole and plain: streamed text is
cut into fragments by nature, and a gateway may escape or encode what it quotes. So the
search runs on what a reader would decode, not only on the bytes:

- the bytes as they are (a key raw);
- every JSON escape decoded, once and twice, in any mix (``\\u0073k-`` and ``sk\\u002d``:
  the arguments of a call are JSON inside a JSON string);
- percent-decoding on top of either (a key URL-quoted, or in a URL's query or fragment,
  ``#access_token=...``);
- the string values under each key joined across frames and fragments (``"text":"sk-ab"``
  then ``"text":"cd12"``; an AI SDK data stream's ``0:"..."`` parts by their type code),
  each joined stream decoded as above, and base64 values decoded and joined too;
- the base64 and base64url spellings of every secret at each of the three alignments, so
  a token inside a longer base64 blob is found whatever bytes stand before it.

:class:`EchoSearch` reads a body in pieces (the proxy and ``record`` feed it read by read,
with bounded memory); :func:`find` reads a whole one.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import OrderedDict
from collections.abc import Iterable
from urllib.parse import unquote

MIN_SECRET = 4  # shorter "secrets" would match ordinary words
MIN_BASE64 = 12  # a shorter secret's base64 spelling is too short to tell from chance
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\[\"\\/bfnrt]")
_SHORT = {'\\"': '"', "\\\\": "\\", "\\/": "/", "\\b": "\b", "\\f": "\f", "\\n": "\n",
          "\\r": "\r", "\\t": "\t"}
_PAIR = re.compile(
    rb'"(?P<k>(?:[^"\\\r\n]|\\.){0,200})"\s*:\s*(?:"(?P<v>(?:[^"\\\r\n]|\\.)*)"|(?P<n>[0-9]+))'
    rb'|(?m:^(?P<code>[0-9a-z]{1,2}):"(?P<part>(?:[^"\\\r\n]|\\.)*)")')  # AI SDK data stream
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_KEYS = 4096  # joined streams kept at once (a body of endless distinct keys stays bounded)
_BUFFER = 1 << 20  # bytes waiting for a pair's closing quote before only a tail is kept


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _SHORT.get(m.group()) or chr(int(m.group()[2:], 16)), text)


def views(text: str) -> list[str]:
    """``text`` as it is and under each decoding a reader may apply (see the module
    docstring): JSON escapes once and twice, percent-decoding on top."""
    out = [text]
    once = _unescape(text)
    twice = _unescape(once)
    for v in (once, twice):
        if v not in out:
            out.append(v)
    for v in list(out):
        if "%" in v:
            out.append(unquote(v, errors="surrogateescape"))
    return out


def _base64_spellings(secret: bytes) -> set[str]:
    """The base64 and base64url characters that spell ``secret`` whatever stands around
    it: one spelling per alignment (0, 1 or 2 bytes before it in the encoded blob)."""
    out = set()
    for k in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * k + secret).decode("ascii").rstrip("=")
            start, end = -(-8 * k // 6), 8 * (k + len(secret)) // 6
            out.add(text[start:end])
    return out


def needles(secrets: Iterable[str]) -> list[str]:
    """What is looked for in every decoded view: each secret, and its base64 spellings."""
    found: set[str] = set()
    for s in secrets:
        if not s or len(s) < MIN_SECRET:
            continue
        found.add(s)
        raw = s.encode("utf-8", "surrogatepass")
        if len(raw) >= MIN_BASE64:
            found |= _base64_spellings(raw)
    return sorted(found, key=len, reverse=True)


class EchoSearch:
    """Searches a body fed piece by piece; :meth:`feed` and :meth:`close` say which form of
    a secret was found (``"raw"``, ``"decoded"``, ``"joined"``), or None."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.needles = needles(secrets)
        longest = max((len(n) for n in self.needles), default=0)
        self._keep = 24 * longest  # an escaped (or escaped then quoted) secret's width
        self._tail = ""
        self._pending = b""
        self._joined: OrderedDict[bytes, str] = OrderedDict()
        self._where = b""

    def _hit(self, text: str) -> bool:
        return any(n in v for v in views(text) for n in self.needles)

    def feed(self, data: bytes) -> str | None:
        if not self.needles or not data:
            return None
        window = self._tail + data.decode("utf-8", "surrogateescape")
        if self._hit(window):
            return "decoded"
        self._tail = window[-self._keep:]
        self._pending += data
        return self._pairs(final=False)

    def close(self) -> str | None:
        """The end of the body: pairs still waiting are read."""
        return self._pairs(final=True) if self.needles else None

    def _pairs(self, final: bool) -> str | None:
        buf, end = self._pending, 0
        for m in _PAIR.finditer(buf):
            end = m.end()
            if m["n"] is not None:  # an index: the stream of the call or block that follows
                if b"index" in m["k"].lower():
                    self._where = m["k"] + b"=" + m["n"]
                continue
            key, wire = (m["k"], m["v"]) if m["code"] is None else (m["code"], m["part"])
            # joined by key alone, and by key within the last index (parallel calls interleave)
            if self._join(key, wire) or self._join(key + b"\0" + self._where, wire):
                return "joined"
        rest = buf[end:]
        if len(rest) > _BUFFER or final:  # no pair closes: keep what a pair could start in
            rest = rest[-self._keep:] if not final else b""
        self._pending = rest
        return None

    def _join(self, key: bytes, wire: bytes) -> bool:
        value = _unescape(wire.decode("utf-8", "surrogateescape"))
        if self._append(key, value):
            return True
        if _BASE64.fullmatch(value):
            try:
                plain = base64.b64decode(value.replace("-", "+").replace("_", "/")
                                         + "=" * (-len(value) % 4))
            except (binascii.Error, ValueError):
                return False
            return self._append(key + b"\0base64", plain.decode("utf-8", "surrogateescape"))
        return False

    def _append(self, key: bytes, value: str) -> bool:
        joined = self._joined.pop(key, "") + value
        self._joined[key] = joined[-self._keep:]
        if len(self._joined) > _KEYS:
            self._joined.popitem(last=False)
        return self._hit(joined)


def find(body: bytes, secrets: Iterable[str]) -> str | None:
    """Which form of a secret ``body`` echoes (see :class:`EchoSearch`), or None."""
    search = EchoSearch(secrets)
    return search.feed(body) or search.close()


def scrub(body: bytes, secrets: Iterable[str]) -> tuple[bytes, int]:
    """``body`` with every contiguous spelling of a secret (raw, JSON-escaped character by
    character in any mix, URL-quoted, base64 at any alignment) replaced by as many ``x``;
    and how many were replaced. Lengths, so timing, stay. A secret split across frames
    cannot be replaced in place: :func:`find` still sees it afterwards."""
    count = 0
    for needle in needles(secrets):
        body, n = _spelled(needle).subn(lambda m: b"x" * len(m.group()), body)
        count += n
    return body, count


def _hex(n: int, width: int) -> bytes:
    """``n`` in hex as a pattern matching either case."""
    return b"".join(b"[" + c.encode() + c.upper().encode() + b"]" if c.isalpha() else c.encode()
                    for c in f"{n:0{width}x}")


def _spelled(needle: str) -> re.Pattern[bytes]:
    """Every character of ``needle`` as itself, a ``\\uXXXX`` escape (either case), a short
    escape, or percent-quoted, in any mix."""
    parts = []
    for c in needle:
        raw = c.encode("utf-8", "surrogatepass")
        forms = {re.escape(raw), b"".join(b"%" + _hex(b, 2) for b in raw)}
        if ord(c) < 0x10000:
            forms.add(rb"\\u" + _hex(ord(c), 4))
        short = json.dumps(c)[1:-1]
        if short.startswith("\\") and len(short) == 2:
            forms.add(re.escape(short.encode()))
        if c == "/":
            forms.add(rb"\\/")
        parts.append(b"(?:" + b"|".join(sorted(forms)) + b")")
    return re.compile(b"".join(parts))
