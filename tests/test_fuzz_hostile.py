"""Hypothesis over hostile bodies: load, redact and import either do their job or say why
with the kit's own error; nothing else escapes, and redaction never hands a value back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import CaptureError, calls, load
from streamcalls_lab.importers import import_file
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.redact import Redactor, Refused
from streamcalls_lab.turns import Call, Script, turn_bytes

from .support import turns
from .support.eventstream_turns import event

MARK = "Zsecret"
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

_PIECES = [
    b"data: ", b"event: ", b"id: ", b"retry: ", b": ", b"\n", b"\r\n", b"\r", b"\n\n",
    b"\xef\xbb\xbf", b"\x00", b"\x01", b"\xff\xfe", b"{", b"}", b"[", b"]", b'"', b"\\",
    b"\\u00e9", b"\\ud83d", b"[DONE]", b"\xe2\x82", b"9" * 40,
    b'{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", '
    b'"partial_json": "{\\"a'
    , turns.anthropic(text=["Hi"], calls=[("t", ['{"a": ', '"b"}'])]),
    turns.chat([(0, "call_1", "lookup", ['{"q":', ' 1}'])]),
    event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"x"}}'),
]
bodies = st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=40)),
                  max_size=12).map(b"".join)


def on_any_body(test: Callable[[bytes], None]) -> Callable[..., None]:
    """``test(body)`` run on bodies of the pieces above and random bytes, under FUZZ."""
    return FUZZ(given(body=bodies)(test))


@on_any_body
def test_lenient_load_of_any_bytes_never_raises(body: bytes) -> None:
    df = load(body, strict=False, name="fuzz")
    assert set(df.turn) <= {"fuzz"}


@on_any_body
def test_strict_load_of_any_bytes_raises_only_a_capture_error(body: bytes) -> None:
    try:
        load(body, name="fuzz")
    except CaptureError as e:
        assert e.source == "fuzz"


def _json_value() -> st.SearchStrategy:
    leaf = st.one_of(st.just(MARK), st.text(max_size=5).map(lambda t: MARK + t),
                     st.integers(10**6, 10**9).map(lambda n: int(f"{n}7")),
                     st.booleans(), st.none())
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["name", "type", "role", "input", "args", "x",
                                         "text", "id", "model", "delta", "arguments"]),
                        inner, max_size=3)), max_leaves=8)


@FUZZ
@given(payloads=st.lists(_json_value(), min_size=1, max_size=4),
       noise=st.lists(st.sampled_from(_PIECES), max_size=3))
def test_redaction_leaves_no_planted_value_whatever_the_shape(payloads: list, noise: list
                                                               ) -> None:
    frames = b"".join(b"data: " + json.dumps({"type": "x", "v": p}).encode() + b"\n\n"
                      for p in payloads)
    body = frames + b"".join(noise)
    try:
        out = Redactor("s").capture(body)
    except Refused:
        return
    assert len(out) == len(body)
    assert MARK.encode() not in out[: len(frames)]


def _arguments() -> st.SearchStrategy[str]:
    """A JSON object's text whose every value holds the mark, with quotes, backslashes and
    non-ASCII around it (so escapes, ``\\uXXXX`` among them, sit everywhere)."""
    leaf = st.one_of(st.text(alphabet='"\\é/\u2028x ', max_size=4).map(lambda t: t + MARK + t),
                     st.integers(10**6, 10**9).map(lambda n: int(f"{n}7")))
    value = st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.dictionaries(st.sampled_from(["name", "type", "q", "arguments"]), inner,
                        max_size=2)), max_leaves=4)
    return st.tuples(st.dictionaries(st.sampled_from(["name", "type", "city", "n"]), value,
                                     min_size=1, max_size=3),
                     st.booleans()).map(lambda d: json.dumps(d[0], ensure_ascii=d[1]))


@FUZZ
@given(name=st.sampled_from(sorted(FORMATS)), args=_arguments(), data=st.data())
def test_arguments_cut_anywhere_in_any_format_hand_no_value_back(name: str, args: str,
                                                                 data: st.DataObject) -> None:
    cuts = ([] if FORMATS[name].calls_whole else
            sorted(data.draw(st.sets(st.integers(1, len(args) - 1), max_size=6))))
    pieces = tuple(args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True))
    prefix, size = FORMATS[name].call_ids
    raw = turn_bytes(name, Script((Call("lookup", prefix + "7" * size, pieces),)))
    out = Redactor("s").capture(raw, ndjson=FORMATS[name].framing == "ndjson")
    before, after = calls(raw), calls(out)
    assert MARK.encode() not in out and MARK not in "".join(after.args)
    assert after.valid_json.tolist() == before.valid_json.tolist() == [True]
    assert after.n_deltas.tolist() == before.n_deltas.tolist()
    assert set(load(out).provider) == {name}


@on_any_body
def test_redaction_of_any_bytes_refuses_or_keeps_the_length(body: bytes) -> None:
    try:
        out = Redactor("s").capture(body, "fuzz")
    except Refused as e:
        assert e.source == "fuzz"
        return
    assert len(out) == len(body)


def import_or_name_the_file(path: Path, content: bytes) -> None:
    """Writes ``content`` to ``path`` and imports it: streams are written beside it, or a
    ``CaptureError`` names the file; nothing else escapes."""
    path.write_bytes(content)
    try:
        import_file(path, path.parent / "out")
    except CaptureError as e:
        assert str(path) in str(e)


@FUZZ
@given(doc=st.recursive(
    st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["log", "entries", "request", "response", "content",
                                         "text", "headers", "interactions", "body", "string",
                                         "status", "mimeType", "encoding", "name", "value"]),
                        inner, max_size=4)), max_leaves=20),
    suffix=st.sampled_from([".har", ".json", ".yaml", ".jsonl"]))
def test_import_of_any_document_writes_streams_or_raises_a_capture_error(
    tmp_path_factory, doc: object, suffix: str,
) -> None:
    text = yaml.safe_dump(doc) if suffix == ".yaml" else json.dumps(doc)
    import_or_name_the_file(tmp_path_factory.mktemp("fuzz") / f"rec{suffix}", text.encode())


@FUZZ
@given(raw=st.binary(max_size=200), suffix=st.sampled_from([".har", ".json", ".yaml",
                                                            ".jsonl"]))
def test_import_of_any_bytes_raises_only_a_capture_error(tmp_path_factory, raw: bytes,
                                                         suffix: str) -> None:
    import_or_name_the_file(tmp_path_factory.mktemp("fuzz") / f"rec{suffix}", raw)
