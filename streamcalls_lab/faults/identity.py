"""Classes that misread a call's identity fields: a blank id taken for a new call, a blank
id or name copied over the announced one, a repeated name appended."""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from ..accumulate import Accumulator, CallBuffer, _get
from .recognise import (
    LOOKUP_ERROR,
    NO_ARGS,
    _blank,
    _index_not_position,
    _on,
    _paired,
    _raised_index,
)
from .registry import BugClass
from .symptom import CALLS, ERROR, IDENTITY_FIELDS, Seen, Symptom


class BlankIdNewCall(Accumulator):
    """blank_id_new_call: a fragment that carries an id, even an empty one, starts a call.

    OpenAI sends the id on a call's first fragment only; DashScope's qwen models (through
    OpenRouter too) send ``"id": ""`` on every follow-on fragment, and a client that takes
    any id that differs from the call's for a new call splits one call into two: the real
    one with no arguments, a nameless one with all of them. ThinkInAIXYZ/deepchat#355
    (qwen-plus), the kit's own loader until it folded them (the one real recording it
    misread).
    """

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        call_id, buf = _get(event, "call_id"), super().buffer_for(event)
        if call_id is not None and call_id != buf.call_id:
            self.start_call(event)
            return self.by_key[self.key(event)]
        return buf


class NameConcatenated(Accumulator):
    """name_concatenated: the tool name is joined from every fragment that carries one.

    Names arrive whole in the announcement, but some servers repeat them on every fragment
    (llama.cpp before PR #13800); a client that appends name deltas, as the official
    openai-python helper appends every string it is sent for a call, calls
    ``final_resultfinal_resultfinal_result`` (ggml-org/llama.cpp#13774: pydantic-ai).
    """

    def identify(self, buf: CallBuffer, event: Mapping[str, Any]) -> None:
        tool = _get(event, "tool")
        if tool:
            buf.tool = (buf.tool or "") + tool


def _split_by_blank_id(s: Symptom) -> bool:
    """On a stream whose follow-on fragments had blank ids: a call of blank id handed on
    besides the calls sent (one call split in two), or in place of one, holding the end of
    its arguments (the call started again at each blank id), or all of them where its blank
    identity is not what the stream sent (the call a blank id started replaced the announced
    one, or this was dropped, with no arguments: not a copy of the blank); or a list of
    calls, kept by index, raised on a stream whose every index is its position (the call a
    blank id started took a slot that was not its)."""
    if not _on("blank_identity", s):
        return False
    if s.aspect == ERROR:
        return _raised_index(s) and not _index_not_position(s)
    if s.aspect != CALLS:
        return False
    blank = [a for i, _, a in s.got if _blank(i) and a not in NO_ARGS]
    if blank and (len(s.got) > len(s.expected) or any(
            isinstance(a, str) and c.args != a and c.args.endswith(a) for a in blank
            for c in s.sent)):
        return True
    replaced = _paired(s, lambda w, h: h[2] == w[2] and _blank(h[0]))
    return replaced is not None and any(not (_copied(s, w, 0, h[0]) and _copied(s, w, 1, h[1]))
                                        for w, h in replaced)


def _copied(s: Symptom, want: Seen, field: int, value: Any) -> bool:
    """``value``, handed on as the ``field`` (0: id, 1: tool) of the call ``want``, is that
    field as the call announced it, or a blank that copying what its later fragments sent
    gives: null (a key sent null, or left out) always can be, ``""`` only where one sent
    ``""`` (where the symptom knows)."""
    if value == want[field] or value is None:
        return True
    if value != "":
        return False
    sent = next((c for c in s.sent if c.call_id == want[0]), None)
    return sent is None or sent.blanked is None or IDENTITY_FIELDS[field] in sent.blanked


