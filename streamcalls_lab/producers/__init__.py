"""What producers send: servers' and gateways' quirks, found in a capture and read right.

Most real trouble with streamed tool calls starts on the other side of the wire: of 60 public
threads about them (``shared/reference/streamed-call-threads.tsv``), 35 begin with what a
server or gateway sends. This family names it:

- :mod:`.quirks`: every producer quirk the kit knows, one spec each (what the producer does,
  the public threads that show it, how a careful client reads it, and how to find it);
- :mod:`.scan`: :func:`anomalies`, one row per quirk found in a ``load()`` table.
"""

from __future__ import annotations

from .quirks import QUIRKS, Quirk
from .scan import ANOMALY_COLUMNS, anomalies

__all__ = ["ANOMALY_COLUMNS", "QUIRKS", "Quirk", "anomalies"]
