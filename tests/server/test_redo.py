"""The store's redo log (server/redo.py, ``Store(..., redo_log=True)``): a write is in
the log before it returns, a crash loses none, a torn tail is dropped, replaying is
idempotent, a failing write leaves nothing, and other processes read what is folded."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from server import redo
from server.store import FOLD_RECORDS, JournalEntry, MatchRecord, Store, StoreError
from tests.server.helpers import TestClient, free_port
from tests.server.test_process import kill_if_running, start_process

ROOT = Path(__file__).resolve().parents[2]


def _match(mid: str = "m1") -> MatchRecord:
    return MatchRecord(mid, "war", {}, 1, "ab" * 16, 0, "forfeit", "active", 1.0)


def _entry(seq: int) -> JournalEntry:
    return JournalEntry(seq, "intent", seq % 2, {"type": "flip"}, None, "seat", float(seq),
                        "cd" * 32)


def _writer(db: Path) -> Store:
    """The server's store on ``db`` (the lock, the redo log) with match m1 and row 1."""
    store = Store(db, exclusive=True)
    store.create_match(_match())
    store.append("m1", _entry(1))
    return store


def _seqs(db: Path, mid: str = "m1") -> list[int]:
    reader = Store(db)
    try:
        return [e.seq for e in reader.journal(mid)]
    finally:
        reader.close()


def _killed_writer(db: Path, rows: int, *, fold_after: int | None = None) -> None:
    """A process that writes ``rows`` journal rows through the redo log (folding
    after ``fold_after`` of them) and is SIGKILLed right after the last returns."""
    script = textwrap.dedent(f"""
        import os, signal
        from server.store import JournalEntry, MatchRecord, Store
        store = Store({str(db)!r}, exclusive=True)
        store.create_match(MatchRecord("m1", "war", {{}}, 1, "ab" * 16, 0, "forfeit",
                                       "active", 1.0))
        for seq in range(1, {rows} + 1):
            store.append("m1", JournalEntry(seq, "intent", seq % 2, {{"type": "flip"}},
                                            None, "seat", float(seq), "cd" * 32))
            if seq == {fold_after!r}:
                store.fold()
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=60)
    assert done.returncode == -signal.SIGKILL


def test_a_write_is_in_the_log_before_it_returns_and_survives_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    _killed_writer(db, 30, fold_after=10)
    log_path = redo.redo_path(db)
    records = redo.read(log_path).records
    # the fold committed the match and rows 1-10 and emptied the log: 11-30 are in it
    assert [r.position for r in records] == list(range(12, 32))
    assert _seqs(db) == list(range(1, 31))   # a reader with the lock free replays them
    assert log_path.stat().st_size == 0
    assert _seqs(db) == list(range(1, 31))   # and only once


def test_a_torn_tail_is_dropped_and_the_rest_replayed(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "t.db"
    _killed_writer(db, 5)
    log_path = redo.redo_path(db)
    whole = log_path.read_bytes()
    torn = redo.encode(7, [("INSERT INTO journal (match, seq) VALUES (?, ?)", ["m1", 6])])
    log_path.write_bytes(whole + torn[:-3])
    caplog.set_level(logging.WARNING, "cardserver.store")
    store = Store(db, exclusive=True)
    try:
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3, 4, 5]
        store.append("m1", _entry(6))   # goes on after the torn record's position
    finally:
        store.close()
    assert "a torn record" in caplog.text
    assert _seqs(db) == [1, 2, 3, 4, 5, 6]


def test_a_damaged_record_ends_the_log(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    _killed_writer(db, 5)
    log_path = redo.redo_path(db)
    data = bytearray(log_path.read_bytes())
    offsets = []
    offset = 0
    while offset < len(data):
        length, _ = redo.HEADER.unpack_from(data, offset)
        offsets.append(offset)
        offset += redo.HEADER.size + length
    data[offsets[3] + redo.HEADER.size + 2] ^= 0xFF   # the 4th record's payload
    log_path.write_bytes(bytes(data))
    contents = redo.read(log_path)
    assert len(contents.records) == 3 and contents.torn
    assert _seqs(db) == [1, 2]   # records 1 (the match), 2 and 3 (rows 1 and 2)


def test_replaying_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    _killed_writer(db, 8)
    log_path = redo.redo_path(db)
    saved = log_path.read_bytes()
    assert _seqs(db) == list(range(1, 9))
    # a crash after the replay's commit and before the log was emptied: the same
    # records again, every position folded already, so none runs twice
    log_path.write_bytes(saved)
    assert _seqs(db) == list(range(1, 9))
    store = Store(db, exclusive=True)
    try:
        store.append("m1", _entry(9))
    finally:
        store.close()
    assert _seqs(db) == list(range(1, 10)) and not log_path.exists()


def test_a_gap_in_the_positions_stops_the_replay(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                 allow_error_logs: None) -> None:
    db = tmp_path / "g.db"
    _killed_writer(db, 4)
    log_path = redo.redo_path(db)
    records = redo.read(log_path).records
    kept = [r for r in records if r.position != 3]   # row 2's record lost
    log_path.write_bytes(b"".join(redo.encode(r.position, r.statements) for r in kept))
    caplog.set_level(logging.ERROR, "cardserver.store")
    assert _seqs(db) == [1]   # a prefix: never row 3 without row 2
    assert "record 4 follows 2" in caplog.text


def test_a_failing_statement_inside_a_transaction_stores_and_logs_nothing(
        tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    store = _writer(db)
    try:
        size = store._redo.size
        with pytest.raises(StoreError), store.transaction():
            store.append("m1", _entry(2))
            store.append("m1", _entry(1))   # a duplicate seq: the whole transaction fails
        assert [e.seq for e in store.journal("m1")] == [1]
        assert store._redo.size == size
        with pytest.raises(StoreError):     # one statement alone, no savepoint
            store.append("m1", _entry(1))
        assert store._redo.size == size
        store.append("m1", _entry(2))
        assert [e.seq for e in store.journal("m1")] == [1, 2]
    finally:
        store.close()
    assert _seqs(db) == [1, 2]


def test_a_transaction_with_reads_is_logged_and_replayed(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    script = textwrap.dedent(f"""
        import os, signal
        from server.store import Store
        store = Store({str(db)!r}, exclusive=True)
        a = store.create_account("alice", "Alice", "hash", 1.0)
        assert store.create_account("alice", "Alice", "hash", 2.0) is None
        b = store.create_account("bob", "Bob", "hash", 3.0)
        store.add_api_token("t1", b.id, "th", "ci", 4.0)
        store.link_session("s1", b.id, "t1")
        store.create_session("s1", "tok", "Bob", 5.0)
        assert store.revoke_api_token(b.id, "t1") == ["s1"]
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                          timeout=60).returncode == -signal.SIGKILL
    store = Store(db, exclusive=True)
    try:
        assert [store.find_account(k).id for k in ("alice", "bob")] == [1, 2]
        assert store.api_tokens(2) == [] and store.find_session("tok") is None
    finally:
        store.close()


