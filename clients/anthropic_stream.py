"""anthropic SDK, the `messages.stream` helper: each tool_use block's `content_block_stop`
carries the helper's parsed `input` (the raw JSON is not exposed, so `input` is printed)."""

import os

from accumulator import emit
from anthropic import Anthropic
from loop import each_case


def main() -> None:
    client = Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
    with client.messages.stream(model="torture", max_tokens=1024,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        for event in stream:
            if event.type == "content_block_stop" and event.content_block.type == "tool_use":
                block = event.content_block
                emit(block.id, block.name, input=block.input)


if __name__ == "__main__":
    each_case(main)
