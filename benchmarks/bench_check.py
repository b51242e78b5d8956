"""How long check_handler takes, in seconds and cases per second, and what a stepper step costs.

Not a test: run ``python benchmarks/bench_check.py`` and read the numbers. The suite is
built once per process (cached), so the first line is that one-off cost.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from streamcalls_lab import FAULTS, Accumulator, Stepper, check_handler
from streamcalls_lab.check import byte_turns, case_count, event_cases

CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES",
                               Path(__file__).resolve().parents[2] / "shared" / "captures"))


def bench_check() -> None:
    t0 = time.perf_counter()
    event_cases()
    byte_turns()
    print(f"suite built once: {case_count()} cases in {time.perf_counter() - t0:.2f} s")
    total = 0.0
    for name, handler in [("correct", Accumulator), *FAULTS.items()]:
        t0 = time.perf_counter()
        report = check_handler(handler)
        took = time.perf_counter() - t0
        total += took
        cases = report.attrs["cases"]
        found = ", ".join(report["class"]) or "clean"
        print(f"{name:16} {took:6.2f} s  {cases / took:8.0f} cases/s  -> {found}")
    print(f"all {1 + len(FAULTS)} handlers: {total:.2f} s")


def bench_stepper(n: int = 3) -> None:
    """The largest captures: building, computing every step once, then moving back."""
    files = sorted(CAPTURES.glob("*/*.sse"), key=lambda p: p.stat().st_size)[-n:]
    if not files:
        print(f"stepper: no captures under {CAPTURES}")
        return
    for path in files:
        t0 = time.perf_counter()
        stepper = Stepper(path)
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        stepper.go(len(stepper) - 1)
        forward = (time.perf_counter() - t0) / len(stepper)
        t0 = time.perf_counter()
        for _ in range(len(stepper) - 1):
            stepper.back()
        back = (time.perf_counter() - t0) / len(stepper)
        print(f"stepper {path.name[:50]:50} {len(stepper):5} events  build {built:.2f} s  "
              f"first pass {forward * 1e3:.2f} ms/step  back {back * 1e6:.1f} us/step "
              f"({forward / back:.0f}x)")


if __name__ == "__main__":
    bench_check()
    if "--no-stepper" not in sys.argv:
        bench_stepper()
