"""Timing: heartbeats, slow consumers, turn timers, auto-flip. Memory streams and a
MockClock (autojump), so nothing here waits in real time."""

from __future__ import annotations

import trio
import trio.testing

from tests.server.helpers import Closed, TestClient, frame

QUIET = dict(ping_interval=1000.0, ping_timeout=1000.0)
LONG = 500.0


async def _client(server, nursery, name: str, lockstep: bool = False) -> TestClient:
    if lockstep:
        ours, theirs = trio.testing.lockstep_stream_pair()
    else:
        ours, theirs = trio.testing.memory_stream_pair()
    nursery.start_soon(server.serve_stream, theirs, name)
    client = TestClient(ours)
    assert (await client.hello(name))["type"] == "welcome"
    return client


async def _until_closed(client: TestClient) -> list[dict]:
    seen = []
    try:
        with trio.fail_after(LONG):
            while True:
                seen.append(await client.next_message())
    except Closed:
        return seen


async def test_silent_peer_is_dropped(start_server, nursery, autojump_clock) -> None:
    server = await start_server(ping_interval=2.0, ping_timeout=3.0)
    client = await _client(server, nursery, "mute")
    client.answer_pings = False
    start = trio.current_time()
    seen = await _until_closed(client)
    elapsed = trio.current_time() - start
    assert [m["type"] for m in seen if m["type"] != "ping"] == ["bye"]
    assert seen[-1]["reason"] == "heartbeat_timeout"
    assert 5.0 <= elapsed <= 6.0
    assert sum(m["type"] == "ping" for m in seen) >= 2


async def test_heartbeat_counts_from_the_last_frame_read_after_a_busy_reader(
        start_server, nursery, autojump_clock) -> None:
    """The bound runs while the reader waits for the peer's bytes: a reader held
    past it (its address's throttle) is not a silent peer, and a frame it then
    finds already read restarts the bound from the moment it reads it."""
    server = await start_server(ping_interval=2.0, ping_timeout=3.0, address_rate=0.1,
                                address_burst=1)
    client = await _client(server, nursery, "throttled")
    client.answer_pings = False
    start = trio.current_time()
    # one write: the second request waits 10 s for its address's share (past the
    # 5 s bound), and the pong behind it is read only after that
    await client.send_raw(frame({"type": "games", "id": 1}) + frame({"type": "games", "id": 2})
                          + frame({"type": "pong", "id": 1}))
    seen = await _until_closed(client)
    elapsed = trio.current_time() - start
    replies = [m for m in seen if m["type"] != "ping"]
    assert [(m["type"], m.get("id")) for m in replies] == [("ok", 1), ("ok", 2), ("bye", None)]
    assert replies[-1]["reason"] == "heartbeat_timeout"
    assert 14.9 <= elapsed <= 15.5, elapsed   # the pong read at 10 s, + 5 s


async def test_answering_peer_stays(start_server, nursery, autojump_clock) -> None:
    server = await start_server(ping_interval=2.0, ping_timeout=3.0)
    client = await _client(server, nursery, "chatty")
    with trio.move_on_after(60):
        while True:
            await client.pump()  # answers every ping
    await client.expect_ok("games")


async def test_slow_consumer_is_disconnected_and_seat_enters_grace(
        start_server, nursery, autojump_clock) -> None:
    server = await start_server(outbox_size=4, grace=50.0, chat_burst=100, **QUIET)
    alice = await _client(server, nursery, "alice", lockstep=True)
    bob = await _client(server, nursery, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    # alice stops reading; bob's chat fills her outbox.
    for i in range(12):
        await bob.expect_ok("chat", match=mid, text=f"hello {i}")
    gone = await bob.wait_push(lambda m: m["type"] == "presence" and not m["connected"],
                               timeout=LONG)
    assert gone["seat"] == 0 and gone["grace"] == 50.0
    assert not any(c.session and c.session.name == "alice" for c in server.clients)
    # the match goes on without blocking: bob can still act
    await bob.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})


async def _war(server, nursery, **create):
    alice = await _client(server, nursery, "alice")
    bob = await _client(server, nursery, "bob")
    mid = (await alice.expect_ok("create", game="war", **create))["match"]
    await bob.expect_ok("join", match=mid)
    return alice, bob, mid


async def test_turn_timer_flips_then_forfeits(start_server, nursery, autojump_clock) -> None:
    server = await start_server(timeout_forfeit=3, **QUIET)
    alice, bob, mid = await _war(server, nursery, turn_timer=5)
    snap = await alice.snapshot(mid, lambda s: s["status"] == "active")
    assert 0 < snap["deadline"] <= 5
    start = trio.current_time()
    while snap["status"] != "finished":
        if snap["legal"]:
            await alice.request("intent", match=mid, seq=snap["seq"], intent={"type": "flip"})
        snap = await alice.snapshot(mid, lambda s, n=snap["seq"]: s["seq"] > n, timeout=LONG)
    assert snap["result"] == {"winner": 0, "reason": "timeout"}
    assert 14.9 <= trio.current_time() - start <= 15.5  # three turns of 5 s
    rows = server.store.journal(mid)
    assert [(r.seat, r.kind, r.by) for r in rows if r.seat == 1] == [
        (1, "intent", "timer"), (1, "intent", "timer"), (1, "forfeit", "timer")]


async def test_turn_timer_plays_datastructures_defaults(start_server, nursery,
                                                        autojump_clock) -> None:
    server = await start_server(timeout_forfeit=0, **QUIET)
    alice = await _client(server, nursery, "alice")
    bob = await _client(server, nursery, "bob")
    mid = (await alice.expect_ok("create", game="datastructures", turn_timer=7))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda s: s["status"] == "active")
    first = snap["view"]["to_move"]
    theirs = await bob.snapshot(mid, lambda s: s["status"] == "active")
    mover, waiter = (snap, theirs) if first == 0 else (theirs, snap)
    assert mover["deadline"] == 7 and waiter["deadline"] is None
    later = await alice.snapshot(mid, lambda s: s["status"] == "active"
                                 and s["view"]["to_move"] != first, timeout=LONG)
    assert later["view"]["turn"] == 2
    kinds = [r.intent["type"] for r in server.store.journal(mid)]
    assert kinds[0] == "end_phase" and kinds[-1] == "end_turn"
    assert {r.by for r in server.store.journal(mid)} == {"timer"}


async def test_auto_flip(start_server, nursery, autojump_clock) -> None:
    server = await start_server(auto_flip_delay=0.5, **QUIET)
    alice, bob, mid = await _war(server, nursery, turn_timer=0)
    await bob.expect_ok("auto_flip", match=mid, on=True)
    mine = await bob.snapshot(mid, lambda s: s["auto_flip"])
    assert mine["auto_flip"] is True
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    await alice.snapshot(mid, lambda s: s["seq"] == 2, timeout=LONG)
    rows = server.store.journal(mid)
    assert [(r.seat, r.by) for r in rows] in ([(0, "seat"), (1, "auto")],
                                              [(1, "auto"), (0, "seat")])

