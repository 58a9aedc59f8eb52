"""A spectator on another node than the match's owner sees the public view only:
exactly what a spectator on the owner sees (no hidden card), protocol-2 deltas
included (its own connection encodes them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.app import Server
from tests.cluster.conftest import connect_to
from tests.server.helpers import TestClient, play_to_end
from tests.server.test_protocol2_e2e import count_bytes


def _public(snapshot: dict[str, Any]) -> None:
    assert snapshot["seat"] is None and snapshot["legal"] == []
    assert snapshot["view"]["hand"] is None
    for event in snapshot["events"]:
        if event["type"] == "draw":
            assert "cards" not in event, event


async def test_a_spectator_on_the_other_node_sees_what_one_on_the_owner_sees(
        start_node: Callable[..., Awaitable[Server]]) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    local = await connect_to(a, "dan")  # watches on the owner
    assert b.port is not None
    remote = await TestClient.connect(b.port)  # watches through the relay, protocol 2
    await remote.send({"type": "hello", "protocol": [1, 2], "name": "eve", "client": "t"})
    welcome = await remote.next_message()
    assert (welcome["type"], welcome["protocol"]) == ("welcome", 2)

    mid = (await alice.expect_ok("create", game="datastructures", options={"cap": 12}))["match"]
    await local.expect_ok("watch", match=mid)
    await remote.expect_ok("watch", match=mid)
    await bob.expect_ok("join", match=mid, seat=1)
    local_bytes, remote_bytes = count_bytes(local), count_bytes(remote)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == "finished"
    for spectator in (local, remote):
        await spectator.snapshot(mid, lambda s: s["status"] == "finished")
    seen = {who: [m for m in c.seen if m["type"] == "snapshot" and m["match"] == mid]
            for who, c in (("local", local), ("remote", remote))}
    assert len(seen["remote"]) == len(seen["local"]) == a.lobby.matches[mid].seq + 2
    for mine, theirs in zip(seen["remote"], seen["local"], strict=True):
        _public(mine)
        assert mine == theirs
    assert any(e["type"] == "draw" for s in seen["remote"] for e in s["events"])
    assert remote_bytes[0] < 0.8 * local_bytes[0]  # b sent it deltas against the last
    # the players' own snapshots do carry hidden cards: the projection is per seat
    assert all(s["view"]["hand"] is not None for s in bob.seen if s["type"] == "snapshot")
