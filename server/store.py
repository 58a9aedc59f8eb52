"""The durable store: sessions, matches, seats, watchers and every match's journal.

One SQLite file (stdlib ``sqlite3``) in WAL mode with ``synchronous=NORMAL``: a
commit is written to the WAL before ``commit`` returns, so it survives the
process being killed (SIGKILL); only an OS crash or power loss can lose the
last commits. Every call runs in the calling (trio) thread: measured well under
a millisecond (see README, "cardserver"), so it does not need a worker thread.

The server (the process holding the store's lock, ``--journal-log on``) does
not commit each write: a write runs its statements in one long SQLite
transaction (a savepoint around two or more, so a failing one still raises
:class:`StoreError` and stores nothing) and appends them to the redo log
(:mod:`server.redo`, ``PATH-redo``) with one ``os.write`` before it returns, so
that it is in the kernel's page cache: it survives a SIGKILL exactly as a
commit does, and an OS crash loses at most the last writes, as before (a
replay stops at a gap, so what survives is always a prefix of what was
written). :meth:`Store.fold` commits the transaction with the log's position in
``redo_folded`` and empties the log: every ``--journal-fold`` seconds (the
server's folding task), when a match finishes, when the log holds
:data:`FOLD_RECORDS` and on :meth:`Store.close`. Opening the store replays the
records after the folded position (:meth:`Store._replay`; idempotent). A
write made only of journal rows that SQLite is sure to take (types it binds, no
NULL where a column refuses one, a seq above every stored one of its match) is
logged at once and its rows inserted later, all of them in one ``executemany``,
before anything else touches the store (another write, a read, a fold): the same
rows in the same order, off the path between an intent and its reply. Reads
through the server's store see every write; another process reading a running
server's store (``cardserver replay``, ``leaderboard``, a backup) sees what was
folded, at most ``--journal-fold`` seconds old and every finished match whole;
one opening a store whose server is gone (its lock is free) replays the log
first and sees everything. Nothing but the server writes to its store while it
runs (the lock keeps other servers out; the command-line tools only read).

A match's journal holds every change to its state in order, numbered by
``seq`` (1, 2, ...): ``intent`` rows (a seat's intent, or one the server
played for it: ``by`` is ``seat``, ``timer``, ``auto`` or ``bot``), ``resign``
rows and ``forfeit`` rows. Replaying the rows from the match's seed through
the engine rebuilds the state exactly. Hidden cards are never stored: intents
carry indexes, and the deal follows from the seed.

Accounts, API tokens, ratings and each rated match's rating changes live here
too. The file carries its schema version (``PRAGMA user_version``); opening an
older file migrates it forward, one version per transaction, and keeps every
match it holds. Version 0 is a file written before versions were kept: its
tables are exactly version 1's.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server import redo
from server.ratings import Rating, rate_match, scores

log = logging.getLogger("cardserver.store")

#: Permission bits of every file the store creates: the database, its WAL and
#: shared-memory files (SQLite gives them the database's bits) and the lock file.
#: The file holds the seeds of running matches (docs/security.md): owner only.
FILE_MODE = 0o600

#: The schema version this code writes; :data:`MIGRATIONS` leads every older one here.
SCHEMA_VERSION = 5

#: Version 1: sessions, matches, seats, watchers and the journal.
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

#: version -> the statements that lead version - 1 to it.
MIGRATIONS: dict[int, str] = {
    2: """
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    bot INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id),
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created REAL NOT NULL,
    last_used REAL
);
CREATE INDEX api_tokens_account ON api_tokens (account);
CREATE TABLE session_accounts (
    session TEXT PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id),
    api_token TEXT
);
CREATE INDEX session_accounts_account ON session_accounts (account);
CREATE INDEX session_accounts_token ON session_accounts (api_token);
CREATE INDEX seats_session ON seats (session);
CREATE TABLE ratings (
    account INTEGER NOT NULL REFERENCES accounts (id),
    game TEXT NOT NULL,
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    PRIMARY KEY (account, game)
);
CREATE INDEX ratings_board ON ratings (game, rating DESC);
CREATE TABLE rated_matches (
    match TEXT PRIMARY KEY
);
CREATE TABLE rating_changes (
    match TEXT NOT NULL,
    seat INTEGER NOT NULL,
    account INTEGER NOT NULL REFERENCES accounts (id),
    game TEXT NOT NULL,
    score REAL NOT NULL,
    rating_before REAL NOT NULL,
    rd_before REAL NOT NULL,
    volatility_before REAL NOT NULL,
    rating_after REAL NOT NULL,
    rd_after REAL NOT NULL,
    volatility_after REAL NOT NULL,
    PRIMARY KEY (match, seat)
);
""",
    # #12: each match's random stream (matches stored before keep the old generator)
    # and each seat's client seed
    3: """
ALTER TABLE matches ADD COLUMN stream TEXT NOT NULL DEFAULT 'mt19937';
ALTER TABLE seats ADD COLUMN client_seed TEXT;
""",
    # the running timers of an unfinished match (JSON, wall-clock deadlines), so that
    # a restart resumes them instead of starting them afresh: with the journal row
    # whose command changed them (no statement more per intent), or, for a change
    # without a row (a grace period), in matches (see Store.set_timers)
    4: """
ALTER TABLE matches ADD COLUMN timers TEXT;
ALTER TABLE journal ADD COLUMN timers TEXT;
""",
    # the position of the last redo-log record (server/redo.py) folded into the file,
    # committed with the writes it folds; a version of the code from before the log
    # refuses the file instead of ignoring a log it would lose
    5: """
CREATE TABLE redo_folded (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    position INTEGER NOT NULL
);
INSERT INTO redo_folded VALUES (0, 0);
""",
}


#: The columns of ``matches``, in the order :meth:`Store._match_from_row` reads them.
_MATCH_COLUMNS = ("id, game, options, seed, salt, turn_timer, abandon, status, created, "
                  "finished, winner, reason, stream, timers")


#: WAL pages after which a commit checkpoints the WAL into the database file
#: (SQLite's default: 1,000). A checkpoint waits for the disk (``fdatasync`` of the
#: WAL, then of the file) in the server's one thread, and that wait grows far less
#: than the pages it copies (a page many commits wrote is copied once): four times
#: fewer checkpoints, 0.7x the wall clock of a lone journal row in
#: ``scripts/bench_store.py``. 4,000 keeps the WAL within one 4,096-frame segment of
#: SQLite's WAL index, so that finding a page in it costs no more CPU (10,000 cost
#: 3-4 % more). The WAL file grows to about 16 MiB and is reused from its start.
#: Durability is unchanged: every commit is in the WAL before it returns.
CHECKPOINT_PAGES = 4000

#: With the redo log, the most records it holds: the write that reaches it folds
#: at once (the server folds every ``--journal-fold`` seconds, 0.05 by default;
#: this bounds the log and the open transaction of a server too busy to run its
#: folding task in time).
FOLD_RECORDS = 2000

#: The statement that records the folded position with the writes it folds.
_FOLDED = "UPDATE redo_folded SET position = ? WHERE id = 0"


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
    #: the seat's client seed (hex; given by the player or chosen by the server)
    client_seed: str | None = None


@dataclass(frozen=True, slots=True)
class SeatTimers:
    """A seat's running timers as stored: wall-clock deadlines (``time.time()``
    seconds; None: not running) and its turn timeouts in a row."""

    seat: int
    turn: float | None = None
    grace: float | None = None
    timeouts: int = 0


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
    #: a rated match: its result changes both seats' accounts' ratings
    rated: bool = False
    #: the match's random stream (:data:`engine.rng.STREAM_NAMES`); rows stored before
    #: the documented stream existed read as ``mt19937`` (the column's default)
    stream: str = "hmac-sha256-ctr/1"

    @property
    def client_seeds(self) -> list[str]:
        """Every seat's client seed, seat 0 first (empty while a seat has none)."""
        seeds = [s.client_seed for s in sorted(self.seats, key=lambda s: s.seat)]
        return [] if None in seeds else [seed for seed in seeds if seed is not None]
    #: the timers stored by :meth:`Store.set_timers`, and the seq they were stored at
    #: (None: none; a journal row's timers with a higher seq are newer)
    timers: list[SeatTimers] | None = None
    timers_seq: int = 0


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
    #: the match's running timers after the command that made this row (None:
    #: unchanged by it)
    timers: tuple[SeatTimers, ...] | None = None