def test_a_log_that_cannot_be_written_stores_nothing(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "w.db"
    store = _writer(db)
    try:

        def full(fd: int, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(redo.os, "write", full)
        with pytest.raises(StoreError, match="redo log"):
            store.append("m1", _entry(2))
        with pytest.raises(StoreError, match="redo log"), store.transaction():
            store.append("m1", _entry(2))
            store.append("m1", _entry(3))
        monkeypatch.undo()
        assert [e.seq for e in store.journal("m1")] == [1]   # row 1 applied again
        store.append("m1", _entry(2))
    finally:
        store.close()
    assert _seqs(db) == [1, 2]


def test_a_transaction_sqlite_rolled_back_is_applied_again(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store(db, exclusive=True)
    try:
        store.create_match(_match())
        for seq in (1, 2, 3):
            store.append("m1", _entry(seq))
        store._db.rollback()   # as SQLite does on a full disk or an I/O error
        store._after_failure()
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3]
    finally:
        store.close()
    assert _seqs(db) == [1, 2, 3]


def test_an_outside_reader_sees_what_is_folded(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    store = _writer(db)
    try:
        store.fold()
        store.append("m1", _entry(2))
        assert store.unfolded == 1
        assert _seqs(db) == [1]   # the lock is held: the reader reads what is folded
        assert [e.seq for e in store.journal("m1")] == [1, 2]   # the server sees all
        store.fold()
        assert store.unfolded == 0 and redo.redo_path(db).stat().st_size == 0
        assert _seqs(db) == [1, 2]
    finally:
        store.close()


def test_a_finished_match_is_folded_at_once(tmp_path: Path) -> None:
    db = tmp_path / "fin.db"
    store = _writer(db)
    try:
        assert store.unfolded == 2
        with store.transaction():   # as the group commit writes it
            store.append("m1", _entry(2), finished=(3.0, 0, "all_cards"))
        assert store.unfolded == 0
        reader = Store(db)   # `cardserver replay` while the server runs
        try:
            assert reader.load_match("m1").status == "finished"
            assert [e.seq for e in reader.journal("m1")] == [1, 2]
        finally:
            reader.close()
    finally:
        store.close()


def test_a_full_log_folds_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "n.db", exclusive=True)
    try:
        store.create_match(_match())
        for seq in range(1, FOLD_RECORDS + 1):
            store.append("m1", _entry(seq))
        assert store.unfolded == 1   # the match and rows 1..FOLD_RECORDS - 1 folded
    finally:
        store.close()


def test_off_writes_a_commit_each_and_still_replays_a_log(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    _killed_writer(db, 3)
    store = Store(db, exclusive=True, redo_log=False)
    try:
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3]
        assert not redo.redo_path(db).exists()
        store.append("m1", _entry(4))
        assert store.unfolded == 0 and not store._db.in_transaction
    finally:
        store.close()
    assert _seqs(db) == [1, 2, 3, 4]


async def test_a_server_killed_right_after_ok_replays_its_intents(tmp_path: Path) -> None:
    db, log, port = tmp_path / "srv.db", tmp_path / "server.log", free_port()
    # folds an hour apart: every accepted intent is in the log alone when it is killed
    proc = await start_process(db, port, log, "--journal-fold", "3600")
    try:
        alice, bob = [await TestClient.welcomed(port, name) for name in ("alice", "bob")]
        mid = (await alice.expect_ok("create", game="war"))["match"]
        await bob.expect_ok("join", match=mid)
        clients = {0: alice, 1: bob}
        snaps: dict[int, Any] = {s: await c.snapshot(mid, lambda m: m["status"] == "active")
                                 for s, c in clients.items()}
        acked = 0
        for _ in range(20):
            seat = next(s for s, snap in snaps.items() if snap["legal"])
            reply = await clients[seat].request("intent", match=mid, seq=snaps[seat]["seq"],
                                                intent=snaps[seat]["legal"][0])
            assert reply["type"] == "ok", reply
            acked = reply["seq"]
            for s, c in clients.items():
                snaps[s] = await c.snapshot(mid, lambda m, n=acked: m["seq"] >= n)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        for c in clients.values():
            await c.aclose()
        assert len(redo.read(redo.redo_path(db)).records) >= 20
        proc = await start_process(db, port, log)
        again = await TestClient.welcomed(port, "alice", alice.welcome["token"])
        after = await again.snapshot(mid)
        assert after["seq"] == acked and after["view"] == snaps[0]["view"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        kill_if_running(proc)
    assert not redo.redo_path(db).exists()   # a clean stop folds and removes it
    assert len(_seqs(db, mid)) == acked
    assert "replayed" in log.read_text()


def test_the_redo_log_is_private(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db", exclusive=True)
    try:
        store.create_match(_match())
        assert os.stat(redo.redo_path(tmp_path / "p.db")).st_mode & 0o777 == 0o600
    finally:
        store.close()


def test_a_statement_the_log_cannot_encode_is_undone(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    store = _writer(db)
    try:
        # sqlite3 stores a date as text (its default adapter); msgpack has no form for it
        with pytest.raises(StoreError, match="redo log"):
            store._write([("INSERT INTO watchers VALUES (?, ?)", ("m1", date(2026, 1, 1)))])
        assert store._db.execute("SELECT count(*) FROM watchers").fetchone()[0] == 0
        store.append("m1", _entry(2))
    finally:
        store.close()
    assert _seqs(db) == [1, 2]


def _rows(store: Store, mid: str = "m1") -> list[tuple[Any, ...]]:
    """Every column of ``mid``'s rows as SQLite holds them, in insertion order (read
    after ``journal()``, which inserts any deferred ones)."""
    store.journal(mid)
    return store._db.execute("SELECT * FROM journal WHERE match = ? ORDER BY rowid",
                             (mid,)).fetchall()


def test_journal_rows_are_logged_at_once_and_inserted_before_anything_reads(
        tmp_path: Path) -> None:
    store = _writer(tmp_path / "d.db")
    try:
        with store.transaction():   # a group commit's batch: one record
            store.append("m1", _entry(2))
            store.append("m1", _entry(3))
        assert store.unfolded == 3 and len(store._deferred) == 3   # rows 1-3 wait
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3]   # a read inserts them
        assert store._deferred == []
        store.append("m1", _entry(4))
        store.set_watcher("m1", "s1", True)   # any other write inserts them first
        assert store._deferred == [] and [r[1] for r in _rows(store)] == [1, 2, 3, 4]
    finally:
        store.close()
    assert _seqs(tmp_path / "d.db") == [1, 2, 3, 4]


def test_waiting_rows_can_be_inserted_a_slice_at_a_time(tmp_path: Path) -> None:
    store = _writer(tmp_path / "s.db")
    try:
        store.append("m1", _entry(2))
        store.append("m1", _entry(3))
        assert store.insert_deferred(2) is True and len(store._deferred) == 1
        assert [r[1] for r in store._db.execute("SELECT * FROM journal")] == [1, 2]
        assert store.insert_deferred(2) is False and store._deferred == []
        store.fold()
    finally:
        store.close()
    assert _seqs(tmp_path / "s.db") == [1, 2, 3]


def test_rows_sqlite_might_refuse_are_run_at_once_as_before(tmp_path: Path) -> None:
    store = _writer(tmp_path / "n.db")
    try:
        store.append("m1", _entry(3))
        store.append("m1", _entry(2))   # below the highest stored seq: run at once (a gap)
        assert store._deferred == []
        with pytest.raises(StoreError):   # NaN: SQLite stores NULL, the column refuses it
            store.append("m1", JournalEntry(4, "intent", 0, None, None, "seat",
                                            float("nan"), "cd" * 32))
        with pytest.raises(StoreError):   # a duplicate, as before
            store.append("m1", _entry(3))
        size = store._redo.size
        store.append("m1", _entry(4))
        assert store._deferred and store._redo.size > size
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3, 4]
    finally:
        store.close()
    assert sorted(_seqs(tmp_path / "n.db")) == [1, 2, 3, 4]


def test_deferred_rows_hold_what_rows_run_at_once_hold(tmp_path: Path) -> None:
    def play(store: Store) -> list[tuple[Any, ...]]:
        for mid in ("m1", "m2"):
            store.create_match(_match(mid))
        for seq in range(1, 9):
            with store.transaction():
                store.append("m1", _entry(seq))
                store.append("m2", _entry(seq))
                if seq == 5:
                    store.set_timers("m2", seq, ())
        store.append("m1", _entry(9), finished=(9.0, 0, "all_cards"))
        store.append("m2", _entry(9))
        return _rows(store, "m1") + _rows(store, "m2")

    logged, plain = Store(tmp_path / "l.db", exclusive=True), Store(tmp_path / "p.db")
    try:
        assert play(logged) == play(plain)
    finally:
        logged.close()
        plain.close()


class _FailingMany:
    """A cursor whose next ``executemany`` fails with ``error`` (as SQLite does on an
    I/O error, or an interrupt) after one row got in."""

    def __init__(self, cursor: Any, error: BaseException) -> None:
        self.cursor, self.error = cursor, error

    def executemany(self, sql: str, rows: Any) -> Any:
        if self.error is not None:
            error, self.error = self.error, None
            self.cursor.executemany(sql, list(rows)[:1])
            raise error
        return self.cursor.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cursor, name)


def test_deferred_rows_sqlite_fails_on_are_applied_again_from_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = _writer(tmp_path / "i.db")
    try:
        store.append("m1", _entry(2))
        store._cursor = _FailingMany(store._cursor, sqlite3.OperationalError("disk I/O"))
        with caplog.at_level(logging.WARNING, "cardserver.store"):
            assert [e.seq for e in store.journal("m1")] == [1, 2]
        assert "applying the redo log again" in caplog.text
        store.append("m1", _entry(3))
        store.append("m1", _entry(4))
        store._cursor = _FailingMany(store._cursor.cursor, KeyboardInterrupt())
        with pytest.raises(KeyboardInterrupt):
            store.fold()
        assert [e.seq for e in store.journal("m1")] == [1, 2, 3, 4]   # none half in
    finally:
        store.close()
    assert _seqs(tmp_path / "i.db") == [1, 2, 3, 4]
