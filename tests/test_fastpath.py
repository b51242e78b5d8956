"""The fast path of load() (_fastpath.py) gives exactly what the incremental decoder gives.

``load_captures(..., bulk=False)`` is the reference: every frame through the SSE decoder and
``normalize`` one at a time. The fast path may only ever be faster; any difference in a
row, a dtype, an error's message or its byte offset is a bug.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import _columns as columns
from streamcalls_lab._fastpath import decode_each
from streamcalls_lab._fastpath import whole_rows as normalise_whole
from streamcalls_lab.events import HotRows
from streamcalls_lab.framing.sse import SSEDecoder, split_whole
from streamcalls_lab.loader import load_captures
from streamcalls_lab.providers import READERS as FORMATS
from streamcalls_lab.providers.as_written import raw_wire_length, wire_length
from streamcalls_lab.sources import resolve

from .conftest import capture_files
from .support.compare import assert_frames_equal, assert_same
from .support.compare import outcome as _outcome
from .support.sse_turns import N2


# -- every real recording ---------------------------------------------------------------------
def test_every_real_capture_loads_the_same_either_way(captures: Path) -> None:
    for raw in (False, True):
        fast = load_captures(resolve(captures), strict=False, raw=raw)
        slow = load_captures(resolve(captures), strict=False, raw=raw, bulk=False)
        assert_frames_equal(fast, slow)


def test_the_fast_path_takes_nearly_every_real_capture(captures: Path) -> None:
    """Otherwise the tests above would pass by never taking it."""
    bodies = [path.read_bytes() for path in capture_files()]
    taken = sum(normalise_whole(body) is not None for body in bodies)
    assert taken >= 0.85 * len(bodies), f"{taken} of {len(bodies)}"


FAST = ("anthropic-messages", "openai-chat", "openai-responses")


@pytest.mark.parametrize("provider", sorted(FORMATS))
def test_a_forced_provider_loads_the_same_either_way(captures: Path, provider: str) -> None:
    """Compared on the captures the fast path takes under that provider: on every other one
    both ways hand the whole body to the same incremental decoder, which the whole-corpus
    test above compares once (loading the corpus twice per format cost 160 s a CI run)."""
    taken = {cap.name for cap in resolve(captures)
             if (body := cap.whole()) is not None
             and normalise_whole(body, provider, raws=False) is not None}
    fast = load_captures([c for c in resolve(captures) if c.name in taken], provider=provider,
                         strict=False)
    slow = load_captures([c for c in resolve(captures) if c.name in taken], provider=provider,
                         strict=False, bulk=False)
    assert_frames_equal(fast, slow)
    if provider in FAST:  # what it compares is not nothing: the fast path takes its own
        assert len(taken) > 50, (provider, len(taken))


def test_strict_loads_raise_the_same_error_either_way(captures: Path) -> None:
    raised = 0
    for path in capture_files():
        body = path.read_bytes()
        fast = _outcome(body, bulk=True, strict=True)
        slow = _outcome(body, bulk=False, strict=True)
        if isinstance(slow, str):
            raised += 1
            assert fast == slow, path.name
        else:
            assert_frames_equal(fast, slow, obj=path.name)
    assert raised  # some real recordings are damaged: their errors were compared too


# -- damaged and unusual recordings ------------------------------------------------------------
SEEDS = [p for p in capture_files() if p.stat().st_size < 6_000][:40]
_DAMAGE = [
    b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\\", b'"', b"}", b"1e999", b"\\ud800",
    b"123456789012345678901234567890", b"\n", b"\n\n", b"\r", b"data: ", b"event: x\n", b",",
]


@pytest.mark.skipif(not SEEDS, reason="real captures not found")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS or [Path()]), st.lists(st.tuples(st.floats(0, 1),
       st.sampled_from(_DAMAGE), st.booleans()), min_size=1, max_size=3))
def test_damaged_bytes_load_the_same_either_way(seed: Path, edits) -> None:
    body = seed.read_bytes()
    for where, text, replace in edits:
        at = int(where * len(body))
        body = body[:at] + text + body[at + len(text) * replace:]
    assert_same(body)


_ODD_VALUES = [
    None, 0, -1, 2**63, 2**64, 1.5, True, "", "x", "é\n\"\\", [], [1], {}, {"a": 1},
    {"type": "text_delta", "text": 3}, 1e308,
]


def _payload_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _payload_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _payload_paths(item, (*path, i))


def _swap(payload, path, new):
    if not path:
        return new
    head, *rest = path
    payload[head] = _swap(payload[head], rest, new)
    return payload


@pytest.mark.skipif(not SEEDS, reason="real captures not found")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS or [Path()]), st.randoms(use_true_random=False),
       st.sampled_from(_ODD_VALUES), st.sampled_from(["swap", "add", "drop", "dup"]))
def test_payloads_with_odd_fields_load_the_same_either_way(seed: Path, rng: random.Random,
                                                           value, how: str) -> None:
    """One field of one frame changed: a wrong type, an unknown field, a missing one, a
    repeated key. The typed structs must send each such frame to normalize()."""
    lines = seed.read_bytes().split(b"\n")
    data = [i for i, line in enumerate(lines) if line.startswith(b"data: {")]
    if not data:
        return
    i = rng.choice(data)
    payload = orjson.loads(lines[i][6:])
    paths = list(_payload_paths(payload))
    path = rng.choice(paths)
    if how == "swap":
        payload = _swap(payload, path, value)
        text = json.dumps(payload, ensure_ascii=False).encode()
    elif how == "add":
        target = rng.choice([p for p in paths if _is_dict(payload, p)] or [()])
        _get(payload, target)["unexpected_field"] = value
        text = json.dumps(payload, ensure_ascii=False).encode()
    elif how == "drop" and path:
        del _get(payload, path[:-1])[path[-1]]
        text = json.dumps(payload, ensure_ascii=False).encode()
    else:  # a key sent twice: orjson keeps the last, and so must the fast path
        text = lines[i][6:-1] + b', "type": ' + json.dumps(value).encode() + b"}"
    lines[i] = b"data: " + text
    assert_same(b"\n".join(lines))


def _get(payload, path):
    for key in path:
        payload = payload[key]
    return payload


def _is_dict(payload, path) -> bool:
    return isinstance(_get(payload, path), dict)


@pytest.mark.parametrize("body", [
    b"", b"\n\n", b"data: {}\n\n", b'data: {"choices": []}\n\n', b"data: [DONE]\n\n",
    b'event: ping\ndata: {"type": "ping"}\n\n', b'data: {"type":"message_stop"}\n\n',
    b'event: message_stop\ndata: {"type":"message_stop"}\n\ndata: [DONE]\n\n',
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n\n',
    b'event: \ndata: {"type":"message_stop"}\n\n', b'data: {"choices":[]}\n\ndata: 1\n\n',
    b'\xef\xbb\xbfdata: {"choices":[]}\n\n', b'data: {"choices":[]}\r\n\r\n',
    b'data: {"choices":[]}\n', b'data:{"choices":[]}\n\n', b'data: {"choices":[]}\n\n: hi\n\n',
])
def test_small_and_odd_bodies_load_the_same_either_way(body: bytes) -> None:
    assert_same(body)
    for provider in FORMATS:
        assert_same(body, provider)


# A hostile value in a field the typed structs parse (declared, of any type), in a frame after
# the first (the first is read by orjson to find the format): each format's hot frame, the
# value at ``@``. Each must load as the reference loads it, error or rows.
_HOSTILE_HOT = {
    "openai-chat": (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        b'[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"system_fingerprint":@,"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        b'[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'),
    "anthropic-messages": (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":'
        b'"message","role":"assistant","content":[],"model":"c","stop_reason":null}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"thinking","thinking":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"thinking_delta","thinking":@}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'),
    "openai-responses": (
        b'event: response.created\ndata: {"type":"response.created","response":{"id":"r",'
        b'"status":"in_progress","output":[]}}\n\n'
        b'event: response.output_item.added\ndata: {"type":"response.output_item.added",'
        b'"output_index":0,"item":{"id":"i","type":"message","content":[]}}\n\n'
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
        b'"item_id":"i","output_index":0,"content_index":0,"delta":"hi","logprobs":@}\n\n'
        b'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r",'
        b'"status":"completed","output":[]}}\n\n'),
}
_HOSTILE_VALUES = [
    b'"ok"', b'"\xff"', b'"\xc0\xaf"', b'"\xed\xa0\x80"', b'"\\ud800"', b'"\\udc00x"',
    b'"\\x"', b'"\x01"', b"1e999", b"-1e999", b"1.8e308", b"1e308", b"NaN", b"Infinity",
    b"-Infinity", b"01", b"1.", b"tru", b"[" * 900 + b"]" * 900, b"[" * 1000 + b"]" * 1000,
    b"[" * 1030 + b"]" * 1030, b"[" * 5000 + b"]" * 5000, b'{"a":1,"a":2}',
    b'null,"x_dup":1', b'{"\xff":1}',
    # integers wider than a double: orjson refuses them, json.loads and msgspec read them
    # exactly up to Python's 4,300 digits; a float as wide is out of range in all three
    b"9" * 309, b"-" + b"9" * 400, b"[1, " + b"9" * 4300 + b"]", b"9" * 4301,
    b"9" * 309 + b".5", b"9" * 309 + b"e-5", b'{"a": 1e999, "b": ' + b"9" * 309 + b"}",
]


@pytest.mark.parametrize("value", _HOSTILE_VALUES, ids=range(len(_HOSTILE_VALUES)))
@pytest.mark.parametrize("provider", sorted(_HOSTILE_HOT))
def test_a_hostile_value_in_a_hot_frame_loads_as_the_reference_loads_it(provider, value) -> None:
    """Invalid UTF-8, a lone surrogate, numbers orjson refuses, NaN, nesting deeper than
    msgspec goes (a ``RecursionError`` there: the frame is left to normalize, as orjson reads
    up to 1,024 levels), a repeated key: what the fast path's structs parse must load as the
    reference decoder loads it."""
    body = _HOSTILE_HOT[provider].replace(b"@", value)
    if value == b'"ok"':  # the body as written takes the fast path, so the rest test it
        assert normalise_whole(body) is not None
    assert_same(body)
    assert_same(body, provider)


def test_a_chat_stream_of_two_choices_loads_the_same_either_way() -> None:
    body = N2.replace(b"data: [DONE]", b'data: {"choices": [{"index": 1, "delta": {}, '
                      b'"finish_reason": "stop"}]}\n\ndata: [DONE]')
    assert normalise_whole(body) is not None
    assert_same(body)


# -- the pieces --------------------------------------------------------------------------------
def _decoded(body: bytes) -> tuple[list[int], list[str], list[bytes]]:
    dec = SSEDecoder()
    frames = dec.feed(body) + dec.close()
    return ([f.offset for f in frames] + [len(body)], [f.event for f in frames],
            [f.data.encode() for f in frames])


@pytest.mark.parametrize("body", [
    b"data: a\n\ndata: b\n\n", b"event: x\ndata: a\n\nevent: y\ndata: \xc3\xa9\n\n",
    b"data: \n\n", b"data:  two spaces\n\n", b"data: a\r\n\r\ndata: b\r\n\r\n",
    b"event: x\r\ndata: a\r\n\r\nevent: y\r\ndata: \xc3\xa9\r\n\r\n",
    b": x\n\ndata: a\n\n: y\n\n:\n\ndata: b\n\n: z\n\n",
    b"event: x\r\ndata: a\r\n\r\n: k\r\n\r\nevent: y\r\ndata: b\r\n\r\n",
])
def test_split_whole_gives_what_the_decoder_gives(body: bytes) -> None:
    assert split_whole(body) == _decoded(body)


@pytest.mark.parametrize("body", [
    b"", b"data: a\n", b"data: a\n\n\n", b"data: a\r\n\n", b"data: a\r\n\r\n\r\n",
    b"data: a\r\r", b"data: \ra\r\n\r\n", b"\xef\xbb\xbfdata: a\n\n",
    b"data: a\n\nevent: x\ndata: b\n\n", b"event: x\ndata: a\n\ndata: b\n\n",
    b"data: a\ndata: b\n\n", b": comment\n\n", b"id: 1\ndata: a\n\n", b"event:\ndata: a\n\n",
    b"event: \xff\ndata: a\n\n", b"data:a\n\n", b"event: x\nid: 2\n\n",
    b": a\n: b\n\ndata: x\n\n", b"data: a\n: c\n\n", b": a\n\n\ndata: x\n\n",
    b"event: x\n: c\ndata: a\n\n", b": a\n\n: b\n\n",
    # the right number of data and event lines, one of them out of place
    b"event: x\ndata: a\n\ndata: abcd\nevent: wxyz\n\n", b"data: a\n\nevent: y\n\n",
    b"event: x\ndata: a\n\nevent: y\nevent: z\n\n", b"event: x\ndata: a\n\nid: 1\ndata: b\n\n",
    b"event: x\r\ndata: a\r\n\r\ndata: b\r\nevent: y\r\n\r\n",
    # a prefix's last byte one off either way (its lines are checked by their least and
    # greatest: ``data: `` <= line < ``data:!``)
    b"data: a\n\ndata:!b\n\n", b"data:\x1fa\n\ndata: b\n\n", b"event:!x\ndata: a\n\n",
    b"event: x\ndata: a\n\nevent:\x1fy\ndata: b\n\n", b"event: x\ndata:!a\n\n",
    # as many line ends, data lines and frame starts as two good frames, out of order
    b"event: a\n\nevent: b\ndata: x\ndata: y\n\n", b"event: a\ndata: x\ndata: y\n\nevent: b\n\n",
    b"event: a\r\n\r\nevent: b\r\ndata: x\r\ndata: y\r\n\r\n", b"data: a\ndata: b\n\n\n\n",
    b"event: a\n\ndata: x\n\n", b"event: a\ndata: x\n\n\ndata: y\n\n",
])
def test_split_whole_leaves_anything_else_to_the_decoder(body: bytes) -> None:
    assert split_whole(body) is None


def test_event_names_are_decoded_once_for_every_capture_and_kept_bounded() -> None:
    """``split_whole`` keeps each ``event:`` line's name across captures, bounded: a capture
    of more made-up names than it keeps is still framed as the decoder frames it."""
    from streamcalls_lab.framing import sse

    body = b"".join(b"event: e%d\ndata: {}\n\n" % i for i in range(3 * sse._EventNames.KEPT))
    assert split_whole(body) == _decoded(body)
    assert len(sse._EVENT_NAMES) <= sse._EventNames.KEPT
    again = b"event: e1\ndata: a\n\nevent: \xc3\xa9\ndata: b\n\n"
    assert split_whole(again) == _decoded(again) == split_whole(again)
    assert split_whole(b"event: \xff\ndata: a\n\n") is None  # not UTF-8: never kept
    assert b"event: \xff" not in sse._EVENT_NAMES


_FIELDS = [b"data: a", b"data: abcd", b"data: ", b"data:b", b"event: x", b"event: wxyz",
           b"event:", b"id: 1", b": c", b"data: \xc3\xa9", b"event: \xff", b"data", b"xdata: a"]


@given(st.lists(st.lists(st.sampled_from(_FIELDS), min_size=1, max_size=3), max_size=6),
       st.sampled_from([b"\n", b"\r\n"]))
def test_split_whole_is_the_decoder_or_declines(frames: list[list[bytes]], eol: bytes) -> None:
    """Its field lines are checked a column at a time, not one by one: whatever the frames,
    it gives the decoder's frames or leaves the body to the decoder."""
    body = b"".join(eol.join(fields) + eol + eol for fields in frames)
    got = split_whole(body)
    assert got is None or got == _decoded(body)


