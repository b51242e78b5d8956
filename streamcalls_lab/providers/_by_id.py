"""Calls keyed by their id, as the browser-side streams key them (AG-UI, the AI SDK's UI
message stream and data stream): each ``toolCallId`` is a block, in order of first
appearance, and a call is filled by fragments that name it, so calls may be open at once."""

from __future__ import annotations

from typing import Any, ClassVar

from ..events import Ev, fragment_row, text
from ._identity import Identities
from .as_written import wire_length


class ById:
    """The state these readers share: blocks by id, each call's name, the calls filled."""

    hot: ClassVar[None] = None  # browser-side streams: every frame goes through normalize

    def __init__(self) -> None:
        self._blocks: dict[str, int] = {}  # toolCallId -> block, in order of first appearance
        self._filled: set[str] = set()  # calls a non-empty fragment has arrived for
        self._who = Identities()  # each call's name, by block (its id is its key)

    def _block(self, call_id: str) -> int:
        return self._blocks.setdefault(call_id, len(self._blocks))

    def _announced(self, payload: dict[str, Any], tool_key: str) -> tuple[str, str]:
        """A call's id and tool as its announcement sends them: a new call, nothing filled."""
        call_id = text(payload["toolCallId"], "toolCallId")
        tool = text(payload[tool_key], tool_key)
        self._filled.discard(call_id)  # announced anew: a new call
        return call_id, tool

    def _args_delta(self, kind: str, payload: dict[str, Any], data: str, key: str) -> list[Ev]:
        """A fragment of the call ``toolCallId`` names, from the string at ``key``."""
        call_id = text(payload["toolCallId"], "toolCallId")
        frag = text(payload[key], key)
        if frag:
            self._filled.add(call_id)
        return [fragment_row(kind, "args_delta", self._block(call_id), frag,
                             wire_length(data, key, frag), None, call_id)]
