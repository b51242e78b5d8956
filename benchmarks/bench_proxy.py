"""What the recording proxy adds: time to first byte, latency per read, and throughput, each
against talking to the same upstream directly, measured in one run and given as ratios.

Not a test: run ``python benchmarks/bench_proxy.py`` and read the numbers. Direct and proxied
requests alternate, so both see the same machine load. The upstream stamps every read with
the time it sent it, so per-read latency is measured at the client, read by read.
"""

from __future__ import annotations

import http.client
import ssl
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.server import LoopbackServer, StreamHandler, chunk

READS = 40  # reads per stamped stream
GAP = 0.002  # seconds between them: far enough apart that TCP does not merge them
BULK = 4 << 20  # bytes of the throughput stream
ROUNDS = 30


class _Upstream(StreamHandler):
    """``/stamped``: READS SSE frames, each holding its send time; ``/bulk``: BULK bytes."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.start_stream(200, "text/event-stream", close=False)  # kept: see first_byte
        if self.path == "/bulk":
            frame = b"data: " + b"x" * 250 + b"\n\n"
            block = frame * (65536 // len(frame))
            for _ in range(BULK // len(block)):
                self.wfile.write(chunk(block))
        else:
            for _ in range(READS):
                self.wfile.write(chunk(b'data: {"t": %d}\n\n' % time.perf_counter_ns()))
                time.sleep(GAP)
        self.wfile.write(chunk(b""))


_KEPT: dict[str, http.client.HTTPConnection] = {}
_TLS: ssl.SSLContext | None = None  # trusts the bench's own CA when the upstream is TLS


def _connection(base: str) -> http.client.HTTPConnection:
    scheme, _, hostport = base.partition("://")
    host, port = hostport.split(":")
    if scheme == "https":
        return http.client.HTTPSConnection(host, int(port), timeout=30, context=_TLS)
    return http.client.HTTPConnection(host, int(port), timeout=30)


def _open(base: str, path: str, kept: bool = False) -> tuple[http.client.HTTPResponse, float]:
    conn = _KEPT.setdefault(base, _connection(base)) if kept else _connection(base)
    start = time.perf_counter()
    conn.request("POST", path, body=b'{"stream": true}',
                 headers={"authorization": "Bearer sk-bench"})
    return conn.getresponse(), start


def first_byte(base: str, kept: bool = False) -> float:
    """Seconds from sending a request to its first body byte (on a new connection, or on
    one kept open from the last request)."""
    resp, start = _open(base, "/stamped", kept)
    resp.read1(65536)
    took = time.perf_counter() - start
    resp.read()
    return took


def first_byte_kept(base: str) -> float:
    return first_byte(base, kept=True)


def per_read(base: str) -> list[float]:
    """Seconds from the upstream's write to the client's read, for each stamped read."""
    resp, _ = _open(base, "/stamped")
    out, buf = [], b""
    while chunk := resp.read1(65536):
        now = time.perf_counter_ns()
        buf += chunk
        while b"\n\n" in buf:
            frame, buf = buf.split(b"\n\n", 1)
            out.append((now - int(frame[len(b'data: {"t": '):-1])) / 1e9)
    return out


def throughput(base: str) -> float:
    """Bytes per second of a BULK-byte stream."""
    resp, start = _open(base, "/bulk")
    n = 0
    while chunk := resp.read1(1 << 16):
        n += len(chunk)
    return n / (time.perf_counter() - start)


def _compare(name: str, measure: Callable[[str], float | list[float]], direct: str,
             proxied: str, unit: str, scale: float, rounds: int = ROUNDS) -> None:
    got: dict[str, list[float]] = {"direct": [], "proxy": []}
    for _ in range(rounds):
        for label, base in (("direct", direct), ("proxy", proxied)):
            value = measure(base)
            got[label] += value if isinstance(value, list) else [value]
    d, p = (statistics.median(got[k]) for k in ("direct", "proxy"))
    d90, p90 = (statistics.quantiles(got[k], n=10)[-1] for k in ("direct", "proxy"))
    print(f"{name:22} direct {d * scale:9.3f} {unit}  proxy {p * scale:9.3f} {unit}  "
          f"ratio {p / d:5.2f}x  (p90 {d90 * scale:.3f} / {p90 * scale:.3f}; "
          f"{len(got['proxy'])} samples each)")


def _tls_upstream() -> tuple[LoopbackServer, str] | None:
    """The same upstream behind TLS with a throwaway CA (trustme, a test dependency)."""
    global _TLS
    try:
        import trustme
    except ImportError:
        return None
    ca = trustme.CA()
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(server_side)
    _TLS = ssl.create_default_context()
    ca.configure_trust(_TLS)
    up = LoopbackServer(_Upstream, "127.0.0.1", 0)
    up._httpd.socket = server_side.wrap_socket(up._httpd.socket, server_side=True)
    bundle = tempfile.NamedTemporaryFile(suffix=".pem", delete=False)  # noqa: SIM115
    bundle.write(ca.cert_pem.bytes())
    bundle.close()
    return up, bundle.name


def main() -> None:
    with tempfile.TemporaryDirectory() as out, LoopbackServer(_Upstream, "127.0.0.1", 0) as up, \
            RecordingProxy(up.base_url, out) as proxy:
        direct, proxied = up.base_url, proxy.base_url
        for base in (direct, proxied):  # warm up both paths once
            first_byte(base)
        _compare("first byte, new conn", first_byte, direct, proxied, "ms", 1e3)
        _compare("first byte, kept conn", first_byte_kept, direct, proxied, "ms", 1e3)
        _compare("latency per read", per_read, direct, proxied, "ms", 1e3, rounds=ROUNDS // 3)
        _compare("throughput", throughput, direct, proxied, "MB/s", 1e-6, rounds=5)
        saved = sum(1 for p in Path(out).iterdir() if p.suffix == ".sse")
        print(f"captures saved by the proxy meanwhile: {saved}")
    tls = _tls_upstream()
    if tls is None:
        print("TLS upstream: skipped (trustme not installed)")
        return
    up, bundle = tls
    with tempfile.TemporaryDirectory() as out, up, \
            RecordingProxy(f"https://127.0.0.1:{up.port}", out, ca_bundle=bundle) as proxy:
        direct = f"https://127.0.0.1:{up.port}"
        first_byte_kept(direct)
        first_byte_kept(proxy.base_url)
        _compare("TLS first byte, kept", first_byte_kept, direct, proxy.base_url, "ms", 1e3)
    Path(bundle).unlink()


if __name__ == "__main__":
    sys.exit(main())
