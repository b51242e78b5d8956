"""A mitmproxy addon: ``mitmdump -s <this file>`` keeps every streamed LLM response it sees.

Each response whose content type is a stream the kit reads (SSE, NDJSON, AWS event-stream,
an AI SDK data stream, Gemini's streamed JSON array: :func:`~.proxy.stream_suffix`) is
streamed through a callable (``flow.response.stream``): the client gets every read as it
arrives, unchanged, and the addon saves it as the kit's ``proxy`` does (:mod:`.saving`):
``<UTC time>-<n>-<path>.sse`` in ``--set scl_out=DIR`` (default ``captures``), the body
content-decoded and otherwise byte-exact, one timing line per read, and a provenance
sidecar with every credential the request carried removed (a body that echoes one is not
kept at all). Because the body is streamed, nothing is lost whatever mitmproxy's own
``stream_large_bodies`` says, and a stream that breaks off is kept as far as it came,
marked ``cut_off``. After each turn one ``inspect`` line is printed, inert (escape
sequences and bidi controls from the stream never reach the terminal).

Run it with the Python that has ``streamcalls_lab`` (mitmproxy installed in the same
environment: the ``mitmproxy`` extra). It imports the kit absolutely, since mitmproxy
loads a script by its path, not as part of a package.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from streamcalls_lab import provenance
from streamcalls_lab.display import inert
from streamcalls_lab.traffic._saving import BodyNotSaved, BodyRecorder, Numbers, new_capture
from streamcalls_lab.traffic.proxy import DATA_STREAM_HEADER, model_of, stream_suffix

SOURCE = "mitmproxy-addon"
Passed = bytes | Iterable[bytes]
REQUEST_KEPT = 16 * 1024**2
"""A streamed request body is copied this far (for its model and credentials), no further."""



class _Saving:
    """One response being saved: fed each read by mitmproxy's stream callable. (No
    dataclass: mitmproxy runs a script outside ``sys.modules``, where one cannot be made.)"""

    def __init__(self, path: Path, recorder: BodyRecorder | None, secrets: list[str],
                 note: str | None, then: Callable[[bytes], Passed] | None) -> None:
        self.path, self.recorder, self.secrets, self.note = path, recorder, secrets, note
        self.then = then  # a stream callable set before ours

    def feed(self, data: bytes) -> Passed:
        if data and self.recorder is not None:
            try:
                self.recorder.feed(data, self.recorder.clock())
            except BodyNotSaved as e:  # the file is already removed
                self.recorder, self.note = None, f"not saved: {e}"
        return self.then(data) if self.then is not None else data


class _Copied:
    """A request body mitmproxy streams (``stream_large_bodies``): passed on unchanged, a
    copy kept up to :data:`REQUEST_KEPT`, since mitmproxy keeps none."""

    def __init__(self) -> None:
        self.body = bytearray()

    def feed(self, data: bytes) -> bytes:
        room = REQUEST_KEPT - len(self.body)
        if room > 0:
            self.body += data[:room]
        return data


class SaveStreams:
    """The addon: saves streamed responses, prints one inspect line per turn."""

    def __init__(self, out: str | Path | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.out = Path(out) if out is not None else None
        self.say = say or (lambda line: print(line, flush=True))
        self._saving: dict[str, _Saving] = {}
        self._requests: dict[str, _Copied] = {}
        self._next = Numbers()  # each capture's number in its name

    def load(self, loader: Any) -> None:
        loader.add_option("scl_out", str, "captures",
                          "streamcalls-lab: folder for the streamed responses it saves")

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if "scl_out" in updated:
            self.out = Path(ctx.options.scl_out)

    def _new(self, url: str, suffix: str) -> Path:
        assert self.out is not None
        self.out.mkdir(parents=True, exist_ok=True)
        return new_capture(self.out, url, suffix, self._next)

    def requestheaders(self, flow: Any) -> None:
        if flow.request.stream is True:  # mitmproxy will keep no copy of this body
            self._requests[flow.id] = copied = _Copied()
            flow.request.stream = copied.feed

    def _request_body(self, flow: Any) -> bytes:
        copied = self._requests.get(flow.id)
        if flow.request.raw_content is not None or copied is None:
            return flow.request.raw_content or b""
        return bytes(copied.body)

    def responseheaders(self, flow: Any) -> None:
        request, response = flow.request, flow.response
        suffix = stream_suffix(response.headers.get("content-type"), request.path,
                               response.headers.get(DATA_STREAM_HEADER))
        if suffix is None:
            return
        url = request.pretty_url
        secrets = provenance.exchange_secrets(url, self._request_body(flow),
                                              list(request.headers.items(multi=True)))
        path = self._new(url, suffix)
        try:
            recorder: BodyRecorder | None = BodyRecorder(
                path, response.headers.get("content-encoding"), time.monotonic, secrets)
            note = None
        except BodyNotSaved as e:
            path.unlink(missing_ok=True)
            recorder, note = None, f"not saved: {e}"
        prev = response.stream
        saving = _Saving(path, recorder, secrets, note, prev if callable(prev) else None)
        self._saving[flow.id] = saving
        response.stream = saving.feed

    def response(self, flow: Any) -> None:
        self._finish(flow, None)

    def error(self, flow: Any) -> None:
        self._finish(flow, f"the stream broke off: {flow.error.msg if flow.error else 'error'}")

    def _finish(self, flow: Any, cut: str | None) -> None:
        saving = self._saving.pop(flow.id, None)
        body = self._request_body(flow)
        self._requests.pop(flow.id, None)
        if saving is None or flow.response is None:
            return
        request, response = flow.request, flow.response
        rec = saving.recorder
        if rec is None:
            self.say(f"{inert(request.pretty_url, 120)}: {inert(saving.note or '', 200)}")
            return
        rec.finish()
        meta = provenance.exchange(
            SOURCE, request.pretty_url, request.method, response.status_code,
            list(request.headers.items(multi=True)), list(response.headers.items(multi=True)),
            saving.secrets, cut_off=cut or rec.cut,
            model=model_of(request.path, body))
        try:
            provenance.write(rec.out, meta, saving.secrets)
        except ValueError:  # a credential turned up in the model name, say
            meta["model"] = None
            provenance.write(rec.out, meta, saving.secrets)
        rec.commit()  # last: a capture under its own name is a whole one
        self.say(inspect_line(rec.out))


def inspect_line(path: Path) -> str:
    """One inert line per turn of a saved capture: what ``inspect`` says, in brief."""
    from streamcalls_lab.producers.report import report

    out = []
    for t in report(path):
        done = sum(c.complete for c in t.calls)
        where = " ".join(f"{k} {inert(v, 60)}" for k, v in (("host", t.host),
                                                             ("model", t.model)) if v)
        out.append(f"{inert(t.turn, 120)}  [{t.provider}{', ' + where if where else ''}] "
                   f"{len(t.calls)} call(s), {done} complete, {len(t.problems)} problem(s), "
                   f"{len(t.anomalies)} anomaly(ies)")
    return "\n".join(out)


addons = [SaveStreams()]
