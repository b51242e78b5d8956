"""OpenAI Realtime server events saved as JSON lines: what each event means (the contract
every format shares is in ``test_formats.py``). Sessions written from the API reference's
server events, checked against openai-python's ``RealtimeServerEvent`` types; both line
shapes (the bare event, and ``RealtimeClient``'s ``{"time", "source", "event"}``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import orjson
import pytest
from pydantic import TypeAdapter

import streamcalls_lab as scl
from streamcalls_lab.framing import decode_any
from streamcalls_lab.providers import READERS
from streamcalls_lab.turns import Call, Script, Text, body, write

from ..support.realtime_turns import SESSION, WEATHER, added, delta, done, ev, fn, lines
from ..support.wire_samples import (
    assert_chunking_changes_nothing,
    assert_refused,
    call_triples,
    rows_of,
)


def test_a_sessions_responses_each_count_from_0_and_their_calls_stay_apart() -> None:
    raw = lines(SESSION, added(2, fn("item_a", "call_a", "f")), delta(3, "{}", "item_a", "call_a"),
                ev("response.output_item.done", 4, item=fn("item_a", "call_a", "f", "{}")),
                done(5),
                added(6, fn("item_b", "call_b", "g"), response="resp_2"),
                delta(7, "[]", "item_b", "call_b"),
                ev("response.output_item.done", 8, item=fn("item_b", "call_b", "g", "[]")),
                done(9))
    table = scl.calls(raw)
    assert list(zip(table.block, table.call_id, table.args, strict=True)) == [
        (0, "call_a", "{}"), (1, "call_b", "[]")]


def test_interleaved_calls_are_kept_apart_by_item() -> None:
    raw = lines(added(1, fn("item_a", "call_a", "f")), added(2, fn("item_b", "call_b", "g"), 1),
                delta(3, "[1", "item_a", "call_a"), delta(4, "[2", "item_b", "call_b"),
                delta(5, "]", "item_a", "call_a"), delta(6, "]", "item_b", "call_b"))
    table = scl.calls(raw, strict=False)
    assert list(zip(table.call_id, table.args, strict=True)) == [
        ("call_a", "[1]"), ("call_b", "[2]")]
    assert not table.complete.any()  # no item done: both unfinished


@pytest.mark.parametrize("kind", [
    "response.output_text.delta", "response.output_audio_transcript.delta",
    "response.text.delta", "response.audio_transcript.delta",
])
def test_text_and_the_spoken_words_transcript_are_text_in_ga_and_beta_names(kind: str) -> None:
    df = scl.load(lines(SESSION, ev(kind, 2, response_id="r", item_id="i", output_index=0,
                                    content_index=0, delta="It is \"sunny\".")))
    assert df.kind.astype(str).tolist() == ["other", "text_delta"]
    assert (df.fragment.iloc[1], df.wire_chars.iloc[1]) == ('It is "sunny".', 16)


def test_audio_deltas_are_not_text() -> None:
    df = scl.load(lines(SESSION, ev("response.output_audio.delta", 2, response_id="r",
                                    item_id="i", output_index=0, content_index=0,
                                    delta="UklGRg==")))
    assert df.kind.astype(str).tolist() == ["other", "other"]


def test_a_remote_mcp_call_is_a_call_named_by_its_item() -> None:
    item = {"id": "mcp_1", "type": "mcp_call", "server_label": "docs", "name": "search",
            "arguments": ""}
    raw = lines(SESSION, added(2, item),
                ev("response.mcp_call_arguments.delta", 3, response_id="resp_1",
                   item_id="mcp_1", output_index=0, delta='{"q":1}'),
                ev("response.output_item.done", 4, item={**item, "arguments": '{"q":1}'}))
    assert call_triples(scl.calls(raw)) == [("mcp_1", "search", '{"q":1}')]


def test_a_call_only_a_response_done_holds_is_announced_and_ended_there() -> None:
    """A probe: a log that kept only ``response.done`` (where the guide reads function calls
    from) read no call and said nothing; each call item no event announced is a call."""
    message = {"id": "item_0", "type": "message", "role": "assistant", "content": []}
    raw = lines(SESSION, done(2, output=[
        message, fn(arguments='{"a":"\\u00e9"}', status="completed"),
        fn("item_2", "call_2", "get_time", "{}", "completed")]))
    table = scl.calls(scl.load(raw))
    assert list(zip(table.call_id, table.tool, table.args, table.complete, strict=True)) == [
        ("call_1", "get_weather", '{"a":"\\u00e9"}', True),
        ("call_2", "get_time", "{}", True)]
    assert table.wire_chars.tolist() == [len('{\\"a\\":\\"\\\\u00e9\\"}'), 2]


def test_a_response_done_repeating_calls_read_adds_no_rows() -> None:
    item = fn(arguments='{"city":"Paris"}', status="completed")
    rows = rows_of(lines(*WEATHER[:-1], done(8, output=[item])))
    assert rows == rows_of(lines(*WEATHER))


def test_a_client_event_in_a_wrapped_log_is_other() -> None:
    client = lines({"type": "conversation.item.create", "item": {
        "type": "function_call_output", "call_id": "call_1", "output": "{}"}}, wrap=True,
        source="client")
    raw = lines(*WEATHER, wrap=True) + client
    assert rows_of(raw)[-1] == ("conversation.item.create", "other", None, "-")
    assert len(scl.calls(raw)) == 1


@pytest.mark.parametrize(("status", "more", "reason"), [
    ("completed", {}, "completed"),
    ("incomplete", {"status_details": {"type": "incomplete", "reason": "max_output_tokens"}},
     "incomplete: max_output_tokens"),
    ("cancelled", {"status_details": {"type": "cancelled", "reason": "turn_detected"}},
     "cancelled: turn_detected"),
])
def test_a_response_done_says_why(status: str, more: dict, reason: str) -> None:
    assert scl.load(lines(SESSION, done(2, status, **more))).reason.dropna().tolist() == [reason]


def test_an_error_event_is_the_servers_error() -> None:
    df = scl.load(lines(SESSION, ev("error", 2, error={
        "type": "invalid_request_error", "code": "invalid_value", "message": "bad"})))
    assert df.problem[df.kind == "error"].tolist() == ["provider error: invalid_value: bad"]


@pytest.mark.parametrize(("event", "why"), [
    (delta(2, 5), "delta should be a string"),
    ({**delta(2, "{}"), "item_id": None}, "item_id should be a string"),
    (added(2, {**fn(), "id": 3}), "item.id should be a string"),
])
def test_a_field_of_the_wrong_type_is_reported(event: dict, why: str) -> None:
    raw = lines(SESSION, event)
    assert_refused(raw, why)


def test_a_realtime_line_is_claimed_by_no_other_reader() -> None:
    for e in WEATHER:
        assert [n for n, r in READERS.items() if r.sniff("line", e)] == ["openai-realtime"]


def test_responses_events_saved_as_lines_are_still_responses() -> None:
    """Responses' own events carry no event_id (Responses over WebSocket sends them too)."""
    raw = body("openai-responses", write("openai-responses", Script((Call("f", "call_1",
                                                                       ("{}",)),))),
               framing="ndjson")
    assert set(scl.load(raw).provider) == {"openai-responses"}


