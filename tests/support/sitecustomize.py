"""A socket guard for the traced programs in clients/tracers (this folder is put on their
PYTHONPATH by tests/tracing/test_live.py):
any connection to an address that is not loopback is refused and written down in
STREAMCALLS_GUARD_LOG, so a tracer that phones home fails the test instead of leaving."""

import ipaddress
import os
import socket

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _allowed(address: object) -> bool:
    if not isinstance(address, tuple):
        return True  # a Unix socket
    try:
        return ipaddress.ip_address(str(address[0])).is_loopback
    except ValueError:
        return str(address[0]) == "localhost"


def _refuse(address: object) -> None:
    with open(os.environ["STREAMCALLS_GUARD_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{address!r}\n")
    raise ConnectionRefusedError(f"socket guard: {address!r} is not loopback")


def connect(self: socket.socket, address: object) -> None:
    if not _allowed(address):
        _refuse(address)
    return _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    if not _allowed(address):
        _refuse(address)
    return _connect_ex(self, address)


if os.environ.get("STREAMCALLS_GUARD_LOG"):
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
