"""anthropic SDK, plain iteration over `messages.create(stream=True)` events, with the
straightforward accumulator."""

import os

from accumulator import Accumulator
from anthropic import Anthropic
from loop import each_case


def main() -> None:
    client = Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
    acc = Accumulator("anthropic-messages")
    for event in client.messages.create(model="torture", max_tokens=1024, stream=True,
                                        messages=[{"role": "user", "content": "go"}]):
        acc.payload(event.to_dict())
    acc.end()


if __name__ == "__main__":
    each_case(main)
