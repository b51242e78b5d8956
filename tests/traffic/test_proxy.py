"""proxy: the official SDKs through the recording proxy to `serve` (plain and TLS), and an
upstream that misbehaves on purpose; every saved byte checked, every written file grepped."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import math
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trustme

from streamcalls_lab import calls, load, provenance, timing
from streamcalls_lab.generate import generate
from streamcalls_lab.traffic import proxy as proxy_module
from streamcalls_lab.traffic.proxy import RecordingProxy, model_of, stream_suffix
from streamcalls_lab.traffic.serve import SSEServer
from streamcalls_lab.traffic.server import LoopbackServer

from ..conftest import REPO
from ..support.eventstream_turns import event
from ..support.raw_upstream import Script, _head, _post, raw_upstream
from ..support.stream_handler import StreamHandler

if TYPE_CHECKING:
    import openai

ANTHROPIC_KEY = "sk-ant-proxytest-5e1f0c9a7b3d"  # fake, unique enough to grep for
OPENAI_KEY = "sk-proxytest-8c2d4e6f0a1b"
QUERY_KEY = "AIzaProxyTest-3f9b1d7c"
KEYS = (ANTHROPIC_KEY, OPENAI_KEY, QUERY_KEY)
TIMEOUT = 20  # seconds: no request here comes near it
USER = [{"role": "user", "content": "x"}]
CALL = [("lookup", {"city": "Paris", "note": "caf\u00e9 \"quoted\""})]
FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")


def _written(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _assert_no_key_on_disk(root: Path) -> None:
    for path in _written(root):
        data = path.read_bytes()
        for key in KEYS:
            assert key.encode() not in data, f"{key} written to {path.name}"


def _captures(root: Path, suffix: str = ".sse") -> list[Path]:
    return [p for p in _written(root) if p.suffix == suffix
            and not p.name.endswith((provenance.SUFFIX, provenance.REQUEST_SUFFIX))]


def _meta(capture: Path) -> dict[str, Any]:
    meta = provenance.read(capture)
    assert meta is not None
    return meta


# -- upstreams ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@contextlib.contextmanager
def tls_serve(body: bytes, ca: trustme.CA) -> Iterator[SSEServer]:
    """`serve` behind TLS with a certificate for 127.0.0.1 from the test CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    server = SSEServer(body, speed=math.inf)
    server._httpd.socket = context.wrap_socket(server._httpd.socket, server_side=True,
                                               do_handshake_on_connect=False)
    with server:
        yield server


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


CHUNKED_STREAM = _head("200 OK", "text/event-stream", "transfer-encoding: chunked")
"""An upstream's head for a streamed answer sent in chunks."""


# -- the official SDKs ------------------------------------------------------------------------
def _anthropic(base_url: str) -> list[tuple[str, str]]:
    import anthropic

    client = anthropic.Anthropic(api_key=ANTHROPIC_KEY, base_url=base_url, max_retries=0,
                                 timeout=TIMEOUT)
    with client, client.messages.stream(model="claude-test", max_tokens=1,
                                        messages=USER) as stream:
        message = stream.get_final_message()
    return [(b.name, json.dumps(b.input)) for b in message.content if b.type == "tool_use"]


def _openai(base_url: str) -> openai.OpenAI:
    import openai

    return openai.OpenAI(api_key=OPENAI_KEY, base_url=base_url + "/v1", max_retries=0,
                         timeout=TIMEOUT)


def _chat(base_url: str) -> list[tuple[str, str]]:
    with (client := _openai(base_url)), client.chat.completions.stream(
        model="gpt-test", messages=USER
    ) as stream:
        message = stream.get_final_completion().choices[0].message
    return [(tc.function.name, json.dumps(json.loads(tc.function.arguments)))
            for tc in message.tool_calls or []]


def _responses(base_url: str) -> list[tuple[str, str]]:
    with (client := _openai(base_url)), client.responses.stream(model="gpt-test",
                                                               input="x") as stream:
        for _ in stream:
            pass
        items = stream._state._output_items  # the items the SDK grew from the events
    return [(item.name, json.dumps(json.loads(item.arguments)))
            for _, item in sorted(items.items()) if item.type == "function_call"]


