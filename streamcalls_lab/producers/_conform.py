"""Is this server's streaming right? A streamed turn held to the whole answer to the same request.

The largest class of public threads about streamed tool calls is a server whose streamed calls
differ from what it answers to the same request sent without ``"stream": true``: the
end-of-stream flush that sends the arguments twice (vllm-project/vllm#51697), every call after a
zero-argument call streamed as ``{}`` (vllm-project/vllm#47901), the closing brace lost after a
number (vllm-project/vllm#22885), ints quoted, ``{}`` never sent and only the first call of an
array kept (sgl-project/sglang#35564), a zero-argument call left with no arguments
(NVIDIA/TensorRT-LLM PR #19228). :func:`conform` reads the streamed capture as the kit reads any
(``load`` and the correct accumulator) and the whole response with its format's ``whole``
reader (``FORMAT.whole``: any format of the registry that declares one), and gives one row per
difference. :func:`record_both` sends one request both ways to a server on this machine and
saves both answers.

Reading one streamed turn (:func:`read_turn`) and comparing argument values
(:func:`difference`, :func:`broken_arguments`) are shared with :mod:`.diff`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from .. import _columns as columns
from .. import _deepjson as deepjson
from ..accumulate import Accumulator, present
from ..display import inert
from ..loader import load
from ..providers import FORMATS, Answer, WireFormat
from ..sources import Source
from .quirks import CALL_MARKUP

CONFORM_COLUMNS = ("aspect", "call", "streamed", "whole", "detail")
ASPECTS = ("calls", "order", "name", "id", "arguments", "arguments_duplicated",
           "arguments_unclosed", "arguments_invalid", "stop_reason", "call_in_text", "complete")
"""What :func:`conform` compares, in the order its rows come."""
SIDES = ("the stream", "the whole response")
_CALL_KINDS = frozenset(("call_start", "args_delta", "block_stop", "args_done", "turn_stop"))
_FED = ("kind", "block", "call_id", "tool", "fragment", "wire_chars", "final")
_SUFFIX = {"sse": ".sse", "ndjson": ".ndjson", "eventstream": ".eventstream",
           "jsonarray": ".json", "prefixed": ".datastream"}
_CLOSE = {"{": "}", "[": "]"}


# -- one streamed turn, as the kit reads it ------------------------------------------------
@dataclass(frozen=True)
class SeenCall:
    """One call of a streamed turn, as the correct accumulator assembled it."""

    number: int
    """Its place in the turn, in the order calls were announced (from 0)."""
    block: int | None
    call_id: str | None
    """None where the stream gave none (or ``""``)."""
    tool: str | None
    args: str
    fragments: tuple[str, ...]
    """Its non-empty argument fragments, in order."""
    complete: bool


@dataclass(frozen=True)
class SeenTurn:
    """One streamed turn: its first choice's calls and text, and how it ended."""

    provider: str
    calls: tuple[SeenCall, ...]
    text: str
    text_fragments: tuple[str, ...]
    reason: str | None
    """The last stop or finish reason the stream stated."""
    ended: bool
    """Its end-of-turn event arrived."""
    problems: tuple[tuple[int, str], ...]
    """What could not be read, or what the provider said went wrong: (byte offset, why)."""

    @property
    def spec(self) -> WireFormat | None:
        return FORMATS.get(self.provider)

    @property
    def fragments(self) -> int:
        """Every non-empty fragment it was sent in: arguments and text."""
        return sum(len(c.fragments) for c in self.calls) + len(self.text_fragments)


