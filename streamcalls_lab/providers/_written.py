"""Quirk writers several formats share, each given how to reach its own payload (as
``turns.shared`` is): one fold, written once."""

from __future__ import annotations

from collections.abc import Callable

from ..turns import Script, Transform, WireFrame


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
