"""``check_client``: torture any streaming client, in any language, over real HTTP.

``check_handler`` feeds events to a Python class. Most code that streams tool calls is an
SDK, a framework or a client in another language, and it meets the stream as bytes on a
socket. Here each case is served on 127.0.0.1 (any path answers) and the client command
runs once per case with the base URL and fake keys in its environment, or (``loop=True``)
once in all, reading where each case is from its stdin (:mod:`.run` has the protocol). It
prints one JSON line per finished call, ``{"call_id", "tool", "args"}`` (or ``input``, the
parsed value, if that is all it exposes); the harness compares them with the calls sent and
names the bug.

The argument documents and turn builders are :mod:`streamcalls_lab.check`'s (entry points:
``DOCUMENTS``, ``TWO_CALLS``, ``TRUNCATED``, ``Call``, ``turn_bytes``, ``expected_calls``,
``byte_turns``, ``TURN_FORMATS``, ``ESCAPE``, ``in_escape``, ``report_frame``); besides the
provider formats the harness serves the AI SDK UI message stream (``SERVED_FORMATS``), what
an agent server sends on to the browser, for UI clients. What only a
real transport shows (read boundaries, chunked framing, gzip, line ends, comments) and the
stream-level cases (interleaved calls, index reuse, no terminal event) are made here by
rewriting those turns' frames. What a failure is put down to is decided by the bug-class
specs in :mod:`streamcalls_lab.faults`, the same rules ``check_handler`` applies.
"""

from __future__ import annotations

from ._cases import NOT_SERVED, PATHS, SERVED_FORMATS, SUITES, CallTuple, WireCase, cases
from ._check import check_client
from ._clients import (
    CLIENT_HELPERS,
    CLIENT_PACKAGES,
    CLIENTS_DIR,
    REAL_CLIENTS,
    RealClient,
    read_clients,
)
from ._judge import (
    CLASSES,
    Finding,
    Tolerance,
    code_span,
    install_hint,
    judge,
    markdown,
    not_started,
    plain_text,
    report,
    settle,
    tolerated,
    verdict,
)
from .run import LoopClient, Run, accepts_gzip, case_env, client_env, run_case, served_seconds

__all__ = [
    "CLASSES", "CLIENTS_DIR", "CLIENT_HELPERS", "CLIENT_PACKAGES", "NOT_SERVED", "PATHS",
    "REAL_CLIENTS", "SERVED_FORMATS", "SUITES", "CallTuple", "Finding", "LoopClient",
    "RealClient", "Run", "Tolerance", "WireCase", "accepts_gzip", "case_env", "cases",
    "check_client", "client_env", "code_span", "install_hint", "judge", "markdown",
    "not_started", "plain_text", "read_clients", "report", "run_case", "served_seconds",
    "settle", "tolerated", "verdict",
]
