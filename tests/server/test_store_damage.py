"""A damaged store does not stop the server: the damaged match is skipped and
reported, the other matches are restored and played to their end."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from engine.registry import get_game
from server import tokens
from server.store import DamagedMatch, JournalEntry, MatchRecord, SeatRecord, Store
from tests.server.helpers import TestClient, play_to_end

GOOD, BAD = "mgood", "mbad"
OPTIONS = get_game("war").normalize_options({"cap": 30})


def _store_war(store: Store, match_id: str, rows: int, seats: tuple[str, str],
               options: dict | None = None) -> None:
    """An active War match between two stored sessions, up to ``rows`` flips played."""
    store.create_match(MatchRecord(match_id, "war", options or OPTIONS, tokens.new_seed(),
                                   tokens.new_salt(), 0, "forfeit", "active", 1.0,
                                   seats=[SeatRecord(i, sid, sid) for i, sid in enumerate(seats)]))
    rec = store.load_match(match_id)
    assert rec is not None
    state = get_game("war").new_state(rec.seed, rec.options)
    for seq in range(1, rows + 1):
        if state.outcome() is not None:
            break
        seat = state.to_move()[0]
        state.apply(seat, {"type": "flip"})
        store.append(match_id, JournalEntry(seq, "intent", seat, {"type": "flip"},
                                            digest=state.digest()))


def _prepare(path: Path, bad_rows: int = 4) -> dict[str, str]:
    """A store holding the bad match (its rows first) and the good one; the tokens of
    the good match's two players."""
    store = Store(path)
    _store_war(store, BAD, bad_rows, ("sx", "sy"), get_game("war").normalize_options({}))
    found = {}
    for sid in ("sa", "sb"):
        found[sid] = tokens.new_token()
        store.create_session(sid, tokens.hash_token(found[sid]), sid, 1e12)
    _store_war(store, GOOD, 2, ("sa", "sb"))
    store.close()
    return found


def _damage_a_page(path: Path) -> None:
    """Overwrite a page of the journal table that holds only the bad match's rows."""
    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    leaves = [p for (p,) in db.execute(
        "SELECT pageno FROM dbstat WHERE name = 'journal' AND pagetype = 'leaf' ORDER BY pageno")]
    db.close()
    assert len(leaves) >= 3, "the bad match's journal should span several pages"
    with open(path, "r+b") as f:
        f.seek((leaves[1] - 1) * page_size)
        f.write(b"\xff" * page_size)


def _damage(path: Path, how: str) -> None:
    if how == "page":
        _damage_a_page(path)
        return
    db = sqlite3.connect(path)
    sql = {
        "journal_not_json": "UPDATE journal SET intent = '{flip' WHERE match = ? AND seq = 2",
        "seed_not_hex": "UPDATE matches SET seed = 'not-hex' WHERE id = ?",
        "seat_5": "UPDATE seats SET seat = 5 WHERE match = ? AND seat = 1",
    }[how]
    db.execute(sql, (BAD,))
    db.commit()
    db.close()


@pytest.mark.parametrize("how", ["journal_not_json", "seed_not_hex", "seat_5", "page"])
async def test_a_damaged_match_is_skipped_and_the_rest_serve(
        how, tmp_path: Path, start_server, connect, caplog, allow_error_logs) -> None:
    db = tmp_path / "test.db"
    player_tokens = _prepare(db, bad_rows=400 if how == "page" else 4)
    _damage(db, how)
    if how == "page":  # the damage is where the test meant it to be
        store = Store(db)
        with pytest.raises(DamagedMatch):
            store.journal(BAD)
        assert len(store.journal(GOOD)) == 2
        store.close()

    server = await start_server()
    assert set(server.lobby.matches) == {GOOD}
    assert BAD in server.lobby.damaged
    assert any(BAD in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)

    # The server serves: a newcomer is listed the good match, its players resume it
    # and play it to the end.
    newcomer = await connect(server, "carol")
    listed = (await newcomer.expect_ok("matches"))["matches"]
    assert [m["match"] for m in listed] == [GOOD]
    clients = {}
    for seat, sid in enumerate(("sa", "sb")):
        client = clients[seat] = await TestClient.connect(server.port)
        assert (await client.hello(sid, resume=player_tokens[sid]))["resumed"] is True
    final = await play_to_end(clients, GOOD)
    assert all(s["status"] == "finished" and s["result"] for s in final.values())


async def test_an_empty_file_is_a_warning(tmp_path: Path, start_server, connect, caplog) -> None:
    (tmp_path / "test.db").write_bytes(b"")
    server = await start_server()
    assert any("0-byte" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)
    client = await connect(server, "alice")
    assert (await client.expect_ok("matches"))["matches"] == []


async def test_a_damaged_status_index_falls_back_to_the_table(
        tmp_path: Path, start_server, allow_error_logs) -> None:
    db = tmp_path / "test.db"
    _prepare(db)
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (page,) = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'matches_status'"
                           ).fetchone()
    conn.close()
    with open(db, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\xff" * page_size)
    server = await start_server()
    assert set(server.lobby.matches) == {GOOD, BAD} and not server.lobby.damaged
