"""openai SDK, Chat Completions, plain iteration over `create(stream=True)` chunks, with the
straightforward accumulator."""

import os

from accumulator import Accumulator
from loop import each_case
from openai import OpenAI


def main() -> None:
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    acc = Accumulator("openai-chat")
    for chunk in client.chat.completions.create(
            model="torture", messages=[{"role": "user", "content": "go"}], stream=True):
        acc.payload(chunk.to_dict())
    acc.end()


if __name__ == "__main__":
    each_case(main)