def test_comment_frames_between_frames_keep_a_capture_on_the_fast_path() -> None:
    """OpenRouter's ``: OPENROUTER PROCESSING`` keep-alive frames dispatch nothing: the
    capture is still whole, with every frame's offset the decoder's."""
    body = N2.replace(b"data: ", b": OPENROUTER PROCESSING\n\ndata: ", 2)
    assert body.count(b": OPENROUTER") == 2
    assert normalise_whole(body) is not None
    assert_same(body)
    assert_same(body.replace(b"\n", b"\r\n"))


@given(st.text(), st.sampled_from(["partial_json", "delta", "content"]), st.booleans())
def test_the_wire_length_of_a_data_line_in_bytes_is_the_texts(fragment, key, ascii_only) -> None:
    data = json.dumps({"type": "x", key: fragment}, ensure_ascii=ascii_only)
    assert raw_wire_length(data.encode(), key, fragment) == wire_length(data, key, fragment)


_BEFORE = ['', '"role":"{k}",', '"{k}" : "zz",', '"{k}":null,', '"x":{{"{k}":"q\\"x"}},',
           '"{k}":"\\"",', '"{k}" :"zz",']


@given(st.text(st.characters(blacklist_categories=())),
       st.sampled_from(["partial_json", "delta", "content"]), st.sampled_from(_BEFORE),
       st.sampled_from([":", ": ", " : ", ":  "]), st.booleans())
