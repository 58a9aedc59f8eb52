"""Redis unreachable or restarted: nothing unacknowledged is carried out, nothing
acknowledged is lost, and the matches are served again once Redis is back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from tests.cluster.redis_server import RedisServer
from tests.cluster.test_adoption import assert_kept, journal_of
from tests.cluster.test_journal import players, start_node
from tests.server.helpers import TestClient


async def play_on(clients: dict[int, TestClient], mid: str,
                  acked: list[tuple[int, dict[str, Any]]], refused: list[str],
                  snaps: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Play the match to its end, whoever can act; an ``unavailable`` intent is sent
    again a little later (its snapshot still stands: nothing of it was carried out).
    Fills ``acked`` with (seq, intent) of every ok; the last snapshot. ``snaps``: each
    seat's newest snapshot, when the test has taken them already."""
    if snaps is None:
        snaps = {seat: await c.snapshot(mid, lambda m: m["status"] != "waiting", timeout=10)
                 for seat, c in clients.items()}
    while not all(s["status"] == "finished" for s in snaps.values()):
        seat = next(s for s, snap in snaps.items() if snap["legal"])
        snap = snaps[seat]
        reply = await clients[seat].request("intent", match=mid, seq=snap["seq"],
                                            intent=snap["legal"][0])
        if reply["type"] == "error":
            assert reply["code"] == "unavailable", reply
            refused.append(reply["message"])
            await trio.sleep(0.05)
            continue
        assert reply["seq"] == snap["seq"] + 1 or reply["seq"] > snap["seq"], reply
        acked.append((reply["seq"], snap["legal"][0]))
        for s2, c2 in clients.items():
            snaps[s2] = await c2.snapshot(mid, lambda m, n=reply["seq"]: m["seq"] >= n,
                                          timeout=10)
    return snaps[0]


async def test_a_redis_restart_under_load_loses_no_acknowledged_intent(
        tmp_path: Path, own_redis: RedisServer, nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, own_redis.url, "a", node_lease=5.0)
    pairs = []
    for i in range(4):
        one, two = await players(server, f"p{i}a", f"p{i}b")
        mid = (await one.expect_ok("create", game="war", options={"cap": 150}))["match"]
        await two.expect_ok("join", match=mid)
        pairs.append((mid, {0: one, 1: two}))
    acked: dict[str, list[tuple[int, dict[str, Any]]]] = {mid: [] for mid, _ in pairs}
    refused: list[str] = []
    finals: dict[str, dict[str, Any]] = {}

    async def run(mid: str, clients: dict[int, TestClient]) -> None:
        finals[mid] = await play_on(clients, mid, acked[mid], refused)

    async with trio.open_nursery() as games:
        for mid, clients in pairs:
            games.start_soon(run, mid, clients)
        with trio.fail_after(10):
            while sum(len(a) for a in acked.values()) < 40:
                await trio.sleep(0.01)
        await trio.to_thread.run_sync(own_redis.restart)
    assert all(f["status"] == "finished" for f in finals.values())
    for mid, _ in pairs:
        rows = await journal_of(own_redis.url, mid)
        assert len(rows) == finals[mid]["seq"]
        assert_kept(rows, acked[mid])
    assert all("Redis did not answer" in m for m in refused)
    print(f"{sum(len(a) for a in acked.values())} intents acknowledged, "
          f"{len(refused)} refused as unavailable across the restart")
    server.shutdown()


async def test_while_redis_is_down_requests_are_refused_and_resume_after(
        tmp_path: Path, own_redis: RedisServer, nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, own_redis.url, "a", node_lease=5.0)
    alice, bob = await players(server, "alice", "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 150}))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda m: m["status"] == "active")
    own_redis.kill()
    reply = await alice.request("intent", match=mid, seq=snap["seq"], intent=snap["legal"][0])
    assert reply["type"] == "error" and reply["code"] == "unavailable", reply
    reply = await alice.request("create", game="war")
    assert reply["type"] == "error" and reply["code"] == "unavailable", reply
    reply = await bob.request("queue", game="war")
    assert reply["type"] == "error" and reply["code"] == "unavailable", reply
    await trio.to_thread.run_sync(own_redis.start)
    with trio.fail_after(10):
        while True:
            reply = await alice.request("intent", match=mid, seq=snap["seq"],
                                        intent=snap["legal"][0])
            if reply["type"] == "ok":
                break
            assert reply["code"] == "unavailable", reply
            await trio.sleep(0.05)
    rows = await journal_of(own_redis.url, mid)
    assert [r.seq for r in rows] == [1] and rows[0].intent == snap["legal"][0]
    assert (await alice.request("create", game="war"))["type"] == "ok"
    server.shutdown()


async def test_a_stalled_redis_times_out_and_nothing_unanswered_stays(
        tmp_path: Path, own_redis: RedisServer, nursery: trio.Nursery) -> None:
    """Redis stopped (SIGSTOP): the intent is answered ``unavailable`` after the commit
    timeout; once Redis runs again the match goes on from what was acknowledged."""
    import os
    import signal
    server = await start_node(nursery, tmp_path, own_redis.url, "a", node_lease=30.0)
    alice, bob = await players(server, "alice", "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 150}))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda m: m["status"] == "active")
    other = await bob.snapshot(mid, lambda m: m["status"] == "active")
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        reply = await alice.request("intent", match=mid, seq=snap["seq"],
                                    intent=snap["legal"][0])
        assert reply["type"] == "error" and reply["code"] == "unavailable", reply
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)
    acked: list[tuple[int, dict[str, Any]]] = []
    final = await play_on({0: alice, 1: bob}, mid, acked, [], {0: snap, 1: other})
    rows = await journal_of(own_redis.url, mid)
    assert len(rows) == final["seq"]
    assert_kept(rows, acked)
    server.shutdown()
