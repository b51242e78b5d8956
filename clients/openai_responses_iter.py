"""openai SDK, Responses, plain iteration over `create(stream=True)` events, with the
straightforward accumulator."""

import os

from accumulator import Accumulator
from loop import each_case
from openai import OpenAI


def main() -> None:
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    acc = Accumulator("openai-responses")
    for event in client.responses.create(model="torture", input="go", stream=True):
        acc.payload(event.to_dict())
    acc.end()


if __name__ == "__main__":
    each_case(main)
