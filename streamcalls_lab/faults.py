"""Every classic argument-handling bug as a runnable handler.

Each class below is the correct :class:`~streamcalls_lab.accumulate.Accumulator`
with exactly one decision changed, so running it next to the correct one shows what
that one decision costs. The docstrings name the bug and a public report of it.
``FAULTS`` maps the contract's names to the classes.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import jiter
import nh3
from markdown_it import MarkdownIt

from .accumulate import Accumulator, CallBuffer, _get

_ESCAPE = re.compile(r'(?:\\u[0-9a-fA-F]{4})+|\\["\\/bfnrt]')


class Trim(Accumulator):
    """trim: ``.strip()`` on every argument fragment.

    Whitespace at a join is usually inside a string value, where it is data: the
    result still parses, with words glued together. discourse/discourse-ai#499
    ("support spaces within arguments for Open AI") fixed a handler that dropped a
    fragment consisting of a single space.
    """

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        buf.parts.append(fragment.strip())


def unescape_fragment(fragment: str) -> str:
    """A fragment with its JSON escapes turned into characters, as a per-fragment decoder does.

    An escape cut by the split (a trailing ``\\`` or ``\\u00``) cannot be decoded on its
    own, so this raises ``ValueError``, as ``json.loads`` on the piece would.
    """
    out: list[str] = []
    at = 0
    while (slash := fragment.find("\\", at)) >= 0:
        out.append(fragment[at:slash])
        m = _ESCAPE.match(fragment, slash)
        if m is None:
            raise ValueError(f"cannot decode {fragment[slash:slash + 6]!r} on its own: "
                             "the escape was cut, its rest is in the next fragment")
        out.append(json.loads(f'"{m.group()}"'))
        at = m.end()
    out.append(fragment[at:])
    return "".join(out)


class DecodeEach(Accumulator):
    """decode_each: interprets the JSON escapes of each fragment on its own.

    What this one does (decided here, so the harm is visible): whole escapes are
    replaced by their characters, so the buffer no longer holds what was sent
    (``\\"`` becomes a bare quote and the arguments stop parsing; ``\\n`` becomes a raw
    newline, which strict JSON rejects; ``\\u00e9`` becomes ``é``). A split inside an
    escape (``\\`` | ``n``, ``\\u00`` | ``e9``) cannot be decoded at all: ``feed`` raises
    ``ValueError`` and the turn is lost. The streaming-JSON form of the same bug:
    ultrajson/ultrajson#216 and simplejson/simplejson#135 (failing tests for
    ``\\u00`` | ``fc`` split across two reads).
    """

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        buf.parts.append(unescape_fragment(fragment))


class ParseToFinish(Accumulator):
    """parse_to_finish: "the buffer parses strictly" is taken to mean "the call is finished".

    The call is handed on at the first fragment after which ``json.loads`` succeeds.
    A proper prefix of an object never parses, so this passes most tests; it bites on
    top-level values that are not objects (``2`` of ``20``), on buffers that merge two
    calls, and on a stream cut right after the closing brace (handed on though no stop
    ever came). microsoft/agent-framework#6549 uses this test (an ``_is_complete`` that
    is true once ``json.loads`` accepts the streamed arguments) to decide when a call
    being streamed is complete enough to show.
    """

    def after_fragment(self, buf: CallBuffer) -> None:
        if buf.dispatched is not None:
            return
        try:
            value = json.loads(buf.args)
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
    with two documents shuffled together. mozilla-ai/any-llm#1305 fixed a stream converter
    that attached every tool-call fragment to the current block instead of the block for
    its ``tool_calls[].index`` ("one tool got unparseable JSON, the other got none").
    """

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        return self.calls[-1] if self.calls else super().buffer_for(event)


class DecodeChunks(Accumulator):
    """decode_chunks: each socket read is decoded with ``bytes.decode("utf-8")`` on its own.

    A read that ends inside a multi-byte character (``é`` is two bytes in UTF-8, an
    emoji four) raises ``UnicodeDecodeError`` on a well-formed stream. Only the
    byte-level entry (``feed_bytes``) has reads to get wrong. mpetazzoni/sseclient#8
    ("Decoding too soon"), vllm-project/vllm#38732, jawah/urllib3.future#349.
    """

    def read(self, chunk: bytes) -> bytes:
        # The decoded text would go to a line splitter; back to bytes for the shared one.
        return chunk.decode("utf-8").encode("utf-8")


MARKDOWN_SYNTAX = frozenset("*_`\\#>~")
"""The characters a Markdown renderer may eat from a value (what ``markdown_bubble`` loses)."""


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


def bubble_text(source: str) -> str:
    """What a chat bubble keeps of ``source``: Markdown rendered, sanitised, as visible text.

    markdown-it renders, nh3 sanitises (what a bubble would display), and the text
    content is what a copy button or a saved transcript gets: ``*both*`` loses its
    asterisks, ``\\"`` its backslash, a leading ``#`` or ``>`` disappears. Nothing here is
    ever displayed as live HTML; the result is plain text.
    """
    shown = nh3.clean(_markdown().render(source))
    return html.unescape(nh3.clean(shown, tags=set())).strip("\n")


class MarkdownBubble(Accumulator):
    """markdown_bubble: argument fragments are appended to the chat bubble, like prose.

    The bubble's source (``message``) now holds the arguments, and what it keeps is the
    renderer's output, re-rendered on every fragment as chat UIs do: Markdown syntax in
    the values (``*``, backticks, ``#``, ``>``, a ``\\`` before punctuation) is eaten.
    The call's arguments are read back from the bubble, so what is handed on is the
    rendered text, not what was sent. Markdown eating such characters in chat text:
    NullVoxPopuli/emberclear#51 (``\\|`` shown as ``|``), nostrord/nostrord#241
    (``nip44_decrypt_batch`` shown as ``nip44decryptbatch``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.sources: dict[int, str] = {}
        """Each call's part of the bubble source, by its position in ``calls``."""

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        self.add_text(fragment, buf.choice)
        at = next(i for i, other in enumerate(self.calls) if other is buf)
        self.sources[at] = self.sources.get(at, "") + fragment
        buf.parts[:] = [bubble_text(self.sources[at])]


CORRECT = "correct"
"""The name the correct :class:`~.accumulate.Accumulator` goes by beside the ``FAULTS`` names."""
FAULTS: dict[str, type[Accumulator]] = {
    "trim": Trim,
    "decode_each": DecodeEach,
    "parse_to_finish": ParseToFinish,
    "lenient_parse": LenientParse,
    "key_by_name": KeyByName,
    "key_by_last": KeyByLast,
    "decode_chunks": DecodeChunks,
    "markdown_bubble": MarkdownBubble,
}
"""The faulty handlers, keyed by the bug they show (the contract's names)."""
