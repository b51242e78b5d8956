"""One recording, every split: the re-cuts and producer families a test is parametrised over.

Each :class:`Variant` is the cassette's streamed turn served another way, built by the kit's
own tools: :func:`~streamcalls_lab.fixtures.resplit` moves a call's fragment boundaries
(each boundary a character on; one strictly inside each JSON escape),
:func:`~streamcalls_lab.fixtures.truncate` cuts the stream mid-arguments before any stop
event, the reads are cut inside every multi-byte character or one byte each, and each
producer quirk its wire format can carry (``check.producer_families``, declared in
``producers/quirks.py``) rewrites the turn's calls as such a server sends them. Its ``id`` is
the test parameter's id and says what the case does; ``sent`` and ``expected`` are what
:func:`~.verdict.assert_calls` judges a client's calls against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

import pandas as pd

from .. import turns
from .._calls import calls
from ..check import PRODUCER_SPLITS, TURN_FORMATS, producer_families
from ..faults import Seen, Sent
from ..fixtures import boundaries, escape_spans, resplit, truncate
from ..producers import QUIRKS
from ..traffic.replay import Read, reads
from .cassette import Recording

MAX_MOVES = 6
"""At most this many boundary moves and escape cuts each, spread over the call (a turn of
400 fragments would otherwise be 400 tests)."""


@dataclass(frozen=True)
class Variant:
    id: str
    what: str
    """The case in a sentence."""
    reads: tuple[bytes, ...] | None
    """The body as served, one write each (None: the recording as it is)."""
    sent: tuple[Sent, ...] = ()
    expected: tuple[Seen, ...] = ()
    """The calls a correct client hands on: the complete ones."""
    ends_early: bool = False
    escape_cut: bool = False
    reads_cut: bool = False
    quirks: frozenset[str] = field(default_factory=frozenset)
    prose: str = ""
    """The turn's text a correct client shows (all of it: text is never held back)."""
    recording: int = 0
    """Which recording of the cassette (in recorded order) this case re-serves."""

    def of(self, recording: int) -> Variant:
        """This case for the cassette's ``recording``-th exchange, its id saying so."""
        return replace(self, id=f"exchange{recording + 1}-{self.id}", recording=recording)

    def applied(self, rec: Recording) -> Recording:
        if self.reads is None:
            return rec
        return replace(rec, reads=tuple(Read(0.0, r) for r in self.reads), cut_off=None)


def _table(body: bytes) -> pd.DataFrame:
    return calls(body)


def _sent(table: pd.DataFrame) -> tuple[Sent, ...]:
    return tuple(Sent(r.call_id, r.tool, r.args, r.block, r.choice, bool(r.complete))
                 for r in table.itertuples())


def _expected(table: pd.DataFrame) -> tuple[Seen, ...]:
    done = table[table["complete"].astype(bool)]
    return tuple((r.call_id, r.tool, r.args) for r in done.itertuples())


def prose(body: bytes) -> str:
    """A streamed body's text, its fragments joined."""
    from ..loader import load

    rows = load(body, strict=False)  # the text alone: a producer variant may be a strict error
    return "".join(str(f) for f in rows.loc[rows["kind"] == "text_delta", "fragment"]
                   if isinstance(f, str))


def _spread(items: Sequence, n: int) -> list:
    if len(items) <= n:
        return list(items)
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


def _fragments(body: bytes, choice: object, block: object) -> list[str]:
    """One call's non-empty argument fragments, as sent."""
    from ..loader import load

    rows = load(body, strict=False)  # the text alone: a producer variant may be a strict error
    mine = rows[(rows["kind"] == "args_delta") & (rows["block"] == block)
                & (rows["choice"] == choice)].dropna(subset=["fragment"])
    return [str(x) for x in mine["fragment"] if str(x)]


def _byte_cuts(body: bytes, points: Sequence[int]) -> tuple[bytes, ...]:
    edges = [0, *sorted(set(points)), len(body)]
    return tuple(body[i:j] for i, j in pairwise(edges) if j > i)


