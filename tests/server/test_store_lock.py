"""The running server's hold on its store's file (``--store-lock``): by default
(shared) the command-line readers read it while the server runs; with
``--store-lock exclusive`` the server keeps SQLite's exclusive lock for as long as it
runs (no file locks per commit), and the readers refuse its store with a message
that says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.cli import main as cardserver
from server.store import JournalEntry, MatchRecord, Store, StoreError


async def test_the_readers_refuse_a_running_servers_store_and_say_why(
        start_server: Any, connect: Any, capsys: pytest.CaptureFixture[str]) -> None:
    server = await start_server(store_lock="exclusive")
    alice = await connect(server, "alice")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    db = str(server.config.db)
    assert server.store._db.execute("PRAGMA locking_mode").fetchone()[0] == "exclusive"
    capsys.readouterr()
    assert cardserver(["replay", mid, "--db", db]) == 1
    assert cardserver(["leaderboard", "war", "--db", db]) == 1
    err = capsys.readouterr().err
    assert err.count("a running cardserver holds it") == 2 and "--store-lock shared" in err
    # the server itself goes on storing
    assert (await alice.expect_ok("leave", match=mid))["type"] == "ok"


async def test_a_shared_store_is_read_while_the_server_runs(
        start_server: Any, connect: Any, capsys: pytest.CaptureFixture[str]) -> None:
    server = await start_server()   # shared, the default
    assert server.store._db.execute("PRAGMA locking_mode").fetchone()[0] == "normal"
    capsys.readouterr()
    assert cardserver(["leaderboard", "war", "--db", str(server.config.db)]) == 0
    assert "Leaderboard: war" in capsys.readouterr().out


def test_a_held_file_is_released_on_close_and_keeps_every_commit(tmp_path: Path) -> None:
    db = tmp_path / "held.db"
    store = Store(db, exclusive=True, hold_file=True)
    store.create_match(MatchRecord("m1", "war", {}, 1, "ab" * 16, 0, "forfeit", "active", 1.0))
    for seq in (1, 2, 3):
        store.append("m1", JournalEntry(seq, "intent", seq % 2, {"type": "flip"}, None, "seat",
                                        float(seq), "cd" * 32))
    with pytest.raises(StoreError, match="a running cardserver holds it"):
        Store(db)
    store.close()
    reader = Store(db)
    try:
        assert [e.seq for e in reader.journal("m1")] == [1, 2, 3]
    finally:
        reader.close()


def test_the_store_checkpoints_every_checkpoint_pages(tmp_path: Path) -> None:
    from server.store import CHECKPOINT_PAGES

    store = Store(tmp_path / "ck.db", exclusive=True, hold_file=True)
    try:
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == CHECKPOINT_PAGES
    finally:
        store.close()


def test_a_reader_of_a_running_servers_store_waits_the_whole_busy_timeout_after_opening(
        tmp_path: Path) -> None:
    """The short wait is for the opening statements only (a server that keeps the
    file to itself is refused at once, not after ~5 s of waiting)."""
    from server.store import BUSY_TIMEOUT_MS, _lock_is_held, lock_path

    db = tmp_path / "served.db"
    assert not _lock_is_held(lock_path(db))
    server = Store(db, exclusive=True)
    try:
        assert _lock_is_held(lock_path(db))
        reader = Store(db)
        try:
            assert reader._db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        finally:
            reader.close()
    finally:
        server.close()
    assert not _lock_is_held(lock_path(db))
