"""How long check_handler takes, in seconds and cases per second, and what a stepper step costs.

Not a test: run ``python benchmarks/bench_check.py`` and read the numbers. The suite is
built once per process (cached), so the first line is that one-off cost. ``--base COMMIT``
instead runs that commit's ``check_handler`` and this one on each handler in turn, in one
process, and prints the ratio of their CPU times.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from baseline import library_at

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


def bench_against(base: str, repeat: int = 3) -> None:
    """``check_handler`` of ``base``'s library and of this one, handler by handler,
    alternating (best of ``repeat`` each): their CPU times and the ratio."""
    with tempfile.TemporaryDirectory() as into:
        old = library_at(base, Path(into))
        if old is None:
            return
        old.check.event_cases(), old.check.byte_turns()  # each suite built once, untimed
        event_cases(), byte_turns()
        pairs = [("correct", old.Accumulator, Accumulator),
                 *((n, old.FAULTS[n], h) for n, h in FAULTS.items() if n in old.FAULTS)]
        totals = [0.0, 0.0]
        for name, before, now in pairs:
            best = [float("inf"), float("inf")]
            for _ in range(repeat):
                for i, (fn, handler) in enumerate(((old.check_handler, before),
                                                   (check_handler, now))):
                    t0 = time.process_time()
                    fn(handler)
                    best[i] = min(best[i], time.process_time() - t0)
            totals = [t + b for t, b in zip(totals, best, strict=True)]
            print(f"{name:26} {base[:7]} {best[0]:6.3f} s  now {best[1]:6.3f} s  "
                  f"{best[0] / best[1]:5.2f}x")
        print(f"all {len(pairs)} handlers: {base[:7]} {totals[0]:.2f} s, now {totals[1]:.2f} s: "
              f"{totals[0] / totals[1]:.2f}x the speed")


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
    if "--base" in sys.argv:
        bench_against(sys.argv[sys.argv.index("--base") + 1])
        sys.exit()
    bench_check()
    if "--no-stepper" not in sys.argv:
        bench_stepper()
