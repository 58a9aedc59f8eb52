"""Two in-process nodes on one redis-server, real TCP clients: players on different
nodes play whole matches, chat, list each other's matches, and a request for a
match whose owner is gone is answered (docs/cluster.md, "Routing")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from engine.fairness import verify
from server.app import Server
from server.cluster import keys
from server.cluster.directory import FETCH_AGE
from tests.cluster.conftest import connect_to
from tests.server.helpers import TestClient, play_to_end

StartNode = Callable[..., Awaitable[Server]]


async def test_war_between_two_nodes(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice = await connect_to(a, "alice")
    assert b.port is not None
    bob = await TestClient.connect(b.port)  # speaks protocol 2: b sends it deltas
    await bob.send({"type": "hello", "protocol": [1, 2], "name": "bob", "client": "t"})
    assert (await bob.next_message())["protocol"] == 2
    mid = (await alice.expect_ok("create", game="war", options={"cap": 200}))["match"]
    commitment = (await alice.snapshot(mid))["commitment"]
    joined = await bob.expect_ok("join", match=mid)  # relayed from b to a
    assert joined["seat"] == 1 and joined["match"] == mid
    assert mid in a.lobby.matches and mid not in b.lobby.matches
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == final[1]["status"] == "finished"
    assert final[0]["result"] == final[1]["result"]
    reveal = final[1]["reveal"]
    assert final[1]["commitment"] == commitment
    assert verify(reveal["seed"], reveal["salt"], commitment)
    assert final[1]["seq"] == a.lobby.matches[mid].seq


async def test_datastructures_between_two_nodes(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await bob.expect_ok("create", game="datastructures", options={"cap": 12}))["match"]
    await alice.expect_ok("join", match=mid, seat=1)  # a relays to b, the owner
    final = await play_to_end({0: bob, 1: alice}, mid)
    assert final[0]["status"] == final[1]["status"] == "finished"
    assert final[0]["result"] == final[1]["result"]
    assert final[1]["seq"] == b.lobby.matches[mid].seq > 10
    # the remote seat saw its own hand only
    for snap in (m for m in alice.seen if m["type"] == "snapshot"):
        assert snap["seat"] == 1 and snap["view"]["hand"] is not None
        for event in snap["events"]:
            if event["type"] == "draw" and event.get("seat") != 1:
                assert "cards" not in event, event


async def test_errors_and_chat_cross_nodes(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    # a refusal from the owner comes back with the request's id
    await bob.expect_error("already_seated", "join", match=mid)
    carol = await connect_to(b, "carol")
    await carol.expect_error("seat_taken", "join", match=mid)
    stale = await bob.request("intent", match=mid, seq=999, intent={"type": "flip"})
    assert stale["type"] == "error" and stale["code"] in ("stale", "not_your_turn"), stale
    await bob.expect_ok("chat", match=mid, text="hello from b")
    line = await alice.wait_push(lambda m: m["type"] == "chat")
    assert line["text"] == "hello from b" and line["name"] == "bob"
    await alice.expect_ok("chat", match=mid, text="hi from a")
    line = await bob.wait_push(lambda m: m["type"] == "chat" and m["text"] == "hi from a")
    assert line["name"] == "alice"
    # an unknown match, asked on a node that does not own it either
    await bob.expect_error("no_such_match", "watch", match="m0000000000")


async def test_listing_on_b_shows_the_matches_of_a(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    war = (await alice.expect_ok("create", game="war"))["match"]
    ds = (await bob.expect_ok("create", game="datastructures"))["match"]

    async def listed(client: Any, **filters: Any) -> dict[str, dict[str, Any]]:
        reply = await client.expect_ok("matches", **filters)
        return {m["match"]: m for m in reply["matches"]}

    on_b = await listed(bob)
    assert set(on_b) == {war, ds} and on_b[war]["status"] == "waiting"
    assert set(await listed(alice)) == {war, ds}
    assert set(await listed(bob, game="war")) == {war}
    # a join on b makes a's match active, and b's listing says so soon after
    carol = await connect_to(b, "carol")
    await carol.expect_ok("join", match=war)
    with trio.fail_after(5):
        while (await listed(bob)).get(war, {}).get("status") != "active":
            await trio.sleep(0.1)
    assert set(await listed(bob, status="waiting")) == {ds}
    # paging across the nodes' matches: one per page, each once
    first = await bob.expect_ok("matches", limit=1)
    second = await bob.expect_ok("matches", limit=1, cursor=first["next"])
    assert {first["matches"][0]["match"], second["matches"][0]["match"]} == {war, ds}
    assert "next" not in second


async def test_a_request_for_a_match_of_a_gone_node_is_answered(start_node: StartNode
                                                                 ) -> None:
    a, b = await start_node("a", node_lease=1.0), await start_node("b", node_lease=1.0)
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    a.shutdown()
    with trio.fail_after(5):
        await a.stopped.wait()
    for request in (dict(type="chat", match=mid, text="anyone?"), dict(type="watch", match=mid)):
        reply = await bob.request(request.pop("type"), **request)
        assert_answered(reply)


def assert_answered(reply: dict[str, Any]) -> None:
    """``unavailable`` while the match has no live owner; ``ok`` (or a refusal of the
    request itself) once a node has adopted it."""
    assert reply["type"] == "ok" or reply["code"] in ("unavailable", "already_seated"), reply


async def test_the_owner_keeps_each_sessions_matches_in_redis(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    assert a.cluster is not None and alice.welcome is not None and bob.welcome is not None
    redis = a.cluster.redis

    async def matches_of(client: Any) -> set[bytes]:
        return set(await redis.smembers(keys.session_matches(client.welcome["session"])))

    assert await matches_of(alice) == {mid.encode()}  # before the create was answered
    await bob.expect_ok("watch", match=mid)
    with trio.fail_after(5):
        while await matches_of(bob) != {mid.encode()}:
            await trio.sleep(0.05)
    await bob.expect_ok("leave", match=mid)
    with trio.fail_after(5):
        while await matches_of(bob):
            await trio.sleep(0.05)


async def test_an_expired_match_leaves_the_cluster_listing(start_node: StartNode) -> None:
    a, b = await start_node("a", waiting_ttl=0.3), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    assert mid in {m["match"] for m in (await bob.expect_ok("matches"))["matches"]}
    expired = await alice.wait_push(lambda m: m["type"] == "error")
    assert expired["code"] == "match_expired"
    assert a.cluster is not None
    redis = a.cluster.redis
    with trio.fail_after(5):  # the owner forgets it at its next look
        while await redis.hget(keys.LOBBY, mid) is not None:
            await trio.sleep(0.05)
    assert await redis.exists([keys.owner(mid)]) == 0
    assert not await redis.sismember(keys.UNFINISHED, mid)
    await trio.sleep(FETCH_AGE)  # past the listing's reuse
    assert mid not in {m["match"] for m in (await bob.expect_ok("matches"))["matches"]}
    await bob.expect_error("no_such_match", "watch", match=mid)
