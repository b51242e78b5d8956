"""Every bug class the kit knows, as one spec each: its handler, how it is recognised, its
setup in the breaker, its broken client, and where it was reported.

A :class:`BugClass` is the single place a class is defined, and each class stands in one
module of this package (or one per small family of classes) with its handler, recogniser
and preset beside its spec; :mod:`.registry` holds the machinery. ``check_handler`` and the torture
harness both describe what went wrong in a :class:`Symptom` (format-neutral: what was sent,
what was expected, what was handed on, the error, the message surface, how the stream was
cut) and ask every spec's ``recognise`` whether it is that class's symptom; the breaker's
presets, the torture clients' ``--bug`` names, ``FAULTS`` and ``CLASSES`` are read from the
specs too. :func:`register` adds a class of your own, and every one of those sees it.

Each handler is the correct :class:`~streamcalls_lab.accumulate.Accumulator` with
exactly one decision changed, so running it next to the correct one shows what that one
decision costs. The docstrings name the bug and a public report of it.
"""

from __future__ import annotations

from . import completion, fragments, generic, identity, keying, producer, reading, surface
from .completion import EofAsStop as EofAsStop
from .completion import LenientParse as LenientParse
from .completion import ParseToFinish as ParseToFinish
from .completion import lenient_value as lenient_value
from .fragments import _ESCAPE as _ESCAPE
from .fragments import ESCAPE as ESCAPE
from .fragments import DecodeEach as DecodeEach
from .fragments import Trim as Trim
from .fragments import _escape_char as _escape_char
from .fragments import partly_decoded as partly_decoded
from .fragments import unescape_fragment as unescape_fragment
from .identity import BlankIdNewCall as BlankIdNewCall
from .identity import NameConcatenated as NameConcatenated
from .identity import _blank_copied as _blank_copied
from .identity import _name_repeated as _name_repeated
from .identity import _repeated as _repeated
from .identity import _split_by_blank_id as _split_by_blank_id
from .keying import IndexAsPosition as IndexAsPosition
from .keying import KeyByID as KeyByID
from .keying import KeyByLast as KeyByLast
from .keying import KeyByName as KeyByName
from .keying import MergeOnReuse as MergeOnReuse
from .keying import OneChoice as OneChoice
from .keying import _key_by_id as _key_by_id
from .keying import _merged as _merged
from .keying import _merged_parsed as _merged_parsed
from .producer import TOOL_STOPS as TOOL_STOPS
from .producer import AnnouncementArgsDropped as AnnouncementArgsDropped
from .producer import DeltaOnly as DeltaOnly
from .producer import EmptyArgsDropped as EmptyArgsDropped
from .producer import FinishGate as FinishGate
from .producer import OneCallPerChunk as OneCallPerChunk
from .producer import _no_args_from_done as _no_args_from_done
from .producer import _no_parse_no_call as _no_parse_no_call
from .producer import _null_arguments as _null_arguments
from .reading import _LINE_ENDS as _LINE_ENDS
from .reading import SEPARATORS as SEPARATORS
from .reading import DecodeChunks as DecodeChunks
from .reading import Splitlines as Splitlines
from .reading import _content_encoding as _content_encoding
from .reading import _cut_at_separator as _cut_at_separator
from .reading import _decode_chunks as _decode_chunks
from .reading import split_characters_lost as split_characters_lost
from .recognise import NO_ARGS as NO_ARGS
from .recognise import _anything as _anything
from .recognise import _as_text as _as_text
from .recognise import _blank as _blank
from .recognise import _dropped_on as _dropped_on
from .recognise import _each_call as _each_call
from .recognise import _early as _early
from .recognise import _every_difference as _every_difference
from .recognise import _held_together as _held_together
from .recognise import _on as _on
from .recognise import _paired as _paired
from .recognise import _raised_index as _raised_index
from .recognise import _same_key as _same_key
from .recognise import deleted_only as deleted_only
from .recognise import interleaves as interleaves
from .recognise import json_value as json_value
from .recognise import parses as parses
from .registry import CLASSES as CLASSES
from .registry import CORRECT as CORRECT
from .registry import FAULTS as FAULTS
from .registry import FOUND_BY_THE_KIT as FOUND_BY_THE_KIT
from .registry import OTHER as OTHER
from .registry import SPECS as SPECS
from .registry import BugClass as BugClass
from .registry import _set as _set
from .registry import classify as classify
from .registry import cover as cover
from .registry import refuted as refuted
from .registry import register as register
from .registry import summary as summary
from .registry import through as through
from .registry import unregister as unregister
from .registry import weakly as weakly
from .surface import MARKDOWN_SYNTAX as MARKDOWN_SYNTAX
from .surface import MarkdownBubble as MarkdownBubble
from .surface import _markdown as _markdown
from .surface import bubble_text as bubble_text
from .symptom import CALLS as CALLS
from .symptom import ERROR as ERROR
from .symptom import SURFACE as SURFACE
from .symptom import Seen as Seen
from .symptom import Sent as Sent
from .symptom import Symptom as Symptom
from .symptom import _args_on_surface as _args_on_surface
from .symptom import _calls_shown as _calls_shown
from .symptom import _order_free as _order_free
from .symptom import describe as describe
from .symptom import symptoms as symptoms

