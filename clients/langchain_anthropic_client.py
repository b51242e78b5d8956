"""LangChain's ChatAnthropic (langchain-anthropic): chunks added up with `+`, the finished
message's `tool_calls` (parsed args) printed."""

import os

from accumulator import emit_added_up
from langchain_anthropic import ChatAnthropic
from loop import each_case


def main() -> None:
    llm = ChatAnthropic(model="torture", base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
    emit_added_up(llm.stream("go"))


if __name__ == "__main__":
    each_case(main)
