"""serve answers a capture of every registered format (issue #34: every AI SDK data stream
capture raised KeyError on its framing's media type and the connection dropped with no
status line): 200, the bytes as captured, under a content type."""

from __future__ import annotations

import math

import httpx2
import pytest

import streamcalls_lab as scl
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.traffic.serve import serve
from streamcalls_lab.turns import body, write

from ..support.format_samples import sample


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_serve_answers_a_capture_of_every_format(name: str) -> None:
    raw = body(name, write(name, sample(name)))
    with serve(raw, speed=math.inf) as base_url, httpx2.Client(timeout=20) as client:
        resp = client.post(base_url + "/stream", json={"stream": True})
    assert resp.status_code == 200
    assert resp.headers["content-type"]
    assert resp.content == raw
    assert len(scl.calls(scl.load(resp.content, strict=False))) == 2


def test_the_ai_sdk_data_stream_is_served_as_text() -> None:
    raw = body("ai-sdk-data", write("ai-sdk-data", sample("ai-sdk-data")))
    with serve(raw, speed=math.inf) as base_url, httpx2.Client(timeout=20) as client:
        resp = client.post(base_url + "/api/chat")
    assert resp.headers["content-type"].startswith("text/plain")
