"""Live traffic on loopback: record it, proxy it, serve it back, replay it.

- :mod:`.proxy`: a recording proxy between an application and its provider;
- :mod:`.websocket`: the proxy's WebSocket sessions, each message a JSON line;
- :mod:`.record`: one request, its streamed response saved byte-exact with its timing;
- :mod:`.serve`: a capture served over HTTP at its recorded pace, for real SDK clients;
- :mod:`.replay`: a capture's reads (or frames) at their recorded pace, in process;
- :mod:`.server` and :mod:`.saving`: the threaded loopback server and the body saver
  they share.
"""

from __future__ import annotations

# The classes only: each module's functions are named for their module (``replay.replay``),
# and a package attribute of that name would hide the module.
from .proxy import RecordingProxy
from .record import RecordError
from .serve import SSEServer

__all__ = ["RecordError", "RecordingProxy", "SSEServer"]