def read_turn(source: Source, what: str = "the capture") -> SeenTurn:
    """``source``'s one turn (leniently read: a cut or damaged stream is read as far as it
    goes, its problems kept); a source of no turn, of several, or of no format the kit
    reads is a ``ValueError`` that says so."""
    deltas = load(source, strict=False)
    names = deltas["turn"].dropna().unique().tolist()
    if len(names) != 1:
        raise ValueError(f"{what} holds {len(names)} turns; give one streamed turn")
    read = deltas[deltas["kind"] != "error"]
    providers = [p for p in read["provider"].astype(str).unique() if p != "unknown"]
    if not providers:
        why = deltas["problem"].dropna()
        said = f": {why.iloc[0]}" if len(why) else ""
        raise ValueError(f"{what} is not a stream of a format the kit reads{said}")
    chosen = deltas["choice"].dropna()
    if len(chosen):  # the first choice; rows of no choice ([DONE]) belong to it too
        mine = deltas["choice"].isna() | deltas["choice"].eq(chosen.iloc[0]).fillna(False)
        deltas = deltas[mine.to_numpy(dtype=bool)]
    acc = Accumulator()
    fed = deltas[deltas["kind"].isin(_CALL_KINDS).to_numpy(dtype=bool)]
    for values in zip(*(fed[c].tolist() for c in _FED), strict=True):
        acc.feed(dict(zip(_FED, values, strict=True)))
    calls = tuple(SeenCall(n, present(b.block), present(b.call_id) or None, present(b.tool),
                           b.args, tuple(p for p in b.parts if p), b.complete)
                  for n, b in enumerate(acc.calls))
    kinds = deltas["kind"].astype(str)
    texts = tuple(deltas.loc[(kinds == "text_delta").to_numpy(dtype=bool), "fragment"]
                  .dropna().tolist())
    reasons = deltas["reason"].dropna()
    errors = deltas[(kinds == "error").to_numpy(dtype=bool)]
    return SeenTurn(
        providers[0], calls, "".join(texts), tuple(t for t in texts if t),
        str(reasons.iloc[-1]) if len(reasons) else None, bool((kinds == "turn_stop").any()),
        tuple(zip(errors["offset"].astype(int).tolist(),
                  errors["problem"].fillna("").astype(str).tolist(), strict=True)))


# -- argument values ------------------------------------------------------------------------
def parsed(args: str) -> tuple[bool, Any]:
    """``(True, value)`` where ``args`` parses strictly, ``(False, None)`` where it does not;
    no text at all is ``{}`` (a finished call of no arguments, as the kit reads it)."""
    if not args.strip():
        return True, {}
    try:
        return True, deepjson.loads(args)
    except ValueError:
        return False, None


def _kind(value: Any) -> str:
    if isinstance(value, bool):  # before int: True == 1 in Python, never in JSON
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), "null")


def _differences(x: Any, y: Any, path: tuple[str | int, ...] = ()
                 ) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every place two JSON values differ: its path, and ``type``, ``value``, ``only_x`` or
    ``only_y``."""
    if _kind(x) != _kind(y):
        yield path, "type"
    elif isinstance(x, dict):
        for key in dict.fromkeys([*x, *y]):
            if key not in y:
                yield (*path, key), "only_x"
            elif key not in x:
                yield (*path, key), "only_y"
            else:
                yield from _differences(x[key], y[key], (*path, key))
    elif isinstance(x, list):
        for n in range(max(len(x), len(y))):
            if n >= len(y):
                yield (*path, n), "only_x"
            elif n >= len(x):
                yield (*path, n), "only_y"
            else:
                yield from _differences(x[n], y[n], (*path, n))
    elif x != y:
        yield path, "value"


def same(x: Any, y: Any) -> bool:
    """Two JSON values are equal, type for type (``1`` is not ``true``, ``"3"`` not ``3``)."""
    return next(_differences(x, y), None) is None


def _where(path: tuple[str | int, ...]) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.isidentifier():
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return f"key {out}" if out else "the arguments"


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except TypeError:  # a deepjson.Deep inside: too deep for json.dumps
        text = deepjson.dumps(value)
    return text if len(text) <= 60 else text[:59] + "…"


def difference(x: Any, y: Any, sides: Sequence[str] = SIDES) -> str | None:
    """Where two argument values differ, in a sentence naming the key (None: they do not)."""
    found = list(_differences(x, y))
    if not found:
        return None
    path, how = found[0]
    a, b = sides
    where = _where(path)
    if how == "only_x":
        said = f"{where}: only {a} has it ({_show(_at(x, path))})"
    elif how == "only_y":
        said = f"{where}: {a} lacks it; {b} has {_show(_at(y, path))}"
    else:
        xv, yv = _at(x, path), _at(y, path)
        types = f" ({_kind(xv)})", f" ({_kind(yv)})"
        said = (f"{where}: {a} sends {_show(xv)}{types[0] if how == 'type' else ''}, "
                f"{b} {_show(yv)}{types[1] if how == 'type' else ''}")
    if len(found) > 1:
        more = ", ".join(_where(p).removeprefix("key ") for p, _ in found[1:4])
        said += f"; {len(found) - 1} more ({more}{', …' if len(found) > 4 else ''})"
    return said


def _closers(text: str) -> str | None:
    """The brackets that would close ``text``, or None where it ends inside a string."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in _CLOSE:
            stack.append(_CLOSE[ch])
        elif ch in "}]" and stack and stack[-1] == ch:
            stack.pop()
    return None if in_string else "".join(reversed(stack))


