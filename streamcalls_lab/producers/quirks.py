"""Every producer quirk the kit knows: one spec each.

A quirk is something a server or gateway sends that the format's documentation does not
promise, and that a client written from that documentation can get wrong. Each spec says what
the producer does, the public threads it was seen in, how the kit's loader and correct
accumulator read it (what a careful client hands on), whether the producer destroyed
information nobody can restore, which of the kit's classic client faults it makes worse, how to
write it into a turn (:func:`prepare` for what it changes in a turn's content; each format's
writer, ``FORMAT.quirks``, for what it changes on the wire), and how to find it in a capture
(``find``, over one turn's :class:`~.scan.TurnEvidence`).

Adding a quirk is one spec here (and, where it changes the wire, a transform in each format's
module that can carry it); ``tests/producers/test_quirks.py`` then writes it in every such
format and checks that it is found and read right.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pandas as pd

from .. import _deepjson as deepjson
from ..turns import Call, Script, Segment, Text
from ..wording import count

if TYPE_CHECKING:
    from .scan import Finding, TurnEvidence

Find = Callable[["TurnEvidence"], Iterator["Finding"]]


@dataclass(frozen=True)
class Quirk:
    """One thing producers send that their format's documentation does not promise."""

    name: str
    summary: str
    """What the producer does, in a line."""
    threads: tuple[str, ...]
    """Public threads that show it (``owner/repo#n``)."""
    reading: str
    """How the kit reads it: what a careful client hands on."""
    find: Find
    """Finds it in one turn's evidence."""
    destroys: bool = False
    """The producer destroyed information no reader can restore: the kit marks, never guesses."""
    worsens: tuple[str, ...] = ()
    """The kit's client faults (``FAULTS`` names) it makes worse or exposes."""
    prepare: Callable[[Script], Script] | None = None
    """What it changes in a turn's content before a writer writes it (None: only the wire)."""
    content: bool = False
    """Can occur in any format (it is in what is said, not in how the format says it)."""
    implies: tuple[str, ...] = ()
    """Quirks it cannot be sent without (several whole calls in one chunk carry their
    arguments on the fragments that announce them)."""
    conflicts: tuple[str, ...] = ()
    """Quirks the kit does not write into one turn with it: the two say opposite things
    (follow-on fragments carry a blank identity or the repeated one), cannot be told apart
    (fragments at a reused index, interleaved), or one's transform undoes the other's (the
    first snapshot riding on the announcement). A test writes every other pair."""
    masks: tuple[str, ...] = ()
    """Quirks whose findings this one's explains, so they are not reported beside it: about
    the same call (a finding about a whole choice masks them on every call of it). Settled
    in one step over every finding of a turn (:func:`unmasked`); no finder leaves anything
    out for another quirk's sake."""


# -- finding each quirk (each a generator over one turn's evidence) -------------------------
def _noted(name: str) -> Find:
    """A quirk a reader noticed on the rows it read (their ``quirk`` column): one finding per
    call (or per channel), at its first piece of evidence, with how often it recurred."""

    def find(turn: TurnEvidence) -> Iterator[Finding]:
        seen: dict[tuple[object, object], list[tuple[int, str]]] = {}
        for note in turn.notes:
            if note.quirk == name:
                seen.setdefault((note.choice, note.call_id), []).append((note.at, note.detail))
        for (choice, call_id), notes in seen.items():
            at, detail = notes[0]
            more = f" ({len(notes)} times)" if len(notes) > 1 else ""
            yield turn.finding(name, choice, call_id, at, detail + more)

    return find


def _empty_arguments(turn: TurnEvidence) -> Iterator[Finding]:
    for call in turn.calls:
        if call.stopped and not call.fragments and not call.final:
            yield turn.finding("empty_arguments", call.choice, call.call_id, call.at,
                               f"{call.tool or 'a call'} finished with no argument text at all "
                               "(\"\", null or absent): a careful client takes it as {}")


def _stop_reason_mismatch(turn: TurnEvidence) -> Iterator[Finding]:
    said = turn.format.tool_stop if turn.format is not None else None
    if said is None:
        return
    ran = turn.format.server_ids if turn.format is not None else ()
    for ch in turn.channels.values():
        made = [c for c in turn.calls if c.choice == ch.choice and c.stopped
                and not (c.call_id and c.call_id.startswith(ran))]  # the server's own tools
        if made and ch.reason is not None and ch.reason not in said:
            yield turn.finding("stop_reason_mismatch", ch.choice, None, ch.reason_at,
                               f"the stop reason says {ch.reason!r} after "
                               f"{count(len(made), 'finished call')}; this format says "
                               f"{' or '.join(sorted(said))} for calls")


