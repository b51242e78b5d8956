"""The framing registry: one ordered detection that load, frames, redact and the importers
all read, and each framing's writer, rewriter and media type in its own ``FRAMING``."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab import turns
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.redact import redact_bytes
from streamcalls_lab.turns import Call, Text

WRITTEN = [name for name, f in FORMATS.items() if f.write is not None]


def _body(fmt: str) -> bytes:
    return turns.turn_bytes(fmt, turns.script([
        Text(("Looking that up.",)), Call("lookup", "call_1", ('{"city": ', '"Paris"}'))]))


def test_an_ollama_body_load_reads_is_redacted_not_refused() -> None:
    body = _body("ollama")
    assert scl.calls(scl.load(body))["tool"].tolist() == ["lookup"]
    out = redact_bytes(body)
    assert len(out) == len(body) and out != body
    assert scl.calls(scl.load(out))["tool"].notna().all()
