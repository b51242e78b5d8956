"""Wire formats: each module turns one provider's frames into normalised events.

A provider module knows one wire format and nothing else. It exposes a class
with a ``name``, a ``sniff(event, payload)`` that recognises the format from
one frame, and a per-turn ``normalize(event, payload, data)`` that returns
:class:`Ev` rows. Adding a format is one new module plus one line in
``FORMATS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, NamedTuple, Protocol

import msgspec

KINDS = (
    "text_start",
    "text_delta",
    "call_start",
    "args_delta",
    "args_done",
    "block_stop",
    "turn_stop",
    "other",
    "error",
)


class Ev(NamedTuple):
    """One normalised event; a frame yields one or more, in wire order."""

    event: str
    kind: str
    block: int | None = None
    call_id: str | None = None
    tool: str | None = None
    fragment: str | None = None
    wire_chars: int | None = None
    final: str | None = None
    problem: str | None = None
    choice: int | None = None
    """Chat only: which of the ``n`` choices the row belongs to (``choices[].index``)."""


_new = tuple.__new__
PAYLOAD_ERRORS = (KeyError, TypeError, AttributeError, IndexError)
"""What ``normalize`` raises for a payload of an unexpected shape (the reader reports it)."""


def delta_row(event: str, kind: str, block: int | None, fragment: str | None,
              wire_chars: int | None, choice: int | None = None) -> Ev:
    """A text or argument fragment's row, built without NamedTuple's keyword handling
    (most rows of a stream are these)."""
    return _new(Ev, (event, kind, block, None, None, fragment, wire_chars, None, None, choice))


class Format(Protocol):
    name: str

    @staticmethod
    def sniff(event: str, payload: Any) -> bool: ...

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]: ...

    def hot_rows(self, events: list[str], raws: list[bytes]) -> list[Sequence[Ev] | None]:
        """The rows of the frames that need no state, decoded together; None for the rest.

        For each frame either exactly what :meth:`normalize` would return for it, or
        None: that frame is then normalised on its own, in order with the other Nones.
        """
        ...


def text(value: Any, field: str) -> str:
    """A field that must be a string; anything else is reported, never coerced."""
    if type(value) is str:
        return value
    raise TypeError(f"{field} should be a string, not {type(value).__name__}")


def obj(value: Any, field: str) -> dict[str, Any]:
    """A field that must be a JSON object (``"text" in "some text"`` would not fail)."""
    if type(value) is dict:
        return value
    raise TypeError(f"{field} should be an object, not {type(value).__name__}")


def array(value: Any, field: str) -> list[Any]:
    """A field that must be a JSON array."""
    if type(value) is list:
        return value
    raise TypeError(f"{field} should be a list, not {type(value).__name__}")


def maybe_text(value: Any, field: str) -> str | None:
    return None if value is None else text(value, field)


INT64 = range(-(2**63), 2**63)
"""What the Int64 ``block`` column holds: ``block in INT64`` is one C-level check."""


def index(value: Any, field: str) -> int:
    """A block index: an integer (``True`` and ``"0"`` are not) that fits the Int64 column."""
    if type(value) is int:
        if value in INT64:
            return value
        raise TypeError(f"{field} should fit in 64 bits, not be {value}")
    raise TypeError(f"{field} should be an integer, not {type(value).__name__}")


Index = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""A block index as a typed payload field: an integer that orjson also reads as one."""

_DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)


def decode_each(decode: Callable[[bytes], Any], raws: list[bytes]) -> list[Any]:
    """``decode`` of every data line, None where it fails.

    The typed payload structs forbid unknown fields, so every byte of a payload is parsed
    (as orjson would), and anything unexpected leaves the frame to :meth:`normalize`.
    """
    try:
        return list(map(decode, raws))  # the usual case: no Python code per frame
    except _DECODE_ERRORS:
        pass
    out = []
    for raw in raws:
        try:
            out.append(decode(raw))
        except _DECODE_ERRORS:
            out.append(None)
    return out


DONE = object()
"""Stands for a ``data: [DONE]`` payload, which is not JSON."""


from .anthropic import AnthropicMessages  # noqa: E402
from .bedrock import BedrockConverse, BedrockInvoke  # noqa: E402
from .cohere import CohereChat  # noqa: E402
from .gemini import Gemini  # noqa: E402
from .ollama import Ollama  # noqa: E402
from .openai_chat import OpenAIChat  # noqa: E402
from .openai_responses import OpenAIResponses  # noqa: E402

FORMATS: dict[str, type] = {
    f.name: f
    for f in (AnthropicMessages, OpenAIChat, OpenAIResponses, Gemini, BedrockConverse,
              BedrockInvoke, CohereChat, Ollama)
}


def sniff(event: str, payload: Any) -> str | None:
    """The format a frame belongs to, or None when one frame cannot tell (a ping)."""
    for name, fmt in FORMATS.items():
        if fmt.sniff(event, payload):
            return name
    return None
