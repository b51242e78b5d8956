"""LangChain's ChatAnthropic (langchain-anthropic): chunks added up with `+`, the finished
message's `tool_calls` (parsed args) printed."""

import os

from accumulator import emit_added_up
from langchain_anthropic import ChatAnthropic

llm = ChatAnthropic(model="torture", base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
emit_added_up(llm.stream("go"))
