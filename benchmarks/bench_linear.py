"""Every reader linear in its input: time at twice the size should be about twice.

    python benchmarks/bench_linear.py               # 1,500 then 3,000 calls; depth 100k/200k
    python benchmarks/bench_linear.py --calls 3000 --depth 1000000

One row per registered format: a turn of ``--calls`` calls (all in one run step for the
Assistants reader, where the audit found 1,000 / 2,000 / 4,000 calls taking 3.4 / 17.9 / 35 s),
loaded at that size and at twice it, in one run. One row for a JSON array element nested
``--depth`` deep (the audit: 2,000,000 levels at about 25 µs a level). Line length has its own
benchmark (``bench_long_lines.py``). Times are CPU time (``time.process_time``: the machine
may be shared), best of ``--repeat`` rounds; ratio about 2 is linear, about 4 quadratic.
"""

from __future__ import annotations

import argparse

from _timing import best  # the same CPU-time measure, best of rounds

from streamcalls_lab import load
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.turns import Call, Script, body, write


def turn(name: str, calls: int) -> bytes:
    """A turn of ``calls`` calls, two fragments each, as format ``name`` writes it."""
    prefix = FORMATS[name].call_ids[0]
    script = Script(tuple(Call("f", f"{prefix}{n:08d}", ('{"n": ', f"{n}}}"))
                          for n in range(calls)))
    return body(name, write(name, script))


def deep(depth: int) -> bytes:
    """A JSON array whose one element nests ``depth`` arrays."""
    return b"[" + b"[" * depth + b"]" * depth + b"]"


def _row(label: str, one: bytes, two: bytes, rounds: int) -> None:
    t1 = best(lambda: load(one, strict=False), rounds)
    t2 = best(lambda: load(two, strict=False), rounds)
    note = "" if t2 / max(t1, 1e-9) < 3 else "  <- not linear"
    print(f"  {label:40} {t1:7.3f} s {t2:7.3f} s  ratio {t2 / max(t1, 1e-9):4.1f}{note}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    n = args.calls
    print(f"load() at n and 2n (CPU s, best of {args.repeat}); ratio ~2 linear, ~4 quadratic")
    for name in sorted(FORMATS):
        _row(f"{name}: {n} / {2 * n} calls", turn(name, n), turn(name, 2 * n), args.repeat)
    d = args.depth
    _row(f"json array element: depth {d} / {2 * d}", deep(d), deep(2 * d), args.repeat)


if __name__ == "__main__":
    main()
