"""End to end over loopback TCP: a full War game between two protocol clients."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import trio

from engine.fairness import verify
from server.app import serve
from tests.server.helpers import TestClient, make_config, play_to_end


async def test_full_war_game(tmp_path: Path, nursery: trio.Nursery) -> None:
    server = await nursery.start(partial(serve, make_config(tmp_path)))
    alice, bob = await TestClient.connect(server.port), await TestClient.connect(server.port)
    assert (await alice.hello("alice"))["type"] == "welcome"
    assert (await bob.hello("bob"))["type"] == "welcome"
    created = await alice.expect_ok("create", game="war", options={"cap": 200})
    mid = created["match"]
    first = await alice.snapshot(mid)
    assert first["status"] == "waiting" and first["legal"] == [] and first["seat"] == 0
    commitment = first["commitment"]
    joined = await bob.expect_ok("join", match=mid)
    assert joined["seat"] == 1
    final = await play_to_end({0: alice, 1: bob}, mid)
    last = final[0]
    assert last["status"] == "finished" and last["result"]["reason"]
    assert last["commitment"] == commitment
    assert verify(last["reveal"]["seed"], last["reveal"]["salt"], commitment)
    assert final[1]["result"] == last["result"]
    server.shutdown()
