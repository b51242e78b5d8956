"""redact in every registered format, read from its declaration alone: a redacted turn reads
as the same turn (with every quirk its writer can write), a call's arguments are one document
however they are split, and what is kept is the format's own short list.

A format added the way ``docs/contract.md`` says (one module, one registry line) is covered
here with no other edit.
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import uuid
from typing import Any

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab.producers.quirks import with_implied
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.providers.recognise import ByType
from streamcalls_lab.redact import Redactor, policy
from streamcalls_lab.turns import Call, Script, WireFrame, body, write

from .conftest import REPO
from .support.eventstream_turns import decode, event, header, string
from .support.format_samples import sample

NAMES = sorted(FORMATS)
CASES = [(name, quirk) for name in NAMES for quirk in (None, *FORMATS[name].quirks)]
CANARY = "Zcanary"
SCHEMA_KEYS = ("name", "status", "role", "model", "type", "object", "event_type",
               "finish_reason", "toolName", "toolCallName")
"""Keys that are schema in some format: a canary under one a format does not keep must go."""


def _redact(name: str, raw: bytes) -> bytes:
    return Redactor("formats").capture(raw, ndjson=FORMATS[name].framing == "ndjson")


def _written(name: str, turn: Script) -> tuple[list[WireFrame], bytes]:
    frames = write(name, turn)
    return frames, body(name, frames)


def _reading(raw: bytes) -> dict[str, Any]:
    """What a reader makes of a capture, values aside: its format, its calls (their ids as a
    pattern of which repeat, their tools, fragment counts and lengths, validity)."""
    rows = scl.load(raw, strict=False)
    table = scl.calls(rows)
    ids = table.call_id.tolist()
    fragments = rows[rows.kind == "args_delta"]
    return {
        "provider": sorted(set(rows.provider)),
        "calls": len(table),
        "ids": [ids.index(i) for i in ids],
        "tools": table.tool.tolist(),
        "n_deltas": table.n_deltas.tolist(),
        "valid_json": table.valid_json.tolist(),
        "fragments": list(zip(fragments.block.tolist(), fragments.chars.tolist(),
                              fragments.wire_chars.tolist(), strict=True)),
        "kinds": rows.kind.astype(str).tolist(),
    }


# -- a redacted turn reads as the same turn ---------------------------------------------------
@pytest.mark.parametrize(("name", "quirk"), CASES)
def test_a_redacted_turn_reads_as_the_same_format_with_the_same_calls(
        name: str, quirk: str | None) -> None:
    quirks = with_implied(frozenset(() if quirk is None else (quirk,)))
    _, raw = _written(name, dataclasses.replace(sample(name), quirks=quirks))
    redacted = _redact(name, raw)
    assert len(redacted) == len(raw)
    assert _reading(redacted) == _reading(raw)


@pytest.mark.parametrize(("name", "quirk"), CASES)
def test_a_redacted_turn_keeps_no_argument_or_text_value(name: str, quirk: str | None) -> None:
    quirks = with_implied(frozenset(() if quirk is None else (quirk,)))
    _, raw = _written(name, dataclasses.replace(sample(name), quirks=quirks))
    said = _redact(name, raw).decode("utf-8", "replace")
    for value in ("Montréal", "Zqueb", "Amérique", "Toronto", "looking", "things"):
        assert value not in said, value


# -- a call's arguments are one document, however they are split --------------------------------
SECRET = '{"note": "say \\"hunter2-SECRET\\" or \\u0053ECRET2", "pin": 987654, "ok": true}'
"""Arguments whose values hold an escaped quote and a ``\\uXXXX`` escape (``S``)."""
LEAKS = ("hunter2", "SECRET", "ECRET2", "987654", "u0053")


def _secret_turn(name: str, splits: list[tuple[str, ...]],
                 quirks: frozenset[str] = frozenset()) -> Script:
    """One call per way of splitting the secret, each its own document."""
    prefix, size = FORMATS[name].call_ids
    return Script(tuple(Call("lookup", prefix + f"Q{n:0{size - 1}d}"[:size], fragments)
                        for n, fragments in enumerate(splits)), quirks=quirks)


def _splits(name: str) -> list[tuple[str, ...]]:
    """The secret cut in two at every offset (inside each escape too), and in one-character
    fragments; whole where the format sends each call whole."""
    if FORMATS[name].calls_whole:
        return [(SECRET,)]
    return [*((SECRET[:k], SECRET[k:]) for k in range(1, len(SECRET))), tuple(SECRET)]


def _assert_no_leak(name: str, raw: bytes, calls: int) -> None:
    redacted = _redact(name, raw)
    table = scl.calls(redacted, strict=False)
    said = "\n".join([redacted.decode("utf-8", "replace"), *table.args.astype(str)])
    for leak in LEAKS:
        assert leak not in said, leak
    assert len(table) == calls and table.valid_json.all()


@pytest.mark.parametrize("name", NAMES)
def test_a_secret_split_at_every_offset_never_survives(name: str) -> None:
    splits = _splits(name)
    _assert_no_leak(name, _written(name, _secret_turn(name, splits))[1], len(splits))


@pytest.mark.parametrize("name", [n for n in NAMES if "args_in_announcement" in FORMATS[n].quirks])
def test_a_secret_split_between_the_announcement_and_its_deltas_never_survives(
        name: str) -> None:
    """The announcement's argument text is the document's first fragment: a delta that
    starts inside its escaped string is read as the string it continues."""
    splits = [(SECRET[:k], SECRET[k:]) for k in range(1, len(SECRET))]
    turn = _secret_turn(name, splits, with_implied(frozenset(("args_in_announcement",))))
    _assert_no_leak(name, _written(name, turn)[1], len(splits))


def test_a_document_keeps_its_fragment_count_and_each_fragments_length() -> None:
    raw = _written("gemini-interactions", _secret_turn(
        "gemini-interactions", [('{"note": "say \\', '"hunter2', '-SECRET\\" or \\u00',
                                 '53ECRET2", "pin": 98', '7654, "ok": true}')]))[1]
    before, after = scl.load(raw), scl.load(_redact("gemini-interactions", raw))
    cols = ["kind", "block", "chars", "wire_chars"]
    pd.testing.assert_frame_equal(after[cols], before[cols])
    (args,) = scl.calls(after).args
    assert args == ('{"note": "xxx \\"xxxxxx0xXXXXXX\\" xx \\u0078XXXXX0", "pin": 111111, '
                    '"ok": true}')


# -- what is kept is each format's own short list --------------------------------------------
def _kept_at_top(name: str) -> frozenset[str]:
    env = FORMATS[name].envelope
    return env.schema if env.top is None else env.top


@pytest.mark.parametrize("name", NAMES)
def test_a_canary_at_the_top_of_a_payload_survives_only_where_the_format_keeps_the_key(
        name: str) -> None:
    frames, raw = _written(name, sample(name))
    planted = [k for k in SCHEMA_KEYS if k not in _kept_at_top(name)]
    for f in frames:
        if isinstance(f.payload, dict):
            f.payload.update({k: f"{CANARY}-{k}" for k in planted if k not in f.payload})
            f.data = None  # written from the payload again
    raw = body(name, frames)
    redacted = _redact(name, raw)
    assert CANARY not in redacted.decode("utf-8", "replace")
    assert _reading(redacted) == _reading(raw)


@pytest.mark.parametrize("name", [n for n in NAMES if isinstance(FORMATS[n].reader.sniff, ByType)])
def test_a_payload_of_an_event_the_format_does_not_know_keeps_only_its_structure(
        name: str) -> None:
    """Its event name stays (the ``event`` column shows it anyway); no schema value does."""
    frames, _ = _written(name, sample(name))
    typed = FORMATS[name].reader.sniff.field
    unknown = {typed: "lab.unknown", **{k: f"{CANARY}-{k}" for k in SCHEMA_KEYS if k != typed},
               "step": {"type": CANARY, "name": CANARY}, "item": {"status": CANARY}}
    frames.insert(1, WireFrame(unknown, "lab.unknown"))
    raw = body(name, frames)
    said = _redact(name, raw).decode("utf-8", "replace")
    assert CANARY not in said and "lab.unknown" in said
    assert _reading(_redact(name, raw)) == _reading(raw)


def test_a_capture_no_format_recognises_keeps_only_its_structure() -> None:
    payload = {k: f"{CANARY}-{k}" for k in SCHEMA_KEYS} | {
        "index": 424242, "output_index": 424242, "usage": {"input_tokens": 424242},
        "data": {"role": CANARY, "delta": {"content": CANARY, "name": CANARY}}}
    raw = f"data: {json.dumps(payload)}\n\n".encode()
    redacted = Redactor("s").capture(raw)
    assert CANARY.encode() not in redacted and b"424242" not in redacted
    assert json.loads(redacted[6:]).keys() == payload.keys()


def test_responses_metadata_is_data() -> None:
    """No other format's list stands in: Bedrock's ``metadata`` envelope is not Responses'."""
    frames, _ = _written("openai-responses", sample("openai-responses"))
    frames[0].payload["response"]["metadata"] = {k: f"{CANARY}-{k}" for k in SCHEMA_KEYS}
    raw = body("openai-responses", frames)
    assert CANARY.encode() not in _redact("openai-responses", raw)


