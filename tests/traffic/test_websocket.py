"""proxy: WebSocket sessions (OpenAI Realtime, Gemini Live) recorded through the proxy with the
real SDK clients against loopback servers, and upstreams that misbehave on purpose; every saved
byte checked, every written file grepped for the credentials in each place they can go."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import ssl
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import trustme

from streamcalls_lab import CaptureError, calls, load, provenance, timing
from streamcalls_lab.traffic.proxy import Exchange, RecordingProxy
from streamcalls_lab.traffic.websocket import accept_for
from streamcalls_lab.turns import Call, Script, Text, write

from ..conftest import REPO
from ..support.raw_upstream import raw_upstream, read_head

websockets_sync = pytest.importorskip("websockets.sync.server")
ws_async = pytest.importorskip("websockets.asyncio.server")
ws_client = pytest.importorskip("websockets.sync.client")

OPENAI_KEY = "sk-wstest-9d3e5f7a1c2b4d6e"  # fake, unique enough to grep for
GOOGLE_KEY = "AIzaWsTest-7b2c4e6f8a0d"
TIMEOUT = 20


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _assert_never_written(root: Path, *secrets: str) -> None:
    """No file under ``root`` holds a secret, raw or base64 (any alignment of it)."""
    for path in _files(root):
        data = path.read_bytes()
        for secret in secrets:
            raw = secret.encode()
            forms = [raw] + [base64.b64encode(b"\0" * k + raw)[4 if k else 0:-4]
                             for k in range(3)]
            for form in forms:
                assert form not in data, f"{secret} written to {path.name}"


def _capture(root: Path) -> Path:
    found = [p for p in _files(root) if p.suffix == ".ndjson"]
    assert len(found) == 1, [p.name for p in _files(root)]
    return found[0]


def _lines(capture: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in capture.read_bytes().splitlines()]


@contextlib.contextmanager
def _proxy(upstream: str, out: Path, **kw: Any) -> Iterator[RecordingProxy]:
    with RecordingProxy(upstream, out, timeout=TIMEOUT, **kw) as proxy:
        yield proxy


# -- OpenAI Realtime: openai-python's realtime client --------------------------------------
REALTIME_TURN = Script((Text(("Let me ", "check.")),
                        Call("get_weather", "call_1",
                             ('{"city": "Mont', 'réal \\"Q\\"', '", "days": [1, 2]}'))))


def _realtime_events() -> list[str]:
    """The server events of one turn, each as it is sent (the event_id first, as the API)."""
    return [json.dumps(f.payload["event"], ensure_ascii=False)
            for f in write("openai-realtime", REALTIME_TURN)]


def test_openai_realtime_through_the_proxy(tmp_path: Path) -> None:
    import openai

    sent = _realtime_events()
    seen: dict[str, Any] = {}

    def handler(ws: Any) -> None:
        seen["headers"] = dict(ws.request.headers.raw_items())
        seen["path"] = ws.request.path
        ws.send(sent[0])  # session.created, at once
        seen["client"] = json.loads(ws.recv())  # response.create
        for e in sent[1:]:
            ws.send(e)
        with contextlib.suppress(Exception):
            ws.recv()  # until the client closes

    out = tmp_path / "out"
    with websockets_sync.serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        with _proxy(f"ws://127.0.0.1:{port}/v1", out) as proxy:
            client = openai.OpenAI(api_key=OPENAI_KEY,
                                   websocket_base_url=proxy.base_url.replace("http", "ws"))
            with warnings.catch_warnings():  # (the SDK's own use of websockets)
                warnings.simplefilter("ignore", DeprecationWarning)
                with client.realtime.connect(model="gpt-realtime") as connection:
                    got = [next(iter(connection))]
                    connection.response.create()
                    for event in connection:
                        got.append(event)
                        if event.type == "response.done":
                            break
        server.shutdown()
    assert [e.type for e in got] == [json.loads(s)["type"] for s in sent]
    # the handshake went up as the client made it, less its compression offer
    assert seen["path"] == "/v1/realtime?model=gpt-realtime"
    assert seen["headers"]["Authorization"] == f"Bearer {OPENAI_KEY}"
    assert "Sec-WebSocket-Extensions" not in seen["headers"]
    capture = _capture(out)
    lines = _lines(capture)
    assert [(x["source"], x["message"]["type"]) for x in lines] == [
        ("server", "session.created"), ("client", "response.create"),
        *[("server", json.loads(s)["type"]) for s in sent[1:]]]
    data = capture.read_bytes()
    for s in sent:  # each event exactly as the server wrote it
        assert b'"message":' + s.encode() + b"}\n" in data
    df = load(capture)
    assert set(df["provider"].astype(str)) == {"openai-realtime"}
    got_calls = calls(df)
    assert got_calls[["call_id", "tool", "args"]].values.tolist() == [
        ["call_1", "get_weather", REALTIME_TURN.calls[0].args]]
    assert [c.arguments for e in got if e.type == "response.function_call_arguments.done"
            for c in [e]] == [REALTIME_TURN.calls[0].args]
    assert df[df.kind == "args_delta"]["fragment"].tolist() == list(
        REALTIME_TURN.calls[0].fragments)
    reads = timing.read(capture)
    assert reads is not None and len(reads) == len(lines)
    assert sum(n for _, n in reads) == len(data)
    assert df["t"].notna().all() and df["t"].is_monotonic_increasing
    meta = provenance.read(capture)
    assert meta is not None and meta["status"] == 101 and "cut_off" not in meta
    assert meta["model"] == "gpt-realtime"  # the model the query names
    assert meta["websocket"]["messages"] == {"server": len(sent), "client": 1}
    assert meta["websocket"]["close"]["client"][0] == 1000
    assert meta["request_to_first_byte"] >= 0
    _assert_never_written(out, OPENAI_KEY)


# -- Gemini Live: google-genai's live client, wss both ways --------------------------------
LIVE_ARGS = '{"city": "Montr\\u00e9al \\"Q\\"", "days": [1, 2]}'
LIVE = [
    b'{"setupComplete": {}}',
    b'{"serverContent": {"modelTurn": {"parts": [{"text": "Looking "}]}}}',
    b'{"toolCall": {"functionCalls": [{"id": "fc_1", "name": "weather", "args": '
    + LIVE_ARGS.encode() + b'}]}}',
    b'{"serverContent": {"turnComplete": true}}',
]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def _tls(ca: trustme.CA) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)
    return served, trusted


def test_gemini_live_through_the_proxy(tmp_path: Path, ca: trustme.CA) -> None:
    genai = pytest.importorskip("google.genai")
    served, trusted = _tls(ca)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    out = tmp_path / "out"
    seen: dict[str, Any] = {}

    async def handler(ws: Any) -> None:
        seen["setup"] = await ws.recv()
        seen["path"] = ws.request.path
        seen["headers"] = dict(ws.request.headers.raw_items())
        for n, m in enumerate(LIVE):  # the Live API sends binary frames; text ones too
            await ws.send(m if n % 2 else m.decode())
        await ws.close()

    async def session(base_url: str) -> list[Any]:
        client = genai.Client(api_key=GOOGLE_KEY, http_options={
            "base_url": base_url, "async_client_args": {"ssl": trusted}})
        got = []
        async with client.aio.live.connect(model="gemini-live-test", config={}) as s:
            with contextlib.suppress(Exception):  # the server closed: the session is over
                while True:
                    async for message in s.receive():
                        got.append(message)
        return got

    async def run() -> list[Any]:
        async with ws_async.serve(handler, "127.0.0.1", 0, ssl=served) as server:
            port = server.sockets[0].getsockname()[1]
            with _proxy(f"wss://127.0.0.1:{port}", out, ca_bundle=bundle,
                        tls=served) as proxy:
                assert proxy.base_url.startswith("https://")
                return await session(proxy.base_url)

    got = asyncio.run(run())
    sdk = [(fc.id, fc.name, fc.args) for m in got if m.tool_call
           for fc in m.tool_call.function_calls]
    assert sdk == [("fc_1", "weather", json.loads(LIVE_ARGS))]
    assert "BidiGenerateContent" in seen["path"]
    capture = _capture(out)
    lines = _lines(capture)
    assert [x["source"] for x in lines] == ["client"] + ["server"] * len(LIVE)
    assert lines[0]["message"] == json.loads(seen["setup"])
    for m in LIVE:
        assert b'"message":' + m + b"}\n" in capture.read_bytes()
    df = load(capture)
    assert set(df["provider"].astype(str)) == {"gemini-live"}
    got_calls = calls(df)
    assert got_calls[["call_id", "tool"]].values.tolist() == [["fc_1", "weather"]]
    assert got_calls["args"].iloc[0] == LIVE_ARGS  # byte-exact, as the server wrote it
    assert timing.read(capture) is not None and df["t"].notna().all()
    _assert_never_written(out, GOOGLE_KEY)


# -- a raw upstream: frames made by hand ----------------------------------------------------
def frame(payload: bytes, opcode: int = 1, fin: bool = True, mask: bytes | None = None,
          length: int | None = None) -> bytes:
    """One RFC 6455 frame (``length``: the length to declare, if not the payload's)."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | opcode])
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + n.to_bytes(2)
    else:
        head += bytes([bit | 127]) + n.to_bytes(8)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head += mask
    return head + payload


def _key_of(head: bytes) -> str:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"sec-websocket-key":
            return value.strip().decode()
    raise AssertionError("no key")


def _accepting(key: str, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept_for(key).encode() + b"\r\n" + extra + b"\r\n")


def _drain(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while conn.recv(65536):
            pass


def _handshake(proxy: RecordingProxy, target: str = "/ws",
               request_headers: bytes = b"") -> socket.socket:
    """A raw client's connection to ``proxy``, its upgrade request sent (its own headers
    added)."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                 f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                 "Sec-WebSocket-Version: 13\r\n".encode() + request_headers + b"\r\n")
    return sock


def _raw_session(proxy: RecordingProxy, request_headers: bytes = b"",
                 target: str = "/v1/realtime", send: bytes = b"",
                 until: bytes | None = None) -> tuple[bytes, bytes]:
    """A client's handshake (its own headers added) and ``send`` after it; the answer's head
    and everything after it until the proxy closes (or ``until`` has come)."""
    with _handshake(proxy, target, request_headers) as sock:
        head = read_head(sock)
        sock.sendall(send)
        rest = b""
        with contextlib.suppress(OSError):
            while (until is None or until not in head + rest) and (got := sock.recv(65536)):
                rest += got
    head, _, after = head.partition(b"\r\n\r\n")
    return head, after + rest


MASK = b"\x01\x02\x03\x04"
CLIENT_CLOSE = frame((1000).to_bytes(2), opcode=8, mask=MASK)


def _serving(frames: bytes, *, wait_close: bool = True) -> Callable[[socket.socket, bytes], None]:
    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_accepting(_key_of(head)) + frames)
        if wait_close:
            _drain(conn)

    return script


def _through(out: Path, upstream: bytes | Callable[[socket.socket, bytes], None], *,
             send: bytes = b"", headers: bytes = b"", target: str = "/v1/realtime",
             until: bytes | None = None, **kw: Any) -> tuple[bytes, bytes, RecordingProxy]:
    """One raw session through a proxy to a raw upstream (``upstream``: the frames it sends
    after accepting, then it closes; or its script): the answer's head, what came after it,
    and the proxy."""
    script = _serving(upstream, wait_close=False) if isinstance(upstream, bytes) else upstream
    with raw_upstream(script) as up, _proxy(up, out, **kw) as p:
        head, after = _raw_session(p, headers, target, send, until)
    return head, after, p


def test_fragments_and_interleaved_controls_make_one_message_each_relayed_unchanged(
        tmp_path: Path) -> None:
    call = (b'{"type":"response.function_call_arguments.delta","event_id":"e1","item_id":"i1",'
            b'"output_index":0,"call_id":"c1","delta":"{\\"a\\": \\"\xc3\xa9\\"}"}')
    pieces = [call[:7], call[7:40], call[40:]]
    wire = (frame(pieces[0], opcode=1, fin=False) + frame(b"hi", opcode=9)
            + frame(pieces[1], opcode=0, fin=False) + frame(pieces[2], opcode=0)
            + frame((1000).to_bytes(2) + b"bye", opcode=8))
    out = tmp_path / "out"
    head, after, _ = _through(out, wire, send=CLIENT_CLOSE)
    assert head.startswith(b"HTTP/1.1 101")
    assert after == wire  # byte for byte, as the upstream framed it
    capture = _capture(out)
    assert capture.read_bytes().count(b"\n") == 1
    assert b'"message":' + call + b"}\n" in capture.read_bytes()
    assert calls(load(capture))["args"].tolist() == ['{"a": "é"}']
    meta = provenance.read(capture)
    assert meta is not None and "cut_off" not in meta
    assert meta["websocket"]["close"]["server"] == [1000, "bye"]
    assert meta["websocket"]["control_frames"]["server"] == 2


def test_an_upstream_closing_mid_message_marks_the_capture_cut_off(tmp_path: Path) -> None:
    whole = b'{"type":"session.created","event_id":"e0","session":{}}'
    wire = frame(whole) + frame(b'{"type":"response.output_text.delta","ev', fin=False)
    out = tmp_path / "out"
    _, after, proxy = _through(out, wire)
    assert after == wire
    capture = _capture(out)
    assert len(_lines(capture)) == 1  # the whole message kept, the cut one not passed off
    meta = provenance.read(capture)
    assert meta is not None and "inside a message" in meta["cut_off"]
    with pytest.raises(CaptureError, match=r"cut|broke"):
        load(capture)
    assert proxy.exchanges[-1].cut_off == meta["cut_off"]


def test_an_oversized_frame_is_never_held_and_is_a_problem_row(tmp_path: Path) -> None:
    big = b'{"type":"x","event_id":"e","pad":"' + b"a" * 5000 + b'"}'
    after_it = b'{"type":"session.created","event_id":"e1","session":{}}'
    wire = frame(big, opcode=2) + frame(after_it)
    out = tmp_path / "out"
    _through(out, wire + frame(b"", opcode=8), send=CLIENT_CLOSE, max_message=1000)
    capture = _capture(out)
    lines = _lines(capture)
    assert "problem" in lines[0] and "5,0" in lines[0]["problem"]
    assert lines[0]["bytes"] == len(big) and b"aaaa" not in capture.read_bytes()
    assert lines[1]["message"]["type"] == "session.created"
    df = load(capture, strict=False)
    assert df["problem"].notna().sum() == 1
    with pytest.raises(CaptureError) as err:
        load(capture)
    assert err.value.offset == 0
    meta = provenance.read(capture)
    assert meta is not None and meta["websocket"]["problems"][0]["line"] == 1


def test_a_huge_declared_frame_cut_off_is_never_buffered(tmp_path: Path) -> None:
    wire = frame(b'{"pad":"' + b"b" * 70000, length=1 << 40)  # declares a terabyte
    out = tmp_path / "out"
    _, after, _ = _through(out, wire, max_message=4096)
    assert after == wire
    capture = _capture(out)
    assert capture.read_bytes() == b""
    meta = provenance.read(capture)
    assert meta is not None and "inside a message (70,008 bytes" in meta["cut_off"]


@pytest.mark.parametrize(("payload", "opcode", "why"), [
    (b'{"type":"x","event_id":"\xff"}', 1, "not UTF-8"),
    (b'{"type":"x","event_id":"\xed\xa0\x80"}', 2, "not UTF-8"),  # a surrogate, binary
    (b'{"type": "x", ', 1, "not JSON"),
    (b"\x00\x01binary", 2, "not JSON"),
])
def test_a_message_that_is_not_utf8_json_is_an_honest_problem_line(
        tmp_path: Path, payload: bytes, opcode: int, why: str) -> None:
    out = tmp_path / "out"
    _, after, _ = _through(out, frame(payload, opcode) + frame(b"", opcode=8),
                           send=CLIENT_CLOSE)
    assert after.startswith(frame(payload, opcode))  # relayed all the same: the client judges
    capture = _capture(out)
    (only,) = _lines(capture)
    assert why in only["problem"] and only["bytes"] == len(payload)
    assert load(capture, strict=False)["problem"].notna().all()


@pytest.mark.parametrize("first", [b'{"setupComplete": {}}',
                                   b'{"type":"session.created","event_id":"e0","session":{}}'],
                         ids=["gemini-live", "openai-realtime"])
def test_a_problem_line_inside_a_session_is_a_problem_not_a_message(
        tmp_path: Path, first: bytes) -> None:
    """Once a reader has the session, a message the proxy could not keep is still reported
    (a reader would otherwise take the line for one of its own it does not know)."""
    out = tmp_path / "out"
    _through(out, frame(first) + frame(b"\xff\xfe", 1) + frame(b"", opcode=8),
             send=CLIENT_CLOSE)
    capture = _capture(out)
    df = load(capture, strict=False)
    problems = df["problem"].dropna().tolist()
    assert len(problems) == 1 and "not UTF-8" in problems[0], df
    with pytest.raises(CaptureError, match="not UTF-8") as err:
        load(capture)
    assert err.value.offset == capture.read_bytes().index(b"\n") + 1


def test_a_pretty_printed_message_stays_one_line(tmp_path: Path) -> None:
    message = b'{\n  "setupComplete": {}\r\n}'
    out = tmp_path / "out"
    _through(out, frame(message) + frame(b"", opcode=8), send=CLIENT_CLOSE)
    capture = _capture(out)
    assert _lines(capture)[0]["message"] == {"setupComplete": {}}
    meta = provenance.read(capture)
    assert meta is not None and meta["websocket"]["line_breaks_made_spaces"] == 1


@pytest.mark.parametrize("bad", [
    bytes([0x83, 0x00]),  # a reserved opcode
    bytes([0xC1]) + frame(b"\xaa\x56\xca\x4d")[1:],  # RSV1: compressed, never negotiated
    bytes([0x09, 0x00]),  # a ping that is not final: control frames are never fragmented
    bytes([0x81, 0x7E, 0x00, 0x05]) + b"short",  # a length in 2 bytes that fits in 1
], ids=["reserved opcode", "compressed", "fragmented ping", "overlong length"])
def test_a_protocol_error_stops_parsing_and_is_said(tmp_path: Path, bad: bytes) -> None:
    wire = frame(b'{"setupComplete": {}}') + bad + frame(b'{"setupComplete": {}}')
    out = tmp_path / "out"
    _, after, _ = _through(out, wire)
    assert after == wire  # relayed all the same: the client judges
    capture = _capture(out)
    assert len(_lines(capture)) == 1  # nothing after it is read as a message
    meta = provenance.read(capture)
    assert meta is not None and "breaks RFC 6455" in meta["cut_off"]
    with pytest.raises(CaptureError, match="RFC 6455"):
        load(capture)


def test_an_unmasked_client_frame_is_a_protocol_error_on_the_client_side(
        tmp_path: Path) -> None:
    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_accepting(_key_of(head)))
        conn.recv(4096)  # the client's frame, relayed as it came: the server judges it

    out = tmp_path / "out"
    _through(out, script, send=frame(b'{"setup": {}}'))  # unmasked: not a client's
    meta = provenance.read(_capture(out))
    assert meta is not None and "client frame breaks RFC 6455" in meta["cut_off"]


def test_a_refusal_is_relayed_as_the_http_answer_it_is(tmp_path: Path) -> None:
    body = b'{"error": {"message": "bad key"}}'

    def refuse(conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))

    out = tmp_path / "out"
    head, after, _ = _through(out, refuse, until=body)
    assert head.startswith(b"HTTP/1.1 401") and after.startswith(body)
    assert not [p for p in _files(out) if p.suffix == ".ndjson"]


def test_a_101_without_the_accept_is_relayed_and_no_session_kept(tmp_path: Path) -> None:
    def bogus(conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n"
                     + frame(b'{"setupComplete": {}}'))

    logged: list[Exchange] = []
    out = tmp_path / "out"
    head, _, _ = _through(out, bogus, log=logged.append)
    assert head.startswith(b"HTTP/1.1 101") and b"Sec-WebSocket-Accept: AAAA" in head
    assert not _files(out)
    assert "Sec-WebSocket-Accept" in (logged[-1].note or "")


def test_credentials_in_every_place_never_reach_the_disk(tmp_path: Path) -> None:
    key = "sk-wsplaces-4f6a8c0e2b"
    offered: dict[str, bytes] = {}

    def script(conn: socket.socket, head: bytes) -> None:
        offered["head"] = head
        echo = b'{"type":"error","event_id":"e9","error":{"message":"' + \
            key.encode()[:6] + b'"}}'  # a part of no credential: kept
        conn.sendall(_accepting(_key_of(head), b"Sec-WebSocket-Protocol: realtime\r\n")
                     + frame(echo) + frame(b"", opcode=8))

    out = tmp_path / "out"
    headers = (f"Authorization: Bearer {key}-a\r\nx-goog-api-key: {key}-b\r\n"
               f"Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.{key}-c, "
               "openai-beta.realtime-v1\r\n"
               "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
    head, _, _ = _through(out, script, send=CLIENT_CLOSE, headers=headers.encode(),
                          target=f"/v1/realtime?key={key}-d&model=m")
    assert head.startswith(b"HTTP/1.1 101")
    up_head = offered["head"]
    for part in (b"-a", b"-b", b"-c", b"-d"):  # each credential went upstream as sent
        assert key.encode() + part in up_head
    assert b"permessage-deflate" not in up_head.lower()
    capture = _capture(out)
    assert len(_lines(capture)) == 1
    _assert_never_written(out, *(key + p for p in ("-a", "-b", "-c", "-d")))
    meta = provenance.read(capture)
    assert meta is not None and meta["websocket"]["extensions_removed"]


def test_a_message_echoing_a_credential_keeps_no_capture(tmp_path: Path) -> None:
    key = "sk-wsecho-1a3c5e7b9d"

    def script(conn: socket.socket, head: bytes) -> None:
        echo = b'{"type":"error","event_id":"e","error":{"message":"' + \
            base64.b64encode(key.encode()) + b'"}}'
        conn.sendall(_accepting(_key_of(head)) + frame(echo) + frame(b"", opcode=8))

    out = tmp_path / "out"
    _, _, proxy = _through(out, script, send=CLIENT_CLOSE,
                           headers=f"Authorization: Bearer {key}\r\n".encode())
    assert not [p for p in _files(out) if p.suffix == ".ndjson"]
    _assert_never_written(out, key)
    assert "not saved" in (proxy.exchanges[-1].note or "")


def test_a_stopped_proxy_cuts_an_open_session(tmp_path: Path) -> None:
    hello = b'{"setupComplete": {}}'
    out = tmp_path / "out"
    with raw_upstream(_serving(frame(hello))) as up:
        proxy = RecordingProxy(up, out, timeout=TIMEOUT).start()
        with _handshake(proxy) as sock:
            got = b""
            while hello not in got:
                got += sock.recv(4096)
            proxy.close()
    meta = provenance.read(_capture(out))
    assert meta is not None and meta["cut_off"] == "the proxy was stopped"


def test_the_proxy_verb_listens_with_tls_for_a_wss_client(tmp_path: Path,
                                                          ca: trustme.CA) -> None:
    import subprocess
    import sys


    cert = ca.issue_cert("127.0.0.1")
    pem = tmp_path / "proxy.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
    _, trusted = _tls(ca)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    bad = subprocess.run([sys.executable, "-m", "streamcalls_lab", "proxy", "--upstream",
                          "http://127.0.0.1:9", "--out", str(tmp_path / "x"), "--tls-cert",
                          str(tmp_path / "missing.pem")], capture_output=True, env=env,
                         timeout=60)
    assert bad.returncode == 2 and b"--tls-cert" in bad.stderr
    out = tmp_path / "out"
    hello = b'{"setupComplete": {}}'
    with raw_upstream(_serving(frame(hello) + frame(b"", opcode=8), wait_close=False)) as up:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamcalls_lab", "proxy", "--upstream",
             up.replace("http", "ws"), "--out", str(out), "--tls-cert", str(pem)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        try:
            assert proc.stdout is not None
            base = proc.stdout.readline().decode().split()[1]
            assert base.startswith("https://")
            url = base.replace("https://", "wss://") + "/ws"
            with ws_client.connect(url, ssl=trusted, open_timeout=TIMEOUT) as ws:
                assert ws.recv() == hello.decode()
            logged = ""
            while "101" not in logged:
                logged = proc.stdout.readline().decode()
            assert "GET /ws -> 101" in logged and ".ndjson" in logged
        finally:
            proc.terminate()
            proc.wait(TIMEOUT)
    assert _lines(_capture(out))[0]["message"] == {"setupComplete": {}}


@pytest.mark.parametrize(("closing", "cut"), [(True, False), (False, True)],
                         ids=["after its Close frame", "with no Close frame"])
def test_an_upstream_reset_cuts_only_a_session_it_had_not_closed(
        tmp_path: Path, closing: bool, cut: bool) -> None:
    import struct

    hello = b'{"setupComplete": {}}'

    def reset(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_accepting(_key_of(head)) + frame(hello)
                     + (frame((1000).to_bytes(2), opcode=8) if closing else b""))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    _through(tmp_path, reset)
    meta = provenance.read(_capture(tmp_path))
    assert meta is not None and ("cut_off" in meta) is cut
    if cut:
        assert meta["cut_off"] == "upstream: ConnectionResetError"


@pytest.mark.parametrize(("goodbye", "cut"), [(CLIENT_CLOSE, None),
                                              (b"", "the client closed the connection")],
                         ids=["after its Close frame", "with no Close frame"])
def test_a_client_that_leaves_ends_the_session_cut_only_without_a_close(
        tmp_path: Path, goodbye: bytes, cut: str | None) -> None:
    import time

    hello = b'{"setupComplete": {}}'
    with raw_upstream(_serving(frame(hello))) as up, _proxy(up, tmp_path) as proxy:
        with _handshake(proxy) as sock:
            got = b""
            while hello not in got:
                got += sock.recv(4096)
            sock.sendall(goodbye)
        deadline = time.monotonic() + TIMEOUT
        while not proxy.exchanges:  # the upstream silent: the proxy ends it for the client
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert proxy.exchanges[-1].cut_off == cut
    meta = provenance.read(_capture(tmp_path))
    assert meta is not None
    assert meta["websocket"]["close"]["client"] == ([1000, ""] if goodbye else None)


def test_a_tls_listening_proxy_records_an_http_stream_and_shrugs_off_plain_http(
        tmp_path: Path, ca: trustme.CA, capfd: pytest.CaptureFixture[str]) -> None:
    import http.client

    body = b'data: {"type":"message_stop"}\n\n'

    def sse(conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))

    served, trusted = _tls(ca)
    with raw_upstream(sse) as up, _proxy(up, tmp_path, tls=served) as proxy:
        plain = socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT)
        with plain:  # no TLS: the handshake fails, the connection closes, no traceback
            plain.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert plain.recv(4096)[:1] != b"H"
        conn = http.client.HTTPSConnection("127.0.0.1", proxy.port, context=trusted,
                                           timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=b"{}")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == body
        conn.close()
    (capture,) = tmp_path.glob("*.sse")
    assert capture.read_bytes() == body
    assert "Traceback" not in capfd.readouterr().err


def test_messages_are_the_same_however_the_bytes_are_cut() -> None:
    """A session's frames, masked or not, fragmented with controls between, read in any cut
    of reads, give the same messages (the parser keeps its place across reads)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from streamcalls_lab.traffic.websocket import Messages

    texts = [b'{"a": "\xc3\xa9"}', b"", b'{"toolCall": {}}' * 20, b"x" * 300]

    def wire(mask: bytes | None) -> bytes:
        out = b""
        for n, t in enumerate(texts):
            parts = [t[:n], t[n:]] if n else [t]
            for i, part in enumerate(parts):
                out += frame(part, opcode=0 if i else 1 + (n == 3),
                             fin=i == len(parts) - 1, mask=mask)
                out += frame(b"p", opcode=9, mask=mask) if i == 0 else b""
        return out

    @settings(max_examples=60, deadline=None)
    @given(cuts=st.lists(st.integers(0, 2000), max_size=12), masked=st.booleans())
    def check(cuts: list[int], masked: bool) -> None:
        data = wire(MASK if masked else None)
        reader = Messages("client" if masked else "server", masked=masked)
        got = []
        at = 0
        for cut in sorted({min(c, len(data)) for c in cuts} | {len(data)}):
            got += reader.feed(data[at:cut])
            at = cut
        assert [m.data for m in got] == texts
        assert [m.binary for m in got] == [False, False, False, True]
        assert reader.unfinished() is None and reader.controls == 4

    check()


def test_a_server_that_only_listens_longer_than_the_timeout_is_no_idle_session(
        tmp_path: Path) -> None:
    """A client streaming (audio, say) to a silent server: the session lives while either
    side speaks; the timeout ends one where neither does."""
    import time

    def listen(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_accepting(_key_of(head)))
        got = b""
        while CLIENT_CLOSE not in got and (more := conn.recv(65536)):
            got += more
        conn.sendall(frame((1000).to_bytes(2), opcode=8))

    chunk = frame(b'{"realtimeInput": {"audio": {"data": "AAAA"}}}', mask=MASK)
    with raw_upstream(listen) as up, RecordingProxy(up, tmp_path, timeout=1.0) as proxy, \
            _handshake(proxy) as sock:
        assert read_head(sock).startswith(b"HTTP/1.1 101")
        for _ in range(6):
            sock.sendall(chunk)
            time.sleep(0.4)  # 2.4 s in all: over twice the timeout
        sock.sendall(CLIENT_CLOSE)
        _drain(sock)
    assert proxy.exchanges[-1].cut_off is None
    assert [x["source"] for x in _lines(_capture(tmp_path))] == ["client"] * 6


def test_a_session_where_neither_side_speaks_ends_at_the_timeout(tmp_path: Path) -> None:
    hello = b'{"setupComplete": {}}'
    with raw_upstream(_serving(frame(hello))) as up, \
            RecordingProxy(up, tmp_path, timeout=0.5) as proxy:
        head, after = _raw_session(proxy)  # silent after the handshake, until it is closed
    assert head.startswith(b"HTTP/1.1 101") and after == frame(hello)
    assert proxy.exchanges[-1].cut_off == "neither side sent anything for 0.5 s"
    assert len(_lines(_capture(tmp_path))) == 1


def test_the_capture_keeps_the_order_messages_passed_in(tmp_path: Path) -> None:
    """A server that answers each client message at once: each answer's line comes after
    the message it answers, even when saving the client's side is slow (a clock that takes
    its time on the client's thread)."""
    import time

    def slow_on_the_client_side() -> float:
        if threading.current_thread().name == "proxy-ws-client":
            time.sleep(0.05)
        return time.monotonic()

    def answer(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_accepting(_key_of(head)))
        for n in range(5):
            got = b""
            while len(got) < len(ask(n)):
                got += conn.recv(4096)
            conn.sendall(frame(b'{"serverContent": {"n": %d}}' % n))
        _drain(conn)

    def ask(n: int) -> bytes:
        return frame(b'{"clientContent": {"n": %d}}' % n, mask=MASK)

    with raw_upstream(answer) as up, \
            RecordingProxy(up, tmp_path, clock=slow_on_the_client_side) as proxy, \
            _handshake(proxy) as sock:
        assert read_head(sock).startswith(b"HTTP/1.1 101")
        for n in range(5):
            sock.sendall(ask(n))
            reply = frame(b'{"serverContent": {"n": %d}}' % n)
            got = b""
            while len(got) < len(reply):
                got += sock.recv(4096)
            assert got == reply
        sock.sendall(CLIENT_CLOSE)
    lines = [(x["source"], x["message"]) for x in _lines(_capture(tmp_path))]
    assert lines == [pair for n in range(5) for pair in (
        ("client", {"clientContent": {"n": n}}), ("server", {"serverContent": {"n": n}}))]
