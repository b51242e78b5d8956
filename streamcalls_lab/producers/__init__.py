"""What producers send: servers' and gateways' quirks, found in a capture and read right.

Most real trouble with streamed tool calls starts on the other side of the wire: of 60 public
threads about them (``shared/reference/streamed-call-threads.tsv``), 35 begin with what a
server or gateway sends. This family names it:

- :mod:`.quirks`: every producer quirk the kit knows, one spec each (what the producer does,
  the public threads that show it, how a careful client reads it, and how to find it);
- :mod:`.scan`: :func:`anomalies`, one row per quirk found in a ``load()`` table;
- :mod:`.served`: :func:`served_by`, the host and model of each turn, wherever a capture says;
- :mod:`.report`: what ``python -m streamcalls_lab inspect`` prints for each turn;
- :mod:`.examples`: a seeded example of each quirk, and which client faults each exposes;
- :mod:`.conform`: :func:`conform`, a server's streamed answer held to its whole answer to the
  same request (``python -m streamcalls_lab conform``);
- :mod:`.diff`: :func:`diff`, what a gateway changed between two captures of one turn
  (``python -m streamcalls_lab diff``).

``conform`` and ``diff`` are the functions here; their modules stay importable by path
(``from streamcalls_lab.producers._conform import record_both``).
"""

from __future__ import annotations

from ._conform import ASPECTS, CONFORM_COLUMNS, conform
from ._diff import DIFF_COLUMNS, KINDS, diff
from .quirks import QUIRKS, Quirk
from .scan import ANOMALY_COLUMNS, anomalies
from .served import SERVED_COLUMNS, served_by

__all__ = ["ANOMALY_COLUMNS", "ASPECTS", "CONFORM_COLUMNS", "DIFF_COLUMNS", "KINDS", "QUIRKS",
           "SERVED_COLUMNS", "Quirk", "anomalies", "conform", "diff", "served_by"]
