"""What a framing declares: everything about it that any part of the kit needs, once.

Each framing module (``sse``, ``ndjson``, ``jsonarray``, ``eventstream``, ``prefixed``) ends
with one ``FRAMING = Framing(...)``; :data:`~streamcalls_lab.framing.FRAMINGS` lists them in
the one order they are recognised in. ``load`` and the importers decode through it
(:class:`~streamcalls_lab.framing.AutoDecoder`), ``turns.body`` and the torture harness write
through it, redaction re-frames through it, and ``serve`` / ``replay`` send its media type:
none of them names a framing's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from .frame import FrameDecoder


class Written(Protocol):
    """A frame to write: its event name (or None) and its data text (``turns.WireFrame``)."""

    @property
    def event(self) -> str | None: ...

    @property
    def text(self) -> str: ...


class Values(Protocol):
    """What redaction puts in place of a capture's values, asked for by a framing's
    rewriter (``redact.py`` decides *what* is replaced; the framing knows *where*). Every
    answer has the same length in UTF-8 as what it replaces."""

    def data(self, text: str, event: str) -> str:
        """One frame's data (a JSON payload, or text)."""
        ...

    def filler(self, text: str) -> str:
        """Bytes that are no field of the framing (every reader skips or reports them)."""
        ...

    def comment(self, text: str) -> str:
        """An SSE comment's text."""
        ...

    def ident(self, text: str) -> str:
        """An SSE ``id:`` field's value."""
        ...

    def headers(self, raw: bytes) -> bytes:
        """An AWS event-stream message's headers, encoded."""
        ...


class Transport(NamedTuple):
    """A way of serving a turn that only this framing has (CRLF lines, comments, a
    message split across reads): a torture case family."""

    family: str
    example: str
    reads: tuple[bytes, ...]
    """The body, one server write each."""


Pieces = Callable[[Sequence[Written]], list[bytes]]
Transports = Callable[[Sequence[Written], "Served"], Iterator[Transport]]


@dataclass(frozen=True)
class Served:
    """What a framing's transport cases need to know of the format served over it."""

    keepalive: Written | None = None
    """The format's own keep-alive event (Anthropic's ``ping``)."""


@dataclass(frozen=True)
class Framing:
    """One framing, as every part of the kit needs to know it."""

    name: str
    """What ``WireFormat.framing`` names it by."""
    media_type: str
    """The ``content-type`` it is served under."""
    decoder: type[FrameDecoder]
    """Its incremental decoder: bytes in any chunking to frames."""
    detect: Callable[[bytes], bool | None]
    """Whether a capture starting with these bytes is in this framing, asked in
    :data:`~streamcalls_lab.framing.FRAMINGS` order once every framing before it said no;
    None: too few bytes to tell yet."""
    pieces: Pieces
    """The writer: each frame's bytes, one server write each (``b"".join`` is the body)."""
    rewrite: Callable[[bytes, str, Values], bytes]
    """Redaction's re-framing: ``(body, source, values)`` to the same bytes with every value
    replaced in place (same length); raises :class:`~streamcalls_lab.errors.CaptureError`
    for bytes it cannot read as this framing."""
    transports: Transports
    """The torture cases only this framing can carry."""
    served_type: str = ""
    """The ``content-type`` the torture harness serves it under, where the providers add to
    :attr:`media_type` (OpenAI and Anthropic send ``text/event-stream; charset=utf-8``); "":
    :attr:`media_type`. Replay keeps :attr:`media_type`."""
    events: bool = False
    """Its frames carry an event name of their own (SSE's ``event:``, event-stream's
    ``:event-type``, a type-prefixed line's code)."""

    def write(self, frames: Sequence[Written]) -> bytes:
        """The body: ``frames`` framed."""
        return b"".join(self.pieces(frames))


def same_size(text: str, size: int) -> bytes:
    """``text`` as bytes, checked to fill exactly ``size`` bytes (a rewrite never moves an
    offset)."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) != size:  # a bug here would shift every later offset: fail loudly
        raise AssertionError(f"redaction changed a data line's size ({size} -> {len(raw)})")
    return raw


def as_text(raw: bytes) -> str:
    """Bytes as text; bytes that are not UTF-8 ride along as lone surrogates (kept as they
    are: a byte of a broken character is no word)."""
    return raw.decode("utf-8", "surrogateescape")


def cut(body: bytes, points: Sequence[int] | Iterator[int]) -> tuple[bytes, ...]:
    """``body`` cut at ``points`` into reads (empty pieces left out)."""
    edges = [0, *sorted(set(points)), len(body)]
    return tuple(body[i:j] for i, j in pairwise(edges) if j > i)


def crlf_cases(frames: Sequence[Written], write: Callable[[Sequence[Written], str], list[bytes]]
               ) -> Iterator[Transport]:
    """CRLF line ends, whole and with every read cut between ``\\r`` and ``\\n``: a line
    framing's (``write(frames, newline)``)."""
    crlf = b"".join(write(frames, "\r\n"))
    between = [k for k in range(1, len(crlf)) if crlf[k - 1:k + 1] == b"\r\n"]
    yield Transport("cr_lf_read_split", "CRLF line ends, every read cut between \\r and \\n",
                    cut(crlf, between))
    yield Transport("crlf", "CRLF line ends", (crlf,))
