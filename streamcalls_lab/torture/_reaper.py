"""A client's supervisor: started by :class:`.processes.Client`, run as a script (stdlib only).

``_reaper.py STATUS_FD CONTROL_FD CMD...``: marks itself a child subreaper (Linux
``prctl(PR_SET_CHILD_SUBREAPER)``), so every process the client leaves orphaned, however
it detaches (double fork, ``setsid``, a cleared environment), becomes this process's
child: nothing it adopts is anyone's but the client's. It starts ``CMD`` in a session of
its own with this process's stdio and environment, then writes to STATUS_FD ``S <pid>``
(or ``E <errno> <reason>`` if it could not start) and, once the client exits,
``X <code>`` (negative: the signal). When CONTROL_FD is closed (or written to), it kills
the client's group and then every child it has, again as orphans reach it, until it has
none, and exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36


def _children(me: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != b"Z":
            out.append(int(entry))
    return out


def main() -> None:
    status, control, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    os.set_inheritable(status, False)
    os.set_inheritable(control, False)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # fails off Linux: the mark sweep remains
    try:
        pid = os.posix_spawnp(cmd[0], cmd, os.environ, setsid=True)
    except OSError as e:
        os.write(status, f"E {e.errno or 0} {e.strerror or e}\n".encode())
        return
    os.write(status, f"S {pid}\n".encode())
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the client's pipes end when the client's processes close them
        os.dup2(null, fd)

    def report() -> None:  # the exit without reaping: the group id stays the client's
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        os.write(status, f"X {code}\n".encode())

    watcher = threading.Thread(target=report, daemon=True)
    watcher.start()
    os.read(control, 1)  # until the harness is done with the client
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    watcher.join()
    me = os.getpid()
    while True:
        for child in _children(me):
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        try:  # polled: an orphan may reach us between the scan and a blocking wait
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
        except ChildProcessError:
            return


if __name__ == "__main__":
    main()