@dataclass(slots=True, frozen=True)
class SessionRecord:
    """A stored session (the token itself is never stored, only its SHA-256)."""

    id: str
    name: str
    created: float
    last_seen: float


@dataclass(slots=True, frozen=True)
class AccountRecord:
    """A registered account. ``key`` is :func:`server.names.name_key` of ``name``;
    ``password_hash`` is an argon2id hash string (never the password)."""

    id: int
    key: str
    name: str
    password_hash: str
    bot: bool
    created: float


@dataclass(slots=True, frozen=True)
class ApiTokenRecord:
    """An account's API token as listed (the token itself is never stored)."""

    id: str
    account: int
    label: str
    created: float
    last_used: float | None


@dataclass(slots=True, frozen=True)
class Standing:
    """An account's rating in one game, with its record of rated matches."""

    rating: Rating = field(default_factory=Rating)
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0


@dataclass(slots=True, frozen=True)
class RatingChange:
    """What one rated match did to one seat's rating."""

    match: str
    seat: int
    account: int
    game: str
    score: float
    before: Rating
    after: Rating

    @property
    def delta(self) -> float:
        """The change of the rating itself (after - before)."""
        return self.after.rating - self.before.rating


@dataclass(slots=True, frozen=True)
class LeaderboardRow:
    """One line of a game's leaderboard."""

    rank: int
    name: str
    bot: bool
    standing: Standing


@dataclass(slots=True, frozen=True)
class RecentMatch:
    """A finished match an account sat in, newest first in :meth:`Store.recent_matches`."""

    match: str
    game: str
    seat: int
    opponent: str | None
    winner: int | None
    reason: str | None
    finished: float
    change: RatingChange | None

    @property
    def result(self) -> str:
        """``win``, ``loss`` or ``draw``, for this account."""
        if self.winner is None:
            return "draw"
        return "win" if self.winner == self.seat else "loss"


class DamagedMatch(Exception):
    """One stored match cannot be read (a bad row, a damaged page); the others can."""

    def __init__(self, match_id: str, reason: str) -> None:
        super().__init__(f"match {match_id}: {reason}")
        self.match_id = match_id
        self.reason = reason


def _create_private(path: Path) -> None:
    """Create ``path`` empty with :data:`FILE_MODE` if it does not exist; tighten an
    existing file that others may read (logged)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            log.warning("%s was readable by others (mode %o); now %o", path, mode, FILE_MODE)
            os.chmod(path, FILE_MODE)
        return
    os.close(fd)


def lock_path(path: Path | str) -> Path:
    """The lock file of the store at ``path``: beside the *resolved* file, so that
    every name of one database (a symlink, a relative path) takes the same lock."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + ".lock")


#: How long SQLite waits for a lock another connection holds (ms).
BUSY_TIMEOUT_MS = 2000
#: ... while another process opens the store of a running server: a server that
#: keeps the file to itself (``--store-lock exclusive``) holds its lock for good, so
#: waiting the whole busy timeout on each of the opening statements only delays the
#: refusal (about 5 s); a server that shares the file never blocks a reader's open.
RUNNING_SERVER_BUSY_MS = 200


def _lock_is_held(path: Path) -> bool:
    """True when some process holds the lock file ``path`` (a server runs on the
    store); False when nobody does or there is no such file. Creates nothing."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _lock_file(path: Path) -> Any:
    """Open ``path`` (created 0600) and take an exclusive, non-blocking lock on it.

    Raises:
        StoreError: another process holds the lock.
    """
    import fcntl

    _create_private(path)
    handle = open(path, "a")  # noqa: SIM115 - held open for the store's lifetime
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise StoreError(f"{path} is locked: another cardserver uses this store") from None
    return handle


#: The columns of ``journal`` that :class:`JournalEntry` writes, in order.
_JOURNAL_COLUMNS = "match, seq, kind, seat, intent, reason, by, ts, digest, timers"

#: The journal's insert, one row (:meth:`Store.append`).
_JOURNAL_INSERT = f"INSERT INTO journal ({_JOURNAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

#: ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` without building an
#: encoder on every call (the same text: ``dumps`` builds exactly this encoder).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))

#: The C encoder that ``_ENCODER.encode`` builds on every call (2 of its 3 µs for
#: a journal row's intent), built once with the same arguments; no check for
#: circular references (every value stored is a tree the server built or
#: decoded: a cycle would be a RecursionError). None without the C accelerator.
_C_ENCODE = None if json.encoder.c_make_encoder is None else json.encoder.c_make_encoder(
    None, _ENCODER.default, json.encoder.encode_basestring_ascii, None,
    _ENCODER.key_separator, _ENCODER.item_separator, True, False, True)


def _dumps(value: Any) -> str:
    """``value`` as the store's JSON text: sorted keys, no spaces, ASCII only.

    Raises:
        TypeError: a value JSON has no form for.
        ValueError: a float out of range (never: NaN and infinities are written
            as ``json.dumps`` writes them).
    """
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


#: the JSON text of each one-field intent seen (``{"type": T}``: War's flip), by T;
#: at most :data:`_INTENT_TEXTS` of them (a game's intents are few, and validated
#: by the game before they are journaled)
_INTENT_TEXT: dict[str, str] = {}
_INTENT_TEXTS = 64


def _intent_text(intent: dict[str, Any]) -> str:
    """``_dumps(intent)``, for an intent made of ``type`` alone read from
    :data:`_INTENT_TEXT` (0.76 -> 0.2 µs a War row)."""
    if len(intent) == 1:
        kind = intent.get("type")
        if type(kind) is str:
            text = _INTENT_TEXT.get(kind)
            if text is None:
                text = _dumps(intent)
                if len(_INTENT_TEXT) < _INTENT_TEXTS:
                    _INTENT_TEXT[kind] = text
            return text
    return _dumps(intent)


def schema_version(db: sqlite3.Connection) -> int:
    """The schema version a database file says it has (0: none recorded)."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _migrate(db: sqlite3.Connection) -> None:
    """Bring ``db`` to :data:`SCHEMA_VERSION`, one committed transaction per version.

    Raises:
        StoreError: the file was written by a newer version of this code.
        sqlite3.Error: a migration failed (that version's changes are rolled back).
    """
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        raise StoreError(f"the store has schema version {version}; this cardserver knows "
                         f"versions up to {SCHEMA_VERSION}: upgrade cardserver")
    if version == 0:
        # A new file, or one written before versions were recorded (whose tables are
        # exactly version 1's): CREATE ... IF NOT EXISTS keeps what is there.
        db.executescript(SCHEMA)
        version = 1
    for target in range(version + 1, SCHEMA_VERSION + 1):
        try:
            db.executescript(f"BEGIN IMMEDIATE;\n{MIGRATIONS[target]}\n"
                             f"PRAGMA user_version = {target};\nCOMMIT;")
        except sqlite3.Error:
            if db.in_transaction:
                db.rollback()
            raise
    if schema_version(db) != SCHEMA_VERSION:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.commit()