SDKS = {"anthropic-messages": _anthropic, "openai-chat": _chat, "openai-responses": _responses}
MODELS = {"anthropic-messages": "claude-test", "openai-chat": "gpt-test",
          "openai-responses": "gpt-test"}


def _through_proxy(fmt: str, upstream: str, out: Path, **options: Any) -> list[tuple[str, str]]:
    with RecordingProxy(upstream, out, **options) as proxy, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic chatter about unknown fields
        return SDKS[fmt](proxy.base_url)


def _check_saved(out: Path, body: bytes, fmt: str) -> None:
    (capture,) = _captures(out)
    assert capture.read_bytes() == body
    reads = timing.read(capture)
    assert reads is not None and sum(n for _, n in reads) == len(body)
    meta = _meta(capture)
    assert (meta["method"], meta["status"], meta["model"]) == ("POST", 200, MODELS[fmt])
    assert meta["response_headers"]["content-type"] == "text/event-stream"
    assert "cut_off" not in meta
    _assert_no_key_on_disk(out)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_sdk_stream_through_the_proxy_is_saved_byte_exact(fmt: str, tmp_path: Path) -> None:
    turn = generate(CALL, provider=fmt, before="Let me look.", seed=fmt)
    with SSEServer(turn.body, speed=math.inf) as upstream:
        got = _through_proxy(fmt, upstream.base_url, tmp_path)
    assert got == [("lookup", json.dumps(CALL[0][1]))]
    _check_saved(tmp_path, turn.body, fmt)


