"""Every real capture, assembled by calls(), against the official SDKs' own accumulators.

The reference is independent: the `anthropic` and `openai` SDKs decode the
same bytes with their own SSE decoders and build the calls their own way
(tests/sdk_reference.py). Every call must agree byte for byte.
"""

from __future__ import annotations

import pytest

import streamcalls_lab as scl

from .conftest import capture_files
from .support.sdk_reference import sdk_chat_texts, sdk_run

CAPTURES = capture_files()

# Captures that are not well-formed streams, and the one problem each has.
# Strict loading must refuse them; lenient loading must report exactly this.
KNOWN_PROBLEMS = {
    "anthropics__anthropic-sdk-python__tool_use_response.sse": "stream ends inside a frame",
    "anthropics__anthropic-sdk-python__incomplete_partial_json_response.sse":
        "stream ends inside a frame",
    "simonw__llm__test_tools_streaming_variant_c__i0.sse": "not an SSE field line: ' data:",
}
# The SDK concatenates an id and name repeated in every chunk ("0" + "0");
# the stream itself names the call "0" / "llm_version".
SDK_JOINS_REPEATED_IDS = {"simonw__llm__test_tools_streaming_variant_a__i0.sse"}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@pytest.mark.captures
@pytest.mark.skipif(not CAPTURES, reason="real captures not available")
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name[:70]}")
def test_calls_agree_with_the_sdk(path) -> None:
    body = path.read_bytes()
    expected_problem = KNOWN_PROBLEMS.get(path.name)
    if expected_problem is None:
        deltas = scl.load(body, name=path.stem)
    else:
        with pytest.raises(scl.CaptureError, match=expected_problem):
            scl.load(body, name=path.stem)
        deltas = scl.load(body, name=path.stem, strict=False)
        errors = deltas[deltas.problem.notna() & ~deltas.problem.str.startswith("provider")]
        assert list(errors.problem.str[: len(expected_problem)]) == [expected_problem]
    assert set(deltas.provider.astype(str)) <= {path.parent.name, "unknown"}

    ours = {int(r.block): r for r in scl.calls(deltas).itertuples()}
    reference = sdk_run(path.parent.name, body)
    for call in reference.calls:
        mine = ours.pop(call["block"])
        assert mine.args == call["args"]
        if path.name not in SDK_JOINS_REPEATED_IDS:
            assert (_text(mine.call_id), _text(mine.tool)) == (call["call_id"], call["tool"])
    # What the SDKs leave out are the provider's own server-side tools (Anthropic's, and
    # Responses' mcp_call items, whose arguments the kit reads since issue 10).
    assert all(str(r.call_id).startswith(("srvtoolu_", "mcptoolu_", "mcp_"))
               for r in ours.values())


@pytest.mark.captures
@pytest.mark.skipif(not CAPTURES, reason="real captures not available")
def test_done_events_repeat_the_fragments_exactly() -> None:
    table = scl.calls(scl.load(capture_files("openai-responses")[0].parent))
    checked = table.final_matches.dropna()
    assert len(checked) > 100 and checked.all()


CHAT = capture_files("openai-chat")


@pytest.mark.captures
@pytest.mark.skipif(not CHAT, reason="real captures not available")
def test_each_choice_text_agrees_with_the_sdk() -> None:
    """Chat streams with n > 1 choices interleave them chunk by chunk: the text of each
    choice, keyed by the ``choice`` column, is what the SDK assembles for that choice."""
    compared = several = 0
    for path in CHAT:
        if path.name in KNOWN_PROBLEMS:
            continue
        reference, error = sdk_chat_texts(path.read_bytes())
        if error is not None or not reference:
            continue
        deltas = scl.load(path)
        text = deltas[deltas.kind == "text_delta"]
        ours = {int(k): "".join(g.fragment) for k, g in text.groupby("choice")}
        assert ours == {k: v for k, v in reference.items() if v or k in ours}, path.name
        compared += 1
        several += len(reference) > 1
    assert compared > 200 and several >= 4, (compared, several)
