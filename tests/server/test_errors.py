"""Every error code the server sends, each provoked over loopback TCP."""

from __future__ import annotations

import struct

import pytest
import trio

from tests.server.helpers import Closed, TestClient, frame


async def _closed_after_error(client: TestClient, code: str) -> dict:
    msg = await client.next_message()
    assert msg["type"] == "error" and msg["code"] == code, msg
    with pytest.raises(Closed), trio.fail_after(5):
        while True:
            await client.next_message()
    return msg


async def test_framing_errors_close(start_server, connect) -> None:
    server = await start_server()
    client = await connect(server)
    await client.send_raw(struct.pack(">I", 1) + b"\xc1")  # 0xc1 is never valid msgpack
    await _closed_after_error(client, "bad_frame")
    client = await connect(server)
    await client.send_raw(struct.pack(">I", server.config.max_frame + 1))
    await _closed_after_error(client, "frame_too_large")


async def test_handshake_errors(start_server, connect) -> None:
    server = await start_server(handshake_timeout=0.2)
    client = await connect(server, None)
    await client.send_raw(frame({"type": "games", "id": 1}))
    await _closed_after_error(client, "handshake_required")

    client = await connect(server, None)
    await client.send_raw(frame({"type": "hello", "protocol": [99], "name": "x", "client": ""}))
    error = await _closed_after_error(client, "unsupported_version")
    assert error["versions"] == [1, 2]

    client = await connect(server, None)
    reply = await client.hello("mallory", resume="not-a-token")
    assert reply["code"] == "bad_token"

    client = await connect(server, None)
    with trio.fail_after(2):
        await _closed_after_error(client, "handshake_timeout")


async def test_too_many_connections(start_server, connect) -> None:
    server = await start_server(max_connections=1)
    first = await connect(server)
    second = await connect(server, None)
    await _closed_after_error(second, "too_many_connections")
    await first.expect_ok("games")


async def test_message_errors_keep_the_connection(start_server, connect) -> None:
    server = await start_server()
    client = await connect(server)
    error = await client.expect_error("bad_message", "create", game=5)
    assert error["field"] == "game"
    await client.expect_error("unknown_type", "dance")
    await client.send_raw(frame({"type": "hello", "protocol": [1], "name": "again",
                                 "client": ""}))
    await client.wait_push(lambda m: m["type"] == "error" and m["code"] == "bad_message")
    await client.expect_ok("games")


async def test_lobby_errors(start_server, connect) -> None:
    server = await start_server(max_turn_timer=60)
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    await alice.expect_error("no_such_game", "create", game="chess")
    error = await alice.expect_error("bad_option", "create", game="war", options={"colour": 1})
    assert error["field"] == "options"
    await alice.expect_error("bad_option", "create", game="war", options={"cap": -5})
    error = await alice.expect_error("bad_option", "create", game="war", bot="nobody")
    assert error["field"] == "bot"
    error = await alice.expect_error("bad_option", "create", game="war", turn_timer=61)
    assert error["field"] == "turn_timer"
    await alice.expect_error("no_such_game", "queue", game="chess")
    await alice.expect_error("no_such_match", "join", match="mnothing")
    await alice.expect_error("no_such_match", "watch", match="mnothing")

    mid = (await alice.expect_ok("create", game="war", seat=0))["match"]
    await alice.expect_error("already_seated", "join", match=mid)
    await alice.expect_error("already_seated", "watch", match=mid)
    await bob.expect_error("seat_taken", "join", match=mid, seat=0)
    await bob.expect_error("not_in_match", "intent", match=mid, seq=0, intent={"type": "flip"})
    await alice.expect_error("not_your_turn", "intent", match=mid, seq=0,
                             intent={"type": "flip"})  # waiting for a second player
    await bob.expect_ok("join", match=mid)
    carol = await connect(server, "carol")
    await carol.expect_error("seat_taken", "join", match=mid)
    await carol.expect_ok("watch", match=mid)
    await carol.expect_error("not_seated", "intent", match=mid, seq=0, intent={"type": "flip"})
    await carol.expect_error("not_seated", "auto_flip", match=mid, on=True)
    await alice.expect_error("stale", "intent", match=mid, seq=7, intent={"type": "flip"})
    error = await alice.expect_error("illegal_intent", "intent", match=mid, seq=0,
                                     intent={"type": "dance"})
    assert error["match"] == mid
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    await alice.expect_error("not_your_turn", "intent", match=mid, seq=1,
                             intent={"type": "flip"})  # flipped; waits for bob
    await alice.expect_ok("resign", match=mid)
    await bob.expect_error("match_finished", "intent", match=mid, seq=2,
                           intent={"type": "flip"})
    await bob.expect_error("match_finished", "resign", match=mid)

    ds = (await alice.expect_ok("create", game="datastructures"))["match"]
    await alice.expect_error("not_supported", "auto_flip", match=ds, on=True)
    await alice.expect_ok("queue", game="war")
    await alice.expect_error("already_seated", "queue", game="war")
    await alice.expect_ok("unqueue")


