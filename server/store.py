"""The durable store: sessions, matches, seats, watchers and every match's journal.

One SQLite file (stdlib ``sqlite3``) in WAL mode with ``synchronous=NORMAL``: a
commit is written to the WAL before ``commit`` returns, so it survives the
process being killed (SIGKILL); only an OS crash or power loss can lose the
last commits. Each call is one small transaction, run in the calling (trio)
thread: measured well under a millisecond (see README, "cardserver"), so it
does not need a worker thread.

A match's journal holds every change to its state in order, numbered by
``seq`` (1, 2, ...): ``intent`` rows (a seat's intent, or one the server
played for it: ``by`` is ``seat``, ``timer``, ``auto`` or ``bot``), ``resign``
rows and ``forfeit`` rows. Replaying the rows from the match's seed through
the engine rebuilds the state exactly. Hidden cards are never stored: intents
carry indexes, and the deal follows from the seed.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created REAL NOT NULL,
    last_seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    seed TEXT NOT NULL,
    salt TEXT NOT NULL,
    turn_timer INTEGER NOT NULL,
    abandon TEXT NOT NULL,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    finished REAL,
    winner INTEGER,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status);
CREATE TABLE IF NOT EXISTS seats (
    match TEXT NOT NULL,
    seat INTEGER NOT NULL,
    session TEXT,
    name TEXT,
    bot TEXT,
    auto_flip INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (match, seat)
);
CREATE TABLE IF NOT EXISTS watchers (
    match TEXT NOT NULL,
    session TEXT NOT NULL,
    PRIMARY KEY (match, session)
);
CREATE TABLE IF NOT EXISTS journal (
    match TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    seat INTEGER NOT NULL,
    intent TEXT,
    reason TEXT,
    by TEXT NOT NULL,
    ts REAL NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (match, seq)
);
"""


class StoreError(Exception):
    """The store refused an operation (constraint violated, disk full, bad file)."""


@dataclass(slots=True)
class SeatRecord:
    """One seat of a stored match. ``session`` None: open or played by a bot."""

    seat: int
    session: str | None = None
    name: str | None = None
    bot: str | None = None
    auto_flip: bool = False


@dataclass(slots=True)
class MatchRecord:
    """A stored match, without its journal."""

    id: str
    game: str
    options: dict[str, Any]
    seed: int
    salt: str
    turn_timer: int
    abandon: str
    status: str
    created: float
    finished: float | None = None
    winner: int | None = None
    reason: str | None = None
    seats: list[SeatRecord] = field(default_factory=list)
    watchers: list[str] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class JournalEntry:
    """One change to a match. ``kind``: intent | resign | forfeit."""

    seq: int
    kind: str
    seat: int
    intent: dict[str, Any] | None = None
    reason: str | None = None
    by: str = "seat"
    ts: float = 0.0
    digest: str = ""


@dataclass(slots=True, frozen=True)
class SessionRecord:
    """A stored session (the token itself is never stored, only its SHA-256)."""

    id: str
    name: str
    created: float
    last_seen: float


def _lock_file(path: Path) -> Any:
    """Open ``path`` and take an exclusive, non-blocking lock on it.

    Raises:
        StoreError: another process holds the lock.
    """
    import fcntl

    handle = open(path, "a")  # noqa: SIM115 - held open for the store's lifetime
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise StoreError(f"{path} is locked: another cardserver uses this store") from None
    return handle


#: ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` without building an
#: encoder on every call (the same text: ``dumps`` builds exactly this encoder).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def _dumps(value: Any) -> str:
    return _ENCODER.encode(value)


