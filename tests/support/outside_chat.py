"""A Chat Completions client written the way someone outside the kit might: urllib, its own
SSE line splitter, calls in a dict by (choice, index), handed on at ``finish_reason``.

It shares no code with ``clients/``: the torture harness must judge it by what it does. Run
with no argument it is correct; ``python outside_chat.py ASSUMPTION`` changes one decision to
an assumption a real server breaks (the seven of issue #20):

- ``name_joined``: the name appended from every fragment that carries one;
- ``blank_id_is_new``: any fragment carrying an ``id`` key, even ``""``, starts a call;
- ``finish_is_tool_calls``: calls handed on only when ``finish_reason`` is ``"tool_calls"``;
- ``choices_0``: ``choices[0]["delta"]`` read on every chunk;
- ``splitlines``: lines cut with ``str.splitlines()``;
- ``index_is_position``: calls kept in a list, the index taken for a position;
- ``announcement_args_skipped``: arguments read only from fragments after the announcement.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients"))
from loop import each_case  # the harness's loop protocol, for speed

ASSUMPTIONS = ("name_joined", "blank_id_is_new", "finish_is_tool_calls", "choices_0",
               "splitlines", "index_is_position", "announcement_args_skipped")
ASSUME = sys.argv[1] if len(sys.argv) > 1 else None
if ASSUME is not None and ASSUME not in ASSUMPTIONS:
    raise SystemExit(f"unknown assumption {ASSUME!r}")
LINE_END = re.compile(r"\r\n|\r|\n")


def lines(resp):
    """Text lines as SSE ends them (CR, LF, CRLF), decoded incrementally."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    rest = ""
    while True:
        raw = resp.read1(65536)
        text = rest + decoder.decode(raw, final=not raw)
        if ASSUME == "splitlines":
            pieces = text.splitlines(keepends=True)
            rest = pieces.pop() if pieces and pieces[-1] == pieces[-1].rstrip("\r\n") else ""
            yield from (p.rstrip("\r\n") for p in pieces)
        else:
            if raw and text.endswith("\r"):  # maybe half of a CRLF
                text, held = text[:-1], "\r"
            else:
                held = ""
            parts = LINE_END.split(text)
            rest = parts.pop() + held
            yield from parts
        if not raw:
            if rest:
                yield rest
            return


def events(resp):
    """Each event's data (the data lines joined by LF), as the SSE spec dispatches them."""
    data: list[str] = []
    for line in lines(resp):
        if not line:
            if data:
                yield "\n".join(data)
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def main() -> None:
    url = os.environ["STREAMCALLS_BASE_URL"] + os.environ["STREAMCALLS_PATH"]
    request = urllib.request.Request(url, data=b'{"model": "m", "stream": true}',
                                     headers={"Content-Type": "application/json"})
    calls: dict[tuple[int, int], dict] = {}
    listed: list[dict] = []  # index_is_position
    order: list[dict] = []

    def start(key, call_id, name):
        call = {"id": call_id, "name": name or "", "args": "", "choice": key[0], "out": False}
        if ASSUME == "index_is_position":
            listed.append(call)
        calls[key] = call
        order.append(call)
        return call

    with urllib.request.urlopen(request) as resp:
        for data in events(resp):
            if data.strip() == "[DONE]":
                break
            chunk = json.loads(data)
            choices = ([chunk["choices"][0]] if ASSUME == "choices_0"
                       else chunk.get("choices") or [])
            for choice in choices:
                n = choice.get("index", 0)
                delta = choice["delta"] if ASSUME == "choices_0" else choice.get("delta") or {}
                for tc in delta.get("tool_calls") or []:
                    key, fn = (n, tc.get("index", 0)), tc.get("function") or {}
                    new = ("id" in tc) if ASSUME == "blank_id_is_new" else bool(tc.get("id"))
                    call = calls.get(key)
                    announced = new and (call is None or call["id"] != tc["id"])
                    if announced:
                        call = start(key, tc["id"], fn.get("name"))
                    elif ASSUME == "name_joined" and fn.get("name") and call is not None:
                        call["name"] += fn["name"]
                    elif fn.get("name") and call is not None and not call["name"]:
                        call["name"] = fn["name"]  # a name sent after the id is the call's
                    if ASSUME == "index_is_position":
                        call = listed[key[1]]
                    if announced and ASSUME == "announcement_args_skipped":
                        continue
                    call["args"] += fn.get("arguments") or ""
                reason = choice.get("finish_reason")
                if reason and (ASSUME != "finish_is_tool_calls" or reason == "tool_calls"):
                    for call in order:
                        if call["choice"] == n and not call["out"]:
                            call["out"] = True
                            print(json.dumps({"call_id": call["id"], "tool": call["name"],
                                              "args": call["args"]}, ensure_ascii=False),
                                  flush=True)


if __name__ == "__main__":
    each_case(main)