__all__ = [
    "CALLS",
    "CLASSES",
    "CORRECT",
    "ERROR",
    "ESCAPE",
    "FAULTS",
    "FOUND_BY_THE_KIT",
    "MARKDOWN_SYNTAX",
    "NO_ARGS",
    "OTHER",
    "SEPARATORS",
    "SPECS",
    "SURFACE",
    "TOOL_STOPS",
    "AnnouncementArgsDropped",
    "BlankIdNewCall",
    "BugClass",
    "DecodeChunks",
    "DecodeEach",
    "DeltaOnly",
    "EmptyArgsDropped",
    "EofAsStop",
    "FinishGate",
    "IndexAsPosition",
    "KeyByID",
    "KeyByLast",
    "KeyByName",
    "LenientParse",
    "MarkdownBubble",
    "MergeOnReuse",
    "NameConcatenated",
    "OneCallPerChunk",
    "OneChoice",
    "ParseToFinish",
    "Seen",
    "Sent",
    "Splitlines",
    "Symptom",
    "Trim",
    "bubble_text",
    "classify",
    "cover",
    "deleted_only",
    "describe",
    "interleaves",
    "json_value",
    "lenient_value",
    "parses",
    "partly_decoded",
    "refuted",
    "register",
    "split_characters_lost",
    "summary",
    "symptoms",
    "through",
    "unescape_fragment",
    "unregister",
    "weakly",
]

# the classes, in report order (the order reports, ``FAULTS`` and ties in ``cover`` follow)
_set([
    fragments.TRIM,
    fragments.DECODE_EACH,
    producer.ANNOUNCEMENT_ARGS_DROPPED,
    completion.EOF_AS_STOP,
    completion.PARSE_TO_FINISH,
    completion.LENIENT_PARSE,
    keying.KEY_BY_NAME,
    identity.BLANK_ID_NEW_CALL,
    identity.BLANK_IDENTITY_COPIED,
    keying.KEY_BY_ID,
    keying.ONE_CHOICE,
    keying.KEY_BY_LAST,
    reading.DECODE_CHUNKS,
    surface.MARKDOWN_BUBBLE,
    identity.NAME_CONCATENATED,
    producer.FINISH_GATE,
    producer.CHOICES_INDEX0,
    producer.EMPTY_ARGS_DROPPED,
    producer.NULL_ARGUMENTS,
    producer.ONE_CALL_PER_CHUNK,
    producer.DELTA_ONLY,
    reading.SPLITLINES,
    keying.MERGED_CALLS,
    keying.INDEX_AS_POSITION,
    completion.LOST_ON_TRUNCATION,
    reading.CONTENT_ENCODING,
    generic.CRASH,
    generic.IDENTITY,
    generic.MISSING_CALL,
    generic.MESSAGE,
    generic.UNEXPLAINED,
])
