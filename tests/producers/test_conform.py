"""conform(): a server's streamed answer held to its whole answer to the same request.

A fake server on 127.0.0.1 answers one request streamed or whole, as its body asks, with the
kit's own writers: the whole answer right, the stream with one fault of each kind the public
threads show (vllm-project/vllm#51697's arguments sent twice by the end-of-stream flush,
#22885's lost closing brace, sgl-project/sglang#35564's dropped second call and quoted int, a
name or an id lost, a stop reason that does not say tools, a call left in the text, a stream
cut off), in the three main formats. One behaviour per test.
"""

from __future__ import annotations

import json
import re
import socket
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from streamcalls_lab import cli, turns
from streamcalls_lab.producers import CONFORM_COLUMNS, conform
from streamcalls_lab.producers._conform import record_both, request_format
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.traffic.server import LoopbackServer, StreamHandler, chunk
from streamcalls_lab.turns import Call, Script, Text

# -- whole answers, as each API documents them (the kit writes streams only) -----------------
WHOLE_FORMATS = ("openai-chat", "anthropic-messages", "openai-responses")


def _text(turn: Script) -> str:
    return "".join("".join(s.fragments) for s in turn.segments if isinstance(s, Text))


def _object(args: str) -> Any:
    return json.loads(args) if args.strip() else {}


def _chat(turn: Script, stop: str | None = None) -> dict[str, Any]:
    calls = [{"id": c.call_id, "type": "function",
              "function": {"name": c.tool, "arguments": c.args or "{}"}} for c in turn.calls]
    message: dict[str, Any] = {"role": "assistant", "content": _text(turn) or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-whole", "object": "chat.completion", "created": 0,
            "model": turn.model, "choices": [{
                "index": 0, "message": message,
                "finish_reason": stop or ("tool_calls" if calls else "stop")}]}