class Store:
    """The SQLite store. One instance per server; not shared between threads.

    Raises (every method):
        StoreError: the database refused the operation.
    """

    def __init__(self, path: Path | str, exclusive: bool = False) -> None:
        """Open (creating if needed) the store at ``path``; ``":memory:"`` for tests.

        Args:
            exclusive: hold an exclusive lock (``PATH.lock``) while open, so that two
                servers never share one store (the OS drops it if the process dies).

        Raises:
            StoreError: the file cannot be opened, or (exclusive) another server holds it.
        """
        self._lock: Any = None
        try:
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                if exclusive:
                    self._lock = _lock_file(Path(str(path) + ".lock"))
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=2000")
            self._db.executescript(SCHEMA)
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            if self._lock is not None:
                self._lock.close()
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        self.path = path

    def close(self) -> None:
        """Close the file and release the lock (idempotent)."""
        self._db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Run ``statements`` in one transaction; all or nothing."""
        try:
            with self._db:
                for sql, args in statements:
                    self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    # -- sessions ---------------------------------------------------------

    def create_session(self, session_id: str, token_hash: str, name: str, now: float) -> None:
        """Store a new session."""
        self._write([("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
                      (session_id, token_hash, name, now, now))])

    def find_session(self, token_hash: str) -> SessionRecord | None:
        """The session whose token hashes to ``token_hash``, or None."""
        row = self._db.execute(
            "SELECT id, name, created, last_seen FROM sessions WHERE token_hash = ?",
            (token_hash,)).fetchone()
        return SessionRecord(*row) if row else None

    def touch_session(self, session_id: str, now: float) -> None:
        """Record that the session was seen at ``now``."""
        self._write([("UPDATE sessions SET last_seen = ? WHERE id = ?", (now, session_id))])

    # -- matches ----------------------------------------------------------

    def create_match(self, rec: MatchRecord) -> None:
        """Store a new match with its seats."""
        stmts: list[tuple[str, tuple[Any, ...]]] = [(
            "INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (rec.id, rec.game, _dumps(rec.options), format(rec.seed, "064x"), rec.salt,
             rec.turn_timer, rec.abandon, rec.status, rec.created, rec.finished,
             rec.winner, rec.reason))]
        stmts += [self._seat_stmt(rec.id, s) for s in rec.seats]
        self._write(stmts)

    @staticmethod
    def _seat_stmt(match_id: str, s: SeatRecord) -> tuple[str, tuple[Any, ...]]:
        return ("INSERT OR REPLACE INTO seats VALUES (?, ?, ?, ?, ?, ?)",
                (match_id, s.seat, s.session, s.name, s.bot, int(s.auto_flip)))

    def set_seat(self, match_id: str, seat: SeatRecord, status: str | None = None) -> None:
        """Store a seat's occupant (and, if given, the match's new status) at once."""
        stmts = [self._seat_stmt(match_id, seat)]
        if status is not None:
            stmts.append(("UPDATE matches SET status = ? WHERE id = ?", (status, match_id)))
        self._write(stmts)

    def set_watcher(self, match_id: str, session_id: str, watching: bool) -> None:
        """Add or remove a spectator."""
        if watching:
            sql = "INSERT OR IGNORE INTO watchers VALUES (?, ?)"
        else:
            sql = "DELETE FROM watchers WHERE match = ? AND session = ?"
        self._write([(sql, (match_id, session_id))])

    def delete_match(self, match_id: str) -> None:
        """Forget a match that never started (and its seats, watchers, journal)."""
        self._write([(f"DELETE FROM {table} WHERE {col} = ?", (match_id,))
                     for table, col in (("matches", "id"), ("seats", "match"),
                                        ("watchers", "match"), ("journal", "match"))])

    def append(self, match_id: str, entry: JournalEntry,
               finished: tuple[float, int | None, str] | None = None) -> None:
        """Commit one journal entry; with ``finished=(when, winner, reason)`` also
        mark the match finished in the same transaction.

        Raises:
            StoreError: e.g. a duplicate seq (the entry is then not stored).
        """
        stmts: list[tuple[str, tuple[Any, ...]]] = [(
            "INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (match_id, entry.seq, entry.kind, entry.seat,
             None if entry.intent is None else _dumps(entry.intent), entry.reason,
             entry.by, entry.ts, entry.digest))]
        if finished is not None:
            when, winner, reason = finished
            stmts.append(("UPDATE matches SET status = 'finished', finished = ?, winner = ?, "
                          "reason = ? WHERE id = ?", (when, winner, reason, match_id)))
        self._write(stmts)

    def load_match(self, match_id: str) -> MatchRecord | None:
        """The stored match (with seats and watchers), or None."""
        row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        return self._match_from_row(row) if row else None

    def unfinished_matches(self) -> list[MatchRecord]:
        """Every match still waiting or active, oldest first."""
        rows = self._db.execute(
            "SELECT * FROM matches WHERE status != 'finished' ORDER BY created").fetchall()
        return [self._match_from_row(r) for r in rows]

    def _match_from_row(self, row: tuple[Any, ...]) -> MatchRecord:
        (mid, game, options, seed, salt, turn_timer, abandon, status, created, finished,
         winner, reason) = row
        seats = [SeatRecord(seat, session, name, bot, bool(af)) for seat, session, name, bot, af
                 in self._db.execute("SELECT seat, session, name, bot, auto_flip FROM seats "
                                     "WHERE match = ? ORDER BY seat", (mid,))]
        watchers = [s for (s,) in self._db.execute(
            "SELECT session FROM watchers WHERE match = ?", (mid,))]
        return MatchRecord(mid, game, json.loads(options), int(seed, 16), salt, turn_timer,
                           abandon, status, created, finished, winner, reason, seats, watchers)

    def journal(self, match_id: str) -> list[JournalEntry]:
        """The match's journal in seq order."""
        rows = self._db.execute(
            "SELECT seq, kind, seat, intent, reason, by, ts, digest FROM journal "
            "WHERE match = ? ORDER BY seq", (match_id,)).fetchall()
        return [JournalEntry(seq, kind, seat, None if intent is None else json.loads(intent),
                             reason, by, ts, digest)
                for seq, kind, seat, intent, reason, by, ts, digest in rows]
