"""The ``matches`` listing: pages in a fixed order, cursors, and a sorted cache.

The order is waiting first, then active, then finished; newest first within
each (ties by id). Sorting every match for every page would cost each page
O(n log n) (about 4 ms at 10,000 matches: a listing loop could take the whole
server), so :class:`Listing` keeps, per filter (game, status), the matches
sorted once; it is rebuilt when a match was added or removed since, or when it
is older than :data:`MAX_AGE` (a status change moves a match in the order). A
page is then a binary search for the cursor and a slice: a listing may be up to
:data:`MAX_AGE` seconds behind in its order, never in what it shows (summaries
are made when the page is, and a match is never listed under a status filter
it no longer has).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any, Protocol

from protocol.errors import RemoteProtocolError

#: Seconds a sorted listing is reused while no match was added or removed.
MAX_AGE = 1.0

#: The rank of each status in the order.
STATUS_RANK = {"waiting": 0, "active": 1, "finished": 2}

Key = tuple[int, float, str]


class Listed(Protocol):
    """What the listing reads of a match."""

    id: str
    game: str
    status: str
    created: float

    def summary(self) -> dict[str, Any]: ...


def key_of(match: Listed) -> Key:
    """Where ``match`` stands in the order."""
    return (STATUS_RANK[match.status], -match.created, match.id)


def cursor_after(key: Key) -> str:
    """The opaque ``next`` cursor after the match listed under ``key``."""
    return f"{key[0]}:{-key[1]!r}:{key[2]}"


def parse_cursor(text: str) -> Key:
    """The key a :func:`cursor_after` was made from.

    Raises:
        RemoteProtocolError: ``bad_message`` (field ``cursor``): not one of ours.
    """
    try:
        rank, created, match_id = text.split(":", 2)
        return (int(rank), -float(created), match_id)
    except ValueError:
        raise RemoteProtocolError("bad_message", "not a cursor this server gave",
                                  "cursor") from None


class Listing:
    """Sorted listings per filter, reused until the directory changes (see the
    module docstring)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str | None, str | None],
                          tuple[float, list[Key], list[Listed]]] = {}

    def changed(self) -> None:
        """A match was added to or removed from the directory."""
        self._cache.clear()

    def page(self, matches: Iterable[Listed], game: str | None, status: str | None,
             limit: int, cursor: str | None, now: float) -> tuple[list[Listed], str | None]:
        """Up to ``limit`` matches after ``cursor`` (None: from the start), and the
        cursor of the next page (None: this is the last).

        Raises:
            RemoteProtocolError: ``bad_message``: a cursor this server did not give.
        """
        after = parse_cursor(cursor) if cursor is not None else None
        cached = self._cache.get((game, status))
        if cached is None or now - cached[0] >= MAX_AGE:
            rows = sorted(((key_of(m), m) for m in matches
                           if (game is None or m.game == game)
                           and (status is None or m.status == status)), key=lambda r: r[0])
            cached = self._cache[(game, status)] = (now, [k for k, _ in rows],
                                                    [m for _, m in rows])
        _, keys, listed = cached
        start = 0 if after is None else bisect.bisect_right(keys, after)
        page: list[Listed] = []
        last: Key | None = None
        i = start
        while i < len(listed) and len(page) < limit:
            match = listed[i]
            if status is None or match.status == status:
                page.append(match)
            last = keys[i]
            i += 1
        more = i < len(listed) and last is not None
        return page, cursor_after(last) if more and last is not None else None
