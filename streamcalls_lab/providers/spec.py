"""What a wire format declares: everything about it that any part of the kit needs, once.

Each module in ``providers/`` knows one format and ends with one
``FORMAT = WireFormat.of(Reader, ...)``; the registry (``providers/__init__.py``) lists them.
The loader reads a format through its ``reader``; redaction, fixture rewriting, coverage, the
check suite, the torture harness, the generator, ``conform`` and the diagnosis of unknown
streams read the other declarations, and none of them names a format's wire fields. Adding a
format is one module and one registry line; ``tests/providers/test_formats.py`` then runs it
through the same contract as every other format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..events import Ev, Hot, Kind

if TYPE_CHECKING:
    from ..turns import Script, Transform, WireFrame

Framing = Literal["sse", "ndjson", "jsonarray", "eventstream", "prefixed"]


class Reader(Protocol):
    """Reads one format: a fresh instance per turn, fed every frame in order."""

    name: str
    hot: Hot | None
    """The frames that need no state, as the fast path reads them (or None)."""

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        """Whether one frame shows this format, by a positive signature of its own."""
        ...

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]: ...


@dataclass(frozen=True)
class Fields:
    """Which JSON keys hold a call's parts in this format's payloads.

    Keys, not paths: every consumer looks a key up where the reader says a call's part is
    (redaction finds the string the reader read a fragment from by its key and value).
    """

    call_id: tuple[str, ...]
    """Keys holding a call's id (and ids that refer to one, such as a result's)."""
    tool: tuple[str, ...]
    """Keys holding a tool's name."""
    fragment: tuple[str, ...]
    """Keys whose string is an argument fragment (``partial_json``, ``arguments``, ``delta``)."""
    whole: tuple[str, ...] = ()
    """Keys holding a call's whole arguments at once (a ``.done`` repeating them, an error
    echoing a call), or its arguments as an object (Gemini's ``args``)."""
    text: tuple[str, ...] = ()
    """Keys whose string is a text fragment."""


@dataclass(frozen=True)
class Envelope:
    """What in a payload is structure rather than data: redaction keeps these values.

    Default deny: every string and number a format does not name here is data. This is the
    one list of what redaction keeps for the format, applied to its captures alone (no
    other format's list stands in for it): a format that carries another's events (a
    gateway's wrapping) declares their keys here too. Everything the format's reader needs
    to recognise and read a stream (its type field, the values it tells events, blocks and
    calls by) must be named, or a redacted capture no longer reads as this format
    (``tests/test_redact_formats.py`` holds every registered format to that).
    """

    containers: frozenset[str]
    """Objects whose members are envelope (``message``, ``choices``, ``delta`` ...); under
    anything else (argument objects, a field not listed) a ``name`` or ``42`` is data."""
    schema: frozenset[str] = frozenset()
    """Keys whose values are schema (``type``, ``finish_reason``), kept under containers."""
    numbers: frozenset[str] = frozenset()
    """Numbers that are structure (``index``) or measurements, kept under containers."""
    ids: frozenset[str] = frozenset()
    """Keys holding ids that are not a call's (a message's, a response's, an item's): like
    call ids, each is replaced by the same stand-in wherever it recurs."""
    top: frozenset[str] | None = None
    """The schema and number keys kept at a payload's top level (``type``, ``index`` ...);
    None: any of them (a format whose events are flat). A ``name`` or ``role`` at the top
    of a nested format's payload is then data, as it is under an object not listed."""
    wrapped: str | None = None
    """A key whose string is base64 of an inner JSON event (Bedrock InvokeModel's ``bytes``)."""
    headers: frozenset[str] = frozenset()
    """AWS event-stream header names whose values are structure (``:event-type``,
    ``:message-type`` ...), kept; every other header's value, of any type, is replaced."""


@dataclass(frozen=True)
class Answer:
    """A whole (non-streamed) response: what ``conform`` holds a streamed one to."""

    calls: tuple[dict[str, Any], ...]
    """Each call as ``{"call_id", "tool", "args"}``; ``args`` the argument text as sent (an
    object's exact text where the format sends an object)."""
    stop: str | None
    """The stop or finish reason, as the format names it."""
    text: str = ""
    """The message's text."""


@dataclass(frozen=True)
class Streaming:
    """How a request's body asks for a streamed answer or a whole one (``conform --url``
    sends one request both ways)."""

    switch: str
    """The body's key that turns streaming on (true) and off (false); always sent, as a
    body without it streams on some servers (Ollama's ``/api/chat``) and not on others."""
    only: tuple[str, ...] = ()
    """Keys a body may carry only when it streams (``stream_options``): the whole request
    goes without them, as servers refuse them there."""


def block_events(start: str, delta: str, stop: str, *, turn_stop: tuple[str, ...],
                 other: tuple[str, ...], error: tuple[str, ...] = ("error",),
                 ) -> dict[Kind, tuple[str, ...]]:
    """The events of a format that streams its content as blocks (Anthropic's Messages, and
    Gemini's Interactions after it): each opened by ``start`` (a call, its arguments whole
    there where a producer sends them so, or text), filled by ``delta`` and closed by
    ``stop``; a block of a type that is neither is ``other``, as are the turn's ``other``
    events."""
    return {"call_start": (start,), "args_delta": (delta, start), "block_stop": (stop,),
            "text_start": (start,), "text_delta": (delta,), "turn_stop": turn_stop,
            "error": error, "other": (*other, start, delta)}


Cut = Literal["tokens", "measured"]
"""How a producer cuts a stretch of text into fragments: at the model's o200k token
boundaries (it passes the tokens on), or into pieces whose lengths follow the histogram
measured on its real captures (it writes the text out again itself, JSON spaced)."""