def _index_gap(turn: TurnEvidence) -> Iterator[Finding]:
    if turn.format is None or not turn.format.counts_calls:
        return
    for ch in turn.channels.values():
        blocks = list(dict.fromkeys(c.block for c in turn.calls
                                    if c.choice == ch.choice and c.block is not None))
        if blocks and sorted(blocks) != list(range(len(blocks))):
            first = next(c for c in turn.calls if c.choice == ch.choice and c.block == blocks[0])
            yield turn.finding("index_gap", ch.choice, first.call_id, first.at,
                               f"{count(len(blocks), 'call')} at indices {blocks}: the "
                               "format counts calls from 0")


def _whole_calls_in_one_chunk(turn: TurnEvidence) -> Iterator[Finding]:
    if turn.format is not None and turn.format.calls_whole:
        return  # that format sends every call whole, by design
    for frame, calls in turn.frames_with_calls().items():
        if len(calls) >= 2:
            yield turn.finding("whole_calls_in_one_chunk", calls[0].choice, calls[0].call_id,
                               calls[0].at, f"{len(calls)} calls announced with their "
                               f"arguments in one chunk (frame {frame})")


def _args_only_in_done(turn: TurnEvidence) -> Iterator[Finding]:
    for call in turn.calls:
        if call.stopped and not call.fragments and call.final:
            yield turn.finding("args_only_in_done", call.choice, call.call_id, call.final_at,
                               f"no argument fragment; the {len(call.final)} characters arrived "
                               "only in the done event, and the kit takes them from there")


def is_snapshots(fragments: list[str]) -> bool:
    """Each fragment repeats everything sent before: two or more, each the one before plus
    more, the last parsing on its own while their concatenation does not."""
    if len(fragments) < 2 or any(not b.startswith(a) or len(b) <= len(a)
                                 for a, b in itertools.pairwise(fragments)):
        return False
    return _parses(fragments[-1]) and not _parses("".join(fragments))


def _snapshot_deltas(turn: TurnEvidence) -> Iterator[Finding]:
    for call in turn.calls:
        if is_snapshots(call.fragments):
            yield turn.finding("snapshot_deltas", call.choice, call.call_id, call.offsets[1],
                               f"{len(call.fragments)} fragments, each repeating the one before "
                               f"(the last holds all {len(call.fragments[-1])} characters): the "
                               "joined arguments are not what was meant; the call is marked")


CALL_MARKUP = re.compile(
    r"<tool_call>|</tool_call>|<function=|\[TOOL_CALLS\]|<\|tool_call_start\|>|"
    r"<\|python_tag\|>|<\|tool_calls_section_begin\|>|<\|tool_call_begin\|>|"
    r"<\｜tool▁calls▁begin\｜>|<\|tool_call>|<\|action_start\|>|commentary to=functions\.|"
    r"<arg_key>"
)
"""Markers of a tool call written as text: Hermes/Qwen ``<tool_call>``, Qwen3-Coder
``<function=``, Mistral ``[TOOL_CALLS]``, LFM2, Llama 3.1 ``<|python_tag|>``, Kimi K2, DeepSeek,
Gemma 4, InternLM, gpt-oss harmony, GLM ``<arg_key>`` (vllm-ascend#12398, vllm-mlx PR #168,
Rapid-MLX PR #1592)."""


def _call_in_text(turn: TurnEvidence) -> Iterator[Finding]:
    for ch in turn.channels.values():
        m = CALL_MARKUP.search(ch.text)
        if m is not None:
            yield turn.finding("call_in_text", ch.choice, None, ch.text_at(m.start()),
                               f"tool-call markup {m.group()!r} in the message text: the call "
                               "came as prose, with no id, index or typed arguments; nothing "
                               "is handed on as a call")


def _parses(text: str) -> bool:
    return deepjson.is_json(text)