def broken_arguments(text: str, meant: Any) -> tuple[str, str]:
    """Why argument text that does not parse is not the value ``meant``: an aspect
    (``arguments_duplicated``, ``arguments_unclosed`` or ``arguments_invalid``) and what the
    text is, as the object of "sends"."""
    body = text.strip()
    decoder = deepjson  # (raw_decode at any depth)
    try:
        first, end = decoder.raw_decode(body)
    except ValueError:
        first, end = None, 0
    if end and same(first, meant):
        rest = body[end:].strip()
        ok, again = parsed(rest)
        return ("arguments_duplicated", "the whole arguments, then "
                + ("the same arguments again ({..}{..}: a flush that re-sends them)"
                   if ok and same(again, meant) else f"{len(rest)} more characters"))
    for skip in range(1, min(len(body), 8)):  # a stray prefix, then the whole: {{"city": ...}
        try:
            value, end = decoder.raw_decode(body, skip)
        except ValueError:
            continue
        if end == len(body) and same(value, meant):
            return ("arguments_duplicated", f"{body[:skip]!r} and then the whole arguments "
                    "({{..}: a prefix sent, then everything re-sent)")
    closing = _closers(body)
    if closing:
        ok, value = parsed(body + closing)
        if ok and same(value, meant):
            return "arguments_unclosed", f"the arguments without their closing {closing!r}"
    why = "it parses"  # what a caller that asks about valid text is told
    try:
        deepjson.loads(text)
    except ValueError as e:
        why = str(e)
    return "arguments_invalid", f"text that does not parse ({why})"


def quoted(value: object) -> str:
    """Captured text quoted in a detail, as it came (made inert where it is shown)."""
    return f"'{value}'"


def _id_trouble(call_id: str | None) -> str | None:
    """What is wrong with an id a call was given, if anything (ids differ between two
    requests, so only their presence and shape are compared)."""
    if call_id is None:
        return "no id"
    if len(call_id) > 256 or not call_id.isprintable() or any(c.isspace() for c in call_id):
        return f"an id that is not well formed ({quoted(call_id)})"
    return None


# -- conform ----------------------------------------------------------------------------------
def read_whole(whole: str | Path | bytes, prefer: str | None = None) -> tuple[str, Answer]:
    """A whole (non-streamed) response, a path or its bytes: the format whose ``whole``
    reader reads it (``prefer``'s first), and what it says."""
    data = Path(whole).read_bytes() if isinstance(whole, str | Path) else bytes(whole)
    try:
        text = data.decode("utf-8")
        payload = json.loads(text)
    except ValueError as e:  # UnicodeDecodeError is one
        raise ValueError(f"the whole response is not JSON ({e})") from None
    except RecursionError:  # a usage error like any unreadable answer, not a traceback
        raise ValueError("the whole response nests deeper than the JSON parser goes "
                         f"({deepjson.depth(text)} levels): no whole answer is") from None
    order = sorted(FORMATS.values(), key=lambda f: f.name != prefer)
    for spec in order:
        if spec.whole is None:
            continue
        try:
            answer = spec.whole(payload, text)
        except TypeError as e:
            raise ValueError(f"the whole response is {spec.name} with a field of the wrong "
                             f"type: {e}") from None
        if answer is not None:
            return spec.name, answer
    raise ValueError("the whole response is none of the whole responses the kit reads ("
                     + ", ".join(f.name for f in FORMATS.values() if f.whole) + ")")


