"""gemini-live: Live API sessions as JSON lines, checked against google-genai's own live client."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path
from typing import Any

import orjson
import pytest

from streamcalls_lab import CaptureError, calls, load
from streamcalls_lab.importers import import_file, streams

ws_server = pytest.importorskip("websockets.asyncio.server")
trustme = pytest.importorskip("trustme")

ARGS = '{"city": "Montr\\u00e9al \\"Q\\"", "days": [1, 2]}'
SESSION: list[dict[str, Any]] = [
    {"setupComplete": {}},
    {"serverContent": {"modelTurn": {"parts": [{"text": "Looking "}]}}},
    {"serverContent": {"outputTranscription": {"text": "it up"}}},
    {"toolCall": {"functionCalls": [
        {"id": "fc_1", "name": "weather", "args": json.loads(ARGS)},
        {"id": "fc_2", "name": "clock", "args": {}}]}},
    {"toolCallCancellation": {"ids": ["fc_2"]}},
    {"serverContent": {"interrupted": True}},
    {"serverContent": {"turnComplete": True},
     "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9}},
]


def _lines(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


async def _session(messages: list[bytes]) -> list[Any]:
    """A loopback Live server sending ``messages`` to google-genai's live client; what the
    SDK parsed of each."""
    genai = pytest.importorskip("google.genai")

    async def handler(ws: Any) -> None:
        await ws.recv()  # the client's setup
        for m in messages:
            await ws.send(m.decode())
        await ws.close()

    ca = trustme.CA()  # the SDK always speaks wss: a test CA it is told to trust
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)
    async with ws_server.serve(handler, "127.0.0.1", 0, ssl=served) as server:
        port = server.sockets[0].getsockname()[1]
        client = genai.Client(api_key="test-key", http_options={
            "base_url": f"https://127.0.0.1:{port}", "async_client_args": {"ssl": trusted}})
        got = []
        async with client.aio.live.connect(model="gemini-live-test", config={}) as session:
            try:
                while True:
                    async for message in session.receive():
                        got.append(message)
            except Exception:  # the server closed: the session is over
                pass
        return got


def test_the_reader_sees_the_calls_google_genai_parses(tmp_path: Path) -> None:
    sent = [orjson.dumps(m) for m in SESSION[1:]]
    sent[2] = sent[2].replace(orjson.dumps(json.loads(ARGS)), ARGS.encode())  # as written
    parsed = asyncio.run(_session(sent))
    sdk = [(fc.id, fc.name, fc.args) for m in parsed if m.tool_call
           for fc in m.tool_call.function_calls]
    capture = tmp_path / "live.ndjson"
    capture.write_bytes(b"".join(s + b"\n" for s in sent))
    df = load(capture)
    assert set(df["provider"].astype(str)) == {"gemini-live"}
    got = calls(df)
    assert [(c.call_id, c.tool, json.loads(c.args)) for c in got.itertuples()] == sdk
    assert got["args"].iloc[0] == ARGS  # the object exactly as it stood in the message
    cancelled = df[df["reason"] == "cancelled"]
    assert cancelled[["call_id", "block"]].values.tolist() == [["fc_2", 1]]
    assert df[df.kind == "turn_stop"]["reason"].tolist() == ["interrupted", "turnComplete"]
    said = "".join(df[df.kind == "text_delta"]["fragment"])
    assert said == "Looking it up"


def test_a_wrapped_log_reads_server_messages_and_leaves_client_ones_other() -> None:
    wrapped = [{"source": "client", "time": 0.0, "message": {"setup": {"model": "m"}}}]
    wrapped += [{"source": "server", "time": 0.1 * i, "message": m}
                for i, m in enumerate(SESSION)]
    df = load(_lines(wrapped))
    assert df["event"].iloc[0] == "setup" and df["kind"].iloc[0] == "other"
    assert calls(df)["tool"].tolist() == ["weather", "clock"]


def test_a_gemini_rest_stream_is_not_read_as_live() -> None:
    rest = {"candidates": [{"content": {"parts": [{"functionCall": {"name": "x", "args": {}}}]}}],
            "usageMetadata": {"promptTokenCount": 1}}
    assert "gemini-live" not in set(load(_lines([rest]), strict=False)["provider"].astype(str))


def test_a_session_log_with_direction_and_length_imports_as_json_lines(tmp_path: Path) -> None:
    log = tmp_path / "session.wslog"
    rows = [b"> " + str(len(b := orjson.dumps({"setup": {}}))).encode() + b" " + b]
    for m in SESSION:
        b = orjson.dumps(m)
        rows.append(b"< " + str(len(b)).encode() + b" " + b)
    log.write_bytes(b"\n".join(rows) + b"\n")
    (path,) = import_file(log, tmp_path / "out")
    df = load(path)
    assert calls(df)["tool"].tolist() == ["weather", "clock"]
    assert "re-serialised" in load(tmp_path / "out").attrs["rebuilt"]["session"]


@pytest.mark.parametrize(("line", "why"), [
    (b"< 999 {\"setupComplete\": {}}", "cut or altered"),
    (b"? 2 {}", "unknown direction mark"),
    (b"< 5 {\"se", "cut or altered"),
    (b"not a log line", "is not '<direction> <length> <message>'"),
])
def test_a_bad_session_log_line_names_its_line_and_byte(tmp_path: Path, line: bytes,
                                                        why: str) -> None:
    good = b'< 2 {}\n'
    log = tmp_path / "s.wslog"
    log.write_bytes(good + line + b"\n")
    with pytest.raises(CaptureError, match=rf"byte {len(good)}: line 2.*{why}|"
                                           rf"byte {len(good)}: line 2 {why}"):
        list(streams(log))
