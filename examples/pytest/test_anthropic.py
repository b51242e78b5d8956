"""The real anthropic SDK against chunk-exact replays: plain iteration over the raw events,
and the ``messages.stream`` helper (parsed ``input`` at each block's stop)."""

from __future__ import annotations

import json

import pytest
from anthropic import Anthropic

ASK = {"model": "claude-example", "max_tokens": 1024,
       "messages": [{"role": "user", "content": "What is the weather in Zürich?"}]}


def client(cassette) -> Anthropic:
    return Anthropic(base_url=cassette.base_url, api_key="sk-ant-example", max_retries=0)


@pytest.mark.streamcalls_recut
def test_messages_iteration(streamcalls_cassette, streamcalls_variant, judge):
    """``messages.create(stream=True)``: a tool_use block's ``input`` at its start (when a
    server sends it there) and its ``partial_json`` joined, handed on at its
    ``content_block_stop``."""
    blocks: dict[int, dict] = {}
    calls, text, error = [], [], None
    try:
        for event in client(streamcalls_cassette).messages.create(**ASK, stream=True):
            if event.type == "content_block_start" and event.content_block.type == "tool_use":
                given = event.content_block.input  # arguments sent whole with the start
                blocks[event.index] = {"call_id": event.content_block.id,
                                       "tool": event.content_block.name,
                                       "args": json.dumps(given, ensure_ascii=False)
                                       if given else ""}
            elif event.type == "content_block_delta":
                if event.delta.type == "text_delta":
                    text.append(event.delta.text)
                elif event.delta.type == "input_json_delta":
                    blocks[event.index]["args"] += event.delta.partial_json
            elif event.type == "content_block_stop" and event.index in blocks:
                calls.append(blocks.pop(event.index))
    except Exception as e:
        error = e
    judge("anthropic-iteration", calls, "".join(text), error=error)


@pytest.mark.streamcalls_recut
def test_messages_stream_helper(streamcalls_cassette, streamcalls_variant, judge):
    """``messages.stream``: each tool_use block's parsed ``input`` at its stop (compared by
    value: the helper shows only parsed arguments)."""
    calls, text, error = [], [], None
    try:
        with client(streamcalls_cassette).messages.stream(**ASK) as stream:
            for event in stream:
                if event.type == "text":
                    text.append(event.text)
                elif event.type == "content_block_stop" and \
                        event.content_block.type == "tool_use":
                    block = event.content_block
                    calls.append({"call_id": block.id, "tool": block.name,
                                  "args": block.input})
    except Exception as e:
        error = e
    judge("anthropic-stream-helper", calls, "".join(text), parsed=True, error=error)
