"""``markdown_bubble``: argument fragments appended to the chat bubble and rendered as
Markdown, like prose."""

from __future__ import annotations

import html
from functools import cache, lru_cache

import nh3
from markdown_it import MarkdownIt

from ..accumulate import Accumulator, CallBuffer
from .recognise import (
    _each_call,
    deleted_only,
)
from .registry import BugClass
from .symptom import SURFACE, _args_on_surface

MARKDOWN_SYNTAX = frozenset("*_`\\#>~")
"""The characters a Markdown renderer may eat from a value (what ``markdown_bubble`` loses)."""


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


@lru_cache(maxsize=4096)  # re-rendered on every fragment: the breaker's refreshes repeat them
def bubble_text(source: str) -> str:
    """What a chat bubble keeps of ``source``: Markdown rendered, sanitised, as visible text.

    markdown-it renders, nh3 sanitises (what a bubble would display), and the text
    content is what a copy button or a saved transcript gets: ``*both*`` loses its
    asterisks, ``\\"`` its backslash, a leading ``#`` or ``>`` disappears. Nothing here is
    ever displayed as live HTML; the result is plain text.
    """
    shown = nh3.clean(_markdown().render(source))
    return html.unescape(nh3.clean(shown, tags=set())).strip("\n")


class MarkdownBubble(Accumulator):
    """markdown_bubble: argument fragments are appended to the chat bubble, like prose.

    The bubble's source (``message``) now holds the arguments, and what it keeps is the
    renderer's output, re-rendered on every fragment as chat UIs do: Markdown syntax in
    the values (``*``, backticks, ``#``, ``>``, a ``\\`` before punctuation) is eaten.
    The call's arguments are read back from the bubble, so what is handed on is the
    rendered text, not what was sent. Markdown eating such characters in chat text:
    NullVoxPopuli/emberclear#51 (``\\|`` shown as ``|``), nostrord/nostrord#241
    (``nip44_decrypt_batch`` shown as ``nip44decryptbatch``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.sources: dict[int, str] = {}
        """Each call's part of the bubble source, by its position in ``calls``."""

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        self.add_text(fragment, buf.choice)
        at = next(i for i, other in enumerate(self.calls) if other is buf)
        self.sources[at] = self.sources.get(at, "") + fragment
        buf.parts[:] = [bubble_text(self.sources[at])]


MARKDOWN_BUBBLE = BugClass(
    "markdown_bubble",
    "Appended argument fragments to the chat bubble like prose, and the Markdown "
    "renderer ate characters of the values; keep arguments in the call's buffer, off "
    "the message surface.",
    ("NullVoxPopuli/emberclear#51", "nostrord/nostrord#241"),
    lambda s: (s.aspect == SURFACE and _args_on_surface(s)) or _each_call(
        s, lambda a, b: deleted_only(a, b, MARKDOWN_SYNTAX.__contains__)),
    MarkdownBubble,
    # The chapter's note field, with prose around the call.
    {"args": '{"note": "see *both* attachments", "code": "`x` > 2"}', "split": 16,
     "before": "Let me open a ticket.", "after": " Done."})
