"""The suite's notebook kernels, forked from one process that has already imported the kit.

The suite runs the course's notebooks about forty times in its own workers (nbmake, every
notebook on other folders, the static site), and every kernel spent about 0.6 s of CPU
importing pandas, pyarrow and the kit before its first cell did anything. Here one process
per test worker (the zygote) imports ``streamcalls_lab`` once, and every kernel a kernel
manager in that worker starts is forked from it, then runs ipykernel's own launcher as
``python -m ipykernel_launcher -f FILE`` would.

The rules a forked kernel keeps, so that a notebook runs in it as in a fresh one
(``tests/test_forked_kernels.py`` runs a probe in both and compares):

- Only what ``import streamcalls_lab`` imports is loaded ahead: every notebook imports it,
  so no module a notebook forgets to import becomes reachable, and nothing that looks for a
  running IPython when it is imported (ipywidgets, pyplot, matplotlib_inline) is loaded
  before the kernel exists.
- The kernel gets the environment, working folder and standard streams the manager asked
  for, its own session (``start_new_session``, as jupyter_client starts kernels) and a
  fresh temporary-folder choice; the zygote's own first path entry is gone before it forks.
- Its parent is the zygote: ``JPY_PARENT_PID`` names it, so the kernel's parent poller ends
  the kernel when the zygote goes; the zygote goes when its worker does.
- Signals reach the kernel through the zygote, which alone reaps it, so a signal never
  reaches a process that has taken a reaped kernel's pid.

Anything else (another kernel, another interpreter, no zygote) starts as jupyter_client
starts it. ``SCL_FRESH_KERNELS=1`` turns forking off for a run.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NAME = "scl-forked"
OFF = "SCL_FRESH_KERNELS"
LAUNCHER = "ipykernel_launcher"
PRELOAD = ("streamcalls_lab",)
START_TIMEOUT = 60.0
_HEADER = 8  # a request's length, in decimal digits


# --- the worker's side --------------------------------------------------------------------

class ForkedProcess:
    """What jupyter_client uses of a :class:`subprocess.Popen`, for a forked kernel.

    Its exit comes from the zygote (``exit N``, N negative for a signal); signals go to it.
    """

    stdin = stdout = stderr = None

    def __init__(self, conn: socket.socket, pid: int, args: list[str]) -> None:
        self._conn, self.pid, self.args = conn, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._conn.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                self._exited(self._conn.recv(64))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                self._exited(self._conn.recv(64))
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        return self.returncode  # type: ignore[return-value]

    def _exited(self, message: bytes) -> None:
        # no message: the zygote is gone, and its kernels' parent pollers end them
        self.returncode = int(message.split()[1]) if message.startswith(b"exit ") \
            else -signal.SIGKILL
        self._conn.close()

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            self._conn.setblocking(True)
            # an OSError: reaped already, its exit waiting to be read, as a Popen's would be
            with contextlib.suppress(OSError):
                self._conn.sendall(f"signal {int(signum)}\n".encode())

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class Zygote:
    """The worker's zygote process and the socket it forks kernels on."""

    def __init__(self, env: dict[str, str]) -> None:
        self._folder = tempfile.mkdtemp(prefix="scl-zygote-", dir=_TMP)
        self.address = str(Path(self._folder) / "zygote")
        ready_r, ready_w = os.pipe()
        repo = Path(__file__).resolve().parents[2]
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forked_kernels", self.address, str(ready_w)],
            cwd=repo, env=env, pass_fds=(ready_w,), stdin=subprocess.DEVNULL)
        os.close(ready_w)
        with os.fdopen(ready_r, "rb") as ready:
            selector = selectors.DefaultSelector()
            selector.register(ready, selectors.EVENT_READ)
            said = ready.readline() if selector.select(START_TIMEOUT) else b""
            selector.close()
        if said != b"ready\n":
            self.close()
            raise RuntimeError(f"the kernel zygote did not start (said {said!r})")

    def fork(self, cmd: list[str], env: dict[str, str], cwd: str) -> ForkedProcess:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.address)
        except OSError:
            conn.close()
            raise
        request = json.dumps({"argv": cmd[3:], "env": env, "cwd": cwd}).encode()
        stdin_r, stdin_w = os.pipe()
        os.close(stdin_w)  # as jupyter_client does: the kernel's stdin is a pipe, closed
        try:
            socket.send_fds(conn, [b"%0*d" % (_HEADER, len(request)) + request],
                            [stdin_r, 1, 2])
        finally:
            os.close(stdin_r)
        said = _line(conn)
        if not said.startswith(b"pid "):
            conn.close()
            raise RuntimeError(f"the kernel zygote did not fork a kernel (said {said!r})")
        return ForkedProcess(conn, int(said.split()[1]), cmd)

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()  # its kernels end with it (their parent pollers)
            self._process.wait()
        Path(self.address).unlink(missing_ok=True)
        os.rmdir(self._folder)


_zygote: Zygote | None = None
_zygote_failed = False
_env_at_start = dict(os.environ)  # before any test changes it: what the zygote imports under
_TMP = tempfile.gettempdir()  # not the TMPDIR of whichever test starts the first kernel


def zygote() -> Zygote | None:
    """This process's zygote, started on first use; None if it cannot start."""
    global _zygote
    if _zygote is None and not _zygote_failed:
        try:
            _zygote = Zygote(_env_at_start)
        except (OSError, RuntimeError) as e:
            _give_up(e)
            return None
        atexit.register(_zygote.close)
    return _zygote


