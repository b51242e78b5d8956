"""The one exception bad input raises."""

from __future__ import annotations


class CaptureError(ValueError):
    """A capture that is not a well-formed event stream.

    The message always names the source, the byte offset and the reason, so a
    reader can open the file at that byte and see the problem.
    """

    def __init__(self, source: str, offset: int, reason: str) -> None:
        self.source = source
        self.offset = offset
        self.reason = reason
        super().__init__(f"{source}: byte {offset}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, int, str]]:
        # Rebuilt from its three parts, so it survives a worker process or a Dask cluster.
        return (type(self), (self.source, self.offset, self.reason))
