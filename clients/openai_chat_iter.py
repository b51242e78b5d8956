"""openai SDK, Chat Completions, plain iteration over `create(stream=True)` chunks, with the
straightforward accumulator."""

import os

from accumulator import Accumulator
from openai import OpenAI

client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
acc = Accumulator("openai-chat")
for chunk in client.chat.completions.create(
        model="torture", messages=[{"role": "user", "content": "go"}], stream=True):
    acc.payload(chunk.to_dict())
acc.end()
