"""Each format's documented turns, read row by row: one test over the formats.

A format's own module writes its turn as its documentation shows one (``WEATHER``: text,
then a call whose arguments come in two fragments; AG-UI's calls in chunks too); here each is
held to the rows it must give, event by event, to its calls and to the reason its turn ends
with. What else each event means stays in the format's own module.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

import streamcalls_lab as scl

from ..support import agui_turns as ag_ui
from ..support import assistants_turns as assistants
from ..support import data_stream_turns as ai_sdk_data
from ..support import mistral_turns as mistral
from ..support import realtime_turns as realtime
from ..support import ui_stream_turns as ai_sdk_ui
from ..support.wire_samples import call_triples, rows_of


class Documented(NamedTuple):
    body: bytes
    rows: list[tuple]
    """(event, kind, block, fragment) of every row (``wire_samples.rows_of``)."""
    calls: list[tuple[str, str, str]]
    """Each call's (call_id, tool, args), every one finished and valid JSON."""
    reasons: list[str]
    """The ``reason`` column's values."""
    final: bool | None = None
    """``final_matches``: None where the format repeats no call's arguments whole."""


REALTIME_ROWS = [
    ("session.created", "other", None, "-"),
    ("response.created", "other", None, "-"),
    ("response.output_item.added", "call_start", 0, "-"),
    ("response.function_call_arguments.delta", "args_delta", 0, '{"city":'),
    ("response.function_call_arguments.delta", "args_delta", 0, '"Paris"}'),
    ("response.function_call_arguments.done", "args_done", 0, "-"),
    ("response.output_item.done", "block_stop", 0, "-"),
    ("response.done", "turn_stop", None, "-"),
]
PARIS = '{"city":"Paris"}'