async def test_rate_limited_then_disconnected(start_server, connect) -> None:
    server = await start_server(rate=1.0, burst=3, abuse_limit=5)
    client = await connect(server)
    for i in range(1, 4):
        await client.send({"type": "games", "id": i})
    await client.send({"type": "games", "id": 4})
    codes = []
    with trio.fail_after(5):
        while len(codes) < 4:
            msg = await client.next_message()
            if msg["type"] in ("ok", "error"):
                codes.append(msg.get("code", "ok"))
    assert codes == ["ok", "ok", "ok", "rate_limited"]
    assert 0 < msg["retry_after"] <= 1.0   # a request a second
    for i in range(5, 12):
        await client.send({"type": "games", "id": i})
    last = None
    with pytest.raises(Closed), trio.fail_after(5):
        while True:
            last = await client.next_message()
    assert last == {"type": "bye", "reason": "rate_limited",
                    "message": "too many requests, for too long"}


async def test_internal_error_is_reported_and_survived(start_server, connect,
                                                       allow_error_logs) -> None:
    server = await start_server()
    client = await connect(server)

    def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    server.lobby._list = broken
    await client.expect_error("internal_error", "matches")
    await client.expect_ok("games")


async def test_store_failure_rejects_the_intent_and_keeps_state(start_server, connect,
                                                                allow_error_logs) -> None:
    from server.store import StoreError

    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    match = server.lobby.matches[mid]
    digest = match.state.digest()
    real = server.store.append_stamped   # what the match task stores its rows with

    def failing(*args, **kwargs):
        raise StoreError("disk full")

    server.store.append_stamped = failing
    await alice.expect_error("internal_error", "intent", match=mid, seq=0,
                             intent={"type": "flip"})
    assert match.seq == 0 and match.state.digest() == digest  # rolled back from the store
    server.store.append_stamped = real
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    assert [e.seq for e in server.store.journal(mid)] == [1]


async def test_match_capacity(start_server, connect) -> None:
    server = await start_server(max_matches=1)
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    await alice.expect_ok("create", game="war")
    await alice.expect_error("server_full", "create", game="war")
    await alice.expect_ok("queue", game="war")
    await bob.expect_error("server_full", "queue", game="war")


async def test_a_failing_match_task_does_not_take_the_server_down(start_server, connect,
                                                                  allow_error_logs) -> None:
    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    match = server.lobby.matches[mid]

    def boom(*args: object) -> None:
        raise RuntimeError("a bug in the match loop")

    async def boom_async() -> None:
        boom()

    match._fire_timers = boom_async
    await bob.expect_ok("join", match=mid)  # handled, then the task's timers...
    match.core.linger_until = 0.0  # ...make the loop fire at once
    match._retime()
    with trio.fail_after(5):
        while not match.closed:
            await trio.sleep(0.01)
    await bob.expect_error("no_such_match", "intent", match=mid, seq=0, intent={"type": "flip"})
    await alice.expect_ok("create", game="war")


def _refuse_one_match(server) -> list[str]:
    """Make the store refuse the next match it is asked to create; the refused ids."""
    from server.store import StoreError

    real, refused = server.store.create_match, []

    def once(rec):
        server.store.create_match = real
        refused.append(rec.id)
        raise StoreError("disk full")

    server.store.create_match = once
    return refused


async def test_a_queue_pair_the_store_refuses_leaves_the_partner_waiting(
        start_server, connect, allow_error_logs) -> None:
    server = await start_server()
    alice, bob, carol = [await connect(server, n) for n in ("alice", "bob", "carol")]
    await alice.expect_ok("queue", game="war")
    refused = _refuse_one_match(server)
    await bob.expect_error("internal_error", "queue", game="war")
    assert len(refused) == 1
    sessions = server.lobby.sessions.values()
    assert all(s.seats == set() for s in sessions)  # no seat of the match that never was
    assert (await carol.expect_ok("matches"))["queues"]["war"] == 1  # alice waits on
    await carol.expect_ok("queue", game="war")
    snap = await carol.wait_push(lambda m: m["type"] == "snapshot")
    assert sorted(p["name"] for p in snap["players"]) == ["alice", "carol"]
    assert snap["match"] != refused[0]
