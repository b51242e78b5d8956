"""Serving one case on loopback and running a client command against it: a process per case,
or (loop mode) one client process that serves many cases in turn.

Loop mode's protocol, for a client in any language: the harness starts the command once with
``STREAMCALLS_LOOP=1`` and writes one JSON line per case to its stdin,
``{"case": N, "base_url": …, "format": …, "path": …, "env": {…}}`` (``env``: the variables
a process-per-case run would have had, ``OPENAI_BASE_URL`` and the rest). The client streams
from that server, prints its calls as usual, then ``{"end": N}`` (with ``"error": "<what it
raised>"`` if the case failed, as the last line of its stderr would say), and reads the next
line; at EOF it exits.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..faults import SPECS, json_value
from ..providers import FORMATS
from ..traffic.server import LoopbackServer, StreamHandler, chunk
from ._cases import WireCase, framing
from ._processes import OUTPUT_LIMIT, Capped, Client, capped_lines

GZIP, IDENTITY = "gzip", "identity"


# -- serving one case ----------------------------------------------------------------------
def _writes(case: WireCase, gzip: bool | None = None) -> list[bytes]:
    """What the server sends after the headers, one socket write each (``gzip``: encode the
    body, by default when the case is a gzip one)."""
    payloads = list(case.reads)
    if case.gzip if gzip is None else gzip:
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


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether a request's ``Accept-Encoding`` allows gzip: it names ``gzip`` (``x-gzip``),
    or ``*`` without naming gzip, with a q-value above 0 (RFC 9110, 12.5.3). No header: no,
    as the servers that compress decide it (they compress only what a client asks for)."""
    weights: dict[str, float] = {}
    for item in (accept_encoding or "").split(","):
        coding, *params = (p.strip() for p in item.split(";"))
        q = next((p.partition("=")[2] for p in params if p.lower().startswith("q=")), "1")
        try:
            weights[coding.lower()] = float(q)
        except ValueError:
            weights[coding.lower()] = 0.0
    for name in (GZIP, "x-gzip", "*"):
        if name in weights:
            return weights[name] > 0
    return False


class _CaseServer(LoopbackServer):
    """One case on loopback: its writes, paced so that each is its own client read."""

    poll_interval = 0.005
    """A server lives for one case, a few hundredths of a second: closing it should not
    wait as long again for its loop to notice (the default cost a pair test half its time)."""

    def __init__(self, case: WireCase) -> None:
        super().__init__(_Handler, "127.0.0.1", 0)
        self.case = case
        self.writes = {e: self._paced(_writes(case, e == GZIP))
                       for e in ((GZIP, IDENTITY) if case.gzip else (IDENTITY,))}
        self.requests = 0
        self.encoding: str | None = None
        """What the last response was served as (``gzip``, ``identity``); None: no request."""

    @staticmethod
    def _paced(writes: list[bytes]) -> tuple[list[bytes], float]:
        # A pause long enough that the client reads each write on its own, short enough
        # that a thousand one-byte writes still take about a second.
        return writes, max(0.0005, min(0.02, 0.25 / len(writes)))


def served_seconds(case: WireCase) -> float:
    """How long serving ``case`` takes at its pace (the gaps between its writes): the
    longest cases go first, so a suite ends with the slowest case, not after it."""
    writes, gap = _CaseServer._paced(_writes(case))
    return len(writes) * gap


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
        # gzip only to a client that asked for it, as a real server does
        gzip = server.case.gzip and accepts_gzip(self.headers.get("accept-encoding"))
        server.encoding = GZIP if gzip else IDENTITY
        writes, gap = server.writes[server.encoding]
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        own = framing(server.case.format)
        self.start_stream(200, own.served_type or own.media_type,
                          *([("content-encoding", GZIP)] if gzip else []))
        try:
            for data in writes:
                time.sleep(gap)
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
    cut: int = 0
    """Bytes of output read past :data:`~.processes.OUTPUT_LIMIT` and not kept (or judged)."""
    encoding: str | None = None
    """What the body was served as (``gzip``, ``identity``); None: no request reached it."""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def read(self, line: str) -> None:
        """One line the client printed: a call, or noise."""
        value = json_value(line)  # the line itself when it is no JSON: noise
        if isinstance(value, dict) and "tool" in value:
            self.calls.append(value)
        elif line.strip():
            self.noise.append(line)