def _invalid_arguments(turn: TurnEvidence) -> Iterator[Finding]:
    for call in turn.calls:
        args = "".join(call.fragments) or (call.final or "")
        if not call.stopped or not args.strip() or _parses(args):
            continue
        try:
            deepjson.loads(args)  # (json.loads recurses: deep text would raise past it)
        except ValueError as e:
            why = str(e).split(":", 1)[0]
        yield turn.finding("invalid_arguments", call.choice, call.call_id, call.at,
                           f"{call.tool or 'a call'} finished but its {len(args)} characters of "
                           f"arguments do not parse ({why}): handed on as text, never repaired")


SEPARATORS = {"\u2028": "U+2028 LINE SEPARATOR", "\u2029": "U+2029 PARAGRAPH SEPARATOR",
              "\x85": "U+0085 NEXT LINE"}
"""Characters ``str.splitlines()`` takes for line ends, which SSE does not (OpenMetadata#29531)."""


def _line_separator_in_data(turn: TurnEvidence) -> Iterator[Finding]:
    for piece in turn.pieces:
        found = [name for c, name in SEPARATORS.items() if c in piece.text]
        if found:
            yield turn.finding("line_separator_in_data", piece.choice, piece.call_id, piece.at,
                               f"{', '.join(found)} inside a data value: a reader that cuts "
                               "lines with str.splitlines() splits this frame")
            return  # one finding per turn is enough to name the risk


def _interleaved_calls(turn: TurnEvidence) -> Iterator[Finding]:
    for ch in turn.channels.values():
        order = ch.order
        done: set[int] = set()
        for prev, nxt in itertools.pairwise(order):
            if nxt != prev and nxt in done:
                call = turn.calls[nxt]
                yield turn.finding("interleaved_calls", ch.choice, call.call_id,
                                   call.offsets[0], "fragments of two calls alternate: a "
                                   "call's fragments resume after another call's began")
                break
            done.add(prev)


def _index_reuse(turn: TurnEvidence) -> Iterator[Finding]:
    for call in turn.calls:
        if call.reused:
            yield turn.finding("index_reuse", call.choice, call.call_id, call.at,
                               f"block {call.block} announced again after an earlier call there "
                               "(a new call: a new id)")


def _identity_changed(turn: TurnEvidence) -> Iterator[Finding]:
    for note in turn.notes:
        if note.quirk == "identity_changed":
            first = next((c.at for c in turn.calls if c.choice == note.choice
                          and c.call_id == note.call_id), None)
            where = f"first at byte {first}, " if first is not None else ""
            yield turn.finding("identity_changed", note.choice, note.call_id, note.at,
                               f"{note.detail} ({where}the other at byte {note.at})")


# -- writing the content quirks (format-neutral: what is said, not how) --------------------
def _segments(turn: Script, change: Callable[[int, Segment], list[Segment]]) -> Script:
    out: list[Segment] = []
    for n, seg in enumerate(turn.segments):
        out += change(n, seg)
    return replace(turn, segments=tuple(out))


def _no_arguments(turn: Script) -> Script:
    """The last call takes no arguments: nothing at all is sent for them."""
    last = max(n for n, s in enumerate(turn.segments) if isinstance(s, Call))
    return _segments(turn, lambda n, s: [replace(s, fragments=()) if n == last else s])


def _as_text(turn: Script) -> Script:
    """Every call written into the message as ``<tool_call>`` markup instead."""

    def change(n: int, seg: Segment) -> list[Segment]:
        if not isinstance(seg, Call):
            return [seg]
        body = json.dumps({"name": seg.tool}, ensure_ascii=False)[:-1] + ', "arguments": '
        text = "<tool_call>" + body + seg.args + "}</tool_call>"
        return [Text(tuple(text[i:i + 9] for i in range(0, len(text), 9)))]

    return _segments(turn, change)