Row = tuple[str, int | None, str | None, str | None, str]


def _pairs(streamed: Sequence[SeenCall], whole: Sequence[dict[str, Any]]
           ) -> tuple[list[Row], list[tuple[SeenCall, int, dict[str, Any]]]]:
    """The calls of both sides paired by announcement (an extra or a missing call is a
    ``calls`` row, the same calls in another order one ``order`` row)."""
    names_s = [c.tool or "" for c in streamed]
    names_w = [str(c["tool"]) for c in whole]
    rows: list[Row] = []
    if names_s != names_w and sorted(names_s) == sorted(names_w):
        rows.append(("order", None, ", ".join(names_s), ", ".join(names_w),
                     "the same calls, announced in another order"))
        left = list(range(len(whole)))
        pairs = []
        for c in streamed:
            k = next(k for k in left if names_w[k] == (c.tool or ""))
            left.remove(k)
            pairs.append((c, k, whole[k]))
        return rows, pairs
    pairs = []
    matcher = SequenceMatcher(None, names_s, names_w, autojunk=False)
    for op, s0, s1, w0, w1 in matcher.get_opcodes():
        n = min(s1 - s0, w1 - w0) if op == "replace" else (s1 - s0 if op == "equal" else 0)
        pairs += [(streamed[s0 + k], w0 + k, whole[w0 + k]) for k in range(n)]
        for c in streamed[s0 + n:s1]:
            rows.append(("calls", c.number, c.tool, None, f"the stream has call {c.number} "
                         f"({quoted(c.tool)}); the whole response has no such call"))
        for k in range(w0 + n, w1):
            rows.append(("calls", k, None, names_w[k], f"the whole response has call {k} "
                         f"({quoted(names_w[k])}); the stream never announced it "
                         f"({len(streamed)} streamed, {len(whole)} whole)"))
    return rows, pairs


def _compare(c: SeenCall, k: int, w: dict[str, Any], ids: dict[str, int]) -> Iterator[Row]:
    """One streamed call against the whole response's call ``k``."""
    if c.tool != w["tool"]:
        yield ("name", c.number, c.tool, w["tool"],
               f"call {c.number} is named {quoted(c.tool)} in the stream, "
               f"{quoted(w['tool'])} in the whole response")
    given = present(w["call_id"]) or None
    said, meant = _id_trouble(c.call_id), _id_trouble(given)
    if said != meant:
        yield ("id", c.number, c.call_id, given,
               f"the stream gives call {c.number} {said or quoted(c.call_id)}, the whole response "
               f"{meant or quoted(given)}")
    elif c.call_id is not None and c.call_id in ids:
        yield ("id", c.number, c.call_id, w["call_id"],
               f"call {c.number} has the id the stream gave call {ids[c.call_id]}")
    if c.call_id is not None:
        ids.setdefault(c.call_id, c.number)
    if not c.complete:
        yield ("complete", c.number, c.args, None, f"call {c.number} "
               f"({quoted(c.tool)}) never finished: the stream stops after "
               f"{len(c.args)} characters of its arguments")
        return
    ok_s, value_s = parsed(c.args)
    ok_w, value_w = parsed(w["args"])
    if ok_s and ok_w:
        why = difference(value_s, value_w)
        if why is not None:
            yield "arguments", c.number, c.args, w["args"], why
    elif not ok_w:
        if c.args != w["args"]:
            yield ("arguments_invalid", c.number, c.args, w["args"],
                   "the whole response's arguments do not parse, and the stream's differ")
    else:
        aspect, why = broken_arguments(c.args, value_w)
        yield aspect, c.number, c.args, w["args"], f"the stream sends {why}"


def _stop(turn: SeenTurn, answer: Answer) -> Iterator[Row]:
    spec = turn.spec
    said = turn.reason
    if said is not None and spec is not None and spec.stop_terms is not None:
        said = spec.stop_terms(said)
    if said == answer.stop:
        return
    asks = spec.tool_stop if spec is not None else None
    note = ""
    if asks and (said in asks) != (answer.stop in asks):
        note = f" (this format says {' or '.join(sorted(asks))} when the model asks for tools)"
    yield ("stop_reason", None, turn.reason, answer.stop,
           f"the stream ends with {_told(turn.reason)}, the whole response with "
           f"{_told(answer.stop)}{note}")


