"""Google Gemini ``streamGenerateContent?alt=sse``: every frame a whole ``GenerateContentResponse``.

https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent

Text comes in ``parts[].text``; a function call comes whole in one part, its ``args`` a
JSON object rather than string fragments, and several may share a chunk. No call carries an
index, so calls are numbered in order of arrival. A candidate's ``finishReason`` ends the
turn; there is no ``[DONE]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from copy import deepcopy
from itertools import pairwise
from typing import Any

from ..events import Ev, array, fragment_row, index, maybe_text, obj, text
from ..turns import Call, Script, Text, WireFrame, json_object, raw, raw_json
from .as_written import exact_span, object_after, object_text
from .as_written import value_span as _span
from .recognise import ByKeys
from .spec import Answer, Envelope, Fields, WireFormat


class Gemini:
    name = "gemini"
    hot = None  # a chunk is a whole response: a stream is dozens of them, not thousands

    def __init__(self) -> None:
        self._calls: dict[int, int] = {}  # per candidate: calls so far, the next one's block
        self._open: dict[int, _Streamed] = {}  # per candidate: a call whose args still stream

    # A GenerateContentResponse: its candidates, or the usage or prompt feedback alone.
    sniff = ByKeys({"candidates": list, "usageMetadata": None, "promptFeedback": None})

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        state = deepcopy((self._calls, self._open))
        try:
            return self._chunk(event, payload, data)
        except Exception:
            self._calls, self._open = state  # a chunk reported as a problem changes nothing
            raise

    def _chunk(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload = obj(payload, "a Gemini chunk")
        candidates = payload.get("candidates")
        if "error" in payload and not candidates:
            err = payload["error"]
            if isinstance(err, dict):
                status, msg = err.get("status"), err.get("message")
                return [Ev.provider_error(event, msg, status or None)]
            return [Ev.provider_error(event, err)]
        out: list[Ev] = []
        at = 0  # parts stand in data in order: each is looked for after the one before
        for number, cand in enumerate(array(candidates or [], "candidates")):
            cand = obj(cand, "candidates[]")
            k = cand.get("index")
            k = number if k is None else index(k, "candidates[].index")  # 0 is left out
            content = obj(cand.get("content") or {}, "candidates[].content")
            for part in array(content.get("parts") or [], "content.parts"):
                at = self._part(event, obj(part, "parts[]"), data, at, out, k)
            finish = maybe_text(cand.get("finishReason"), "candidates[].finishReason")
            if finish:
                out.append(Ev(event, "turn_stop", choice=k, reason=finish))
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not candidates:
            out.append(Ev(event, "turn_stop"))  # the prompt was blocked: no answer follows
        return out or [Ev(event, "other")]

    def _part(self, event: str, part: dict[str, Any], data: str, at: int,
              out: list[Ev], k: int) -> int:
        """The rows of one part, in the order its keys stand; where its text ends."""
        before = len(out)
        for key in part:  # orjson keeps the keys in wire order
            if key == "text":
                frag = text(part["text"], "parts[].text")
                thought = part.get("thought")
                if thought is not None and type(thought) is not bool:
                    raise TypeError(f"parts[].thought should be a boolean, "
                                    f"not {type(thought).__name__}")
                span = _span(data, "text", frag, at, len(data))
                wire = None
                if span is not None:
                    at = span[1]
                    wire = span[1] - span[0] - 2  # without the quotes
                if thought:
                    out.append(Ev(event, "other", choice=k))  # a thinking summary
                else:
                    out.append(fragment_row(event, "text_delta", None, frag, wire, k))
            elif key == "functionCall":
                fc = obj(part[key], "parts[].functionCall")
                if "partialArgs" in fc or fc.get("willContinue") not in (None, False) \
                        or k in self._open:
                    at = self._streamed(event, fc, data, at, out, k)
                else:
                    at = self._call(event, fc, data, at, out, k)
        if len(out) == before:  # a signature, code execution, a built-in tool, ...
            out.append(Ev(event, "other", choice=k))
        return at

    def _announce(self, event: str, fc: dict[str, Any], out: list[Ev], k: int) -> int:
        tool = text(fc.get("name"), "functionCall.name")
        call_id = maybe_text(fc.get("id"), "functionCall.id")
        block = self._calls.get(k, 0)
        self._calls[k] = block + 1
        out.append(Ev(event, "call_start", block, call_id, tool, choice=k))
        return block

    def _call(self, event: str, fc: dict[str, Any], data: str, at: int,
              out: list[Ev], k: int) -> int:
        """A whole call: announced, its arguments in one fragment, stopped."""
        args = fc.get("args")
        block = self._announce(event, fc, out, k)
        span = exact_span(data, "functionCall", fc, at, len(data), "functionCall")
        if args is not None:
            frag = object_text(data, "args", args, *span, "functionCall.args")
            out.append(fragment_row(event, "args_delta", block, frag, len(frag), k))
        out.append(Ev(event, "block_stop", block, choice=k))
        return span[1]

    def _streamed(self, event: str, fc: dict[str, Any], data: str, at: int,
                  out: list[Ev], k: int) -> int:
        """One part of a call whose arguments stream (Vertex AI ``partialArgs``).

        The part that names the call announces it; each piece (a ``jsonPath`` and a value;
        a string value is appended to what that path holds) is an ``other`` row whose
        fragment is the value; the first part whose ``willContinue`` is not true ends the
        call: one ``args_delta`` then carries the arguments assembled from the pieces
        (compact JSON, never on the wire as such, so ``wire_chars`` is NA), then its stop.
        """
        more = fc.get("willContinue", False)
        if type(more) is not bool:
            raise TypeError(f"functionCall.willContinue should be a boolean, "
                            f"not {type(more).__name__}")
        call = self._open.get(k)
        if call is None:
            call = self._open[k] = _Streamed(self._announce(event, fc, out, k))
        elif fc.get("name") is not None:
            raise TypeError("functionCall.name: a new call began before the streamed one "
                            "ended (willContinue was true)")
        for piece in array(fc.get("partialArgs") or [], "functionCall.partialArgs"):
            frag = call.add(obj(piece, "partialArgs[]"))
            out.append(Ev(event, "other", call.block, fragment=frag, choice=k))
        if not more:
            del self._open[k]
            args = json.dumps(call.args, separators=(",", ":"), ensure_ascii=False)
            out.append(Ev(event, "args_delta", call.block, fragment=args, choice=k))
            out.append(Ev(event, "block_stop", call.block, choice=k))
        span = _span(data, "functionCall", fc, at, len(data))
        return at if span is None else span[1]


_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")
_STEP = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


class _Streamed:
    """A call whose arguments arrive as ``partialArgs`` pieces, assembled by ``jsonPath``."""

    def __init__(self, block: int) -> None:
        self.block = block
        self.args: dict[str, Any] = {}

    def add(self, piece: dict[str, Any]) -> str | None:
        """Put one piece in place; its value's text, for the row's fragment."""
        path = text(piece.get("jsonPath"), "partialArgs[].jsonPath")
        found = [key for key in _VALUES if key in piece]
        if not found:
            return None  # a piece that only says more follows
        if len(found) > 1:
            raise TypeError(f"partialArgs[] should hold one value, not {', '.join(found)}")
        value = None if found[0] == "nullValue" else piece[found[0]]
        if found[0] == "stringValue":
            text(value, "partialArgs[].stringValue")
        parent, key = self._slot(path)
        if found[0] == "stringValue" and isinstance(_get(parent, key), str):
            value = _get(parent, key) + value
        _set(parent, key, value)
        return piece[found[0]] if found[0] == "stringValue" else json.dumps(value)

    def _slot(self, path: str) -> tuple[Any, str | int]:
        """The container a path's last step is in (made on the way), and that step."""
        if not path.startswith("$"):
            raise TypeError(f"partialArgs[].jsonPath should start with $, not {path!r}")
        steps: list[str | int] = []
        at = 1
        while at < len(path):
            m = _STEP.match(path, at)
            if m is None:
                raise TypeError(f"partialArgs[].jsonPath {path!r}: cannot read it after {at}")
            name, number, quoted = m.groups()
            steps.append(int(number) if number is not None else name if name is not None
                         else re.sub(r"\\(.)", r"\1", quoted))
            at = m.end()
        if not steps:
            raise TypeError("partialArgs[].jsonPath should name an argument, not be $")
        node: Any = self.args
        for step, after in pairwise(steps):
            child = _get(node, step)
            if child is None:
                child = [] if isinstance(after, int) else {}
                _set(node, step, child)
            node = child
        return node, steps[-1]


