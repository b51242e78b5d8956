"""sseclient-py over httpx's byte stream, any of the three formats, with the
straightforward accumulator."""

import os

import httpx
import sseclient
from accumulator import Accumulator
from loop import each_case


def main() -> None:
    acc = Accumulator(os.environ["STREAMCALLS_FORMAT"])
    url = os.environ["STREAMCALLS_BASE_URL"] + os.environ["STREAMCALLS_PATH"]
    with httpx.Client(timeout=30) as client, client.stream("POST", url,
                                                           json={"stream": True}) as response:
        for event in sseclient.SSEClient(response.iter_bytes()).events():
            acc.event(event.data)
    acc.end()


if __name__ == "__main__":
    each_case(main)
