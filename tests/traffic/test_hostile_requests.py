"""proxy and serve under hostile requests (issue #22): framing that can be read two ways
refused with 400 and a closed connection before anything goes upstream (RFC 9112), the
smuggling it allows shown against a lenient upstream, absurd body sizes refused at once,
large bodies passed through in pieces, deep JSON forwarded, slow clients and crowds let
go, a client that leaves closing its silent upstream."""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streamcalls_lab.traffic import proxy as proxy_module
from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.serve import SSEServer

from ..support import turns
from ..support.raw_upstream import listening, read_head
from ..support.upstreams import Upstream

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"q"', ': "x"}'])])
TIMEOUT = 20


def _raw(port: int, request: bytes) -> bytes:
    """Send ``request`` and read until the server closes the connection (a server that
    kept it open would fail this with a timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(request)
        out = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                out += chunk
        return out


def _answers(data: bytes) -> list[bytes]:
    return re.findall(rb"(?m)^HTTP/1\.1 \d{3} ", data)


HEAD = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
AMBIGUOUS = {  # each is refused by RFC 9112; the answer's status
    "obs-fold, space": (HEAD + b"X-Pad: a\r\n Transfer-Encoding: chunked\r\n"
                        b"Content-Length: 2\r\n\r\n{}", 400),
    "obs-fold, tab": (HEAD + b"X-Pad: a\r\n\tb\r\nContent-Length: 2\r\n\r\n{}", 400),
    "two equal lengths": (HEAD + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400),
    "two lengths": (HEAD + b"Content-Length: 2\r\nContent-Length: 7\r\n\r\n{}", 400),
    "a length list": (HEAD + b"Content-Length: 2, 2\r\n\r\n{}", 400),
    "a signed length": (HEAD + b"Content-Length: +2\r\n\r\n{}", 400),
    "a hex length": (HEAD + b"Content-Length: 0x2\r\n\r\n{}", 400),
    "a negative length": (HEAD + b"Content-Length: -1\r\n\r\n{}", 400),
    "xchunked": (HEAD + b"Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400),
    "gzip alone": (HEAD + b"Transfer-Encoding: gzip\r\n\r\n{}", 400),
    "chunked, gzip": (HEAD + b"Transfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                      400),
    "chunked twice": (HEAD + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"2\r\n{}\r\n0\r\n\r\n", 400),
    "gzip, chunked": (HEAD + b"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                      501),
    "chunked and a length": (HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n"
                             b"2\r\n{}\r\n0\r\n\r\n", 400),
    "chunked in HTTP/1.0": (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"2\r\n{}\r\n0\r\n\r\n", 400),
    "a chunk size that is not hex": (HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n"
                                     b"0\r\n\r\n", 400),
    "a chunk size ending in LF": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\n{}\r\n"
                                  b"0\r\n\r\n", 400),
    "a chunk size with a space before it": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n 2\r\n"
                                            b"{}\r\n0\r\n\r\n", 400),
    "a chunk without its CRLF": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX"
                                 b"0\r\n\r\n", 400),
    "a bare CR in a header": (HEAD + b"X-Pad: a\rTransfer-Encoding: chunked\r\n"
                              b"Content-Length: 2\r\n\r\n{}", 400),
    "a bare LF line end": (HEAD + b"X-Pad: a\nContent-Length: 2\r\n\r\n{}", 400),
    "a NUL in a header": (HEAD + b"X-Pad: a\0b\r\nContent-Length: 2\r\n\r\n{}", 400),
    "a space before the colon": (HEAD + b"Content-Length : 2\r\n\r\n{}", 400),
    "a bare CR in the request line": (b"POST /v1\r/x HTTP/1.1\r\nHost: x\r\n"
                                      b"Content-Length: 2\r\n\r\n{}", 400),
    "a body of 10^11 bytes": (HEAD + b"Content-Length: 100000000000\r\n\r\n{}", 413),
    "a chunk of 2^48 bytes": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n1000000000000\r\n{}",
                              413),
    "a chunk size of 17 digits": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
                                  b"10000000000000000\r\n{}", 400),
    # past int()'s 4,300 digits: was a ValueError, a traceback and no answer
    "a length of 5000 digits": (HEAD + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}",
                                413),
    "a NUL in a chunk extension": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n2;a\0b\r\n"
                                   b"{}\r\n0\r\n\r\n", 400),
    "a tab in the request line": (b"POST\t/v1 HTTP/1.1\r\nHost: x\r\n"
                                  b"Content-Length: 2\r\n\r\n{}", 400),
    # put after the upstream's address: 'http://127.0.0.1:80@evil/x', or no URL at all
    "a target with no leading slash": (b"GET @evil.example/x HTTP/1.1\r\nHost: x\r\n\r\n",
                                       400),
    "an asterisk target": (b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "two hosts": (HEAD + b"Host: y\r\nContent-Length: 2\r\n\r\n{}", 400),
}


@pytest.mark.parametrize("name", sorted(AMBIGUOUS))
def test_the_proxy_refuses_ambiguous_framing_before_anything_goes_upstream(
    name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str],
) -> None:
    request, status = AMBIGUOUS[name]
    with Upstream() as upstream, RecordingProxy(upstream.base, tmp_path) as proxy:
        answer = _raw(proxy.port, request)
    assert answer.startswith(b"HTTP/1.1 %d " % status)
    assert len(_answers(answer)) == 1  # nothing after the refusal: the connection closed
    assert upstream.seen == []
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("name", sorted(AMBIGUOUS))
def test_serve_refuses_ambiguous_framing_and_closes(
    name: str, capfd: pytest.CaptureFixture[str],
) -> None:
    request, status = AMBIGUOUS[name]
    with SSEServer(BODY, speed=math.inf) as server:
        answer = _raw(server.port, request)
        assert list(server.requests) == []
    assert answer.startswith(b"HTTP/1.1 %d " % (413 if status == 413 else status))
    assert len(_answers(answer)) == 1
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("fold", [b" ", b"\t"], ids=["space", "tab"])
def test_a_request_smuggled_by_obs_fold_never_reaches_the_next_client(
    fold: bytes, tmp_path: Path,
) -> None:
    """Client A hides a Transfer-Encoding in a folded line and a second request in its body;
    an upstream that unfolds leniently would answer it on the pooled connection, to B."""
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b"0\r\n\r\n" + smuggled
    a = (b"POST /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: a\r\n" + fold
         + b"Transfer-Encoding: chunked"
         b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    with (Upstream(wait_for_more=True) as upstream,
          RecordingProxy(upstream.base, tmp_path) as proxy):
        a_answer = _raw(proxy.port, a)
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)
        conn.request("POST", "/b", body=b"{}", headers={"authorization": "Bearer sk-b-secret"})
        b_answer = conn.getresponse().read()
        conn.close()
    assert b_answer == b"answer to /b"  # not the answer to A's smuggled request
    assert a_answer.startswith(b"HTTP/1.1 400 ")
    assert [path for path, _, _ in upstream.seen] == [b"/b"]


def test_a_request_with_sound_framing_goes_upstream_framed_by_the_proxy(
    tmp_path: Path,
) -> None:
    with Upstream() as upstream, RecordingProxy(upstream.base, tmp_path) as proxy:
        answer = _raw(proxy.port, HEAD + b"Transfer-Encoding: chunked\r\nConnection: close\r\n"
                      b"\r\n2;ext=1\r\n{}\r\n0\r\nx-trailer: 1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"answer to /v1/messages")
    ((_, headers, body),) = upstream.seen
    assert body == b"{}" and headers[b"content-length"] == b"2"
    assert b"transfer-encoding" not in headers


@pytest.mark.parametrize("head", [
    b"Content-Length: 3\r\nContent-Length: 3\r\n",
    b"Transfer-Encoding: xchunked\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n",
    b"X-Pad: a\r\n b\r\nContent-Length: 3\r\n",
], ids=["two lengths", "xchunked", "chunked and a length", "obs-fold"])
def test_an_upstream_answer_framed_ambiguously_is_502_and_its_connection_dropped(
    head: bytes, tmp_path: Path,
) -> None:
    def script(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" + head
                     + b"\r\nabc")

    with _scripted(script) as (base, peers), RecordingProxy(base, tmp_path) as proxy:
        first = _raw(proxy.port, HEAD + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        _raw(proxy.port, HEAD + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 502 ")
    assert len(peers) == 2  # the second request on a new connection


@contextlib.contextmanager
def _scripted(script: Callable[[socket.socket, bytes], None],
              ) -> Iterator[tuple[str, list[object]]]:
    """An upstream that reads a head, runs ``script(conn, what it read)``, and keeps the
    connection open."""

    def one(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            while b"\r\n\r\n" in (data := read_head(conn)):  # until it closes
                script(conn, data)

    with listening(one) as upstream:
        yield upstream


# -- request bodies ---------------------------------------------------------------------------
@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_a_large_body_goes_upstream_in_pieces_before_the_client_has_sent_it_all(
    chunked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proxy_module, "HELD", 4096)
    half = b"x" * 40_000
    got: list[bytes] = []
    upstream_has_some = threading.Event()

    def script(conn: socket.socket, data: bytes) -> None:
        while len(data) < 8192:
            data += conn.recv(65536)
        upstream_has_some.set()  # while the client still holds back its second half
        while not data.endswith(b"\r\n0\r\n\r\n" if chunked else b"y" * 100):
            data += conn.recv(65536)
        got.append(data)
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")

    frame = (b"Transfer-Encoding: chunked\r\n" if chunked else
             b"Content-Length: %d\r\n" % (2 * len(half)))
    with (_scripted(script) as (base, _), RecordingProxy(base, tmp_path) as proxy,
          socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT) as sock):
        def piece(data: bytes) -> bytes:
            return b"%x\r\n%s\r\n" % (len(data), data) if chunked else data

        sock.sendall(HEAD + frame + b"\r\n" + piece(half))
        assert upstream_has_some.wait(TIMEOUT), "the proxy held the body instead of passing it"
        sock.sendall(piece(b"y" * len(half)) + (b"0\r\n\r\n" if chunked else b""))
        answer = b""
        while not answer.endswith(b"ok") and (more := sock.recv(65536)):
            answer += more
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
    head, _, body = got[0].partition(b"\r\n\r\n")
    if chunked:
        assert b"transfer-encoding: chunked" in head.lower()
        body = b"".join(re.findall(rb"[0-9a-f]+\r\n([xy]+)\r\n", body))
    else:
        assert b"content-length: 80000" in head.lower()
    assert body == half + b"y" * len(half)


def test_a_body_over_max_body_is_413_at_once(tmp_path: Path) -> None:
    with Upstream() as upstream, RecordingProxy(upstream.base, tmp_path,
                                                max_body=1000) as proxy:
        answer = _raw(proxy.port, HEAD + b"Content-Length: 1001\r\n\r\n")
        chunks = _raw(proxy.port, HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
                      b"3e8\r\n" + b"x" * 1000 + b"\r\n1\r\n")
    assert answer.startswith(b"HTTP/1.1 413 ") and chunks.startswith(b"HTTP/1.1 413 ")
    assert upstream.seen == []


def test_a_key_late_in_a_body_passed_in_pieces_is_a_secret_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proxy_module, "HELD", 1024)
    key = "sk-late-in-the-body-77a1"
    body = json.dumps({"x": "p" * 5000, "api_key": key}).encode()
    echo = b'data: {"echo": "%s"}\n\n' % key.encode()
    with (Upstream(lambda *_: echo) as upstream,
          RecordingProxy(upstream.base, tmp_path) as proxy):
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=body)
        assert conn.getresponse().read() == echo
        conn.close()
    for path in tmp_path.rglob("*"):
        assert key.encode() not in path.read_bytes()


DEEP = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def test_a_deeply_nested_json_body_is_forwarded_and_answered(tmp_path: Path) -> None:
    with (SSEServer(BODY, speed=math.inf) as upstream,
          RecordingProxy(upstream.base_url, tmp_path) as proxy):
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=DEEP)
        assert conn.getresponse().read() == BODY
        conn.close()
        assert upstream.requests[0].body == DEEP
    assert json.loads(next(tmp_path.glob("*.meta.json")).read_text())["model"] is None


def test_serve_answers_a_deeply_nested_json_body(tmp_path: Path) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=DEEP)
        assert conn.getresponse().read() == BODY
        conn.close()


# -- connections that linger ------------------------------------------------------------------
@pytest.mark.parametrize("when", ["before the head", "mid-body"])
def test_a_client_that_leaves_has_its_silent_upstream_closed(when: str, tmp_path: Path) -> None:
    upstream_closed = threading.Event()

    def script(conn: socket.socket, _: bytes) -> None:
        if when == "mid-body":
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        conn.settimeout(TIMEOUT)
        with contextlib.suppress(OSError):  # silent from here; waits for the proxy to close
            if conn.recv(1) == b"":
                upstream_closed.set()

    with (_scripted(script) as (base, _),
          RecordingProxy(base, tmp_path, timeout=3 * TIMEOUT) as proxy):
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT)
        sock.sendall(HEAD + b"Content-Length: 0\r\n\r\n")
        if when == "mid-body":
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.close()
        assert upstream_closed.wait(TIMEOUT), "the upstream request stayed open"


@pytest.fixture(params=["serve", "proxy"])
def make_server(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., object]:
    """``serve`` or the proxy (its upstream never reached), built with the keywords given."""
    if request.param == "proxy":
        return lambda **kw: RecordingProxy("http://127.0.0.1:9", tmp_path, **kw)
    return lambda **kw: SSEServer(BODY, speed=math.inf, **kw)


def test_a_head_sent_a_byte_at_a_time_is_cut_at_the_header_timeout(
    make_server: Callable[..., object],
) -> None:
    head = HEAD + b"X-Slow: " + b"z" * 200 + b"\r\n\r\n"
    with (make_server(header_timeout=0.5) as server,  # type: ignore[attr-defined]
          socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock):
        sent = 0
        with contextlib.suppress(OSError):
            for byte in head:  # each byte well within the idle timeout of the one before
                sock.sendall(bytes([byte]))
                sent += 1
                time.sleep(0.02)
                if sent % 10 == 0 and _closed(sock):
                    break
        assert sent < len(head), "a head trickled in byte by byte was waited for whole"


def _closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)
        sock.settimeout(TIMEOUT)


def test_connections_past_the_cap_are_answered_503_when_every_one_is_being_answered() -> None:
    release = threading.Event()
    with SSEServer(BODY, default_delay=1.0, sleep=lambda _: release.wait(TIMEOUT),
                   max_connections=2) as server:
        held = [socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
                for _ in range(2)]
        try:
            for sock in held:  # a whole request each, its answer held mid-stream
                sock.sendall(HEAD + b"Content-Length: 0\r\n\r\n")
                assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            answer = _raw(server.port, b"")
        finally:
            release.set()
            for sock in held:
                sock.close()
    assert answer.startswith(b"HTTP/1.1 503 ")


@pytest.mark.parametrize("kind", ["serve", "proxy"])
def test_a_reconnecting_slowloris_does_not_keep_a_whole_request_out(
    kind: str, tmp_path: Path,
) -> None:
    """All slots held by slow heads that reconnect the moment one is closed: a client
    sending a whole request still gets its answer (the oldest slow head makes way)."""
    stop, full = threading.Event(), threading.Event()
    slots = 8

    with contextlib.ExitStack() as stack:
        if kind == "proxy":
            upstream = stack.enter_context(Upstream())
            server = stack.enter_context(RecordingProxy(
                upstream.base, tmp_path, max_connections=slots, header_timeout=TIMEOUT))
        else:
            server = stack.enter_context(SSEServer(
                BODY, speed=math.inf, max_connections=slots, header_timeout=TIMEOUT))
        port = server.port  # type: ignore[attr-defined]

        def slowloris() -> None:
            socks: list[socket.socket] = []
            try:
                while not stop.is_set():
                    for sock in [s for s in socks if _closed(s)]:
                        socks.remove(sock)
                        sock.close()
                    while len(socks) < slots and not stop.is_set():
                        sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
                        sock.sendall(HEAD[:10])  # a head begun, never finished
                        socks.append(sock)
                    full.set()
                    stop.wait(0.01)
            finally:
                for sock in socks:
                    sock.close()

        thread = threading.Thread(target=slowloris, daemon=True)
        thread.start()
        try:
            assert full.wait(TIMEOUT)  # every slot held by a slow head before the client comes
            answers = []
            for _ in range(5):
                answers.append(_raw(port, HEAD + b"Content-Length: 0\r\nConnection: close"
                                    b"\r\n\r\n")[:12])
                if answers[-1] != b"HTTP/1.1 503":
                    break
        finally:
            stop.set()
            thread.join(TIMEOUT)
    assert answers[-1] == b"HTTP/1.1 200", answers


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        SSEServer(BODY, max_connections=0)


def test_a_refused_request_is_logged_without_its_query_values(tmp_path: Path) -> None:
    with Upstream() as upstream, RecordingProxy(upstream.base, tmp_path) as proxy:
        _raw(proxy.port, b"POST /v1/m?key=sk-in-the-query-01 HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}")
    (exchange,) = proxy.exchanges
    assert exchange.status == 400 and "more than once" in str(exchange)
    assert "sk-in-the-query-01" not in str(exchange)


def test_record_refuses_an_answer_framed_two_ways(tmp_path: Path) -> None:
    from streamcalls_lab.traffic.record import RecordError, record

    def script(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"content-length: 3\r\ncontent-length: 30\r\n\r\nabc")

    with _scripted(script) as (base, _), pytest.raises(RecordError, match="two ways"):
        record(base + "/v1/messages", b"{}", tmp_path / "x.sse", key_env=None)
    assert list(tmp_path.iterdir()) == []
