"""Which faults the course puts first: the chapter's own, then the other client-side ones;
those only a server's quirk exposes come last, behind a "servers" toggle where a table shows
them (notebook 8 teaches the quirks themselves).

A fault is server-side when its preset needs a producer quirk to bite (the spec says so, no
list to keep in step); the chapter's six bugs are named here once.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import breaker
from ..faults import FAULTS

__all__ = ["CHAPTER", "in_order", "server_side"]

CHAPTER = ("trim", "decode_each", "parse_to_finish", "lenient_parse", "key_by_name",
           "decode_chunks", "markdown_bubble")
"""The chapter's six bugs (its completion test comes in two forms: a strict parse and a
lenient one), in the order it teaches them."""


def server_side(name: str) -> bool:
    """Whether ``name`` shows only on a turn a server writes with a quirk."""
    setup = breaker.PRESETS.get(name)
    return setup is not None and bool(setup.quirks)


def in_order(names: Iterable[str] | None = None, servers: bool = False) -> list[str]:
    """``names`` (default: every fault) with the chapter's first, then the other client-side
    ones, then, only when ``servers``, the server-side ones; each group in ``FAULTS`` order."""
    names = list(FAULTS if names is None else names)
    chapter = [n for n in CHAPTER if n in names]
    client = [n for n in names if n not in CHAPTER and not server_side(n)]
    server = [n for n in names if n not in CHAPTER and server_side(n)] if servers else []
    return chapter + client + server
