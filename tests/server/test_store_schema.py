"""The store's schema versions, its migration from the first schema, and the
account, token and rating tables (server/store.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from server.ratings import Rating, rate_match
from server.store import (
    SCHEMA_VERSION,
    JournalEntry,
    MatchRecord,
    SeatRecord,
    Store,
    StoreError,
    schema_version,
)

#: The CREATE statements of the store as the server wrote it before schema versions
#: (copied here on purpose: the module's own text may change, this file may not).
FIRST_SCHEMA = """
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

SEED = format(12345, "064x")


def _first_schema_store(path: Path) -> None:
    """A store as the first schema's server left it: one active, one finished match."""
    db = sqlite3.connect(path)
    db.executescript(FIRST_SCHEMA)
    db.execute("PRAGMA journal_mode=WAL")
    with db:
        db.execute("INSERT INTO sessions VALUES ('s1', 'h1', 'alice', 1.0, 2.0)")
        db.execute("INSERT INTO sessions VALUES ('s2', 'h2', 'bob', 1.0, 2.0)")
        db.execute("INSERT INTO matches VALUES ('m1', 'war', '{\"cap\":40}', ?, 'salt1', 0, "
                   "'forfeit', 'active', 1.0, NULL, NULL, NULL)", (SEED,))
        db.execute("INSERT INTO matches VALUES ('m2', 'war', '{}', ?, 'salt2', 30, "
                   "'forfeit', 'finished', 0.5, 0.9, 1, 'resign')", (SEED,))
        for match in ("m1", "m2"):
            db.execute("INSERT INTO seats VALUES (?, 0, 's1', 'alice', NULL, 0)", (match,))
            db.execute("INSERT INTO seats VALUES (?, 1, 's2', 'bob', NULL, 1)", (match,))
        db.execute("INSERT INTO watchers VALUES ('m1', 's3')")
        db.execute("INSERT INTO journal VALUES ('m1', 1, 'intent', 0, '{\"type\":\"flip\"}', "
                   "NULL, 'seat', 1.5, 'd1')")
        db.execute("INSERT INTO journal VALUES ('m2', 1, 'resign', 0, NULL, NULL, 'seat', "
                   "0.9, 'd2')")
    db.close()


def test_a_store_of_the_first_schema_opens_and_keeps_its_matches(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _first_schema_store(path)
    store = Store(path)
    assert schema_version(store._db) == SCHEMA_VERSION
    assert [m.id for m in store.unfinished_matches()] == ["m1"]
    active = store.load_match("m1")
    assert active is not None and active.seed == 12345 and active.options == {"cap": 40}
    assert active.seats == [SeatRecord(0, "s1", "alice"), SeatRecord(1, "s2", "bob", None, True)]
    assert active.watchers == ["s3"]
    assert [e.intent for e in store.journal("m1")] == [{"type": "flip"}]
    done = store.load_match("m2")
    assert done is not None and (done.status, done.winner, done.reason) == ("finished", 1, "resign")
    assert store.find_session("h1").name == "alice"
    # the new tables work on the migrated file, and today's methods still write to it
    store.create_session("s4", "h4", "carol", 3.0)
    account = store.create_account("alice", "alice", "$argon2id$x", 3.0)
    assert account is not None and store.find_account("alice") == account
    store.close()
    store = Store(path)  # opening again migrates nothing and loses nothing
    assert schema_version(store._db) == SCHEMA_VERSION
    assert store.find_session("h4").name == "carol" and store.find_account("alice") == account
    assert [m.id for m in store.unfinished_matches()] == ["m1"]
    store.close()


def test_a_new_store_has_the_current_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.db")
    assert schema_version(store._db) == SCHEMA_VERSION
    tables = {r[0] for r in store._db.execute("SELECT name FROM sqlite_master "
                                              "WHERE type = 'table'")}
    assert {"accounts", "api_tokens", "ratings", "rating_changes", "journal"} <= tables
    store.close()


def test_a_store_from_a_newer_server_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="upgrade"):
        Store(path)