class _Transaction:
    """:meth:`Store.transaction`'s context manager: a class, not a generator (0.3
    instead of 1.1 µs a transaction, which the group commit opens once a pass)."""

    __slots__ = ("store", "outer")

    def __init__(self, store: Store) -> None:
        self.store = store
        self.outer = False

    def __enter__(self) -> None:
        store = self.store
        self.outer = store._pending is not None
        if not self.outer:
            store._pending = []

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self.outer:
            return
        store = self.store
        statements, store._pending = store._pending, None
        if exc_type is None and statements:
            store._write(statements)


class _Recorder:
    """The connection as :meth:`Store._transaction` hands it out with the redo log:
    ``execute`` runs a statement and keeps it (but a ``SELECT``) for the log.
    Replayed on the state it ran on, each statement does what it did (the store's
    SQL calls no function whose result varies: times and ids come as arguments)."""

    __slots__ = ("db", "statements")

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run ``sql`` (kept for the log unless it only reads)."""
        cursor = self.db.execute(sql, args)
        if not sql.lstrip().upper().startswith("SELECT"):
            self.statements.append((sql, tuple(args)))
        return cursor


class Store:
    """The SQLite store. One instance per server; not shared between threads.

    Raises (every method):
        StoreError: the database refused the operation.
    """

    def __init__(self, path: Path | str, exclusive: bool = False,
                 hold_file: bool = False, redo_log: bool = True) -> None:
        """Open (creating if needed) the store at ``path``; ``":memory:"`` for tests.

        Args:
            exclusive: hold an exclusive lock (``PATH.lock``) while open, so that two
                servers never share one store (the OS drops it if the process dies).
            hold_file: also keep SQLite's own exclusive lock on the file for as long
                as it is open (``locking_mode=EXCLUSIVE``; the WAL index then lives in
                this process's memory): a transaction takes and drops no file locks
                (8 of the 12 system calls of a lone journal row's commit), and nothing
                else can read the file meanwhile (``cardserver replay`` and
                ``leaderboard`` refuse it with a message naming ``--store-lock``).
                Durability is unchanged: each commit is in the WAL before it returns.
            redo_log: (with ``exclusive``, a file) write through a redo log
                (:mod:`server.redo`, below); False: one SQLite commit a write.

        With the redo log, every write runs in one long SQLite transaction and is
        appended to ``PATH-redo`` before it returns (in the page cache: it survives
        the process being killed, as a commit does); :meth:`fold` commits the
        transaction, with the log's position, and empties the log. Reads through
        this store see every write; other processes see what was last folded.
        Whoever opens the store first replays the log's records after the folded
        position (the server, which holds the lock, always; another process only
        when no server holds the lock), so none is lost whatever ``redo_log`` says.

        Raises:
            StoreError: the file cannot be opened: (exclusive) another server holds
                it, or a server that holds the file runs; a record of the redo log
                cannot be replayed.
        """
        self._lock: Any = None
        #: the redo log writes go through (None: a commit a write)
        self._redo: redo.RedoLog | None = None
        #: the position of the last record written to the log (or replayed from it)
        self._position = 0
        #: records written since the last fold
        self._unfolded = 0
        #: fold after the next write (it finishes a match)
        self._fold_next = False
        #: statements collected by :meth:`transaction` (None: write at once)
        self._pending: list[tuple[str, tuple[Any, ...]]] | None = None
        #: with the redo log: journal rows logged and not yet inserted into SQLite
        #: (:meth:`_defer`, :meth:`_insert_deferred`)
        self._deferred: list[tuple[Any, ...]] = []
        #: the highest seq the open transaction holds per match (or will, with
        #: :attr:`_deferred`), for the matches whose rows were deferred
        self._last_seq: dict[str, int] = {}
        #: called after every fold that committed (the server's folding task
        #: counts its interval from the last fold, whatever made it)
        self.on_fold: Callable[[], None] | None = None
        try:
            if str(path) != ":memory:":
                Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                if exclusive:
                    self._lock = _lock_file(lock_path(path))
                file = Path(path)
                if file.exists() and file.stat().st_size == 0:
                    log.warning("store %s is an empty (0-byte) file: starting with no "
                                "matches and no sessions", path)
                _create_private(file)
            served = (not exclusive and str(path) != ":memory:"
                      and _lock_is_held(lock_path(path)))
            busy = RUNNING_SERVER_BUSY_MS if served else BUSY_TIMEOUT_MS
            self._db = sqlite3.connect(str(path), timeout=busy / 1000,
                                       check_same_thread=False)
            if hold_file:   # before the first access: no shared-memory WAL index at all
                self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
            _migrate(self._db)
            if served:
                self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            #: the cursor :meth:`_write` runs its transactions through
            self._cursor = self._db.cursor()
            if str(path) != ":memory:":
                self._open_redo(Path(path), exclusive, redo_log)
        except (sqlite3.Error, OSError, StoreError) as exc:
            if self._lock is not None:
                self._lock.close()
            if self._redo is not None:
                self._redo.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise StoreError(
                    f"cannot open store {path}: a running cardserver holds it (it keeps "
                    "the file to itself: --store-lock exclusive); stop it, "
                    "or run it with --store-lock shared to read its store meanwhile"
                ) from exc
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        self.path = path

    def _open_redo(self, path: Path, exclusive: bool, redo_log: bool) -> None:
        """Replay the redo log if this process may (it holds the lock, or nobody
        does), and open it for writing when ``exclusive`` and ``redo_log``."""
        log_path = redo.redo_path(path)
        if exclusive:
            self._replay(log_path)
            if redo_log:
                self._redo = redo.RedoLog(log_path, FILE_MODE)
            else:
                log_path.unlink(missing_ok=True)
            return
        try:
            if log_path.stat().st_size == 0:
                return
        except FileNotFoundError:
            return
        try:
            lock = _lock_file(lock_path(path))
        except (StoreError, OSError):   # a running server (or a read-only folder):
            return                      # read what is folded
        try:
            self._replay(log_path)
        except (sqlite3.Error, OSError) as exc:   # e.g. a read-only file
            log.warning("store %s: cannot replay its redo log (%s): reading only what "
                        "was folded", path, exc)
        finally:
            lock.close()

    def _replay(self, log_path: Path) -> None:
        """Apply every record of the log after the folded position, in one
        transaction with the new position; then empty the log. Idempotent: a
        crash before the commit leaves the log to be replayed again, one after it
        leaves records whose positions are folded (skipped).

        Raises:
            StoreError: a record's statement fails (nothing of the log is applied).
            OSError, sqlite3.Error: the log or the file cannot be read or written.
        """
        contents = redo.read(log_path)
        if contents.torn:
            log.warning("redo log %s: a torn record at byte %d of %d (a crash inside a "
                        "write, whose write never returned): dropped", log_path,
                        contents.valid, contents.size)
        folded = self._folded()
        self._position = folded
        if any(r.position > folded for r in contents.records):
            self._cursor.execute("BEGIN")
            try:
                applied = self._apply_unfolded(contents, folded, log_path)
                self._cursor.execute(_FOLDED, (self._position,))
                self._cursor.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.rollback()
                self._position = folded
                raise
            log.info("redo log %s: replayed %d records (position %d)", log_path, applied,
                     self._position)
        if contents.size:
            os.truncate(log_path, 0)

    def _folded(self) -> int:
        """The position of the last redo-log record the database holds committed."""
        (folded,) = self._db.execute("SELECT position FROM redo_folded").fetchone()
        return int(folded)

    def _apply_unfolded(self, contents: redo.Contents, folded: int, log_path: Path) -> int:
        """In the open transaction, apply the records of ``contents`` after position
        ``folded`` (:meth:`_folded`), in order, up to a gap in the positions;
        :attr:`_position` follows them. Returns how many were applied.

        Raises:
            StoreError: a record's statement failed.
        """
        self._position = folded
        applied = 0
        for record in contents.records:
            if record.position <= self._position:
                continue
            if record.position != self._position + 1:
                log.error("redo log %s: record %d follows %d (the records between were "
                          "lost, e.g. by an OS crash): not replaying it or any after it",
                          log_path, record.position, self._position)
                break
            self._apply(record)
            self._position = record.position
            applied += 1
        return applied

    def _apply(self, record: redo.Record) -> None:
        """Run one record's statements (all or nothing).

        Raises:
            StoreError: one of them failed.
        """
        cursor = self._cursor
        cursor.execute("SAVEPOINT redo")
        try:
            for sql, args in record.statements:
                cursor.execute(sql, args)
        except sqlite3.Error as exc:
            raise StoreError(f"redo log record {record.position} cannot be replayed "
                             f"({exc}): move {redo.redo_path(self.path)} aside to open "
                             "the store without it (its records are then lost)") from exc
        cursor.execute("RELEASE redo")

    def close(self) -> None:
        """Fold the redo log, close the file and release the lock (idempotent).
        A fold that fails is logged: the log keeps its records for the next opening."""
        if self._redo is not None:
            try:
                self.fold()
                os.unlink(self._redo.path)   # empty: nothing to replay
            except (StoreError, OSError) as exc:
                log.error("store %s: cannot fold the redo log on closing (%s); it is "
                          "replayed when the store is opened again", self.path, exc)
            self._redo.close()
            self._redo = None
        self._db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @property
    def unfolded(self) -> int:
        """Writes in the redo log not yet folded into the database (0 without a log)."""
        return self._unfolded

    def fold(self) -> None:
        """Commit the writes made since the last fold (with the redo log's position)
        and empty the log; nothing to do without a log or with nothing unfolded.

        Raises:
            StoreError: the commit failed (the writes stay in the log and in the
                transaction, or, if SQLite rolled the transaction back, are
                applied again from the log: none is lost).
        """
        if self._redo is None:
            return
        self._insert_deferred()
        if not self._db.in_transaction:
            return
        try:
            self._cursor.execute(_FOLDED, (self._position,))
            self._cursor.execute("COMMIT")
        except sqlite3.Error as exc:
            self._after_failure()
            raise StoreError(f"cannot fold the redo log: {exc}") from exc
        self._unfolded = 0
        try:
            self._redo.clear()
        except OSError as exc:   # its records are folded: skipped if replayed
            log.error("redo log %s: cannot empty it (%s)", self._redo.path, exc)
        if self.on_fold is not None:
            self.on_fold()

    def _undo_transaction(self) -> None:
        """Roll the open transaction back and apply the log's records again: the
        open transaction as it was before the write now being undone."""
        self._db.rollback()
        self._after_failure("a write was undone")

    def _after_failure(self, why: str = "SQLite rolled it back") -> None:
        """After a failed statement or commit: if SQLite rolled the whole open
        transaction back (disk full, I/O error), apply the log's records again so
        that the transaction holds every write that returned."""
        if self._redo is None or self._db.in_transaction or not self._unfolded:
            return
        log.warning("store %s: the open transaction is gone (%s); applying the redo "
                    "log's %d records again", self.path, why, self._unfolded)
        position = self._position
        self._deferred = []   # logged: applied again with the rest of the log
        folded = self._folded()
        self._cursor.execute("BEGIN")
        self._apply_unfolded(redo.read(self._redo.path), folded, self._redo.path)
        if self._position != position:
            raise StoreError(f"store {self.path}: the redo log holds up to record "
                             f"{self._position} of {position}")

    def transaction(self) -> _Transaction:
        """Every write inside the ``with`` block commits as one transaction at its
        end: all or nothing (nothing is written if the block raises). Inside
        another one it is that one's part (it commits at the outer end).

        Raises:
            StoreError: the database refused the transaction (nothing of it is stored).
        """
        return _Transaction(self)

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Run ``statements`` in one transaction; all or nothing (inside
        :meth:`transaction`: queued for its commit)."""
        if self._pending is not None:
            self._pending.extend(statements)
            return
        if self._redo is not None:
            self._write_logged(statements)
            return
        # BEGIN and COMMIT through one kept cursor: from its statement cache, where
        # the implicit BEGIN and ``commit()`` prepare theirs anew on every call
        cursor = self._cursor
        try:
            cursor.execute("BEGIN")
            try:
                for sql, args in statements:
                    cursor.execute(sql, args)
                cursor.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.rollback()
                raise
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    def _write_logged(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """:meth:`_write` with the redo log: run ``statements`` in the open
        transaction (a savepoint around two or more: all or nothing; one alone is
        atomic by itself), then append them to the log; fold when the log is full."""
        if not statements:
            return
        if self._defer(statements):
            return
        self._insert_deferred()
        cursor = self._cursor
        several = len(statements) > 1
        try:
            if not self._db.in_transaction:
                cursor.execute("BEGIN")
            if several:
                cursor.execute("SAVEPOINT w")
                try:
                    for sql, args in statements:
                        cursor.execute(sql, args)
                except BaseException:
                    cursor.execute("ROLLBACK TO w")
                    cursor.execute("RELEASE w")
                    raise
            else:
                sql, args = statements[0]
                try:
                    cursor.execute(sql, args)
                except sqlite3.Error:
                    raise
                except BaseException:   # (an interrupt) it may have run: undo it
                    self._undo_transaction()
                    raise
        except sqlite3.Error as exc:
            self._after_failure()
            raise StoreError(str(exc)) from exc
        self._log(statements, several)
        last = self._last_seq
        if last:
            for sql, args in statements:   # rows of a match whose rows were deferred
                if sql is _JOURNAL_INSERT and args[0] in last:
                    last[args[0]] = max(last[args[0]], args[1])
        self._fold_if_due()

    def _fold_if_due(self) -> None:
        """Fold after a write that finished a match, or once the log is full."""
        if self._fold_next or self._unfolded >= FOLD_RECORDS:
            self._fold_next = False
            try:
                self.fold()
            except StoreError as exc:   # the write is stored (in the log): not its failure
                log.error("store %s: %s; the writes stay in the redo log", self.path, exc)

    def _defer(self, statements: list[tuple[str, tuple[Any, ...]]]) -> bool:
        """With the redo log: log a write made only of journal rows SQLite is sure
        to take, and keep the rows for :meth:`_insert_deferred`; True when done so.
        False, with nothing done, for any other write (run at once, as before): a
        statement that is not :data:`_JOURNAL_INSERT`, an argument of a type
        SQLite might not bind or a NULL (NaN) where its column takes none, a seq
        not above every stored one of its match (a duplicate, or a gap filled).

        Raises:
            StoreError: the log could not be written (nothing of the write is stored).
        """
        last = self._last_seq
        seen: dict[str, int] = {}
        for sql, args in statements:
            if sql is not _JOURNAL_INSERT or not _bindable(args):
                return False
            match, seq = args[0], args[1]
            top = seen.get(match)
            if top is None:
                top = last.get(match)
                if top is None:
                    top = self._stored_seq(match)
            if seq <= top:
                return False
            seen[match] = seq
        try:
            self._redo.append(self._position + 1, statements)  # type: ignore[union-attr]
        except (OSError, TypeError, ValueError, OverflowError) as exc:
            raise StoreError(f"cannot write the redo log: {exc}") from exc
        self._position += 1
        self._unfolded += 1
        self._deferred += [args for _, args in statements]
        last.update(seen)
        self._fold_if_due()
        return True

    def _stored_seq(self, match_id: str) -> int:
        """The highest seq of ``match_id``'s journal in SQLite (0: none).

        Raises:
            StoreError: it cannot be read.
        """
        self._insert_deferred()
        try:
            (top,) = self._db.execute("SELECT max(seq) FROM journal WHERE match = ?",
                                      (match_id,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc
        return 0 if top is None else int(top)

    def insert_deferred(self, most: int) -> bool:
        """Insert the first ``most`` of the journal rows waiting to be inserted (see
        :meth:`_defer`) into the open transaction, so that a fold that follows has
        fewer to insert at once; True when some still wait.

        Raises:
            StoreError: as :meth:`_insert_deferred`.
        """
        self._insert_deferred(most)
        return bool(self._deferred)

    def _insert_deferred(self, most: int | None = None) -> None:
        """Insert the deferred journal rows (:meth:`_defer`; the first ``most`` of
        them, None: all) into the open transaction, in one ``executemany``. They
        are logged already: if SQLite fails on them (a full disk, an I/O error),
        the transaction is begun again from the log, which holds them all.

        Raises:
            StoreError: the transaction could not be rebuilt from the log.
        """
        rows = self._deferred
        if not rows:
            return
        if most is None or most >= len(rows):
            self._deferred = []
        else:
            rows, self._deferred = rows[:most], rows[most:]
        cursor = self._cursor
        try:
            if not self._db.in_transaction:
                cursor.execute("BEGIN")
            cursor.executemany(_JOURNAL_INSERT, rows)
        except BaseException as exc:   # (an interrupt too: some rows may be in)
            log.warning("store %s: inserting %d logged journal rows failed (%r); "
                        "applying the redo log again", self.path, len(rows), exc)
            try:
                if self._db.in_transaction:
                    self._db.rollback()
                self._after_failure("its logged journal rows failed")
            except sqlite3.Error as again:
                raise StoreError(f"cannot apply the redo log again: {again}") from again
            if not isinstance(exc, sqlite3.Error):
                raise

    def _forget_seq(self, match_id: str) -> None:
        """``match_id`` takes no more rows here (finished, or deleted)."""
        self._last_seq.pop(match_id, None)

    def _log(self, statements: Sequence[redo.Statement], savepoint: bool) -> None:
        """Append the statements just run to the redo log (releasing the savepoint
        ``w`` around them if ``savepoint``); if that fails, undo them.

        Raises:
            StoreError: the log could not be written (nothing of them is stored).
        """
        try:
            self._redo.append(self._position + 1, statements)  # type: ignore[union-attr]
        except (OSError, TypeError, ValueError, OverflowError) as exc:
            try:
                if savepoint:
                    self._cursor.execute("ROLLBACK TO w")
                    self._cursor.execute("RELEASE w")
                else:   # one statement, no savepoint: the open transaction again
                    self._undo_transaction()
            except sqlite3.Error:   # SQLite rolled it all back meanwhile
                self._after_failure()
            raise StoreError(f"cannot write the redo log: {exc}") from exc
        if savepoint:
            self._cursor.execute("RELEASE w")
        self._position += 1
        self._unfolded += 1

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

    def delete_idle_sessions(self, before: float, keep: set[str]) -> int:
        """Delete the sessions last seen before ``before`` (their tokens have expired)
        whose ids are not in ``keep``, and their watcher rows; how many went.
        Seats keep the ids of those who sat in them (the matches' history)."""
        ids = [sid for (sid,) in self._db.execute(
            "SELECT id FROM sessions WHERE last_seen < ?", (before,)) if sid not in keep]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            self._write([(f"DELETE FROM sessions WHERE id IN ({marks})", tuple(chunk)),
                         (f"DELETE FROM watchers WHERE session IN ({marks})", tuple(chunk))])
        return len(ids)

    # -- matches ----------------------------------------------------------

    def create_match(self, rec: MatchRecord) -> None:
        """Store a new match with its seats."""
        stmts: list[tuple[str, tuple[Any, ...]]] = [(
            f"INSERT INTO matches ({_MATCH_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            (rec.id, rec.game, _dumps(rec.options), format(rec.seed, "064x"), rec.salt,
             rec.turn_timer, rec.abandon, rec.status, rec.created, rec.finished,
             rec.winner, rec.reason, rec.stream))]
        stmts += [self._seat_stmt(rec.id, s) for s in rec.seats]
        if rec.rated:
            stmts.append(("INSERT OR IGNORE INTO rated_matches VALUES (?)", (rec.id,)))
        self._write(stmts)

    @staticmethod
    def _seat_stmt(match_id: str, s: SeatRecord) -> tuple[str, tuple[Any, ...]]:
        return ("INSERT OR REPLACE INTO seats (match, seat, session, name, bot, auto_flip, "
                "client_seed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (match_id, s.seat, s.session, s.name, s.bot, int(s.auto_flip), s.client_seed))

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

    def set_timers(self, match_id: str, seq: int, timers: tuple[SeatTimers, ...]) -> None:
        """Store the match's running timers as they are at ``seq`` (a change that
        made no journal row; :meth:`append` stores the others with their row)."""
        text = _dumps({"seq": seq, "seats": _timers_to_list(timers)})
        self._write([("UPDATE matches SET timers = ? WHERE id = ?", (text, match_id))])

    def delete_match(self, match_id: str) -> None:
        """Forget a match that never started (and its seats, watchers, journal)."""
        self._forget_seq(match_id)
        self._write([(f"DELETE FROM {table} WHERE {col} = ?", (match_id,))
                     for table, col in (("matches", "id"), ("seats", "match"),
                                        ("watchers", "match"), ("journal", "match"),
                                        ("rated_matches", "match"))])

    def append(self, match_id: str, entry: JournalEntry,
               finished: tuple[float, int | None, str] | None = None,
               ratings: Sequence[RatingChange] = ()) -> None:
        """Commit one journal entry; with ``finished=(when, winner, reason)`` also
        mark the match finished, and store the ``ratings`` it changes (from
        :meth:`rate`), all in the same transaction (with the redo log: folded at
        once, so that other processes read a finished match whole).

        Raises:
            StoreError: e.g. a duplicate seq (then nothing is stored).
        """
        self.append_stamped(match_id, entry, entry.ts,
                            None if entry.timers is None else _timers_to_list(entry.timers),
                            finished, ratings)

    def append_stamped(self, match_id: str, entry: JournalEntry, ts: float,
                       timers: list[list[Any]] | None,
                       finished: tuple[float, int | None, str] | None = None,
                       ratings: Sequence[RatingChange] = ()) -> None:
        """:meth:`append` of ``entry`` with the time ``ts`` and the running
        ``timers`` as stored (``[seat, turn deadline, grace deadline, timeouts]``
        a seat, wall-clock; None: unchanged) in place of its own ``ts`` and
        ``timers``: what the server stores for each command, without a second
        entry built to carry them.

        Raises:
            StoreError: as :meth:`append`.
        """
        stmts: list[tuple[str, tuple[Any, ...]]] = [(
            _JOURNAL_INSERT,
            (match_id, entry.seq, entry.kind, entry.seat,
             None if entry.intent is None else _intent_text(entry.intent), entry.reason,
             entry.by, ts, entry.digest, None if timers is None else _dumps(timers)))]
        if finished is not None:
            when, winner, reason = finished
            stmts.append(("UPDATE matches SET status = 'finished', finished = ?, winner = ?, "
                          "reason = ? WHERE id = ?", (when, winner, reason, match_id)))
        for change in ratings:
            stmts += self._rating_stmts(change)
        # a finished match is folded at once: `cardserver replay` (the README's way to
        # verify a match) and `leaderboard` read all of it while the server runs
        self._fold_next = self._fold_next or finished is not None
        self._write(stmts)
        if finished is not None:
            self._forget_seq(match_id)

    def load_match(self, match_id: str) -> MatchRecord | None:
        """The stored match (with seats and watchers), or None.

        Raises:
            DamagedMatch: its rows cannot be read.
        """
        row = self._read(match_id, f"SELECT {_MATCH_COLUMNS} FROM matches WHERE id = ?",
                         (match_id,))
        return self._match_from_row(row[0]) if row else None

    def unfinished_match_ids(self) -> list[str]:
        """The ids of every match still waiting or active, oldest first: through the
        status index, or, when a page of it is damaged, through the table itself.

        Raises:
            StoreError: neither can be read (the list of matches itself is damaged).
        """
        queries = ("SELECT id FROM matches INDEXED BY matches_status "
                   "WHERE status IN ('waiting', 'active') ORDER BY created",
                   "SELECT id FROM matches NOT INDEXED WHERE status != 'finished' "
                   "ORDER BY created")
        for sql in queries:
            try:
                return [mid for (mid,) in self._db.execute(sql)]
            except sqlite3.Error as exc:
                log.error("store %s: cannot list the matches (%s)", self.path, exc)
                failure = exc
        raise StoreError(f"cannot list the stored matches: {failure}") from failure

    def unfinished_matches(self) -> list[MatchRecord]:
        """Every readable match still waiting or active, oldest first (a damaged one
        is logged and left out: see :meth:`unfinished_match_ids`, :meth:`load_match`)."""
        out = []
        for mid in self.unfinished_match_ids():
            try:
                rec = self.load_match(mid)
            except DamagedMatch as exc:
                log.error("%s", exc)
                continue
            if rec is not None:
                out.append(rec)
        return out

    def _read(self, match_id: str, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """The rows of one query about ``match_id``.

        Raises:
            DamagedMatch: SQLite cannot read them (a damaged page, a bad value).
        """
        self._insert_deferred()
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise DamagedMatch(match_id, f"cannot read its rows: {exc}") from exc

    def finished_matches(self, *, game: str | None = None, player: str | None = None,
                         before: tuple[float, str] | None = None,
                         limit: int = 20) -> list[tuple[MatchRecord, int]]:
        """Finished matches, newest first (by finish time, then id), with their number of
        journal rows: of one ``game``, one ``player`` name, strictly after the listing
        position ``before`` = (finished, id); at most ``limit``."""
        where, args = ["m.status = 'finished'", "m.finished IS NOT NULL"], []
        if game is not None:
            where.append("m.game = ?")
            args.append(game)
        if player is not None:
            where.append("EXISTS (SELECT 1 FROM seats s WHERE s.match = m.id AND s.name = ?)")
            args.append(player)
        if before is not None:
            where.append("(m.finished < ? OR (m.finished = ? AND m.id < ?))")
            args += [before[0], before[0], before[1]]
        self._insert_deferred()
        rows = self._db.execute(
            f"SELECT m.* FROM matches m WHERE {' AND '.join(where)} "  # noqa: S608 - fixed parts
            "ORDER BY m.finished DESC, m.id DESC LIMIT ?", (*args, limit)).fetchall()
        out = []
        for row in rows:
            rec = self._match_from_row(row)
            (moves,) = self._db.execute("SELECT COUNT(*) FROM journal WHERE match = ?",
                                        (rec.id,)).fetchone()
            out.append((rec, moves))
        return out

    def _match_from_row(self, row: tuple[Any, ...]) -> MatchRecord:
        (mid, game, options, seed, salt, turn_timer, abandon, status, created, finished,
         winner, reason, stream, timers) = row
        seats = [SeatRecord(seat, session, name, bot, bool(af), client_seed)
                 for seat, session, name, bot, af, client_seed in self._read(
                     mid, "SELECT seat, session, name, bot, auto_flip, client_seed FROM seats "
                     "WHERE match = ? ORDER BY seat", (mid,))]
        watchers = [s for (s,) in self._read(
            mid, "SELECT session FROM watchers WHERE match = ?", (mid,))]
        rated = bool(self._read(mid, "SELECT 1 FROM rated_matches WHERE match = ?", (mid,)))
        try:
            stored = None if timers is None else json.loads(timers)
            return MatchRecord(mid, game, json.loads(options), int(seed, 16), salt, turn_timer,
                               abandon, status, created, finished, winner, reason, seats,
                               watchers, rated, stream,
                               None if stored is None else list(_timers_from(stored["seats"])),
                               0 if stored is None else int(stored["seq"]))
        except (ValueError, TypeError, KeyError) as exc:
            raise DamagedMatch(mid, f"a bad value in its row: {exc}") from exc

    def journal(self, match_id: str) -> list[JournalEntry]:
        """The match's journal in seq order.

        Raises:
            DamagedMatch: a row cannot be read or its intent is not JSON.
        """
        rows = self._read(match_id,
                          "SELECT seq, kind, seat, intent, reason, by, ts, digest, timers "
                          "FROM journal WHERE match = ? ORDER BY seq", (match_id,))
        try:
            return [JournalEntry(seq, kind, seat,
                                 None if intent is None else json.loads(intent),
                                 reason, by, ts, digest,
                                 None if timers is None else _timers_from(json.loads(timers)))
                    for seq, kind, seat, intent, reason, by, ts, digest, timers in rows]
        except (ValueError, TypeError) as exc:
            raise DamagedMatch(match_id, f"a journal row is not JSON: {exc}") from exc

    # -- transactions with reads ------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, else rolled back.
        With the redo log: a savepoint in the open transaction, its statements
        logged (:class:`_Recorder`) when it ends without an exception."""
        if self._redo is not None:
            self._insert_deferred()
            with self._logged_transaction() as recorder:
                yield recorder
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc

    @contextmanager
    def _logged_transaction(self) -> Iterator[_Recorder]:
        cursor = self._cursor
        try:
            if not self._db.in_transaction:
                cursor.execute("BEGIN")
            cursor.execute("SAVEPOINT w")
            recorder = _Recorder(self._db)
            try:
                yield recorder
            except BaseException:
                cursor.execute("ROLLBACK TO w")
                cursor.execute("RELEASE w")
                raise
        except sqlite3.Error as exc:
            self._after_failure()
            raise StoreError(str(exc)) from exc
        if recorder.statements:
            self._log(recorder.statements, True)
        else:
            cursor.execute("RELEASE w")

    # -- accounts ---------------------------------------------------------

    _ACCOUNT = "SELECT id, key, name, password_hash, bot, created FROM accounts"

    @staticmethod
    def _account(row: tuple[Any, ...] | None) -> AccountRecord | None:
        if row is None:
            return None
        aid, key, name, password_hash, bot, created = row
        return AccountRecord(aid, key, name, password_hash, bool(bot), created)

    def create_account(self, key: str, name: str, password_hash: str, now: float,
                       bot: bool = False) -> AccountRecord | None:
        """Store a new account; None when an account with this ``key`` exists."""
        with self._transaction() as db:
            cur = db.execute("INSERT INTO accounts (key, name, password_hash, bot, created) "
                             "VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                             (key, name, password_hash, int(bot), now))
            if cur.rowcount == 0:
                return None
            aid = cur.lastrowid
        return AccountRecord(int(aid or 0), key, name, password_hash, bot, now)

    def find_account(self, key: str) -> AccountRecord | None:
        """The account whose name has this :func:`~server.names.name_key`, or None."""
        return self._account(self._db.execute(f"{self._ACCOUNT} WHERE key = ?",
                                              (key,)).fetchone())

    def account(self, account_id: int) -> AccountRecord | None:
        """The account with this id, or None."""
        return self._account(self._db.execute(f"{self._ACCOUNT} WHERE id = ?",
                                              (account_id,)).fetchone())

    def set_password_hash(self, account_id: int, password_hash: str) -> None:
        """Replace an account's password hash."""
        self._write([("UPDATE accounts SET password_hash = ? WHERE id = ?",
                      (password_hash, account_id))])

    def set_account_bot(self, account_id: int, bot: bool) -> None:
        """Mark an account as a bot's (or not)."""
        self._write([("UPDATE accounts SET bot = ? WHERE id = ?", (int(bot), account_id))])

    # -- API tokens -------------------------------------------------------

    def add_api_token(self, token_id: str, account_id: int, token_hash: str, label: str,
                      now: float) -> None:
        """Store a new API token of an account (only its hash)."""
        self._write([("INSERT INTO api_tokens VALUES (?, ?, ?, ?, ?, NULL)",
                      (token_id, account_id, token_hash, label, now))])

    def find_api_token(self, token_hash: str) -> ApiTokenRecord | None:
        """The token that hashes to ``token_hash``, or None (revoked or never made)."""
        row = self._db.execute("SELECT id, account, label, created, last_used FROM api_tokens "
                               "WHERE token_hash = ?", (token_hash,)).fetchone()
        return ApiTokenRecord(*row) if row else None

    def touch_api_token(self, token_id: str, now: float) -> None:
        """Record that a token was used to log in at ``now``."""
        self._write([("UPDATE api_tokens SET last_used = ? WHERE id = ?", (now, token_id))])

    def api_tokens(self, account_id: int) -> list[ApiTokenRecord]:
        """An account's tokens, oldest first."""
        rows = self._db.execute("SELECT id, account, label, created, last_used FROM api_tokens "
                                "WHERE account = ? ORDER BY created, id", (account_id,))
        return [ApiTokenRecord(*row) for row in rows]

    def revoke_api_token(self, account_id: int, token_id: str) -> list[str] | None:
        """Delete one of an account's tokens and the resume tokens of the sessions
        that logged in with it, in one transaction.

        Returns:
            The ids of those sessions (which nobody can resume now), or None when
            the account has no such token.
        """
        with self._transaction() as db:
            cur = db.execute("DELETE FROM api_tokens WHERE id = ? AND account = ?",
                             (token_id, account_id))
            if cur.rowcount == 0:
                return None
            sessions = [sid for (sid,) in db.execute(
                "SELECT session FROM session_accounts WHERE api_token = ?", (token_id,))]
            db.execute("DELETE FROM sessions WHERE id IN (SELECT session FROM "
                       "session_accounts WHERE api_token = ?)", (token_id,))
        return sessions

    # -- sessions of accounts ---------------------------------------------

    def link_session(self, session_id: str, account_id: int,
                     api_token: str | None = None) -> None:
        """Record that a session is logged in as an account (for good); ``api_token``:
        the id of the API token it logged in with, if it did."""
        self._write([("INSERT OR REPLACE INTO session_accounts VALUES (?, ?, ?)",
                      (session_id, account_id, api_token))])

    def session_account(self, session_id: str) -> int | None:
        """The account a session is logged in as, or None for a guest's."""
        row = self._db.execute("SELECT account FROM session_accounts WHERE session = ?",
                               (session_id,)).fetchone()
        return int(row[0]) if row else None

    def revoke_session(self, session_id: str) -> None:
        """Forget a session's resume token (logout): it can no longer be resumed.

        The session's seats and its link to an account stay (match history).
        """
        self._write([("DELETE FROM sessions WHERE id = ?", (session_id,))])

    # -- ratings ----------------------------------------------------------

    def is_rated(self, match_id: str) -> bool:
        """True when the match was stored as rated."""
        return self._db.execute("SELECT 1 FROM rated_matches WHERE match = ?",
                                (match_id,)).fetchone() is not None

    @staticmethod
    def _standing(db: sqlite3.Connection, account_id: int, game: str) -> Standing:
        row = db.execute("SELECT rating, rd, volatility, games, wins, losses, draws "
                         "FROM ratings WHERE account = ? AND game = ?",
                         (account_id, game)).fetchone()
        if row is None:
            return Standing()
        rating, rd, vol, games, wins, losses, draws = row
        return Standing(Rating(rating, rd, vol), games, wins, losses, draws)

    def standing(self, account_id: int, game: str) -> Standing:
        """An account's rating in ``game`` (the initial one before its first rated match)."""
        return self._standing(self._db, account_id, game)

    def standings(self, account_id: int) -> dict[str, Standing]:
        """Every game the account has a stored rating in (games never played are absent)."""
        rows = self._db.execute("SELECT game FROM ratings WHERE account = ?", (account_id,))
        return {game: self.standing(account_id, game) for (game,) in rows.fetchall()}

    def rate(self, match_id: str, game: str, accounts: tuple[int, int],
             winner: int | None) -> tuple[RatingChange, RatingChange]:
        """What a rated match's result does to both accounts' ratings, from their
        ratings as stored now (:func:`server.ratings.rate_match`); writes nothing.

        Pass the result to :meth:`append` with the match's last journal entry.

        Args:
            accounts: seat 0's and seat 1's account ids.
            winner: 0, 1 or None (a draw).
        """
        before = [self.standing(account, game).rating for account in accounts]
        after = rate_match(before[0], before[1], winner)
        s0, s1 = scores(winner)
        return (RatingChange(match_id, 0, accounts[0], game, s0, before[0], after[0]),
                RatingChange(match_id, 1, accounts[1], game, s1, before[1], after[1]))

    @staticmethod
    def _rating_stmts(change: RatingChange) -> list[tuple[str, tuple[Any, ...]]]:
        new, old, score = change.after, change.before, change.score
        won, lost, drew = int(score == 1.0), int(score == 0.0), int(score == 0.5)
        return [
            ("INSERT INTO ratings VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?) "
             "ON CONFLICT (account, game) DO UPDATE SET rating = excluded.rating, "
             "rd = excluded.rd, volatility = excluded.volatility, games = games + 1, "
             "wins = wins + excluded.wins, losses = losses + excluded.losses, "
             "draws = draws + excluded.draws",
             (change.account, change.game, new.rating, new.rd, new.volatility,
              won, lost, drew)),
            ("INSERT INTO rating_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             (change.match, change.seat, change.account, change.game, score, old.rating,
              old.rd, old.volatility, new.rating, new.rd, new.volatility)),
        ]

    def rating_changes(self, match_id: str) -> list[RatingChange]:
        """The rating changes a match caused, by seat (empty: unrated or aborted)."""
        rows = self._db.execute(
            "SELECT match, seat, account, game, score, rating_before, rd_before, "
            "volatility_before, rating_after, rd_after, volatility_after "
            "FROM rating_changes WHERE match = ? ORDER BY seat", (match_id,))
        return [self._change(row) for row in rows]

    @staticmethod
    def _change(row: tuple[Any, ...]) -> RatingChange:
        match, seat, account, game, score, r0, d0, v0, r1, d1, v1 = row
        return RatingChange(match, seat, account, game, score, Rating(r0, d0, v0),
                            Rating(r1, d1, v1))

    def leaderboard(self, game: str, limit: int, offset: int = 0) -> list[LeaderboardRow]:
        """Accounts with at least one rated match of ``game``, best rating first
        (ties: lower RD first, then by name)."""
        rows = self._db.execute(
            "SELECT a.name, a.bot, r.rating, r.rd, r.volatility, r.games, r.wins, r.losses, "
            "r.draws FROM ratings r JOIN accounts a ON a.id = r.account "
            "WHERE r.game = ? AND r.games > 0 ORDER BY r.rating DESC, r.rd, a.key "
            "LIMIT ? OFFSET ?", (game, limit, offset))
        return [LeaderboardRow(offset + i + 1, name, bool(bot),
                               Standing(Rating(rating, rd, vol), games, wins, losses, draws))
                for i, (name, bot, rating, rd, vol, games, wins, losses, draws)
                in enumerate(rows)]

    _MINE = ("WITH mine (match, seat) AS ("
             "SELECT st.match, st.seat FROM session_accounts sa "
             "JOIN seats st ON st.session = sa.session WHERE sa.account = :a "
             "UNION SELECT match, seat FROM rating_changes WHERE account = :a) ")

    def recent_matches(self, account_id: int, limit: int, offset: int = 0
                       ) -> tuple[list[RecentMatch], int]:
        """The finished matches an account sat in, newest first, and how many there are.

        Args:
            limit, offset: the page (``offset`` matches skipped, at most ``limit`` returned).
        """
        args = {"a": account_id, "limit": limit, "offset": offset}
        total = self._db.execute(
            self._MINE + "SELECT COUNT(*) FROM mine JOIN matches m ON m.id = mine.match "
            "WHERE m.status = 'finished'", args).fetchone()[0]
        rows = self._db.execute(
            self._MINE + "SELECT m.id, m.game, mine.seat, "
            "(SELECT o.name FROM seats o WHERE o.match = m.id AND o.seat != mine.seat), "
            "m.winner, m.reason, m.finished FROM mine JOIN matches m ON m.id = mine.match "
            "WHERE m.status = 'finished' ORDER BY m.finished DESC, m.id "
            "LIMIT :limit OFFSET :offset", args).fetchall()
        out = []
        for mid, game, seat, opponent, winner, reason, when in rows:
            change = next((c for c in self.rating_changes(mid) if c.seat == seat), None)
            out.append(RecentMatch(mid, game, seat, opponent, winner, reason, when, change))
        return out, int(total)


def _bindable(args: tuple[Any, ...]) -> bool:
    """A journal row's arguments (:data:`_JOURNAL_INSERT`) are of types SQLite binds
    without an adapter, None only where the column takes NULL, and its time a
    number that is not NaN (which SQLite would store as NULL)."""
    if len(args) != 10:
        return False
    match, seq, kind, seat, intent, reason, by, ts, digest, timers = args
    return (type(match) is str and type(seq) is int and type(kind) is str
            and type(seat) is int and (intent is None or type(intent) is str)
            and (reason is None or type(reason) is str) and type(by) is str
            and (type(ts) is float or type(ts) is int) and ts == ts
            and type(digest) is str and (timers is None or type(timers) is str))


def _timers_to_list(timers: tuple[SeatTimers, ...]) -> list[list[Any]]:
    return [[t.seat, t.turn, t.grace, t.timeouts] for t in timers]


def _timers_from(rows: list[list[Any]]) -> tuple[SeatTimers, ...]:
    """The timers as :func:`_timers_to_list` wrote them.

    Raises:
        ValueError, TypeError: not what it writes.
    """
    return tuple(SeatTimers(int(seat), None if turn is None else float(turn),
                            None if grace is None else float(grace), int(timeouts))
                 for seat, turn, grace, timeouts in rows)
