"""LangChain's ChatAnthropic (langchain-anthropic): chunks added up with `+`, the finished
message's `tool_calls` (parsed args) printed."""

import os

from accumulator import emit
from langchain_anthropic import ChatAnthropic

llm = ChatAnthropic(model="torture", base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
message = None
for chunk in llm.stream("go"):
    message = chunk if message is None else message + chunk
for call in (message.tool_calls if message is not None else []):
    emit(call["id"], call["name"], input=call["args"])
