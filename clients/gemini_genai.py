"""google-genai SDK, `models.generate_content_stream`: each chunk's `function_calls` (Gemini
sends each call whole, its `args` parsed), pointed at the harness by
`HttpOptions(base_url=...)`."""

import os

from accumulator import emit
from google import genai
from google.genai import types
from loop import each_case


def main() -> None:
    client = genai.Client(api_key="lab-dummy", http_options=types.HttpOptions(
        base_url=os.environ["STREAMCALLS_BASE_URL"], retry_options=types.HttpRetryOptions(
            attempts=1)))
    for chunk in client.models.generate_content_stream(model="streamcalls-lab",
                                                       contents="go"):
        for call in chunk.function_calls or []:
            emit(call.id, call.name, input=call.args)


if __name__ == "__main__":
    each_case(main)
