"""How long the breaker takes to refresh: a long argument cut at every character, 1-byte reads.

    python benchmarks/bench_breaker.py            # 400 and 2,000 characters, before and after
    python benchmarks/bench_breaker.py --sizes 400 2000 4000 --repeat 3

Not a test: read the numbers. Every figure that matters is a ratio measured in this one run,
so a busy machine shifts them together: the 2,000-character refresh against the
400-character one (about 5x when the work is linear in the argument), and ``run()`` of the
base commit (``--base``, exported with ``git archive`` and imported as
``streamcalls_lab_base``) against ``run()`` now. Times are CPU seconds of this process
(``time.process_time``: the machine may be shared), the best of ``--repeat`` rounds, the
contenders interleaved.

Three refreshes are timed now: *cold* (no tape or diff from an earlier refresh: the first
time a setup is shown), *keystroke* (one character changed in the middle, after a refresh
of the text before it: typing) and *slider* (the split moved, the text unchanged); and the
cold one without ``markdown_bubble``, whose own work grows with the square of the text (it
re-renders the whole bubble's Markdown on every fragment, as a chat UI does), so the rest's
ratio shows how linear the breaker itself is. The base
commit re-ran everything on every refresh, so it has one figure. Both give the same result
(checked here on the summary table; tests/test_breaker.py checks every outcome).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from baseline import library_at

from streamcalls_lab import _replay, breaker
from streamcalls_lab.breaker import Setup
from streamcalls_lab.faults import FAULTS, bubble_text

REPO = Path(__file__).resolve().parents[1]
PROSE = ("the quick brown fox jumps over a lazy dog; invoice for March, run by ops: urgent "
         "request from customer 42 (refund order) status=shipped, address naïve café Zürich "
         '👍 \\n \\"quoted\\"')
WORDS = PROSE.split()


def document(n: int) -> str:
    """An ``n``-character JSON object of prose, escapes and multi-byte characters."""
    rnd = random.Random(n)
    out = '{"summary": "'
    while len(out) < n - 2:
        out += rnd.choice(WORDS) + " "
    return out[: n - 2] + '"}'


LINEAR = {name: cls for name, cls in FAULTS.items() if name != "markdown_bubble"}
"""Every fault but the one whose own work is quadratic: a chat bubble re-renders all of
its Markdown on every fragment."""


def setup(n: int) -> Setup:
    """The issue's case: every character its own fragment, every byte its own read."""
    return Setup(document(n), split=n // 2, every=1, read_size=1)


def base_run(commit: str, into: Path) -> Callable[[Any], Any] | None:
    """``breaker.run`` of ``commit``'s library, imported as ``streamcalls_lab_base``."""
    module = library_at(commit, into, "breaker")
    if module is None:
        return None

    def run(s: Setup) -> Any:
        return module.run(module.Setup(**{f: getattr(s, f) for f in s.__dataclass_fields__}))
    return run


def forget() -> None:
    """No tape, diff or rendered bubble left from an earlier refresh."""
    _replay.LAST.clear()
    breaker.char_diff.cache_clear()
    bubble_text.cache_clear()


def cpu(fn: Callable[[], Any]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def edited(s: Setup) -> Setup:
    mid = len(s.args) // 2
    return replace(s, args=s.args[:mid] + "x" + s.args[mid + 1 :])


def measure(n: int, before: Callable[[Any], Any] | None, repeat: int) -> dict[str, float]:
    s = setup(n)
    best: dict[str, float] = {}

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, seconds), seconds)

    for _ in range(repeat):
        if before is not None:
            keep("base", cpu(lambda: before(s)))
        forget()
        keep("no bubble", cpu(lambda: breaker.run(s, LINEAR)))
        forget()
        keep("cold", cpu(lambda: breaker.run(s)))
        keep("keystroke", cpu(lambda: breaker.run(edited(s))))
        keep("slider", cpu(lambda: breaker.run(replace(edited(s), split=n // 3))))
    if before is not None:
        forget()
        assert before(s).summary().equals(breaker.run(s).summary()), "results differ"
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 2000])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--base", default="e90dab9",
                    help="the commit to measure against (before the shared byte layer)")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="streamcalls-bench-breaker-") as tmp:
        before = base_run(opts.base, Path(tmp)) if opts.base else None
        rows = {n: measure(n, before, opts.repeat) for n in opts.sizes}
    first = opts.sizes[0]
    print(f"breaker refresh, every character a fragment, 1-byte reads (CPU s, best of "
          f"{opts.repeat}):")
    for n, r in rows.items():
        reads = len(breaker.split_reads(breaker.turn_body(setup(n)), 1))
        base = f"base {r['base']:6.3f}  " if "base" in r else ""
        speed = f"  {r['base'] / r['cold']:4.1f}x faster cold" if "base" in r else ""
        print(f"  {n:6} characters, {reads:7} reads: {base}cold {r['cold']:6.3f}  "
              f"keystroke {r['keystroke']:6.3f}  slider {r['slider']:6.3f}  "
              f"cold without markdown_bubble {r['no bubble']:6.3f}{speed}")
    for n, r in rows.items():
        if n != first:
            ratio = {k: r[k] / rows[first][k] for k in r}
            shown = "  ".join(f"{k} {v:4.1f}x" for k, v in ratio.items())
            print(f"  {n} against {first} characters ({n / first:.0f}x the text): {shown}")


if __name__ == "__main__":
    main()
