"""Google Gemini ``streamGenerateContent?alt=sse``: every frame a whole ``GenerateContentResponse``.

https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent

Text comes in ``parts[].text``; a function call comes whole in one part, its ``args`` a
JSON object rather than string fragments, and several may share a chunk. No call carries an
index, so calls are numbered in order of arrival. A candidate's ``finishReason`` ends the
turn; there is no ``[DONE]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import Ev, array, delta_row, index, maybe_text, obj, text
from .spans import value_span as _span


class Gemini:
    name = "gemini"

    def __init__(self) -> None:
        self._calls = 0  # function calls so far in the turn: the next one's block

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        # Never a frame another format claims: Chat has choices, the others a type.
        return (
            isinstance(payload, dict)
            and "choices" not in payload
            and "type" not in payload
            and "object" not in payload
            and (isinstance(payload.get("candidates"), list)
                 or "usageMetadata" in payload or "promptFeedback" in payload)
        )

    def hot_rows(self, events: list[str], raws: list[bytes]) -> list[Sequence[Ev] | None]:
        """None for every frame: a Gemini chunk is a whole response, each one normalised
        (streams are a few dozen chunks, not the thousands of deltas of the others)."""
        return [None] * len(raws)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        calls = self._calls
        try:
            return self._chunk(event, payload, data)
        except Exception:
            self._calls = calls  # a chunk reported as a problem numbers no call
            raise

    def _chunk(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload = obj(payload, "a Gemini chunk")
        candidates = payload.get("candidates")
        if "error" in payload and not candidates:
            err = payload["error"]
            if isinstance(err, dict):
                status, msg = err.get("status"), err.get("message")
                return [Ev(event, "error", problem=f"provider error: {status}: {msg}"
                           if status else f"provider error: {msg}")]
            return [Ev(event, "error", problem=f"provider error: {err}")]
        out: list[Ev] = []
        at = 0  # parts stand in data in order: each is looked for after the one before
        for number, cand in enumerate(array(candidates or [], "candidates")):
            cand = obj(cand, "candidates[]")
            k = cand.get("index")
            k = number if k is None else index(k, "candidates[].index")  # 0 is left out
            if k != 0:
                raise TypeError(f"candidates[].index should be 0 (one candidate per chunk: "
                                f"candidateCount > 1 is not supported), not {k}")
            content = obj(cand.get("content") or {}, "candidates[].content")
            for part in array(content.get("parts") or [], "content.parts"):
                at = self._part(event, obj(part, "parts[]"), data, at, out)
            if maybe_text(cand.get("finishReason"), "candidates[].finishReason"):
                out.append(Ev(event, "turn_stop"))
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not candidates:
            out.append(Ev(event, "turn_stop"))  # the prompt was blocked: no answer follows
        return out or [Ev(event, "other")]

    def _part(self, event: str, part: dict[str, Any], data: str, at: int,
              out: list[Ev]) -> int:
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
                    out.append(Ev(event, "other"))  # a thinking summary
                else:
                    out.append(delta_row(event, "text_delta", None, frag, wire))
            elif key == "functionCall":
                at = self._call(event, obj(part[key], "parts[].functionCall"), data, at, out)
        if len(out) == before:  # a signature, code execution, a built-in tool, ...
            out.append(Ev(event, "other"))
        return at

    def _call(self, event: str, fc: dict[str, Any], data: str, at: int,
              out: list[Ev]) -> int:
        """A whole call: announced, its arguments in one fragment, stopped."""
        if "partialArgs" in fc or fc.get("willContinue"):
            raise TypeError("functionCall.partialArgs: arguments streamed over several "
                            "parts (Vertex AI streamFunctionCallArguments) are not supported")
        tool = text(fc.get("name"), "functionCall.name")
        call_id = maybe_text(fc.get("id"), "functionCall.id")
        args = fc.get("args")
        block = self._calls
        self._calls += 1
        out.append(Ev(event, "call_start", block, call_id, tool))
        span = _span(data, "functionCall", fc, at, len(data))
        if span is None:
            raise TypeError("functionCall: not found as written in the data line")
        if args is not None:
            obj(args, "functionCall.args")
            where = _span(data, "args", args, span[0], span[1])
            if where is None:
                raise TypeError("functionCall.args: not found as written in the data line")
            frag = data[where[0]:where[1]]  # byte-exact: the object as it was sent
            out.append(delta_row(event, "args_delta", block, frag, len(frag)))
        out.append(Ev(event, "block_stop", block))
        return span[1]