@pytest.mark.captures
def test_no_responses_capture_is_claimed_by_the_realtime_reader(captures: Path) -> None:
    files = sorted((captures / "openai-responses").rglob("*.sse"))
    assert files
    for path in files:
        for fr in decode_any([path.read_bytes()], str(path), strict=False):
            if fr.problem is None and fr.data.startswith("{"):
                try:
                    payload = orjson.loads(fr.data)
                except orjson.JSONDecodeError:
                    continue
                assert not READERS["openai-realtime"].sniff(fr.event, payload), path


@pytest.mark.parametrize("wrap", [False, True])
def test_a_documented_session_reads_the_same_in_any_chunking(wrap: bool) -> None:
    assert_chunking_changes_nothing(lines(*WEATHER, wrap=wrap))


def test_every_written_event_is_a_server_event_of_the_sdk() -> None:
    from openai.types.realtime import RealtimeServerEvent

    turn = Script((Text(("Let me ", "check.")), Call("get_weather", "call_1",
                                                     ('{"city": "Mont', 'réal"}'))))
    adapter = TypeAdapter(RealtimeServerEvent)
    for frame in write("openai-realtime", turn):
        parsed = adapter.validate_python(frame.payload["event"])
        assert parsed.type == frame.payload["event"]["type"]


def test_the_receive_time_of_a_wrapped_line_is_its_t_from_the_first() -> None:
    raw = lines(*WEATHER, wrap=True)  # one second apart
    assert scl.load(raw).t.tolist() == [float(n) for n in range(len(WEATHER))]
    assert scl.load(lines(*WEATHER)).t.isna().all()  # a bare event states no time


