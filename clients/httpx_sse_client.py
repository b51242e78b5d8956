"""httpx-sse over httpx, any of the three formats, with the straightforward accumulator."""

import os

import httpx
from accumulator import Accumulator
from httpx_sse import connect_sse
from loop import each_case


def main() -> None:
    acc = Accumulator(os.environ["STREAMCALLS_FORMAT"])
    url = os.environ["STREAMCALLS_BASE_URL"] + os.environ["STREAMCALLS_PATH"]
    with httpx.Client(timeout=30) as client, connect_sse(client, "POST", url,
                                                         json={"stream": True}) as source:
        for sse in source.iter_sse():
            acc.event(sse.data)
    acc.end()


if __name__ == "__main__":
    each_case(main)
