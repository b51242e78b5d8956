"""One long line: does reading it cost time in proportion to its length, in every reader?

    python benchmarks/bench_long_lines.py            # 16 MB then 32 MB (about a minute)
    python benchmarks/bench_long_lines.py --mb 32    # 32 MB then 64 MB, the audit's sizes

A reader that re-joins what it holds on every read is quadratic in a long line (the audit
found NDJSON at 3.1 s for 32 MB, 12.3 s for 64 MB, 56 s for 128 MB). For each reader, one
capture whose bulk is a single line (an SSE data line, an NDJSON line, a JSON array's
element, an event-stream payload, a JSON-lines log's line, a client's output line) is read
at ``--mb`` megabytes and at twice that, in one run, and the ratio of the two times is
shown: about 2 is linear, about 4 quadratic. Times are CPU time (``time.process_time``, the
machine may be shared), the best of ``--repeat`` interleaved rounds. Every capture is read
as ``load()`` reads bytes: 64 KB at a time, through the framing and the decoder.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from _timing import best  # the same CPU-time measure, best of rounds

from streamcalls_lab import load
from streamcalls_lab.framing.eventstream import MAX_PAYLOAD, event_message
from streamcalls_lab.importers.jsonl import rebuild
from streamcalls_lab.torture.run import Run

MB = 1_000_000


def _text(n: int) -> str:
    return "x" * n


def sse(n: int) -> bytes:
    payload = {"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": _text(n)}}
    start = {"type": "message_start", "message": {"id": "m", "role": "assistant",
                                                  "content": [], "model": "c"}}
    return (f"event: message_start\ndata: {json.dumps(start)}\n\nevent: content_block_delta\n"
            f"data: {json.dumps(payload)}\n\n").encode()


def ndjson(n: int) -> bytes:
    line = {"model": "m", "created_at": "t", "done": False,
            "message": {"role": "assistant", "content": _text(n)}}
    return json.dumps(line).encode() + b"\n"


def jsonarray(n: int) -> bytes:
    element = {"candidates": [{"content": {"parts": [{"text": _text(n)}], "role": "model"},
                               "index": 0}]}
    return b"[" + json.dumps(element).encode() + b"]"


def eventstream(n: int) -> bytes:
    delta = {"contentBlockIndex": 0, "delta": {"text": _text(min(n, MAX_PAYLOAD - 100))}}
    return (event_message("messageStart", '{"role":"assistant"}')
            + event_message("contentBlockDelta", json.dumps(delta)))


def jsonl(n: int) -> bytes:
    return json.dumps({"type": "content_block_delta", "text": _text(n)}).encode() + b"\n"


def client_line(n: int) -> str:
    return json.dumps({"tool": "f", "id": "c", "arguments": json.dumps({"a": _text(n)})})


def _judged(line: str) -> None:
    Run(0).read(line)


READERS: dict[str, tuple[Callable[[int], object], Callable[[object], object]]] = {
    "SSE data line (load)": (sse, load),
    "NDJSON line (load)": (ndjson, load),
    "JSON array element (load)": (jsonarray, load),
    "event-stream payload (load)": (eventstream, load),
    "JSON-lines log line (import)": (jsonl, rebuild),
    "client output line (torture judge)": (client_line, _judged),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=16, help="the smaller line's size")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small = int(args.mb * MB)
    print(f"time to read one line of {args.mb:g} MB and of {2 * args.mb:g} MB (CPU s, best of "
          f"{args.repeat}); ratio ~2 linear, ~4 quadratic")
    for name, (make, read) in READERS.items():
        cap = min(small, MAX_PAYLOAD // 2 - 100) if "event-stream" in name else small
        one, two = make(cap), make(2 * cap)
        t1 = best(lambda one=one, read=read: read(one), args.repeat)
        t2 = best(lambda two=two, read=read: read(two), args.repeat)
        note = f" (payloads of {cap / MB:.0f} and {2 * cap / MB:.0f} MB: the format's limit)" \
            if cap != small else ""
        print(f"  {name:36} {t1:6.2f} s {t2:6.2f} s  ratio {t2 / t1:4.1f}{note}")


if __name__ == "__main__":
    main()