def _give_up(reason: Exception) -> None:
    global _zygote, _zygote_failed
    _zygote, _zygote_failed = None, True
    print(f"forked kernels off, fresh ones from now on: {reason}", file=sys.stderr)


def forkable(cmd: list[str], env: dict[str, str]) -> bool:
    """True for the command jupyter_client runs for this interpreter's own ipykernel."""
    import shutil

    if cmd[1:3] != ["-m", LAUNCHER] or len(cmd) < 4:
        return False
    found = shutil.which(cmd[0], path=env.get("PATH", os.defpath))
    return found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)


def install() -> None:
    """Make forked kernels the default for every kernel manager in this process (unless
    ``SCL_FRESH_KERNELS`` is set)."""
    if os.environ.get(OFF):
        return
    from importlib.metadata import EntryPoint

    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    factory = KernelProvisionerFactory.instance()
    factory.provisioners[NAME] = EntryPoint(
        name=NAME, value=f"{__name__}:ForkedProvisioner", group=factory.GROUP_NAME)
    factory.default_provisioner_name = NAME


def _provisioner_class() -> type:
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class ForkedProvisioner(LocalProvisioner):  # type: ignore[misc]
        """jupyter_client's local provisioner, but a kernel of this interpreter is forked."""

        async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
            env = kwargs.get("env") or dict(os.environ)
            streams = any(kwargs.get(k) is not None for k in ("stdin", "stdout", "stderr"))
            origin = zygote() if forkable(cmd, env) and not streams else None
            if origin is None:
                return await super().launch_kernel(cmd, **kwargs)
            env = {**env, "JPY_PARENT_PID": ""}  # the zygote writes its own pid
            try:
                self.process = origin.fork(cmd, env, str(kwargs.get("cwd") or os.getcwd()))
            except (OSError, RuntimeError) as e:  # the zygote is gone: fresh from now on
                _give_up(e)
                return await super().launch_kernel(cmd, **kwargs)
            self.pid, self.pgid = self.process.pid, None  # signals through the zygote
            self.cwd = kwargs.get("cwd", os.getcwd())
            return self.connection_info

    return ForkedProvisioner


def __getattr__(name: str) -> Any:
    # Made on first use (jupyter_client loads it by name): the zygote runs this module, and a
    # class defined here would import jupyter_client into it, and so into every kernel
    # ahead of what `import streamcalls_lab` imports.
    if name == "ForkedProvisioner":
        cls = _provisioner_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)


def _line(conn: socket.socket) -> bytes:
    out = b""
    while not out.endswith(b"\n"):
        got = conn.recv(1)
        if not got:
            break
        out += got
    return out


# --- the zygote's side --------------------------------------------------------------------

def serve(address: str, ready_fd: int) -> dict[str, Any]:
    """Import the kit, then fork a kernel for every request on ``address`` until the
    worker that started this process is gone. Returns only in a forked kernel, with its
    request."""
    import importlib

    del sys.path[0]  # the repository, put first by -m: a kernel gets its own folder there
    for name in PRELOAD:
        importlib.import_module(name)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    kernels: dict[int, socket.socket] = {}  # pid: the connection that asked for it
    os.write(ready_fd, b"ready\n")
    os.close(ready_fd)

    def in_child() -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        selector.close()
        for s in (listener, wake_r, wake_w, *kernels.values()):
            s.close()

    while os.getppid() == parent:
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                request = _request(conn)
                if request is None:
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    conn.close()
                    in_child()
                    return request
                for fd in request["fds"]:
                    os.close(fd)
                kernels[pid] = conn
                conn.sendall(f"pid {pid}\n".encode())
                selector.register(conn, selectors.EVENT_READ, pid)
            elif key.fileobj is wake_r:
                while True:
                    try:
                        if not wake_r.recv(512):
                            break
                    except BlockingIOError:
                        break
            else:
                _order(key.fileobj, key.data, kernels)  # type: ignore[arg-type]
        _reap(kernels, selector)
    for pid in kernels:  # the worker is gone: so are its kernels
        _signal(pid, signal.SIGKILL)
    raise SystemExit(0)


def _request(conn: socket.socket) -> dict[str, Any] | None:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER, 3)
    if len(head) != _HEADER or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    body = b""
    size = int(head)
    while len(body) < size:
        got = conn.recv(size - len(body))
        if not got:
            for fd in fds:
                os.close(fd)
            return None
        body += got
    return {**json.loads(body), "fds": fds}


def _order(conn: socket.socket, pid: int, kernels: dict[int, socket.socket]) -> None:
    said = conn.recv(64)
    if not said:  # its manager let go without waiting for it: no kernel outlives that
        _signal(pid, signal.SIGKILL)
        return
    for line in said.splitlines():
        if line.startswith(b"signal ") and pid in kernels:
            _signal(pid, int(line.split()[1]))


def _signal(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)  # the kernel's group, as jupyter_client signals one
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def _reap(kernels: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while kernels:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = kernels.pop(pid, None)
        if conn is not None:
            selector.unregister(conn)
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def become_kernel(request: dict[str, Any]) -> None:
    """In a forked child: take the request's streams, folder and environment, then run
    ipykernel's launcher as ``python -m`` runs it."""
    import runpy

    os.setsid()
    for target, fd in enumerate(request["fds"]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["JPY_PARENT_PID"] = str(os.getppid())
    tempfile.tempdir = None  # chosen again from this environment's TMPDIR
    sys.argv = ["-m", *request["argv"]]  # run_module puts the launcher's path first
    runpy.run_module(LAUNCHER, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    become_kernel(serve(sys.argv[1], int(sys.argv[2])))
