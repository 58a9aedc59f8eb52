"""The journal in Redis: whole matches on one node in cluster mode, replayed from Redis."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import trio

from server.app import Server, serve
from server.cluster import keys
from server.cluster.journal import RedisJournal, entry_blob, entry_from, record_fields, record_from
from server.cluster.redis import client
from server.replay import rebuild
from server.store import JournalEntry, MatchRecord, SeatRecord, SeatTimers
from tests.server.helpers import TestClient, make_config, play_to_end


def test_records_and_rows_survive_their_encoding() -> None:
    rec = MatchRecord("m1", "war", {"cap": 200}, 2**255 + 7, "ab" * 16, 30, "forfeit", "active",
                      1.5, seats=[SeatRecord(0, "s0", "alice", None, True, "00ff"),
                                  SeatRecord(1, None, "greedy", "greedy", False, "11")],
                      watchers=["w1"], timers=[SeatTimers(0, 9.5, None, 1)], timers_seq=3)
    fields = {k.encode(): v.encode() if isinstance(v, str) else v for k, v in record_fields(rec)}
    assert record_from(fields) == rec
    entry = JournalEntry(3, "intent", 1, {"type": "flip"}, None, "bot", 2.5, "d" * 64,
                         (SeatTimers(0, 1.0, 2.0, 0),))
    assert entry_from(entry_blob(entry)) == entry


async def start_node(nursery: trio.Nursery, tmp_path: Path, redis_url: str, name: str,
                     **overrides: object) -> Server:
    """An in-process ``cardserver --cluster`` node."""
    directory = tmp_path / name
    directory.mkdir(exist_ok=True)
    settings: dict[str, object] = {"node_lease": 1.0, **overrides}
    config = make_config(directory, cluster=redis_url, node_name=name, **settings)
    return await nursery.start(partial(serve, config))


async def players(server: Server, *names: str) -> list[TestClient]:
    out = []
    for name in names:
        c = await TestClient.connect(server.port)
        assert (await c.hello(name))["type"] == "welcome"
        out.append(c)
    return out


async def replayed(redis_url: str, match_id: str) -> tuple[MatchRecord, list[JournalEntry]]:
    """The match as Redis holds it; its rows replayed through the engine (every digest
    checked by the replay)."""
    redis = client(redis_url)
    async with redis:
        loaded = await RedisJournal(redis, "reader").load(match_id)
        assert loaded is not None
        rec, rows, _owner = loaded
        rebuild(rec, rows)
        return rec, rows


async def test_a_whole_war_match_is_journaled_in_redis(tmp_path: Path, redis_url: str,
                                                       nursery: trio.Nursery) -> None:
    # its SQLite file is read below while it runs
    server = await start_node(nursery, tmp_path, redis_url, "a", store_lock="shared")
    alice, bob = await players(server, "alice", "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 200}))["match"]
    await bob.expect_ok("join", match=mid)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == "finished"
    rec, rows = await replayed(redis_url, mid)
    assert rec.status == "finished" and rec.reason == final[0]["result"]["reason"]
    assert len(rows) == final[0]["seq"]
    assert [s.name for s in rec.seats] == ["alice", "bob"]
    redis = client(redis_url)
    async with redis:
        assert await redis.smembers(keys.UNFINISHED) == set()
        for c, seat in ((alice, 0), (bob, 1)):
            assert seat is not None
            sid = c.welcome["session"]
            assert await redis.smembers(keys.session_matches(sid)) == {mid.encode()}
    assert not any((tmp_path / "a").glob("*.db")) or _no_sqlite_matches(tmp_path / "a")
    server.shutdown()


def _no_sqlite_matches(directory: Path) -> bool:
    """Nothing of a cluster node's matches or sessions is in its SQLite file."""
    import sqlite3
    for db in directory.glob("*.db"):
        with sqlite3.connect(db) as conn:
            if conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]:
                return False
            if conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]:
                return False
    return True


async def test_a_whole_datastructures_match_with_a_spectator(tmp_path: Path, redis_url: str,
                                                             nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, redis_url, "a")
    alice, bob, carol = await players(server, "alice", "bob", "carol")
    mid = (await alice.expect_ok("create", game="datastructures"))["match"]
    await bob.expect_ok("join", match=mid)
    await carol.expect_ok("watch", match=mid)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == "finished"
    rec, rows = await replayed(redis_url, mid)
    assert rec.status == "finished" and len(rows) == final[0]["seq"]
    assert rec.watchers == [carol.welcome["session"]]
    watched = await carol.snapshot(mid, lambda m: m["status"] == "finished")
    assert watched["seq"] == len(rows)
    server.shutdown()


async def test_a_match_against_a_server_bot(tmp_path: Path, redis_url: str,
                                            nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, redis_url, "a")
    (alice,) = await players(server, "alice")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 200},
                                 bot="greedy"))["match"]
    last = await play_against_bot(alice, mid)
    rec, rows = await replayed(redis_url, mid)
    assert rec.status == "finished" and len(rows) == last["seq"]
    assert any(r.by == "bot" for r in rows)
    server.shutdown()


async def play_against_bot(client: TestClient, mid: str) -> dict[str, object]:
    """Play the first legal intent whenever there is one; the finished snapshot."""
    while True:
        snap = await client.snapshot(mid, lambda m: bool(m["legal"]) or m["status"] == "finished",
                                     timeout=10)
        if snap["status"] == "finished":
            return snap
        reply = await client.request("intent", match=mid, seq=snap["seq"],
                                     intent=snap["legal"][0])
        assert reply["type"] == "ok" or reply["code"] in ("stale", "match_finished"), reply


async def test_accounts_are_refused_in_cluster_mode(tmp_path: Path, redis_url: str,
                                                    nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, redis_url, "a")
    (alice,) = await players(server, "alice")
    for mtype, fields in (("register", {"password": "hunter22"}),
                          ("leaderboard", {"game": "war"}), ("profile", {}),
                          ("records", {}), ("tokens", {})):
        reply = await alice.request(mtype, **fields)
        assert reply["code"] == "not_supported", reply
        assert "not available in cluster mode" in reply["message"]
    reply = await alice.request("create", game="war", rated=True)
    assert reply["code"] == "not_supported"
    reply = await alice.request("queue", game="war", rated=True)
    assert reply["code"] == "not_supported"
    other = await TestClient.connect(server.port)
    await other.send({"type": "hello", "protocol": [1], "name": "bob", "client": "test",
                      "auth": {"password": "pw"}})
    first = await other.next_message()
    assert first["type"] == "error" and first["code"] == "not_supported", first
    server.shutdown()