TURNS = {
    # a call started, filled by args and ended by its end
    "ag-ui": Documented(ag_ui.WEATHER, [
        ("RUN_STARTED", "other", None, "-"),
        ("TEXT_MESSAGE_START", "text_start", None, "-"),
        ("TEXT_MESSAGE_CONTENT", "text_delta", None, "Checking the weather."),
        ("TEXT_MESSAGE_END", "other", None, "-"),
        ("TOOL_CALL_START", "call_start", 0, "-"),
        ("TOOL_CALL_ARGS", "args_delta", 0, '{"city":'),
        ("TOOL_CALL_ARGS", "args_delta", 0, '"Paris"}'),
        ("TOOL_CALL_END", "block_stop", 0, "-"),
        ("TOOL_CALL_RESULT", "other", None, "-"),
        ("STATE_DELTA", "other", None, "-"),
        ("RUN_FINISHED", "turn_stop", None, "-"),
    ], [("call_1", "get_weather", PARIS)], ["success"]),
    # calls in chunks, expanded as the client expands them: the first chunk names the call, a
    # delta fills the call being chunked, a chunk with another id ends it, and so does any
    # other event but RAW and ACTIVITY_*
    "ag-ui (in chunks)": Documented(ag_ui.CHUNKED, [
        ("RUN_STARTED", "other", None, "-"),
        ("TOOL_CALL_CHUNK", "call_start", 0, "-"),
        ("TOOL_CALL_CHUNK", "args_delta", 0, '{"x"'),
        ("TOOL_CALL_CHUNK", "args_delta", 0, ":1}"),
        ("RAW", "other", None, "-"),
        ("TOOL_CALL_CHUNK", "block_stop", 0, "-"),
        ("TOOL_CALL_CHUNK", "call_start", 1, "-"),
        ("TOOL_CALL_CHUNK", "args_delta", 1, "{}"),
        ("TEXT_MESSAGE_CHUNK", "block_stop", 1, "-"),
        ("TEXT_MESSAGE_CHUNK", "text_delta", None, "done"),
        ("RUN_FINISHED", "turn_stop", None, "-"),
    ], [("a", "f", '{"x":1}'), ("b", "g", "{}")], []),
    # a call started, filled by deltas and ended by the tool call
    "ai-sdk-data": Documented(ai_sdk_data.WEATHER, [
        ("start_step", "other", None, "-"),
        ("text", "text_delta", None, "Checking "),
        ("text", "text_delta", None, "the weather."),
        ("tool_call_streaming_start", "call_start", 0, "-"),
        ("tool_call_delta", "args_delta", 0, '{"city":'),
        ("tool_call_delta", "args_delta", 0, '"Paris"}'),
        ("tool_call", "block_stop", 0, "-"),
        ("tool_result", "other", None, "-"),
        ("finish_step", "other", None, "-"),
        ("finish_message", "turn_stop", None, "-"),
    ], [("call_1", "get_weather", PARIS)], ["tool-calls"]),
    # a call announced, filled and ended by its input available; the server runs it, then a
    # second step says its text
    "ai-sdk-ui": Documented(ai_sdk_ui.SERVER_TOOL, [
        ("start", "other", None, "-"),
        ("start-step", "other", None, "-"),
        ("tool-input-start", "call_start", 0, "-"),
        ("tool-input-delta", "args_delta", 0, '{"city":"'),
        ("tool-input-delta", "args_delta", 0, 'San Francisco"}'),
        ("tool-input-available", "block_stop", 0, "-"),
        ("tool-output-available", "other", None, "-"),
        ("finish-step", "other", None, "-"),
        ("start-step", "other", None, "-"),
        ("text-start", "text_start", None, "-"),
        ("text-delta", "text_delta", None, "It is sunny."),
        ("text-end", "other", None, "-"),
        ("finish-step", "other", None, "-"),
        ("finish", "turn_stop", None, "-"),
        ("[DONE]", "turn_stop", None, "-"),
    ], [(ai_sdk_ui.CALL, "getWeatherInformation", '{"city":"San Francisco"}')], ["stop"]),
    # a call announced by its first delta and ended by the response done (which states no
    # reason)
    "mistral-conversations": Documented(mistral.WEATHER, [
        ("conversation.response.started", "other", None, "-"),
        ("message.output.delta", "text_delta", None, "Checking "),
        ("message.output.delta", "text_delta", None, "the weather."),
        ("function.call.delta", "call_start", 0, "-"),
        ("function.call.delta", "args_delta", 0, '{"city"'),
        ("function.call.delta", "args_delta", 0, ':"Paris"}'),
        ("conversation.response.done", "block_stop", 0, "-"),
        ("conversation.response.done", "turn_stop", None, "-"),
    ], [("D681PevKs", "get_weather", PARIS)], []),
    # a call announced by its first delta and ended by the run waiting for its output
    "openai-assistants": Documented(assistants.WEATHER, [
        ("thread.run.created", "other", None, "-"),
        ("thread.run.queued", "other", None, "-"),
        ("thread.run.in_progress", "other", None, "-"),
        ("thread.run.step.created", "other", None, "-"),
        ("thread.run.step.delta", "call_start", 0, "-"),
        ("thread.run.step.delta", "args_delta", 0, '{"city":'),
        ("thread.run.step.delta", "args_delta", 0, '"Paris"}'),
        ("thread.run.requires_action", "block_stop", 0, "-"),
        ("thread.run.requires_action", "turn_stop", None, "-"),
        ("[DONE]", "turn_stop", None, "-"),
    ], [("call_1", "get_weather", PARIS)], ["requires_action"], final=True),
    # a call announced, filled, repeated and ended by its item: bare, as recv() gives each
    # event, and with the receive time RealtimeClient saves
    "openai-realtime": Documented(realtime.lines(*realtime.WEATHER), REALTIME_ROWS,
                                  [("call_1", "get_weather", PARIS)], ["completed"], final=True),
    "openai-realtime (with its receive time)": Documented(
        realtime.lines(*realtime.WEATHER, wrap=True), REALTIME_ROWS,
        [("call_1", "get_weather", PARIS)], ["completed"], final=True),
}


@pytest.mark.parametrize("name", TURNS)
def test_a_documented_turn_reads_row_by_row_to_its_calls(name: str) -> None:
    turn = TURNS[name]
    assert rows_of(turn.body) == turn.rows
    table = scl.calls(turn.body)
    assert call_triples(table) == turn.calls
    assert table.complete.all() and table.valid_json.all()
    assert [c["final_matches"] for c in table.to_dict("records")] == [turn.final] * len(table)
    df = scl.load(turn.body)
    assert df.reason.dropna().tolist() == turn.reasons
    assert set(df.provider) == {name.split()[0]}
