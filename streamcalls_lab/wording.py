"""How the kit words a count in a sentence it prints: one number format (the one
``display.table`` uses: digits grouped by thousands from 10,000 up, so ``7810`` and
``12,345``), and a noun that agrees with its count."""

from __future__ import annotations

__all__ = ["clauses", "count", "number"]


def number(n: int) -> str:
    """``n`` as every sentence of the kit writes a count: ``7810``, ``12,345``."""
    return f"{int(n):,}" if abs(int(n)) >= 10_000 else str(int(n))


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, singular for exactly one: ``count(1, "kind")`` is ``"1 kind"``,
    ``count(12345, "case")`` is ``"12,345 cases"``; ``plural`` for a noun that does not take -s
    (``count(2, "family", "families")``)."""
    return f"{number(n)} {noun if n == 1 else plural or noun + 's'}"


def clauses(*said: tuple[object, str]) -> str:
    """The clauses whose condition holds, in order, as the parts of one sentence (``; ``
    between them): ``clauses((missing, "you left out x"), (extra, "y is not one"))``."""
    return "; ".join(clause for holds, clause in said if holds)
