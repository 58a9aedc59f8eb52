"""End to end over loopback TCP: a full Data Structures game, watched by a spectator
who never sees a hand card, and seats that never see each other's draws."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import trio

from engine.fairness import verify
from server.app import serve
from tests.server.helpers import TestClient, make_config, play_to_end


def _no_hidden_for(snapshot: dict[str, Any], seat: int | None) -> None:
    view = snapshot["view"]
    if seat is None:
        assert view["hand"] is None
    for event in snapshot["events"]:
        if event["type"] == "draw" and event.get("seat") != seat:
            assert "cards" not in event, event


async def test_full_datastructures_game_with_spectator(tmp_path: Path,
                                                       nursery: trio.Nursery) -> None:
    server = await nursery.start(partial(serve, make_config(tmp_path)))
    alice = await TestClient.connect(server.port)
    bob = await TestClient.connect(server.port)
    eve = await TestClient.connect(server.port)
    for client, name in ((alice, "alice"), (bob, "bob"), (eve, "eve")):
        assert (await client.hello(name))["type"] == "welcome"
    mid = (await alice.expect_ok("create", game="datastructures", options={"cap": 12}))["match"]
    await eve.expect_ok("watch", match=mid)
    await bob.expect_ok("join", match=mid, seat=1)
    match = server.lobby.matches[mid]

    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == final[1]["status"] == "finished"
    assert final[0]["result"] == final[1]["result"]
    reveal = final[0]["reveal"]
    assert verify(reveal["seed"], reveal["salt"], final[0]["commitment"])
    assert match.seq == final[0]["seq"] > 10

    # Everything the spectator received is public; it got one snapshot per change.
    await eve.snapshot(mid, lambda s: s["status"] == "finished")
    spectator = [m for m in eve.seen if m["type"] == "snapshot"]
    # one on watching, one when the match starts, then one per change
    assert len(spectator) == match.seq + 2
    assert all(s["seat"] is None and s["legal"] == [] for s in spectator)
    for snap in spectator:
        assert snap["seat"] is None, snap["seat"]
        _no_hidden_for(snap, None)
    draws = [e for s in spectator for e in s["events"] if e["type"] == "draw"]
    assert draws, "the spectator saw no draw at all"
    # Seats see their own hand, never the other's draws.
    for seat, client in ((0, alice), (1, bob)):
        snaps = [m for m in client.seen if m["type"] == "snapshot"]
        assert all(s["seat"] == seat and s["view"]["hand"] is not None for s in snaps)
        for snap in snaps:
            _no_hidden_for(snap, seat)
    own = [e for m in alice.seen if m["type"] == "snapshot" for e in m["events"]
           if e["type"] == "draw" and e.get("seat") == 0]
    assert any("cards" in e for e in own), "a seat should see its own draws"
    server.shutdown()
