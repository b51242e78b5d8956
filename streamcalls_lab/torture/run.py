"""Serving one case on loopback and running a client command against it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..faults import SPECS, json_value
from ..traffic.server import LoopbackServer, StreamHandler, chunk
from .cases import PATHS, WireCase


# -- serving one case ----------------------------------------------------------------------
def _writes(case: WireCase) -> list[bytes]:
    """What the server sends after the headers, one socket write each."""
    payloads = list(case.reads)
    if case.gzip:
        z = zlib.compressobj(wbits=31)
        payloads = [z.compress(r) + z.flush(zlib.Z_SYNC_FLUSH) for r in payloads]
        payloads.append(z.flush())
    if case.chunk_sizes:
        body, sizes, payloads, at = b"".join(payloads), case.chunk_sizes, [], 0
        while at < len(body):
            size = sizes[len(payloads) % len(sizes)]
            payloads.append(body[at:at + size])
            at += size
    framed = [chunk(p) for p in payloads if p] + [chunk(b"")]
    if case.chunk_sizes:
        stream = b"".join(framed)
        return [stream[i:i + 5] for i in range(0, len(stream), 5)]
    return framed


class _CaseServer(LoopbackServer):
    """One case on loopback: its writes, paced so that each is its own client read."""

    def __init__(self, case: WireCase) -> None:
        super().__init__(_Handler, "127.0.0.1", 0)
        self.case = case
        self.writes = _writes(case)
        # A pause long enough that the client reads each write on its own, short enough
        # that a thousand one-byte writes still take about a second.
        self.gap = max(0.0005, min(0.05, 0.5 / len(self.writes)))
        self.requests = 0


class _Handler(StreamHandler):
    def do_GET(self) -> None:
        self._stream()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self._stream()

    def _stream(self) -> None:
        server: _CaseServer = self.server.owner  # type: ignore[attr-defined]
        server.requests += 1
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        gzip = [("content-encoding", "gzip")] if server.case.gzip else []
        self.start_stream(200, "text/event-stream; charset=utf-8", *gzip)
        try:
            for data in server.writes:
                time.sleep(server.gap)
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what it printed is judged


# -- running a client ----------------------------------------------------------------------
@dataclass
class Run:
    """What the client did on one case."""

    returncode: int | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    noise: list[str] = field(default_factory=list)
    """Output lines that were not a call."""
    requests: int = 0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def client_env(base_url: str, fmt: str) -> dict[str, str]:
    """The variables a client gets: the base URL, each SDK's conventional ones, fake keys,
    and ``STREAMCALLS_BUGS``: the classes with a deliberately broken client (``--bug``), so
    one need not import the kit to know them."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({
        "STREAMCALLS_BASE_URL": base_url, "STREAMCALLS_FORMAT": fmt,
        "STREAMCALLS_PATH": PATHS[fmt],
        "STREAMCALLS_BUGS": ",".join(name for name, spec in SPECS.items() if spec.client),
        "OPENAI_BASE_URL": base_url + "/v1", "OPENAI_API_KEY": "sk-torture-fake",
        "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-torture-fake",
        "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1",
        "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",  # nothing leaves
    })
    return env


def run_case(cmd: Sequence[str], case: WireCase, timeout: float = 120.0) -> Run:
    """Serve ``case`` on loopback and run ``cmd`` against it once."""
    with _CaseServer(case) as server:
        try:
            proc = subprocess.run(list(cmd), env=client_env(server.base_url, case.format),
                                  timeout=timeout, capture_output=True, text=True,
                                  encoding="utf-8", errors="replace",
                                  stdin=subprocess.DEVNULL, check=False)
            run = Run(proc.returncode, stderr=proc.stderr)
            out = proc.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (
                e.stdout or "")
            run = Run(None, stderr=f"no exit within {timeout:g} s")
    run.requests = server.requests
    for line in out.splitlines():
        value = json_value(line)  # the line itself when it is no JSON: noise
        if isinstance(value, dict) and "tool" in value:
            run.calls.append(value)
        elif line.strip():
            run.noise.append(line)
    return run
