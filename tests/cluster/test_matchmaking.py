"""Casual matchmaking across nodes: one queue per game in Redis, paired atomically."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import trio

from server.app import Server
from server.cluster import keys
from tests.cluster.conftest import connect_to
from tests.server.helpers import play_to_end

StartNode = Callable[..., Awaitable[Server]]


async def _queue_length(server: Server, game: str) -> int:
    assert server.cluster is not None
    return int(await server.cluster.redis.llen(keys.queue(game)))


async def test_players_on_two_nodes_are_paired_and_play_to_the_end(start_node: StartNode
                                                                   ) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    waiting = await alice.expect_ok("queue", game="war", options={"cap": 100},
                                    client_seed="a1")
    assert waiting["game"] == "war" and waiting["commitment"]
    assert await _queue_length(a, "war") == 1
    # other options do not pair
    await bob.expect_ok("queue", game="war", options={"cap": 90})
    assert await _queue_length(a, "war") == 2
    await bob.expect_ok("unqueue", game="war")
    assert await _queue_length(a, "war") == 1
    paired = await bob.expect_ok("queue", game="war", options={"cap": 100}, client_seed="b2")
    assert "commitment" not in paired  # the match plays the seed of who waited longer
    assert await _queue_length(a, "war") == 0
    first = {who: await c.wait_push(lambda m: m["type"] == "snapshot")
             for who, c in (("alice", alice), ("bob", bob))}
    mid = first["alice"]["match"]
    assert first["bob"]["match"] == mid
    assert mid in b.lobby.matches and mid not in a.lobby.matches  # b paired: b owns it
    assert first["alice"]["commitment"] == waiting["commitment"]
    seats = {first["alice"]["seat"], first["bob"]["seat"]}
    assert seats == {0, 1}
    assert {p["name"] for p in first["bob"]["players"]} == {"alice", "bob"}
    alice.pushes.insert(0, first["alice"])  # play_to_end starts from them
    bob.pushes.insert(0, first["bob"])
    final = await play_to_end({first["alice"]["seat"]: alice, first["bob"]["seat"]: bob}, mid)
    assert final[0]["status"] == final[1]["status"] == "finished"
    assert final[0]["result"] == final[1]["result"]
    # alice's queue is over on her node too: she may queue again
    assert "war" not in a.lobby.sessions[alice.welcome["session"]].queued  # type: ignore[index]


async def test_a_session_leaving_the_queue_by_disconnecting_is_not_paired(
        start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    await alice.expect_ok("queue", game="datastructures")
    assert await _queue_length(a, "datastructures") == 1
    await alice.aclose()
    with trio.fail_after(5):
        while await _queue_length(a, "datastructures"):
            await trio.sleep(0.02)
    reply = await bob.expect_ok("queue", game="datastructures")
    assert reply["commitment"]  # bob waits: nobody to pair with
    assert await _queue_length(b, "datastructures") == 1


async def test_the_entry_of_a_dead_node_is_dropped(start_node: StartNode) -> None:
    b = await start_node("b")
    bob = await connect_to(b, "bob")
    assert b.cluster is not None
    # a player of node "gone", whose lease has expired, still waits in the queue
    ghost = json.dumps({"sid": "s-ghost", "name": "ghost", "node": "gone", "opts": "{}",
                        "account": "", "client_seed": "00", "seed": "1", "salt": "00"})
    await b.cluster.redis.rpush(keys.queue("war"), [ghost])
    reply = await bob.expect_ok("queue", game="war")
    assert reply["commitment"]  # not paired with the dead node's player
    assert await _queue_length(b, "war") == 1


async def test_two_players_of_one_node_are_paired_there(start_node: StartNode) -> None:
    a = await start_node("a")
    alice, bob = await connect_to(a, "alice"), await connect_to(a, "bob")
    waiting = await alice.expect_ok("queue", game="datastructures", client_seed="ab")
    await bob.expect_ok("queue", game="datastructures")
    snaps = [await c.wait_push(lambda m: m["type"] == "snapshot") for c in (alice, bob)]
    assert snaps[0]["match"] == snaps[1]["match"] in a.lobby.matches
    assert snaps[0]["commitment"] == waiting["commitment"]
    assert await _queue_length(a, "datastructures") == 0
    assert not any(s.queued for s in a.lobby.sessions.values())
