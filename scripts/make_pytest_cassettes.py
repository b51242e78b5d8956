"""Write the cassettes examples/pytest/ ships, reproducibly and offline.

Each example test is run in the plugin's record mode (``--streamcalls-record-mode=all``)
with the kit's ``serve`` on loopback as its upstream, serving one turn the kit's writer
(:mod:`streamcalls_lab.turns`) writes in the test's wire format: prose with a multi-byte
character, then two calls whose arguments hold escapes and non-ASCII text. The cassettes are
what the recording proxy saved of those exchanges, as they would be from a real provider.

    python scripts/make_pytest_cassettes.py [test_x.py::test_y ...]   # all, or those
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

from streamcalls_lab import check, turns
from streamcalls_lab.traffic.serve import SSEServer

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pytest"

TURN = [
    turns.Text(("Let me check ", "the weather in Zürich ", "and the time there…")),
    turns.Call("get_weather", "call_weather_1",
               ('{"city": "Zü', 'rich", "note": "say \\"hi\\"', '\\nthen café ☕"}')),
    turns.Call("get_time", "call_time_2", ('{"tz": "Europe/', 'Zurich"}')),
]

TESTS = {  # test node → the wire format its client speaks
    "test_openai.py::test_chat_iteration": "openai-chat",
    "test_openai.py::test_chat_stream_helper": "openai-chat",
    "test_openai.py::test_responses_iteration": "openai-responses",
    "test_anthropic.py::test_messages_iteration": "anthropic-messages",
    "test_anthropic.py::test_messages_stream_helper": "anthropic-messages",
    "test_langchain.py::test_chat_openai": "openai-chat",
}


def main(only: list[str]) -> None:
    for node, fmt in TESTS.items():
        if only and node not in only:
            continue
        module, test = node.split("::")
        shutil.rmtree(EXAMPLE / "cassettes" / module.removesuffix(".py") / test,
                      ignore_errors=True)  # a fresh cassette: its one case is as-recorded
        with SSEServer(check.turn_bytes(fmt, TURN), speed=math.inf) as upstream:
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            node, "--streamcalls-record-mode=all",
                            f"--streamcalls-upstream={upstream.base_url}"],
                           cwd=EXAMPLE, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