def test_the_proxy_folder_loads_like_the_stream_itself(tmp_path: Path) -> None:
    turn = generate(CALL, provider="openai-chat", seed=2)
    with SSEServer(turn.body, speed=math.inf) as upstream:
        _through_proxy("openai-chat", upstream.base_url, tmp_path, save_all=True)
    ours = load(tmp_path).drop(columns=["turn", "t"])
    assert ours.equals(load(turn.body).drop(columns=["turn", "t"]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_sdk_stream_to_a_tls_upstream_is_saved_byte_exact(
    fmt: str, tmp_path: Path, ca: trustme.CA
) -> None:
    turn = generate(CALL, provider=fmt, seed=fmt)
    with ca.cert_pem.tempfile() as bundle, tls_serve(turn.body, ca) as upstream:
        got = _through_proxy(fmt, f"https://127.0.0.1:{upstream.port}", tmp_path / "out",
                             ca_bundle=bundle)
    assert got == [("lookup", json.dumps(CALL[0][1]))]
    _check_saved(tmp_path / "out", turn.body, fmt)


def test_the_ca_bundle_can_come_from_the_environment(
    tmp_path: Path, ca: trustme.CA, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = generate(CALL, seed=1)
    with ca.cert_pem.tempfile() as bundle, tls_serve(turn.body, ca) as upstream:
        monkeypatch.setenv("STREAMCALLS_CA_BUNDLE", bundle)
        _through_proxy("anthropic-messages", f"https://127.0.0.1:{upstream.port}", tmp_path)
    assert _captures(tmp_path)[0].read_bytes() == turn.body


def test_an_upstream_certificate_no_trusted_ca_signed_is_refused(
    tmp_path: Path, ca: trustme.CA
) -> None:
    import anthropic

    with tls_serve(generate(CALL).body, ca) as upstream, RecordingProxy(
        f"https://127.0.0.1:{upstream.port}", tmp_path
    ) as proxy, pytest.raises(anthropic.APIConnectionError):
        _anthropic(proxy.base_url)
    assert list(upstream.requests) == []
    assert "SSLCertVerificationError" in (proxy.exchanges[0].note or "")
    assert _written(tmp_path) == []


# -- unchanged both ways -----------------------------------------------------------------------
def test_the_upstream_receives_the_request_exactly_as_the_client_sent_it(tmp_path: Path) -> None:
    headers = {"x-api-key": ANTHROPIC_KEY, "anthropic-beta": "a,b", "x-custom": "  kept  "}
    body = b'{"model": "m", "stream": true, "messages": []}'
    path = "/v1/messages?beta=true&x=%20y"
    with SSEServer(generate(CALL).body, speed=math.inf) as upstream:
        _post(upstream.base_url, path, body, headers).read()
        with RecordingProxy(upstream.base_url, tmp_path) as proxy:
            _post(proxy.base_url, path, body, headers).read()
    direct, proxied = upstream.requests
    assert (proxied.method, proxied.path, proxied.body) == (direct.method, direct.path, body)
    assert proxied.headers == direct.headers  # the key's fingerprint included
    assert proxied.headers["x-api-key"] == provenance.fingerprint(ANTHROPIC_KEY)


def test_a_chunked_request_body_goes_upstream_whole(tmp_path: Path) -> None:
    with SSEServer(generate(CALL).body, speed=math.inf) as upstream, RecordingProxy(
        upstream.base_url, tmp_path
    ) as proxy:
        host, port = proxy.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=iter([b'{"model": ', b'"m"}']),
                     encode_chunked=True, headers={"transfer-encoding": "chunked"})
        conn.getresponse().read()
    (seen,) = upstream.requests
    assert seen.body == b'{"model": "m"}'
    assert "transfer-encoding" not in seen.headers


def test_an_upstream_path_prefix_goes_before_every_request_path(tmp_path: Path) -> None:
    with SSEServer(generate(CALL).body, speed=math.inf) as upstream, RecordingProxy(
        upstream.base_url + "/openai/v1/", tmp_path
    ) as proxy:
        _post(proxy.base_url, "/chat/completions?api-version=1").read()
    assert upstream.requests[0].path == "/openai/v1/chat/completions?api-version=1"


def test_the_client_receives_the_upstream_status_headers_and_bytes(tmp_path: Path) -> None:
    body = b'data: {"a": 1}\n\n' * 3

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("201 Made", "text/event-stream; charset=utf-8",
                           "x-request-id: req_1", "set-cookie: a=1", "set-cookie: b=2",
                           f"content-length: {len(body)}") + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        direct, proxied = _post(base), _post(proxy.base_url)
        got = (direct.read(), proxied.read())
    assert (proxied.status, proxied.reason) == (201, "Made")
    assert got == (body, body)
    assert proxied.getheaders() == direct.getheaders()
    assert "set-cookie" not in _meta(_captures(tmp_path)[0])["response_headers"]


# What an agent server sends on to the browser: each under its own response header, if any.
BROWSER_SIDE = {"ai-sdk-ui": ("x-vercel-ai-ui-message-stream: v1",), "ag-ui": ()}


@pytest.mark.parametrize("fmt", list(BROWSER_SIDE))
def test_a_browser_side_stream_is_saved_byte_exact_and_loads_under_its_own_name(
        fmt: str, tmp_path: Path) -> None:
    body = generate(CALL, provider=fmt, before="Let me look.", seed=fmt).body

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", *BROWSER_SIDE[fmt],
                           f"content-length: {len(body)}") + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url, "/api/chat").read() == body
    (saved,) = _captures(tmp_path)
    assert saved.read_bytes() == body and saved.name.endswith("-api-chat.sse")
    events = load(saved)
    assert set(events["provider"]) == {fmt} and events["problem"].isna().all()
    assert calls(events)[["tool", "complete"]].values.tolist() == [["lookup", True]]
    headers = _meta(saved)["response_headers"]
    assert all(h.split(": ")[0] in headers for h in BROWSER_SIDE[fmt])


