"""Gemini Interactions API (``POST /v1beta/interactions``, ``stream: true``): steps over SSE.

https://ai.google.dev/gemini-api/docs/interactions/streaming

Every payload names itself in ``event_type`` (the SSE ``event:`` line repeats it). The output
is a list of steps, each announced by ``step.start`` (its ``index`` and the step shell),
filled by ``step.delta`` and closed by ``step.stop``. A function call's step carries its id
and name in the start (``arguments`` there is an empty placeholder), its arguments arrive as
``arguments_delta`` string fragments, so a call's ``block`` is its step ``index``. A
``model_output`` step holds the text. ``interaction.completed`` ends the turn (its status is
``requires_action`` when the client must run the calls). Arguments sent whole in the start
(an object) are one fragment, that object's text exactly as it stood in the data. Built-in
tools (Google Search, code execution, URL context) run on the server: their steps are
``other`` rows.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, Kind, error_message, fragment_row, index, maybe_text, obj, stated, text
from ..turns import (
    Script,
    Text,
    Transform,
    WireFrame,
    shared,
)
from ._written import args_announced, framer, restated, setter
from .as_written import object_text, wire_length
from .recognise import ByType
from .spec import Envelope, Fields, WireFormat, block_events

TYPES = frozenset(
    (
        "interaction.created",
        "interaction.status_update",
        "interaction.completed",
        "step.start",
        "step.delta",
        "step.stop",
    )
)
"""The events that name this format; ``error`` is read once the format is known."""
_FRAGMENTS: dict[Any, tuple[Kind, str]] = {  # delta type -> row kind, field of the fragment
    "arguments_delta": ("args_delta", "arguments"),
    "text": ("text_delta", "text"),
}


class GeminiInteractions:
    name = "gemini-interactions"
    hot = None  # no fast path: every frame goes through normalize

    sniff = ByType(TYPES, "event_type")

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload, kind = self.sniff.typed(event, payload, "an Interactions event")
        if kind == "step.delta":
            block = index(payload["index"], "index")
            delta = obj(payload["delta"], "delta")
            fragment = _FRAGMENTS.get(delta.get("type"))
            if fragment is None:
                return [Ev(kind, "other", block)]  # thoughts, annotations, server tools
            row, key = fragment
            frag = text(delta[key], f"delta.{key}")
            return [fragment_row(kind, row, block, frag, wire_length(data, key, frag))]
        if kind == "step.start":
            block = index(payload["index"], "index")
            step = obj(payload["step"], "step")
            what = step.get("type")
            if what == "function_call":
                out = [Ev(kind, "call_start", block, maybe_text(step.get("id"), "step.id"),
                          text(step["name"], "step.name"))]
                args = step.get("arguments")
                if args:  # sent whole in the start (the documented start has {})
                    frag = (text(args, "step.arguments") if isinstance(args, str) else
                            object_text(data, "arguments", args, 0, len(data), "step.arguments"))
                    out.append(fragment_row(kind, "args_delta", block, frag,
                                            wire_length(data, "arguments", frag)
                                            if isinstance(args, str) else len(frag))._replace(
                        quirk="args_in_announcement: arguments in step.start, not the "
                        "documented {} placeholder"))
                return out
            return [Ev(kind, "text_start" if what == "model_output" else "other", block)]
        if kind == "step.stop":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "interaction.completed":
            inter = payload.get("interaction")
            status = inter.get("status") if isinstance(inter, dict) else None
            return [Ev(kind, "turn_stop", reason=stated(status))]
        if kind == "error":
            return [Ev.provider_error(kind, error_message(payload))]
        return [Ev(kind, "other")]  # interaction.created, status updates


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as the Interactions API streams it, each event named on its ``event:`` line
    too: every segment a step (``model_output`` text, or a ``function_call`` with its id and
    name and an empty ``arguments`` placeholder), filled by deltas and stopped, then
    ``interaction.completed`` (``requires_action`` when calls wait)."""
    interaction = {"id": "v1_lab", "status": "in_progress", "object": "interaction"}
    frames: list[WireFrame] = []
    add = framer(frames, "event_type")
    add({"interaction": interaction, "event_type": "interaction.created"}, "head")

    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            add({"index": n, "step": {"type": "model_output"}, "event_type": "step.start"},
                "text_start", n)
            for piece in seg.fragments:
                add({"index": n, "delta": {"text": piece, "type": "text"},
                     "event_type": "step.delta"}, "text", n, piece)
            add({"index": n, "event_type": "step.stop"}, "text_stop", n)
            continue
        add({"index": n, "step": {"id": seg.call_id, "type": "function_call",
                                  "name": seg.tool, "arguments": {}},
             "event_type": "step.start"}, "call_start", n, block=n)
        for piece in seg.fragments:
            add({"index": n, "delta": {"arguments": piece, "type": "arguments_delta"},
                 "event_type": "step.delta"}, "args", n, piece, n)
        add({"index": n, "event_type": "step.stop"}, "call_stop", n, block=n)
    status = "requires_action" if turn.calls else "completed"
    add({"interaction": {**interaction, "status": status},
         "event_type": "interaction.completed"}, "end")
    return frames


# -- the quirks an Interactions producer can send --------------------------------------------
_set_fragment = setter("delta", "arguments")
_set_block = setter("index")


QUIRKS: dict[str, Transform | None] = {
    # each call's arguments whole in its step.start (not the documented {}), no deltas
    "args_in_announcement": args_announced(GeminiInteractions.name,
                                           ("step", "arguments")),
    "empty_arguments": None,
    # ``status: "completed"`` although calls wait for the client.
    "stop_reason_mismatch": restated("end", ("interaction", "status"), "completed"),
    **shared(_set_block, _set_fragment),
}
"""What an Interactions producer can send, and how each is written."""


FORMAT = WireFormat.of(
    GeminiInteractions,
    docs="https://ai.google.dev/gemini-api/docs/interactions/streaming",
    path="/v1beta/interactions",
    events=block_events("step.start", "step.delta", "step.stop",
                        turn_stop=("interaction.completed",),
                        other=("interaction.created", "interaction.status_update")),
    fields=Fields(call_id=("id",), tool=("name",), fragment=("arguments",),
                  whole=("arguments",), text=("text",)),
    envelope=Envelope(
        containers=frozenset(("interaction", "step", "delta", "usage", "error")),
        schema=frozenset(("type", "event_type", "status", "object", "name", "role")),
        numbers=frozenset(("index", "total_tokens", "total_input_tokens",
                           "total_output_tokens", "total_cached_tokens", "total_thought_tokens",
                           "total_tool_use_tokens")),
        ids=frozenset(("id",)),
        top=frozenset(("event_type", "index", "status")),
    ),
    write=write,
    quirks=QUIRKS,
    tool_stop=frozenset(("requires_action",)),
)