def _truncated(turn: Script) -> Script:
    """The last call's arguments lose their closing brace (a parser that dropped it)."""
    last = max(n for n, s in enumerate(turn.segments) if isinstance(s, Call))

    def change(n: int, seg: Segment) -> list[Segment]:
        if n != last or not isinstance(seg, Call) or not seg.args.rstrip().endswith("}"):
            return [seg]
        cut = seg.args.rstrip()[:-1]
        return [replace(seg, fragments=tuple(p for p in (cut[:len(cut) // 2],
                                                           cut[len(cut) // 2:]) if p))]

    return _segments(turn, change)


def _separators(turn: Script) -> Script:
    """U+2028 inside the prose and inside a string value of the first call's arguments."""

    def change(n: int, seg: Segment) -> list[Segment]:
        if isinstance(seg, Text) and seg.fragments:
            return [replace(seg, fragments=(seg.fragments[0] + "\u2028", *seg.fragments[1:]))]
        return [seg]

    out = _segments(turn, change)
    first = next((n for n, s in enumerate(out.segments) if isinstance(s, Call)), None)
    if first is not None:
        call = out.segments[first]
        assert isinstance(call, Call)
        m = re.search(r'": "', call.args)
        if m is not None:
            args = call.args[:m.end()] + "\u2028" + call.args[m.end():]
            pieces = (args[:m.end() + 1], args[m.end() + 1:])
            segs = list(out.segments)
            segs[first] = replace(call, fragments=tuple(p for p in pieces if p))
            out = replace(out, segments=tuple(segs))
    return out


# -- the registry --------------------------------------------------------------------------
QUIRKS: dict[str, Quirk] = {q.name: q for q in (
    Quirk("blank_identity", "empty or null id, type or name on follow-on fragments",
          ("ggml-org/llama.cpp#13774", "lmstudio-ai/lmstudio-bug-tracker#649",
           "langchain-ai/langchain#31634", "xintaofei/deepseek-acp#4"),
          "an empty or null id or name is no id or name: the fragment continues the call at "
          "its index, whose id and name stay the announced ones", _noted("blank_identity"),
          worsens=("key_by_id",), conflicts=("repeated_identity",)),
    Quirk("repeated_identity", "id, type and name repeated on every fragment",
          ("xintaofei/deepseek-acp#4", "ThinkInAIXYZ/deepchat#355",
           "ggml-org/llama.cpp#13774"),
          "a repeated id or name is the same call: it is not appended to the name (the "
          "official openai-python helper appends it: final_resultfinal_result)",
          _noted("repeated_identity"), worsens=("key_by_name",)),
    Quirk("args_in_announcement", "argument text sent on the fragment that announces a call",
          ("vercel/ai PR #2881", "ggml-org/llama.cpp#22722", "pydantic/pydantic-ai#2302"),
          "the announcement's argument text is the call's first fragment, kept",
          _noted("args_in_announcement")),
    Quirk("empty_arguments", "a call with \"\", null or absent arguments",
          ("BerriAI/litellm#5063", "vercel/ai#5658", "pydantic/pydantic-ai#1654"),
          "a finished call with no argument text is handed on with args '' (byte-exact) and "
          "its parsed input {}; a cut-off one is never turned into {}", _empty_arguments,
          worsens=("parse_to_finish", "lenient_parse"), prepare=_no_arguments, content=True),
    Quirk("stop_reason_mismatch", "a stop reason of \"stop\" / end_turn although calls were made",
          ("vllm-project/vllm PR #9209", "BerriAI/litellm#12862", "sgl-project/sglang#2877"),
          "calls are finished by their own stop events (Chat: any finish_reason); the stop "
          "reason is never what decides that calls were made", _stop_reason_mismatch),
    Quirk("empty_choices", "chunks with no choices, or a choice with no delta (usage, content "
          "filters)", ("microsoft/autogen#6465", "CopilotKit/CopilotKit#2468"),
          "such a chunk is an other row; every choice is read by its own index, never "
          "choices[0]", _noted("empty_choices")),
    Quirk("index_gap", "tool-call indices that do not start at 0, or skip",
          ("BerriAI/litellm#5231", "oracle/langchain-oracle#86"),
          "a call is keyed by the index it is sent under, never by its position in a list",
          _index_gap),
    Quirk("whole_calls_in_one_chunk", "several complete calls in one chunk",
          ("ogx-ai/ogx PR #630", "BerriAI/litellm#7621"),
          "every entry of the chunk is a call of its own, in order", _whole_calls_in_one_chunk,
          worsens=("key_by_last",), implies=("args_in_announcement",)),
    Quirk("args_only_in_done", "no argument fragments; the text only in the done / final event",
          ("BerriAI/litellm#27144", "BerriAI/litellm#20711"),
          "a call with no fragments takes its arguments from the done event that repeats them",
          _args_only_in_done),
    Quirk("snapshot_deltas", "each fragment repeats everything sent before (cumulative "
          "snapshots sent as deltas)", ("langchain-ai/langgraphjs#2570",
                                        "langchain-ai/langgraphjs#2766", "vercel/ai#12052"),
          "the fragments are joined as sent (that is the format's rule) and the call is "
          "marked: a reader cannot tell snapshots from deltas for certain, so it never "
          "guesses", _snapshot_deltas, destroys=True, conflicts=("args_in_announcement",),
          # snapshots joined never parse: the call is the snapshots', not invalid JSON sent
          masks=("invalid_arguments",)),
    Quirk("call_in_text", "a tool call written as markup in the message text (<tool_call>, "
          "[TOOL_CALLS], ...) instead of structured calls",
          ("vllm-project/vllm-ascend#12398", "waybarrios/vllm-mlx PR #168"),
          "the text stays text and no call is handed on; the turn is marked", _call_in_text,
          destroys=True, worsens=("markdown_bubble",), prepare=_as_text, content=True),
    Quirk("invalid_arguments", "a finished call whose joined arguments are not valid JSON",
          ("mastra-ai/mastra#14179", "anthropics/anthropic-sdk-python#1265"),
          "handed on as sent, valid_json False; never repaired into a plausible object",
          _invalid_arguments, destroys=True, worsens=("lenient_parse",), prepare=_truncated,
          content=True),
    Quirk("line_separator_in_data", "U+2028, U+2029 or U+0085 inside a data value (a line end "
          "to str.splitlines(), not to SSE)", ("open-metadata/OpenMetadata#29531",),
          "SSE lines end only at CR, LF and CRLF: the value keeps the character",
          _line_separator_in_data, worsens=("decode_chunks",), prepare=_separators,
          content=True),
    Quirk("interleaved_calls", "fragments of two calls alternating",
          ("maximhq/bifrost#1829", "openai/openai-ruby PR #638"),
          "each fragment goes to the call its index names", _interleaved_calls,
          worsens=("key_by_last",)),
    Quirk("index_reuse", "a finished call's index reused by a new call",
          ("ollama/ollama#15457", "langchain-ai/langchain#34807"),
          "a new id at a used index starts a new call", _index_reuse,
          worsens=("key_by_name",), conflicts=("interleaved_calls",)),
    Quirk("late_identity", "a call's id or name first sent after its announcement (the name "
          "with the first argument fragment)", ("vercel/ai#14722", "pipecat-ai/pipecat PR #5023",
                                                "jjang-ai/vmlx PR #244"),
          "the first non-empty id, name and type sent for a call before its stop are its own, "
          "wherever they come", _noted("late_identity"),
          # a name repeated on every fragment, or blanked on each, is no late name
          conflicts=("blank_identity", "repeated_identity")),
    Quirk("identity_changed", "a second, different id or name for one call (a done event "
          "that disagrees with the announcement)", ("streamcalls-lab#29",),
          "the call keeps the first value; the other is kept beside it on its row, which is "
          "a problem row (strict: a CaptureError naming both)", _identity_changed),
    # (nothing destroyed: the first value is the call's by rule, so a correct client hands
    # the call on as announced, and the suite and torture serve it as a family)
)}
"""Every producer quirk, in the order the docs and reports list them."""


def unmasked(found: list[Finding]) -> list[Finding]:
    """``found`` (one turn's findings, every quirk's) without those another finding masks
    (its quirk's ``masks``): the one place precedence between quirks is settled."""
    masked = {(f[2], f[3], name) for f in found for name in QUIRKS[f[4]].masks}
    return [f for f in found if (f[2], f[3], f[4]) not in masked
            and (f[2], None, f[4]) not in masked]


def with_implied(names: frozenset[str]) -> frozenset[str]:
    """``names`` and every quirk they cannot be sent without."""
    out = set(names)
    for name in names:
        out.update(QUIRKS[name].implies)
    return frozenset(out)


def catalog() -> pd.DataFrame:
    """The quirks as a table: what the producer does, the threads, how the kit reads it,
    whether information is lost, which faults it worsens, and the formats that can carry it."""
    from ..providers import FORMATS

    rows = [{"quirk": q.name, "what the producer does": q.summary,
             "how the kit reads it": q.reading, "information lost": q.destroys,
             "worsens": ", ".join(q.worsens), "threads": ", ".join(q.threads),
             "formats": ", ".join(n for n, f in FORMATS.items() if q.name in f.quirks)}
            for q in QUIRKS.values()]
    return pd.DataFrame(rows).astype({"information lost": bool})
