"""Self-check of the SDK reference harness (tests/sdk_reference.py) on the real captures.

Choice for streams the SDK rejects: ``sdk_calls`` never raises for an SDK error; it
returns what the SDK had accumulated when it raised, and ``sdk_run`` exposes the
exception. The captures where that happens are listed in KNOWN_SDK_ERRORS with the
reason, and the test fails if the list drifts either way, so a new oddity is seen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .support.sdk_reference import PROVIDERS, sdk_calls, sdk_decode_baseline, sdk_run

CAPTURES = Path(
    os.environ.get("STREAMCALLS_CAPTURES")
    or Path(__file__).resolve().parents[2] / "shared" / "captures"
)

# file -> (exception class name, why the SDK raises); none of these holds a tool call.
KNOWN_SDK_ERRORS = {
    "openai-chat/pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming__i0.sse": (
        "APIError",
        "`event: error` whose data has an `error` object",
    ),
    "openai-chat/pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming_with_text"
    "__i0.sse": ("APIError", "`event: error` whose data has an `error` object"),
    "openai-chat/pydantic__pydantic-ai__test_openrouter__test_openrouter_stream_error__i0.sse": (
        "APIError",
        "a chunk carrying an `error` object (OpenRouter mid-stream error)",
    ),
    "openai-chat/pydantic__pydantic-ai__test_openrouter__test_openrouter_web_search_annotations"
    "_stream__i0.sse": (
        "RuntimeError",
        "accumulate_delta wants an `index` on every list entry; OpenRouter `annotations` lack it",
    ),
    "openai-responses/pydantic__pydantic-ai__test_openai_responses__test_background_mode"
    "_streaming_starting_after_vcr__i1.sse": (
        "RuntimeError",
        "resumed stream starts with response.queued; ResponseStreamState wants response.created",
    ),
}

pytestmark = pytest.mark.captures


@pytest.fixture(scope="module")
def captures() -> Path:  # the same place conftest looks; kept here so the check stands alone
    if not CAPTURES.is_dir():
        pytest.skip(f"captures not found at {CAPTURES} (set STREAMCALLS_CAPTURES)")
    return CAPTURES


def _read(captures: Path, rel: str) -> bytes:
    path = captures / rel
    if not path.is_file():
        pytest.skip(f"{rel} not in this captures set")
    return path.read_bytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_capture_runs(captures: Path, provider: str) -> None:
    files = sorted((captures / provider).glob("*.sse"))
    assert files, f"no .sse files under {captures / provider}"
    errors = {}
    for path in files:
        rel = f"{provider}/{path.name}"
        result = sdk_run(provider, path.read_bytes())
        if result.error is not None:
            errors[rel] = type(result.error).__name__
        for call in result.calls:
            assert set(call) == {"block", "call_id", "tool", "args"}, rel
            assert isinstance(call["block"], int) and isinstance(call["args"], str), rel
        blocks = [c["block"] for c in result.calls]
        assert blocks == sorted(set(blocks)), f"{rel}: blocks out of order or repeated"
    expected = {
        rel: name
        for rel, (name, _why) in KNOWN_SDK_ERRORS.items()
        if rel.startswith(provider + "/") and (captures / rel).is_file()
    }
    assert errors == expected


def test_anthropic_two_calls(captures: Path) -> None:
    rel = "anthropic-messages/Mirascope__mirascope__e2e__call_with_tools__anthropic__stream__i0.sse"
    calls = sdk_calls("anthropic-messages", _read(captures, rel))
    assert len(calls) == 2
    for call in calls:
        assert call["call_id"].startswith("toolu_")
        assert call["tool"] == "secret_retrieval_tool"
        assert isinstance(json.loads(call["args"]), dict)


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai-chat", "Mirascope__mirascope__e2e__call_with_tools__openai__stream__i0.sse"),
        (
            "openai-responses",
            "Mirascope__mirascope__e2e__call_with_tools__openai_responses__stream__i0.sse",
        ),
    ],
)
def test_openai_two_calls(captures: Path, provider: str, name: str) -> None:
    calls = sdk_calls(provider, _read(captures, f"{provider}/{name}"))
    assert len(calls) == 2
    for call in calls:
        assert call["call_id"].startswith("call_")
        assert isinstance(json.loads(call["args"]), dict)


def test_chat_sdk_concatenates_repeated_id_and_name(captures: Path) -> None:
    # An SDK quirk conformance tests must allow for: accumulate_delta adds up every string,
    # so a provider that repeats `id` and `name` in each chunk gets them doubled.
    rel = "openai-chat/simonw__llm__test_tools_streaming_variant_a__i0.sse"
    [call] = sdk_calls("openai-chat", _read(captures, rel))
    assert (call["call_id"], call["tool"], call["args"]) == ("00", "llm_versionllm_version", "{}")


def test_error_event_keeps_partial_result(captures: Path) -> None:
    rel = "openai-chat/pydantic__pydantic-ai__test_openrouter__test_openrouter_stream_error__i0.sse"
    result = sdk_run("openai-chat", _read(captures, rel))
    assert type(result.error).__name__ == "APIError"
    assert result.calls == []


def test_decode_baseline_counts_events(captures: Path) -> None:
    rel = "anthropic-messages/Mirascope__mirascope__e2e__call_with_tools__anthropic__stream__i0.sse"
    body = _read(captures, rel)
    n_data_lines = sum(line.startswith(b"data:") for line in body.splitlines())
    assert sdk_decode_baseline(body) == n_data_lines


def test_unknown_provider() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        sdk_calls("gemini", b"")
