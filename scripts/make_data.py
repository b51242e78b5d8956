#!/usr/bin/env python3
"""Write the bundled fixtures in data/: a support assistant's turns in all three wire formats.

Byte-identical on every run: each turn is drawn from its own fixed seed, and the fragment
sizes come from streamcalls_lab/calibration.json (see docs/calibration.md).

Usage:  .venv/bin/python scripts/make_data.py [--out DIR]     (default: data/)
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

from streamcalls_lab.fixtures import boundaries, coverage, escape_spans
from streamcalls_lab.generate import (
    GENERATED_FORMATS,
    TimingModel,
    ToolCall,
    Turn,
    compare_with_calibration,
    generate,
    serialize,
    split_args,
)

REPO = Path(__file__).resolve().parents[1]

# -- the documents -----------------------------------------------------------------------
LOOKUP = {"order_id": "A-4417"}
LOOKUP_OTHER = {"order_id": "A-4420"}
SEARCH = {"query": "kettle", "limit": 5}
DESCRIPTION = (
    "Customer Zoë Laurent reports that the glass kettle from order A-4417 arrived with a "
    "cracked lid.\nShe wrote: \"the box looked fine, but the lid was split in two\" and "
    "attached photos of *both* parts 📷.\n"
    "Steps taken so far:\n"
    "- offered a replacement (declined, she wants a refund)\n"
    "- checked stock at the Besançon dépôt: 0 units left\n"
    "The refund of 89.90 € goes back to the original card. The old SKU field still reads "
    "`KT-2 with one backtick, so search by order id instead.\n"
    "> She has contacted us twice already; please reply today.\n"
    "# Follow-up by Friday"
)
TICKET = {
    "order_id": "A-4417",
    "subject": "# Cracked lid on arrival",
    "priority": "high",
    "description": DESCRIPTION,
    "tags": ["damaged", "refund"],
}
ADDRESS = {"order_id": "A-4417", "city": "Besançon", "recipient": "Zoë Laurent"}

BEFORE = "I'll look up order A-4417 first, then open a ticket for the cracked lid."
BEFORE_LOOKUP = "Let me check the status of that order for you."
BEFORE_TWO = "I'll compare both orders for you."
ANSWER = (
    "Your order **A-4417** shipped on 3 March and was delivered on 6 March. The tracking "
    "shows it was left with a neighbour; if that's not right, reply with *both* names and "
    "I'll open a ticket (it usually takes `1-2` business days)."
)


def _escape_cut(args: str, provider: str, seed: str) -> list[int]:
    """The flush model's own cuts, plus one inside the first ``\\n`` escape.

    Real streams do split inside escapes, but rarely enough that a seed may miss; the
    bundled set must show it, so one extra cut is placed there on purpose.
    """
    natural = boundaries(split_args(args, provider, random.Random(seed), parallel=True))
    inside = next(s + 1 for s, e in escape_spans(args) if args[s : e] == "\\n")
    return sorted({*natural, inside})


def _unicode_cut(args: str, provider: str, seed: str) -> list[int]:
    """The model's cuts, plus one between ``\\u00`` and ``e7`` of the first ``\\u`` escape."""
    natural = boundaries(split_args(args, provider, random.Random(seed)))
    inside = next(s + 4 for s, e in escape_spans(args) if e - s == 6)
    return sorted({*natural, inside})


# -- the turns -----------------------------------------------------------------------------
def _two_calls_long_args(provider: str, seed: str) -> Turn:
    ticket = serialize(TICKET, provider, parallel=True)
    return generate(
        [("lookup_order", LOOKUP),
         ToolCall("create_ticket", ticket, cuts=_escape_cut(ticket, provider, seed))],
        provider=provider, before=BEFORE, seed=seed)


def _same_tool_twice(provider: str, seed: str) -> Turn:
    return generate([("lookup_order", LOOKUP), ("lookup_order", LOOKUP_OTHER)],
                    provider=provider, before=BEFORE_TWO, seed=seed)


def _short_call(provider: str, seed: str) -> Turn:
    return generate([("search_orders", SEARCH)], provider=provider, seed=seed)


def _prose_before(provider: str, seed: str) -> Turn:
    return generate([("lookup_order", LOOKUP)], provider=provider, before=BEFORE_LOOKUP,
                    seed=seed)


def _prose_after(provider: str, seed: str) -> Turn:
    return generate([], provider=provider, before=ANSWER, seed=seed)


