"""mitmproxy flow files (``.mitm``, ``.flow``), read by mitmproxy's own ``FlowReader``.

Needs the ``mitmproxy`` extra. When mitmproxy buffers a response (its default) the flow
keeps the body byte-exact, and :attr:`Response.content` undoes its content encoding as a
client would: that is the capture. Flows keep only the response's start and end times,
which cannot place reads, so no timing sidecar comes from them (``receive_s`` records the
span). When streaming was on (``stream_large_bodies``, or an addon setting
``flow.response.stream``) mitmproxy kept no body at all (``[content missing]``): such a
flow is refused, naming it, never imported as an empty capture; the kit's addon
(:mod:`streamcalls_lab.traffic.mitm_addon`) saves those bodies as they pass.

A file that starts like JSON is not read (``FlowReader`` would take it as a HAR: import
it as ``.har``); a truncated or corrupt file is a :class:`CaptureError` at the byte where
the flow it could not read begins.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import provenance
from ..errors import CaptureError
from .stream import Stream
from .vcr import is_event_stream

NEEDS = "reading mitmproxy flow files needs the mitmproxy extra: pip install 'mitmproxy>=11'"


def _flows(path: Path) -> Iterator[tuple[int, int, Any]]:
    """``(number, byte offset, flow)`` for every flow in the file."""
    try:
        from mitmproxy import exceptions, io
    except ImportError:
        raise CaptureError(str(path), 0, NEEDS) from None
    with path.open("rb") as fo:
        if fo.read(4).lstrip(b"\xef\xbb\xbf").startswith(b"{"):
            raise CaptureError(str(path), 0, "JSON, not a mitmproxy flow file (a HAR export "
                                             "imports as .har)")
        fo.seek(0)
        reader = io.FlowReader(fo)
        at, n = 0, 0
        flows = iter(reader.stream())
        while True:
            try:
                flow = next(flows)
            except StopIteration:
                return
            except exceptions.FlowReadException as e:
                raise CaptureError(str(path), at, f"flow {n} cannot be read: {e}") from None
            yield n, at, flow
            at, n = fo.tell(), n + 1


def streams(path: Path) -> Iterator[Stream]:
    """One :class:`Stream` per HTTP flow whose response is an event stream."""
    stem = path.name.removesuffix(path.suffix)
    for n, at, flow in _flows(path):
        request, response = getattr(flow, "request", None), getattr(flow, "response", None)
        if request is None or response is None:
            continue  # a TCP/UDP/DNS flow, or a request that got no response
        ctype = response.headers.get("content-type", "")
        if not is_event_stream(ctype, b""):
            continue
        if response.raw_content is None:
            raise CaptureError(str(path), at, f"flow {n} ({request.method} {request.path[:80]}):"
                                              " mitmproxy kept no body (streamed: content "
                                              "missing); record with the kit's addon instead")
        try:
            body = response.content
        except ValueError as e:  # an encoding mitmproxy cannot undo, or a corrupt body
            raise CaptureError(str(path), at, f"flow {n}: body cannot be decoded: {e}") from None
        req_headers = list(request.headers.items(multi=True))
        resp_headers = list(response.headers.items(multi=True))
        url = request.pretty_url
        secrets = provenance.exchange_secrets(url, request.raw_content, req_headers,
                                              resp_headers)
        meta: dict[str, Any] = {
            "source": "mitmproxy",
            "origin": path.name,
            "entry": f"flow {n} (byte {at})",
            "method": request.method,
            "url": provenance.scrub_url(url, secrets),
            "status": response.status_code,
            "started": request.timestamp_start,
            "request_headers": provenance.scrub_headers(req_headers, secrets),
            "response_headers": provenance.scrub_headers(resp_headers, secrets),
        }
        if response.timestamp_start and response.timestamp_end:
            meta["receive_s"] = round(response.timestamp_end - response.timestamp_start, 6)
        if body is not response.raw_content and response.headers.get("content-encoding"):
            meta["decoded_from"] = response.headers["content-encoding"]
        yield Stream(f"{stem}__f{n}", body or b"", None, meta, secrets)
