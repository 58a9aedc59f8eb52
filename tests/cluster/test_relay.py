"""The relay's promises: a client's disconnect and resume on its home node reach
the match's owner (grace timers as for a local client), every relayed request
gets one answer even from a silent owner, and the relay's messages batch."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgpack
import trio

from server.app import Server, serve
from server.cluster import keys, ownership
from server.cluster.directory import FETCH_AGE
from tests.cluster.conftest import connect_to
from tests.cluster.redis_server import RedisServer
from tests.server.helpers import TestClient, make_config

StartNode = Callable[..., Awaitable[Server]]


async def test_disconnect_starts_the_owners_grace_and_resume_ends_it(start_node: StartNode
                                                                     ) -> None:
    a, b = await start_node("a"), await start_node("b", grace=30.0)
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    await bob.snapshot(mid, lambda s: s["status"] == "active")
    assert bob.welcome is not None
    token = bob.welcome["token"]
    await bob.aclose()  # bob's connection to b drops

    gone = await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1)
    assert gone["connected"] is False and gone["grace"] > 0
    seat = a.lobby.matches[mid].core.seats[1]
    assert seat.grace_deadline is not None  # the owner's timer runs

    assert b.port is not None
    again = await TestClient.connect(b.port)
    welcome = await again.hello("bob", resume=token)
    assert welcome["type"] == "welcome" and welcome["resumed"] is True
    fresh = await again.snapshot(mid)  # the owner sent a fresh snapshot through b
    assert fresh["seat"] == 1 and fresh["status"] == "active"
    back = await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1)
    assert back["connected"] is True
    assert seat.grace_deadline is None
    # and the resumed connection plays on through the relay
    assert fresh["legal"], fresh  # War: both seats flip
    reply = await again.request("intent", match=mid, seq=fresh["seq"],
                                intent=fresh["legal"][0])
    assert reply["type"] == "ok", reply


async def with_a_ghost(start_node: StartNode, timeout: float) -> tuple[Server, Any]:
    """Node ``b`` (relay timeout ``timeout``) and its Redis client, with node "ghost"
    holding a lease and owning match ``mghost00000``, and nothing on its channel."""
    b = await start_node("b")
    assert b.lobby.relay is not None and b.cluster is not None
    b.lobby.relay.timeout = timeout
    redis = b.cluster.redis
    await redis.set(keys.alive("ghost"), "x", px=60_000)
    assert await ownership.claim_new(redis, "mghost00000", "ghost")
    return b, redis


async def test_a_silent_owner_gets_its_requests_answered_unavailable(start_node: StartNode
                                                                     ) -> None:
    b, _ = await with_a_ghost(start_node, 0.5)
    bob = await connect_to(b, "bob")
    started = trio.current_time()
    reply = await bob.request("watch", match="mghost00000")
    assert reply["type"] == "error" and reply["code"] == "unavailable", reply
    assert reply["match"] == "mghost00000"
    assert 0.4 < trio.current_time() - started < 3
    # nothing else comes for that request; the next one is answered again
    reply = await bob.request("chat", match="mghost00000", text="anyone?")
    assert reply["code"] == "unavailable"


async def test_every_message_of_a_pass_to_one_node_goes_in_one_publish(start_node: StartNode
                                                                       ) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice = await connect_to(a, "alice")
    watchers = [await connect_to(b, f"w{i}") for i in range(5)]
    mid = (await alice.expect_ok("create", game="war"))["match"]
    for w in watchers:
        await w.expect_ok("watch", match=mid)
    assert a.lobby.relay is not None
    before = a.lobby.relay.publishes
    await alice.expect_ok("chat", match=mid, text="to all five")
    for w in watchers:
        await w.wait_push(lambda m: m["type"] == "chat")
    assert a.lobby.relay.publishes - before == 1  # five chat lines, one publish to b


async def test_an_adopted_notice_reattaches_this_nodes_players(start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    active = await bob.snapshot(mid, lambda s: s["status"] == "active")
    bob.pushes.clear()
    assert b.cluster is not None and b.lobby.relay is not None
    b.lobby.relay.owners[mid] = "elsewhere"  # a stale cache entry the notice replaces
    # the notice the adopter publishes (here: "a" again, as after a restart of a)
    await b.cluster.redis.publish(keys.ALL, msgpack.packb({"t": "adopted", "match": mid,
                                                            "node": "a"}))
    fresh = await bob.snapshot(mid)
    assert fresh["seq"] == active["seq"] and fresh["seat"] == 1
    assert b.lobby.relay.owners[mid] == "a"


async def test_the_home_node_gone_starts_the_grace_of_its_players(start_node: StartNode
                                                                  ) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await bob.snapshot(mid, lambda s: s["status"] == "active")
    assert a.lobby.relay is not None
    a.lobby.relay.nodes_gone({"b"})  # what a's registry reports when b's lease expires
    gone = await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1)
    assert gone["connected"] is False
    assert a.lobby.matches[mid].core.seats[1].grace_deadline is not None
    # b was alive after all: bob's next request makes him present again
    await bob.request("intent", match=mid, seq=snap["seq"], intent=snap["legal"][0])
    back = await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1)
    assert back["connected"] is True


async def test_requests_are_answered_while_redis_is_down(
        own_redis: RedisServer, tmp_path: Path, nursery: trio.Nursery) -> None:
    config = make_config(tmp_path, cluster=own_redis.url, node_name="a")
    a = await nursery.start(partial(serve, config))
    alice = await connect_to(a, "alice")
    await alice.expect_ok("matches")
    own_redis.kill()
    await trio.sleep(FETCH_AGE)  # the listing read before is no longer reused
    with trio.fail_after(10):
        reply = await alice.request("matches")
        assert reply["type"] == "error" and reply["code"] == "unavailable", reply
        reply = await alice.request("watch", match="m0123456789")
        assert reply["type"] == "error" and reply["code"] == "unavailable", reply


async def test_a_home_that_never_saw_the_session_finds_its_matches_in_redis(
        start_node: StartNode) -> None:
    a, b = await start_node("a"), await start_node("b")
    alice, bob = await connect_to(a, "alice"), await connect_to(b, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    await bob.snapshot(mid, lambda s: s["status"] == "active")
    assert a.cluster is not None and bob.welcome is not None
    sid, token = bob.welcome["session"], bob.welcome["token"]
    with trio.fail_after(5):  # the owner lists bob's membership (within a sync)
        while await a.cluster.redis.smembers(keys.session_matches(sid)) != {mid.encode()}:
            await trio.sleep(0.05)
    await bob.aclose()
    await alice.wait_push(lambda m: m["type"] == "presence" and not m["connected"])
    assert b.lobby.relay is not None
    b.lobby.relay.remote.clear()  # as a node the session was never home to
    b.lobby.relay.owners.clear()
    assert b.port is not None
    again = await TestClient.connect(b.port)
    assert (await again.hello("bob", resume=token))["resumed"] is True
    fresh = await again.snapshot(mid)
    assert fresh["seat"] == 1
    back = await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1)
    assert back["connected"] is True


async def test_a_late_answer_after_unavailable_is_dropped(start_node: StartNode) -> None:
    b, redis = await with_a_ghost(start_node, 0.3)
    bob = await connect_to(b, "bob")
    assert bob.welcome is not None
    heard: list[dict[str, Any]] = []
    ghost = redis.pubsub(channels=[keys.to_node("ghost")], ignore_subscribe_messages=True)
    async with ghost:
        reply = await bob.request("watch", match="mghost00000")  # the ghost never answers
        assert reply["code"] == "unavailable"
        async for message in ghost:  # ... but it did get the request
            heard.extend(msgpack.unpackb(message["data"])["items"])
            break
    assert heard[0]["t"] == "q" and heard[0]["m"]["type"] == "watch"
    rid = heard[0]["m"]["id"]
    # now the ghost answers, too late, and then says something: the client gets the
    # chat line (so the relay has handled the batch) but no second answer
    sid = bob.welcome["session"]
    late = {"from": "ghost", "items": [
        {"t": "e", "s": sid, "m": {"type": "ok", "id": rid}},
        {"t": "e", "s": sid, "m": {"type": "chat", "match": "mghost00000", "seat": None,
                                   "name": "ghost", "text": "sorry, late"}}]}
    await redis.publish(keys.to_node("b"), msgpack.packb(late))
    line = await bob.wait_push(lambda m: m["type"] == "chat")
    assert line["text"] == "sorry, late"
    assert rid not in bob.replies


async def test_a_request_that_waits_on_the_owner_holds_up_only_its_own_session(
        start_node: StartNode, monkeypatch: Any) -> None:
    """One remote session's request stuck on the owner (its match's inbox full) does not
    delay another session's relayed requests; a session with too many requests
    waiting gets ``rate_limited`` for the next, and its stuck ones run once freed."""
    from server.cluster import relay as relay_module

    a, b = await start_node("a"), await start_node("b")
    owner = [await connect_to(a, name) for name in ("alice", "dave")]
    bob, carol = await connect_to(b, "bob"), await connect_to(b, "carol")
    stuck_mid = (await owner[0].expect_ok("create", game="war"))["match"]
    free_mid = (await owner[1].expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=stuck_mid)
    await carol.expect_ok("join", match=free_mid)
    await carol.snapshot(free_mid, lambda s: s["status"] == "active")

    release = trio.Event()
    stuck = a.lobby.matches[stuck_mid]
    plain_submit = stuck.submit

    async def full_inbox(command: Any, session: Any = None) -> None:
        await release.wait()
        await plain_submit(command, session)

    monkeypatch.setattr(stuck, "submit", full_inbox)
    monkeypatch.setattr(relay_module, "LANE_DEPTH", 2)
    relay = a.lobby.relay
    assert relay is not None

    async def reply_to(rid: int) -> dict[str, Any]:
        with trio.fail_after(5):
            while rid not in bob.replies:
                await bob.pump()
        return bob.replies.pop(rid)

    def chat(rid: int) -> dict[str, Any]:
        return {"type": "chat", "id": rid, "match": stuck_mid, "text": f"line {rid}"}

    await bob.send(chat(100))
    with trio.fail_after(5):   # the owner's lane for bob runs it and waits
        while not any(lane.requests == 0 and not lane.items and sid != carol.welcome["session"]
                      for sid, lane in relay._lanes.items()):
            await trio.sleep(0.01)
    for rid in (101, 102, 103):   # two wait in the lane; the third is one too many
        await bob.send(chat(rid))
    refused = await reply_to(103)
    assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
    assert "waiting on node a" in refused["message"]
    with trio.fail_after(2):   # far below the relay timeout (5 s)
        reply = await carol.request("chat", match=free_mid, text="still here")
    assert reply["type"] == "ok", reply
    release.set()
    for rid in (100, 101, 102):   # the ones that waited run, in order
        assert (await reply_to(rid))["type"] == "ok"
    with trio.fail_after(2):
        while relay._lanes:
            await trio.sleep(0.01)