_CASE_VARIABLES = ("STREAMCALLS_BASE_URL", "STREAMCALLS_FORMAT", "STREAMCALLS_PATH",
                   "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def case_env(base_url: str, fmt: str) -> dict[str, str]:
    """The variables that say where one case is: what a loop line's ``env`` holds."""
    path = FORMATS[fmt].path or "/"
    return dict(zip(_CASE_VARIABLES, (base_url, fmt, path, base_url + "/v1", base_url),
                    strict=True))


def _process_env(loop: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and k not in _CASE_VARIABLES
           and k != "STREAMCALLS_LOOP"}
    env.update({
        "STREAMCALLS_BUGS": ",".join(name for name, spec in SPECS.items() if spec.client),
        "OPENAI_API_KEY": "sk-torture-fake", "ANTHROPIC_API_KEY": "sk-ant-torture-fake",
        "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1",
        "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",  # nothing leaves
    })
    if loop:
        env["STREAMCALLS_LOOP"] = "1"
    return env


def client_env(base_url: str, fmt: str) -> dict[str, str]:
    """The variables a client gets: the base URL, each SDK's conventional ones, fake keys,
    and ``STREAMCALLS_BUGS``: the classes with a deliberately broken client (``--bug``), so
    one need not import the kit to know them."""
    return _process_env(loop=False) | case_env(base_url, fmt)


def _unfinished(timeout: float) -> str:
    return f"did not finish within {timeout:g} s"


def _cannot_run(cmd: Sequence[str], error: OSError) -> Run:
    # 127, as a shell says it: the command is missing or cannot be executed
    return Run(127, stderr=f"cannot run {cmd[0]!r}: {error.strerror or error}")


def run_case(cmd: Sequence[str], case: WireCase, timeout: float = 120.0) -> Run:
    """Serve ``case`` on loopback and run ``cmd`` against it once: judged on the client's
    own exit (a child that keeps its stdout open does not make it a hang), after which it
    and everything it started are ended (:mod:`.processes`)."""
    with _CaseServer(case) as server:
        try:
            client = Client(cmd, client_env(server.base_url, case.format),
                            stdin=subprocess.DEVNULL)
        except OSError as e:
            run, out = _cannot_run(cmd, e), ""
        else:
            assert client.proc.stdout is not None and client.proc.stderr is not None
            stdout, stderr = Capped(client.proc.stdout), Capped(client.proc.stderr)
            exited = client.exited(timeout)
            code = client.end()
            out = stdout.text()
            run = Run(code, stderr=stderr.text()) if exited else Run(
                None, stderr=_unfinished(timeout))
            run.cut = stdout.cut + stderr.cut
    run.requests, run.encoding = server.requests, server.encoding
    for line in out.split("\n"):  # not splitlines(): a call's text may hold U+2028 raw
        run.read(line)
    return run


_EOF = None
_EXITED = "exited"  # (an item of the lines queue is a (line, cut) pair or one of these)
_QUEUED = 8  # lines read ahead of the harness: at most this many, each of OUTPUT_LIMIT at most


class LoopClient:
    """One client process serving cases in turn (loop mode): started on the first case, and
    again after a case it died or hung on; :meth:`close` ends it (EOF on its stdin), and
    with it everything it started (:mod:`.processes`). A case ends with its end line, or
    with the process's own exit (not its stdout's EOF, which a child may hold off)."""

    def __init__(self, cmd: Sequence[str], timeout: float = 120.0) -> None:
        self.cmd, self.timeout = list(cmd), timeout
        self.client: Client | None = None
        self.lines: queue.Queue[tuple[str, int] | str | None] = queue.Queue(_QUEUED)
        self.stderr: list[str] = []
        self._stderr_kept = 0
        self.cut = 0
        self.threads: list[threading.Thread] = []
        self.n = 0
        self.eof = False  # the process's stdout has closed (its _EOF is off the queue)

    def _start(self) -> None:
        lines: queue.Queue[tuple[str, int] | str | None] = queue.Queue(_QUEUED)
        self.client = Client(self.cmd, _process_env(loop=True), stdin=subprocess.PIPE,
                             on_exit=lambda: lines.put(_EXITED))
        self.lines, self.stderr, self._stderr_kept, self.cut = lines, [], 0, 0
        self.eof = False
        proc = self.client.proc
        assert proc.stdout is not None and proc.stderr is not None
        self.threads = [threading.Thread(target=self._pump_out, args=(proc.stdout, lines),
                                         daemon=True),
                        threading.Thread(target=capped_lines, args=(proc.stderr, self._err),
                                         daemon=True)]
        for t in self.threads:
            t.start()

    @staticmethod
    def _pump_out(stream: IO[bytes], lines: queue.Queue[tuple[str, int] | str | None]) -> None:
        capped_lines(stream, lambda line, cut: lines.put((line, cut)))
        lines.put(_EOF)

    def _err(self, line: str, cut: int) -> None:
        """A line of stderr, kept while the process's kept stderr is under the limit."""
        if self._stderr_kept < OUTPUT_LIMIT:
            self.stderr.append(line)
            self._stderr_kept += len(line)
        else:
            cut += len(line)
        self.cut += cut

    def run(self, case: WireCase) -> Run:
        """Serve ``case`` and hand it to the process; what it printed until its end line."""
        self.n += 1
        with _CaseServer(case) as server:
            # what a process writes to stderr from its start counts for its first case: it
            # may die of an import error before the case is handed to it
            mark = len(self.stderr)
            try:
                if self.client is not None and self.client.exited(0):
                    self.kill()  # it exited after its last case: a new one for this
                if self.client is None:
                    self._start()
                    mark = 0
            except OSError as e:
                return _cannot_run(self.cmd, e)
            run = self._case(self.n, server, mark)
        run.requests, run.encoding = server.requests, server.encoding
        return run

    def _case(self, n: int, server: _CaseServer, mark: int) -> Run:
        assert self.client is not None and self.client.proc.stdin is not None
        env = case_env(server.base_url, server.case.format)
        line = {"case": n, "base_url": server.base_url, "format": server.case.format,
                "path": env["STREAMCALLS_PATH"], "env": env}
        run = Run(0)
        cut = self.cut
        try:
            self.client.proc.stdin.write((json.dumps(line) + "\n").encode())
            self.client.proc.stdin.flush()
        except OSError:  # it is gone already: what it said on the way out is the reason
            return self._died(run, mark, cut)
        deadline = time.monotonic() + self.timeout
        kept = 0
        while True:
            try:
                item = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                run.returncode, run.stderr = None, _unfinished(self.timeout)
                return run
            if item is _EXITED:
                return self._died(run, mark, cut, kept)
            if item is _EOF or isinstance(item, str):
                # stdout closed: the process's own exit ends the case
                self.eof = self.eof or item is _EOF
                continue
            kept, ended = self._line(run, item, kept)
            if ended:
                return run

    def _line(self, run: Run, item: tuple[str, int], kept: int) -> tuple[int, bool]:
        """One line of the case's output into ``run``; the case's kept characters, and
        whether it was the case's end line."""
        out, cut = item
        value = json_value(out) if len(out) < 1024 else None  # an end line is short
        if isinstance(value, dict) and "end" in value and "tool" not in value:
            error = value.get("error")
            if error or value.get("exit"):
                run.returncode = int(value.get("exit") or 1)
                run.stderr = str(error or "")
            return kept, True
        if kept < OUTPUT_LIMIT:
            run.read(out.rstrip("\n"))
            kept += len(out)
        else:
            cut += len(out)
        run.cut += cut
        return kept, False

    def _died(self, run: Run, mark: int, cut: int, kept: int = 0) -> Run:
        """The process ended inside a case: its exit code and what it wrote to stderr since
        the case began, as a process-per-case run would have them. What it printed before
        it died is read to the end first (once its group is gone, so is its stdout)."""
        assert self.client is not None
        run.returncode = self.client.end()
        self.client = None
        until = time.monotonic() + 5
        while not self.eof:  # once stdout has closed, every line it printed is queued
            try:
                item = self.lines.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                break
            if item is _EOF:
                self.eof = True
                break
            if isinstance(item, tuple):
                kept, ended = self._line(run, item, kept)
                if ended:  # it finished the case, then exited: the case is judged as run
                    return run
        for t in self.threads:
            t.join(timeout=5)
        run.stderr = "".join(self.stderr[mark:])
        run.cut += self.cut - cut
        return run

    def kill(self) -> None:
        """End the process, its group and every process it started."""
        if self.client is not None:
            self.client.end()
            self.client = None

    def close(self) -> None:
        """EOF on the client's stdin; it should exit, and is ended (with everything it
        started) whether it does or not."""
        if self.client is None:
            return
        try:
            assert self.client.proc.stdin is not None
            self.client.proc.stdin.close()
        except OSError:
            pass
        self.client.exited(10)
        self.kill()
        for t in self.threads:
            t.join(timeout=5)

    def __enter__(self) -> LoopClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
