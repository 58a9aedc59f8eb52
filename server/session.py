"""A player's session: identity that outlives connections (resume tokens).

A :class:`Session` is what sits in seats and watches matches. It has at most
one live connection (``client``); messages pushed while it has none are dropped,
and a fresh snapshot of each of its matches is sent when it resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from server.store import AccountRecord

from protocol.events import Event

#: A message for a session: an event of :mod:`protocol.events`, or transitionally
#: its wire map (the connection turns it into its event, validating it, when sending).
Message = Event | dict[str, Any]


class Outbox(Protocol):
    """Where a session's messages go: a live connection's bounded outbox."""

    def push(self, msg: Message) -> None:
        """Queue ``msg`` without blocking (a full queue disconnects the client)."""


class Session:
    """One player identity. Mutated only from the server's trio thread."""

    __slots__ = ("id", "name", "client", "seats", "watching", "queued", "account", "address")

    def __init__(self, session_id: str, name: str, account: AccountRecord | None = None) -> None:
        self.id = session_id
        self.name = name
        #: the account the session is logged in as (None: a guest's session).
        self.account = account
        #: the network address (host) of the latest connection, for per-address limits.
        self.address = ""
        self.client: Outbox | None = None
        #: (match id, seat) pairs this session sits in.
        self.seats: set[tuple[str, int]] = set()
        #: ids of matches this session watches.
        self.watching: set[str] = set()
        #: games whose matchmaking queue this session waits in.
        self.queued: set[str] = set()

    @property
    def connected(self) -> bool:
        """True while a connection is attached."""
        return self.client is not None

    def push(self, msg: Message) -> None:
        """Send ``msg`` (an event, or transitionally its wire map) to the live
        connection, if any (never blocks); it is validated when it is written."""
        if self.client is not None:
            self.client.push(msg)

    def match_ids(self) -> set[str]:
        """Every match this session sits in or watches."""
        return {m for m, _ in self.seats} | self.watching

    def __repr__(self) -> str:
        return f"Session({self.id!r}, {self.name!r})"
