"""Classes that send a fragment to the wrong buffer: keyed by name, by id, by block alone,
to the last call, appended at a reused index, or an index taken for a list position."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from ..accumulate import Accumulator, CallBuffer, _get
from .recognise import (
    NO_ARGS,
    _blank,
    _held_together,
    _index_not_position,
    _on,
    _raised_index,
    _same_key,
    interleaves,
    json_value,
)
from .registry import BugClass
from .symptom import CALLS, Sent, Symptom


class KeyByName(Accumulator):
    """key_by_name: buffers are looked up by tool name, not by the call's block.

    A second call to the same tool in one turn finds the first call's buffer and keeps
    appending to it: one call is handed on, its arguments two documents run together
    (``{"city":"Paris"}{"city":"Rome"}``). langgenius/dify#21948 reports two calls to
    one tool shown as one; mateaix/mateclaw#525 replaced a ``toolName::toolArgs`` key
    that merged distinct calls.
    """

    def start_call(self, event: Mapping[str, Any]) -> None:
        name = _get(event, "tool")
        same = next((buf for buf in self.calls if buf.tool == name), None)
        if same is None:
            super().start_call(event)
        else:
            self.by_key[self.key(event)] = same


class KeyByLast(Accumulator):
    """key_by_last: every fragment goes to the most recently announced call.

    Right whenever calls arrive one after another (announced, fragments, stopped), so it
    passes every sequential stream. Chat keys each fragment by its ``index`` and Responses
    by its ``output_index``, so parallel calls may interleave: then the earlier call's
    fragments land in the later call's buffer, one call is handed on empty and the other
    with two documents shuffled together. mozilla-ai/any-llm PR #1305 fixed a stream
    converter that attached every tool-call fragment to the current block instead of the
    block for its ``tool_calls[].index`` ("one tool got unparseable JSON, the other got
    none"); maximhq/bifrost#1829: interleaved deltas appended to the most recent call.
    """

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        return self.calls[-1] if self.calls else super().buffer_for(event)


class KeyByID(Accumulator):
    """key_by_id: buffers are looked up by the call's id, not by its block.

    Only the announcement carries the id. Follow-on fragments carry none (Anthropic's deltas,
    Chat's continuation chunks, Responses' deltas, which name the output item and not the
    call), an empty one, or one shared by every call, and so do the stop events: every such
    fragment lands in one buffer of no id, which a stop then hands on as a nameless call
    holding every call's arguments run together, while the announced calls come out empty
    or not at all. Arize-ai/phoenix PR #11376: the playground merged streamed tool-call
    chunks by ``id``, Gemini's calls all came with an empty id, and they collapsed into one
    entry with garbled arguments; ThinkInAIXYZ/deepchat#355: continuation chunks looked up
    by ``tool_call_id`` found no buffer (qwen-plus), so the arguments were never joined.
    """

    def key(self, event: Mapping[str, Any]) -> Any:
        return _get(event, "call_id")


class OneChoice(Accumulator):
    """one_choice: calls are keyed by their block alone, as if a response had one choice.

    With ``n`` > 1 every Chat choice numbers its calls from 0, so the second choice's call
    takes the first one's key: both choices' fragments go to the call announced last (the
    first choice's call is handed on empty) and the first choice's finish closes the second
    choice's call as well. Right on every turn with one choice, which is almost every turn;
    the kit's own Accumulator did this until it keyed by (choice, block), and its stepper's
    correct column handed the first choice's call on empty, the second holding both (the
    kit's check suite found it once it had a turn with two choices). langfuse/langfuse#16998:
    one accumulator for every choice of an ``n=2`` stream merged both choices' content and
    their ``tool_calls[0]`` arguments; QuantumNous/new-api PR #6924 (review): tool calls
    keyed only by ``tc.Index`` merge across choices.
    """

    def key(self, event: Mapping[str, Any]) -> Any:
        return _get(event, "block")


class MergeOnReuse(Accumulator):
    """merged_calls: an index announced again keeps its old buffer.

    ollama/ollama#15457 gives every parallel call index 0, Claude through Bedrock can reuse
    one (langchain-ai/langchain#34807); a client keyed by index alone that appends to the
    buffer it has hands on one call holding both documents (``{}{}``: the official
    openai-python helper on Cerebras' zai-glm-4.7, names and ids joined too).
    """

    def start_call(self, event: Mapping[str, Any]) -> None:
        if self.key(event) not in self.by_key:
            super().start_call(event)


class IndexAsPosition(Accumulator):
    """index_as_position: a call's index is taken for its position in a list of calls.

    The index is the producer's key, not a position: a gateway that forwards Anthropic's
    block index as Chat's (BerriAI/litellm#5231) starts at 1, and a list read at
    ``calls[index]`` raises (openai-python: ``IndexError: list index out of range``,
    openai/openai-python#2806 for an index left out; the anthropic SDK on a tool block at
    index 1 with no block 0).
    """

    def start_call(self, event: Mapping[str, Any]) -> None:
        block = _get(event, "block")
        if block is not None and block != sum(1 for b in self.calls
                                              if b.choice == _get(event, "choice")):
            raise IndexError("list index out of range")
        super().start_call(event)


def _key_by_id(s: Symptom) -> bool:
    if s.aspect != CALLS or s.parsed or any(_blank(c.call_id) for c in s.sent):
        return False
    if s.sent and not s.sent[-1].finished and (
            s.sent[-1].call_id in {g[0] for g in s.got}
            or any(_blank(i) and isinstance(a, str) and a and s.sent[-1].args.startswith(a)
                   for i, _, a in s.got)):
        # keyed by id, a call comes out only at a stop (or, where a call ends when the next
        # starts, at that start): the last call, cut before its stop and handed on under its
        # id, or its text alone handed on under none, was handed on at the close, or before
        # (a cut stream's evidence)
        return False
    held = {i: a for i, _, a in s.got if not _blank(i) and isinstance(a, str)}
    # what came with a call's id (arguments on its announcement) stays under it; the rest
    # of its arguments went to the nameless buffer
    rest = [c.args[len(held.get(c.call_id, "")):] if c.args.startswith(
        held.get(c.call_id, "")) else c.args for c in s.sent if c.args]
    sent = [c.args for c in s.sent if c.args]
    nameless = [a for i, _, a in s.got if _blank(i) and isinstance(a, str) and a]
    return any(t in sent or t in rest or any(t.startswith(a + b) or interleaves(t, a, b)
                                             for w in (sent, rest) for a, b in pairwise(w))
               for t in nameless)


def _slot_taken(s: Symptom) -> bool:
    """A list of calls kept by position raised on a stream whose every index is its
    position: a buffer no announcement started (an earlier call's fragments, keyed by an id
    they do not carry) had taken a slot. Only a call sent after one with argument text can
    find its slot so taken."""
    return (_raised_index(s) and not _index_not_position(s)
            and any(a.args for a, _ in pairwise(s.sent)))


def _merged(s: Symptom) -> bool:
    """Two calls of different tools, or at one block, handed on as one call holding both
    calls' arguments one after the other (or, compared parsed, the later call lost)."""
    return _merged_parsed(s) or any(a.tool != b.tool or _same_key(a, b)
                                    for a, b, _ in _held_together(s, "run"))


def _merged_parsed(s: Symptom) -> bool:
    """Compared parsed, on a stream that reused an index: the later call came out empty, as
    the earlier one, or not at all (its text went into the earlier call's buffer, which a
    partial parse reads as the earlier call alone), and nothing else differs."""
    if s.aspect != CALLS or not s.parsed or not _on("index_reuse", s):
        return False
    pairs, missing, extra = s.matched
    values = [w[2] for w in s.expected]
    differ = [h for w, h in pairs if w != h]
    return (bool(differ or missing) and all(h[2] in NO_ARGS or h[2] in values for h in differ)
            and all(h[2] in values for h in extra))


def _later_left_empty(s: Symptom) -> bool:
    """Of two calls sent one after the other whose texts one call holds run together, the
    later was handed on under its own id with no arguments (a list slot left empty)."""
    empty = {i for i, _, a in s.got if a in NO_ARGS}
    return any(b.call_id in empty for _, b, _ in _held_together(s, "run"))


def _lost(s: Symptom) -> list[Sent] | None:
    """The calls sent that were never handed on, when nothing else went wrong (what was
    handed on is right, nothing extra); None otherwise."""
    if not s.only_lost:
        return None
    lost = {w[0] for w in s.missing}
    return [c for c in s.sent if c.call_id in lost]


def _lost_at_renamed_stop(s: Symptom) -> bool:
    """The calls never handed on are those whose stop named them by another id than their
    announcement: the stop was looked up by the id it carried, and found no buffer."""
    lost = _lost(s)
    return bool(lost) and len(lost) == len(s.missing) and all(c.renamed for c in lost)


def _lost_unnamed(s: Symptom) -> bool:
    """Calls never handed on, each with text sent in fragments that named no call, or with
    no stop naming it (a call with no text too): what a client finding fragments, or stops,
    by id loses where it drops what it cannot find."""
    lost = _lost(s)
    return bool(lost) and len(lost) == len(s.missing) and all(
        c.anonymous or c.stop_unnamed for c in lost)


def _found_without_id(s: Symptom) -> bool:
    """A call handed on whole under its own id, though some of its text came in fragments
    naming no call: that client found them by something other than an id."""
    if s.aspect != CALLS:
        return False
    sent = {c.call_id: c for c in s.sent if c.anonymous and c.args and not _blank(c.call_id)}
    return any(i in sent and a == (json_value(sent[i].args) if s.parsed else sent[i].args)
               for i, _, a in s.got)


KEY_BY_NAME = BugClass(
    "key_by_name",
    "Looked buffers up by tool name, so a second call to the same tool was appended to "
    "the first; key each call by its block (index) within its choice.",
    ("langgenius/dify#21948", "mateaix/mateclaw#525"),
    # the first call's buffer kept the second's fragments, and the second is gone
    lambda s: bool(s.missing) and any(a.tool == b.tool and holder == a.call_id
                                      and not _same_key(a, b)
                                      for a, b, holder in _held_together(s, "any")),
    KeyByName,
    # Two calls to one tool in one turn.
    {"args": '{"order_id": "B-2093"}', "split": 14, "tool": "lookup_order",
     "earlier": '{"order_id": "A-4471"}'},
    client=True)

KEY_BY_ID = BugClass(
    "key_by_id",
    "Looked buffers up by the call's id, which only the announcement carries (follow-on "
    "fragments have none, an empty one or a shared one); key by block and take the id "
    "from the announcement.",
    ("Arize-ai/phoenix PR #11376", "ThinkInAIXYZ/deepchat#355"),
    lambda s: _key_by_id(s) or _lost_at_renamed_stop(s),
    KeyByID,
    # Any streamed call: no fragment after the announcement names its call.
    {"args": '{"order_id": "A-4471", "include_line_items": true}', "split": 18,
     "tool": "lookup_order"},
    client=True,
    # with calls kept in a list by position too, the nameless buffer takes a slot, and the
    # next call's index raises: on any stream, not only one whose indices skip
    through={"index_as_position": _slot_taken},
    refuted=_found_without_id,
    # a client dropping what its id finds no buffer for (deepchat#355) loses calls, as
    # much else does
    weak=_lost_unnamed)

ONE_CHOICE = BugClass(
    "one_choice",
    "Keyed calls by block alone, so with n > 1 the choices' calls, each numbered from 0, "
    "ran into one; key by (choice, block) and let a finish close only its own choice's "
    "calls.",
    ("langfuse/langfuse#16998", "QuantumNous/new-api PR #6924"),
    # the later choice's call took the key, and the earlier choice's fragments with it
    lambda s: any(a.choice != b.choice and holder == b.call_id
                  for a, b, holder in _held_together(s, "any")),
    OneChoice,
    # Chat with n=2: each choice calls the same tool at index 0, frames alternating.
    {"args": '{"city": "Rome"}', "split": 9, "tool": "get_weather",
     "earlier": '{"city": "Paris"}', "provider": "openai-chat", "two_choices": True})

KEY_BY_LAST = BugClass(
    "key_by_last",
    "Sent every fragment to the call announced last, which holds only while calls come "
    "one after another; route each fragment by its own index (output_index).",
    ("maximhq/bifrost#1829", "mozilla-ai/any-llm PR #1305", "QwenLM/Qwen-Agent PR #943"),
    # the later call holds both calls' fragments shuffled; the earlier one, left empty, is
    # handed on so or (by a client that also waits for a parse) not at all
    lambda s: any(holder == b.call_id and all(m[0] == a.call_id for m in s.missing)
                  for a, b, holder in _held_together(s, "mixed")),
    KeyByLast,
    # Two calls announced, then their fragments alternating (Chat and Responses only).
    {"args": '{"tz": "Europe/Rome"}', "split": 8, "tool": "get_time",
     "earlier": '{"city": "Paris"}', "earlier_tool": "get_weather",
     "provider": "openai-chat", "interleave": True},
    client=True)

MERGED_CALLS = BugClass(
    "merged_calls",
    "Kept appending to an index's buffer when a new call (new id) came under that index, "
    "or let two calls of different tools share one; start a new call at every "
    "announcement.",
    ("ollama/ollama#15457", "langchain-ai/langchain#34807", "comet-ml/opik#8362"),
    _merged,
    MergeOnReuse,
    # Cerebras' shape: the second call sent under the first call's index.
    {"args": '{"b": 2}', "split": 4, "tool": "g", "earlier": '{"a": 1}', "earlier_tool": "f",
     "provider": "openai-chat", "quirks": ("index_reuse",)},
    client=True)

INDEX_AS_POSITION = BugClass(
    "index_as_position",
    "Took a call's index for its position in a list of calls, so an index that does not "
    "start at 0 (or skips) raised or landed in the wrong slot; key calls by the index "
    "they are sent under (a reused index: the later call landed in the earlier's slot).",
    ("BerriAI/litellm#5231", "openai/openai-python#2806"),
    # raised on a stream whose indices are not positions, or, at a reused one, the later
    # call's text landed in the earlier's slot (its own handed on empty, or parsed, lost):
    # a later call never started at all is merged_calls' evidence, not this one's
    lambda s: (_raised_index(s) and _index_not_position(s))
    or (_on("index_reuse", s) and (_merged_parsed(s) or (_merged(s) and _later_left_empty(s)))),
    IndexAsPosition,
    # Anthropic's block index forwarded as Chat's: the first call at index 1.
    {"args": '{"order_id": "A-4471"}', "split": 9, "tool": "lookup_order",
     "provider": "openai-chat", "quirks": ("index_gap",)},
    client=True)
