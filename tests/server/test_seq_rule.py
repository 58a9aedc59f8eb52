"""The seq rule of PROTOCOL-CORE over real TCP: War flips that never collide,
Data Structures positions that cannot change under a seat."""

from __future__ import annotations

from collections import Counter
from typing import Any

import trio

from tests.server.helpers import TestClient

FLIP = {"type": "flip"}


async def _seated(start_server: Any, connect: Any, game: str,
                  **create: Any) -> tuple[TestClient, TestClient, str]:
    server = await start_server()
    alice = await connect(server, "alice")
    bob = await connect(server, "bob")
    created = await alice.expect_ok("create", game=game, turn_timer=0, **create)
    await bob.expect_ok("join", match=created["match"])
    return alice, bob, created["match"]


async def _flip_on_sight(client: TestClient, match: str, tally: Counter[str]) -> None:
    """Flip the moment a snapshot offers it; one intent in flight; after an ``ok``
    act on the first snapshot at least as new as the match after that intent."""
    newest: dict[str, Any] | None = None
    in_flight = False
    floor = acted = -1
    while True:
        msg = await client.next_message()
        if msg["type"] == "snapshot" and msg["match"] == match:
            if newest is None or msg["seq"] >= newest["seq"]:
                newest = msg
            if msg["status"] == "finished":
                return
        elif msg["type"] in ("ok", "error") and "id" in msg:
            in_flight = False
            tally[msg["type"] if msg["type"] == "ok" else msg["code"]] += 1
            if msg["type"] == "ok":
                floor = max(floor, msg["seq"])
        if (not in_flight and newest is not None and newest["legal"]
                and newest["seq"] >= floor and newest["seq"] > acted):
            acted = newest["seq"]
            await client.send({"type": "intent", "id": acted + 1, "match": match,
                               "seq": acted, "intent": newest["legal"][0]})
            in_flight = True
            tally["intents"] += 1


async def test_two_clients_flipping_on_sight_play_a_whole_war_match_without_stale(
        start_server: Any, connect: Any) -> None:
    alice, bob, match = await _seated(start_server, connect, "war", options={"cap": 300})
    tallies: list[Counter[str]] = [Counter(), Counter()]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_flip_on_sight, alice, match, tallies[0])
            nursery.start_soon(_flip_on_sight, bob, match, tallies[1])
    total = tallies[0] + tallies[1]
    assert total["intents"] > 100
    assert total["stale"] == 0, total
    assert total["ok"] == total["intents"], total


async def test_both_war_seats_flip_on_the_same_snapshot_and_both_count(
        start_server: Any, connect: Any) -> None:
    alice, bob, match = await _seated(start_server, connect, "war")
    snap = await alice.snapshot(match, lambda m: m["status"] == "active")
    await bob.snapshot(match, lambda m: m["status"] == "active")
    seq = snap["seq"]
    await alice.send({"type": "intent", "id": 101, "match": match, "seq": seq, "intent": FLIP})
    await bob.send({"type": "intent", "id": 201, "match": match, "seq": seq, "intent": FLIP})
    with trio.fail_after(5):
        while 101 not in alice.replies:
            await alice.pump()
        while 201 not in bob.replies:
            await bob.pump()
    assert alice.replies[101]["type"] == "ok", alice.replies[101]
    assert bob.replies[201]["type"] == "ok", bob.replies[201]
    assert sorted([alice.replies[101]["seq"], bob.replies[201]["seq"]]) == [seq + 1, seq + 2]
    after = await alice.snapshot(match, lambda m: m["seq"] == seq + 2)
    # both flips are on the table: the battle resolved, or it was a tie (a war follows)
    assert after["view"]["battles"] == 1 or after["view"]["war"] == 1


