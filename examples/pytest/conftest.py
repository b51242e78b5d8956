"""The example suite's shared part: which upstream bug each client is known to have, and the
judge every test ends with.

``KNOWN`` lists, per client, the re-cut or producer case it fails and the bug class the kit
names for it, each documented in docs/clients.md from the client's source. A case listed
there must fail under exactly that class (the judge asserts it, so a fixed upstream shows up
as a failing test to update); every other case must pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

KNOWN: dict[str, dict[str, str]] = {
    # openai-python's ChatCompletionStreamState appends every string a chunk sends for a call
    # (openai/lib/streaming/_deltas.py accumulate_delta): a repeated name comes out tripled,
    # and it reads tool_calls[index] as a list position
    "openai-chat-stream-helper": {
        "producer-repeated_identity": "name_concatenated",
        "producer-index_gap": "index_as_position",
        "producer-index_reuse": "merged_calls",
        # a follow-on fragment's "type": null replaces the call's type, and
        # _accumulate_chunk asserts it is "function" (xintaofei/deepseek-acp#4)
        "producer-blank_identity": "blank_identity_copied",
        # "arguments": null comes out of arguments.done as None (pydantic/pydantic-ai#1654)
        "producer-empty_arguments": "null_arguments",
    },
    # langchain-core merge_dicts joins every string but an id; its aggregated message parses
    # a cut call's partial JSON into a valid-looking tool call
    "langchain-openai": {
        "producer-repeated_identity": "name_concatenated",
        "cut-mid-arguments-before-stop": "eof_as_stop",
        "producer-index_reuse": "merged_calls",
    },
    # the anthropic helper sends a reused index's deltas to content[index], the first block
    "anthropic-stream-helper": {"producer-index_reuse": "merged_calls"},
}


@pytest.fixture
def judge(streamcalls_cassette: Any, streamcalls_variant: Any) -> Callable[..., None]:
    """``judge(client, calls, prose, parsed=False)``: the calls and text the client under
    test handed on, checked against the replayed case (nothing to check while recording)."""
    from streamcalls_lab.pytest_plugin import StreamcallsFailure, assert_calls

    def check(client: str, calls: Iterable[Any], prose: str, *, parsed: bool = False,
              error: BaseException | None = None) -> None:
        if streamcalls_cassette.recording:
            return
        known = KNOWN.get(client, {}).get(streamcalls_variant.id)
        if known is None:
            assert_calls(list(calls), streamcalls_variant, parsed=parsed, error=error)
            assert prose == streamcalls_variant.prose
            return
        with pytest.raises(StreamcallsFailure) as failure:
            assert_calls(list(calls), streamcalls_variant, parsed=parsed, error=error)
        assert known in failure.value.classes, str(failure.value)

    return check