def _told(reason: str | None) -> str:
    return "no stop reason" if reason is None else quoted(reason)


def _markup(turn: SeenTurn, answer: Answer) -> Iterator[Row]:
    found = CALL_MARKUP.search(turn.text)
    if found is None:
        return
    also = CALL_MARKUP.search(answer.text)
    at = found.start()
    yield ("call_in_text", None, turn.text[max(0, at - 20):at + 60],
           answer.text[max(0, also.start() - 20):also.start() + 60] if also else None,
           f"tool-call markup {found.group()!r} in the streamed text at character {at}: a "
           "call left in the text, with no id or typed arguments; the whole response's text "
           + ("has it too" if also else "has none"))


def _ending(turn: SeenTurn, shown: int = 5) -> Iterator[Row]:
    for at, why in turn.problems[:shown]:  # a lenient load has made each run of one row
        yield "complete", None, why, None, f"at byte {at}: {why}"
    if len(turn.problems) > shown:
        yield "complete", None, None, None, f"{len(turn.problems) - shown} more problems"
    if not turn.ended:
        yield "complete", None, None, None, "the stream ends with no end-of-turn event"


def conform(streamed: Source, whole: str | Path | bytes) -> pd.DataFrame:
    """The differences between a streamed turn and the whole response to the same request:
    one row per difference (``aspect``, one of :data:`ASPECTS`; ``call``, the call's number
    in the stream's order of announcement, or in the whole response's for a call only it
    has, NA for the turn; what ``streamed`` and ``whole`` say; ``detail``, in a sentence),
    none when the stream conforms. Ids are compared for presence and shape, arguments as
    parsed JSON values, the stop reason in the format's terms (``FORMAT.stop_terms``).

    ``streamed`` is any one-turn source ``load`` reads; ``whole`` a path or the bytes of a
    response in the same format (``FORMAT.whole`` reads it). ``attrs`` say the ``format``
    and how many ``calls`` each side has.
    """
    turn = read_turn(streamed, "the streamed capture")
    name, answer = read_whole(whole, turn.provider)
    if name != turn.provider:
        raise ValueError(f"the stream is {turn.provider} but the whole response is {name}: "
                         "give the two answers to one request")
    rows, pairs = _pairs(turn.calls, answer.calls)
    ids: dict[str, int] = {}
    for c, k, w in pairs:
        rows += _compare(c, k, w, ids)
    complete = turn.ended and not turn.problems and all(c.complete for c in turn.calls)
    if complete:
        rows += _stop(turn, answer)
    rows += _markup(turn, answer)
    rows += _ending(turn)
    table = frame(rows, CONFORM_COLUMNS, ASPECTS)
    table.attrs.update(format=name, calls={"streamed": len(turn.calls),
                                           "whole": len(answer.calls)})
    return table


