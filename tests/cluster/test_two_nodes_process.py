"""The owner of a match is a real ``cardserver --cluster`` process, SIGKILLed while a
player of another node sits in its match: that player's requests are answered."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import trio

from server.app import Server
from tests.cluster.conftest import connect_to
from tests.cluster.nodeproc import NodeProcess
from tests.cluster.test_two_nodes import assert_answered
from tests.server.helpers import TestClient

StartNode = Callable[..., Awaitable[Server]]


@pytest.fixture
async def owner(redis_url: str, tmp_path: Path) -> AsyncIterator[NodeProcess]:
    """Node ``a``: a ``cardserver --cluster`` process with a 1 s lease (killed at the end)."""
    node = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", "1").start()
    yield node
    node.kill()


async def alice_on(node: NodeProcess) -> TestClient:
    alice = await TestClient.connect(node.port)
    assert (await alice.hello("alice"))["type"] == "welcome"
    return alice


async def test_requests_for_a_killed_owners_match_are_answered(
        start_node: StartNode, owner: NodeProcess) -> None:
    b = await start_node("b")
    assert b.lobby.relay is not None
    b.lobby.relay.timeout = 1.0
    alice = await alice_on(owner)
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


async def test_a_player_on_the_adopting_node_plays_on_without_reconnecting(
        start_node: StartNode, owner: NodeProcess) -> None:
    b = await start_node("b", node_lease=1.0)
    alice = await alice_on(owner)
    bob = await connect_to(b, "bob")
    assert bob.welcome is not None
    mid = (await alice.expect_ok("create", game="war", options={"cap": 500}))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await bob.snapshot(mid, lambda s: s["status"] == "active")
    ok = await bob.request("intent", match=mid, seq=snap["seq"], intent=snap["legal"][0])
    assert ok["type"] == "ok", ok
    await bob.snapshot(mid, lambda s: s["seq"] >= ok["seq"])
    bob.pushes.clear()  # nothing more comes until alice flips, or a re-attach
    owner.kill()
    # b adopts the match once a's lease has expired, and attaches its own player
    # bob to it: a fresh snapshot, without a reconnect
    fresh = await bob.snapshot(mid, timeout=15)
    assert fresh["seq"] == ok["seq"] and fresh["seat"] == 1
    assert mid in b.lobby.matches
    match = b.lobby.matches[mid]
    assert match.core.seats[1].session == bob.welcome["session"]
    assert bob.welcome["session"] in match.core.connected
    await alice.aclose()


async def test_after_adoption_by_either_node_a_remote_player_reaches_the_new_owner(
        start_node: StartNode, owner: NodeProcess) -> None:
    b, c = await start_node("b", node_lease=1.0), await start_node("c", node_lease=1.0)
    alice = await alice_on(owner)
    bob, carol = await connect_to(b, "bob"), await connect_to(c, "carol")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    await carol.expect_ok("watch", match=mid)
    await bob.snapshot(mid, lambda s: s["status"] == "active")
    await carol.snapshot(mid, lambda s: s["status"] == "active")
    bob.pushes.clear()
    carol.pushes.clear()
    owner.kill()
    # whichever of b and c adopts it, both its players re-attach: a fresh snapshot
    for client in (bob, carol):
        fresh = await client.snapshot(mid, timeout=15)
        assert fresh["status"] == "active"
    adopter = b if mid in b.lobby.matches else c
    assert mid in adopter.lobby.matches
    await bob.expect_ok("chat", match=mid, text="who runs this now?")
    line = await carol.wait_push(lambda m: m["type"] == "chat")
    assert line["text"] == "who runs this now?"
    await alice.aclose()
