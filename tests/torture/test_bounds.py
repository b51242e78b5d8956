"""The torture harness bounds what a client can cost it: only the first OUTPUT_LIMIT bytes
of what it prints are kept (and the verdict says the output was cut); a client is judged on
its own exit, not on its stdout's EOF (a forked child may hold it); and when a case is over,
the client and every process it started are gone, a child that detached itself (setsid, a
double fork) too, in a process per case and in loop mode alike."""

from __future__ import annotations

import os
import queue
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from streamcalls_lab.torture import LoopClient, cases, run_case, verdict
from streamcalls_lab.torture import run as run_module
from streamcalls_lab.torture._judge import OUTPUT_CUT
from streamcalls_lab.torture._processes import MARK, OUTPUT_LIMIT, Client, marked

CASE = cases(["openai-chat"], "quick", ["spaces"])[0]
TIMEOUT = 30.0  # far more than any client here takes: reaching it means a hang


def _client(tmp_path: Path, body: str) -> list[str]:
    """A Python client: ``body`` runs once per case (loop mode: per case line), with
    ``PIDS`` the file where it notes the processes it leaves behind."""
    script = tmp_path / "client.py"
    script.write_text(
        "import json, os, sys, time\n"
        f"PIDS = {str(tmp_path / 'pids')!r}\n"
        "def note(pid):\n"
        "    with open(PIDS, 'a') as f:\n"
        "        f.write(f'{pid}\\n')\n"
        "def case():\n"
        + textwrap.indent(textwrap.dedent(body), "    ") + "\n"
        "if os.environ.get('STREAMCALLS_LOOP') == '1':\n"
        "    for line in sys.stdin:\n"
        "        case()\n"
        "        print(json.dumps({'end': json.loads(line)['case']}), flush=True)\n"
        "else:\n"
        "    case()\n")
    return [sys.executable, str(script)]


def _left(tmp_path: Path) -> list[int]:
    """The noted processes still running (a zombie has ended)."""
    path = tmp_path / "pids"
    pids = [int(p) for p in path.read_text().split()] if path.exists() else []
    alive = []
    for pid in pids:
        for _ in range(100):  # a killed orphan is reaped by init: give it the moment
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                break
            if state in ("Z", "X"):
                break
            time.sleep(0.05)
        else:
            alive.append(pid)
    return alive


def _noted(tmp_path: Path, n: int) -> None:
    path = tmp_path / "pids"
    assert path.exists() and len(path.read_text().split()) == n, "the client ran its children"


FORK_HOLDING_STDOUT = """
    pid = os.fork()
    if pid == 0:
        note(os.getpid())
        time.sleep(300)  # stdout still open
        os._exit(0)
    time.sleep(0.2)
"""
DETACHED = """
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            note(os.getpid())
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            time.sleep(300)
        os._exit(0)
    time.sleep(0.2)
"""
PRINTS_A_LOT = f"""
    line = "x" * (1 << 20) + "\\n"
    for _ in range({OUTPUT_LIMIT // (1 << 20) + 8}):
        sys.stdout.write(line)
    sys.stdout.write("y" * {OUTPUT_LIMIT + (1 << 20)} + "\\n")  # one line past the limit
    sys.stderr.write("e" * {OUTPUT_LIMIT + 10})
    sys.stdout.flush()
"""


# -- a process per case ------------------------------------------------------------------
def test_a_client_whose_child_keeps_stdout_open_is_judged_on_its_exit(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, FORK_HOLDING_STDOUT), CASE, TIMEOUT)
    assert not run.timed_out and run.returncode == 0


def test_a_child_that_keeps_stdout_open_is_ended_with_the_client(tmp_path: Path) -> None:
    run_case(_client(tmp_path, FORK_HOLDING_STDOUT), CASE, TIMEOUT)
    _noted(tmp_path, 1)
    assert _left(tmp_path) == []


def test_a_detached_grandchild_is_ended_with_the_client(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, DETACHED), CASE, TIMEOUT)
    _noted(tmp_path, 1)
    assert run.returncode == 0 and _left(tmp_path) == []


def test_a_hung_client_is_ended_with_its_children(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, FORK_HOLDING_STDOUT + "    time.sleep(300)\n"), CASE, 2)
    _noted(tmp_path, 1)
    assert run.timed_out and _left(tmp_path) == []


def test_what_a_client_prints_is_kept_up_to_the_limit(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, PRINTS_A_LOT), CASE, TIMEOUT)
    assert run.returncode == 0 and run.cut > 0
    assert sum(map(len, run.noise)) <= OUTPUT_LIMIT and len(run.stderr) <= OUTPUT_LIMIT


def test_the_verdict_says_the_output_was_cut(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, PRINTS_A_LOT), CASE, TIMEOUT)
    _, tolerated = verdict(CASE, run)
    assert OUTPUT_CUT in [t.note for t in tolerated]