def test_the_wire_length_in_bytes_is_the_texts_whatever_comes_first(
        fragment, key, before, colon, ascii_only) -> None:
    """The bytes shortcut looks where the text's looks (the first ``"key"``, then a colon):
    another value named like the key, a spaced colon, a nested key before it or a lone
    surrogate (escaped on the wire) change neither answer. (The line always holds a
    backslash, so the shortcut is what runs.)"""
    token = json.dumps(fragment, ensure_ascii=ascii_only)
    data = "{" + before.format(k=key) + f'"{key}"{colon}{token}' + ',"pad":"\\\\"}'
    try:
        raw = data.encode()
    except UnicodeEncodeError:
        return  # a lone surrogate sent unescaped: not valid UTF-8, never a data line
    assert raw_wire_length(raw, key, fragment) == wire_length(data, key, fragment)


@pytest.mark.parametrize("rows", [
    [("a", 1, None), (None, None, "c")], [("a", 2**63, "b")], [("a", 1, 2)], [(1, 1, "b")],
    [("a", True, "b")], [("a", 1.5, "b")], [("\ud800", 1, "b")], [],
])
def test_rows_unzipped_in_arrow_make_the_columns_a_zip_makes(rows) -> None:
    """``columns.unzipped`` (one pass in C) or, where it declines, a ``zip``: the same
    typed columns, an odd value included (the helpers convert or refuse it as before)."""
    def typed(cols):
        out = []
        for col, kind in zip(cols, "sis", strict=True):
            try:
                out.append(pd.Series((columns.strings if kind == "s" else columns.ints)(col)))
            except Exception as e:  # the same failure either way
                out.append(type(e))
        return out

    fast = columns.unzipped(rows, "sis")
    if fast is None:
        return  # the zip is the only way: nothing to compare
    for a, b in zip(typed(fast), typed(list(zip(*rows, strict=True))), strict=True):
        if isinstance(a, pd.Series):
            pd.testing.assert_series_equal(a, b)
        else:
            assert a == b