def _get(node: Any, step: str | int) -> Any:
    if isinstance(step, int):
        if type(node) is not list:
            raise TypeError(f"partialArgs[].jsonPath indexes [{step}] into a non-list")
        return node[step] if step < len(node) else None
    if type(node) is not dict:
        raise TypeError(f"partialArgs[].jsonPath names .{step} in a non-object")
    return node.get(step)


def _set(node: Any, step: str | int, value: Any) -> None:
    _get(node, step)  # the container's type is checked there
    if isinstance(step, int):
        node.extend([None] * (step + 1 - len(node)))
    node[step] = value


def whole(payload: Any, data: str) -> Answer | None:
    """A whole ``GenerateContentResponse`` (``generateContent``, not streamed): the first
    candidate's calls (``args`` the object exactly as written; an absent ``id`` is None),
    its ``finishReason`` and its text (thoughts left out); None for any other payload."""
    if not (isinstance(payload, dict) and isinstance(payload.get("candidates"), list)):
        return None
    if not payload["candidates"]:
        return Answer((), None)
    cand = obj(payload["candidates"][0], "candidates[]")
    calls, texts, at = [], [], 0
    for part in array(obj(cand.get("content") or {}, "candidates[].content").get("parts")
                      or [], "content.parts"):
        part = obj(part, "parts[]")
        if "functionCall" in part:
            fc = obj(part["functionCall"], "parts[].functionCall")
            args = ""
            if fc.get("args") is not None:
                args, at = object_after(data, "args", fc["args"], at, "functionCall.args")
            calls.append({"call_id": maybe_text(fc.get("id"), "functionCall.id"),
                          "tool": text(fc.get("name"), "functionCall.name"), "args": args})
        elif "text" in part and not part.get("thought"):
            texts.append(text(part["text"], "parts[].text"))
    return Answer(tuple(calls), maybe_text(cand.get("finishReason"), "finishReason"),
                  "".join(texts))


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``streamGenerateContent`` streams it: one ``GenerateContentResponse`` per
    text fragment, each call whole in a chunk of its own (``args`` the object as given),
    then a chunk whose candidate says ``finishReason`` with the usage. With
    ``turn.streamed_args`` each call streams as Vertex AI sends it with
    ``streamFunctionCallArguments`` (:func:`_streamed_call`)."""
    frames: list[WireFrame] = []
    version = {"modelVersion": turn.model}

    def chunk(parts: list[dict[str, Any]], **candidate: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": parts, "role": "model"}, **candidate,
                                "index": 0}], **version}

    calls = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            for piece in seg.fragments:
                frames.append(WireFrame(chunk([{"text": piece}]), None, "text", n, piece))
            continue
        if turn.streamed_args and seg.args:  # a call with no arguments has none to stream
            frames += _streamed_call(seg, n, calls, chunk)
        elif seg.args:
            args = json_object(seg.args, FORMAT.name)
            payload = chunk([{"functionCall": {"id": seg.call_id, "name": seg.tool,
                                               "args": raw(0)}}])
            frames.append(WireFrame(payload, None, "call_start", n, args, calls,
                                    raw_json(payload, [args])))
        else:  # a call that takes no arguments sends none
            payload = chunk([{"functionCall": {"id": seg.call_id, "name": seg.tool}}])
            frames.append(WireFrame(payload, None, "call_start", n, None, calls))
        calls += 1
    frames.append(WireFrame({"candidates": [{"content": {"parts": [{"text": ""}],
                                                         "role": "model"},
                                             "finishReason": "STOP", "index": 0}],
                             "usageMetadata": {"promptTokenCount": 1,
                                               "candidatesTokenCount": 1,
                                               "totalTokenCount": 2}, **version},
                            None, "end"))
    return frames


def _streamed_call(seg: Call, n: int, block: int, chunk: Callable[..., dict[str, Any]]
                   ) -> list[WireFrame]:
    """One call as Vertex AI streams it with ``streamFunctionCallArguments``: a part naming
    it with ``willContinue: true``, a part per ``partialArgs`` piece (each leaf by its
    ``jsonPath``, a string value in two ``stringValue`` pieces that append), then a part
    without ``willContinue`` that ends it. The reader assembles the arguments as compact
    JSON, so only compact arguments can be written this way (else ``ValueError``)."""
    args = json.loads(seg.args) if seg.args else {}
    if not isinstance(args, dict) or (seg.args and json.dumps(
            args, separators=(",", ":"), ensure_ascii=False) != seg.args):
        raise ValueError(f"{FORMAT.name}: streamed arguments are assembled as compact JSON; "
                         f"{seg.args!r} is not a compact JSON object")
    pieces = [piece for path, value in _leaves(args, "$") for piece in _pieces(path, value)]
    frames = [WireFrame(chunk([{"functionCall": {"id": seg.call_id, "name": seg.tool,
                                                 "willContinue": True}}]),
                        None, "call_start", n, None, block)]
    for piece, text_ in pieces:
        frames.append(WireFrame(chunk([{"functionCall": {"partialArgs": [piece],
                                                         "willContinue": True}}]),
                                None, "args", n, text_, block))
    frames.append(WireFrame(chunk([{"functionCall": {}}]), None, "call_stop", n, None, block))
    return frames


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every leaf of an argument value with its JSON Path (RFC 9535 name selectors); an
    empty object or list inside has no leaf, so no piece can make it (``ValueError``)."""
    items = (value.items() if isinstance(value, dict) else enumerate(value)
             if isinstance(value, list) else None)
    if items is None:
        yield path, value
        return
    if not value and path != "$":
        raise ValueError(f"{FORMAT.name}: an empty container at {path} has no partialArgs "
                         "piece")
    for key, child in items:
        step = f"[{key}]" if isinstance(key, int) else (
            f".{key}" if re.fullmatch(r"[A-Za-z_][\w]*", key) else
            "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']")
        yield from _leaves(child, path + step)