def test_output_within_the_limit_is_not_said_to_be_cut(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, "print('hello')\n"), CASE, TIMEOUT)
    assert run.cut == 0 and run.noise == ["hello"]
    assert OUTPUT_CUT not in [t.note for t in verdict(CASE, run)[1]]


# -- loop mode -----------------------------------------------------------------------------
def test_a_looping_client_that_exits_while_its_child_holds_stdout_is_no_hang(
        tmp_path: Path) -> None:
    cmd = _client(tmp_path, FORK_HOLDING_STDOUT + "    sys.exit(3)\n")
    with LoopClient(cmd, TIMEOUT) as client:
        run = client.run(CASE)
    assert not run.timed_out and run.returncode == 3
    assert _left(tmp_path) == []


class _Waits(queue.Queue):
    """A client's line queue that counts the reads that found nothing in time."""

    empty_reads = 0

    def get(self, block: bool = True, timeout: float | None = None) -> object:
        try:
            return super().get(block, timeout)
        except queue.Empty:
            type(self).empty_reads += 1
            raise


def test_a_looping_client_that_died_is_judged_without_waiting_for_its_stdout_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its stdout closed before its exit was seen: every line it printed was read, so
    nothing more is waited for (a client dying on every case once cost 5 s a case)."""
    monkeypatch.setattr(run_module, "queue", SimpleNamespace(Queue=_Waits, Empty=queue.Empty))
    monkeypatch.setattr(_Waits, "empty_reads", 0)
    script = tmp_path / "client.py"
    script.write_text("import sys\nsys.stdout.close()\nsys.exit('cannot start')\n")
    with LoopClient([sys.executable, str(script)], TIMEOUT) as client:
        runs = [client.run(CASE) for _ in range(3)]
    assert [(r.returncode, r.stderr.strip()) for r in runs] == [(1, "cannot start")] * 3
    assert _Waits.empty_reads == 0


@pytest.mark.parametrize("body", [FORK_HOLDING_STDOUT, DETACHED], ids=["forked", "detached"])
def test_a_looping_client_s_children_are_ended_when_it_is_closed(tmp_path: Path,
                                                                 body: str) -> None:
    with LoopClient(_client(tmp_path, body), TIMEOUT) as client:
        runs = [client.run(CASE) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0]
    _noted(tmp_path, 2)
    assert _left(tmp_path) == []


def test_a_looping_client_that_hangs_is_ended_with_its_children(tmp_path: Path) -> None:
    with LoopClient(_client(tmp_path, DETACHED + "    time.sleep(300)\n"), 2) as client:
        run = client.run(CASE)
        _noted(tmp_path, 1)
        assert run.timed_out and _left(tmp_path) == []


def test_a_looping_client_s_output_is_kept_up_to_the_limit(tmp_path: Path) -> None:
    with LoopClient(_client(tmp_path, PRINTS_A_LOT), TIMEOUT) as client:
        run = client.run(CASE)
        again = client.run(CASE)  # the end line after the cut still ends the case
    assert (run.returncode, again.returncode) == (0, 0) and run.cut > 0
    assert sum(map(len, run.noise)) <= OUTPUT_LIMIT


# -- the pieces ----------------------------------------------------------------------------
def test_every_process_of_a_client_carries_its_mark(tmp_path: Path) -> None:
    client = Client(_client(tmp_path, DETACHED), dict(os.environ), stdin=None)
    assert client.exited(TIMEOUT)
    _noted(tmp_path, 1)
    noted = int((tmp_path / "pids").read_text())
    assert sorted(marked(client.mark)) == sorted([client.proc.pid, noted])  # its supervisor's
    client.end()
    assert marked(client.mark) == [] and _left(tmp_path) == []


def test_this_process_carries_no_mark() -> None:
    assert MARK not in os.environ


DETACHED_UNMARKED = """
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            note(os.getpid())  # then a new program with no environment: no mark to find
            os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)"],
                      {})
        os._exit(0)
    time.sleep(0.2)
"""


def test_a_detached_grandchild_that_cleared_its_environment_is_ended(tmp_path: Path) -> None:
    run = run_case(_client(tmp_path, DETACHED_UNMARKED), CASE, TIMEOUT)
    _noted(tmp_path, 1)
    assert run.returncode == 0 and _left(tmp_path) == []


def test_a_detached_grandchild_that_cleared_its_environment_is_ended_in_loop_mode(
    tmp_path: Path,
) -> None:
    with LoopClient(_client(tmp_path, DETACHED_UNMARKED), TIMEOUT) as client:
        client.run(CASE)
    _noted(tmp_path, 1)
    assert _left(tmp_path) == []
