"""SIGKILL of a match's owner: another node adopts it, its players resume there with their
tokens, it finishes, and its journal replays to the same digests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import trio

from server.cluster import keys
from server.cluster.ownership import Owner, owner_of
from server.cluster.redis import client
from server.store import JournalEntry
from tests.cluster.nodeproc import NodeProcess
from tests.cluster.test_journal import replayed
from tests.server.helpers import TestClient, play_to_end

LEASE = "1"


async def play_some(clients: dict[int, TestClient], mid: str, moves: int,
                    snaps: dict[int, dict[str, Any]] | None = None
                    ) -> list[tuple[int, dict[str, Any]]]:
    """``moves`` acknowledged intents, whoever can act; [(acknowledged seq, intent)].
    ``snaps`` holds each seat's newest snapshot (taken from it, and kept up to date)."""
    snaps = {} if snaps is None else snaps
    for seat, c in clients.items():
        if seat not in snaps:
            snaps[seat] = await c.snapshot(mid, lambda m: m["status"] != "waiting")
    done: list[tuple[int, dict[str, Any]]] = []
    while len(done) < moves:
        if all(snap["status"] == "finished" for snap in snaps.values()):
            break
        seat = next(s for s, snap in snaps.items() if snap["legal"])
        snap = snaps[seat]
        intent = snap["legal"][0]
        reply = await clients[seat].request("intent", match=mid, seq=snap["seq"], intent=intent)
        assert reply["type"] == "ok", reply
        done.append((reply["seq"], intent))
        for s2, c2 in clients.items():
            snaps[s2] = await c2.snapshot(mid, lambda m, n=reply["seq"]: m["seq"] >= n)
    return done


async def wait_owner(redis_url: str, mid: str, node: str, epoch: int = 2,
                     timeout: float = 15) -> Owner:
    """The match's owner once it is ``node`` at ``epoch`` or later."""
    redis = client(redis_url)
    async with redis:
        with trio.fail_after(timeout):
            while True:
                owner = await owner_of(redis, mid)
                if owner is not None and owner.node == node and owner.epoch >= epoch:
                    return owner
                await trio.sleep(0.02)


async def journal_of(redis_url: str, mid: str) -> list[JournalEntry]:
    """The match's rows in Redis, replayed (every digest checked)."""
    return (await replayed(redis_url, mid))[1]


def assert_kept(rows: list[JournalEntry], acknowledged: list[tuple[int, dict[str, Any]]]) -> None:
    """Every acknowledged intent is the journal's row of its seq."""
    for seq, intent in acknowledged:
        assert rows[seq - 1].seq == seq and rows[seq - 1].intent == intent, (seq, intent)


async def resume_and_finish(port: int, old: dict[int, TestClient], mid: str, redis_url: str,
                            played: list[tuple[int, dict[str, Any]]]) -> None:
    """Every seat resumes on ``port`` with its token and plays the match to its end; the
    journal then holds every acknowledged intent and replays."""
    resumed = {}
    for seat, player in old.items():
        assert player.welcome is not None
        resumed[seat] = await TestClient.welcomed(port, "x", resume=player.welcome["token"])
    final = await play_to_end(resumed, mid)
    rows = await journal_of(redis_url, mid)
    assert len(rows) == final[0]["seq"]
    assert_kept(rows, played)


