"""The generic classes, consulted only when no specific class recognises a symptom:
``crash``, ``identity``, ``missing_call``, ``message``, and ``other``."""

from __future__ import annotations

from .recognise import (
        _anything,
)
from .registry import FOUND_BY_THE_KIT, OTHER, BugClass
from .symptom import CALLS, ERROR, SURFACE

CRASH = BugClass(
    "crash",
    "Raised (or exited non-zero) on a valid stream that was not cut, e.g. on an SSE "
    "block with no data; skip what carries no data, and never let one odd event end "
    "the turn.",
    ("openai/openai-python#2722", "florimondmanca/httpx-sse#35"),
    # a fallback: an error a specific class explains by its evidence is that class's
    lambda s: s.aspect == ERROR and not s.hung,
    fallback=True)

IDENTITY = BugClass(
    "identity",
    "Handed the right arguments on under another id or tool name; take the id and name "
    "from the announcement, once.",
    ("xintaofei/deepseek-acp#4",),
    lambda s: s.aspect == CALLS and len(s.got) == len(s.expected) and all(
        g[2] == w[2] for g, w in zip(s.got, s.expected, strict=True)),
    fallback=True)

MISSING_CALL = BugClass(
    "missing_call",
    "Never handed on a call that was sent and finished; every announced call whose stop "
    "came must come out, zero-argument ones included.",
    ("QwenLM/qwen-code#6249",),
    lambda s: s.aspect == CALLS and len(s.got) < len(s.expected),
    fallback=True)

MESSAGE = BugClass(
    "message",
    "The message surface is not the text deltas joined (text lost, doubled or moved); "
    "build it from the text deltas alone, in order.",
    ("vercel/ai#2568",),
    lambda s: s.aspect == SURFACE,
    fallback=True)

UNEXPLAINED = BugClass(
    OTHER,
    "No class explains it: read the example, and register a class of your own "
    "(faults.register) if it recurs.",
    (FOUND_BY_THE_KIT,),
    _anything,
    fallback=True)
