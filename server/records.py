"""Finished matches' records, for the ``records`` and ``record`` requests.

A finished match's record is its journal replayed through the engine
(:func:`server.replay.replay_steps`, digests checked) and shown through the
engine's one projection: as a spectator saw it (``seat`` None), or as one seat
saw it, for the session that played that seat. The seed and salt are public by
then (R0.2), so the record carries the reveal and whether it matches the
commitment. Records are served a page of moves at a time, so a long match never
needs one huge frame; the listing of finished matches is paged by a cursor.

Pure functions of stored rows: no trio, no sockets (the lobby calls them in a
worker thread, since replaying a long match takes a while).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.fairness import commitment, seed_hex, verify
from engine.registry import get_game
from server.replay import new_match_state, replay_steps
from server.store import JournalEntry, MatchRecord

#: Moves per ``record`` page: the default and the most a request may ask for.
PAGE_DEFAULT, PAGE_MAX = 50, 200
#: Finished matches per ``records`` page: the default and the most.
LIST_DEFAULT, LIST_MAX = 20, 50
#: Records replayed at once (worker threads).
RECORD_THREADS = 2


@dataclass(frozen=True, slots=True)
class Cursor:
    """A position in the newest-first listing of finished matches."""

    finished: float
    match: str

    def encode(self) -> str:
        """The opaque string sent as ``next`` (and back as ``before``)."""
        return f"{self.finished!r}/{self.match}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        """Parse a cursor sent back by a client.

        Raises:
            ValueError: not a cursor this server made.
        """
        when, sep, match = text.partition("/")
        if not sep or not match:
            raise ValueError(f"not a records cursor: {text!r}")
        return cls(float(when), match)


def summary(rec: MatchRecord, moves: int) -> dict[str, Any]:
    """A finished match as listed by ``records``: the lobby's summary plus its result."""
    return {
        "match": rec.id, "game": rec.game, "status": rec.status, "options": rec.options,
        "seq": moves, "spectators": 0, "created": rec.created, "finished": rec.finished,
        "players": [{"seat": s.seat, "name": s.name, "connected": False, "bot": s.bot}
                    for s in rec.seats],
        "result": {"winner": rec.winner, "reason": rec.reason},
    }


def own_seats(rec: MatchRecord, session: str | None) -> list[int]:
    """The seats ``session`` played in ``rec`` (a bot that took a seat over counts not)."""
    if session is None:
        return []
    return [s.seat for s in rec.seats if s.session == session]


def record_page(rec: MatchRecord, entries: list[JournalEntry], *, seat: int | None,
                offset: int, limit: int, session: str | None = None) -> dict[str, Any]:
    """One page of a finished match's record: the header (game, options, players,
    commitment, reveal, result, the opening view, ``total`` moves) and the moves
    ``offset + 1 .. offset + limit``, each with its projected events and the view
    after it, for ``seat`` (None: a spectator).

    Raises:
        server.replay.ReplayError: the journal does not replay (digest or rule).
        ValueError: ``seat`` is not a seat of this game.
    """
    game = get_game(rec.game)
    if seat is not None and not 0 <= seat < game.seats:
        raise ValueError(f"no seat {seat} in {rec.game}")
    start = new_match_state(rec)
    moves: list[dict[str, Any]] = []
    last = offset + limit
    for state, entry, events in replay_steps(rec, entries):
        if entry.seq <= offset:
            continue
        if entry.seq > last:
            break
        moves.append({"seq": entry.seq, "seat": entry.seat, "kind": entry.kind,
                      "intent": entry.intent, "reason": entry.reason, "by": entry.by,
                      "events": state.project_events(events, seat), "view": state.view(seat)})
    shown = commitment(rec.seed, rec.salt)
    return {
        "match": rec.id, "game": rec.game, "options": rec.options, "status": rec.status,
        "created": rec.created, "finished": rec.finished,
        "players": [{"seat": s.seat, "name": s.name, "bot": s.bot} for s in rec.seats],
        "commitment": shown,
        "reveal": {"seed": seed_hex(rec.seed), "salt": rec.salt},
        "verified": verify(seed_hex(rec.seed), rec.salt, shown),
        "result": {"winner": rec.winner, "reason": rec.reason},
        "seat": seat, "own_seats": own_seats(rec, session),
        "start": start.view(seat), "total": len(entries), "offset": offset, "moves": moves,
    }


def next_offset(page: dict[str, Any]) -> int | None:
    """The ``offset`` of the page after ``page``, or None at the end."""
    end = page["offset"] + len(page["moves"])
    return end if end < page["total"] else None