def _repeated(have: Any, want: Any) -> bool:
    """``have`` is ``want`` itself, or the text ``want`` run together more than once (a
    blank ``have`` is ``want`` not there at all, never run together)."""
    if have == want:
        return True
    return (isinstance(have, str) and isinstance(want, str) and bool(want)
            and len(have) > len(want) and len(have) % len(want) == 0
            and have == want * (len(have) // len(want)))


def _name_repeated(s: Symptom) -> bool:
    """Every call came out with its arguments, its tool name (and maybe its id) the
    announced one run together once per fragment that repeated it."""
    pairs = _paired(s, lambda w, h: h[2] == w[2] and _repeated(h[0], w[0])
                    and _repeated(h[1], w[1]))
    return pairs is not None and any(h[1] != w[1] for w, h in pairs)


_BLANK_READ = re.compile(LOOKUP_ERROR.pattern + r"|ValueError|ValidationError|AssertionError|type")
"""What using a blank id, type or name raises (a lookup, a check or assertion of the type)."""


def _blank_copied(s: Symptom) -> bool:
    """On a stream whose follow-on fragments have a blank identity: the run raised, or every
    call came out with its arguments, its id or name blanked."""
    if not _on("blank_identity", s) or s.hung:
        return False
    if s.aspect == ERROR or (s.aspect == CALLS and s.error):
        # a correct client survives the stream: the blank value, read or checked, broke it
        # (a list of calls indexed out of range is a call too many, not a value read)
        return _BLANK_READ.search(s.error) is not None and not _raised_index(s)
    pairs = _paired(s, lambda w, h: h[2] == w[2] and _copied(s, w, 0, h[0])
                    and _copied(s, w, 1, h[1]))
    return pairs is not None and any(h[:2] != w[:2] for w, h in pairs)


def _run_together(s: Symptom) -> bool:
    """Two calls' arguments run together in one nameless call: a blank id starting a call
    of its own at each call's index splits calls, never joins them (keyed by an id they
    all lack, key_by_id's buffer joins them; only a second mistake, calls looked up by
    their blank name, makes a blank id's calls one)."""
    return s.aspect == CALLS and any(
        _blank(i) and isinstance(a, str) and x.args and y.args and x.args + y.args in a
        for i, _, a in s.got for x, y in pairwise(s.sent))


BLANK_ID_NEW_CALL = BugClass(
    "blank_id_new_call",
    "Took a fragment carrying an id, even an empty one, for a new call, so one call came "
    "out as two (the announced one empty, a nameless one with the arguments); an empty "
    "or null id on a follow-on fragment continues the call at its index.",
    ("ThinkInAIXYZ/deepchat#355", "xintaofei/deepseek-acp#4"),
    _split_by_blank_id,
    BlankIdNewCall,
    # DashScope's shape: "id": "" on every follow-on fragment.
    {"args": '{"location": "San Francisco"}', "split": 13, "tool": "weather",
     "provider": "openai-chat", "quirks": ("blank_identity",), "only": ("openai-chat",)},
    client=True,
    refuted=_run_together)

BLANK_IDENTITY_COPIED = BugClass(
    "blank_identity_copied",
    "Copied a call's id, type or name from every fragment that has the key, so a "
    "follow-on fragment's \"\" or null replaced the announced one (a call to tool \"\", "
    "or a crash on its type); treat an empty or null identity field as absent.",
    ("xintaofei/deepseek-acp#4", "lmstudio-ai/lmstudio-bug-tracker#649",
     "0xPlaygrounds/rig PR #423"),
    _blank_copied,
    client=True)

NAME_CONCATENATED = BugClass(
    "name_concatenated",
    "Appended the tool name (and the id) from every fragment that carries one, so a "
    "server that repeats them on each fragment got final_resultfinal_result; take the "
    "name and id from the announcement, once.",
    ("ggml-org/llama.cpp#13774", "weicj/vLLM-2080Ti-Definitive#127"),
    _name_repeated,
    NameConcatenated,
    # llama.cpp before PR #13800: id, type and name on every fragment.
    {"args": '{"a": 1, "b": 2}', "split": 6, "tool": "final_result",
     "provider": "openai-chat", "quirks": ("repeated_identity",)},
    client=True)