def test_decode_each_gives_none_where_a_frame_does_not_decode() -> None:
    import msgspec

    decode = msgspec.json.Decoder(dict[str, int]).decode
    assert decode_each(decode, [b'{"a": 1}', b'{"a": "x"}', b"[", b"{}"]) == [
        {"a": 1}, None, None, {}]


def test_a_capture_is_whole_only_as_one_untimed_body(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(b"data: {}\n\n")
    (tmp_path / "b.sse").write_bytes(b"data: {}\n\n")
    (tmp_path / "b.sse.timing.tsv").write_text("t\tbytes\n0.5\t10\n")
    a, b = resolve(tmp_path)
    assert a.whole() == b"data: {}\n\n"
    assert b.whole() is None  # timed: each frame's time is its read's (Capture.timed)
    assert b.timed() == (b"data: {}\n\n", [(0.5, 10)]) and a.timed() is None
    assert resolve(b"data: {}\n\n")[0].whole() == b"data: {}\n\n"
    assert resolve([b"data: ", b"{}\n\n"])[0].whole() is None


def test_turns_of_either_path_in_one_load_keep_their_rows_in_order(captures: Path) -> None:
    """The loader puts the hot rows (columns) and the other rows (tuples) in order once, by
    keys it works out per turn: turns read whole, turns the decoder reads (timed reads), and
    a long turn it adds in batches, mixed in one load, give the rows the decoder gives."""
    from streamcalls_lab.sources import Capture

    files = capture_files()[::9]
    long = b"".join(body for p in capture_files("openai-chat")[::5]
                    if b"\r" not in (body := p.read_bytes()))
    caps = []
    for k, path in enumerate(files):
        body = path.read_bytes()
        caps.append(Capture(path.name, [(0.0, body)] if k % 3 == 0 else [body]))
        if k % 10 == 5:
            caps.append(Capture(f"long{k}", [(0.0, long)]))
    fast = load_captures(caps, strict=False)  # (a damaged recording: its problem rows)
    assert (fast.groupby("turn").size() > 1024).any()  # (batches of the decoder's rows)
    assert_frames_equal(fast, load_captures(caps, strict=False, bulk=False))


def _as_compared(whole):
    if whole is None:
        return None
    bounds, provider, rows, raws, hot = whole
    return bounds, provider, rows, raws, [getattr(hot, f) for f in HotRows.__slots__]


@pytest.mark.parametrize("provider", ["auto", "openai-chat", "anthropic-messages"])
def test_bodies_read_a_stage_at_a_time_give_what_each_read_alone_gives(
        captures: Path, monkeypatch, provider: str) -> None:
    """``wholes`` (load()'s groups: framing, format, stateless frames, the others, each over
    every body) gives each body's :func:`whole_rows`, whatever the bodies around it: taken
    or not, empty, broken, or longer than a window (read alone, in windows)."""
    import streamcalls_lab._fastpath as bulk

    bodies = [path.read_bytes() for path in capture_files()[::7]]
    bodies[3:3] = [b"", b"data: {not json\n\n", N2, N2.replace(b"\n", b"\r\n"), b"x"]
    assert {bulk.whole_rows(b) is None for b in bodies} == {True, False}
    for window in (bulk.WINDOW, 20_000):  # (the second: some bodies read in windows)
        monkeypatch.setattr(bulk, "WINDOW", window)
        for raws in (False, True):
            alone = [_as_compared(bulk.whole_rows(b, provider, raws=raws)) for b in bodies]
            staged = [_as_compared(w) for w in bulk.wholes(bodies, provider, raws=raws)]
            assert staged == alone


# -- a long capture, read a window at a time ----------------------------------------------------
@pytest.mark.parametrize("window", [1, 3_000])
def test_a_capture_read_in_windows_loads_the_same_either_way(captures: Path, monkeypatch,
                                                             window: int) -> None:
    """Windows of any size, cut after any frame (a window of 1 byte is one frame each)."""
    import streamcalls_lab._fastpath as bulk

    monkeypatch.setattr(bulk, "WINDOW", window)
    bodies = [path.read_bytes() for path in capture_files()[::25]]
    taken = sum(normalise_whole(body) is not None for body in bodies)
    assert taken >= 0.85 * len(bodies)
    for body in bodies:
        assert_same(body)


def test_a_window_cut_between_two_framings_still_gives_the_decoders_frames(monkeypatch) -> None:
    import streamcalls_lab._fastpath as bulk

    monkeypatch.setattr(bulk, "WINDOW", 1)
    body = (b'data: {"choices": []}\n\nevent: x\ndata: {"choices": []}\n\n'
            b'data: {"choices": []}\r\n\r\ndata: [DONE]\n\n')
    assert_same(body)


@pytest.mark.skipif(not columns.ARROW, reason="the scatter builds Arrow buffers")
@given(st.lists(st.one_of(st.none(), st.text())), st.data())
def test_a_column_scattered_from_buffers_is_the_take_of_its_values(values, data) -> None:
    """``columns.scattered`` (a nearly missing column put in place with numpy) gives what
    Arrow's ``take`` gives, for any strings, empty and non-ASCII ones, at any places, and
    for values that are a slice of a longer array (an offset into its buffers)."""
    import numpy as np
    import pyarrow as pa

    hot = data.draw(st.integers(0, 20))
    n = len(values) + hot
    where = np.array(sorted(data.draw(st.permutations(range(n)))[:len(values)]), dtype=np.int64)
    arrow = pa.array([None, "x", *values], type=pa.large_string())[2:]
    index = np.full(n, -1, dtype=np.int64)
    index[where] = np.arange(len(values))
    want = arrow.take(pa.array(index, mask=index < 0))
    got = columns.scattered(arrow, where, n)
    got.validate(full=True)
    assert got.equals(want)


def test_the_frame_comparison_still_fails_on_any_difference() -> None:
    """``assert_frames_equal`` decides equal pickles at once; anything else, a value, a
    dtype or the order of a column's categories, still fails as the pandas assertion does."""
    base = pd.DataFrame({"kind": pd.Categorical(["a", "b"], categories=["a", "b"]),
                         "n": pd.array([1, None], dtype="Int64")})
    assert_frames_equal(base, base.copy())
    for other in (base.assign(n=pd.array([1, 2], dtype="Int64")),
                  base.assign(n=base["n"].astype("float64")),
                  base.assign(kind=pd.Categorical(["a", "b"], categories=["b", "a"]))):
        with pytest.raises(AssertionError):
            assert_frames_equal(base, other)


def test_hot_rows_appenders_are_each_column_in_slot_order() -> None:
    """``HotRows.appenders`` is written out: it must name every column, in slot order."""
    cols = HotRows()
    assert [id(a.__self__) for a in cols.appenders()] == [
        id(getattr(cols, f)) for f in HotRows.__slots__]


def test_hot_rows_extend_every_column_but_the_frames() -> None:
    """``HotRows.extend`` is written out too: every column of ``FIELDS`` gets the other's
    values after its own; ``frame`` (which the caller numbers) is left alone."""
    cols, other = HotRows(), HotRows()
    for k, f in enumerate(HotRows.__slots__):
        getattr(cols, f).append(("mine", k))
        getattr(other, f).extend([("other", k), ("again", k)])
    cols.extend(other)
    for k, f in enumerate(HotRows.__slots__):
        kept = [("mine", k)] + ([("other", k), ("again", k)] if f in HotRows.FIELDS else [])
        assert getattr(cols, f) == kept, f
    assert set(HotRows.__slots__) == {"frame", *HotRows.FIELDS}


# -- timed captures: each frame the time of the read that completed it ---------------------
def _timed_reads(body: bytes, rng: random.Random, how: str) -> list[tuple[float, int]]:
    """Reads of ``body`` as a proxy records them: ``how`` sizes them (one byte each, cut at
    random, cut at each line end, with an empty read now and then, or the body at once)."""
    if how == "whole":
        sizes = [len(body)]
    elif how == "bytes":
        sizes = [1] * len(body)
    elif how == "lines":  # a read ends at each line end (and one at a CR of a CRLF)
        cuts = [i + 1 for i in range(len(body)) if body[i] in b"\r\n"]
        sizes = [b - a for a, b in zip([0, *cuts], cuts, strict=False) if b > a]
        sizes.append(len(body) - sum(sizes))
    else:
        sizes, left = [], len(body)
        while left:
            n = min(left, rng.choice([0, 1, 2, 7, 64, 300, 4096]))
            sizes.append(n)
            left -= n
    t, reads = 1000.0, []
    for n in sizes:
        t += rng.random() / 8
        reads.append((t, n))
    return reads


@pytest.mark.captures
@pytest.mark.parametrize("how", ["random", "bytes", "lines", "whole"])
def test_a_timed_capture_loads_the_same_either_way(captures: Path, tmp_path: Path,
                                                   how: str) -> None:
    """A capture with a timing sidecar (what the kit's proxy records) takes the fast path:
    each frame's time is that of the read holding its last byte, as the decoder gives it,
    in reads of any size, with CRLF line ends too; reads that do not cover the body, and
    comment frames, are the decoder's."""
    from streamcalls_lab import timing

    rng = random.Random(how)
    files = capture_files()[:: 3 if how == "random" else 25]
    for k, path in enumerate(files):
        body = path.read_bytes()
        if k % 4 == 1:
            body = body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        dest = tmp_path / f"{k:04d}{path.suffix}"
        dest.write_bytes(body)
        reads = _timed_reads(body, rng, how)
        if k % 7 == 3 and reads:  # a sidecar short of the body: the decoder says so
            reads[-1] = (reads[-1][0], reads[-1][1] + 1)
        timing.write(dest, reads)
    for raw in (False, True):
        fast = load_captures(resolve(tmp_path), strict=False, raw=raw)
        slow = load_captures(resolve(tmp_path), strict=False, raw=raw, bulk=False)
        assert_frames_equal(fast, slow)
    assert fast["t"].notna().mean() > 0.9  # (the times are there, not NaN either way)


def test_a_timed_capture_takes_the_fast_path(tmp_path: Path, monkeypatch) -> None:
    """Otherwise the test above would pass by never taking it."""
    from streamcalls_lab import loader, timing

    body = N2
    (tmp_path / "a.sse").write_bytes(body)
    timing.write(tmp_path / "a.sse", [(5.0, 3), (6.0, len(body) - 3)])
    # A comment frame after the first frame, which ends with the first read: the fast path
    # passes over the comment, so the first frame's end is not the next frame's start.
    first = body.index(b"\n\n") + 2
    commented = body[:first] + b": keep-alive\n\n" + body[first:]
    (tmp_path / "b.sse").write_bytes(commented)
    timing.write(tmp_path / "b.sse", [(7.0, first), (8.0, len(commented) - first)])

    def refuse(*args, **kwargs):
        raise AssertionError("the decoder was asked")

    with monkeypatch.context() as m:
        m.setattr(loader, "EventDecoder", refuse)
        df = load_captures(resolve(tmp_path / "a.sse"))
    assert set(df["t"]) <= {5.0, 6.0} and df["t"].iloc[-1] == 6.0
    df = load_captures(resolve(tmp_path))
    assert df.loc[df.turn == "b", "t"].tolist()[0] == 7.0
    assert_frames_equal(df, load_captures(resolve(tmp_path), bulk=False))


def test_reads_given_in_memory_with_their_times_take_the_fast_path_too() -> None:
    from streamcalls_lab.sources import Capture

    body = N2
    caps = [Capture("m", [(1.0, body[:10]), (2.0, body[10:])]),
            Capture("s", [(1.0, body[:10]), ("2", body[10:])])]  # a time not a float: as given
    assert caps[0].timed() == (body, [(1.0, 10), (2.0, len(body) - 10)])
    assert caps[1].timed() is None
    assert_frames_equal(load_captures(caps[:1]), load_captures(caps[:1], bulk=False))
