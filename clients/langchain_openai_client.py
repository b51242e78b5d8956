"""LangChain's ChatOpenAI (langchain-openai), Chat Completions or Responses by the format:
chunks added up with `+`, the finished message's `tool_calls` (parsed args) printed."""

import os

from accumulator import emit_added_up
from langchain_openai import ChatOpenAI
from loop import each_case


def main() -> None:
    llm = ChatOpenAI(model="torture", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0,
                     use_responses_api=os.environ["STREAMCALLS_FORMAT"] == "openai-responses")
    emit_added_up(llm.stream("go"))


if __name__ == "__main__":
    each_case(main)
