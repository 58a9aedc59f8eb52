"""Replies written straight to their sockets, without the writer tasks' wake-ups."""

from __future__ import annotations

from typing import Any, Protocol


class Flushable(Protocol):
    """A connection with frames encoded for a direct write."""

    def flush(self) -> None:
        """Write them (see :meth:`server.connection.ClientConnection.flush`)."""


class DirectWrites:
    """Messages encoded straight into their connections' buffers while collecting
    (inside ``with DIRECT:``), written with one non-blocking ``send`` per connection
    when the outermost ``with`` ends.

    Only the group commit collects (:mod:`server.match.commit`), around carrying out
    the effects of a committed command, so a reply skips the connection's outbox and
    the wake-up of its writer task. A connection takes the direct way only when
    nothing of it is queued or being written (order is kept) and it is a plain
    socket (TLS and in-memory streams always use the writer). What the socket does
    not take at once goes to the outbox, and the writer sends it.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.dirty: list[Flushable] = []

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1
        if not self.depth:
            dirty, self.dirty = self.dirty, []
            for conn in dirty:
                conn.flush()


#: The one collector of the process (trio runs every connection in one thread).
DIRECT = DirectWrites()
