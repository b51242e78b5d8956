"""Classes that hand a call on at something other than its stop: ``eof_as_stop``,
``parse_to_finish``, ``lenient_parse``, and ``lost_on_truncation`` (waiting for the end
marker instead)."""

from __future__ import annotations

from typing import Any

import jiter

from .. import _deepjson as deepjson
from ..accumulate import Accumulator, CallBuffer
from .recognise import (
    _blank,
    _early,
    parses,
)
from .registry import FOUND_BY_THE_KIT, BugClass
from .symptom import CALLS, Sent, Symptom


class EofAsStop(Accumulator):
    """eof_as_stop: the end of the stream is taken for every call's stop.

    Every call still open when the connection closes is handed on, so a stream cut inside a
    call's arguments dispatches it with what came so far (or, parsed, with what a repair
    makes of it). Right on every stream that finishes, which is almost every stream. The
    Vercel AI SDK's ``StreamingToolCallTracker.flush()`` does it (the kit's torture harness
    found it: docs/clients.md); earendil-works/pi#5964: a stream that stopped mid-arguments
    ran a tool with side effects on the repaired object.
    """

    def finish(self) -> list[dict[str, Any]]:
        for event in self.close_bytes():
            self.feed(event)
        for buf in self.calls:
            buf.complete = True  # the close taken for every open call's stop
        return super().finish()


class ParseToFinish(Accumulator):
    """parse_to_finish: "the buffer parses strictly" is taken to mean "the call is finished".

    The call is handed on at the first fragment after which ``json.loads`` succeeds.
    A proper prefix of an object never parses, so this passes most tests; it bites on
    top-level values that are not objects (``2`` of ``20``), on buffers that merge two
    calls, and on a stream cut right after the closing brace (handed on though no stop
    ever came). microsoft/agent-framework#6549 uses this test (an ``_is_complete`` that
    is true once ``json.loads`` accepts the streamed arguments) to decide when a call
    being streamed is complete enough to show; vercel/ai#3953 (and the VULN-6861 fix,
    vercel/ai#13137) finalised a streamed call once its buffer was parsable JSON.
    """

    def after_fragment(self, buf: CallBuffer) -> None:
        if buf.dispatched is not None:
            return
        try:
            value = deepjson.loads(buf.args)
        except ValueError:
            return
        buf.complete = True
        buf.dispatched = (buf.args, value)


def lenient_value(text: str) -> Any:
    """What a partial-JSON parser (jiter, trailing strings) reads from a prefix, or None."""
    try:
        return jiter.from_json(text.encode("utf-8"), partial_mode="trailing-strings")
    except ValueError:
        return None


class LenientParse(Accumulator):
    """lenient_parse: a partial-JSON parser decides completion.

    A partial parser reads almost any prefix (``{"limit": 2`` shows as
    ``{"limit": 2}``), so the first non-empty value it yields is handed on, and later
    fragments change it (2 becomes 20) after it was used. On a stream cut mid-arguments
    it hands on a plausible object that was never finished. earendil-works/pi#5964 asks
    for a strict parse at the end for this reason: a stream that stops mid-arguments was
    repaired by partial-json into an object, and a tool with side effects ran on it.
    """

    def after_fragment(self, buf: CallBuffer) -> None:
        if buf.dispatched is not None:
            return
        value = lenient_value(buf.args)
        if value is None or value == {} or value == [] or value == "":
            return
        buf.complete = True
        buf.dispatched = (buf.args, value)


def _read_leniently(early: list[Any]) -> bool:
    """Every text handed on early is one a partial parser reads as a value: it hands on
    nothing before that (not ``""``, ``{}``)."""
    return all(isinstance(a, str) and lenient_value(a) not in (None, {}, [], "")
               for a in early)


def _first_read(call: Sent) -> str | None:
    """The text a partial parser hands ``call`` on with: its fragments joined up to the first
    that it reads as a value (all of them where none does); None: fragments not known."""
    if not call.fragments or "".join(call.fragments) != call.args:
        return None
    text = ""
    for fragment in call.fragments:
        text += fragment
        if _read_leniently([text]):
            return text
    return text


def _not_lenient(s: Symptom) -> bool:
    """A call handed on before its stop (under its own id, or under none holding the start of
    its arguments), holding more of them than a partial parser had read a value from a
    fragment earlier: something stricter than a partial parse (a strict one) decided, and a
    partial parser would have decided first."""
    if s.aspect != CALLS or s.parsed:
        return False
    sent = {c.call_id: c for c in s.sent if not _blank(c.call_id)}
    for call_id, _, args in s.got:
        if not isinstance(args, str):
            continue
        # under no id (a client keyed by id), the call whose arguments it starts
        call = next((c for c in s.sent if c.args.startswith(args)), None) if _blank(
            call_id) and args else sent.get(call_id)
        if call is None or not (len(args) < len(call.args) and call.args.startswith(args)):
            continue
        first = _first_read(call)
        if first is not None and len(first) < len(args):
            return True
    return False


EOF_AS_STOP = BugClass(
    "eof_as_stop",
    "Took the end of the stream for the stop of every call still open, so a stream cut "
    "inside a call's arguments dispatched it half-written; hand a call on only at its "
    "stop (Chat: the finish_reason, or the next call's start), never at the close.",
    ("earendil-works/pi#5964", FOUND_BY_THE_KIT),
    lambda s: s.ends_early and _early(s) is not None,
    EofAsStop,
    # The stream cut inside the arguments, with no stop: what came so far is handed on.
    {"args": '{"limit": 20, "status": "refunded"}', "split": 11, "cut_off": True},
    client=True)

PARSE_TO_FINISH = BugClass(
    "parse_to_finish",
    "Took something other than the call's stop (the buffer parsing, another call "
    "starting) to mean the call was finished; a prefix can parse, so hand a call on "
    "only at its stop or done event.",
    ("vercel/ai#3953", "vercel/ai#13137", "microsoft/agent-framework#6549",
     "openai/openai-ruby PR #638"),
    lambda s: (early := _early(s)) is not None and (
        s.parsed or all(a == "" or parses(a) for a in early)),
    ParseToFinish,
    # The stream ends right after the closing brace (the split at the end): no stop.
    {"args": '{"limit": 20, "status": "refunded"}', "split": 35, "every": 6,
     "cut_off": True},
    client=True)

LENIENT_PARSE = BugClass(
    "lenient_parse",
    "Let a partial-JSON parser decide when the call was done, so a prefix or a cut-off "
    "call was handed on as if whole; show partial values if you like, but hand on only "
    "at the stop.",
    ("earendil-works/pi#5964", "langchain-ai/langchain#39275",
     "langchain-ai/langchainjs#11469"),
    lambda s: (early := _early(s)) is not None and (s.parsed or _read_leniently(early))
    and not _not_lenient(s),
    LenientParse,
    # {"limit": 2 reads as a finished object to a partial parser; 20 is what was sent.
    {"args": '{"limit": 20, "status": "refunded"}', "split": 11},
    refuted=_not_lenient)

LOST_ON_TRUNCATION = BugClass(
    "lost_on_truncation",
    "Handed calls on only at the stream's end marker ([DONE], message_stop), so a turn "
    "whose stop reason came but whose end marker did not lost calls whose stop had come; "
    "hand each call on at its own stop (Chat: at finish_reason), and say when the stream "
    "was cut.",
    ("Lingtai-AI/lingtai-kernel#753", "CommandCodeAI/command-code#785"),
    lambda s: s.aspect == CALLS and s.ends_early and bool(s.missing),
    client=True)