@dataclass(frozen=True)
class Flush:
    """How a format's servers cut what they stream, as ``scripts/calibrate.py`` measured it
    on real captures (``calibration.json``, keyed by the format's name; explained in
    ``docs/calibration.md``). The generator reads it; a format that declares none is cut at
    token boundaries (or sends each call whole, where ``calls_whole`` says so)."""

    model: str
    """The model its generated turns name (one its captures were recorded from)."""
    args: Cut = "tokens"
    """A call's arguments."""
    parallel_args: Cut | None = None
    """A call's arguments where a turn holds two or more calls (None: as ``args``)."""
    text: Cut = "tokens"
    brace_split: bool = False
    """In the measured share of calls (``first_fragment``), a first token ``{"`` arrives as
    ``{``, the quote joined to the next token."""

    def cuts_args(self, parallel: bool) -> Cut:
        return self.parallel_args if parallel and self.parallel_args else self.args


class Writer(Protocol):
    """Writes a turn in this format: the frames a producer sends, each tagged with its role."""

    def __call__(self, script: Script) -> list[WireFrame]: ...


@dataclass(frozen=True)
class WireFormat:
    """One wire format, as every part of the kit needs to know it."""

    name: str
    """What the ``provider`` column shows."""
    reader: type[Reader]
    framing: Framing
    """How its bytes are framed (SSE, NDJSON, a streamed JSON array, AWS event-stream,
    type-prefixed lines)."""
    docs: str
    """Where the format's streaming is documented."""
    events: Mapping[Kind, tuple[str, ...]]
    """For each row kind, the event names (the ``event`` column) that give it."""
    fields: Fields
    envelope: Envelope
    write: Writer | None = None
    """Writes a turn (the check suite, the torture harness and the generator use it)."""
    quirks: Mapping[str, Transform | None] = field(default_factory=dict)
    """The producer quirks this format can carry (``producers.QUIRKS`` names them), each with
    the transform that writes it into the writer's frames (None: only the turn's content
    changes, or the writer handles it)."""
    choices: Callable[[Sequence[list[WireFrame]]], list[WireFrame]] | None = None
    """How one response carries several choices' turns (a request's ``n`` above 1): each
    choice's frames as ``write`` writes a turn, combined into one run (Chat's
    ``alongside``); None: one choice a stream."""
    keepalive: WireFrame | None = None
    """The format's own keep-alive event, if it has one (Anthropic's ``ping``)."""
    own: Callable[[str, Any], bool] | None = None
    """Frames of the format's own that are no signature of it (its reader's ``sniff`` does
    not claim them: too generic, or read only once the format is known), given their event
    and payload: never foreign to it when a misread is judged (``providers.misread``)."""
    calls_whole: bool = False
    """Each call arrives whole in one frame (Gemini, Ollama): no fragments to cut between."""
    streams_args: bool = False
    """Its writer can also stream a call's arguments as value pieces
    (``turns.Script.streamed_args``: Vertex AI's ``partialArgs``)."""
    path: str | None = None
    """The HTTP path a client posts to (the torture harness and ``serve`` answer any)."""
    whole: Callable[[Any, str], Answer | None] | None = None
    """Reads a whole, non-streamed response of this format (its payload and raw text), or
    gives None when the payload is not one (``conform``; the diagnosis of unknown streams)."""
    streaming: Streaming | None = None
    """How a request body turns streaming on and off (None: the URL decides, as Gemini's
    and Bedrock's do)."""
    stop_terms: Callable[[str], str] | None = None
    """A stop reason as the stream states it (the ``reason`` column), in the terms the
    ``whole`` reader states it (``Answer.stop``); None: the same words."""
    tool_stop: frozenset[str] | None = None
    """The stop reasons that say the model asked for tools (None: the format has none, or
    always says the same; ``stop_reason_mismatch`` is found against this)."""
    interleaves: bool = False
    """Its fragments name their call, so parallel calls' fragments may interleave by the
    format's own rules (Chat's ``index``, Responses' ``output_index``); an interleaved turn is
    then a normal one, not a gateway's quirk (``providers.INTERLEAVING`` lists these)."""
    counts_calls: bool = False
    """The block is the producer's count of calls (Chat's ``tool_calls[].index``), not a
    position among content blocks: indices are expected to run 0, 1, 2 ..."""
    server_ids: tuple[str, ...] = ()
    """Prefixes of the ids of calls the server runs itself (no client call to make)."""
    call_ids: tuple[str, int] = ("call_", 24)
    """How the format's call ids look: a prefix and that many base-62 characters (the
    generator draws its ids so)."""
    call_ids_sent: bool = True
    """Its calls carry an id (False: its servers send none, or not always: Gemini, Ollama);
    ``calls()`` names a finished call without one a problem only where this is True."""
    aliases: tuple[str, ...] = field(default=())
    """Other names the format goes by (a gateway's, an SDK's)."""
    flush: Flush | None = None
    """How its servers cut their fragments, measured on real captures (None: not measured;
    the bundled ``data/`` is generated in the formats that declare one)."""
    stated_time: Callable[[str], float | None] | None = None
    """The receive time a frame's data states (a log that wraps each event with it), in
    seconds since the epoch, or None where it states none: where no read was timed, the
    ``t`` column counts from the turn's first stated time (None: frames state no time)."""

    @classmethod
    def of(cls, reader: type[Reader], framing: Framing = "sse", **declared: Any) -> WireFormat:
        """The format its ``reader`` reads, named as the reader names itself (the one place
        a format's name is spelt), with the rest of its declarations; its ``framing`` SSE
        unless it says otherwise, as most servers stream."""
        return cls(name=reader.name, reader=reader, framing=framing, **declared)
