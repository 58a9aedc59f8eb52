"""Replaying a match's journal through the engine: crash recovery and ``cardserver replay``.

:func:`apply_entry` is the one place that turns a journal row back into an
engine call, so recovery and the replay command cannot disagree. The printed
replay (:mod:`server.replay_text`) and the page (:mod:`server.replay_html`) show
only the public projection (``state.view(None)`` and
``state.project_events(events, None)``) and the reveal once the match is over.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from engine.core import Event, State
from engine.fairness import commitment, seed_hex, verify
from engine.registry import get_game
from engine.rng import open_stream
from server.store import JournalEntry, MatchRecord, Store, StoreError


class ReplayError(Exception):
    """The journal does not replay: a row the engine refuses, or a state digest
    that differs from the one recorded (the engine changed since the match)."""


def new_match_state(rec: MatchRecord) -> State:
    """The match's state before its first journal row: the deal from its stored
    stream, seed and client seeds (the one place a stored match is dealt).

    Raises:
        ValueError: an unknown stream name, or seeds the stream refuses.
        engine.core.BadOption / UnknownGame: the stored game or options are unknown.
    """
    rng = open_stream(rec.stream, rec.seed, rec.client_seeds)
    return get_game(rec.game).new_state(rec.seed, rec.options, rng=rng)


def apply_entry(state: State, entry: JournalEntry) -> list[Event]:
    """Apply one journal row to ``state`` and return the raw events.

    Raises:
        engine.core.RuleError: the engine refuses the row.
        ReplayError: an unknown row kind.
    """
    if entry.kind == "intent":
        return state.apply(entry.seat, entry.intent or {})
    if entry.kind == "resign":
        return state.resign(entry.seat)
    if entry.kind == "forfeit":
        return state.forfeit(entry.seat, entry.reason or "forfeit")
    raise ReplayError(f"unknown journal row kind {entry.kind!r} at seq {entry.seq}")


def replay_steps(rec: MatchRecord, entries: list[JournalEntry],
                 check_digest: bool = True) -> Iterator[tuple[State, JournalEntry, list[Event]]]:
    """Yield ``(state, entry, raw events)`` after each row, from a fresh state.

    Raises:
        ReplayError: a row is refused or (with ``check_digest``) its digest differs.
        engine.core.BadOption / UnknownGame: the stored game or options are unknown.
    """
    state = new_match_state(rec)
    for expected, entry in enumerate(entries, start=1):
        if entry.seq != expected:
            raise ReplayError(f"journal of {rec.id} jumps from seq {expected - 1} to {entry.seq}")
        try:
            events = apply_entry(state, entry)
        except ReplayError:
            raise
        except Exception as exc:
            raise ReplayError(f"seq {entry.seq} of {rec.id} does not replay: {exc}") from exc
        if check_digest and entry.digest and state.digest_as(entry.digest) != entry.digest:
            raise ReplayError(f"state digest differs after seq {entry.seq} of {rec.id}")
        yield state, entry, events


def rebuild(rec: MatchRecord, entries: list[JournalEntry]) -> State:
    """The match's state after its whole journal.

    Raises:
        ReplayError: see :func:`replay_steps`.
    """
    last: State | None = None
    for last, _entry, _events in replay_steps(rec, entries):  # noqa: B007
        pass
    return last if last is not None else new_match_state(rec)


def public_record(rec: MatchRecord, entries: list[JournalEntry]) -> dict[str, Any]:
    """The whole match as a spectator would have seen it, plus the reveal when finished.

    Raises:
        ReplayError: see :func:`replay_steps`.
    """
    start = new_match_state(rec)
    moves = []
    for state, entry, events in replay_steps(rec, entries):
        moves.append({"seq": entry.seq, "seat": entry.seat, "kind": entry.kind,
                      "intent": entry.intent, "reason": entry.reason, "by": entry.by,
                      "ts": entry.ts, "events": state.project_events(events, None),
                      "view": state.view(None)})
    out: dict[str, Any] = {
        "match": rec.id, "game": rec.game, "options": rec.options, "status": rec.status,
        "created": rec.created, "finished": rec.finished,
        "players": [{"seat": s.seat, "name": s.name, "bot": s.bot} for s in rec.seats],
        "commitment": commitment(rec.seed, rec.salt),
        "stream": rec.stream, "client_seeds": rec.client_seeds,
        "start": start.view(None), "moves": moves,
    }
    if rec.status == "finished":
        out["result"] = {"winner": rec.winner, "reason": rec.reason}
        out["reveal"] = {"seed": seed_hex(rec.seed), "salt": rec.salt}
        out["verified"] = verify(seed_hex(rec.seed), rec.salt, out["commitment"])
    return out


def stored_record(match_id: str, db: str) -> dict[str, Any] | None:
    """The :func:`public_record` of a stored match, or None after saying on stderr
    why there is none (a store that cannot be opened, no such match, a journal that
    does not replay)."""
    try:
        store = Store(db)
    except StoreError as exc:
        print(f"cardserver replay: {exc}", file=sys.stderr)
        return None
    try:
        rec = store.load_match(match_id)
        if rec is None:
            print(f"cardserver replay: no match {match_id!r} in {db}", file=sys.stderr)
            return None
        try:
            return public_record(rec, store.journal(match_id))
        except ReplayError as exc:
            print(f"cardserver replay: {exc}", file=sys.stderr)
            return None
    finally:
        store.close()


def replay_command(match_id: str, db: str, as_json: bool, out: TextIO | None = None, *,
                   html: str | None = None, glyphs: bool = True) -> int:
    """Run ``cardserver replay``; returns the exit status (1: no such match, a bad
    journal, or a page that cannot be written).

    Prints the match move by move in words (:mod:`server.replay_text`), or one JSON
    document with ``as_json``; with ``html`` also writes the replay page there
    (:mod:`server.replay_html`).
    """
    out = out or sys.stdout
    record = stored_record(match_id, db)
    if record is None:
        return 1
    if html is not None:
        from server.replay_html import write_page

        try:
            write_page(record, html)
        except OSError as exc:
            print(f"cardserver replay: cannot write {html}: {exc}", file=sys.stderr)
            return 1
    if as_json:
        json.dump(record, out, indent=None, separators=(",", ":"))
        out.write("\n")
    else:
        from server.replay_text import format_record

        encoding = (getattr(out, "encoding", None) or "utf-8").lower()
        out.write(format_record(record, glyphs=glyphs and "utf" in encoding))
    if html is not None:
        print(f"cardserver replay: wrote {html}", file=sys.stderr)
    return 0
