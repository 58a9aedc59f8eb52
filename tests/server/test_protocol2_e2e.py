"""Protocol 2 over loopback TCP: a client that speaks 2 gets snapshot deltas and
rebuilds the full snapshots; a 1.0 client in the same match gets full snapshots."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import trio

from server.app import serve
from tests.server.helpers import TestClient, make_config, play_to_end


def count_bytes(client: TestClient) -> list[int]:
    """A one-item list that counts the bytes the client reads from here on."""
    counter = [0]
    receive = client.conn.receive_data

    def counting(data: bytes) -> None:
        counter[0] += len(data)
        receive(data)

    client.conn.receive_data = counting  # type: ignore[method-assign]
    return counter


async def test_a_protocol_2_client_and_a_1_0_client_play_one_war_match(
        tmp_path: Path, nursery: trio.Nursery) -> None:
    server = await nursery.start(partial(serve, make_config(tmp_path)))
    alice, bob = await TestClient.connect(server.port), await TestClient.connect(server.port)
    await alice.send({"type": "hello", "protocol": [1, 2], "name": "alice", "client": "t"})
    welcome = await alice.next_message()
    assert (welcome["type"], welcome["protocol"]) == ("welcome", 2)
    assert (await bob.hello("bob"))["protocol"] == 1
    mid = (await alice.expect_ok("create", game="war", options={"cap": 150}))["match"]
    await bob.expect_ok("join", match=mid)
    alice_bytes, bob_bytes = count_bytes(alice), count_bytes(bob)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == final[1]["status"] == "finished"
    assert final[0]["result"] == final[1]["result"] and final[0]["reveal"]
    snaps = {who: {m["seq"]: m for m in c.seen if m["type"] == "snapshot" and m["match"] == mid}
             for who, c in (("alice", alice), ("bob", bob))}
    both = sorted(set(snaps["alice"]) & set(snaps["bob"]))
    # the deal is the server's own draw: a War game may end well before the cap
    # (38 battles was the shortest of 2,000 in `cardsim war`), so not many more
    # snapshots than a short game's are asked for
    assert len(both) > 40 and both[-1] == final[0]["seq"]
    for seq in both:   # both see whole snapshots, the same but for the seat
        mine, theirs = snaps["alice"][seq], snaps["bob"][seq]
        assert "base" not in mine and "base" not in theirs
        assert mine.keys() == theirs.keys()
        assert {**mine["view"], "seat": None} == {**theirs["view"], "seat": None}
        assert mine["players"] == theirs["players"] and mine["events"] == theirs["events"]
    assert alice_bytes[0] < 0.6 * bob_bytes[0]
    server.shutdown()
