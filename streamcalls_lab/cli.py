"""``python -m streamcalls_lab``: the data path from a terminal.

A subcommand is one function: decorate it with ``@command(arg(...), ...)``;
its name is the subcommand, the first line of its docstring the help, and it
returns an exit code. Imports happen inside the function, so ``--help``
stays fast and one subcommand's dependencies never slow another.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .wording import count

if TYPE_CHECKING:
    import pandas as pd

Run = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    run: Run
    args: tuple[tuple[tuple[str, ...], dict[str, Any]], ...]


COMMANDS: dict[str, Command] = {}
COMMANDS_PROG = "python -m streamcalls_lab"


def arg(*names: str, **options: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """One ``add_argument`` call, recorded for later."""
    return names, options


def command(*args: tuple[tuple[str, ...], dict[str, Any]],
            name: str | None = None) -> Callable[[Run], Run]:
    """Register a subcommand (its name defaults to the function's, ``_`` as ``-``)."""

    def register(run: Run) -> Run:
        COMMANDS[name or run.__name__.removeprefix("cmd_").replace("_", "-")] = Command(run, args)
        return run

    return register


LIMITS = (  # the servers' limits on their clients, one set of flags for serve and proxy
    ("--header-timeout", {"type": float, "metavar": "S",
                          "help": "seconds from a request's first byte to the end of its "
                                  "headers (default 10)"}),
    ("--max-connections", {"type": int, "metavar": "N",
                           "help": "connections served at once; more are answered 503 "
                                   "(default 512)"}),
)


def _error(message: object) -> None:
    """A line on stderr made inert: an error may quote a capture, a file name or a client's
    output, and an escape sequence in one must not act on the terminal."""
    from .display import inert

    print(inert(message), file=sys.stderr)


def _limits(ns: argparse.Namespace, *more: str) -> dict[str, Any]:
    """The limit flags given (those not given keep the library's defaults)."""
    names = [n.removeprefix("--").replace("-", "_") for n, _ in LIMITS] + list(more)
    return {n: getattr(ns, n) for n in names if getattr(ns, n) is not None}


def _speed(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("speed must be > 0 (inf: no waiting)")
    return value


# -- subcommands -------------------------------------------------------------------------
@command(
    arg("capture", help="a .sse capture (its .timing.tsv sidecar sets the pace), or a HAR"),
    arg("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)"),
    arg("--speed", type=_speed, default=1.0, help="pace factor: 2 is twice as fast, inf no wait"),
    arg("--delay", type=float, default=0.0,
        help="seconds between frames when the capture has no timing (default 0)"),
    arg("--status", type=int, default=200, help="HTTP status to answer with (default 200)"),
    *(arg(name, **options) for name, options in LIMITS),
)
def cmd_serve(ns: argparse.Namespace) -> int:
    """Stream a capture over HTTP on loopback, byte-exact, for SDK clients to read."""
    from .traffic.serve import SSEServer

    server = SSEServer(ns.capture, port=ns.port, speed=ns.speed, default_delay=ns.delay,
                       status=ns.status, **_limits(ns))
    print(f"serving {', '.join(server.names)} at {server.base_url} (any POST or GET path)")
    for why in server.skipped:
        _error(f"not served: {why}")
    print(f"  anthropic.Anthropic(base_url={server.base_url!r}, api_key='fake')")
    print(f"  openai.OpenAI(base_url={server.base_url + '/v1'!r}, api_key='fake')")
    print("Ctrl-C to stop", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


@command(
    arg("--url", required=True, help="endpoint, e.g. https://api.anthropic.com/v1/messages"),
    arg("--body", required=True, help="JSON request body file ('-' reads stdin)"),
    arg("--out", required=True, help="capture to write (X.sse; sidecars go beside it)"),
    arg("--header", action="append", default=[], metavar="K:V",
        help="extra request header (repeatable); credentials are refused here"),
    arg("--key-env", default="auto",
        help="environment variable holding the key (default: ANTHROPIC_API_KEY or "
             "OPENAI_API_KEY by host, none elsewhere; 'none' sends no key)"),
    arg("--auth", default="auto",
        choices=("auto", "x-api-key", "bearer", "api-key", "x-goog-api-key", "none"),
        help="header that carries the key (default: by host)"),
    arg("--timeout", type=float, default=600.0, help="seconds to wait for each read"),
)
def cmd_record(ns: argparse.Namespace) -> int:
    """POST a request and save the streamed response byte-exact, with read timing; keys
    come from the environment and are never written."""
    from pathlib import Path

    from .traffic.record import record

    body = sys.stdin.buffer.read() if ns.body == "-" else Path(ns.body).read_bytes()
    key_env = None if ns.key_env == "none" else ns.key_env
    rec = record(ns.url, body, ns.out, headers=ns.header, key_env=key_env, auth=ns.auth,
                 timeout=ns.timeout)
    print(f"saved {rec.nbytes} bytes in {rec.nreads} reads to {rec.path} "
          f"(timing: {rec.timing.name}, provenance: {rec.meta.name})")
    if "event-stream" not in rec.content_type:
        _error(f"warning: the response was {rec.content_type or 'untyped'}, not an event stream")
    return 0


@command(
    arg("files", nargs="+", help="HAR (.har), VCR cassettes (.yaml/.yml/.json), "
                                 "JSON-lines chunk logs (.jsonl), Claude Code stream-json "
                                 "(.jsonl/.ndjson/.json), claude-trace logs (.jsonl), AI SDK "
                                 "DevTools generations.json, mitmproxy flows (.mitm/.flow)"),
    arg("--out", required=True, help="directory for the .sse captures"),
)
def cmd_import(ns: argparse.Namespace) -> int:
    """Extract event streams from HAR, VCR, JSON-lines, Claude Code stream-json, claude-trace,
    AI SDK DevTools and mitmproxy recordings as .sse captures."""
    from .errors import CaptureError
    from .importers import import_paths

    errors: list[CaptureError] = []
    written = import_paths(ns.files, ns.out, errors=errors)
    print(f"wrote {count(len(written), 'capture')} to {ns.out}")
    return _failed("import", errors, "skipped")


@command(
    arg("paths", nargs="+", help=".sse captures or directories of them"),
    arg("--out", required=True, help="directory for the redacted copies"),
    arg("--salt", default=None,
        help="fixes the id mapping, so reruns give the same output (default: random)"),
    arg("--secret-env", action="append", default=[], metavar="NAME",
        help="an environment variable holding a credential: what redaction keeps is searched "
             "for it in every form (repeatable; a file that still shows it is refused)"),
)
def cmd_redact(ns: argparse.Namespace) -> int:
    """Replace values with same-size filler, keeping every length, split and escape."""
    from .redact import Refused, redact_paths

    refused: list[Refused] = []
    secrets = [os.environ[n] for n in ns.secret_env if os.environ.get(n)]
    written = redact_paths(ns.paths, ns.out, salt=ns.salt, refused=refused, secrets=secrets)
    print(f"redacted {count(len(written), 'capture')} into {ns.out}")
    return _failed("redact", refused, "nothing written for it")


def _failed(name: str, errors: Sequence[Exception], outcome: str) -> int:
    """The files a command gave up on, one line each on stderr, while the rest went on;
    the exit status: 1 when there were any."""
    for e in errors:
        _error(f"{COMMANDS_PROG} {name}: error: {e} ({outcome})")
    return 1 if errors else 0


@command(
    arg("capture", help="a .sse capture"),
    arg("--speed", type=_speed, default=1.0, help="pace factor (inf: all at once)"),
    arg("--delay", type=float, default=0.0,
        help="seconds between frames when the capture has no timing"),
)
def cmd_replay(ns: argparse.Namespace) -> int:
    """Write a capture to stdout at its recorded pace, like watching it arrive (at a
    terminal, with every control character and escape sequence shown, never acted on)."""
    from .display import InertStream
    from .fixtures import unreadable
    from .framing.eventstream import is_eventstream
    from .loader import load_captures
    from .sources import resolve
    from .traffic.replay import replay

    caps = resolve(ns.capture)
    bad = unreadable(load_captures(caps, strict=False), [c.name for c in caps])
    for name, why in bad.items():  # never a PNG or a JSON file dumped onto the terminal
        _error(f"{COMMANDS_PROG} replay: error: {ns.capture} ({name}): not a capture: {why}")
    if bad:
        return 1

    out = sys.stdout.buffer
    with open(ns.capture, "rb") as f:
        binary = is_eventstream(f.read(1))
    if binary and sys.stdout.isatty():
        print(f"{COMMANDS_PROG} replay: error: {ns.capture} is a binary AWS event-stream: "
              "redirect the output to a file or a pipe", file=sys.stderr)
        return 1
    # At a terminal, nothing in the capture may act: escapes, controls, bidi overrides
    # are shown as escapes (a pipe or a file gets the bytes exactly).
    shown = InertStream() if sys.stdout.isatty() else None
    try:
        for data in replay(ns.capture, speed=ns.speed, default_delay=ns.delay):
            out.write(data if shown is None else shown.feed(data).encode("utf-8"))
            out.flush()
        if shown is not None:
            out.write(shown.feed(b"", final=True).encode("utf-8"))
            out.flush()
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return 0


@command(
    arg("--out", required=True, help="capture to write (X.sse; X.sse.timing.tsv beside it)"),
    arg("--call", action="append", default=[], metavar="TOOL=ARGS",
        help="a call (repeatable, in order): ARGS is the JSON text sent verbatim, "
             "or @FILE to read it"),
    arg("--format", default="anthropic-messages",
        help="a wire format with a writer (default anthropic-messages)"),
    arg("--quirk", action="append", default=[], metavar="NAME",
        help="write what a quirky producer sends (repeatable): a name from the producers "
             "table (python -m streamcalls_lab inspect --quirks lists them)"),
    arg("--before", default="", help="prose before the calls"),
    arg("--after", default="", help="prose after the calls"),
    arg("--seed", default="0", help="same seed, same bytes (default 0)"),
    arg("--truncate", type=float, default=None,
        help="stop at this share (0-1) of the last call's arguments, with no stop event"),
)
def cmd_generate(ns: argparse.Namespace) -> int:
    """Write a realistic streamed turn (calibrated fragments, assumed timing) as a capture."""
    from pathlib import Path

    from .generate import generate

    calls = []
    for spec in ns.call:
        tool, sep, args = spec.partition("=")
        if not sep or not tool:
            raise ValueError(f"--call expects TOOL=ARGS, got {spec!r}")
        calls.append((tool, Path(args[1:]).read_text("utf-8") if args[:1] == "@" else args))
    seed = int(ns.seed) if ns.seed.lstrip("-").isdigit() else ns.seed  # as generate(seed=0)
    turn = generate(calls, provider=ns.format, before=ns.before, after=ns.after,
                    seed=seed, truncate=ns.truncate, quirks=ns.quirk)
    path = turn.write(ns.out)
    print(f"wrote {len(turn.body)} bytes in {len(turn.reads)} reads to {path}")
    return 0


@command(
    arg("paths", nargs="*", metavar="PATH", help="captures: files, folders or globs"),
    arg("--json", action="store_true", dest="as_json",
        help="one JSON object per turn (with --summary: the totals as one object)"),
    arg("--summary", action="store_true",
        help="totals per format, host, model, problem and anomaly, instead of each turn"),
    arg("--anomaly", action="append", default=[], metavar="NAME",
        help="only turns showing this anomaly (repeat for any of several; --quirks lists them)"),
    arg("--problems", action="store_true", help="only turns with problems"),
    arg("--host", action="append", default=[], metavar="HOST",
        help="only turns served by this host (repeat for any of several)"),
    arg("--quirks", action="store_true", help="list the producer quirks the kit knows"),
)
def cmd_inspect(ns: argparse.Namespace) -> int:
    """What did this server send me: per turn its provider, host and model, its calls, its
    problems and the producer quirks it shows; or, with --summary, the totals a folder's first
    screen needs. Exit 1 when a turn shown (or counted) has problems."""
    import json

    from tqdm.auto import tqdm

    from .producers import QUIRKS
    from .producers.report import matches, report_captures, summary, summary_text

    if ns.quirks:
        for q in QUIRKS.values():
            print(f"{q.name}: {q.summary} ({', '.join(q.threads)})")
        return 0
    if not ns.paths:
        print(f"{COMMANDS_PROG} inspect: error: give one or more captures, folders or globs",
              file=sys.stderr)
        return 2
    unknown = [a for a in ns.anomaly if a not in QUIRKS]
    if unknown:
        _error(f"{COMMANDS_PROG} inspect: error: no anomaly {unknown[0]!r}; the kit knows "
               f"{', '.join(QUIRKS)}")
        return 2
    from .sources import resolve

    caps = []
    for path in ns.paths:  # a path that names nothing is a usage error, found before any output
        try:
            caps += resolve(path, require=True)
        except (FileNotFoundError, ValueError) as e:
            _error(f"{COMMANDS_PROG} inspect: error: {e}")
            return 2
    troubled = False
    kept = []
    # a few captures at a time, so the bar moves (on a terminal only: tqdm stays quiet in a pipe)
    with tqdm(total=len(caps), unit="turn", desc="inspect", disable=None, leave=False,
              file=sys.stderr) as bar:
        for start in range(0, len(caps), INSPECT_BATCH):
            batch = caps[start:start + INSPECT_BATCH]
            for turn in report_captures(batch):
                if not matches(turn, anomaly=ns.anomaly, problems=ns.problems, host=ns.host):
                    continue
                troubled |= bool(turn.problems)
                if ns.summary:
                    kept.append(turn)
                else:
                    bar.clear()
                    print(json.dumps(turn.as_dict(), ensure_ascii=True) if ns.as_json
                          else turn.text())
            bar.update(len(batch))
    if ns.summary:
        totals = summary(kept)
        print(json.dumps(totals, ensure_ascii=True) if ns.as_json else summary_text(totals))
    return 1 if troubled else 0


INSPECT_BATCH = 64
"""Captures ``inspect`` reads at once: enough that loading stays batched, few enough that its
progress bar moves on a folder of thousands."""


@command(
    arg("--streamed", metavar="S", help="a streamed capture (.sse, .ndjson, ...)"),
    arg("--whole", metavar="W", help="the whole (non-streamed) answer to the same request"),
    arg("--url", help="instead: ask a server on this machine both ways, e.g. "
                      "http://127.0.0.1:8000/v1/chat/completions"),
    arg("--request", metavar="BODY", help="with --url: the request body (a JSON file)"),
    arg("--out", default=None,
        help="with --url: folder for both answers (default: a new temporary one)"),
    arg("--format", default=None,
        help="with --url: the request's wire format, where the URL's path does not say"),
    arg("--key-env", default=None,
        help="with --url: environment variable holding a key the server asks for"),
    arg("--timeout", type=float, default=600.0, help="with --url: seconds to wait for a read"),
    arg("--json", action="store_true", dest="as_json", help="the differences as JSON"),
)
def cmd_conform(ns: argparse.Namespace) -> int:
    """Is this server's streaming right: a streamed answer held to the whole answer to the
    same request (calls, names, ids, parsed arguments, stop reason, no call in the text, a
    complete stream). Exit 0 conformant, 1 differences, 2 usage error."""
    import tempfile
    from pathlib import Path

    from .display import inert
    from .errors import CaptureError
    from .producers._conform import conform, record_both
    from .traffic.record import RecordError

    files, asked = (ns.streamed, ns.whole), (ns.url, ns.request)
    if any(files) == any(asked) or not all(files if any(files) else asked):
        print(f"{COMMANDS_PROG} conform: error: give --streamed S --whole W, or --url URL "
              "--request BODY", file=sys.stderr)
        return 2
    streamed, whole = files
    made = None
    try:
        if ns.url:
            out = ns.out or (made := tempfile.mkdtemp(prefix="streamcalls-conform-"))
            streamed, whole = record_both(ns.url, Path(ns.request), out, format=ns.format,
                                          key_env=ns.key_env, timeout=ns.timeout)
        table = conform(streamed, whole)
    except (ValueError, OSError, CaptureError, RecordError) as e:
        if made:  # a folder of its own that nothing was recorded into is not left behind
            with contextlib.suppress(OSError):
                os.rmdir(made)
        _error(f"{COMMANDS_PROG} conform: error: {e}")
        return 2
    counts = table.attrs["calls"]
    verdict = "conformant" if not len(table) else count(len(table), "difference")
    return _differences(table, ns.as_json, {
        "streamed": str(streamed), "whole": str(whole), "format": table.attrs["format"],
        "calls": counts, "conformant": not len(table)},
        f"{inert(streamed, 200)} against {inert(whole, 200)} ({table.attrs['format']}: "
        f"{count(counts['streamed'], 'call')} streamed, {counts['whole']} whole): {verdict}")


def _differences(table: pd.DataFrame, as_json: bool, facts: dict[str, Any], head: str) -> int:
    """A table of differences on stdout: as JSON (``facts`` and its rows), or ``head`` and
    its readable lines; the exit status, 1 when it has any."""
    import json

    from .producers._conform import rows_json, text

    if as_json:
        print(json.dumps({**facts, "differences": rows_json(table)}, ensure_ascii=True))
    else:
        print(head)
        if len(table):
            print(text(table))
    return 1 if len(table) else 0


@command(
    arg("a", help="a capture of the turn (before the gateway, say)"),
    arg("b", help="another capture of the same turn (after it)"),
    arg("--json", action="store_true", dest="as_json", help="the differences as JSON"),
)
def cmd_diff(ns: argparse.Namespace) -> int:
    """What did the gateway change: two captures of one turn compared call by call
    (re-indexed, merged, split, dropped, truncated, reordered, arguments, names, ids, text).
    Exit 0 the same (re-chunked or not), 1 differences, 2 usage error."""
    from .display import inert
    from .errors import CaptureError
    from .producers._diff import diff

    try:
        table = diff(ns.a, ns.b)
    except (ValueError, OSError, CaptureError) as e:
        _error(f"{COMMANDS_PROG} diff: error: {e}")
        return 2
    said = table.attrs
    return _differences(table, ns.as_json, {
        "a": ns.a, "b": ns.b, "formats": said["formats"], "summary": said["summary"],
        "fragments": said["fragments"], "same": not len(table)},
        f"a {inert(ns.a, 200)} ({said['formats']['a']}), b {inert(ns.b, 200)} "
        f"({said['formats']['b']}): {said['summary']}")


@command(
    arg("--upstream", required=True,
        help="where requests go, e.g. https://api.anthropic.com (a path prefix is kept)"),
    arg("--out", required=True, help="directory for the captures and their sidecars"),
    arg("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)"),
    arg("--all", action="store_true", dest="save_all",
        help="save non-streamed responses too (.json / .body)"),
    arg("--ca-bundle", default=None,
        help="CA certificates to verify an HTTPS upstream with "
             "(default: $STREAMCALLS_CA_BUNDLE, else the system's)"),
    arg("--timeout", type=float, default=600.0, help="seconds to wait for each upstream read"),
    arg("--max-body", type=int, metavar="BYTES",
        help="largest request body passed on; a larger one is answered 413 (default 4 GiB)"),
    arg("--tls-cert", metavar="PEM", help="listen with TLS (https/wss): this certificate "
        "chain, for an SDK that only speaks wss:// (google-genai's live client)"),
    arg("--tls-key", metavar="PEM", help="the --tls-cert's private key (if not in it)"),
    *(arg(name, **options) for name, options in LIMITS),
)
def cmd_proxy(ns: argparse.Namespace) -> int:
    """Forward an application's API traffic to the upstream, saving every streamed response
    byte-exact with its read timing; credentials pass through and are never written."""
    import signal
    import ssl

    from .traffic.proxy import RecordingProxy

    tls = None
    if ns.tls_cert:  # for an SDK that only speaks https/wss
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            tls.load_cert_chain(ns.tls_cert, ns.tls_key)
        except (OSError, ssl.SSLError) as e:
            _error(f"proxy: error: --tls-cert/--tls-key cannot be used: {e}")
            return 2
    proxy = RecordingProxy(ns.upstream, ns.out, port=ns.port, save_all=ns.save_all,
                           ca_bundle=ns.ca_bundle, timeout=ns.timeout, tls=tls,
                           **_limits(ns, "max_body"),
                           log=lambda exchange: print(exchange, flush=True))
    print(f"proxying {proxy.base_url} to {ns.upstream}, saving streams in {ns.out}")
    print(f"  set your SDK's base URL: ANTHROPIC_BASE_URL={proxy.base_url}, "
          f"OPENAI_BASE_URL={proxy.base_url}/v1 (upstream without /v1), ...")
    print("Ctrl-C to stop", flush=True)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # a stop cuts open streams cleanly, as Ctrl-C
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.close()
    return 0


@command(arg("source", help="a capture, a directory or a glob of them"))
def cmd_coverage(ns: argparse.Namespace) -> int:
    """Which of the five fixture properties a set of captures covers, per format."""
    from .fixtures import coverage, unreadable
    from .loader import load_captures
    from .sources import resolve

    caps = resolve(ns.source)
    events = load_captures(caps, strict=False)
    bad = unreadable(events, [c.name for c in caps])
    good = events[~events["turn"].isin(list(bad))]
    if len(good):
        print(coverage(good).to_string())
    for name, why in bad.items():
        _error(f"{COMMANDS_PROG} coverage: error: {name}: not a capture: {why}")
    return 1 if bad else 0


@command(
    arg("--client", required=True, metavar="CMD",
        help="the client command, run once per case (quote it: \"python my_client.py\")"),
    arg("--loop", action="store_true",
        help="run the client once per job and hand it the cases on stdin, one JSON line "
             "each (the loop protocol: docs/contract.md); much faster for clients slow to "
             "start"),
    arg("--format", action="append", default=None, metavar="F",
        help="a wire format the client speaks (repeatable; default: the three provider "
             "formats; ai-sdk-ui for a UI client)"),
    arg("--suite", default="quick", help="quick (a few cases per family) or full"),
    arg("--family", action="append", default=None, metavar="NAME",
        help="run only this family of cases (repeatable)"),
    arg("--report", default=None, metavar="PATH", help="also write the report (.csv or .md)"),
    arg("--jobs", type=int, default=None,
        help="cases at once (default: 2 per core, max 8; with --loop, one process per 8 cases "
             "at most)"),
    arg("--timeout", type=float, default=120.0, help="seconds one case may take (default 120)"),
)
def cmd_torture(ns: argparse.Namespace) -> int:
    """Serve every torture case on 127.0.0.1 and run a client against each; exit 0 clean,
    1 failures found, 2 usage error or a client that did not start."""
    import shlex
    import time

    from .check import TURN_FORMATS
    from .display import inert
    from .torture import SUITES, cases, check_client, markdown, tolerated

    formats = tuple(ns.format or TURN_FORMATS)
    try:
        cmd = shlex.split(ns.client)
        cases(formats, ns.suite, ns.family)  # names an unknown format, suite or family
        if not cmd:
            raise ValueError("the client command is empty")
    except ValueError as e:
        _error(f"torture: usage error: {e} (suites: {', '.join(SUITES)})")
        return 2
    start = time.perf_counter()
    report = check_client(cmd, formats, suite=ns.suite, families=ns.family, jobs=ns.jobs,
                          timeout=ns.timeout, loop=ns.loop, progress=sys.stderr.isatty())
    if report.attrs["not_started"] is not None:
        print(f"the client did not start: {inert(report.attrs['not_started'])}")  # its stderr
        if ns.loop:
            print("(with --loop the client must read its cases from stdin: without --loop it "
                  "runs once per case)")
        return 2
    text = markdown(report)
    if len(noted := tolerated(report)):
        text += "\n\nTolerated, not failures:\n\n" + markdown(noted)
    return _reported(report, text, time.perf_counter() - start, ns.report)


def _reported(report: pd.DataFrame, text: str, seconds: float, where: str | None) -> int:
    """A torture-style report printed (and written to ``where``: .csv or Markdown); exit 1
    when it has a row."""
    from pathlib import Path

    print(text)
    print(f"{report.attrs['cases']} cases, {report.attrs['failed']} failed, {seconds:.1f} s")
    if where:
        path = Path(where)
        if path.suffix == ".csv":
            report.to_csv(path, index=False)
        else:
            path.write_text(text + "\n", encoding="utf-8")
    return 1 if len(report) else 0


@command(
    arg("--program", required=True, metavar="CMD",
        help="the traced program (quote it): it reads its cases on stdin, one JSON line each "
             "(torture's loop protocol), calls the base URL it is handed and exports its "
             "spans to OTEL_EXPORTER_OTLP_ENDPOINT"),
    arg("--format", action="append", default=None, metavar="F",
        help="the wire format its SDK speaks (repeatable; default openai-chat)"),
    arg("--suite", default="quick", help="quick (a few cases per family) or full"),
    arg("--family", action="append", default=None, metavar="NAME",
        help="run only this family of cases (repeatable)"),
    arg("--report", default=None, metavar="PATH", help="also write the report (.csv or .md)"),
    arg("--timeout", type=float, default=60.0, help="seconds one case may take (default 60)"),
)
def cmd_trace_torture(ns: argparse.Namespace) -> int:
    """Torture for tracers: serve each case to a traced program with an OTLP receiver on
    127.0.0.1 beside it, and judge what its tracer recorded of every call; exit 0 when every
    call was kept (ok or reserialised), 1 otherwise, 2 on a usage error or a program that
    did not start."""
    import shlex
    import time

    from .display import inert
    from .torture import SUITES, cases, markdown
    from .tracing.live import check_tracer

    formats = tuple(ns.format or ("openai-chat",))
    try:
        if not shlex.split(ns.program):
            raise ValueError("the program command is empty")
        cases(formats, ns.suite, ns.family)  # names an unknown format, suite or family
    except ValueError as e:
        _error(f"trace-torture: usage error: {e} (suites: {', '.join(SUITES)})")
        return 2
    start = time.perf_counter()
    report = check_tracer(ns.program, formats, suite=ns.suite, families=ns.family,
                          timeout=ns.timeout)
    if report.attrs["not_started"] is not None:
        print(f"the program did not start: {inert(report.attrs['not_started'])}")
        return 2
    return _reported(report, markdown(report), time.perf_counter() - start, ns.report)


@command(
    arg("--captures", required=True, metavar="DIR", help="the captures the trace recorded"),
    arg("--trace", required=True, metavar="FILE",
        help="an OTLP export (JSON, JSON lines or protobuf) or a Langfuse export"),
    arg("--json", action="store_true",
        help="one JSON object per wire call (and per unmatched traced turn)"),
)
def cmd_trace_check(ns: argparse.Namespace) -> int:
    """Check what a tracer recorded against the captured wire, call by call; exit 0 when
    every call is ok or reserialised, 1 otherwise, 2 on a usage error."""
    import json
    from pathlib import Path

    import pandas as pd

    from .display import inert
    from .tracing import VERDICTS, trace_check

    for flag, path in (("--captures", ns.captures), ("--trace", ns.trace)):
        if not Path(path).exists():
            _error(f"trace-check: usage error: {flag} {path!r}: no such file or directory")
            return 2
    table = trace_check(ns.captures, ns.trace)
    unmatched = table.attrs["unmatched_traces"]
    if ns.json:
        keep = ("turn", "call_id", "tool", "wire_args", "traced_args", "verdict", "note",
                "traced_call_id", "traced_tool", "span", "wire_first_chunk",
                "traced_first_chunk", "wire_output_tokens", "traced_output_tokens")
        for row in table[list(keep)].astype(object).itertuples(index=False):
            record = {k: (None if pd.isna(v) else v) for k, v in
                      zip(keep, row, strict=True)}
            record["wire"], record["traced"] = record.pop("wire_args"), record.pop(
                "traced_args")
            print(json.dumps(record, ensure_ascii=True, default=str))
        for t in unmatched:
            print(json.dumps({"unmatched": "trace", **t}, ensure_ascii=True))
    else:
        for row in table.itertuples(index=False):
            print(inert(f"{row.verdict:<13} {row.turn}  {row.call_id}  {row.tool}"
                        + (f"  ({row.note})" if row.note else "")))
        for t in unmatched:
            print(inert(f"unmatched trace: {t['span']} ({t['calls']} calls)"))
        counts = table["verdict"].value_counts()
        print(", ".join(f"{n} {v}" for v, n in counts.items() if n) or "no wire calls")
        for v in (v for v, n in counts.items() if n and not VERDICTS[v].passes):
            print(f"{v}: {VERDICTS[v].meaning}; fix: {VERDICTS[v].fix}")
    return 0 if table.attrs["passed"] else 1


# -- entry point ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=COMMANDS_PROG,
        description="Replay, serve, record, import and redact streamed LLM tool calls.",
    )
    subs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        doc = (cmd.run.__doc__ or "").strip()
        sub = subs.add_parser(name, help=doc.split("\n\n")[0].replace("\n", " "),
                              description=doc)
        for names, options in cmd.args:
            sub.add_argument(*names, **options)
        sub.set_defaults(run=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    from .errors import CaptureError
    from .traffic.record import RecordError

    try:
        return ns.run(ns)
    except BrokenPipeError:  # the reader (head, less) stopped reading: nothing went wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CaptureError, RecordError, ValueError, OSError) as e:
        _error(f"{parser.prog} {ns.command}: error: {e}")
        return 1
