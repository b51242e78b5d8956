"""What several formats' writers share: how a frame is added, and the quirk writers, each
given how to reach its own payload (as ``turns.shared`` is): one fold, written once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _deepjson as deepjson
from ..turns import Call, Role, Script, Transform, WireFrame, json_object, raw, raw_json


def framer(frames: list[WireFrame], named: str | None = None) -> Callable[..., None]:
    """How a writer adds a frame: ``add(payload, role, segment, fragment, block)`` appends it
    to ``frames``, tagged with what it is in the turn, its event line the payload's ``named``
    key (None: it has none)."""

    def add(payload: Any, role: Role = "other", segment: int | None = None,
            fragment: str | None = None, block: int | None = None) -> None:
        event = None if named is None else payload[named]
        frames.append(WireFrame(payload, event, role, segment, fragment, block))

    return add


def setter(*path: str | int) -> Callable[[WireFrame, Any], None]:
    """Writes a value at ``path`` in a frame's payload: where a format's quirk writers find a
    call's block or fragment (``turns.shared``, ``turns.renumbered``)."""
    *within, last = path

    def put(f: WireFrame, value: Any) -> None:
        target = f.payload
        for key in within:
            target = target[key]
        target[last] = value

    return put


def restated(role: Role, path: tuple[str | int, ...], value: Any) -> Transform:
    """Every ``role`` frame states ``value`` at ``path`` (the ``stop_reason_mismatch`` quirk:
    a stop reason that says no calls were made, on a turn that made them)."""
    put = setter(*path)

    def apply(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
        for f in frames:
            if f.role == role:
                put(f, value)
        return frames

    return apply


def args_in_announcement(put: Callable[[WireFrame, str], None]) -> Transform:
    """Quirk ``args_in_announcement``: each call's first fragment sent on the frame that
    announces it (``put`` writes it there), its own frame dropped."""
    def transform(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
        out: list[WireFrame] = []
        start: dict[int | None, WireFrame] = {}
        for f in frames:
            if f.role == "call_start":
                start[f.segment] = f
            elif f.role == "args" and f.segment in start:
                head = start.pop(f.segment)
                put(head, f.fragment or "")
                head.fragment = f.fragment
                continue
            out.append(f)
        return out
    return transform


def args_announced(fmt: str, path: tuple[str | int, ...],
                   deltas: tuple[Role, ...] = ("args",)) -> Transform:
    """Each call's arguments sent whole, as an object, at ``path`` of its announcement, and
    none of its block's ``deltas`` frames: the ``args_in_announcement`` quirk of a format that
    announces a call with an object."""
    put = setter(*path)

    def apply(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
        out = []
        for f in frames:
            seg = turn.segments[f.segment] if f.segment is not None else None
            if not isinstance(seg, Call) or not seg.args:
                out.append(f)
            elif f.role == "call_start":
                args = json_object(seg.args, fmt)
                put(f, raw(0))  # its text written as given, not re-serialised
                f.data, f.fragment = raw_json(f.payload, [args]), args
                put(f, deepjson.loads(args))
                out.append(f)
            elif f.block is None or f.role not in deltas:
                out.append(f)
        return out

    return apply
