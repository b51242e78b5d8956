"""Each call's identity (id and tool name) as every reader tracks it, once.

A call's id and name each take the first non-empty value sent for the call, wherever it
comes: on the announcement, on a later fragment (a Chat server that sends ``id`` first and
``name`` with the first arguments), or on the done event. A value that *changes* (a second,
different non-empty id or name for the same call, or a done event that disagrees with the
announcement) is never resolved in silence: the call keeps the first value, and the reader
emits an ``error`` row (:func:`changed`) whose problem names both values, and whose quirk is
``identity_changed``; strict mode raises on it (:func:`.events.conflict`).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..events import IDENTITY_CHANGED, Ev

LATE = "late_identity"
"""The quirk of a call whose id or name first came after its announcement."""
_FIELDS = ("call_id", "tool")
_SAID = {"call_id": "id", "tool": "name"}


class Identities:
    """The id and name known for each call of one turn, keyed as the reader keys calls."""

    def __init__(self) -> None:
        self._known: dict[Hashable, list[str | None]] = {}
        self._taken: list[str] = []  # what the last ``see`` took late

    def announce(self, key: Hashable, call_id: str | None, tool: str | None) -> None:
        """A call starts at ``key`` (a re-used key: a new call), with what it was sent."""
        self._known[key] = [call_id or None, tool or None]

    def known(self, key: Hashable) -> tuple[str | None, str | None]:
        """The id and name known for the call at ``key`` so far."""
        got = self._known.get(key)
        return (None, None) if got is None else (got[0], got[1])

    def see(self, event: str, key: Hashable, call_id: str | None, tool: str | None,
            block: int | None = None, choice: int | None = None) -> Ev | None:
        """A later event names the call at ``key``: a missing value is taken (late
        identity); a different one is the row :func:`changed` gives, or None."""
        known = self._known.get(key)
        if known is None:
            self.announce(key, call_id, tool)
            return None
        changes = []
        self._taken = []
        for i, (field, value) in enumerate(zip(_FIELDS, (call_id, tool), strict=True)):
            if not value:
                continue  # an empty or null value names nothing (blank_identity)
            if known[i] is None:
                known[i] = value
                self._taken.append(_SAID[field])
            elif value != known[i]:
                changes.append((field, known[i], value))
        return changed(event, changes, block, known[0], choice) if changes else None

    def late(self, where: str) -> str | None:
        """The ``late_identity`` note for what the last :meth:`see` took late, or None."""
        taken, self._taken = self._taken, []
        if not taken:
            return None
        return f"{LATE}: {' and '.join(taken)} first sent on {where}, not the announcement"

    def check(self, rows: list[Ev], event: str, key: Hashable, call_id: str | None,
              tool: str | None, choice: int | None = None) -> list[Ev]:
        """``rows`` (a done or stop event's, naming the call at ``key``, which is its
        block), with the row :func:`changed` gives after them when the identity changed."""
        row = self.see(event, key, call_id, tool, key if type(key) is int else None, choice)
        return rows if row is None else [*rows, row]


def changed(event: str, changes: list[tuple[str, str | None, str]], block: int | None,
            call_id: str | None, choice: int | None = None) -> Ev:
    """The row that says a call's identity changed: each ``(field, kept, sent)``, with the
    call's kept id (so the row sits with its call)."""
    said = "; ".join(f"{_SAID[f]} {kept!r} then {sent!r}" for f, kept, sent in changes)
    return Ev(event, "error", block, call_id, problem=f"{IDENTITY_CHANGED}: {said} on {event} "
              "(the call keeps the first)", choice=choice,
              quirk=f"{IDENTITY_CHANGED}: {said} on {event}")
