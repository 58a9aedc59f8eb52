"""The owner of a match is a real ``cardserver --cluster`` process, SIGKILLed while a
player of another node sits in its match: that player's requests are answered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from server.app import Server
from tests.cluster.conftest import connect_to
from tests.cluster.nodeproc import NodeProcess
from tests.cluster.test_two_nodes import assert_answered
from tests.server.helpers import TestClient


async def test_requests_for_a_killed_owners_match_are_answered(
        start_node: Callable[..., Awaitable[Server]], redis_url: str, tmp_path: Path) -> None:
    owner = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", "1").start()
    try:
        b = await start_node("b")
        assert b.lobby.relay is not None
        b.lobby.relay.timeout = 1.0
        alice = await TestClient.connect(owner.port)
        assert (await alice.hello("alice"))["type"] == "welcome"
        bob = await connect_to(b, "bob")
        mid = (await alice.expect_ok("create", game="war"))["match"]
        await bob.expect_ok("join", match=mid)
        snap = await bob.snapshot(mid, lambda s: s["status"] == "active")
        ok = await bob.request("intent", match=mid, seq=snap["seq"], intent=snap["legal"][0])
        assert ok["type"] == "ok", ok
        owner.kill()
        started = trio.current_time()
        for _ in range(3):  # before and after b notices that a's lease is gone
            reply = await bob.request("chat", match=mid, text="still there?")
            assert_answered(reply)
        assert trio.current_time() - started < 6
    finally:
        owner.kill()
