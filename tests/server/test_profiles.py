"""Profiles and leaderboards on the wire (server/profiles.py)."""

from __future__ import annotations

import pytest

from server.names import name_key
from server.profiles import board_text, leaderboard, profile
from server.ratings import Rating, rate_match
from server.store import JournalEntry, MatchRecord, SeatRecord, Store


def _store_with_one_rated_match() -> Store:
    store = Store(":memory:")
    ids = []
    for name, bot in (("Alice", False), ("robo", True)):
        account = store.create_account(name_key(name), name, "h", 0.0, bot)
        assert account is not None
        ids.append(account.id)
        store.create_session("s" + name, "h" + name, name, 0.0)
        store.link_session("s" + name, account.id)
    store.create_match(MatchRecord("m1", "war", {}, 1, "salt", 0, "forfeit", "active", 1.0,
                                   seats=[SeatRecord(0, "sAlice", "Alice"),
                                          SeatRecord(1, "srobo", "robo")], rated=True))
    store.append("m1", JournalEntry(1, "resign", 1), (2.0, 0, "resign"),
                 store.rate("m1", "war", (ids[0], ids[1]), 0))
    return store


def test_profile_of_an_account() -> None:
    store = _store_with_one_rated_match()
    won, _ = rate_match(Rating(), Rating(), 0)
    got = profile(store, "alice", ["war", "datastructures"])
    assert got["name"] == "Alice" and got["registered"] and not got["bot"]
    assert got["ratings"]["datastructures"] == {
        "rating": 1500.0, "rd": 350.0, "volatility": 0.06, "games": 0, "wins": 0,
        "losses": 0, "draws": 0, "provisional": True}
    war = got["ratings"]["war"]
    assert (war["rating"], war["rd"], war["games"], war["wins"]) == (won.rating, won.rd, 1, 1)
    assert got["recent_total"] == 1
    (recent,) = got["recent"]
    assert recent["match"] == "m1" and recent["opponent"] == "robo"
    assert recent["result"] == "win" and recent["rated"]
    assert recent["rating_change"] == pytest.approx(won.rating - 1500)
    assert profile(store, "alice", ["war"], limit=1, offset=1)["recent"] == []
    assert profile(store, "robo", ["war"])["bot"]


def test_profile_of_a_guest() -> None:
    got = profile(Store(":memory:"), "nobody", ["war"])
    assert got == {"name": "nobody", "registered": False, "bot": False, "ratings": {},
                   "recent": [], "recent_total": 0}


def test_leaderboard_and_its_text() -> None:
    store = _store_with_one_rated_match()
    entries = leaderboard(store, "war")
    assert [(e["rank"], e["name"], e["bot"], e["provisional"]) for e in entries] == [
        (1, "Alice", False, True), (2, "robo", True, True)]
    text = board_text(entries)
    assert "Alice" in text and "robo (bot)" in text and "provisional" in text
    assert "no rated matches" in board_text(leaderboard(store, "datastructures"))


def test_cardserver_leaderboard_prints_the_store(tmp_path, capsys) -> None:
    from server.cli import main

    path = tmp_path / "s.db"
    store = _store_with_one_rated_match()
    store._db.execute(f"VACUUM INTO '{path}'")
    store.close()
    assert main(["leaderboard", "war", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Leaderboard: war" in out and "Alice" in out and "robo (bot)" in out
    assert main(["leaderboard", "war", "--db", str(path), "--json"]) == 0
    assert '"rank": 1' in capsys.readouterr().out
    assert main(["leaderboard", "chess", "--db", str(path)]) == 1
    assert main(["leaderboard", "war", "--db", str(tmp_path / "none.db")]) == 1
    assert not (tmp_path / "none.db").exists()
