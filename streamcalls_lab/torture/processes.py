"""A client's processes: started in a session of their own, marked, and every one ended; what
they print read with a bound.

A client may start children (a shell, a runner, a forked worker). One that keeps the
client's stdout open would make a reader waiting for EOF take the client for hung; one that
detaches (``setsid``, a double fork) outlives a kill of the client's process group. So a
client is judged on its own exit, and then ended with everything it started: it runs in a
new session (its own process group), with a mark in its environment that every descendant
inherits unless it clears it (how Jenkins's ProcessTreeKiller finds a build's processes);
its group is killed, then, on Linux, every process whose ``/proc/<pid>/environ`` carries the
mark. The client is reaped only after its group is killed, so the group's id cannot have
been reused.

What a client prints is read in threads of their own, so a client is never blocked on a
full pipe, and only the first :data:`OUTPUT_LIMIT` bytes of each stream are kept.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO

OUTPUT_LIMIT = 16 * 1024**2
"""Bytes of a client's stdout, and of its stderr, kept per case (loop mode: of each line,
and of the lines of one case); the rest is read and dropped, and the verdict says so."""
MARK = "STREAMCALLS_CLIENT_RUN"
"""The environment variable that marks a client's processes (a value per client)."""


class Client:
    """A client process: started in a new session, marked; :meth:`end` ends all of it."""

    def __init__(self, cmd: Sequence[str], env: Mapping[str, str], *, stdin: int | None,
                 on_exit: Callable[[], None] | None = None) -> None:
        self.mark = secrets.token_hex(8)
        self.proc = subprocess.Popen(
            list(cmd), env={**env, MARK: self.mark}, stdin=stdin, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.started = _start_time(self.proc.pid) or 0  # its descendants start after it
        self._exited = threading.Event()
        self._on_exit = on_exit
        threading.Thread(target=self._wait, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait(self) -> None:
        """Wait for the client's exit without reaping it (the group id stays its own)."""
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
        self._exited.set()
        if self._on_exit is not None:
            self._on_exit()

    def exited(self, timeout: float | None = None) -> bool:
        """Whether the client itself has exited (within ``timeout`` seconds): its children
        and whatever holds its stdout do not count."""
        return self._exited.wait(timeout)

    def end(self) -> int:
        """End the client, its process group and every process carrying its mark; its
        exit code (negative: the signal that ended it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # not yet reaped: still its group
        for _ in range(8):  # a marked process may fork while the others are killed
            if not end_marked(self.mark, self.started):
                break
        code = self.proc.wait()
        self._exited.set()
        return code


def _start_time(pid: int | str) -> int | None:
    """When a process started, in clock ticks since boot (``/proc/<pid>/stat``), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def marked(mark: str, since: int = 0) -> list[int]:
    """The processes (other than this one) started at ``since`` or later whose environment
    carries ``mark`` (Linux's ``/proc``; elsewhere none are found, and the process group is
    all that is ended). Only the environment of a process started since is read, and only
    to find the mark."""
    needle = f"\0{MARK}={mark}\0".encode()
    me, out = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        started = _start_time(entry)
        if started is None or started < since:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue  # gone already, or not ours to read
        if needle in b"\0" + env:
            out.append(int(entry))
    return out


def end_marked(mark: str, since: int = 0) -> list[int]:
    """SIGKILL every process :func:`marked` finds; which they were."""
    found = marked(mark, since)
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return found


class Capped:
    """A pipe read to its end in a thread, its first ``limit`` bytes kept."""

    def __init__(self, stream: IO[bytes], limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        read = getattr(stream, "read1", stream.read)
        with contextlib.suppress(OSError, ValueError), stream:
            while chunk := read(1 << 16):
                room = self.limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                self.total += len(chunk)

    @property
    def cut(self) -> int:
        """Bytes read and not kept."""
        return self.total - len(self.kept)

    def text(self, timeout: float = 5.0) -> str:
        """What was kept, as text (newlines as Python's text mode reads them), once the pipe
        has ended (or ``timeout`` seconds on: a process that cleared its mark and left the
        session may still hold it)."""
        self.thread.join(timeout)
        text = bytes(self.kept).decode("utf-8", "replace")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def capped_lines(stream: IO[bytes], put: Callable[[str, int], None],
                 limit: int = OUTPUT_LIMIT) -> None:
    """Each line of ``stream`` handed to ``put(line, cut)``: the line (newlines as text mode
    reads them) with at most ``limit`` characters kept, and how many more it had."""
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace")
    with contextlib.suppress(OSError, ValueError), text:
        while line := text.readline(limit):
            cut = 0
            while not line.endswith("\n"):
                more = text.readline(limit)
                if not more:
                    break
                cut += len(more)
                if more.endswith("\n"):
                    line += "\n"
                    cut -= 1
                    break
            put(line, cut)