def _pieces(path: str, value: Any) -> list[tuple[dict[str, Any], str]]:
    """The ``partialArgs`` pieces of one leaf, each with the text it adds."""
    if isinstance(value, str):
        half = len(value) // 2
        parts = [value[:half], value[half:]] if half else [value]
        return [({"jsonPath": path, "stringValue": part, **({"willContinue": True} if k < len(
            parts) - 1 else {})}, part) for k, part in enumerate(parts)]
    if value is None:
        return [({"jsonPath": path, "nullValue": None}, "null")]
    key = "boolValue" if isinstance(value, bool) else "numberValue"
    return [({"jsonPath": path, key: value}, json.dumps(value))]


FORMAT = WireFormat.of(
    Gemini,
    docs="https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent",
    path="/v1beta/models/streamcalls-lab:streamGenerateContent",
    events={kind: ("message", "element") for kind in (
        "call_start", "args_delta", "block_stop", "text_delta", "turn_stop", "error",
        "other")},
    fields=Fields(call_id=("id",), tool=("name",), fragment=("args",), whole=("args",),
                  text=("text",)),
    envelope=Envelope(
        containers=frozenset(("candidates", "content", "parts", "functionCall",
                              "usageMetadata", "partialArgs", "error", "promptFeedback")),
        schema=frozenset(("role", "name", "finishReason", "modelVersion", "jsonPath",
                          "status")),
        numbers=frozenset(("index",  # a candidate's, when there are several
                           "promptTokenCount", "candidatesTokenCount", "totalTokenCount",
                           "thoughtsTokenCount", "toolUsePromptTokenCount",
                           "cachedContentTokenCount")),
        ids=frozenset(("responseId",)),
        top=frozenset(("modelVersion",)),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "line_separator_in_data")),
    calls_whole=True,
    streams_args=True,
    call_ids_sent=False,  # the Gemini API sends functionCall.id only sometimes (Vertex: never)
    whole=whole,
)
