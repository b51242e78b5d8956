"""Every bug class the kit knows, as one spec each: its handler, how it is recognised, its
setup in the breaker, its broken client, and where it was reported.

A :class:`BugClass` is the single place a class is defined. ``check_handler`` and the torture
harness both describe what went wrong in a :class:`Symptom` (format-neutral: what was sent,
what was expected, what was handed on, the error, the message surface, how the stream was
cut) and ask every spec's ``recognise`` whether it is that class's symptom; the breaker's
presets, the torture clients' ``--bug`` names, ``FAULTS`` and ``CLASSES`` are read from the
specs too. :func:`register` adds a class of your own, and every one of those sees it.

Each handler below is the correct :class:`~streamcalls_lab.accumulate.Accumulator` with
exactly one decision changed, so running it next to the correct one shows what that one
decision costs. The docstrings name the bug and a public report of it.
"""

from __future__ import annotations

import codecs
import html
import json
import re
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property, lru_cache
from itertools import pairwise
from typing import Any, NamedTuple, TypeVar

import jiter
import nh3
from markdown_it import MarkdownIt

from . import deepjson
from .accumulate import Accumulator, CallBuffer, _get
from .providers import FORMATS
from .wording import count

_ESCAPE = re.compile(r'(?:\\u[0-9a-fA-F]{4})+|\\["\\/bfnrt]')
ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
"""One JSON escape (``\\n``, ``\\"``, ``\\u00e9``): what a split must not fall inside."""