def test_accounts_and_api_tokens() -> None:
    store = Store(":memory:")
    alice = store.create_account("alice", "Alice", "hash1", 1.0)
    assert alice is not None and alice.name == "Alice" and not alice.bot
    assert store.create_account("alice", "ALICE", "hash2", 2.0) is None
    store.set_password_hash(alice.id, "hash3")
    store.set_account_bot(alice.id, True)
    again = store.account(alice.id)
    assert again is not None and again.password_hash == "hash3" and again.bot
    store.add_api_token("t1", alice.id, "th1", "laptop", 5.0)
    store.add_api_token("t2", alice.id, "th2", "ci", 6.0)
    assert [t.id for t in store.api_tokens(alice.id)] == ["t1", "t2"]
    assert store.find_api_token("th2").label == "ci"
    store.touch_api_token("t2", 7.0)
    assert store.find_api_token("th2").last_used == 7.0
    store.create_session("s2", "h2", "Alice", 1.0)
    store.link_session("s2", alice.id, "t2")  # logged in with the token t2
    assert store.revoke_api_token(alice.id + 1, "t2") is None
    assert store.revoke_api_token(alice.id, "t2") == ["s2"]
    assert store.find_api_token("th2") is None and store.revoke_api_token(alice.id, "t2") is None
    assert store.find_session("h2") is None  # nobody can resume it now
    store.create_session("s1", "h1", "Alice", 1.0)
    store.link_session("s1", alice.id)
    assert store.session_account("s1") == alice.id and store.session_account("s9") is None
    store.revoke_session("s1")
    assert store.find_session("h1") is None and store.session_account("s1") == alice.id


def _rated_match(store: Store, match_id: str, sessions: tuple[str, str],
                 names: tuple[str, str], created: float) -> None:
    store.create_match(MatchRecord(match_id, "war", {}, 7, "salt", 0, "forfeit", "active",
                                   created, seats=[SeatRecord(0, sessions[0], names[0]),
                                                   SeatRecord(1, sessions[1], names[1])],
                                   rated=True))


def test_a_rated_finish_stores_both_ratings_with_the_journal() -> None:
    store = Store(":memory:")
    a = store.create_account("alice", "alice", "h", 0.0)
    b = store.create_account("bob", "bob", "h", 0.0)
    assert a is not None and b is not None
    for session, account in (("sa", a.id), ("sb", b.id)):
        store.create_session(session, "h" + session, "x", 0.0)
        store.link_session(session, account)
    _rated_match(store, "m1", ("sa", "sb"), ("alice", "bob"), 1.0)
    assert store.is_rated("m1") and store.load_match("m1").rated
    assert store.standing(a.id, "war") == store.standing(b.id, "war")
    store.append("m1", JournalEntry(1, "intent", 0, {"type": "flip"}))
    changes = store.rate("m1", "war", (a.id, b.id), 0)
    store.append("m1", JournalEntry(2, "resign", 1), (2.0, 0, "resign"), changes)
    want_a, want_b = rate_match(Rating(), Rating(), 0)
    assert (changes[0].after, changes[1].after) == (want_a, want_b)
    assert store.standing(a.id, "war").rating == want_a
    assert store.standing(b.id, "war").losses == 1 and store.standing(b.id, "war").games == 1
    assert store.load_match("m1").status == "finished"
    assert store.rating_changes("m1") == list(changes)

    # a second match: both from their ratings after the first; a duplicate seq stores nothing
    _rated_match(store, "m2", ("sb", "sa"), ("bob", "alice"), 3.0)
    with pytest.raises(StoreError):
        store.append("m1", JournalEntry(2, "resign", 1), (4.0, 0, "resign"),
                     store.rate("m1", "war", (b.id, a.id), 0))
    assert store.standing(a.id, "war").games == 1
    changes = store.rate("m2", "war", (b.id, a.id), None)
    assert changes[0].before == want_b and changes[1].before == want_a
    store.append("m2", JournalEntry(1, "resign", 0), (4.0, None, "draw"), changes)
    want_b2, want_a2 = rate_match(want_b, want_a, None)
    assert store.standing(a.id, "war").rating == want_a2
    assert store.standing(b.id, "war").rating == want_b2
    assert store.standing(a.id, "war").draws == 1

    # an aborted match finishes but rates nobody
    _rated_match(store, "m3", ("sa", "sb"), ("alice", "bob"), 5.0)
    store.append("m3", JournalEntry(1, "resign", 0), (6.0, 1, "resign"))
    assert store.standing(a.id, "war").games == 2 and store.rating_changes("m3") == []

    board = store.leaderboard("war", 10)
    assert [(r.rank, r.name) for r in board] == [(1, "alice"), (2, "bob")]
    assert store.leaderboard("war", 10, offset=1)[0].rank == 2
    assert store.leaderboard("datastructures", 10) == []

    recent, total = store.recent_matches(a.id, 2)
    assert total == 3 and [r.match for r in recent] == ["m3", "m2"]
    assert recent[0].change is None and recent[0].result == "loss"
    assert recent[1].opponent == "bob" and recent[1].result == "draw"
    assert recent[1].change is not None and recent[1].change.after == want_a2
    older, _ = store.recent_matches(a.id, 2, offset=2)
    assert [(r.match, r.result, r.seat) for r in older] == [("m1", "win", 0)]
    assert older[0].change.delta == pytest.approx(want_a.rating - 1500)
