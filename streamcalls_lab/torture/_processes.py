"""A client's processes: started in a session of their own, marked, and every one ended; what
they print read with a bound.

A client may start children (a shell, a runner, a forked worker). One that keeps the
client's stdout open would make a reader waiting for EOF take the client for hung; one that
detaches (``setsid``, a double fork, its environment cleared) outlives a kill of the
client's process group. So a client is judged on its own exit, and then ended with
everything it started: it runs under a supervisor of its own (:mod:`._reaper`), a Linux
child subreaper, so every process it orphans is reparented to that supervisor, which kills
them all at the end; the client itself runs in a new session (its own process group), killed
before it is reaped, so the group's id cannot have been reused. As a second net, a mark in
its environment that every descendant inherits unless it clears it (how Jenkins's
ProcessTreeKiller finds a build's processes): every process whose ``/proc/<pid>/environ``
carries it is killed too.

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
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

OUTPUT_LIMIT = 16 * 1024**2
"""Bytes of a client's stdout, and of its stderr, kept per case (loop mode: of each line,
and of the lines of one case); the rest is read and dropped, and the verdict says so."""
END_WAIT = 10.0
"""Seconds the supervisor has to end a client's processes before its own group is killed."""
_REAPER = Path(__file__).with_name("_reaper.py")
MARK = "STREAMCALLS_CLIENT_RUN"
"""The environment variable that marks a client's processes (a value per client)."""


class Client:
    """A client process: started under a supervisor of its own, in a new session, marked;
    :meth:`end` ends all of it.

    The supervisor (:mod:`._reaper`, one small process per client) is a child subreaper:
    every orphan it adopts is one of the client's, whatever it did to detach, and it kills
    them all when told to. ``proc`` is the supervisor; its stdio is the client's.
    """

    def __init__(self, cmd: Sequence[str], env: Mapping[str, str], *, stdin: int | None,
                 on_exit: Callable[[], None] | None = None) -> None:
        self.mark = secrets.token_hex(8)
        status_r, status_w = os.pipe()
        control_r, self._control = os.pipe()
        try:
            # -S: the supervisor needs the standard library alone, and site-packages' .pth
            # files (an editable install's finder) cost each client's start a tenth of a second
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_REAPER), str(status_w), str(control_r),
                 *cmd],
                env={**env, MARK: self.mark}, stdin=stdin, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                pass_fds=(status_w, control_r))
        except BaseException:
            for fd in (status_r, self._control):
                os.close(fd)
            raise
        finally:
            os.close(status_w)
            os.close(control_r)
        self._status = os.fdopen(status_r, "rb", buffering=0)
        first = self._status.readline().split(b" ", 2)
        if first[0] != b"S":
            self._finish()
            self.proc.wait()
            if first[0] == b"E":
                raise OSError(int(first[1]), first[2].decode("utf-8", "replace").strip())
            raise OSError(f"the supervisor of {cmd[0]!r} did not start it")
        self.pid = int(first[1])
        self.started = _start_time(self.proc.pid) or 0  # its descendants start after it
        self.code: int | None = None
        self._exited = threading.Event()
        self._on_exit = on_exit
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self) -> None:
        """Wait for the supervisor's word that the client exited (or for it to go)."""
        with contextlib.suppress(OSError, ValueError), self._status:
            line = self._status.readline().split()
            if line[:1] == [b"X"]:
                self.code = int(line[1])
        self._exited.set()
        if self._on_exit is not None:
            self._on_exit()

    def exited(self, timeout: float | None = None) -> bool:
        """Whether the client itself has exited (within ``timeout`` seconds): its children
        and whatever holds its stdout do not count."""
        return self._exited.wait(timeout)

    def _finish(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._control)

    def end(self) -> int:
        """End the client, every process it started and every process carrying its mark;
        its exit code (negative: the signal that ended it)."""
        self._finish()  # the supervisor kills the client's group, then all it has adopted
        try:
            self.proc.wait(timeout=END_WAIT)
        except subprocess.TimeoutExpired:  # then the supervisor's own group, and the sweep
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.proc.returncode != 0:  # the supervisor died (killed?) before it could
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        for _ in range(8):  # a marked process may fork while the others are killed
            if not end_marked(self.mark, self.started):
                break
        self._exited.wait(END_WAIT)
        self._exited.set()
        return self.code if self.code is not None else -signal.SIGKILL


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
