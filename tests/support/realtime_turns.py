"""OpenAI Realtime test turns: server events as lines, and the documented weather turn."""

from __future__ import annotations

import json

SESSION = {"type": "session.created", "event_id": "event_1",
           "session": {"type": "realtime", "object": "realtime.session"}}


def lines(*events: dict, wrap: bool = False, source: str = "server") -> bytes:
    """One event a line, bare (as ``recv()`` gives it) or with its receive time."""
    out = []
    for n, e in enumerate(events):
        row = {"time": f"2026-01-01T00:00:0{n % 10}.000Z", "source": source, "event": e} \
            if wrap else e
        out.append(json.dumps(row, separators=(",", ":")) + "\n")
    return "".join(out).encode()


def ev(kind: str, n: int, **fields: object) -> dict:
    return {"type": kind, "event_id": f"event_{n}", **fields}


def added(n: int, item: dict, index: int = 0, response: str = "resp_1") -> dict:
    return ev("response.output_item.added", n, response_id=response, output_index=index,
              item=item)


def fn(item: str = "item_1", call_id: str = "call_1", name: str = "get_weather",
       arguments: str = "", status: str = "in_progress") -> dict:
    return {"id": item, "object": "realtime.item", "type": "function_call", "status": status,
            "name": name, "call_id": call_id, "arguments": arguments}


def delta(n: int, piece: str, item: str = "item_1", call_id: str = "call_1") -> dict:
    return ev("response.function_call_arguments.delta", n, response_id="resp_1",
              item_id=item, output_index=0, call_id=call_id, delta=piece)


def done(n: int, status: str = "completed", **more: object) -> dict:
    return ev("response.done", n, response={"object": "realtime.response", "id": "resp_1",
                                           "status": status, "output": [], **more})


WEATHER = (
    SESSION,
    ev("response.created", 2, response={"object": "realtime.response", "id": "resp_1",
                                        "status": "in_progress", "output": []}),
    added(3, fn()),
    delta(4, '{"city":'), delta(5, '"Paris"}'),
    ev("response.function_call_arguments.done", 6, response_id="resp_1", item_id="item_1",
       output_index=0, call_id="call_1", name="get_weather", arguments='{"city":"Paris"}'),
    ev("response.output_item.done", 7, response_id="resp_1", output_index=0,
       item=fn(arguments='{"city":"Paris"}', status="completed")),
    done(8),
)