async def test_sigkill_of_the_owner_the_other_node_adopts(redis_url: str,
                                                          tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", LEASE).start()
    b = await NodeProcess(redis_url, "b", tmp_path, "--node-lease", LEASE).start()
    try:
        alice = await TestClient.welcomed(a.port, "alice")
        bob = await TestClient.welcomed(a.port, "bob")
        carol = await TestClient.welcomed(a.port, "carol")
        mid = (await alice.expect_ok("create", game="war", options={"cap": 300}))["match"]
        await bob.expect_ok("join", match=mid)
        await carol.expect_ok("watch", match=mid)
        played = await play_some({0: alice, 1: bob}, mid, 12)
        killed = time.monotonic()
        a.kill()
        owner = await wait_owner(redis_url, mid, "b")
        adoption = time.monotonic() - killed
        assert owner.epoch == 2
        assert adoption < 5, f"adopted {adoption:.2f} s after SIGKILL"
        print(f"adoption {adoption:.3f} s after SIGKILL (lease {LEASE} s)")
        resumed = {}
        for seat, old in ((0, alice), (1, bob)):
            assert old.welcome is not None
            resumed[seat] = await TestClient.welcomed(b.port, "x", resume=old.welcome["token"])
            assert resumed[seat].welcome["session"] == old.welcome["session"]
        final = await play_to_end(resumed, mid)
        assert final[0]["status"] == "finished"
        assert carol.welcome is not None
        watcher = await TestClient.welcomed(b.port, "x", resume=carol.welcome["token"])
        seen = await watcher.snapshot(mid, lambda m: m["status"] == "finished")
        assert seen["seq"] == final[0]["seq"]
        rows = await journal_of(redis_url, mid)
        assert len(rows) == final[0]["seq"]
        assert_kept(rows, played)
        redis = client(redis_url)
        async with redis:
            assert await redis.smembers(keys.UNFINISHED) == set()
        assert "adopted at epoch 2" in b.log.read_text()
    finally:
        a.kill()
        b.kill()


async def test_a_node_restarted_under_its_name_takes_its_matches_back(
        redis_url: str, tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", LEASE).start()
    try:
        alice = await TestClient.welcomed(a.port, "alice")
        bob = await TestClient.welcomed(a.port, "bob")
        mid = (await alice.expect_ok("create", game="datastructures"))["match"]
        await bob.expect_ok("join", match=mid)
        played = await play_some({0: alice, 1: bob}, mid, 6)
        a.kill()
        redis = client(redis_url)
        async with redis:
            with trio.fail_after(10):  # its lease must expire before the name is free again
                while await redis.exists([keys.alive("a")]):
                    await trio.sleep(0.05)
        await a.start()
        owner = await wait_owner(redis_url, mid, "a")
        assert owner.epoch == 2
        await resume_and_finish(a.port, {0: alice, 1: bob}, mid, redis_url, played)
    finally:
        a.kill()


async def test_a_clean_shutdown_hands_its_matches_over_at_once(redis_url: str,
                                                               tmp_path: Path) -> None:
    """SIGTERM: the node gives its lease up and says ``left``; the other adopts at
    once, not at its next lease refresh (every 24 s with a lease of 120 s: well
    beyond the 5 s a loaded machine may take to hand over)."""
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", "120").start()
    b = await NodeProcess(redis_url, "b", tmp_path, "--node-lease", "120").start()
    try:
        alice = await TestClient.welcomed(a.port, "alice")
        bob = await TestClient.welcomed(a.port, "bob")
        mid = (await alice.expect_ok("create", game="war", options={"cap": 300}))["match"]
        await bob.expect_ok("join", match=mid)
        played = await play_some({0: alice, 1: bob}, mid, 5)
        assert a.terminate() == 0
        await wait_owner(redis_url, mid, "b", timeout=5)
        await resume_and_finish(b.port, {0: alice, 1: bob}, mid, redis_url, played)
    finally:
        a.kill()
        b.kill()


async def test_many_matches_of_a_killed_node_are_all_adopted(redis_url: str,
                                                             tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", LEASE).start()
    b = await NodeProcess(redis_url, "b", tmp_path, "--node-lease", LEASE).start()
    try:
        players = [await TestClient.welcomed(a.port, f"p{i}") for i in range(4)]
        mids = []
        for player in players:
            for _ in range(10):
                reply = await player.expect_ok("create", game="datastructures", bot="random")
                mids.append(reply["match"])
        killed = time.monotonic()
        a.kill()
        for mid in mids:
            await wait_owner(redis_url, mid, "b")
        took = time.monotonic() - killed
        print(f"{len(mids)} matches adopted {took:.3f} s after SIGKILL (lease {LEASE} s)")
        assert took < 5
        for mid in mids:
            await journal_of(redis_url, mid)
        assert players[0].welcome is not None
        back = await TestClient.welcomed(b.port, "x", resume=players[0].welcome["token"])
        snap = await back.snapshot(mids[0], lambda m: bool(m["legal"]))  # its bot plays on
        reply = await back.request("intent", match=mids[0], seq=snap["seq"],
                                   intent=snap["legal"][0])
        assert reply["type"] == "ok", reply
    finally:
        a.kill()
        b.kill()
