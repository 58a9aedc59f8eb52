"""What a :class:`~server.match.core.MatchCore` asks its task to do: plain data.

The task carries out one :class:`Effects` in this order: every write in
``writes`` (journal rows first committed to the store, before anything they
cause is sent), then ``members``, ``messages`` and ``bots``, then arms
``deadline``. ``later`` holds the rest of a broadcast that the task builds and
sends after two scheduler passes (the requester's own reply goes first).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.events import Event
from server.match.frozen import maker
from server.store import JournalEntry, RatingChange, SeatRecord, SeatTimers

#: The recipient that means "every connected spectator" (one public snapshot).
SPECTATORS = "spectators"


#: Per seat: (index, seconds left on its turn timer, seconds left of its grace
#: period, turn timeouts in a row); None: that timer is not running. The task turns
#: the seconds left into wall-clock deadlines.
TimersLeft = tuple[tuple[int, float | None, float | None, int], ...]


@dataclass(slots=True)
class AppendJournal:
    """Commit ``entry`` (its ``ts`` is stamped by the task); ``finished``: the
    (winner, reason) of the match it ends, or None; ``ratings``: the rating changes
    of a rated match it ends, stored in the same transaction; ``timers``: the
    running timers after the command, stored with the row (None: unchanged).

    Not frozen: the core sets ``timers`` once the command is done (it knows them
    only then); once the effects are handed to the task, nothing changes it."""

    entry: JournalEntry
    finished: tuple[int | None, str] | None = None
    ratings: tuple[RatingChange, ...] = ()
    timers: TimersLeft | None = None


@dataclass(frozen=True, slots=True)
class SaveSeat:
    """Store one seat (and the match's status when ``status`` is given)."""

    seat: SeatRecord
    status: str | None = None


@dataclass(frozen=True, slots=True)
class SaveWatcher:
    """Store that ``session`` watches (or no longer watches) the match."""

    session: str
    watching: bool


@dataclass(frozen=True, slots=True)
class DeleteMatch:
    """Remove the match from the store (every seat left before it started)."""


@dataclass(frozen=True, slots=True)
class SaveTimers:
    """Store the seats' running timers as they are at ``seq``, so that a restart
    resumes them (a change that made no journal row: else they go with the row)."""

    seq: int
    left: TimersLeft


Write = AppendJournal | SaveSeat | SaveWatcher | DeleteMatch | SaveTimers


@dataclass(frozen=True, slots=True)
class Membership:
    """``session`` now sits in (``present``) or left ``seat``; seat None: as a spectator."""

    session: str
    seat: int | None
    present: bool


@dataclass(frozen=True, slots=True)
class BotTurn:
    """Offer a server bot for ``seat`` (playing ``strategy``) its newest view.

    ``legal`` empty: nothing to do for now. ``pace``: seconds the bot waits
    before submitting (nobody human is left: play at a walking pace).
    """

    seat: int
    strategy: str
    seq: int
    view: dict[str, Any]
    legal: list[dict[str, Any]]
    pace: float = 0.0
    #: the intent a turn timeout would play (None: none), played when the bot
    #: cannot think in time
    default: dict[str, Any] | None = None


@dataclass(slots=True)
class Effects:
    """The consequences of one command, for the task to carry out in order."""

    writes: list[Write] = field(default_factory=list)
    members: list[Membership] = field(default_factory=list)
    #: (recipient, event): a session id, or :data:`SPECTATORS`
    messages: list[tuple[str, Event]] = field(default_factory=list)
    bots: list[BotTurn] = field(default_factory=list)
    #: the rest of the broadcast, built and sent after two scheduler passes
    later: Callable[[], Effects] | None = None
    stop_bots: bool = False
    #: the earliest timer now armed (math.inf: none); the task reports Tick then
    deadline: float = math.inf
    #: the match is over and has lingered: the task ends
    close: bool = False

    def to(self, recipient: str) -> list[dict[str, Any]]:
        """The wire maps of the messages for ``recipient``, in order (tests, logs)."""
        return [msg.to_wire() for who, msg in self.messages if who == recipient]

    @property
    def journal(self) -> list[JournalEntry]:
        """The journal rows among the writes, in order."""
        return [w.entry for w in self.writes if isinstance(w, AppendJournal)]


def wall_timer_rows(left: TimersLeft, wall: float) -> list[list[Any]]:
    """Seconds left -> wall-clock deadlines at ``wall``, as the store's rows
    (``[seat, turn deadline, grace deadline, timeouts]`` a seat)."""
    return [[seat, None if turn is None else wall + turn,
             None if grace is None else wall + grace, timeouts]
            for seat, turn, grace, timeouts in left]


def wall_timers(left: TimersLeft, wall: float) -> tuple[SeatTimers, ...]:
    """Seconds left -> wall-clock deadlines at ``wall`` (as stored), a
    :class:`SeatTimers` a seat: :func:`wall_timer_rows`' rows."""
    return tuple([_seat_timers(*row) for row in wall_timer_rows(left, wall)])


_seat_timers = maker(SeatTimers)
#: ``JournalEntry(seq, kind, seat, intent, reason, by, ts, digest, timers)``, every
#: field given (:func:`server.match.frozen.maker`): two a journaled intent
journal_entry = maker(JournalEntry)