def test_each_upstream_read_reaches_the_client_before_the_next_is_sent(tmp_path: Path) -> None:
    first, second = b'data: {"n": 1}\n\n', b'data: {"n": 2}\n\n'
    client_has_first = threading.Event()

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(CHUNKED_STREAM)
        conn.sendall(_chunk(first))
        # A proxy that buffered would never let the client see the first read: no second.
        if client_has_first.wait(TIMEOUT):
            conn.sendall(_chunk(second) + _chunk(b""))

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        resp = _post(proxy.base_url)
        assert resp.read1(65536) == first
        client_has_first.set()
        assert resp.read() == second
    assert [n for _, n in timing.read(_captures(tmp_path)[0]) or []] == [len(first), len(second)]


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_stream_reaches_the_client_compressed_and_is_saved_decoded(
    encoding: str, tmp_path: Path
) -> None:
    body = generate(CALL).body
    wire = gzip.compress(body) if encoding == "gzip" else __import__("zlib").compress(body)

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", "transfer-encoding: chunked",
                           f"content-encoding: {encoding}"))
        for at in range(0, len(wire), 100):
            conn.sendall(_chunk(wire[at:at + 100]))
        conn.sendall(_chunk(b""))

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url).read() == wire
    assert _captures(tmp_path)[0].read_bytes() == body


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda wire: wire[:-12], "gzip body ended before its end"),
    (lambda wire: wire[:40] + b"\xff" * 20 + wire[60:], "corrupt gzip body"),
], ids=["unfinished", "corrupt"])
def test_a_damaged_compressed_body_passes_through_and_is_kept_as_far_as_it_decodes(
    damage: Callable[[bytes], bytes], reason: str, tmp_path: Path
) -> None:
    body = generate(CALL).body
    wire = damage(gzip.compress(body))

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", "content-encoding: gzip",
                           f"content-length: {len(wire)}") + wire)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url).read() == wire
    (capture,) = _captures(tmp_path)
    assert body.startswith(capture.read_bytes())
    assert _meta(capture)["cut_off"] == reason


def test_a_body_in_an_encoding_it_cannot_decode_passes_through_unsaved(tmp_path: Path) -> None:
    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", "content-encoding: br",
                           "content-length: 4") + b"\x0b\x01\x80\x03")

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url).read() == b"\x0b\x01\x80\x03"
    assert _captures(tmp_path) == []
    (meta,) = _written(tmp_path)
    assert "'br'" in json.loads(meta.read_text())["not_saved"]


# -- what gets saved, and how it is named ------------------------------------------------------
@pytest.mark.parametrize(("ctype", "suffix"), [
    ("text/event-stream; charset=utf-8", ".sse"),
    ("application/x-ndjson", ".ndjson"),
    ("application/vnd.amazon.eventstream", ".eventstream"),
])
def test_every_streamed_content_type_is_saved_with_its_suffix(
    ctype: str, suffix: str, tmp_path: Path
) -> None:
    body = {".sse": b"data: {}\n\n", ".ndjson": b'{"done": true}\n',
            ".eventstream": event("messageStop", '{"stopReason": "end_turn"}')}[suffix]

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", ctype, f"content-length: {len(body)}") + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        _post(proxy.base_url, "/model/anthropic.claude-x/invoke-with-response-stream").read()
    (capture,) = _captures(tmp_path, suffix)
    assert capture.read_bytes() == body
    assert _meta(capture)["model"] == "anthropic.claude-x"


def test_gemini_streaming_a_json_array_without_alt_sse_is_saved_as_a_json_capture(
    tmp_path: Path,
) -> None:
    body = (b'[{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", '
            b'"args": {"q": 1}}}]}, "index": 0}]}\r\n,\r\n{"candidates": [{"content": '
            b'{"parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}]}]')

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "application/json; charset=UTF-8",
                           f"content-length: {len(body)}") + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        _post(proxy.base_url, "/v1beta/models/gemini-2.5-flash:streamGenerateContent").read()
    (capture,) = _captures(tmp_path, ".json")
    assert capture.read_bytes() == body
    assert list(calls(capture).args) == ['{"q": 1}']


@pytest.mark.parametrize("save_all", [False, True])
def test_a_whole_response_passes_through_and_is_saved_only_with_all(
    save_all: bool, tmp_path: Path
) -> None:
    body = b'{"id": "msg_1", "content": []}'
    with SSEServer(body, content_type="application/json") as upstream, RecordingProxy(
        upstream.base_url, tmp_path, save_all=save_all
    ) as proxy:
        assert _post(proxy.base_url).read() == body
    saved = _captures(tmp_path, ".json")
    assert [p.read_bytes() for p in saved] == ([body] if save_all else [])