def _anthropic(turn: Script, stop: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for seg in turn.segments:
        if isinstance(seg, Text):
            content.append({"type": "text", "text": "".join(seg.fragments)})
        elif isinstance(seg, Call):
            content.append({"type": "tool_use", "id": seg.call_id, "name": seg.tool,
                            "input": _object(seg.args)})
    return {"id": "msg_whole", "type": "message", "role": "assistant", "model": turn.model,
            "content": content, "stop_reason": stop or ("tool_use" if turn.calls else
                                                        "end_turn"),
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def _responses(turn: Script, stop: str | None = None) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            output.append({"type": "message", "id": f"msg_{n}", "status": "completed",
                           "role": "assistant", "content": [
                               {"type": "output_text", "text": "".join(seg.fragments),
                                "annotations": []}]})
        elif isinstance(seg, Call):
            output.append({"type": "function_call", "id": f"fc_{n}", "call_id": seg.call_id,
                           "name": seg.tool, "arguments": seg.args or "{}",
                           "status": "completed"})
    return {"id": "resp_whole", "object": "response", "created_at": 0, "model": turn.model,
            "status": stop or "completed", "output": output}


_WRITERS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai-chat": _chat, "anthropic-messages": _anthropic, "openai-responses": _responses}


def whole(fmt: str, turn: Script, stop: str | None = None) -> bytes:
    """The whole response to ``turn``'s request in ``fmt`` (``stop``: another stop reason)."""
    return json.dumps(_WRITERS[fmt](turn, stop)).encode()


TURN = Script((
    Text(("Let me ", "check.")),
    Call("get_weather", "call_1", ('{"city": "Zü', 'rich", "days": 3}')),
    Call("get_time", "call_2", ('{"tz": ', '"UTC"}')),
))
"""Prose and two calls: one with non-ASCII and an int, one that ends in a string."""


def _call(turn: Script, n: int, **change: Any) -> Script:
    """``turn`` with its ``n``-th segment changed."""
    segments = list(turn.segments)
    segments[n] = replace(segments[n], **change)
    return replace(turn, segments=tuple(segments))


def _stop_said_plainly(fmt: str, turn: Script) -> bytes:
    """The stream ends with a stop reason that does not say the model asked for tools."""
    frames = turns.write(fmt, turn)
    for f in frames:
        if fmt == "openai-chat" and f.role == "finish":
            f.payload["choices"][0]["finish_reason"] = "stop"
        elif fmt == "anthropic-messages" and f.role == "finish":
            f.payload["delta"]["stop_reason"] = "end_turn"
        elif fmt == "openai-responses" and f.role == "end":
            f.payload["response"] |= {"status": "incomplete",
                                      "incomplete_details": {"reason": "max_output_tokens"}}
    return turns.body(fmt, frames)


def _written(change: Callable[[Script], Script]) -> Callable[[str, Script], bytes]:
    return lambda fmt, turn: turns.turn_bytes(fmt, change(turn))


FAULTS: dict[str, tuple[Callable[[str, Script], bytes], str]] = {
    "arguments sent twice at the end": (_written(lambda t: _call(
        t, 2, fragments=('{"tz": ', '"UTC"}', '{"tz": "UTC"}'))), "arguments_duplicated"),
    "closing brace lost": (_written(lambda t: _call(
        t, 2, fragments=('{"tz": ', '"UTC"'))), "arguments_unclosed"),
    "second call dropped": (_written(lambda t: replace(t, segments=t.segments[:2])), "calls"),
    "int quoted": (_written(lambda t: _call(
        t, 1, fragments=('{"city": "Zü', 'rich", "days": "3"}'))), "arguments"),
    "another name": (_written(lambda t: _call(t, 2, tool="get_times")), "name"),
    "id missing": (_written(lambda t: _call(t, 1, call_id="")), "id"),
    "stop reason without tools": (_stop_said_plainly, "stop_reason"),
    "call left in the text": (_written(lambda t: replace(t, segments=(
        t.segments[0], Text(('<tool_call>{"name": "get_weather", "arguments',)),
        *t.segments[1:]))), "call_in_text"),
    "stream cut": (_written(lambda t: replace(t, cut=True)), "complete"),
}


class _Answers(StreamHandler):
    """Answers a request the way its body asks: ``model`` names the case, ``stream`` the way."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        owner = self.server.owner  # type: ignore[attr-defined]
        owner.asked.append(body)
        streamed, answer = owner.cases[body["model"]]
        if body["stream"]:
            self.start_stream(200, "text/event-stream")
            if body["model"] in owner.broken:  # half the body, and no last chunk
                self.wfile.write(chunk(streamed[:len(streamed) // 2]))
                return
            self.wfile.write(chunk(streamed) + chunk(b""))
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(_Answers, "127.0.0.1", 0) as s:
        s.cases, s.asked, s.broken = {}, [], set()  # type: ignore[attr-defined]
        yield s


def _ask(server: LoopbackServer, tmp: Path, fmt: str, streamed: bytes, answer: bytes,
         **body: Any) -> tuple[Path, Path]:
    """Serve one case and have conform's client ask for it both ways."""
    case = f"case-{len(server.cases)}"  # type: ignore[attr-defined]
    server.cases[case] = (streamed, answer)  # type: ignore[attr-defined]
    request = tmp / "turn.json"
    request.write_text(json.dumps({"model": case, "messages": [
        {"role": "user", "content": "Weather in Zürich?"}], **body}))
    return record_both(server.base_url + str(FORMATS[fmt].path), request, tmp / "out")


def _aspects(paths: tuple[Path, Path]) -> set[str]:
    table = conform(*paths)
    assert tuple(table.columns) == CONFORM_COLUMNS
    return set(table["aspect"].astype(str))


@pytest.mark.parametrize("fmt", WHOLE_FORMATS)
def test_a_conformant_server_reports_nothing(server, tmp_path, fmt: str) -> None:
    paths = _ask(server, tmp_path, fmt, turns.turn_bytes(fmt, TURN), whole(fmt, TURN))
    assert _aspects(paths) == set()


@pytest.mark.parametrize("fmt", WHOLE_FORMATS)
def test_other_cuts_of_the_same_arguments_report_nothing(server, tmp_path, fmt: str) -> None:
    cut = _call(_call(TURN, 1, fragments=('{"ci', 'ty": "Zürich"', ', "days"', ': 3}')),
                2, fragments=('{"tz": "UTC"}',))
    paths = _ask(server, tmp_path, fmt, turns.turn_bytes(fmt, cut), whole(fmt, TURN))
    assert _aspects(paths) == set()


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("fmt", WHOLE_FORMATS)
def test_each_fault_is_reported_under_its_own_aspect(server, tmp_path, fmt: str,
                                                     fault: str) -> None:
    stream, aspect = FAULTS[fault]
    paths = _ask(server, tmp_path, fmt, stream(fmt, TURN), whole(fmt, TURN))
    assert _aspects(paths) == {aspect}


@pytest.mark.parametrize("fmt", WHOLE_FORMATS)
def test_a_call_of_no_arguments_streamed_as_nothing_conforms_to_an_empty_object(
        fmt: str) -> None:
    """Anthropic streams no ``partial_json`` for it and answers ``"input": {}`` whole."""
    turn = _call(TURN, 2, fragments=())
    assert conform(turns.turn_bytes(fmt, turn), whole(fmt, turn)).empty


def test_calls_after_a_zero_argument_call_streamed_empty_name_the_keys_lost() -> None:
    """vllm-project/vllm#47901: every call after one of no arguments streams as ``{}``."""
    right = Script((Call("get_time", "call_0", ()),
                    Call("get_weather", "call_1", ('{"city": "Rome", "days": 3}',))))
    wrong = _call(right, 1, fragments=("{}",))
    table = conform(turns.turn_bytes("openai-chat", wrong), whole("openai-chat", right))
    assert table[["aspect", "call"]].astype(str).values.tolist() == [["arguments", "1"]]
    assert table["detail"].iloc[0].startswith("key city: the stream lacks it")
    assert "1 more (days)" in table["detail"].iloc[0]


def test_an_int_sent_quoted_names_the_key_and_both_types() -> None:
    quoted = FAULTS["int quoted"][0]("openai-chat", TURN)
    detail = conform(quoted, whole("openai-chat", TURN))["detail"].iloc[0]
    assert detail == ('key days: the stream sends "3" (a string), the whole response 3 '
                      "(a number)")


def test_arguments_sent_twice_say_so() -> None:
    twice = FAULTS["arguments sent twice at the end"][0]("openai-chat", TURN)
    detail = conform(twice, whole("openai-chat", TURN))["detail"].iloc[0]
    assert "then the same arguments again ({..}{..}" in detail


def test_a_brace_sent_before_the_whole_arguments_is_duplication_too() -> None:
    """vllm-project/vllm#51697: under other cuts the client gets ``{{"city": ...}``."""
    stray = _call(TURN, 2, fragments=("{", '{"tz": ', '"UTC"}'))
    table = conform(turns.turn_bytes("openai-chat", stray), whole("openai-chat", TURN))
    assert table["aspect"].astype(str).tolist() == ["arguments_duplicated"]
    assert table["detail"].iloc[0].startswith("the stream sends '{' and then the whole")


def test_a_lost_brace_names_what_is_missing() -> None:
    nested = _call(TURN, 1, fragments=('{"city": "Zürich", "days": [3, 4]',))
    table = conform(turns.turn_bytes("openai-chat", nested),
                    whole("openai-chat", _call(TURN, 1, fragments=(
                        '{"city": "Zürich", "days": [3, 4]}',))))
    assert table["detail"].tolist() == [
        "the stream sends the arguments without their closing '}'"]


def test_arguments_that_parse_to_nothing_like_the_whole_ones_are_invalid() -> None:
    junk = _call(TURN, 2, fragments=('{"tz": UTC}',))
    table = conform(turns.turn_bytes("openai-chat", junk), whole("openai-chat", TURN))
    assert table["aspect"].astype(str).tolist() == ["arguments_invalid"]
    assert table["detail"].iloc[0].startswith("the stream sends text that does not parse")


def test_other_ids_on_both_sides_are_no_difference() -> None:
    """Two requests mint two ids: only an id's presence and shape are compared."""
    other = _call(_call(TURN, 1, call_id="call_A9"), 2, call_id="call_B7")
    assert conform(turns.turn_bytes("openai-chat", other), whole("openai-chat", TURN)).empty


def test_two_calls_streamed_with_one_id_are_an_id_difference() -> None:
    shared = _call(TURN, 2, call_id="call_1")
    table = conform(turns.turn_bytes("openai-responses", shared),
                    whole("openai-responses", TURN))
    assert table["detail"].tolist() == ["call 1 has the id the stream gave call 0"]


def test_the_same_calls_announced_in_another_order_are_one_order_row() -> None:
    swapped = replace(TURN, segments=(TURN.segments[0], TURN.segments[2], TURN.segments[1]))
    table = conform(turns.turn_bytes("anthropic-messages", swapped),
                    whole("anthropic-messages", TURN))
    assert table["aspect"].astype(str).tolist() == ["order"]


def test_a_call_only_in_the_text_is_missing_from_the_calls_too() -> None:
    """waybarrios/vllm-mlx#107: the markup streams as content and no call is announced."""
    as_text = replace(TURN, quirks=frozenset({"call_in_text"}))
    table = conform(turns.turn_bytes("openai-chat", as_text), whole("openai-chat", TURN))
    assert set(table["aspect"].astype(str)) == {"calls", "stop_reason", "call_in_text"}


def test_the_stop_reason_is_compared_in_the_formats_terms() -> None:
    """A streamed Responses turn says ``incomplete: max_output_tokens`` where the whole
    response says ``max_output_tokens``: the same reason."""
    cut_short = _stop_said_plainly("openai-responses", TURN)
    answer = whole("openai-responses", TURN, stop="incomplete")
    payload = json.loads(answer) | {"incomplete_details": {"reason": "max_output_tokens"}}
    assert conform(cut_short, json.dumps(payload).encode()).empty


def test_a_format_outside_the_main_three_conforms_through_its_own_whole_reader() -> None:
    answer = {"model": "m", "created_at": "2026-01-01T00:00:00Z", "done": True,
              "done_reason": "stop", "message": {"role": "assistant", "content": "Let me check.",
                                                 "tool_calls": [
        {"id": c.call_id, "function": {"name": c.tool, "arguments": json.loads(c.args)}}
        for c in TURN.calls]}}
    table = conform(turns.turn_bytes("ollama", TURN), json.dumps(answer).encode())
    assert table.empty and table.attrs["format"] == "ollama"


def test_a_whole_response_of_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="the stream is openai-chat but the whole response "
                                         "is anthropic-messages"):
        conform(turns.turn_bytes("openai-chat", TURN), whole("anthropic-messages", TURN))


def test_a_whole_response_the_kit_cannot_read_is_refused() -> None:
    with pytest.raises(ValueError, match="none of the whole responses the kit reads"):
        conform(turns.turn_bytes("openai-chat", TURN), b'{"hello": "world"}')


def test_both_answers_are_saved_byte_exact_with_their_provenance(server, tmp_path) -> None:
    served = turns.turn_bytes("openai-chat", TURN)
    streamed, answer = _ask(server, tmp_path, "openai-chat", served, whole("openai-chat", TURN))
    assert streamed.read_bytes() == served and streamed.suffix == ".sse"
    assert answer.read_bytes() == whole("openai-chat", TURN) and answer.suffix == ".json"
    for path in (streamed, answer):
        meta = json.loads(Path(f"{path}.meta.json").read_text())
        assert meta["status"] == 200 and Path(f"{path}.timing.tsv").is_file()


def test_the_request_is_sent_streamed_then_whole_without_stream_only_keys(server,
                                                                        tmp_path) -> None:
    _ask(server, tmp_path, "openai-chat", turns.turn_bytes("openai-chat", TURN),
         whole("openai-chat", TURN), stream_options={"include_usage": True})
    streamed, plain = server.asked[-2:]
    assert streamed["stream"] is True and streamed["stream_options"] == {"include_usage": True}
    assert plain["stream"] is False and "stream_options" not in plain


def test_a_stream_the_server_breaks_off_is_kept_and_read_as_incomplete(server,
                                                                       tmp_path) -> None:
    server.broken.add(f"case-{len(server.cases)}")
    streamed, answer = _ask(server, tmp_path, "anthropic-messages",
                            turns.turn_bytes("anthropic-messages", TURN),
                            whole("anthropic-messages", TURN))
    assert json.loads(Path(f"{streamed}.meta.json").read_text())["cut_off"]
    table = conform(streamed, answer)
    assert "the recording broke off here" in " ".join(table["detail"])
    assert set(table["aspect"].astype(str)) == {"calls", "complete"}  # cut inside call 0


def test_a_stream_cut_inside_a_frame_names_the_byte() -> None:
    body = turns.turn_bytes("openai-chat", TURN)
    table = conform(body[:-20], whole("openai-chat", TURN))
    first = table[table["call"].isna()]["detail"].iloc[0]
    assert first.startswith(f"at byte {body.rindex(b'data:', 0, len(body) - 20)}: ")


def test_a_server_off_this_machine_is_never_asked(tmp_path) -> None:
    (tmp_path / "turn.json").write_text("{}")
    with pytest.raises(ValueError, match=re.escape("refusing '192.0.2.1'")):
        record_both("http://192.0.2.1/v1/chat/completions", tmp_path / "turn.json", tmp_path)
    assert not list(tmp_path.glob("*.sse"))


def test_the_format_comes_from_the_urls_path() -> None:
    assert request_format("http://localhost:11434/api/chat").name == "ollama"
    assert request_format("http://127.0.0.1:8080/v1/messages").name == "anthropic-messages"


def test_a_path_that_names_no_format_asks_for_one() -> None:
    with pytest.raises(ValueError, match="say which with --format"):
        request_format("http://127.0.0.1:8000/generate")


# -- the command -----------------------------------------------------------------------------
def _files(tmp: Path, stream: bytes, answer: bytes) -> list[str]:
    (tmp / "s.sse").write_bytes(stream)
    (tmp / "w.json").write_bytes(answer)
    return ["--streamed", str(tmp / "s.sse"), "--whole", str(tmp / "w.json")]


def test_the_command_exits_0_for_a_conformant_pair(tmp_path, capsys) -> None:
    args = _files(tmp_path, turns.turn_bytes("openai-chat", TURN), whole("openai-chat", TURN))
    assert cli.main(["conform", *args]) == 0
    assert capsys.readouterr().out.rstrip().endswith(
        "(openai-chat: 2 calls streamed, 2 whole): conformant")


def test_the_command_exits_1_with_a_table_of_differences(tmp_path, capsys) -> None:
    quoted = FAULTS["int quoted"][0]("openai-chat", TURN)
    assert cli.main(["conform", *_files(tmp_path, quoted, whole("openai-chat", TURN))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("1 difference")
    assert out[1].split() == ["arguments", "call", "0", "key", "days:", "the", "stream",
                              "sends", '"3"', "(a", "string),", "the", "whole", "response",
                              "3", "(a", "number)"]
    assert out[2].strip() == 'streamed: {"city": "Zürich", "days": "3"}'


def test_the_command_shows_captured_text_inert(tmp_path, capsys) -> None:
    hostile = _call(TURN, 2, tool="get\x1b[2Jtime")
    args = _files(tmp_path, turns.turn_bytes("openai-chat", hostile), whole("openai-chat", TURN))
    assert cli.main(["conform", *args]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "is named 'get\\x1b[2Jtime' in the stream" in out  # escaped once, not twice


def test_the_command_gives_json_for_machines(tmp_path, capsys) -> None:
    cut = FAULTS["stream cut"][0]("anthropic-messages", TURN)
    args = _files(tmp_path, cut, whole("anthropic-messages", TURN))
    assert cli.main(["conform", *args, "--json"]) == 1
    said = json.loads(capsys.readouterr().out)
    assert said["conformant"] is False and said["format"] == "anthropic-messages"
    assert {d["aspect"] for d in said["differences"]} == {"complete"}
    assert said["differences"][0]["call"] == 1


def test_the_command_asks_a_local_server_both_ways(server, tmp_path, capsys) -> None:
    server.cases["cli"] = (turns.turn_bytes("openai-responses", TURN),
                           whole("openai-responses", TURN))
    (tmp_path / "turn.json").write_text(json.dumps({"model": "cli", "input": "hi"}))
    code = cli.main(["conform", "--url", server.base_url + "/v1/responses",
                     "--request", str(tmp_path / "turn.json"), "--out", str(tmp_path)])
    assert code == 0 and "conformant" in capsys.readouterr().out
    assert len(list(tmp_path.glob("*-streamed.sse"))) == 1


@pytest.mark.parametrize("args", [
    [],
    ["--streamed", "s.sse"],
    ["--url", "http://127.0.0.1:1/v1/chat/completions"],
    ["--streamed", "s.sse", "--whole", "w.json", "--url", "http://127.0.0.1:1/x"],
])
def test_the_command_exits_2_when_told_neither_or_both_ways(args: list[str], capsys) -> None:
    assert cli.main(["conform", *args]) == 2
    assert "give --streamed S --whole W, or --url URL --request BODY" in \
        capsys.readouterr().err


def test_the_command_exits_2_for_a_host_off_this_machine(tmp_path, capsys,
                                                         monkeypatch) -> None:
    (tmp_path / "turn.json").write_text("{}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    code = cli.main(["conform", "--url", "http://example.com/v1/chat/completions",
                     "--request", str(tmp_path / "turn.json")])
    assert code == 2 and "servers on this machine only" in capsys.readouterr().err
    assert list((tmp_path / "tmp").iterdir()) == []  # no empty folder of its own left


def test_the_command_exits_2_when_nothing_answers_and_leaves_no_folder(tmp_path, capsys,
                                                                        monkeypatch) -> None:
    (tmp_path / "turn.json").write_text("{}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with socket.socket() as held:  # a loopback port nothing listens on
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
    code = cli.main(["conform", "--url", f"http://127.0.0.1:{port}/v1/chat/completions",
                     "--request", str(tmp_path / "turn.json")])
    assert code == 2 and "conform: error" in capsys.readouterr().err
    assert list((tmp_path / "tmp").iterdir()) == []


def test_the_command_exits_2_for_a_missing_capture(tmp_path, capsys) -> None:
    code = cli.main(["conform", "--streamed", str(tmp_path / "none.sse"),
                     "--whole", str(tmp_path / "none.json")])
    assert code == 2 and "none.sse" in capsys.readouterr().err
