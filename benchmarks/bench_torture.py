"""The torture harness's pace: cases per second for the reference client and a Python SDK
client, a process per case against loop mode, as ratios in one run.

Not a test: run ``python benchmarks/bench_torture.py`` and read the numbers (``--suite
quick`` for a shorter run, ``--format`` for another format, ``--langchain`` to add the
slowest client to start, langchain-openai). The target: the full suite of one format under
5 minutes on 2 cores. Each pair of runs must give the same report, or this says so.
"""

from __future__ import annotations

import argparse
import time

from streamcalls_lab.torture import REAL_CLIENTS, RealClient, check_client, tolerated

TARGET = 300.0  # seconds: the full suite of one format, in a client's CI
# the catalogue's script (streamcalls_lab/torture/clients.toml) of the SDK client and the
# LangChain client run on each format
SDK = {"openai-chat": "openai_chat_stream.py", "openai-responses": "openai_responses_stream.py",
       "anthropic-messages": "anthropic_stream.py"}
LANGCHAIN = {"openai-chat": "langchain_openai_client.py",
             "openai-responses": "langchain_openai_client.py",
             "anthropic-messages": "langchain_anthropic_client.py"}


def _pace(client: RealClient, fmt: str, suite: str) -> None:
    took, reports, cmd = {}, {}, client.command()
    for loop in (False, True):
        t0 = time.perf_counter()
        reports[loop] = check_client(cmd, [fmt], suite=suite, loop=loop, progress=False)
        took[loop] = time.perf_counter() - t0
    n = reports[False].attrs["cases"]
    same = (reports[False].to_dict("records") == reports[True].to_dict("records")
            and tolerated(reports[False]).equals(tolerated(reports[True])))
    found = ", ".join(reports[True]["class"]) or "clean"
    print(f"{client.name:32} {n:4} cases"
          f"  per case {took[False]:6.1f} s {n / took[False]:6.1f} cases/s"
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
    runs = ["reference.py", SDK[ns.format], *([LANGCHAIN[ns.format]] if ns.langchain else [])]
    print(f"torture, suite {ns.suite}, format {ns.format}, jobs: the default")
    for client in map(REAL_CLIENTS.__getitem__, runs):
        if (why := client.missing()) is not None:
            print(f"{client.name:32} skipped: {why}")
            continue
        assert ns.format in client.formats, (client.script, ns.format)
        _pace(client, ns.format, ns.suite)


if __name__ == "__main__":
    main()
