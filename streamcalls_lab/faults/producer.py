"""Classes of what clients assume about producers, each shown only on a quirky stream:
announcement text, the stop reason, empty choices, no arguments, null arguments, whole
calls in one chunk, arguments only in the done event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..accumulate import Accumulator, CallBuffer, _get
from ..providers import FORMATS
from .recognise import (
    JSON_ERROR,
    LOOKUP_ERROR,
    NO_ARGS,
    _dropped_on,
    _each_call,
    _every_difference,
    _on,
    parses,
)
from .registry import FOUND_BY_THE_KIT, BugClass
from .symptom import CALLS, ERROR, Symptom

TOOL_STOPS = frozenset(r for f in FORMATS.values() for r in (f.tool_stop or ()))
"""Every stop reason a format uses to say the model asked for tools."""


class FinishGate(Accumulator):
    """finish_gate: calls are handed on only when the stop reason says the model called tools.

    A turn that made calls can end with ``"finish_reason": "stop"`` (named ``tool_choice``
    streams, on OpenAI itself and on vLLM: vllm-project/vllm PR #9209, PR #25054; o1-pro,
    Cohere and Vertex through LiteLLM: BerriAI/litellm#12862; sgl-project/sglang#2877); a
    client that waits for ``"tool_calls"`` drops every call of such a turn and the agent loop
    stops.
    """

    def is_finished(self, buf: CallBuffer) -> bool:
        said = self.said.get(buf.choice, self.said.get(None))
        return buf.complete and (said is None or said in TOOL_STOPS)


class AnnouncementArgsDropped(Accumulator):
    """announcement_args_dropped: argument text on the announcing fragment is dropped.

    The documented announcement carries ``"arguments": ""``; llama.cpp and vLLM send the
    first fragment with it (``{`` riding with the name: ggml-org/llama.cpp#22722,
    agentjido/req_llm PR #801), Groq sends whole calls so, and a client that starts
    buffering only after the announcement loses that text (vercel/ai PR #2881).
    """

    def __init__(self) -> None:
        super().__init__()
        self._announced: dict[Any, Any] = {}

    def feed(self, event: Mapping[str, Any]) -> None:
        if event["kind"] == "call_start":
            self._announced[self.key(event)] = _get(event, "frame")
        elif event["kind"] == "args_delta" and _get(event, "frame") is not None and (
                self._announced.get(self.key(event)) == _get(event, "frame")):
            self.events_seen += 1
            return  # came with the announcement: never read
        super().feed(event)


class EmptyArgsDropped(Accumulator):
    """empty_args_dropped: a call is handed on only once its arguments parse as JSON.

    A call to a tool that takes no arguments can finish with ``""``, ``null`` or no
    arguments at all (Claude through LiteLLM: BerriAI/litellm#5063; qwen3:
    pydantic/pydantic-ai#1654); a client that waits for a parse never hands it on
    (vercel/ai#5658: streamText never invoked a no-argument tool).
    """

    def is_finished(self, buf: CallBuffer) -> bool:
        return buf.complete and parses(buf.args)


class OneCallPerChunk(Accumulator):
    """one_call_per_chunk: only the first call a chunk announces is read.

    Groq sends every call whole, several in one chunk (ogx-ai/ogx PR #630 assumed one per
    chunk; google/adk-python#7004 kept only the last of them; BerriAI/litellm#7621 squeezed
    three into one); the others are lost.
    """

    def __init__(self) -> None:
        super().__init__()
        self._frames: dict[Any, Any] = {}  # frame -> the key of the call it announced
        self._dropped: set[Any] = set()

    def feed(self, event: Mapping[str, Any]) -> None:
        frame, key = _get(event, "frame"), self.key(event)
        if event["kind"] == "call_start" and frame is not None and (
                self._frames.setdefault(frame, key) != key):
            self._dropped.add((frame, key))
        if (frame, key) in self._dropped:
            self.events_seen += 1
            return  # the chunk's later calls are never read
        super().feed(event)


class DeltaOnly(Accumulator):
    """delta_only: arguments are taken from argument deltas alone, never from the done event.

    Some producers send no deltas and the arguments only in ``.done`` / the final event
    (gpt-5.3-codex-spark and LM Studio's open-responses: BerriAI/litellm#27144; a
    Chat-to-Responses bridge that dropped the deltas: BerriAI/litellm#20711); a delta-only
    reader hands the call on with no arguments.
    """

    def from_done(self, buf: CallBuffer) -> None:
        """Nothing: the done event is not read."""


def _null_arguments(s: Symptom) -> bool:
    """Every difference is a call with no argument text handed on with null arguments."""
    return _every_difference(s, lambda w, h: h[:2] == w[:2] and h[2] is None
                             and w[2] in ("", {}))


def _no_args_from_done(s: Symptom) -> bool:
    """On a stream whose arguments came only in the done event: every call that differs
    came out under its own id with no arguments (as text or parsed), or, by a client that
    also waits for a parse before handing a call on, not at all; nothing extra."""
    if not _on("args_only_in_done", s) or s.aspect != CALLS:
        return False
    pairs, missing, extra = s.matched
    if missing and not extra and all(w[2] not in NO_ARGS for w in missing) and all(
            w == h or (h[1] == w[1] and w[2] not in NO_ARGS and h[2] in NO_ARGS)
            for w, h in pairs):
        return True
    return _every_difference(
        s, lambda w, h: h[1] == w[1] and w[2] not in NO_ARGS and h[2] in NO_ARGS)


def _announcement_text_lost(s: Symptom) -> bool:
    """On a stream whose announcements carry argument text: every call that differs came out
    under its own id holding the end of its arguments (what rode with the announcement
    lost), or, by a client that also waits for arguments before handing a call on, not at
    all; no call came out whole (each had text on its announcement to lose), nothing extra."""
    if not _on("args_in_announcement", s):
        return False
    if _each_call(s, lambda a, b: len(b) < len(a) and a.endswith(b)):
        return True
    pairs, missing, extra = s.matched
    return (s.aspect == CALLS and bool(missing) and not extra
            and all(w[2] not in NO_ARGS for w in missing)
            and all((w == h and w[2] in NO_ARGS) or (
                not s.parsed and h[1] == w[1] and isinstance(h[2], str)
                and len(h[2]) < len(w[2]) and w[2].endswith(h[2])) for w, h in pairs))


def _chunk_calls_dropped(s: Symptom) -> bool:
    """On a stream that sends several whole calls in one chunk: calls never handed on, and
    nothing else wrong, but not every one (a chunk's first call is read)."""
    return _dropped_on("whole_calls_in_one_chunk")(s) and bool(s.matched[0])


def _no_parse_no_call(s: Symptom) -> bool:
    """The calls never handed on are those with no argument text; or the run raised what
    parsing a call's arguments raises (json.loads("")) where a finished call had none."""
    if s.aspect == ERROR:
        return (not s.hung and not s.ends_early and JSON_ERROR.search(s.error) is not None
                and any(not c.args.strip() for c in s.sent))
    return s.only_lost and all(isinstance(m[2], str) and not m[2].strip() for m in s.missing)


ANNOUNCEMENT_ARGS_DROPPED = BugClass(
    "announcement_args_dropped",
    "Started buffering a call's arguments only after its announcement, so text sent "
    "with the announcement (a leading {, a whole call) was lost; the announcement's "
    "arguments are the call's first fragment.",
    ("vercel/ai PR #2881", "ggml-org/llama.cpp#22722", "agentjido/req_llm PR #801"),
    _announcement_text_lost,
    AnnouncementArgsDropped,
    # llama.cpp's first delta: the name with the opening brace.
    {"args": '{"database": "metrics"}', "split": 1, "tool": "list_metrics",
     "provider": "openai-chat", "quirks": ("args_in_announcement",)},
    client=True)

FINISH_GATE = BugClass(
    "finish_gate",
    "Handed calls on only when the stop reason said tool_calls, so a turn that made "
    "calls and ended \"stop\" lost them all; finished calls are the model asking for "
    "tools, whatever the stop reason says.",
    ("vllm-project/vllm PR #9209", "BerriAI/litellm#12862", "sgl-project/sglang#2877"),
    _dropped_on("stop_reason_mismatch"),
    FinishGate,
    # A named tool_choice stream: finish_reason "stop" after the call.
    {"args": '{"city": "Paris"}', "split": 8, "tool": "get_weather",
     "provider": "openai-chat", "quirks": ("stop_reason_mismatch",)},
    client=True)

CHOICES_INDEX0 = BugClass(
    "choices_index0",
    "Read choices[0] (or its delta) on every chunk, and a chunk with no choices (usage, "
    "a content filter's results) or no delta raised; go through the choices a chunk "
    "has, and skip a choice without a delta.",
    ("RetellAI/retell-custom-llm-python-demo#5", "microsoft/autogen#6465",
     "CopilotKit/CopilotKit#2468"),
    # a lookup that found no choice or no delta raised (a skipped chunk is no failure)
    lambda s: s.aspect == ERROR and not s.hung and _on("empty_choices", s)
    and LOOKUP_ERROR.search(s.error) is not None,
    client=True)

EMPTY_ARGS_DROPPED = BugClass(
    "empty_args_dropped",
    "Waited for a call's arguments to parse before handing it on, so a call that takes "
    "no arguments (\"\", null or none) never came out; a finished call with no "
    "argument text is a call with input {}.",
    ("vercel/ai#5658", "pydantic/pydantic-ai#1654", "BerriAI/litellm#5063"),
    _no_parse_no_call,
    EmptyArgsDropped,
    # A no-parameter tool: the call ends with no argument text at all.
    {"args": "", "tool": "llm_version", "provider": "openai-chat",
     "quirks": ("empty_arguments",)},
    client=True)

NULL_ARGUMENTS = BugClass(
    "null_arguments",
    "Handed a call with no argument text on with its arguments null (None), as a "
    "server that sends \"arguments\": null wrote them, where callers expect a string; "
    "hand a no-argument call on with \"\" (input {}), never null.",
    ("pydantic/pydantic-ai#1654", FOUND_BY_THE_KIT),
    _null_arguments)

ONE_CALL_PER_CHUNK = BugClass(
    "one_call_per_chunk",
    "Read one call from each chunk, so a producer that sends several whole calls in one "
    "chunk lost all but one; every entry of a chunk's tool_calls is a call.",
    ("ogx-ai/ogx PR #630", "google/adk-python#7004", "BerriAI/litellm#7621"),
    _chunk_calls_dropped,
    OneCallPerChunk,
    # Groq's shape: two whole calls in one chunk.
    {"args": '{"city": "Rome"}', "tool": "get_weather", "earlier": '{"city": "Paris"}',
     "provider": "openai-chat", "quirks": ("whole_calls_in_one_chunk",)},
    client=True)

DELTA_ONLY = BugClass(
    "delta_only",
    "Took arguments from argument deltas alone, so a producer that sends them only in "
    "the done event got calls with no arguments; where no delta came, the done event's "
    "string is the arguments.",
    ("BerriAI/litellm#27144", "BerriAI/litellm#20711"),
    _no_args_from_done,
    DeltaOnly,
    # gpt-5.3-codex-spark: no delta, the arguments in .done.
    {"args": '{"location": "San Francisco"}', "tool": "weather",
     "provider": "openai-responses", "quirks": ("args_only_in_done",)},
    client=True)