async def test_a_war_flip_on_a_snapshot_older_than_the_seats_own_change_is_stale(
        start_server: Any, connect: Any) -> None:
    alice, bob, match = await _seated(start_server, connect, "war")
    snap = await alice.snapshot(match, lambda m: m["status"] == "active")
    seq = snap["seq"]
    await alice.expect_ok("intent", match=match, seq=seq, intent=FLIP)
    await bob.expect_ok("intent", match=match, seq=seq, intent=FLIP)
    # alice's list went [flip] -> [] -> [flip]: it changed at seq + 2, so seq + 1 is old
    reply = await alice.request("intent", match=match, seq=seq + 1, intent=FLIP)
    assert reply["type"] == "error" and reply["code"] == "stale", reply
    reply = await alice.request("intent", match=match, seq=seq + 3, intent=FLIP)
    assert reply["type"] == "error" and reply["code"] == "stale", reply   # the future


async def test_a_datastructures_seat_acting_on_an_outdated_position_is_refused(
        start_server: Any, connect: Any) -> None:
    alice, bob, match = await _seated(start_server, connect, "datastructures")
    clients = {0: alice, 1: bob}
    snaps = {s: await c.snapshot(match, lambda m: m["status"] == "active")
             for s, c in clients.items()}
    mover = snaps[0]["view"]["to_move"]
    client, snap = clients[mover], snaps[mover]
    seq = snap["seq"]
    await client.expect_ok("intent", match=match, seq=seq, intent={"type": "end_phase"})
    newer = await client.snapshot(match, lambda m: m["seq"] == seq + 1)
    # the same seat, again on the old snapshot: its position has changed under it
    old_intent = next(i for i in newer["legal"] if i in snap["legal"]) if any(
        i in snap["legal"] for i in newer["legal"]) else newer["legal"][0]
    reply = await client.request("intent", match=match, seq=seq, intent=old_intent)
    assert reply["type"] == "error" and reply["code"] == "stale", reply
    reply = await client.request("intent", match=match, seq=seq + 1, intent=newer["legal"][0])
    assert reply["type"] == "ok", reply


async def test_the_newer_snapshot_arrives_before_the_stale_answer(
        start_server: Any, connect: Any) -> None:
    alice, bob, match = await _seated(start_server, connect, "datastructures")
    snaps = {0: await alice.snapshot(match, lambda m: m["status"] == "active"),
             1: await bob.snapshot(match, lambda m: m["status"] == "active")}
    mover = snaps[0]["view"]["to_move"]
    clients = {0: alice, 1: bob}
    seq = snaps[mover]["seq"]
    await clients[mover].expect_ok("intent", match=match, seq=seq, intent={"type": "end_phase"})
    other = clients[1 - mover]
    other.pushes.clear()
    other.seen.clear()
    reply = await other.request("intent", match=match, seq=seq, intent={"type": "end_phase"})
    assert reply["code"] == "stale", reply
    # the snapshot that made seq old was sent before the intent was read
    assert any(m["type"] == "snapshot" and m["seq"] > seq for m in other.seen), other.seen


async def test_checks_run_in_the_documented_order(start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    carol = await connect(server, "carol")
    created = await alice.expect_ok("create", game="war", turn_timer=0)
    match = created["match"]
    # not_in_match before stale
    await carol.expect_error("not_in_match", "intent", match=match, seq=99, intent=FLIP)
    # waiting: stale (seq 99 is in the future) before not_your_turn
    await alice.expect_error("stale", "intent", match=match, seq=99, intent=FLIP)
    await alice.expect_error("not_your_turn", "intent", match=match, seq=0, intent=FLIP)
    bob = await connect(server, "bob")
    await bob.expect_ok("join", match=match)
    await alice.snapshot(match, lambda m: m["status"] == "active")
    await alice.expect_error("illegal_intent", "intent", match=match, seq=0,
                             intent={"type": "shout"})
    await alice.expect_ok("intent", match=match, seq=0, intent=FLIP)
    await alice.expect_error("not_your_turn", "intent", match=match, seq=1, intent=FLIP)
