"""Matches journaled before the documented random stream (#12) still replay exactly.

``data/store_before_12.sql`` is the SQL dump of a store written by a cardserver
of the version before #12 (Python's Mersenne Twister as the match generator):
a finished War match against a server bot, a finished Data Structures match,
and a Data Structures match left active after a few moves. Every journal row
carries the state digest the old server computed live.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from server.replay import public_record, replay_steps
from server.store import Store

DUMP = Path(__file__).resolve().parent / "data" / "store_before_12.sql"
FINISHED = {"mef13426091": "war", "m6e054b5dca": "datastructures"}
ACTIVE = "m7382a7d666"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """A store file holding the dump, as the old server left it."""
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(DUMP.read_text())
    con.close()
    return path


def test_every_old_journal_replays_with_its_recorded_digests(old_store: Path) -> None:
    store = Store(old_store)
    try:
        for match_id in [*FINISHED, ACTIVE]:
            rec = store.load_match(match_id)
            assert rec is not None
            entries = store.journal(match_id)
            assert entries and all(entry.digest for entry in entries)
            steps = list(replay_steps(rec, entries, check_digest=True))
            assert len(steps) == len(entries)
            if match_id in FINISHED:
                state = steps[-1][0]
                assert state.outcome() is not None
                assert (state.outcome().winner, state.outcome().reason) == (rec.winner,
                                                                            rec.reason)
    finally:
        store.close()


def test_old_finished_matches_still_reveal_a_matching_commitment(old_store: Path) -> None:
    store = Store(old_store)
    try:
        for match_id, game in FINISHED.items():
            rec = store.load_match(match_id)
            assert rec is not None and rec.game == game
            record = public_record(rec, store.journal(match_id))
            assert record["verified"] is True
    finally:
        store.close()


def test_old_files_get_the_stream_column_and_their_matches_the_old_generator(
        old_store: Path) -> None:
    con = sqlite3.connect(old_store)
    assert "stream" not in {row[1] for row in con.execute("PRAGMA table_info(matches)")}
    con.close()
    store = Store(old_store)
    try:
        for match_id in [*FINISHED, ACTIVE]:
            rec = store.load_match(match_id)
            assert rec is not None and rec.stream == "mt19937" and rec.client_seeds == []
    finally:
        store.close()


def test_old_finished_matches_verify_in_python_with_the_old_generator(old_store: Path) -> None:
    from server.verify import verify_record

    store = Store(old_store)
    try:
        for match_id in FINISHED:
            rec = store.load_match(match_id)
            assert rec is not None
            result = verify_record(public_record(rec, store.journal(match_id)))
            assert result.ok, result.failure
            assert any("stream mt19937" in line for line in result.checked)
    finally:
        store.close()


def test_a_version_2_file_gets_the_stream_columns(tmp_path: Path) -> None:
    from server.store import MIGRATIONS, SCHEMA, SCHEMA_VERSION, schema_version

    path = tmp_path / "v2.db"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA + MIGRATIONS[2] + "PRAGMA user_version = 2;")
    con.execute("INSERT INTO matches VALUES ('m1', 'war', '{}', ?, 'ab', 0, 'forfeit', "
                "'waiting', 1.0, NULL, NULL, NULL)", ("0" * 64,))
    con.commit()
    con.close()
    store = Store(path)
    try:
        assert schema_version(store._db) == SCHEMA_VERSION >= 3
        rec = store.load_match("m1")
        assert rec is not None and rec.stream == "mt19937"
    finally:
        store.close()
