"""Gemini test turns: chunks, calls, whole streams, and the google-genai SDK's reading of them."""

from __future__ import annotations

import pytest

from .sse_turns import sse

USAGE = {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}


def chunk(*parts: dict, finish: str | None = None, **candidate: object) -> dict:
    cand: dict = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    cand.update(candidate)
    return {"candidates": [cand], "usageMetadata": USAGE, "modelVersion": "gemini-2.5-flash",
            "responseId": "r1"}


def gemini(*chunks: dict | str) -> bytes:
    """Data lines with no event names, as Gemini sends them (a str is sent as it stands)."""
    return sse(*((None, c) for c in chunks))


def call(name: object, args: object = None, **more: object) -> dict:
    fc = {"name": name, "args": {} if args is None else args, **more}
    return {"functionCall": fc}


def genai_responses(body: bytes) -> list:
    """Each chunk as the google-genai SDK reads it: its own HTTP client (an in-memory
    transport), SSE reader and types."""
    genai = pytest.importorskip("google.genai")
    import httpx

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = genai.Client(api_key="fake", http_options=genai.types.HttpOptions(
        base_url="http://sdk-reference.invalid",
        httpx_client=httpx.Client(transport=httpx.MockTransport(serve))))
    return list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="x"))


def two(first: list[dict], second: list[dict], finish: str | None = None) -> dict:
    """A chunk holding candidates 0 and 1, as ``candidateCount: 2`` streams them."""
    cands = []
    for k, parts in enumerate((first, second)):
        cand: dict = {"content": {"parts": parts, "role": "model"}, "index": k}
        if finish:
            cand["finishReason"] = finish
        cands.append(cand)
    return {"candidates": cands, "modelVersion": "gemini-2.5-flash", "responseId": "r2"}


CANDIDATES = gemini(
    two([{"text": "Sun"}], [{"text": "Rain"}]),
    two([call("weather", {"city": "Paris"})], [call("weather", {"city": "Oslo"}),
                                               call("time", {})]),
    two([{"text": "ny"}], [{"text": "y"}], finish="STOP"),
)


def piece(path: str, **value: object) -> dict:
    return {"jsonPath": path, **value}


STREAMED = gemini(
    chunk({"text": "Checking."}),
    chunk(call("get_weather", willContinue=True, id="fc_1")),
    chunk({"functionCall": {"partialArgs": [piece("$.location", stringValue="New",
                                                  willContinue=True)],
                            "willContinue": True}}),
    chunk({"functionCall": {"partialArgs": [piece("$.location", stringValue=" York"),
                                            piece("$.days", numberValue=3)],
                            "willContinue": True}}),
    chunk({"functionCall": {"partialArgs": [piece("$.opts.metric", boolValue=True),
                                            piece("$.tags[0]", stringValue="a\"b")],
                            "willContinue": True}}),
    chunk({"functionCall": {}}, finish="STOP"),
)
