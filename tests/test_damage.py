"""Damaged captures of the new formats (Cohere, Ollama, Bedrock invoke, Gemini candidates and
streamed arguments): a CaptureError naming offset and reason, or rows; never a crash."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamcalls_lab as scl

from .support.gemini_turns import CANDIDATES, STREAMED
from .support.wire_samples import claude_events, cohere, cohere_events, invoke, ndjson, ollama_turn

SAMPLES = [cohere(*cohere_events()), ndjson(*ollama_turn()), invoke(*claude_events()),
           CANDIDATES, STREAMED]
DAMAGE = [b"", b"\x00", b"\xff", b"{", b"}", b"\n", b'"', b"\r\n\r\n", b"[", b"data: x\n\n"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.floats(0, 1), st.sampled_from(DAMAGE), st.booleans())
def test_a_damaged_capture_gives_a_capture_error_or_rows_never_a_crash(
        body: bytes, where: float, text: bytes, replace: bool) -> None:
    at = int(where * len(body))
    damaged = body[:at] + text + body[at + len(text) * replace:]
    lenient = scl.load(damaged, strict=False)  # never raises
    try:
        strict = scl.load(damaged)
    except scl.CaptureError as e:
        assert e.reason and 0 <= e.offset <= len(damaged)
        assert lenient.kind.eq("error").any() or lenient.problem.notna().any()
    else:
        assert strict.equals(lenient)
