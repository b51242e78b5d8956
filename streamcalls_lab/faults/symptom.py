"""The symptom: what went wrong in one run of one case, in no wire format, as every
recogniser reads it (``check_handler`` and the torture judge both build it)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

from ..wording import clauses, count


class Sent(NamedTuple):
    """One call as the stream sent it (a cut-off call with the arguments it got so far)."""

    call_id: str | None
    tool: str | None
    args: str
    block: int | None = None
    choice: int | None = None
    finished: bool = True
    """Its stop (or done event) came; False: the stream was cut before it (the judge reads
    this from the body; a handler's own cases end every call)."""
    blanked: frozenset[str] | None = None
    """The identity fields (``call_id``, ``tool``) some fragment after its announcement sent
    as ``""`` (the judge reads them from the body); None: not known. A client that copies
    every identity key as sent hands on ``""`` only for a field sent so."""
    fragments: tuple[str, ...] | None = None
    """Its argument text in the fragments it was sent in (the judge reads them from the
    body); None: not known. Where a call is handed on early, they say at which fragment."""
    anonymous: bool | None = None
    """Some of its argument text came in a fragment after its announcement that names no call
    (no id, or a blank one): a client finding fragments by id cannot hand it on whole under
    its id (the judge reads it from the body); None: not known."""
    renamed: bool | None = None
    """Its stop (or done) event named it by another id than its announcement did (the judge
    reads it from the body); None: not known."""
    stop_unnamed: bool | None = None
    """A stop (or done) event of its own came for it (Anthropic's block stop; not Chat's
    finish, which ends every call) and none named it by an id: a client finding a stop's call
    by id finds none, whatever its fragments sent (the judge reads it from the body); None:
    not known."""


IDENTITY_FIELDS = ("call_id", "tool")
"""A call's identity fields, in :data:`Seen`'s order (what :attr:`Sent.blanked` names)."""


Seen = tuple[Any, Any, Any]
"""A call as handed on or expected: ``(call_id, tool, args)``, ``args`` the exact text or,
when a client shows only that, the parsed value."""


ERROR, SURFACE, CALLS = "error", "surface", "calls"
"""The three parts of a run a symptom can be about: a raise or exit, the message surface,
the calls handed on."""


@dataclass(frozen=True)
class Symptom:
    """One thing that went wrong in one run of one case, as every recogniser reads it.

    ``check_handler`` and the torture judge build these with :func:`symptoms` from what
    they ran: the handler, or a client process, is invisible here, and so is the wire
    format. ``aspect`` says which part of the run went wrong; the rest is the whole run.
    """

    aspect: str
    """:data:`ERROR` (it raised, exited non-zero or hung), :data:`SURFACE` (the message
    surface is not the text) or :data:`CALLS` (the calls handed on are not the ones sent)."""
    sent: tuple[Sent, ...]
    """Every call the stream sent, in announcement order, a cut-off one included."""
    expected: tuple[Seen, ...]
    """What a correct handler hands on."""
    got: tuple[Seen, ...]
    """What was handed on."""
    parsed: bool = False
    """``args`` are compared as parsed values (a client that shows only ``input``)."""
    error: str = ""
    """``raised <Type>: <message>``, ``exited <n>: <last line>``, or empty."""
    hung: bool = False
    """The run never ended (a client process that did not exit)."""
    message: str | None = None
    """The message surface, where the handler has one."""
    text: str = ""
    """The text deltas sent, joined: what the message surface should be."""
    ends_early: bool = False
    """The stream stops before its end: a call's stop or the end of the turn never comes."""
    escape_cut: bool = False
    """A fragment boundary falls inside a JSON escape."""
    reads_cut: bool = False
    """The bytes came in reads that may end inside a character (not as decoded events)."""
    quirks: frozenset[str] = frozenset()
    """The producer quirks the stream was written with (``producers.QUIRKS`` names them): a
    class of what clients assume about producers is recognised only on such a stream."""
    content_encoding: str = ""
    """The content-encoding the body was served with because the client asked for it
    (``gzip``), or empty: the bytes came as they are."""

    @cached_property
    def matched(self) -> tuple[tuple[tuple[Seen, Seen], ...], tuple[Seen, ...], tuple[Seen, ...]]:
        """``(pairs, missing, extra)``: each expected call with the first call handed on
        under its id, the expected calls never handed on, and the calls handed on beyond
        those (unknown ids, or an id handed on again)."""
        left = list(self.got)
        pairs, missing = [], []
        for want in self.expected:
            have = next((g for g in left if g[0] == want[0]), None)
            if have is None:
                missing.append(want)
            else:
                left.remove(have)
                pairs.append((want, have))
        return tuple(pairs), tuple(missing), tuple(left)

    @property
    def missing(self) -> tuple[Seen, ...]:
        return self.matched[1]

    @property
    def only_lost(self) -> bool:
        """Calls never handed on, and nothing else wrong: every call handed on is one
        expected, as expected, and none beyond them."""
        pairs, missing, extra = self.matched
        return (self.aspect == CALLS and bool(missing) and not extra
                and all(w == h for w, h in pairs))


def _order_free(calls: Iterable[Seen]) -> list[str]:
    return sorted(json.dumps(c, sort_keys=True, default=str) for c in calls)


def symptoms(*, sent: Sequence[Sent], expected: Sequence[Seen], got: Sequence[Seen],
             parsed: bool = False, error: str = "", hung: bool = False,
             message: str | None = None, text: str = "", ends_early: bool = False,
             escape_cut: bool = False, reads_cut: bool = False,
             quirks: frozenset[str] = frozenset(),
             content_encoding: str = "") -> list[Symptom]:
    """What went wrong in one run, one :class:`Symptom` per part (none: nothing did).

    An error counts unless the stream was cut (a client that exits non-zero after a cut
    stream, with every finished call handed on, did nothing wrong); when it left no call
    handed on, the calls are not judged as well. Calls are compared in any order.
    """
    base = Symptom(CALLS, tuple(sent), tuple(expected), tuple(got), parsed, error, hung,
                   message, text, ends_early, escape_cut, reads_cut, frozenset(quirks),
                   content_encoding)
    same = tuple(got) == tuple(expected) or _order_free(got) == _order_free(expected)
    out = []
    failed = hung or bool(error and not ends_early and (not got or same))
    if failed:
        out.append(replace(base, aspect=ERROR))
    if message is not None and message != text:
        out.append(replace(base, aspect=SURFACE))
    if not same and not (failed and (hung or not got)):
        out.append(base)
    return out


def _calls_shown(calls: Sequence[Seen]) -> str:
    return repr([tuple(c) for c in calls])


def _args_on_surface(s: Symptom) -> bool:
    return s.message is not None and any(c.args[:6] in s.message for c in s.sent if c.args)


def describe(s: Symptom) -> tuple[str, str, str]:
    """``(expected, got, detail)`` as a report shows them: the smallest difference."""
    how = " (compared as parsed input)" if s.parsed else ""
    if s.aspect == ERROR:
        if s.hung:
            return _calls_shown(s.expected), _calls_shown(s.got), s.error + how
        if s.got:
            return (_calls_shown(s.expected), _calls_shown(s.got),
                    "handed on the right calls, then " + s.error + how)
        return _calls_shown(s.expected), s.error, "nothing handed on" + how
    if s.aspect == SURFACE:
        on_it = "argument text on the message surface" if _args_on_surface(s) else (
            "the message surface is not the text deltas")
        return repr(s.text), repr(s.message), on_it
    pairs, missing, extra = s.matched
    differ = [(w, h) for w, h in pairs if w != h]
    detail = clauses(
        (differ, f"{count(len(differ), 'call')} handed on with other arguments or tool"),
        (extra, f"{count(len(extra), 'call')} handed on that a correct handler holds back or "
                "never sees"),
        (missing, f"{count(len(missing), 'call')} never handed on"),
        (s.error, s.error)) + how
    if len(differ) + len(extra) + len(missing) == 1:
        want, have = (differ[0] if differ else (None, extra[0]) if extra else (missing[0], None))
        return ("nothing" if want is None else repr(want[2]),
                "nothing" if have is None else repr(have[2]), detail)
    return _calls_shown(s.expected), _calls_shown(s.got), detail
