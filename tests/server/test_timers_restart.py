"""Turn timers and grace periods survive a restart: they resume with the time they
had left instead of starting afresh."""

from __future__ import annotations

import trio

from tests.server.helpers import TestClient


async def test_turn_and_grace_deadlines_resume_after_a_restart(start_server, connect) -> None:
    server = await start_server(turn_timer=30, grace=30.0)
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war", turn_timer=30))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda s: s["status"] == "active")
    assert snap["deadline"] > 29
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    token_a, token_b = alice.welcome["token"], bob.welcome["token"]
    await bob.aclose()  # bob is away when the server stops: his grace period runs
    with trio.fail_after(5):
        while server.lobby.matches[mid].seats[1].grace_deadline is None:
            await trio.sleep(0.01)
    await trio.sleep(1.5)
    await alice.aclose()
    server.shutdown()
    await server.stopped.wait()

    server = await start_server(turn_timer=30, grace=30.0)
    match = server.lobby.matches[mid]
    now = trio.current_time()
    bob_seat, alice_seat = match.seats[1], match.seats[0]
    # bob's turn timer and his grace period kept running; alice (present at the
    # stop) gets a fresh grace period
    assert bob_seat.turn_deadline is not None and bob_seat.turn_deadline - now < 28.6
    assert bob_seat.grace_deadline is not None and bob_seat.grace_deadline - now < 28.6
    assert alice_seat.grace_deadline is not None and alice_seat.grace_deadline - now > 29.5
    back = await TestClient.connect(server.port)
    assert (await back.hello("bob", resume=token_b))["resumed"] is True
    snap = await back.snapshot(mid)
    assert snap["seq"] == 1 and snap["deadline"] < 28.6
    again = await TestClient.connect(server.port)
    assert (await again.hello("alice", resume=token_a))["resumed"] is True
    await back.expect_ok("intent", match=mid, seq=1, intent={"type": "flip"})
