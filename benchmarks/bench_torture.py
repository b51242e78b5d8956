"""The torture harness's pace: cases per second for the reference client and a Python SDK
client, a process per case against loop mode, as ratios in one run.

Not a test: run ``python benchmarks/bench_torture.py`` and read the numbers (``--suite
quick`` for a shorter run, ``--format`` for another format, ``--langchain`` to add the
slowest client to start, langchain-openai). The target: the full suite of one format under
5 minutes on 2 cores. Each pair of runs must give the same report, or this says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from streamcalls_lab.torture import check_client, tolerated

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
TARGET = 300.0  # seconds: the full suite of one format, in a client's CI
# (name, script under clients/, the module it needs) for each format
SDK = {"openai-chat": ("openai (chat stream helper)", "openai_chat_stream.py", "openai"),
       "openai-responses": ("openai (responses helper)", "openai_responses_stream.py", "openai"),
       "anthropic-messages": ("anthropic (stream helper)", "anthropic_stream.py", "anthropic")}
LANGCHAIN = {
    "openai-chat": ("langchain-openai", "langchain_openai_client.py", "langchain_openai"),
    "openai-responses": ("langchain-openai", "langchain_openai_client.py", "langchain_openai"),
    "anthropic-messages": ("langchain-anthropic", "langchain_anthropic_client.py",
                           "langchain_anthropic")}


def _pace(name: str, cmd: list[str], fmt: str, suite: str) -> None:
    took, reports = {}, {}
    for loop in (False, True):
        t0 = time.perf_counter()
        reports[loop] = check_client(cmd, [fmt], suite=suite, loop=loop, progress=False)
        took[loop] = time.perf_counter() - t0
    n = reports[False].attrs["cases"]
    same = (reports[False].to_dict("records") == reports[True].to_dict("records")
            and tolerated(reports[False]).equals(tolerated(reports[True])))
    found = ", ".join(reports[True]["class"]) or "clean"
    print(f"{name:28} {n:4} cases  per case {took[False]:6.1f} s {n / took[False]:6.1f} cases/s"
          f"  loop {took[True]:6.1f} s {n / took[True]:6.1f} cases/s"
          f"  loop x{took[False] / took[True]:4.1f}  {'same report' if same else 'REPORTS DIFFER'}"
          f"  -> {found}")
    if took[True] > TARGET and suite == "full":
        print(f"  loop mode over the {TARGET:.0f} s target for one format")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="full", choices=("quick", "full"))
    parser.add_argument("--format", default="openai-chat", choices=list(SDK))
    parser.add_argument("--langchain", action="store_true",
                        help="also langchain-openai (about a minute more)")
    ns = parser.parse_args()
    runs = [("reference", "reference.py", None), SDK[ns.format]]
    if ns.langchain:
        runs.append(LANGCHAIN[ns.format])
    print(f"torture, suite {ns.suite}, format {ns.format}, jobs: the default")
    for name, script, need in runs:
        if need is not None and importlib.util.find_spec(need) is None:
            print(f"{name:28} skipped: {need} is not installed")
            continue
        _pace(name, [sys.executable, str(CLIENTS / script)], ns.format, ns.suite)


if __name__ == "__main__":
    main()
