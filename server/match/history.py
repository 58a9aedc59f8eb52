"""The recent raw events of a match, so a seat that was away is told what it missed.

After a resume the snapshot a seat gets carries the events since the last
snapshot it was sent (projected for it, like any snapshot's events). The
history is bounded: it keeps the events of the last :data:`KEEP_CHANGES`
changes and at most :data:`MAX_EVENTS` events go into one snapshot; when older
events had to be left out the snapshot says so (``events_cut: true``).
"""

from __future__ import annotations

from collections import deque
from typing import Any

Event = dict[str, Any]

#: Changes of a match whose raw events are kept.
KEEP_CHANGES = 256
#: Most events put into one catch-up snapshot (the snapshot schema allows 1024).
MAX_EVENTS = 512


class EventHistory:
    """``(seq, raw events)`` of a match's recent changes, oldest first."""

    __slots__ = ("_changes", "_known_from")

    def __init__(self, keep: int = KEEP_CHANGES, first_seq: int = 0) -> None:
        """An empty history of a match whose seq is ``first_seq`` now.

        Args:
            keep: changes kept (older ones are forgotten).
            first_seq: the match's seq now; the events of changes up to it are
                unknown (a match restored after a restart): asking for them is a cut.
        """
        self._changes: deque[tuple[int, list[Event]]] = deque(maxlen=keep)
        #: every change with a seq above this one is in ``_changes``
        self._known_from = first_seq

    def add(self, seq: int, events: list[Event]) -> None:
        """Remember the raw events of the change that made the match's seq ``seq``."""
        if len(self._changes) == self._changes.maxlen:
            self._known_from = self._changes[0][0]
        self._changes.append((seq, events))

    def since(self, seen: int | None, limit: int = MAX_EVENTS) -> tuple[list[Event], bool]:
        """The raw events of every change after seq ``seen``, and whether some are missing.

        Args:
            seen: the seq of the last snapshot the seat was sent (None: unknown).
            limit: at most this many events, the newest kept.

        Returns:
            ``(events, cut)``: ``cut`` is True when events after ``seen`` were
            forgotten, are unknown, or did not fit in ``limit``.
        """
        if seen is None:
            return [], True
        cut = seen < self._known_from
        events = [event for seq, change in self._changes if seq > seen for event in change]
        if len(events) > limit:
            events = events[-limit:]
            cut = True
        return events, cut