def recuts(rec: Recording, *, max_moves: int = MAX_MOVES) -> list[Variant]:
    """The re-cuts of a recording's turn (see the module docstring); the recording as it is
    first."""
    body = rec.body
    table = _table(body)
    sent, expected = _sent(table), _expected(table)
    base = Variant("as-recorded", f"{rec} as recorded, read by read", None, sent, expected,
                   ends_early=rec.cut_off is not None)
    out = [base]
    if rec.cut_off is not None or not len(table):
        # a cut recording is replayed as cut; a turn with no call has no splits
        return [replace(base, prose=prose(body))]
    # the longest call: where boundaries and escapes are
    call = int(table["chars"].astype(int).to_numpy().argmax())
    args = str(table["args"].iloc[call])
    row = table.iloc[call]
    cuts = boundaries(_fragments(body, row["choice"], row["block"]))
    for i, b in _spread(list(enumerate(cuts)), max_moves):
        if b + 1 >= len(args):
            continue
        moved = sorted({*cuts[:i], b + 1, *cuts[i + 1:]})
        out.append(Variant(f"boundary{i + 1}-moved-to-char{b + 1}",
                           f"call {call}'s fragment boundary {i + 1} moved from character {b} "
                           f"to {b + 1}", (resplit(body, moved, call=call),), sent, expected))
    for start, end in _spread(escape_spans(args), max_moves):
        k = start + 1
        out.append(Variant(f"cut-inside-escape-{args[start:end]!r}-at-char{k}".replace("'", ""),
                           f"call {call}'s arguments cut at character {k}, inside the escape "
                           f"{args[start:end]}", (resplit(body, sorted({*cuts, k}), call=call),),
                           sent, expected, escape_cut=True))
    inside = [k for k in range(1, len(body)) if body[k] & 0xC0 == 0x80
              and body[k - 1] & 0xC0 != 0x80]
    if inside:
        out.append(Variant("reads-cut-inside-every-multibyte-char",
                           f"the body's reads cut inside each of its {len(inside)} multi-byte "
                           "characters", _byte_cuts(body, inside), sent, expected,
                           reads_cut=True))
    out.append(Variant("one-byte-per-read", f"the {len(body)} bytes in reads of one byte",
                       tuple(body[i:i + 1] for i in range(len(body))), sent, expected,
                       reads_cut=True))
    text = prose(body)  # a re-cut moves where the prose is split, never what it says
    out = [replace(v, prose=text) for v in out]
    if len(args) > 1:
        cut = truncate(body, call=call)
        out.append(Variant("cut-mid-arguments-before-stop",
                           f"the stream cut after a whole frame inside call {call}'s arguments, "
                           "no stop event after it", (cut,), sent, _expected(_table(cut)),
                           ends_early=True, prose=prose(cut)))
    return out


def _segments(body: bytes, table: pd.DataFrame) -> list[turns.Segment]:
    """The turn as the kit's writer scripts it: its prose (in the fragments it came in) and
    its calls (each call's arguments in two fragments, cut as the kit's producer cases cut),
    in the order they began."""
    from ..loader import load

    k = PRODUCER_SPLITS[1]
    calls_in_order = [turns.Call(str(r.tool), str(r.call_id), (r.args[:k], r.args[k:]))
                      for r in table.itertuples()]
    out: list[turns.Segment] = []
    prose: list[str] = []
    taken = 0
    for kind, fragment in load(body)[["kind", "fragment"]].itertuples(index=False):
        if kind == "text_delta" and isinstance(fragment, str) and fragment:
            prose.append(fragment)
        elif kind == "call_start" and taken < len(calls_in_order):
            if prose:
                out.append(turns.Text(tuple(prose)))
                prose = []
            out.append(calls_in_order[taken])
            taken += 1
    out += calls_in_order[taken:]  # a call its format announces without a start event
    if prose:
        out.append(turns.Text(tuple(prose)))
    return out


def producers(rec: Recording) -> list[Variant]:
    """The turn (its prose and its calls) as a server with each producer quirk its format can
    carry sends it (see :func:`_segments`)."""
    table = _table(rec.body)
    if not len(table) or rec.cut_off is not None:
        return []
    fmt = str(table["provider"].iloc[0])
    if fmt not in TURN_FORMATS:
        return []
    segments = _segments(rec.body, table)
    out = []
    for quirk in producer_families(fmt):
        turn = turns.script(segments, quirks=frozenset({quirk}))
        frames = turns.write(fmt, turn)
        body = turns.body(fmt, frames)
        want = turns.expected_calls(frames, turn)
        out.append(Variant(f"producer-{quirk}", f"the turn's calls from a server that "
                           f"{QUIRKS[quirk].summary[0].lower()}{QUIRKS[quirk].summary[1:]}",
                           tuple(r.data for r in reads(body)),
                           tuple(Sent(c["call_id"], c["tool"], c["args"], c["block"],
                                      c.get("choice")) for c in want),
                           tuple((c["call_id"], c["tool"], c["args"]) for c in want),
                           quirks=frozenset({quirk}), prose=prose(body)))
    return out
