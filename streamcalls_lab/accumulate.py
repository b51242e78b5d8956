"""The correct accumulator: concatenate, key by block, finish only on the stop event.

It consumes the normalised events of :func:`streamcalls_lab.load` (mappings
with at least ``kind``, ``block``, ``call_id``, ``tool``, ``fragment``), so one
class serves every wire format. Each decision lives in its own small method;
a fault variant in :mod:`streamcalls_lab.faults` overrides exactly one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _get(event: Mapping[str, Any], key: str) -> Any:
    """A field of an event, with NaN / NA (how dataframes spell 'missing') as None."""
    value = event.get(key)
    if value is None or value is _NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


try:  # pandas is a dependency, but the accumulator itself should not need it
    from pandas import NA as _NA
except ImportError:  # pragma: no cover
    _NA = object()


@dataclass
class CallBuffer:
    """Everything known about one call so far."""

    block: int | None
    call_id: str | None
    tool: str | None
    parts: list[str] = field(default_factory=list)
    complete: bool = False
    final: str | None = None
    """The whole argument string, where the stream repeats it (Responses ``.done``)."""
    problems: list[str] = field(default_factory=list)
    wire_chars: int = 0
    """Escaped length on the wire, summed over the fragments (when events carry it)."""

    @property
    def args(self) -> str:
        return "".join(self.parts)

    @property
    def n_deltas(self) -> int:
        return sum(1 for p in self.parts if p)

    def result(self) -> dict[str, Any]:
        """The call as ``finish()`` hands it on: raw args plus a strict parse."""
        args = self.args
        try:
            value, error = json.loads(args), None
        except ValueError as e:
            value, error = None, str(e)
        return {
            "block": self.block,
            "call_id": self.call_id,
            "tool": self.tool,
            "args": args,
            "input": value,
            "error": error,
        }


class Accumulator:
    """The correct handler for one turn: ``feed(event)`` each event, then ``finish()``."""

    def __init__(self) -> None:
        self.by_key: dict[Hashable, CallBuffer] = {}
        """The current buffer for each key; a re-used key starts a new call."""
        self.calls: list[CallBuffer] = []
        """Every call in announcement order, finished or not."""
        self.message_parts: list[str] = []
        self.stopped = False
        self.problems: list[str] = []

    # -- the interface every handler has ---------------------------------------
    def feed(self, event: Mapping[str, Any]) -> None:
        kind = event["kind"]
        if kind == "call_start":
            self.start_call(event)
        elif kind == "args_delta":
            fragment = _get(event, "fragment")
            if fragment is not None:
                buf = self.buffer_for(event)
                self.add_fragment(buf, fragment)
                buf.wire_chars += _get(event, "wire_chars") or 0
                self.after_fragment(buf)
        elif kind == "text_delta":
            self.add_text(_get(event, "fragment") or "")
        elif kind in ("block_stop", "args_done"):
            self.stop(event)
        elif kind == "turn_stop":
            self.stopped = True

    def finish(self) -> list[dict[str, Any]]:
        """Only calls whose stop event arrived; a cut-off call is never handed on."""
        return [buf.result() for buf in self.calls if self.is_finished(buf)]

    # -- one decision each: what a fault variant overrides ---------------------
    def key(self, event: Mapping[str, Any]) -> Hashable:
        """Which buffer an event belongs to: the block index, never the tool name."""
        return _get(event, "block")

    def start_call(self, event: Mapping[str, Any]) -> None:
        buf = CallBuffer(_get(event, "block"), _get(event, "call_id"), _get(event, "tool"))
        self.by_key[self.key(event)] = buf
        self.calls.append(buf)

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        key = self.key(event)
        buf = self.by_key.get(key)
        if buf is None:
            # A fragment for a call never announced: keep it, and say so.
            buf = CallBuffer(_get(event, "block"), _get(event, "call_id"), _get(event, "tool"))
            buf.problems.append("argument fragment for a call that was never announced")
            self.by_key[key] = buf
            self.calls.append(buf)
        return buf

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        """Append the fragment exactly as sent: no trim, no decode, no parse."""
        buf.parts.append(fragment)

    def after_fragment(self, buf: CallBuffer) -> None:
        """Nothing: a fragment never says anything about completion."""

    def add_text(self, fragment: str) -> None:
        self.message_parts.append(fragment)

    def stop(self, event: Mapping[str, Any]) -> None:
        """The stop (or done) event is the only statement that a call is complete."""
        if _get(event, "block") is None:
            # Chat's finish_reason: closes everything still open.
            targets = [buf for buf in self.by_key.values() if not buf.complete]
        else:
            buf = self.by_key.get(self.key(event))
            targets = [buf] if buf is not None else []
        final = _get(event, "final")
        for buf in targets:
            buf.complete = True
            if final is not None:
                buf.final = final
                if final != buf.args:
                    buf.problems.append("the done event's arguments differ from the fragments")

    def is_finished(self, buf: CallBuffer) -> bool:
        return buf.complete

    # -- views ------------------------------------------------------------------
    @property
    def message(self) -> str:
        """The message surface: text deltas only, never argument fragments."""
        return "".join(self.message_parts)

    def buffers(self) -> dict[Hashable, str]:
        """Each key's current argument buffer, keyed as this handler keys them."""
        return {key: buf.args for key, buf in self.by_key.items()}
