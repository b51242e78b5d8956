"""A turn as a producer writes it: what it says, how it behaves, and the frames it sends.

The check suite, the torture harness, the breaker and the generator describe a turn here (its
prose and calls, each call's fragments exactly as they are to be sent) and have it written by
the format's writer (``FORMAT.write`` in ``providers/<format>.py``), so what a format looks
like on the wire is written once. A writer returns :class:`WireFrame` objects tagged with
their role in the turn; what holds for every format (cutting a stream off after a fragment,
interleaving parallel calls, the calls a correct client hands on, framing the bytes) is done
here, from those tags.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, Literal

from . import _deepjson as deepjson
from .events import DONE
from .framing.sse import DONE_DATA, json_data

if TYPE_CHECKING:
    from .providers.spec import WireFormat

Role = Literal["head", "text_start", "text", "text_stop", "call_start", "args", "call_stop",
               "finish", "end", "other"]
"""What a frame does in its turn: ``head`` and ``end`` open and close the stream, ``finish``
ends the message (Chat's ``finish_reason``, Anthropic's ``message_delta``), ``other`` is
anything between (a ping, a usage chunk)."""
_BASE62 = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Text:
    """Prose, in the fragments it is sent in."""

    fragments: tuple[str, ...]


@dataclass(frozen=True)
class Call:
    """A tool call, its arguments in the fragments they are sent in (exactly, any text)."""

    tool: str
    call_id: str
    fragments: tuple[str, ...]

    @property
    def args(self) -> str:
        return "".join(self.fragments)


Segment = Text | Call


@dataclass(frozen=True)
class Style:
    """What makes a written turn look recorded rather than minimal: the generator's.

    Writers draw ids and padding from ``rng`` in the order they write, so a seed gives the
    same bytes.
    """

    rng: random.Random
    model: str
    created: int
    """Unix time the response says it was created."""
    input_tokens: int
    output_tokens: int

    def ident(self, n: int, alphabet: str = _BASE62) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Script:
    """A turn to write: its segments and how the producer sends them."""

    segments: tuple[Segment, ...]
    cut: bool = False
    """The stream ends right after the last segment's last fragment (which must be a call):
    no stop, no done, no end of turn."""
    interleave: bool = False
    """Every call is announced first, then the calls' fragments alternate, then their stops.
    Normal where a format keys fragments by call (:data:`~.providers.INTERLEAVING`); a
    producer quirk elsewhere (Anthropic's blocks are sequential)."""
    quirks: frozenset[str] = frozenset()
    """Producer quirks to write the turn with (``producers.QUIRKS`` names them; the
    format's ``FORMAT.quirks`` says which it can carry)."""
    style: Style | None = None
    """Realistic ids, padding and usage (the generator's); None: fixed, minimal ones."""
    model: str = "streamcalls-lab"
    streamed_args: bool = False
    """Each call's arguments streamed as value pieces where the format has such a form
    (Vertex AI's ``streamFunctionCallArguments``: Gemini's ``partialArgs`` and
    ``willContinue``); a writer without one raises ``ValueError``."""

    @property
    def calls(self) -> list[Call]:
        return [s for s in self.segments if isinstance(s, Call)]


def script(segments: Iterable[Segment], **options: Any) -> Script:
    """A :class:`Script` from any iterable of segments."""
    return Script(tuple(segments), **options)


@dataclass
class WireFrame:
    """One frame a writer sends, with what it is in the turn."""

    payload: Any
    """The JSON value of the frame's data (``events.DONE`` for ``data: [DONE]``)."""
    event: str | None = None
    """The SSE ``event:`` line (or event-stream ``:event-type``); None writes none."""
    role: Role = "other"
    segment: int | None = None
    """Which of the script's segments the frame belongs to."""
    fragment: str | None = None
    """The text or argument fragment it carries."""
    block: int | None = None
    """For a call's frames: the block the reader will give the call."""
    data: str | None = None
    """The data text exactly, when it is not the payload's compact JSON (a writer's padding)."""
    pad: int = 0
    """Spaces before the data's closing brace (Anthropic pads most lines so)."""
    also: tuple[tuple[int, int], ...] = ()
    """Other calls this frame announces, as ``(segment, block)`` (several whole calls in one
    chunk)."""

    @property
    def text(self) -> str:
        if self.data is not None:
            text = self.data
        else:
            text = DONE_DATA if self.payload is DONE else json_data(self.payload)
        return f"{text[:-1]}{' ' * self.pad}{text[-1]}" if self.pad else text


_RAW = "\x00raw{}\x00"


def raw(n: int) -> str:
    """A stand-in string for the ``n``-th verbatim JSON text of a payload (:func:`raw_json`)."""
    return _RAW.format(n)


def raw_json(payload: Any, texts: Sequence[str]) -> str:
    """``payload``'s compact JSON with each stand-in ``raw(n)`` replaced by ``texts[n]``
    verbatim: a call's arguments object exactly as given, where a format sends an object."""
    out = json_data(payload)
    for n, text in enumerate(texts):
        out = out.replace(json_data(raw(n)), text, 1)
    return out


def json_object(args: str, fmt: str) -> str:
    """``args`` checked to be a JSON object's text, as formats sending arguments whole need."""
    try:
        value = deepjson.loads(args)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(f"{fmt} sends a call's arguments as a JSON object, not {args!r:.60}")
    return args


# -- writing -------------------------------------------------------------------------------
def prepared(turn: Script) -> Script:
    """``turn`` with what its quirks change in the content done (a call made text, its
    arguments emptied or cut): what is then written, and what a correct client is owed."""
    from .producers.quirks import QUIRKS

    for name in QUIRKS:
        change = QUIRKS[name].prepare
        if name in turn.quirks and change is not None:
            turn = change(turn)
    return turn


def writable(fmt: str, quirks: Iterable[str] = ()) -> WireFormat:
    """The format ``fmt`` names, checked to have a writer that can carry ``quirks``."""
    from .producers.quirks import QUIRKS
    from .providers import FORMATS

    spec = FORMATS.get(fmt)
    if spec is None or spec.write is None:
        known = ", ".join(n for n, f in FORMATS.items() if f.write is not None)
        raise ValueError(f"unknown provider {fmt!r}; known: {known}")
    asked = set(quirks)
    unknown = sorted(asked - set(QUIRKS))
    if unknown:
        raise ValueError(f"unknown quirk {unknown[0]!r}; known: {', '.join(QUIRKS)}")
    cannot = sorted(asked - set(spec.quirks))
    if cannot:
        raise ValueError(f"{fmt} cannot carry {', '.join(cannot)}; it can carry: "
                         f"{', '.join(spec.quirks) or 'none'}")
    return spec


def write(fmt: str, turn: Script) -> list[WireFrame]:
    """The frames ``fmt``'s writer sends for ``turn``: with its quirks (their content changes
    first, then the format's own transform of each), cut off or interleaved as it asks."""
    spec = writable(fmt, turn.quirks)
    if (turn.cut or turn.interleave) and spec.calls_whole:
        raise ValueError(f"{fmt} sends each call whole: a stream cannot end inside one, and "
                         "two cannot interleave")
    if turn.streamed_args and not spec.streams_args:
        raise ValueError(f"{fmt} has no form that streams a call's arguments as value pieces")
    if turn.cut and not (turn.segments and isinstance(turn.segments[-1], Call)):
        raise ValueError("a cut turn ends inside a call: its last segment must be a call")
    content = prepared(turn)
    frames = transformed(fmt, spec.write(content), content)
    if turn.interleave:
        frames = _interleaved(frames)
    if turn.cut:
        frames = _cut(frames, len(content.segments) - 1)
    return frames


def transformed(fmt: str, frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """``frames`` with ``fmt``'s transform of each of the turn's quirks applied, in the
    order the quirks are listed (a format that handles a quirk in its writer maps it to
    None)."""
    from .producers.quirks import QUIRKS
    from .providers import FORMATS

    spec = FORMATS[fmt]
    for name in QUIRKS:
        change = spec.quirks.get(name)
        if name in turn.quirks and change is not None:
            frames = change(frames, turn)
    return frames


# -- transforms several formats share: each given how to reach its payload's fields ---------
Transform = Callable[[list[WireFrame], Script], list[WireFrame]]


def interleave(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Quirk ``interleaved_calls`` where a format's fragments name their call."""
    return _interleaved(frames)


def snapshots(set_fragment: Callable[[WireFrame, str], None]) -> Transform:
    """Quirk ``snapshot_deltas``: every argument fragment replaced by all of its call's
    arguments sent so far (``set_fragment`` writes a fragment into a frame's payload)."""

    def apply(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
        sent: dict[int | None, str] = {}
        for f in frames:
            if f.role == "args" and f.fragment is not None:
                sent[f.segment] = sent.get(f.segment, "") + f.fragment
                f.fragment = sent[f.segment]
                set_fragment(f, f.fragment)
        return frames

    return apply


def renumbered(set_block: Callable[[WireFrame, int], None],
               number: Callable[[int, int, int], int]) -> Transform:
    """Every call's frames sent under another block: ``number(k, block, first)`` for the
    ``k``-th call (``block`` its own, ``first`` the first call's); ``set_block`` writes it."""

    def apply(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
        ordinal: dict[int, int] = {}
        first: int | None = None
        for f in frames:
            if f.block is None or f.segment is None:
                continue
            k = ordinal.setdefault(f.segment, len(ordinal))
            first = f.block if first is None else first
            f.block = number(k, f.block, first)
            set_block(f, f.block)
        return frames

    return apply


def shared(set_block: Callable[[WireFrame, int], None],
           set_fragment: Callable[[WireFrame, str], None]) -> dict[str, Transform | None]:
    """The quirks every format whose fragments name their call carries, written the same way
    given how to reach its payload's block and fragment (None: only the content changes)."""
    return {
        "snapshot_deltas": snapshots(set_fragment),
        "call_in_text": None,
        "invalid_arguments": None,
        "line_separator_in_data": None,
        "interleaved_calls": interleave,
        "index_reuse": renumbered(set_block, reuse_first),
    }


def reuse_first(k: int, block: int, first: int) -> int:
    """Quirk ``index_reuse``: every call at the first call's block."""
    return first


def with_gaps(k: int, block: int, first: int) -> int:
    """Quirk ``index_gap``: calls numbered 1, 3, 5 ... (from 1, skipping)."""
    return 2 * k + 1


def _cut(frames: list[WireFrame], last: int) -> list[WireFrame]:
    """The frames up to the last segment's last fragment (or its announcement)."""
    keep = max(i for i, f in enumerate(frames)
               if f.segment == last and f.role in ("call_start", "args"))
    return frames[: keep + 1]


def _interleaved(frames: list[WireFrame]) -> list[WireFrame]:
    """Every call announced first, then the calls' fragments alternating, then their stops
    (prose before the first call and after the last stays where it was)."""
    calls = [i for i, f in enumerate(frames) if f.block is not None and f.segment is not None]
    if not calls:
        return frames
    first, last = calls[0], calls[-1]
    middle = frames[first:last + 1]
    if any(f.role.startswith("text") for f in middle):
        raise ValueError("only calls interleave: prose between two calls cannot")
    order = list(dict.fromkeys(f.segment for f in middle if f.role == "args"))
    starts = [f for f in middle if f.role == "call_start"]
    stops = [f for f in middle if f.role == "call_stop"]
    between = [f for f in middle if f.role not in ("call_start", "call_stop", "args")]
    fragments = [[f for f in middle if f.role == "args" and f.segment == s] for s in order]
    mixed = [f for group in zip_longest(*fragments) for f in group if f is not None]
    return [*frames[:first], *starts, *mixed, *stops, *between, *frames[last + 1:]]


def body(fmt: str, frames: Sequence[WireFrame], *, framing: str | None = None) -> bytes:
    """The capture's bytes: the frames framed as ``fmt`` frames them (or as ``framing``),
    by that framing's own writer (``framing.FRAMINGS``)."""
    from .framing import FRAMINGS
    from .providers import FORMATS

    how = framing or FORMATS[fmt].framing
    if how not in FRAMINGS:
        raise ValueError(f"unknown framing {how!r}; known: {', '.join(FRAMINGS)}")
    return FRAMINGS[how].write(frames)


def turn_bytes(fmt: str, turn: Script) -> bytes:
    """``turn`` written in ``fmt`` and framed: a capture's bytes."""
    return body(fmt, write(fmt, turn))


def expected_calls(frames: Sequence[WireFrame], turn: Script) -> list[dict[str, Any]]:
    """The calls a correct client hands on: every call whose stream was not cut, in the
    order they were announced, with the block the format's reader gives it (and what the
    turn's quirks did to its content: a call written as text is no call)."""
    turn = prepared(turn)
    blocks = {f.segment: f.block for f in frames if f.role == "call_start"}
    blocks |= {segment: block for f in frames for segment, block in f.also}
    out = []
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Call) and not (turn.cut and n == len(turn.segments) - 1):
            out.append({"block": blocks.get(n), "call_id": seg.call_id, "tool": seg.tool,
                        "args": seg.args})
    return out
