"""The tests the bug classes' ``recognise`` rules are built from, shared by several classes
(a test one class alone uses stands in that class's module)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

from .. import _deepjson as deepjson
from .symptom import CALLS, ERROR, Seen, Sent, Symptom


def deleted_only(sent: str, got: str, deletable: Callable[[str], bool]) -> bool:
    """``got`` is ``sent`` with some characters removed, each of them ``deletable``."""
    if got == sent or len(got) >= len(sent):
        return False
    j = 0
    for c in sent:
        if j < len(got) and got[j] == c:
            j += 1
        elif not deletable(c):
            return False
    return j == len(got)


def interleaves(got: str, a: str, b: str) -> bool:
    """``got`` is ``a`` and ``b`` shuffled together, each in order, and neither alone."""
    if len(got) != len(a) + len(b) or got in (a + b, b + a):
        return False
    can = [True] + [False] * len(b)  # can[j]: got[:i + j] interleaves a[:i] and b[:j]
    for j in range(1, len(b) + 1):
        can[j] = can[j - 1] and b[j - 1] == got[j - 1]
    for i in range(1, len(a) + 1):
        can[0] = can[0] and a[i - 1] == got[i - 1]
        for j in range(1, len(b) + 1):
            can[j] = ((can[j] and a[i - 1] == got[i + j - 1])
                      or (can[j - 1] and b[j - 1] == got[i + j - 1]))
    return can[len(b)]


def parses(text: str) -> bool:
    """A strict JSON parse of ``text`` succeeds (at any depth)."""
    return deepjson.is_json(text)


NO_ARGS: tuple[Any, ...] = ("", {}, None)
"""A call handed on with no arguments: as text, parsed, or null."""


def _blank(call_id: Any) -> bool:
    return call_id is None or call_id == ""


def _same_key(a: Sent, b: Sent) -> bool:
    return a.block is not None and (a.choice, a.block) == (b.choice, b.block)


def _every_difference(s: Symptom, fits: Callable[[Seen, Seen], bool]) -> bool:
    """Some call differs, and every call that differs came out under its own id as
    ``fits(want, have)`` allows; nothing missing, nothing extra."""
    if s.aspect != CALLS:
        return False
    pairs, missing, extra = s.matched
    differ = [(w, h) for w, h in pairs if w != h]
    return bool(differ) and not missing and not extra and all(fits(w, h) for w, h in differ)


def _each_call(s: Symptom, test: Callable[[str, str], bool]) -> bool:
    """Every difference is a call handed on with the right identity, its arguments (as sent)
    changed as ``test(sent, got)`` allows; nothing missing, nothing extra."""
    return not s.parsed and _every_difference(
        s, lambda w, h: h[1] == w[1] and isinstance(h[2], str) and test(w[2], h[2]))


def json_value(text: str) -> Any:
    """The JSON value of ``text``, or ``text`` itself when it does not parse."""
    try:
        return deepjson.loads(text)
    except ValueError:
        return text


def _on(quirk: str, s: Symptom) -> bool:
    """The symptom happened on a stream written with ``quirk``."""
    return quirk in s.quirks


def _early(s: Symptom) -> list[Any] | None:
    """The arguments of every call handed on before its stop, when that explains every
    difference: a call handed on holding a prefix of its arguments (possibly none), or a
    call whose stop never came handed on at all. None otherwise."""
    if s.aspect != CALLS or _on("args_only_in_done", s):  # no fragment there to hand on
        return None
    pairs, missing, extra = s.matched
    if missing:
        return None
    early = []
    # where announcements carry argument text, a call handed on with none dropped it: it
    # was not handed on early (announcement_args_dropped's evidence, not this one)
    empty_is_early = not _on("args_in_announcement", s)
    for want, have in pairs:
        if want == have:
            continue
        args = have[2]
        if s.parsed or have[1] != want[1] or not isinstance(args, str) or not (
                len(args) < len(want[2]) and want[2].startswith(args)) or not (
                args or empty_is_early):
            return None
        early.append(args)
    by_id = {c.call_id: c for c in s.sent if not _blank(c.call_id)}
    shorter = {w[0]: h[2] for w, h in pairs if isinstance(h[2], str)}
    for have in extra:
        call = by_id.get(have[0])
        if call is None and s.ends_early and _blank(have[0]) and isinstance(have[2], str):
            # handed on under no id (a client keyed by id, say) from a cut stream: still a
            # call handed on before its stop, holding the start of one whose stop never came
            due = {w[0] for w in s.expected}
            call = next((c for c in s.sent if have[2] and c.call_id not in due
                         and not c.finished and c.args.startswith(have[2])), None)
        elif call is None and _blank(have[0]) and isinstance(have[2], str) and have[2]:
            # so on a whole stream: the start of a call's arguments handed on under no id,
            # the call under its own id holding less of them (keyed by id, its fragments went
            # to a nameless buffer, handed on before the stop)
            call = next((c for c in s.sent if len(have[2]) < len(c.args)
                         and c.args.startswith(have[2]) and c.call_id in shorter
                         and len(shorter[c.call_id]) < len(have[2])), None)
        if call is None:
            return None
        args = have[2]
        if s.parsed:
            ok = s.ends_early or args == json_value(call.args)
        else:
            ok = isinstance(args, str) and call.args.startswith(args)
        if not ok:
            return None
        early.append(args)
    return early or None


def _held_together(s: Symptom, how: str) -> Iterator[tuple[Sent, Sent, Any]]:
    """``(a, b, holder)`` for each two calls sent one after the other whose arguments one
    call handed on under an id (``holder``) holds together: ``run`` one after the other (and
    maybe more after), ``mixed`` shuffled (each in order, fragment by fragment), ``any``
    either."""
    if s.aspect != CALLS or s.parsed:
        return
    sent_args = {c.args for c in s.sent}
    held = [(i, a) for i, _, a in s.got
            if not _blank(i) and isinstance(a, str) and a not in sent_args]
    for a, b in pairwise(s.sent):
        if not (a.args and b.args):
            continue
        for holder, t in held:
            if ((how != "mixed" and t.startswith(a.args + b.args))
                    or (how != "run" and interleaves(t, a.args, b.args))):
                yield a, b, holder


def _as_text(value: Any, parsed: bool) -> str | None:
    if parsed:
        return deepjson.dumps(value)
    return value if isinstance(value, str) else None


def _anything(s: Symptom) -> bool:
    return True


def _paired(s: Symptom, fits: Callable[[Seen, Seen], bool]) -> list[tuple[Seen, Seen]] | None:
    """Each call expected paired with one handed on that ``fits`` it (``fits(want, have)``),
    one to one and nothing left over; None when they do not pair so."""
    if s.aspect != CALLS or len(s.got) != len(s.expected):
        return None
    left, pairs = list(s.got), []
    for w in s.expected:
        h = next((h for h in left if fits(w, h)), None)
        if h is None:
            return None
        left.remove(h)
        pairs.append((w, h))
    return pairs


def _dropped_on(quirk: str) -> Callable[[Symptom], bool]:
    """Calls never handed on, on a stream written with ``quirk``, and nothing else wrong."""
    def recognise(s: Symptom) -> bool:
        return _on(quirk, s) and s.only_lost
    return recognise


def _index_not_position(s: Symptom) -> bool:
    """Some call was sent under an index that is not its position among its choice's calls
    (indices that start past 0 or skip, Anthropic's counting text blocks, one reused): the
    evidence without which taking an index for a position cannot go wrong."""
    position: dict[Any, int] = {}
    for call in s.sent:
        at = position[call.choice] = position.get(call.choice, -1) + 1
        if call.block is not None and call.block != at:
            return True
    return False


LOOKUP_ERROR = re.compile(r"IndexError|KeyError|TypeError|AttributeError|index out of range|"
                          r"not subscriptable|has no attribute|undefined|null|None")
"""What reading a field or list entry that is not there raises (Python's lookup errors,
JavaScript's ``TypeError: Cannot read properties of undefined``)."""
JSON_ERROR = re.compile(r"(?i)json|unterminated|expecting|decod|SyntaxError|ValueError")
"""What parsing a piece of a JSON document raises (Python's JSONDecodeError and ValueError,
JavaScript's SyntaxError)."""


def _raised_index(s: Symptom) -> bool:
    """The run raised an index error: a call's index taken for a list position (indices
    skip on a gateway's stream, and Anthropic's count the text blocks too). Nothing handed
    on, or only calls handed on whole before it raised (the later ones never were)."""
    if s.hung or not ("IndexError" in s.error or "list index out of range" in s.error):
        return False
    if s.aspect == ERROR:
        return True
    pairs, missing, extra = s.matched
    return (s.aspect == CALLS and bool(missing) and not extra
            and all(w == h for w, h in pairs))