def _cut_off(provider: str, seed: str) -> Turn:
    return generate([("create_ticket", TICKET)], provider=provider, truncate=0.6, seed=seed)


def _unicode_escape_split(provider: str, seed: str) -> Turn:
    args = serialize(ADDRESS, provider, ascii=True)
    return generate([ToolCall("update_address", args, cuts=_unicode_cut(args, provider, seed))],
                    provider=provider, seed=seed)


TURNS: dict[str, tuple[Callable[[str, str], Turn], str]] = {
    "two-calls-long-args": (
        _two_calls_long_args,
        f"prose, lookup_order, then create_ticket with a {len(DESCRIPTION)}-char description "
        "(`\\n`, quotes, `é`, an emoji, markdown); one split inside a `\\n`"),
    "same-tool-twice": (_same_tool_twice, "two lookup_order calls in one turn"),
    "short-call": (_short_call, "one short search_orders call: too few fragments to fail"),
    "prose-around__i0": (_prose_before, "prose, then lookup_order"),
    "prose-around__i1": (_prose_after, "the answer after the tool result (markdown prose)"),
    "cut-off-mid-args": (_cut_off, "create_ticket, stream ends at 60% of its arguments"),
    "unicode-escape-split": (_unicode_escape_split,
                             "arguments written with `\\u00e7`-style escapes, split inside one"),
}


def build(out: Path) -> list[Path]:
    """Write every fixture under ``out``; returns the files written, sorted."""
    written = []
    for provider in GENERATED_FORMATS:
        for name, (make, _) in TURNS.items():
            turn = make(provider, f"{provider}/{name}")
            path = turn.write(out / provider / f"{name}.sse")
            written += [path, path.with_name(path.name + ".timing.tsv")]
    readme = out / "README.md"
    readme.write_text(_readme(), encoding="utf-8")
    written.append(readme)
    return sorted(written)


def _readme() -> str:
    rows = "\n".join(f"| `{name}.sse` | {what} |" for name, (_, what) in TURNS.items())
    check = compare_with_calibration()
    clock = TimingModel()
    lines = "\n".join(
        f"| {r.provider} | {r.regime} | {r.median:g} | {r.measured_median:g} | "
        f"{r.mean:.2f} | {r.measured_mean:.2f} |" for r in check.itertuples())
    return f"""# Bundled fixtures

Generated, not recorded: `make data` (`scripts/make_data.py`) writes every file here with
`streamcalls_lab.generate`, one fixed seed per turn, so a rerun gives the same bytes (a test
checks). Nothing in this folder comes from a real capture.

Each wire format (`anthropic-messages/`, `openai-chat/`, `openai-responses/`) has the same
support-assistant turns, each a raw SSE body plus a `.sse.timing.tsv` sidecar:

| file | what it shows |
|---|---|
{rows}

`prose-around__i0` and `__i1` are one conversation: the call, then the answer once the tool
result is back. Together the files cover the five fixture properties in every format
(`streamcalls_lab.fixtures.coverage("data")`).

Where fragments fall comes from `streamcalls_lab/calibration.json`, measured on real
captures (`docs/calibration.md`). Anthropic cuts arguments into pieces of mostly 2-12
characters, drawn from the measured single- and parallel-call histograms, and text from
the text histogram. OpenAI Chat sends one o200k token per frame, but re-cuts parallel calls
into 1-6 character pieces. OpenAI Responses sends one token per frame. Two splits are placed
on purpose, since a seed may miss them: inside a `\\n` escape of the long description, and
inside a `\\u00e7` escape.

Timing is an assumption, not a measurement (no capture records when chunks arrived):
`TimingModel()` waits {clock.ttft:g} s before the first token, then {clock.tokens_per_second:g}
tokens/s with lognormal jitter (sigma {clock.jitter:g}), and frames less than
{clock.coalesce * 1000:g} ms apart arrive in one read.

Generated against measured fragment sizes (characters per non-empty fragment;
`compare_with_calibration()`, argument objects shaped like the captured ones):

| format | regime | median | measured | mean | measured |
|---|---|---|---|---|---|
{lines}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "data")
    args = parser.parse_args(argv)
    out: Path = args.out
    written = build(out)
    for stale in sorted(set(out.rglob("*.sse")) | set(out.rglob("*.timing.tsv"))):
        if stale not in written:
            stale.unlink()
    table = coverage(out)
    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files, {total:,} bytes, to {out}")
    print(table.to_string())
    return 0 if table.drop(columns="turns").all(axis=None) else 1


if __name__ == "__main__":
    sys.exit(main())