def frame(rows: Sequence[Row], names: Sequence[str], labels: Sequence[str]) -> pd.DataFrame:
    """Rows of ``(label, call, x, y, detail)`` as a typed table."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 5
    unknown = set(cols[0]) - set(labels)
    if unknown:  # a category column would make it NaN without a word
        raise ValueError(f"not one of {', '.join(labels)}: {', '.join(sorted(unknown))}")
    return pd.DataFrame({
        names[0]: columns.category(list(cols[0]), labels),
        names[1]: columns.ints(list(cols[1])),
        names[2]: columns.strings([None if v is None else str(v) for v in cols[2]]),
        names[3]: columns.strings([None if v is None else str(v) for v in cols[3]]),
        names[4]: columns.strings(list(cols[4])),
    })


def text(table: pd.DataFrame, limit: int = 100) -> str:
    """A table of differences as readable, inert lines: each row's label, call and
    detail, then what each side says."""
    label, _, x, y, _ = table.columns
    width = max((len(str(v)) for v in table[label]), default=0)
    out = []
    for row in table.itertuples(index=False):
        number = "" if pd.isna(row[1]) else f"call {row[1]}"
        out.append(f"  {row[0]:<{width}}  {number:<7} {inert(row[4], 300)}")
        out += [f"  {'':<{width}}    {side}: {inert(value, limit)}"
                for side, value in ((x, row[2]), (y, row[3])) if not pd.isna(value)]
    return "\n".join(out)


def rows_json(table: pd.DataFrame) -> list[dict[str, Any]]:
    """A table of differences as JSON values (NA as null)."""
    return [{k: (None if pd.isna(v) else int(v) if k == "call" else str(v))
             for k, v in row.items()} for row in table.to_dict("records")]


# -- asking a local server both ways ----------------------------------------------------------
def request_format(url: str, name: str | None = None) -> WireFormat:
    """The format a request to ``url`` is in: ``name``'s, else the one whose ``FORMAT.path``
    the URL's path ends with, among those that say how a request turns streaming on and
    read a whole response."""
    able = {n: f for n, f in FORMATS.items() if f.whole is not None and f.streaming}
    if name is not None:
        if name not in able:
            raise ValueError(f"{name!r} is not a format conform can ask both ways; these "
                             f"are: {', '.join(able)}")
        return able[name]
    path = urlsplit(url).path.rstrip("/")
    found = [f for f in able.values() if f.path and path.endswith(f.path)]
    if len(found) != 1:
        known = ", ".join(f"{f.name} {f.path}" for f in able.values())
        raise ValueError(f"the URL's path {path!r} names {len(found)} of the formats conform "
                         f"can ask both ways ({known}): say which with --format")
    return found[0]


def _bodies(spec: WireFormat, request: bytes) -> tuple[bytes, bytes]:
    """The request as sent streamed and whole."""
    try:
        body = json.loads(request)
    except ValueError as e:
        raise ValueError(f"the request is not JSON ({e})") from None
    if not isinstance(body, dict):
        raise ValueError("the request must be a JSON object")
    how = spec.streaming
    if how is None:
        raise ValueError(f"{spec.name} does not say how a request turns streaming on")
    asked = {**body, how.switch: True}
    plain = {k: v for k, v in body.items() if k not in how.only} | {how.switch: False}
    return (json.dumps(asked, ensure_ascii=False).encode(),
            json.dumps(plain, ensure_ascii=False).encode())


def _fresh(out: Path, stem: str, suffix: str) -> Path:
    path = out / f"{stem}{suffix}"
    n = 1
    while path.exists() or Path(f"{path}.meta.json").exists():
        n += 1
        path = out / f"{stem}-{n}{suffix}"
    return path


def record_both(url: str, request: bytes | str | Path, out: str | Path, *,
                format: str | None = None, key_env: str | None = None,
                timeout: float = 600.0) -> tuple[Path, Path]:
    """Send ``request`` to a server on this machine twice, streamed and whole, and save both
    answers in ``out`` (the stream byte-exact with its timing, the whole one as ``.json``,
    each with its scrubbed provenance, by ``traffic.record``); gives their paths. A stream
    that breaks off is kept as far as it came (its provenance says so, and conform reads it
    as incomplete). A host that is not loopback is refused: this asks local servers only."""
    from ..traffic.record import RecordError, record
    from ..traffic.server import is_loopback

    host = urlsplit(url).hostname or ""
    if not is_loopback(host):
        raise ValueError(f"refusing {host or url!r}: conform asks servers on this machine "
                         "only (127.0.0.1, ::1, localhost)")
    spec = request_format(url, format)
    raw = Path(request).read_bytes() if isinstance(request, str | Path) else request
    streamed, plain = _bodies(spec, raw)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    paths = (_fresh(folder, f"{stamp}-streamed", _SUFFIX[spec.framing]),
             _fresh(folder, f"{stamp}-whole", ".json"))
    try:
        record(url, streamed, paths[0], key_env=key_env, timeout=timeout)
    except RecordError:
        if not Path(f"{paths[0]}.meta.json").is_file():
            raise  # nothing saved: no answer to compare
    record(url, plain, paths[1], key_env=key_env, timeout=timeout,
           headers={"accept": "application/json"})
    return paths

