"""LangChain's ChatOpenAI (langchain-openai, Chat Completions) against chunk-exact replays:
the chunks added up with ``+`` (the documented way to gather a stream), the finished
message's ``tool_calls`` (parsed arguments) and its text."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI


@pytest.mark.streamcalls_recut
def test_chat_openai(streamcalls_cassette, streamcalls_variant, judge):
    llm = ChatOpenAI(model="gpt-example", base_url=streamcalls_cassette.base_url + "/v1",
                     api_key="sk-example", max_retries=0)
    message, error = None, None
    try:
        for chunk in llm.stream("What is the weather in Zürich?"):
            message = chunk if message is None else message + chunk
    except Exception as e:
        error = e
    calls = [] if message is None else [
        {"call_id": c["id"], "tool": c["name"], "args": c["args"]} for c in message.tool_calls]
    text = "" if message is None or not isinstance(message.content, str) else message.content
    judge("langchain-openai", calls, text, parsed=True, error=error)