# -- the handlers: one decision changed each -------------------------------------------------
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
    ``\\u00`` | ``fc`` split across two reads); bojieli/ai-agent-book#194 parsed each
    ``input_json_delta`` on its own, so every input longer than one fragment came out ``{}``.
    """

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        buf.parts.append(unescape_fragment(fragment))


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


class DecodeChunks(Accumulator):
    """decode_chunks: each socket read is decoded with ``bytes.decode("utf-8")`` on its own.

    A read that ends inside a multi-byte character (``é`` is two bytes in UTF-8, an
    emoji four) raises ``UnicodeDecodeError`` on a well-formed stream. Only the
    byte-level entry (``feed_bytes``) has reads to get wrong. mpetazzoni/sseclient#8
    ("Decoding too soon"), vllm-project/vllm PR #38732 (bench_serve crashed on 0.4% of
    requests with CJK output), jawah/urllib3.future#349.
    """

    def read(self, chunk: bytes) -> bytes:
        # The decoded text would go to a line splitter; back to bytes for the shared one.
        return chunk.decode("utf-8").encode("utf-8")


# -- what clients assume about producers: each shows only on a quirky stream ----------------
class BlankIdNewCall(Accumulator):
    """blank_id_new_call: a fragment that carries an id, even an empty one, starts a call.

    OpenAI sends the id on a call's first fragment only; DashScope's qwen models (through
    OpenRouter too) send ``"id": ""`` on every follow-on fragment, and a client that takes
    any id that differs from the call's for a new call splits one call into two: the real
    one with no arguments, a nameless one with all of them. ThinkInAIXYZ/deepchat#355
    (qwen-plus), the kit's own loader until it folded them (the one real recording it
    misread).
    """

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        call_id, buf = _get(event, "call_id"), super().buffer_for(event)
        if call_id is not None and call_id != buf.call_id:
            self.start_call(event)
            return self.by_key[self.key(event)]
        return buf


class NameConcatenated(Accumulator):
    """name_concatenated: the tool name is joined from every fragment that carries one.

    Names arrive whole in the announcement, but some servers repeat them on every fragment
    (llama.cpp before PR #13800); a client that appends name deltas, as the official
    openai-python helper appends every string it is sent for a call, calls
    ``final_resultfinal_resultfinal_result`` (ggml-org/llama.cpp#13774: pydantic-ai).
    """

    def identify(self, buf: CallBuffer, event: Mapping[str, Any]) -> None:
        tool = _get(event, "tool")
        if tool:
            buf.tool = (buf.tool or "") + tool


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


_LINE_ENDS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What ``str.splitlines()`` ends a line at besides CR and LF (SSE ends lines at CR, LF and
CRLF only)."""


class Splitlines(Accumulator):
    """splitlines: the stream's lines are cut with ``str.splitlines()``.

    SSE lines end at CR, LF or CRLF; ``str.splitlines()`` (and ``httpx``'s ``iter_lines``)
    also ends them at U+2028, U+2029, U+0085 and friends, which JSON may carry raw inside a
    string: the data line is cut in two and the event is lost or garbled
    (open-metadata/OpenMetadata#29531; langgenius/dify PR #39008). Only the byte-level entry
    has lines to cut.
    """

    def __init__(self) -> None:
        super().__init__()
        self._text = codecs.getincrementaldecoder("utf-8")()

    def read(self, chunk: bytes) -> bytes:
        # The text as splitlines() would cut it, back to bytes for the shared SSE decoder.
        return _LINE_ENDS.sub("\n", self._text.decode(chunk)).encode("utf-8")


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


MARKDOWN_SYNTAX = frozenset("*_`\\#>~")
"""The characters a Markdown renderer may eat from a value (what ``markdown_bubble`` loses)."""


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


@lru_cache(maxsize=4096)  # re-rendered on every fragment: the breaker's refreshes repeat them
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


# -- the symptom: what went wrong in one run, in no wire format --------------------------------
class Sent(NamedTuple):
    """One call as the stream sent it (a cut-off call with the arguments it got so far)."""

    call_id: str | None
    tool: str | None
    args: str
    block: int | None = None
    choice: int | None = None


Seen = tuple[Any, Any, Any]
"""A call as handed on or expected: ``(call_id, tool, args)``, ``args`` the exact text or,
when a client shows only that, the parsed value."""

ERROR, SURFACE, CALLS = "error", "surface", "calls"
"""The three parts of a run a symptom can be about: a raise or exit, the message surface,
the calls handed on."""


@dataclass(frozen=True)
class Symptom:
    """One thing that went wrong in one run of one case, as every recogniser reads it.

    ``check_handler`` and the torture judge build these with :func:`symptoms` from what
    they ran: the handler, or a client process, is invisible here, and so is the wire
    format. ``aspect`` says which part of the run went wrong; the rest is the whole run.
    """

    aspect: str
    """:data:`ERROR` (it raised, exited non-zero or hung), :data:`SURFACE` (the message
    surface is not the text) or :data:`CALLS` (the calls handed on are not the ones sent)."""
    sent: tuple[Sent, ...]
    """Every call the stream sent, in announcement order, a cut-off one included."""
    expected: tuple[Seen, ...]
    """What a correct handler hands on."""
    got: tuple[Seen, ...]
    """What was handed on."""
    parsed: bool = False
    """``args`` are compared as parsed values (a client that shows only ``input``)."""
    error: str = ""
    """``raised <Type>: <message>``, ``exited <n>: <last line>``, or empty."""
    hung: bool = False
    """The run never ended (a client process that did not exit)."""
    message: str | None = None
    """The message surface, where the handler has one."""
    text: str = ""
    """The text deltas sent, joined: what the message surface should be."""
    ends_early: bool = False
    """The stream stops before its end: a call's stop or the end of the turn never comes."""
    escape_cut: bool = False
    """A fragment boundary falls inside a JSON escape."""
    reads_cut: bool = False
    """The bytes came in reads that may end inside a character (not as decoded events)."""
    quirks: frozenset[str] = frozenset()
    """The producer quirks the stream was written with (``producers.QUIRKS`` names them): a
    class of what clients assume about producers is recognised only on such a stream."""
    content_encoding: str = ""
    """The content-encoding the body was served with because the client asked for it
    (``gzip``), or empty: the bytes came as they are."""

    @cached_property
    def matched(self) -> tuple[tuple[tuple[Seen, Seen], ...], tuple[Seen, ...], tuple[Seen, ...]]:
        """``(pairs, missing, extra)``: each expected call with the first call handed on
        under its id, the expected calls never handed on, and the calls handed on beyond
        those (unknown ids, or an id handed on again)."""
        left = list(self.got)
        pairs, missing = [], []
        for want in self.expected:
            have = next((g for g in left if g[0] == want[0]), None)
            if have is None:
                missing.append(want)
            else:
                left.remove(have)
                pairs.append((want, have))
        return tuple(pairs), tuple(missing), tuple(left)

    @property
    def missing(self) -> tuple[Seen, ...]:
        return self.matched[1]


def _order_free(calls: Iterable[Seen]) -> list[str]:
    return sorted(json.dumps(c, sort_keys=True, default=str) for c in calls)


def symptoms(*, sent: Sequence[Sent], expected: Sequence[Seen], got: Sequence[Seen],
             parsed: bool = False, error: str = "", hung: bool = False,
             message: str | None = None, text: str = "", ends_early: bool = False,
             escape_cut: bool = False, reads_cut: bool = False,
             quirks: frozenset[str] = frozenset(),
             content_encoding: str = "") -> list[Symptom]:
    """What went wrong in one run, one :class:`Symptom` per part (none: nothing did).

    An error counts unless the stream was cut (a client that exits non-zero after a cut
    stream, with every finished call handed on, did nothing wrong); when it left no call
    handed on, the calls are not judged as well. Calls are compared in any order.
    """
    base = Symptom(CALLS, tuple(sent), tuple(expected), tuple(got), parsed, error, hung,
                   message, text, ends_early, escape_cut, reads_cut, frozenset(quirks),
                   content_encoding)
    same = tuple(got) == tuple(expected) or _order_free(got) == _order_free(expected)
    out = []
    failed = hung or bool(error and not ends_early and (not got or same))
    if failed:
        out.append(replace(base, aspect=ERROR))
    if message is not None and message != text:
        out.append(replace(base, aspect=SURFACE))
    if not same and not (failed and (hung or not got)):
        out.append(base)
    return out


def _calls_shown(calls: Sequence[Seen]) -> str:
    return repr([tuple(c) for c in calls])


def describe(s: Symptom) -> tuple[str, str, str]:
    """``(expected, got, detail)`` as a report shows them: the smallest difference."""
    how = " (compared as parsed input)" if s.parsed else ""
    if s.aspect == ERROR:
        if s.hung:
            return _calls_shown(s.expected), _calls_shown(s.got), s.error + how
        if s.got:
            return (_calls_shown(s.expected), _calls_shown(s.got),
                    "handed on the right calls, then " + s.error + how)
        return _calls_shown(s.expected), s.error, "nothing handed on" + how
    if s.aspect == SURFACE:
        on_it = "argument text on the message surface" if _args_on_surface(s) else (
            "the message surface is not the text deltas")
        return repr(s.text), repr(s.message), on_it
    pairs, missing, extra = s.matched
    differ = [(w, h) for w, h in pairs if w != h]
    parts = []
    if differ:
        parts.append(f"{count(len(differ), 'call')} handed on with other arguments or tool")
    if extra:
        parts.append(f"{count(len(extra), 'call')} handed on that a correct handler holds back "
                     "or never sees")
    if missing:
        parts.append(f"{count(len(missing), 'call')} never handed on")
    if s.error:
        parts.append(s.error)
    detail = "; ".join(parts) + how
    if len(differ) + len(extra) + len(missing) == 1:
        want, have = (differ[0] if differ else (None, extra[0]) if extra else (missing[0], None))
        return ("nothing" if want is None else repr(want[2]),
                "nothing" if have is None else repr(have[2]), detail)
    return _calls_shown(s.expected), _calls_shown(s.got), detail


# -- recognising: the tests each spec's ``recognise`` is built from -----------------------------
def deleted_only(sent: str, got: str, deletable: Callable[[str], bool]) -> bool:
    """``got`` is ``sent`` with some characters removed, each of them ``deletable``."""
    if got == sent or len(got) >= len(sent):
        return False
    j = 0
    for c in sent:
        if j < len(got) and got[j] == c:
            j += 1
        elif not deletable(c):
            return False
    return j == len(got)


def interleaves(got: str, a: str, b: str) -> bool:
    """``got`` is ``a`` and ``b`` shuffled together, each in order, and neither alone."""
    if len(got) != len(a) + len(b) or got in (a + b, b + a):
        return False
    can = [True] + [False] * len(b)  # can[j]: got[:i + j] interleaves a[:i] and b[:j]
    for j in range(1, len(b) + 1):
        can[j] = can[j - 1] and b[j - 1] == got[j - 1]
    for i in range(1, len(a) + 1):
        can[0] = can[0] and a[i - 1] == got[i - 1]
        for j in range(1, len(b) + 1):
            can[j] = ((can[j] and a[i - 1] == got[i + j - 1])
                      or (can[j - 1] and b[j - 1] == got[i + j - 1]))
    return can[len(b)]


def _escape_char(token: str) -> str:
    return json.loads(f'"{token}"')


def partly_decoded(sent: str, got: str) -> bool:
    """``got`` is ``sent`` with some of its JSON escapes replaced by their characters."""
    if got == sent:
        return False
    i = j = 0
    while i < len(sent):
        m = ESCAPE.match(sent, i)
        if m is None:
            if j >= len(got) or got[j] != sent[i]:
                return False
            i, j = i + 1, j + 1
            continue
        token = m.group()
        pair = ESCAPE.match(sent, m.end())
        both = token + pair.group() if pair and token[1] == "u" and pair.group()[1] == "u" else ""
        if got.startswith(token, j):
            i, j = m.end(), j + len(token)
        elif both and got.startswith(_escape_char(both), j):
            i, j = pair.end(), j + len(_escape_char(both))  # type: ignore[union-attr]
        elif got.startswith(_escape_char(token), j):
            i, j = m.end(), j + len(_escape_char(token))
        else:
            return False
    return j == len(got)


def parses(text: str) -> bool:
    """A strict JSON parse of ``text`` succeeds (at any depth)."""
    return deepjson.is_json(text)


NO_ARGS: tuple[Any, ...] = ("", {}, None)
"""A call handed on with no arguments: as text, parsed, or null."""


def _blank(call_id: Any) -> bool:
    return call_id is None or call_id == ""


def _same_key(a: Sent, b: Sent) -> bool:
    return a.block is not None and (a.choice, a.block) == (b.choice, b.block)


def _every_difference(s: Symptom, fits: Callable[[Seen, Seen], bool]) -> bool:
    """Some call differs, and every call that differs came out under its own id as
    ``fits(want, have)`` allows; nothing missing, nothing extra."""
    if s.aspect != CALLS:
        return False
    pairs, missing, extra = s.matched
    differ = [(w, h) for w, h in pairs if w != h]
    return bool(differ) and not missing and not extra and all(fits(w, h) for w, h in differ)


def _each_call(s: Symptom, test: Callable[[str, str], bool]) -> bool:
    """Every difference is a call handed on with the right identity, its arguments (as sent)
    changed as ``test(sent, got)`` allows; nothing missing, nothing extra."""
    return not s.parsed and _every_difference(
        s, lambda w, h: h[1] == w[1] and isinstance(h[2], str) and test(w[2], h[2]))


def _early(s: Symptom) -> list[Any] | None:
    """The arguments of every call handed on before its stop, when that explains every
    difference: a call handed on holding a prefix of its arguments (possibly none), or a
    call whose stop never came handed on at all. None otherwise."""
    if s.aspect != CALLS or _on("args_only_in_done", s):  # no fragment there to hand on
        return None
    pairs, missing, extra = s.matched
    if missing:
        return None
    early = []
    for want, have in pairs:
        if want == have:
            continue
        args = have[2]
        if s.parsed or have[1] != want[1] or not isinstance(args, str) or not (
                len(args) < len(want[2]) and want[2].startswith(args)):
            return None
        early.append(args)
    by_id = {c.call_id: c for c in s.sent if not _blank(c.call_id)}
    for have in extra:
        call = by_id.get(have[0])
        if call is None:
            return None
        args = have[2]
        if s.parsed:
            ok = s.ends_early or args == json_value(call.args)
        else:
            ok = isinstance(args, str) and call.args.startswith(args)
        if not ok:
            return None
        early.append(args)
    return early or None


def json_value(text: str) -> Any:
    """The JSON value of ``text``, or ``text`` itself when it does not parse."""
    try:
        return deepjson.loads(text)
    except ValueError:
        return text


def _held_together(s: Symptom, how: str) -> Iterator[tuple[Sent, Sent, Any]]:
    """``(a, b, holder)`` for each two calls sent one after the other whose arguments one
    call handed on under an id (``holder``) holds together: ``run`` one after the other (and
    maybe more after), ``mixed`` shuffled (each in order, fragment by fragment), ``any``
    either."""
    if s.aspect != CALLS or s.parsed:
        return
    sent_args = {c.args for c in s.sent}
    held = [(i, a) for i, _, a in s.got
            if not _blank(i) and isinstance(a, str) and a not in sent_args]
    for a, b in pairwise(s.sent):
        if not (a.args and b.args):
            continue
        for holder, t in held:
            if ((how != "mixed" and t.startswith(a.args + b.args))
                    or (how != "run" and interleaves(t, a.args, b.args))):
                yield a, b, holder


def _args_on_surface(s: Symptom) -> bool:
    return s.message is not None and any(c.args[:6] in s.message for c in s.sent if c.args)


def split_characters_lost(sent: str, got: str) -> bool:
    """``got`` is ``sent`` with some multi-byte characters each replaced by a run of U+FFFD
    or dropped: what decoding each read on its own with ``errors="replace"`` (or
    ``"ignore"``) makes of a character a read boundary cut."""
    if got == sent:
        return False
    j = 0
    for c in sent:
        if j < len(got) and got[j] == c:
            j += 1
        elif c.isascii():  # one byte in UTF-8: no read can cut it
            return False
        else:
            start = j
            while j < len(got) and got[j] == "\ufffd":
                j += 1
            if j == start and c in SEPARATORS:
                return False  # a line end to str.splitlines() gone: splitlines, not a read
    return j == len(got)


def _as_text(value: Any, parsed: bool) -> str | None:
    if parsed:
        return deepjson.dumps(value)
    return value if isinstance(value, str) else None


def _decode_chunks(s: Symptom) -> bool:
    if s.content_encoding or not s.reads_cut:
        return False  # a body served compressed fails for that reason: content_encoding
    if s.aspect == ERROR:
        return not s.hung and not s.got and "UnicodeDecodeError" in s.error
    if s.aspect != CALLS:
        return False
    # the silent form: every difference is a call whose split characters came out as U+FFFD
    def lost(w: Seen, h: Seen) -> bool:
        a, b = _as_text(w[2], s.parsed), _as_text(h[2], s.parsed)
        return h[1] == w[1] and a is not None and b is not None and split_characters_lost(a, b)

    return _every_difference(s, lost)


def _content_encoding(s: Symptom) -> bool:
    return bool(s.content_encoding) and (s.aspect == ERROR or (s.aspect == CALLS
                                                              and bool(s.missing)))


def _key_by_id(s: Symptom) -> bool:
    if s.aspect != CALLS or s.parsed or any(_blank(c.call_id) for c in s.sent):
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


def _anything(s: Symptom) -> bool:
    return True


def _on(quirk: str, s: Symptom) -> bool:
    """The symptom happened on a stream written with ``quirk``."""
    return quirk in s.quirks


def _split_by_blank_id(s: Symptom) -> bool:
    """On a stream whose follow-on fragments had blank ids: a call of blank id handed on
    besides the calls sent (one call split in two), or in place of one, holding the end of
    its arguments (the call started again at each blank id)."""
    if s.aspect != CALLS or not _on("blank_identity", s):
        return False
    blank = [a for i, _, a in s.got if _blank(i) and a not in NO_ARGS]
    return bool(blank) and (len(s.got) > len(s.expected) or any(
        isinstance(a, str) and c.args != a and c.args.endswith(a) for a in blank
        for c in s.sent))


def _repeated(have: Any, want: Any) -> bool:
    """``have`` is ``want`` itself, or the text ``want`` run together more than once."""
    if have == want:
        return True
    return (isinstance(have, str) and isinstance(want, str) and bool(want)
            and len(have) % len(want) == 0 and have == want * (len(have) // len(want)))


def _paired(s: Symptom, fits: Callable[[Seen, Seen], bool]) -> list[tuple[Seen, Seen]] | None:
    """Each call expected paired with one handed on that ``fits`` it (``fits(want, have)``),
    one to one and nothing left over; None when they do not pair so."""
    if s.aspect != CALLS or len(s.got) != len(s.expected):
        return None
    left, pairs = list(s.got), []
    for w in s.expected:
        h = next((h for h in left if fits(w, h)), None)
        if h is None:
            return None
        left.remove(h)
        pairs.append((w, h))
    return pairs


def _name_repeated(s: Symptom) -> bool:
    """Every call came out with its arguments, its tool name (and maybe its id) the
    announced one run together once per fragment that repeated it."""
    pairs = _paired(s, lambda w, h: h[2] == w[2] and _repeated(h[0], w[0])
                    and _repeated(h[1], w[1]))
    return pairs is not None and any(h[1] != w[1] for w, h in pairs)


def _blank_copied(s: Symptom) -> bool:
    """On a stream whose follow-on fragments have a blank identity: the run raised, or every
    call came out with its arguments, its id or name blanked."""
    if not _on("blank_identity", s) or s.hung:
        return False
    if s.aspect == ERROR or (s.aspect == CALLS and s.error):
        return True  # a correct client survives the stream: the blank value broke it
    pairs = _paired(s, lambda w, h: h[2] == w[2] and (h[0] == w[0] or _blank(h[0]))
                    and (h[1] == w[1] or _blank(h[1])))
    return pairs is not None and any(h[:2] != w[:2] for w, h in pairs)


def _raised_index(s: Symptom) -> bool:
    """The run raised an index error: a call's index taken for a list position (indices
    skip on a gateway's stream, and Anthropic's count the text blocks too)."""
    return s.aspect == ERROR and not s.hung and (
        "IndexError" in s.error or "list index out of range" in s.error)


def _dropped_on(quirk: str) -> Callable[[Symptom], bool]:
    """Calls never handed on, on a stream written with ``quirk``, and nothing else wrong."""
    def recognise(s: Symptom) -> bool:
        return (s.aspect == CALLS and _on(quirk, s) and bool(s.missing)
                and not s.matched[2] and all(w == h for w, h in s.matched[0]))
    return recognise


SEPARATORS = ("\u2028", "\u2029", "\x85")
"""Line ends to ``str.splitlines()`` that JSON may carry raw (and SSE does not end lines at)."""


def _cut_at_separator(s: Symptom) -> bool:
    """On a stream with a line separator in its data: what held one came out without it,
    or not at all, or the run raised."""
    if not _on("line_separator_in_data", s):
        return False
    if s.aspect == ERROR:
        return not s.hung
    if s.aspect == SURFACE:
        return s.message is not None and any(c in s.text and c not in s.message
                                             for c in SEPARATORS)
    pairs, missing, extra = s.matched
    if extra:  # a line cut in two loses what it held; it makes no call
        return False
    lost = [str(w[2]) for w, h in pairs if w != h and not any(c in str(h[2]) for c in SEPARATORS)]
    lost += [str(m[2]) for m in missing]
    return any(c in args for args in lost for c in SEPARATORS)


def _null_arguments(s: Symptom) -> bool:
    """Every difference is a call with no argument text handed on with null arguments."""
    return _every_difference(s, lambda w, h: h[:2] == w[:2] and h[2] is None
                             and w[2] in ("", {}))


def _no_args_from_done(s: Symptom) -> bool:
    """On a stream whose arguments came only in the done event: every call that differs
    came out under its own id with no arguments (as text or parsed)."""
    return _on("args_only_in_done", s) and _every_difference(
        s, lambda w, h: h[1] == w[1] and w[2] not in NO_ARGS and h[2] in NO_ARGS)


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


def _no_parse_no_call(s: Symptom) -> bool:
    """The calls never handed on are those with no argument text."""
    return (s.aspect == CALLS and bool(s.missing) and not s.matched[2]
            and all(w == h for w, h in s.matched[0])
            and all(isinstance(m[2], str) and not m[2].strip() for m in s.missing))


# -- the spec ----------------------------------------------------------------------------------
FOUND_BY_THE_KIT = "found by the kit"
"""A citation meaning: no public report yet; the kit's own suite found it."""


@dataclass(frozen=True)
class BugClass:
    """One bug class: everything the kit knows about it, in one place."""

    name: str
    summary: str
    """One line a maintainer can act on: what the handler assumed, and what to do instead
    (reports show it)."""
    cites: tuple[str, ...]
    """The public threads it comes from (``owner/repo#n``, ``owner/repo PR #n``), or
    :data:`FOUND_BY_THE_KIT`."""
    recognise: Callable[[Symptom], bool]
    """Whether a :class:`Symptom` is this class's: the one rule ``check_handler`` and the
    torture judge both apply."""
    handler: type[Accumulator] | None = None
    """The faulty accumulator that shows it (None: no event-level variant)."""
    preset: Mapping[str, Any] | None = field(default=None, compare=False)
    """Keyword arguments for :class:`streamcalls_lab.breaker.Setup`: a turn on which the
    handler goes wrong (every class with a handler has one)."""
    client: bool = False
    """``clients/`` has a deliberately broken torture client for it (``--bug NAME``)."""
    fallback: bool = False
    """Generic: consulted only when no other class recognises a symptom."""


SPECS: dict[str, BugClass] = {}
"""Every class by name, in report order. Change it through :func:`register`."""
CLASSES: KeysView[str] = SPECS.keys()
"""Every class name, in report order (a live view: a registered class is in it)."""
FAULTS: dict[str, type[Accumulator]] = {}
"""The faulty handlers, keyed by the bug they show (the contract's names, then the
extensions), in report order; kept in step with :data:`SPECS`."""
OTHER = "other"
"""What a symptom no class recognises is put down to."""


def register(spec: BugClass) -> BugClass:
    """Add a bug class (or replace one of that name): ``check_handler``, the torture harness,
    the stepper, the breaker and ``FAULTS`` see it from now on.

    A new class is reported after the built-in specific ones and before the generic
    fallbacks (``identity``, ``missing_call``, ``message``, ``other``). Its ``recognise``
    should accept only its own symptom: ``check_handler(spec.handler)`` must name it alone.
    """
    if spec.handler is not None and spec.preset is None:
        raise ValueError(f"{spec.name}: a class with a handler needs a preset")
    specs = [s for s in SPECS.values() if s.name != spec.name]
    at = next((i for i, s in enumerate(specs) if s.fallback), len(specs))
    if spec.name in SPECS:
        at = list(SPECS).index(spec.name)
    specs.insert(at, spec)
    _set(specs)
    return spec


def unregister(name: str) -> None:
    """Remove a class added with :func:`register`."""
    _set([s for s in SPECS.values() if s.name != name])


def _set(specs: Iterable[BugClass]) -> None:
    # in place: CLASSES, FAULTS and every module that imported them see the change
    specs = list(specs)
    SPECS.clear()
    SPECS.update((s.name, s) for s in specs)
    FAULTS.clear()
    FAULTS.update((s.name, s.handler) for s in specs if s.handler is not None)


def classify(symptom: Symptom) -> frozenset[str]:
    """The classes whose ``recognise`` accepts ``symptom`` (any of them could explain it):
    the specific ones, else the generic fallbacks, else :data:`OTHER`."""
    specs = [s for s in SPECS.values() if s.name != OTHER]
    for fallback in (False, True):
        found = frozenset(s.name for s in specs
                          if s.fallback is fallback and s.recognise(symptom))
        if found:
            return found
    return frozenset({OTHER})


T = TypeVar("T")


def cover(findings: Sequence[T], classes: Callable[[T], frozenset[str]]) -> dict[str, list[T]]:
    """The fewest classes that explain every finding (a greedy set cover), in report order.

    A class that is the only explanation of some finding is taken first; then the class
    explaining the most findings left, ties broken in report order.
    """
    order = {c: i for i, c in enumerate(SPECS)}

    def rank(c: str) -> int:
        return order.get(c, len(order))

    left = list(findings)
    chosen: dict[str, list[T]] = {}
    while left:
        forced = {next(iter(classes(f))) for f in left if len(classes(f)) == 1}
        if forced:
            pick = min(forced, key=rank)
        else:
            counts: dict[str, int] = {}
            for f in left:
                for c in classes(f):
                    counts[c] = counts.get(c, 0) + 1
            pick = min(counts, key=lambda c: (-counts[c], rank(c)))
        chosen[pick] = [f for f in left if pick in classes(f)]
        left = [f for f in left if pick not in classes(f)]
    return dict(sorted(chosen.items(), key=lambda kv: rank(kv[0])))


def summary(name: str) -> str:
    """A class's one-line summary ("" for a name the kit does not know)."""
    spec = SPECS.get(name)
    return spec.summary if spec is not None else ""


# -- the classes, in report order ----------------------------------------------------------------
_set([
    BugClass(
        "trim",
        "Stripped whitespace off each fragment, taking it for formatting; at a join it is "
        "usually inside a string value, so append every fragment exactly as sent.",
        ("discourse/discourse-ai#499",),
        lambda s: _each_call(s, lambda a, b: deleted_only(a, b, str.isspace)),
        Trim,
        # The chapter's mangled ticket summary: a boundary right before a space inside it.
        {"args": '{"summary": "urgent request from ops about the March invoice run"}',
         "split": 27},
        client=True),
    BugClass(
        "decode_each",
        "Decoded each fragment's JSON escapes on its own; an escape can be cut across "
        "fragments and decoding changes the bytes, so keep fragments raw and parse the "
        "whole buffer once, at the stop.",
        ("bojieli/ai-agent-book#194", "ultrajson/ultrajson#216", "simplejson/simplejson#135"),
        lambda s: (s.aspect == ERROR and s.escape_cut and not s.got and not s.hung)
        or _each_call(s, partly_decoded),
        DecodeEach,
        # A boundary inside the \\n escape: the backslash ends one fragment, n starts the next.
        {"args": '{"text": "line one\\nline two", "quote": "say \\"hi\\""}', "split": 19},
        client=True),
    BugClass(
        "announcement_args_dropped",
        "Started buffering a call's arguments only after its announcement, so text sent "
        "with the announcement (a leading {, a whole call) was lost; the announcement's "
        "arguments are the call's first fragment.",
        ("vercel/ai PR #2881", "ggml-org/llama.cpp#22722", "agentjido/req_llm PR #801"),
        lambda s: _on("args_in_announcement", s) and _each_call(
            s, lambda a, b: len(b) < len(a) and a.endswith(b)),
        AnnouncementArgsDropped,
        # llama.cpp's first delta: the name with the opening brace.
        {"args": '{"database": "metrics"}', "split": 1, "tool": "list_metrics",
         "provider": "openai-chat", "quirks": ("args_in_announcement",)},
        client=True),
    BugClass(
        "eof_as_stop",
        "Took the end of the stream for the stop of every call still open, so a stream cut "
        "inside a call's arguments dispatched it half-written; hand a call on only at its "
        "stop (Chat: the finish_reason, or the next call's start), never at the close.",
        ("earendil-works/pi#5964", FOUND_BY_THE_KIT),
        lambda s: s.ends_early and _early(s) is not None,
        EofAsStop,
        # The stream cut inside the arguments, with no stop: what came so far is handed on.
        {"args": '{"limit": 20, "status": "refunded"}', "split": 11, "cut_off": True},
        client=True),
    BugClass(
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
        client=True),
    BugClass(
        "lenient_parse",
        "Let a partial-JSON parser decide when the call was done, so a prefix or a cut-off "
        "call was handed on as if whole; show partial values if you like, but hand on only "
        "at the stop.",
        ("earendil-works/pi#5964", "langchain-ai/langchain#39275",
         "langchain-ai/langchainjs#11469"),
        lambda s: _early(s) is not None,
        LenientParse,
        # {"limit": 2 reads as a finished object to a partial parser; 20 is what was sent.
        {"args": '{"limit": 20, "status": "refunded"}', "split": 11}),
    BugClass(
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
        client=True),
    BugClass(
        "blank_id_new_call",
        "Took a fragment carrying an id, even an empty one, for a new call, so one call came "
        "out as two (the announced one empty, a nameless one with the arguments); an empty "
        "or null id on a follow-on fragment continues the call at its index.",
        ("ThinkInAIXYZ/deepchat#355", "xintaofei/deepseek-acp#4"),
        _split_by_blank_id,
        BlankIdNewCall,
        # DashScope's shape: "id": "" on every follow-on fragment.
        {"args": '{"location": "San Francisco"}', "split": 13, "tool": "weather",
         "provider": "openai-chat", "quirks": ("blank_identity",), "only": ("openai-chat",)},
        client=True),
    BugClass(
        "blank_identity_copied",
        "Copied a call's id, type or name from every fragment that has the key, so a "
        "follow-on fragment's \"\" or null replaced the announced one (a call to tool \"\", "
        "or a crash on its type); treat an empty or null identity field as absent.",
        ("xintaofei/deepseek-acp#4", "lmstudio-ai/lmstudio-bug-tracker#649",
         "0xPlaygrounds/rig PR #423"),
        _blank_copied,
        client=True),
    BugClass(
        "key_by_id",
        "Looked buffers up by the call's id, which only the announcement carries (follow-on "
        "fragments have none, an empty one or a shared one); key by block and take the id "
        "from the announcement.",
        ("Arize-ai/phoenix PR #11376", "ThinkInAIXYZ/deepchat#355"),
        _key_by_id,
        KeyByID,
        # Any streamed call: no fragment after the announcement names its call.
        {"args": '{"order_id": "A-4471", "include_line_items": true}', "split": 18,
         "tool": "lookup_order"},
        client=True),
    BugClass(
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
         "earlier": '{"city": "Paris"}', "provider": "openai-chat", "two_choices": True}),
    BugClass(
        "key_by_last",
        "Sent every fragment to the call announced last, which holds only while calls come "
        "one after another; route each fragment by its own index (output_index).",
        ("maximhq/bifrost#1829", "mozilla-ai/any-llm PR #1305", "QwenLM/Qwen-Agent PR #943"),
        lambda s: not s.missing and any(holder == b.call_id
                                        for _, b, holder in _held_together(s, "mixed")),
        KeyByLast,
        # Two calls announced, then their fragments alternating (Chat and Responses only).
        {"args": '{"tz": "Europe/Rome"}', "split": 8, "tool": "get_time",
         "earlier": '{"city": "Paris"}', "earlier_tool": "get_weather",
         "provider": "openai-chat", "interleave": True},
        client=True),
    BugClass(
        "decode_chunks",
        "Decoded each socket read as UTF-8 on its own, so a read ending inside a multi-byte "
        "character raised, or (errors=\"replace\") silently became U+FFFD; decode with an "
        "incremental decoder (codecs.getincrementaldecoder) or split lines as bytes.",
        ("vllm-project/vllm PR #38732", "jawah/urllib3.future#349", "mpetazzoni/sseclient#8"),
        _decode_chunks,
        DecodeChunks,
        # Small socket reads: some end inside a character's UTF-8 bytes.
        {"args": '{"city": "Zürich", "note": "naïve café 👍🏽"}', "split": 20,
         "read_size": 7},
        client=True),
    BugClass(
        "markdown_bubble",
        "Appended argument fragments to the chat bubble like prose, and the Markdown "
        "renderer ate characters of the values; keep arguments in the call's buffer, off "
        "the message surface.",
        ("NullVoxPopuli/emberclear#51", "nostrord/nostrord#241"),
        lambda s: (s.aspect == SURFACE and _args_on_surface(s)) or _each_call(
            s, lambda a, b: deleted_only(a, b, MARKDOWN_SYNTAX.__contains__)),
        MarkdownBubble,
        # The chapter's note field, with prose around the call.
        {"args": '{"note": "see *both* attachments", "code": "`x` > 2"}', "split": 16,
         "before": "Let me open a ticket.", "after": " Done."}),
    BugClass(
        "name_concatenated",
        "Appended the tool name (and the id) from every fragment that carries one, so a "
        "server that repeats them on each fragment got final_resultfinal_result; take the "
        "name and id from the announcement, once.",
        ("ggml-org/llama.cpp#13774", "weicj/vLLM-2080Ti-Definitive#127"),
        _name_repeated,
        NameConcatenated,
        # llama.cpp before PR #13800: id, type and name on every fragment.
        {"args": '{"a": 1, "b": 2}', "split": 6, "tool": "final_result",
         "provider": "openai-chat", "quirks": ("repeated_identity",)},
        client=True),
    BugClass(
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
        client=True),
    BugClass(
        "choices_index0",
        "Read choices[0] (or its delta) on every chunk, and a chunk with no choices (usage, "
        "a content filter's results) or no delta raised; go through the choices a chunk "
        "has, and skip a choice without a delta.",
        ("RetellAI/retell-custom-llm-python-demo#5", "microsoft/autogen#6465",
         "CopilotKit/CopilotKit#2468"),
        lambda s: s.aspect == ERROR and not s.hung and _on("empty_choices", s),
        client=True),
    BugClass(
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
        client=True),
    BugClass(
        "null_arguments",
        "Handed a call with no argument text on with its arguments null (None), as a "
        "server that sends \"arguments\": null wrote them, where callers expect a string; "
        "hand a no-argument call on with \"\" (input {}), never null.",
        ("pydantic/pydantic-ai#1654", FOUND_BY_THE_KIT),
        _null_arguments),
    BugClass(
        "one_call_per_chunk",
        "Read one call from each chunk, so a producer that sends several whole calls in one "
        "chunk lost all but one; every entry of a chunk's tool_calls is a call.",
        ("ogx-ai/ogx PR #630", "google/adk-python#7004", "BerriAI/litellm#7621"),
        _dropped_on("whole_calls_in_one_chunk"),
        OneCallPerChunk,
        # Groq's shape: two whole calls in one chunk.
        {"args": '{"city": "Rome"}', "tool": "get_weather", "earlier": '{"city": "Paris"}',
         "provider": "openai-chat", "quirks": ("whole_calls_in_one_chunk",)},
        client=True),
    BugClass(
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
        client=True),
    BugClass(
        "splitlines",
        "Cut the stream's lines with str.splitlines(), which also ends a line at U+2028, "
        "U+2029 and U+0085 (raw inside JSON strings), so a data line came apart; split on "
        "CR, LF and CRLF only, as bytes.",
        ("open-metadata/OpenMetadata#29531", "langgenius/dify PR #39008"),
        _cut_at_separator,
        Splitlines,
        # U+2028 inside a value, read in small reads.
        {"args": '{"note": "one\u2028two"}', "split": 9, "tool": "save_note",
         "provider": "openai-chat", "read_size": 9, "quirks": ("line_separator_in_data",)},
        client=True),
    BugClass(
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
        client=True),
    BugClass(
        "index_as_position",
        "Took a call's index for its position in a list of calls, so an index that does not "
        "start at 0 (or skips) raised or landed in the wrong slot; key calls by the index "
        "they are sent under (a reused index: the later call landed in the earlier's slot).",
        ("BerriAI/litellm#5231", "openai/openai-python#2806"),
        lambda s: _raised_index(s) or (_on("index_reuse", s) and _merged(s)),
        IndexAsPosition,
        # Anthropic's block index forwarded as Chat's: the first call at index 1.
        {"args": '{"order_id": "A-4471"}', "split": 9, "tool": "lookup_order",
         "provider": "openai-chat", "quirks": ("index_gap",)},
        client=True),
    BugClass(
        "lost_on_truncation",
        "Handed calls on only at the stream's end marker ([DONE], message_stop), so a turn "
        "whose stop reason came but whose end marker did not lost calls whose stop had come; "
        "hand each call on at its own stop (Chat: at finish_reason), and say when the stream "
        "was cut.",
        ("Lingtai-AI/lingtai-kernel#753", "CommandCodeAI/command-code#785"),
        lambda s: s.aspect == CALLS and s.ends_early and bool(s.missing),
        client=True),
    BugClass(
        "content_encoding",
        "Asked for gzip (Accept-Encoding) but did not read the gzip-encoded stream it got; "
        "decompress as the bytes arrive (zlib.decompressobj(wbits=31)), or do not ask for "
        "gzip.",
        ("btubbs/sseclient#36", "btubbs/sseclient#27", "phymbert/xk6-sse#21"),
        _content_encoding,
        client=True),
    BugClass(
        "crash",
        "Raised (or exited non-zero) on a valid stream that was not cut, e.g. on an SSE "
        "block with no data; skip what carries no data, and never let one odd event end "
        "the turn.",
        ("openai/openai-python#2722", "florimondmanca/httpx-sse#35"),
        # not an error whose own words name a class (a split character, a list index)
        lambda s: s.aspect == ERROR and not s.hung and not _decode_chunks(s)
        and not s.content_encoding and not _raised_index(s)),
    BugClass(
        "identity",
        "Handed the right arguments on under another id or tool name; take the id and name "
        "from the announcement, once.",
        ("xintaofei/deepseek-acp#4",),
        lambda s: s.aspect == CALLS and len(s.got) == len(s.expected) and all(
            g[2] == w[2] for g, w in zip(s.got, s.expected, strict=True)),
        fallback=True),
    BugClass(
        "missing_call",
        "Never handed on a call that was sent and finished; every announced call whose stop "
        "came must come out, zero-argument ones included.",
        ("QwenLM/qwen-code#6249",),
        lambda s: s.aspect == CALLS and len(s.got) < len(s.expected),
        fallback=True),
    BugClass(
        "message",
        "The message surface is not the text deltas joined (text lost, doubled or moved); "
        "build it from the text deltas alone, in order.",
        ("vercel/ai#2568",),
        lambda s: s.aspect == SURFACE,
        fallback=True),
    BugClass(
        OTHER,
        "No class explains it: read the example, and register a class of your own "
        "(faults.register) if it recurs.",
        (FOUND_BY_THE_KIT,),
        _anything,
        fallback=True),
])