def test_a_receive_time_in_seconds_is_read_too_and_a_timed_read_wins() -> None:
    raw = "".join(json.dumps({"time": 100.0 + n / 2, "source": "server", "event": e}) + "\n"
                  for n, e in enumerate(WEATHER[:3])).encode()
    assert scl.load(raw).t.tolist() == [0.0, 0.5, 1.0]
    timed = scl.load([(7.0, raw)])  # (t, bytes): the read was timed
    assert timed.t.tolist() == [7.0, 7.0, 7.0]


def test_a_session_logged_from_the_sdks_recv_loads_as_written() -> None:
    """openai-python's realtime connection over a localhost WebSocket: each event it parses,
    logged as ``event.to_json()`` one a line, reads back to the calls written."""
    import threading

    import openai
    from websockets.sync.server import ServerConnection, serve

    turn = Script((Text(("Let me ", "check.")),
                   Call("get_weather", "call_1", ('{"city": "Mont', 'réal \\"Q\\""}'))))
    events = [f.payload["event"] for f in write("openai-realtime", turn)]

    def send(ws: ServerConnection) -> None:
        for e in events:
            ws.send(json.dumps(e))
        ws.close()

    logged = []
    with serve(send, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        client = openai.OpenAI(api_key="sk-fake", websocket_base_url=f"ws://127.0.0.1:{port}/v1")
        with warnings.catch_warnings():  # (the SDK's own use of websockets)
            warnings.simplefilter("ignore", DeprecationWarning)
            with client.realtime.connect(model="gpt-realtime") as connection:
                logged = [event.to_json(indent=None) for event in connection]
        server.shutdown()
    raw = "".join(line + "\n" for line in logged).encode()
    assert len(logged) == len(events)
    assert call_triples(scl.calls(raw)) == [("call_1", "get_weather", turn.calls[0].args)]
    assert "".join(scl.load(raw).query("kind == 'text_delta'").fragment) == "Let me check."


def test_the_kits_websocket_lines_and_a_session_log_read_as_realtime(tmp_path: Path) -> None:
    """The kit's line for a WebSocket message (``{"source", "time", "message"}``: the proxy's
    capture, the ``.wslog`` import) is read as the wrapped shape is; a client's event is other."""
    from streamcalls_lab.importers import import_file

    client = {"type": "response.create"}
    kit = [{"source": "client", "time": 0.0, "message": client}]
    kit += [{"source": "server", "time": 0.01 * n, "message": e} for n, e in enumerate(WEATHER)]
    raw = b"".join(orjson.dumps(x) + b"\n" for x in kit)
    assert rows_of(raw)[0] == ("response.create", "other", None, "-")
    assert call_triples(scl.calls(raw)) == [("call_1", "get_weather", '{"city":"Paris"}')]
    assert scl.load(raw)["t"].tolist()[:2] == [0.0, 0.0]
    log = tmp_path / "realtime.wslog"
    log.write_bytes(b"".join(b"%s %d %s\n" % (mark, len(m := orjson.dumps(e)), m)
                             for mark, e in [(b">", client), *((b"<", e) for e in WEATHER)]))
    (path,) = import_file(log, tmp_path / "out")
    assert call_triples(scl.calls(path)) == [("call_1", "get_weather", '{"city":"Paris"}')]
