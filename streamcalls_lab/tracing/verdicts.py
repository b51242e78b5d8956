"""The verdicts on one wire call against what a tracer recorded: declared once, each with
what it means and the one-line fix a tracer's maintainer can act on. The offline check, the
live harness, the CLI and the docs all read this registry."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    name: str
    meaning: str
    fix: str
    passes: bool = False
    """The trace is a faithful record of the call (the check exits 0 on these alone)."""


VERDICTS: dict[str, Verdict] = {v.name: v for v in (
    Verdict("ok", "the trace holds the call's id, tool and argument text exactly as sent",
            "nothing to fix", passes=True),
    Verdict("reserialised", "the trace holds the same JSON value in other text (parsed and "
            "dumped again: spacing, key order, escapes)",
            "nothing to fix for values; keep the streamed text itself if the text matters",
            passes=True),
    Verdict("empty", "the trace has the call but its arguments are empty",
            "append every arguments fragment to the call's buffer (keyed by index, or by "
            "item id for Responses), not only the first chunk's"),
    Verdict("missing", "the trace has no record of the call (no call in the turn, or no "
            "turn at all)",
            "record the assembled tool calls (tool_calls / tool_use / function_call items) "
            "in the span's output, not only the content text"),
    Verdict("truncated", "the trace holds a proper prefix of the arguments",
            "keep appending fragments until the call's stop or the stream's end; do not "
            "cap or close the record early"),
    Verdict("mangled", "the trace holds other arguments than the wire sent",
            "concatenate the fragments byte for byte, without trimming, re-encoding or "
            "parsing each one"),
    Verdict("merged", "the trace holds this call's arguments joined with another call's",
            "key the argument buffers by the call's index (or item id), not one buffer per "
            "turn"),
    Verdict("split", "the trace holds this call as several calls, its arguments spread "
            "over them",
            "start a new call only on a fragment that announces one (id or name), not on "
            "every fragment"),
    Verdict("wrong_id", "the arguments are right but the call id differs from the wire's",
            "take the id from the call's start event and keep it on later fragments"),
    Verdict("wrong_name", "the arguments are right but the tool name differs from the wire's",
            "take the name from the call's start event once; do not append it per fragment"),
)}

PASSING = frozenset(name for name, v in VERDICTS.items() if v.passes)