def test_names_never_collide_between_proxies_writing_one_folder(tmp_path: Path) -> None:
    with RecordingProxy("http://127.0.0.1:9", tmp_path) as a, RecordingProxy(
        "http://127.0.0.1:9", tmp_path
    ) as b:
        names = [p.new_capture("/v1/messages", ".sse") for _ in range(3) for p in (a, b)]
    assert len(set(names)) == 6


@pytest.mark.parametrize("upstream", ["ftp://example.com", "example.com",
                                      "https://u:p@example.com", "https://example.com/?k=1"])
def test_an_upstream_that_is_not_a_plain_http_url_is_refused(upstream: str,
                                                             tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="upstream"):
        RecordingProxy(upstream, tmp_path)


def test_a_ca_bundle_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="CA bundle"):
        RecordingProxy("https://example.com", tmp_path, ca_bundle=tmp_path / "missing.pem")


def test_the_log_line_names_no_credential(tmp_path: Path) -> None:
    lines: list[str] = []
    with SSEServer(generate(CALL).body, speed=math.inf) as upstream, RecordingProxy(
        upstream.base_url, tmp_path, log=lambda e: lines.append(str(e))
    ) as proxy:
        _post(proxy.base_url, f"/v1/messages?key={QUERY_KEY}",
              headers={"x-api-key": ANTHROPIC_KEY}).read()
    (line,) = lines
    assert line.startswith("POST /v1/messages?key=REDACTED -> 200, ")
    assert ANTHROPIC_KEY not in line


def test_a_request_line_that_cannot_be_forwarded_is_answered_400(tmp_path: Path) -> None:
    with SSEServer(generate(CALL).body, speed=math.inf) as upstream, RecordingProxy(
        upstream.base_url, tmp_path
    ) as proxy, socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT) as sock:
        sock.sendall(b"POST /v1/m\x1b[31m HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 400 ")
    assert list(upstream.requests) == []


def test_the_model_comes_from_the_body_or_the_path() -> None:
    assert model_of("/v1/messages", b'{"model": "claude-x"}') == "claude-x"
    assert model_of("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
                    b"{}") == "gemini-2.5-pro"
    assert model_of("/openai/deployments/gpt4o/chat/completions", b"") == "gpt4o"
    assert model_of("/api/chat", b"not json") is None


def test_streamed_is_decided_by_the_main_content_type() -> None:
    assert stream_suffix("Text/Event-Stream; charset=utf-8") == ".sse"
    assert stream_suffix("application/json") is None
    gemini = "/v1beta/models/m:streamGenerateContent?key=k"
    assert stream_suffix("application/json", gemini) == ".json"
    assert stream_suffix("application/json", "/v1/x?q=:streamGenerateContent") is None
    assert stream_suffix(None) is None


def test_an_ai_sdk_4_data_stream_is_named_by_its_header_not_its_text_plain_type() -> None:
    assert stream_suffix("text/plain; charset=utf-8") is None
    assert stream_suffix("text/plain; charset=utf-8", "/api/chat", "v1") == ".datastream"


def test_an_ai_sdk_4_data_stream_is_saved_and_loads_as_itself(tmp_path: Path) -> None:
    body = (b'f:{"messageId":"msg-1"}\n'
            b'b:{"toolCallId":"call_1","toolName":"weather"}\n'
            b'c:{"toolCallId":"call_1","argsTextDelta":"{\\"city\\":"}\n'
            b'c:{"toolCallId":"call_1","argsTextDelta":"\\"Paris\\"}"}\n'
            b'9:{"toolCallId":"call_1","toolName":"weather","args":{"city":"Paris"}}\n'
            b'e:{"finishReason":"tool-calls","isContinued":false}\n'
            b'd:{"finishReason":"tool-calls"}\n')

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/plain; charset=utf-8",
                           f"content-length: {len(body)}", "x-vercel-ai-data-stream: v1")
                     + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        _post(proxy.base_url, "/api/chat").read()
    (capture,) = _captures(tmp_path, ".datastream")
    assert capture.read_bytes() == body
    found = calls(tmp_path)
    assert found.provider.tolist() == ["ai-sdk-data"] and found.args.tolist() == [
        '{"city":"Paris"}']


