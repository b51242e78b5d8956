"""serve under a crowd: p50/p95 latency of 200 concurrent clients, as ratios in one run.

Not a test: run ``python benchmarks/bench_serve.py`` and read the numbers. Each request
does ~12 ms of paced work (4 frames, 4 ms apart). Three runs on this machine, one after
another: one client at a time (the floor), the crowd against ``serve`` as it is, and the
crowd against the same server with the stdlib's listen backlog of 5 (the baseline the
issue measured). The ratios are what to compare across machines, never the seconds.
"""

from __future__ import annotations

import http.client
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from streamcalls_lab.traffic import serve as serve_module
from streamcalls_lab.traffic.serve import SSEServer

FRAME = b'data: {"type": "ping"}\n\n'
BODY = FRAME * 4
DELAY = 0.004  # 3 gaps of 4 ms: ~12 ms of work per request
CLIENTS = 200


def _one(port: int) -> float | None:
    """Seconds for one whole response, or None when the connection was reset."""
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/v1/messages", body=b"{}")
        body = conn.getresponse().read()
    except OSError:
        return None
    finally:
        conn.close()
    if body != BODY:
        raise AssertionError("a client got the wrong bytes")
    return time.perf_counter() - t0


def _run(clients: int, concurrent: int, backlog: int | None = None) -> list[float | None]:
    cls = serve_module._HTTPServer
    saved = cls.request_queue_size
    if backlog is not None:
        cls.request_queue_size = backlog
    try:
        with (SSEServer(BODY, default_delay=DELAY) as server,
              ThreadPoolExecutor(concurrent) as pool):
            return list(pool.map(lambda _: _one(server.port), range(clients)))
    finally:
        cls.request_queue_size = saved


def _pcts(times: list[float | None]) -> tuple[float, float, int]:
    done = [t for t in times if t is not None]
    q = statistics.quantiles(done, n=100)
    return q[49], q[94], len(times) - len(done)


def main() -> None:
    floor50, floor95, _ = _pcts(_run(40, 1))
    rows = [("one at a time", floor50, floor95, 0)]
    rows.append(("200 at once", *_pcts(_run(CLIENTS, CLIENTS))))
    rows.append(("200 at once, backlog 5", *_pcts(_run(CLIENTS, CLIENTS, backlog=5))))
    print(f"{'run':24} {'p50 ms':>8} {'p95 ms':>8} {'p50/floor':>10} {'p95/floor':>10} "
          f"{'reset':>6}")
    for name, p50, p95, reset in rows:
        print(f"{name:24} {p50 * 1e3:8.1f} {p95 * 1e3:8.1f} {p50 / floor50:10.1f} "
              f"{p95 / floor95:10.1f} {reset:6d}")
    print(f"p95 with backlog 5 / p95 as served: {rows[2][2] / rows[1][2]:.1f}x")


if __name__ == "__main__":
    main()
