"""The checks every format known only from its documentation shares (Bedrock InvokeModel,
Cohere v2 chat, Ollama): registered and detected, and read the same however it is chunked.
What each format's events mean is in its own test module."""

from __future__ import annotations

import pytest

from ..support.wire_samples import (
    WEATHER,
    assert_chunking_changes_nothing,
    assert_registered_and_detected,
    claude_events,
    cohere,
    cohere_events,
    invoke,
    ndjson,
    ollama_turn,
)

TURNS = {  # provider: a whole documented turn
    "bedrock-invoke": invoke(*claude_events()),
    "cohere-chat": cohere(*cohere_events()),
    "ollama": ndjson(*ollama_turn()),
}

CHUNKED = {  # provider: a turn with several calls, to cut everywhere
    "bedrock-invoke": invoke(*claude_events(WEATHER[1:], text="ok")),
    "cohere-chat": cohere(*cohere_events(WEATHER[1:], plan="a b")),
    "ollama": ndjson(*ollama_turn()),
}


@pytest.mark.parametrize("provider", TURNS)
def test_each_format_is_registered_and_detected(provider: str) -> None:
    assert_registered_and_detected(TURNS[provider], provider)


@pytest.mark.parametrize("provider", CHUNKED)
def test_chunking_changes_nothing(provider: str) -> None:
    assert_chunking_changes_nothing(CHUNKED[provider])
