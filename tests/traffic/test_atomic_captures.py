"""Captures are written atomically (issue #34): under an in-progress name until whole, so a
proxy killed mid-stream (a real SIGKILL: no handler runs) leaves no capture that passes for
whole, and what it leaves loads with a problem row (a CaptureError when strict)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab.errors import CaptureError
from streamcalls_lab.importers import import_file
from streamcalls_lab.redact import redact_file
from streamcalls_lab.sources import PARTIAL
from streamcalls_lab.traffic.server import LoopbackServer

from ..conftest import REPO
from ..support import turns
from ..support.stream_handler import StreamHandler

TIMEOUT = 20
FIRST = turns.anthropic(text=["Hello", " there"])[:-40]  # whole frames, then a cut one


class _Stalls(StreamHandler):
    """Sends the first frames of a stream, then nothing until the test lets it go."""

    protocol_version = "HTTP/1.0"  # the body ends when the connection does

    def answer(self) -> None:
        self.stream(FIRST[:FIRST.rfind(b"\n\n") + 2], sized=False)
        self.wfile.flush()
        self.server.owner.release.wait(TIMEOUT)  # type: ignore[attr-defined]


@pytest.fixture
def stalling() -> Iterator[LoopbackServer]:
    server = LoopbackServer(_Stalls, "127.0.0.1", 0)
    server.release = threading.Event()  # type: ignore[attr-defined]
    with server:
        try:
            yield server
        finally:
            server.release.set()  # type: ignore[attr-defined]


def _wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_proxy_killed_mid_stream_leaves_no_capture_that_passes_for_whole(
    stalling: LoopbackServer, tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamcalls_lab", "proxy", "--upstream", stalling.base_url,
         "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        base = line.split()[1]
        host, port = base.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=b"{}")
        resp = conn.getresponse()
        assert resp.read1(1 << 16)  # the first frames went through the proxy
        _wait_for(lambda: any(p.stat().st_size for p in tmp_path.glob(f"*{PARTIAL}")),
                  "the in-progress capture")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(TIMEOUT)
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    assert not list(tmp_path.glob("*.sse")), "a capture under its own name, not whole"
    assert not list(tmp_path.glob("*.meta.json"))
    rows = scl.load(tmp_path, strict=False)
    problems = rows[rows.kind == "error"].problem.astype(str)
    assert problems.str.contains("in-progress .partial file").any()
    with pytest.raises(CaptureError, match="in-progress"):
        scl.load(tmp_path)


def test_a_finished_proxy_capture_has_its_own_name_and_nothing_in_progress(
    stalling: LoopbackServer, tmp_path: Path,
) -> None:
    from streamcalls_lab.traffic.proxy import RecordingProxy

    stalling.release.set()  # type: ignore[attr-defined]
    with RecordingProxy(stalling.base_url, tmp_path) as proxy:
        host, port = proxy.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=b"{}")
        conn.getresponse().read()
        conn.close()
    assert len(list(tmp_path.glob("*.sse"))) == 1
    assert not list(tmp_path.glob(f"*{PARTIAL}"))


def test_redact_and_import_leave_nothing_in_progress(tmp_path: Path) -> None:
    src = tmp_path / "t.sse"
    src.write_bytes(turns.anthropic(text=["Hi"]))
    redact_file(src, tmp_path / "out" / "t.sse")
    har = tmp_path / "h.har"
    har.write_text('{"log": {"entries": [{"request": {"method": "POST", "url": '
                   '"https://a.example/v1"}, "response": {"status": 200, "content": '
                   '{"mimeType": "text/event-stream", "text": "data: {}\\n\\n"}}}]}}')
    import_file(har, tmp_path / "imp")
    for out in (tmp_path / "out", tmp_path / "imp"):
        assert list(out.glob("*.sse")) and not list(out.glob(f"*{PARTIAL}"))
