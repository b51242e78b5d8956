"""Turn other recording formats into loadable ``.sse`` captures.

Each module reads one format and yields :class:`Stream` objects; :func:`write`
puts one on disk as ``<name>.sse`` with its timing sidecar (when the format
kept timing) and a provenance sidecar from which every credential header has
been dropped. Adding a format is one module plus one line in ``READERS``.

- ``har``: HAR archives (DevTools, mitmproxy): body bytes as received.
- ``vcr``: VCR cassettes (vcrpy YAML or JSON): body bytes as recorded.
- ``jsonl``: JSON-lines chunk logs (the AI SDK): framing rebuilt, not as sent.
- ``claude_stream``: Claude Code / Agent SDK stream-json (NDJSON, or kept in JSON): rebuilt.
- ``claude_trace``: claude-trace logs: ``body_raw`` as the interceptor decoded it.
- ``devtools``: AI SDK DevTools ``generations.json``: provider chunks and SDK parts, rebuilt.
- ``mitm``: mitmproxy flow files, through mitmproxy's own reader (the ``mitmproxy`` extra).
- ``ws_log``: WebSocket session logs (direction, byte length, message): JSON lines, rebuilt.

A suffix several kinds share (``.json``, ``.jsonl``, ``.ndjson``) is told apart by what the
file holds (:mod:`._dispatch`), each kind by a signature of its own; a file that
is none of them is refused, naming what was looked for. ``load()`` reads a recording
directly only where its name makes the kind certain (:func:`is_recording`).
"""

from __future__ import annotations

from ._dispatch import READERS, captures, import_file, import_paths, is_recording, streams
from .stream import Stream, write

__all__ = ["READERS", "Stream", "captures", "import_file", "import_paths", "is_recording",
           "streams", "write"]
