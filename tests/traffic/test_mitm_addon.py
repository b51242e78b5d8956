"""The mitmproxy addon under the REAL mitmdump: reverse proxy to `serve`, a real openai client."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from streamcalls_lab import calls, load, provenance, timing
from streamcalls_lab.traffic import mitm_addon
from streamcalls_lab.traffic.serve import SSEServer

from ..support import turns

pytest.importorskip("mitmproxy")

MITMDUMP = Path(sys.executable).parent / "mitmdump"
KEY = "sk-mitm-addon-secret-key-0123456789"
BODY = turns.chat([(0, "call_a", "lookup", ['{"city": "Par', 'is"}']),
                   (1, "call_b", "search", ['{"q"', ": 1}"])])
REPO = Path(__file__).resolve().parents[2]
ESCAPE = "\x1b]0;pwned\x07"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _mitmdump(upstream: str, out: Path, tmp: Path, *more: str) -> Iterator[tuple[str, Path]]:
    if not MITMDUMP.exists():
        pytest.skip("mitmdump is not installed beside this Python")
    port = _free_port()
    log = tmp / "mitmdump.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [str(MITMDUMP), "-s", mitm_addon.__file__, "--mode", f"reverse:{upstream}",
             "--listen-host", "127.0.0.1", "--listen-port", str(port),
             "--set", f"confdir={tmp / 'conf'}", "--set", f"scl_out={out}",
             "--flow-detail", "0", *more],
            stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:  # ready once it accepts a connection
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"mitmdump did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", log
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _chat(base_url: str) -> list[tuple[str, str]]:
    openai = pytest.importorskip("openai")

    client = openai.OpenAI(api_key=KEY, base_url=base_url + "/v1", max_retries=0, timeout=30)
    with warnings.catch_warnings(), client, client.chat.completions.stream(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        warnings.simplefilter("ignore")
        message = stream.get_final_completion().choices[0].message
    return [(tc.function.name, tc.function.arguments) for tc in message.tool_calls or []]


def _wait_for(path: Path, text: str) -> str:
    deadline = time.monotonic() + 30
    while text not in (got := path.read_text(errors="replace")):
        if time.monotonic() > deadline:
            pytest.fail(f"{text!r} never printed: {got[-2000:]}")
        time.sleep(0.1)
    return got


@pytest.mark.parametrize("streaming", [False, True], ids=["default", "stream_large_bodies"])
def test_mitmdump_saves_each_streamed_response_byte_exact_with_reads_and_no_key(
    tmp_path: Path, streaming: bool,
) -> None:
    out = tmp_path / "captures"
    more = ("--set", "stream_large_bodies=1") if streaming else ()
    with SSEServer(BODY, speed=math.inf) as server, \
            _mitmdump(server.base_url, out, tmp_path, *more) as (url, log):
        got = _chat(url)
        text = _wait_for(log, "2 call(s), 2 complete")
    assert got == [("lookup", '{"city": "Paris"}'), ("search", '{"q": 1}')]
    (capture,) = out.glob("*.sse")
    assert capture.read_bytes() == BODY
    reads = timing.read(capture)
    assert reads is not None and sum(n for _, n in reads) == len(BODY)
    meta = provenance.read(capture) or {}
    assert meta["source"] == "mitmproxy-addon" and meta["model"] == "gpt-test"
    assert "authorization" not in meta["request_headers"]
    assert not [p for p in out.iterdir() if KEY.encode() in p.read_bytes()]
    assert KEY not in text
    assert calls(load(capture))["args"].tolist() == ['{"city": "Paris"}', '{"q": 1}']
    assert "rebuilt" not in load(out).attrs


def test_the_inspect_line_is_inert(tmp_path: Path) -> None:
    body = turns.chat([(0, "call_x", f"tool{ESCAPE}", ['{}'])])
    out = tmp_path / "captures"
    with SSEServer(body, speed=math.inf) as server, \
            _mitmdump(server.base_url, out, tmp_path) as (url, log):
        _chat(url)
        _wait_for(log, "1 call(s)")
    capture, = out.glob("*.sse")
    line = mitm_addon.inspect_line(capture)
    assert "\x1b" not in line and "\x07" not in line


def test_a_stream_that_breaks_off_is_kept_as_far_as_it_came_and_marked_cut(
    tmp_path: Path,
) -> None:
    openai = pytest.importorskip("openai")

    half = BODY[: len(BODY) // 2]
    port = _free_port()
    srv = socket.socket()
    srv.bind(("127.0.0.1", port))
    srv.listen(1)

    def upstream() -> None:  # a chunked SSE answer that stops in the middle
        while True:  # (the readiness probe's connection brings no request)
            conn, _ = srv.accept()
            if conn.recv(65536):
                break
            conn.close()
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n"
                     + f"{len(half):x}\r\n".encode() + half + b"\r\n")
        time.sleep(0.5)
        conn.close()

    threading.Thread(target=upstream, daemon=True).start()
    out = tmp_path / "captures"
    with _mitmdump(f"http://127.0.0.1:{port}", out, tmp_path) as (url, log):
        with pytest.raises(openai.APIError):
            _chat(url)
        _wait_for(log, "problem(s)")
    srv.close()
    (capture,) = out.glob("*.sse")
    assert capture.read_bytes() == half
    assert "broke off" in (provenance.read(capture) or {})["cut_off"]
