"""A node paused past its lease is fenced off: another node adopts its match, and once it
runs again it writes nothing more to it and its players there are told ``match_moved``."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import trio

from tests.cluster.nodeproc import NodeProcess
from tests.cluster.test_adoption import (
    LEASE,
    assert_kept,
    journal_of,
    play_some,
    wait_owner,
)
from tests.server.helpers import Closed, TestClient


async def bye_or_close(client: TestClient, timeout: float = 10) -> list[dict]:
    """Every message until the server closes the connection."""
    got = []
    with trio.fail_after(timeout):
        try:
            while True:
                got.append(await client.next_message())
        except Closed:
            return got


async def test_a_paused_node_is_fenced_off(redis_url: str, tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", LEASE).start()
    b = await NodeProcess(redis_url, "b", tmp_path, "--node-lease", LEASE).start()
    assert a.process is not None
    try:
        alice = await TestClient.welcomed(a.port, "alice")
        bob = await TestClient.welcomed(a.port, "bob")
        mid = (await alice.expect_ok("create", game="war", options={"cap": 300}))["match"]
        await bob.expect_ok("join", match=mid)
        snaps: dict[int, dict] = {}
        played = await play_some({0: alice, 1: bob}, mid, 8, snaps)
        stale_seat = next(seat for seat, snap in snaps.items() if snap["legal"])
        stale_client = (alice, bob)[stale_seat]
        os.kill(a.process.pid, signal.SIGSTOP)
        try:
            await wait_owner(redis_url, mid, "b")
            # an intent that reaches the paused node: it must never be carried out there
            snap = snaps[stale_seat]
            await stale_client.send({"type": "intent", "id": 999, "match": mid,
                                     "seq": snap["seq"], "intent": snap["legal"][0]})
            assert alice.welcome is not None and bob.welcome is not None
            resumed = {0: await TestClient.welcomed(b.port, "x", resume=alice.welcome["token"]),
                       1: await TestClient.welcomed(b.port, "x", resume=bob.welcome["token"])}
            on_b: dict[int, dict] = {}
            played += await play_some(resumed, mid, 6, on_b)
        finally:
            os.kill(a.process.pid, signal.SIGCONT)
        got = await bye_or_close(stale_client)
        # The woken node either reads the intent before it notices that its lease is
        # gone (then it answers it, refused) or closes the connection with the bye
        # first, the intent still unread in the socket: either way it is never carried
        # out (the journal below holds only what the players were told was accepted).
        replies = [m for m in got if m.get("id") == 999]
        assert all(m["type"] == "error" for m in replies), got
        assert all(m["code"] in ("match_moved", "no_such_match") for m in replies), replies
        byes = [m for m in got if m["type"] == "bye"]
        assert byes and byes[-1]["reason"] == "match_moved", got
        other = (alice, bob)[1 - stale_seat]
        got = await bye_or_close(other)
        assert [m["reason"] for m in got if m["type"] == "bye"] == ["match_moved"], got
        played += await play_some(resumed, mid, 100_000, on_b)
        assert on_b[0]["status"] == "finished"
        rows = await journal_of(redis_url, mid)
        assert len(rows) == on_b[0]["seq"]
        assert_kept(rows, played)
        log = a.log.read_text()
        assert "fenced off" in log
    finally:
        a.kill()
        b.kill()