# -- many clients, and upstreams that fail -----------------------------------------------------
def test_several_streams_at_once_are_each_saved_whole(tmp_path: Path) -> None:
    n = 4
    together = threading.Barrier(n, timeout=TIMEOUT)
    bodies = [generate(CALL, seed=i).body for i in range(n)]
    order = iter(range(n))
    lock = threading.Lock()

    def script(conn: socket.socket, head: bytes) -> None:
        with lock:
            mine = bodies[next(order)]
        together.wait()  # every request is open at once, or this breaks
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(mine)}"))
        for at in range(0, len(mine), 64):
            conn.sendall(mine[at:at + 64])

    got: list[bytes] = []
    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        threads = [threading.Thread(target=lambda: got.append(_post(proxy.base_url).read()))
                   for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
    assert sorted(got) == sorted(bodies)
    assert sorted(p.read_bytes() for p in _captures(tmp_path)) == sorted(bodies)


def test_an_upstream_that_refuses_leaves_the_client_unanswered(tmp_path: Path) -> None:
    import anthropic

    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    with RecordingProxy(f"http://127.0.0.1:{port}", tmp_path) as proxy, pytest.raises(
        anthropic.APIConnectionError
    ):
        _anthropic(proxy.base_url)
    assert proxy.exchanges[0].status is None
    assert _written(tmp_path) == []


@pytest.mark.parametrize("save_all", [False, True])
def test_an_upstream_error_reaches_the_client_as_sent(save_all: bool, tmp_path: Path) -> None:
    import anthropic

    error = b'{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}'
    with SSEServer(error, status=529, content_type="application/json") as upstream:
        with pytest.raises(anthropic.APIStatusError) as direct:
            _anthropic(upstream.base_url)
        with RecordingProxy(upstream.base_url, tmp_path, save_all=save_all) as proxy, \
                pytest.raises(anthropic.APIStatusError) as proxied:
            _anthropic(proxy.base_url)
    assert type(proxied.value) is type(direct.value)
    assert proxied.value.status_code == 529
    assert proxied.value.response.content == error
    saved = _captures(tmp_path, ".json")
    assert [_meta(p)["status"] for p in saved] == ([529] if save_all else [])


FIRST = b'data: {"type": "message_start"}\n\n'


def _first_chunk_then(event: threading.Event, *, more: bool = False) -> Script:
    """An upstream that sends a stream's first chunk and waits for ``event``; then, with
    ``more``, sends it again and again until the proxy stops reading."""

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(CHUNKED_STREAM + _chunk(FIRST))
        event.wait(TIMEOUT)
        for _ in range(1000 if more else 0):
            conn.sendall(_chunk(FIRST))

    return script


def _first_chunk(proxy: RecordingProxy) -> http.client.HTTPResponse:
    """A request through ``proxy``, its first read already checked to be that first chunk."""
    resp = _post(proxy.base_url)
    assert resp.read1(65536) == FIRST
    return resp


SENT = FIRST + b'data: {"ty'  # the body bytes the upstream sent before it broke off


def _cut_chunked(conn: socket.socket, head: bytes) -> None:
    conn.sendall(CHUNKED_STREAM + _chunk(FIRST) + b"40\r\n" + SENT[len(FIRST):])


def _cut_length(conn: socket.socket, head: bytes) -> None:
    conn.sendall(_head("200 OK", "text/event-stream", "content-length: 999") + SENT)


@pytest.mark.parametrize("script", [_cut_chunked, _cut_length], ids=["chunked", "length"])
def test_a_stream_cut_mid_way_breaks_the_client_and_keeps_the_partial_capture(
    script: Script, tmp_path: Path
) -> None:
    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        with pytest.raises(http.client.IncompleteRead):
            _post(base).read()
        with pytest.raises(http.client.IncompleteRead) as proxied:
            _post(proxy.base_url).read()
    assert proxied.value.partial == SENT  # every byte the upstream sent, then the break
    (capture,) = _captures(tmp_path)
    assert capture.read_bytes() == SENT
    assert "IncompleteRead" in _meta(capture)["cut_off"]


def test_an_sdk_reading_a_cut_stream_fails_and_the_capture_is_marked(tmp_path: Path) -> None:
    turn = generate(CALL, seed=3)
    half = turn.body[: len(turn.body) // 2]

    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(CHUNKED_STREAM + _chunk(half))

    with raw_upstream(script) as base:
        with pytest.raises(Exception) as direct:  # whatever the SDK raises directly
            _anthropic(base)
        with pytest.raises(type(direct.value)):
            _through_proxy("anthropic-messages", base, tmp_path)
    (capture,) = _captures(tmp_path)
    assert capture.read_bytes() == half
    assert _meta(capture)["cut_off"]


def test_a_client_that_leaves_after_the_last_event_leaves_the_capture_whole(
        tmp_path: Path) -> None:
    def script(conn: socket.socket, head: bytes) -> None:  # the last event, then its end late
        conn.sendall(CHUNKED_STREAM + _chunk(FIRST))
        time.sleep(0.2)
        conn.sendall(b"0\r\n\r\n")

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        _first_chunk(proxy).close()  # an SDK that has its [DONE] hangs up at once
        for _ in range(200):
            if proxy.exchanges:
                break
            threading.Event().wait(0.05)
    assert proxy.exchanges[0].cut_off is None
    (capture,) = _captures(tmp_path)
    assert capture.read_bytes() == FIRST and "cut_off" not in _meta(capture)


def test_a_client_that_hangs_up_mid_stream_marks_the_capture_cut_off(tmp_path: Path) -> None:
    hung_up = threading.Event()
    upstream = _first_chunk_then(hung_up, more=True)
    with raw_upstream(upstream) as base, RecordingProxy(base, tmp_path) as proxy:
        _first_chunk(proxy).close()
        hung_up.set()
        for _ in range(200):
            if proxy.exchanges:
                break
            threading.Event().wait(0.05)
    assert proxy.exchanges[0].cut_off == "the client closed the connection"
    assert "client" in _meta(_captures(tmp_path)[0])["cut_off"]


class _KeepAlive(StreamHandler):
    """Answers every request on a connection kept open, noting the peer's address."""

    body = b'data: {"n": 1}\n\n'

    def answer(self) -> None:
        self.server.owner.peers.append(self.client_address)  # type: ignore[attr-defined]
        self.stream(self.body)


def test_an_upstream_connection_carries_one_request_after_another(tmp_path: Path) -> None:
    upstream = LoopbackServer(_KeepAlive, "127.0.0.1", 0)
    upstream.peers = []  # type: ignore[attr-defined]
    with upstream, RecordingProxy(upstream.base_url, tmp_path) as proxy:
        got = [_post(proxy.base_url).read() for _ in range(3)]
    assert got == [_KeepAlive.body] * 3
    assert len(set(upstream.peers)) == 1  # type: ignore[attr-defined]
    assert len(_captures(tmp_path)) == 3


@pytest.mark.parametrize("noticed", [True, False], ids=["seen-idle", "seen-on-send"])
def test_a_kept_connection_the_upstream_closed_is_replaced_unseen(
    noticed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not noticed:  # the close arrives too late for the idle check: the send itself fails
        monkeypatch.setattr(proxy_module, "_quiet", lambda conn: True)
    body = b'data: {"n": 1}\n\n'

    def script(conn: socket.socket, head: bytes) -> None:  # answers, then hangs up silently
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(body)}")
                     + body)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        got = [_post(proxy.base_url).read() for _ in range(3)]
    assert got == [body] * 3
    assert [e.status for e in proxy.exchanges] == [200] * 3


def test_a_stream_that_ends_while_the_proxy_stops_is_whole_not_cut(tmp_path: Path) -> None:
    def script(conn: socket.socket, head: bytes) -> None:  # the last event, then its end late
        conn.sendall(CHUNKED_STREAM + _chunk(FIRST))
        time.sleep(0.3)
        conn.sendall(b"0\r\n\r\n")

    with raw_upstream(script) as base:
        proxy = RecordingProxy(base, tmp_path).start()
        resp = _first_chunk(proxy)  # the client has what it wanted; the proxy is stopped
        proxy.close()
        assert resp.read() == b""  # and the stream's end reached it
    (capture,) = _captures(tmp_path)
    assert capture.read_bytes() == FIRST and "cut_off" not in _meta(capture)


def test_stopping_the_proxy_mid_stream_keeps_the_capture_marked(tmp_path: Path) -> None:
    release = threading.Event()
    with raw_upstream(_first_chunk_then(release)) as base:
        proxy = RecordingProxy(base, tmp_path).start()
        resp = _first_chunk(proxy)
        proxy.close()
        release.set()
        with pytest.raises(http.client.IncompleteRead):
            resp.read()
    (capture,) = _captures(tmp_path)
    assert capture.read_bytes() == FIRST
    assert _meta(capture)["cut_off"] == "the proxy was stopped"


# -- credentials -------------------------------------------------------------------------------
def _echo_run(root: Path, query: str = "", body: bytes = b'{"stream": true}',
              headers: dict[str, str] | None = None) -> Path:
    """Two requests through the proxy to an upstream that echoes :data:`QUERY_KEY` in a header,
    and in the body of ``/v1/echo`` only: no key on disk, the echoed body not saved (a note
    says why), the other saved as sent; the one capture kept."""
    echoed = f'data: {{"error": "bad key {QUERY_KEY}"}}\n\n'.encode()
    safe = b'data: {"ok": true}\n\n'

    def script(conn: socket.socket, head: bytes) -> None:
        body = echoed if b"echo" in head else safe
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(body)}",
                           f"x-echo: {QUERY_KEY}") + body)

    with raw_upstream(script) as base, RecordingProxy(base, root) as proxy:
        assert _post(proxy.base_url, f"/v1/echo{query}", body=body).read() == echoed
        assert _post(proxy.base_url, f"/v1/safe{query}", body=body,
                     headers=headers).read() == safe
    _assert_no_key_on_disk(root)
    (kept,) = _captures(root)
    assert kept.read_bytes() == safe
    notes = [json.loads(p.read_text()).get("not_saved") for p in _written(root)
             if p.name.endswith(".meta.json")]
    assert any(n and "credential" in n for n in notes)
    return kept