def _typed_headers() -> bytes:
    """A header of every value type AWS defines, each holding a canary."""
    return b"".join([
        header("x-byte", 2, struct.pack(">b", 77)),
        header("x-short", 3, struct.pack(">h", 31337)),
        header("x-int", 4, struct.pack(">i", 987654321)),
        header("x-long", 5, struct.pack(">q", 876543219876)),
        header("x-bytes", 6, struct.pack(">H", 7) + CANARY.encode()),
        string("x-string", CANARY),
        header("x-time", 8, struct.pack(">q", 1733059200123)),
        header("x-uuid", 9, uuid.UUID(int=0x5EC2E7C0FFEE).bytes),
        header("x-true", 0),
    ])


@pytest.mark.parametrize("name", [n for n in NAMES if FORMATS[n].framing == "eventstream"])
def test_every_typed_event_stream_header_value_is_replaced(name: str) -> None:
    raw = _written(name, sample(name))[1]
    first, size = decode(raw)[0], struct.unpack_from(">I", raw)[0]
    raw = event(first.event, first.data, extra=_typed_headers()) + raw[size:]
    redacted = _redact(name, raw)
    for canary in (CANARY.encode(), struct.pack(">h", 31337), struct.pack(">i", 987654321),
                   struct.pack(">q", 876543219876), struct.pack(">q", 1733059200123),
                   uuid.UUID(int=0x5EC2E7C0FFEE).bytes):
        assert canary not in redacted
    assert [f.event for f in decode(redacted)] == [f.event for f in decode(raw)]
    assert _reading(redacted) == _reading(raw)


def test_the_sharing_docs_say_exactly_what_each_format_keeps() -> None:
    text = (REPO / "docs" / "sharing.md").read_text("utf-8")
    rows = {m[0]: m[1:] for m in re.findall(
        r"^\| `([\w-]+)` \| (.*?) \| (.*?) \| (.*?) \|$", text, re.M)}
    assert set(rows) == set(FORMATS)

    def keys(cell: str) -> set[str]:
        return set(re.findall(r"`([^`]+)`", cell))

    for name, (values, numbers, top) in rows.items():
        kept = policy(name)
        at_top, _, headers = top.partition("; headers ")
        assert keys(values) == kept.schema and keys(numbers) == kept.numbers, name
        assert (kept.top is None) == (at_top == "any of them"), name
        assert kept.top is None or keys(at_top) == kept.top - kept.ids, name
        assert keys(headers) == kept.headers, name
