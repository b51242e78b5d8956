"""The wire's side: each captured turn's calls (exactly as :func:`~streamcalls_lab._calls`
assembles them), response id, token figures and time to first chunk."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson
import pandas as pd

from .. import _deepjson as deepjson
from .._calls import calls
from ..loader import load
from ..sources import Source
from .judge import WireCall

_CONTENT = frozenset(("text_delta", "call_start", "args_delta"))
_IDS = (("message", "id"), ("response", "id"), ("id",))  # Anthropic, Responses, Chat
_OUT = ("output_tokens", "completion_tokens")
_IN = ("input_tokens", "prompt_tokens")


@dataclass
class WireTurn:
    turn: str
    provider: str
    calls: list[WireCall] = field(default_factory=list)
    response_id: str | None = None
    first_chunk: float | None = None
    """Seconds from the capture's first byte to its first content (text or call) event."""
    input_tokens: int | None = None
    output_tokens: int | None = None


def _dig(payload: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload


def _usage(payload: Any) -> dict[str, Any]:
    for holder in (_dig(payload, ("usage",)), _dig(payload, ("message", "usage")),
                   _dig(payload, ("response", "usage"))):
        if isinstance(holder, dict):
            return holder
    return {}


def _read_frames(turn: WireTurn, rows: pd.DataFrame) -> None:
    start = None
    for kind, t, data in zip(rows["kind"].tolist(), rows["t"].tolist(), rows["data"].tolist(),
                             strict=True):
        if start is None and isinstance(t, float) and not math.isnan(t):
            start = t
        if kind in _CONTENT and turn.first_chunk is None and start is not None and not (
                math.isnan(t)):
            turn.first_chunk = t - start
        if not isinstance(data, str) or not data.startswith("{"):
            continue
        try:
            payload = deepjson.parse(data)
        except orjson.JSONDecodeError:
            continue
        if turn.response_id is None:
            for path in _IDS:
                if isinstance(found := _dig(payload, path), str):
                    turn.response_id = found
                    break
        usage = _usage(payload)
        for attr, keys in (("input_tokens", _IN), ("output_tokens", _OUT)):
            for key in keys:
                if isinstance(usage.get(key), int):
                    setattr(turn, attr, usage[key])  # the last report is the total


def wire_turns(source: Source | pd.DataFrame, *, strict: bool = True) -> list[WireTurn]:
    """Every captured turn, in order, with its calls and figures (``strict=False``: a
    capture that cannot be read is a turn with what could be read, as ``load`` gives it)."""
    deltas = source if isinstance(source, pd.DataFrame) else load(source, raw=True,
                                                                   strict=strict)
    table = calls(deltas)
    out: dict[str, WireTurn] = {}
    for name, rows in deltas.groupby("turn", sort=False):
        out[str(name)] = turn = WireTurn(str(name), str(rows["provider"].iloc[0]))
        if "data" in rows:
            _read_frames(turn, rows)
    for rec in table.itertuples(index=False):
        args = rec.args if isinstance(rec.args, str) else ""
        out[rec.turn].calls.append(WireCall(str(rec.call_id) if isinstance(rec.call_id, str)
                                            else "", str(rec.tool) if isinstance(rec.tool, str)
                                            else "", args))
    return list(out.values())