def test_a_key_in_the_query_or_echoed_in_the_body_never_reaches_the_disk(tmp_path: Path) -> None:
    kept = _echo_run(tmp_path, f"?key={QUERY_KEY}", headers={"x-goog-api-key": ANTHROPIC_KEY})
    assert "REDACTED" in _meta(kept)["path"]


def test_a_key_sent_in_the_json_request_body_is_a_secret_too(tmp_path: Path) -> None:
    request = json.dumps({"stream": True, "auth": {"api_key": QUERY_KEY}}).encode()
    kept = _echo_run(tmp_path, body=request)
    assert "x-echo" not in _meta(kept)["response_headers"]


# -- the command line --------------------------------------------------------------------------
def test_the_cli_prints_its_address_first_and_proxies(tmp_path: Path) -> None:
    turn = generate(CALL, seed=5)
    with SSEServer(turn.body, speed=math.inf) as upstream:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamcalls_lab", "proxy", "--upstream", upstream.base_url,
             "--out", str(tmp_path)],
            cwd=REPO, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            address = re.search(r"http://127\.0\.0\.1:\d+", first)
            assert address, first
            assert _post(address.group(0)).read() == turn.body
        finally:
            proc.terminate()
            proc.wait(TIMEOUT)
    assert _captures(tmp_path)[0].read_bytes() == turn.body
