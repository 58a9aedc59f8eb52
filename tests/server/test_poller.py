"""The shared poller (server/poller.py) over real TCP connections: an idle plain
socket waits in the poller, intents run there without their reader, anything
else goes back to the reader in order, and a peer that goes away mid-frame is
let go of."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

import server.connection as connection
from protocol.codec import pack
from protocol.framing import encode_frame
from server.poller import Poller
from tests.server.helpers import TestClient, play_to_end


def count_dispatches(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Record the type of every request the reader carries out itself and of every
    one the poller runs."""
    seen: dict[str, list[str]] = {"reader": [], "poller": []}
    real_dispatch = connection.ClientConnection._dispatch
    real_nowait = connection.ClientConnection._dispatch_nowait

    async def dispatch(self: Any, event: Any) -> None:
        seen["reader"].append(event.TYPE)
        await real_dispatch(self, event)

    def nowait(self: Any, event: Any) -> bool:
        done = real_nowait(self, event)
        if done:
            seen["poller"].append(event.TYPE)
        return done

    monkeypatch.setattr(connection.ClientConnection, "_dispatch", dispatch)
    monkeypatch.setattr(connection.ClientConnection, "_dispatch_nowait", nowait)
    return seen


async def test_a_whole_game_s_intents_run_in_the_poller(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    seen = count_dispatches(monkeypatch)
    mid = (await alice.expect_ok("create", game="war", options={"cap": 60}))["match"]
    await bob.expect_ok("join", match=mid)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == "finished"
    intents = final[0]["seq"]   # every accepted intent made one change
    assert seen["reader"] == ["create", "join"]   # the lobby's requests: the readers'
    assert seen["poller"].count("intent") >= intents > 0
    assert len(server.poller) == 2   # both idle again, waiting in the poller


async def test_pipelined_requests_are_each_answered(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lobby request goes back to the reader, the intents behind it follow it
    there, each answered (an accepted intent's ``ok`` after its commit, as ever)."""
    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 60}))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda s: bool(s["legal"]))
    seen = count_dispatches(monkeypatch)
    flip = {"type": "intent", "match": mid, "seq": snap["seq"], "intent": snap["legal"][0]}
    stale = {**flip, "seq": snap["seq"] + 7}
    batch = [{"type": "games", "id": 1}, {**flip, "id": 2}, {**stale, "id": 3},
             {"type": "games", "id": 4}, {**stale, "id": 5}]
    await alice.send_raw(b"".join(encode_frame(pack(m)) for m in batch))
    replies: list[dict[str, Any]] = []
    with trio.fail_after(5):
        while len(replies) < len(batch):
            msg = await alice.next_message()
            if msg["type"] in ("ok", "error"):
                replies.append(msg)
    by_id = {r["id"]: r for r in replies}
    assert sorted(by_id) == [1, 2, 3, 4, 5]
    assert [by_id[i]["type"] for i in range(1, 6)] == ["ok", "ok", "error", "ok", "error"]
    assert [r["id"] for r in replies if r["id"] in (1, 4)] == [1, 4]
    assert seen["reader"][0] == "games"
    # the stale intents are answered by the seq rule wherever they ran
    await alice.expect_ok("games")
    assert len(server.poller) >= 1


async def test_a_pipelining_client_is_served_a_batch_at_a_time(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_server(rate=1e9, burst=10**9)
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 60}))["match"]
    await bob.expect_ok("join", match=mid)
    snap = await alice.snapshot(mid, lambda s: bool(s["legal"]))
    handed: list[int] = []
    real_handed_back = connection.ClientConnection.handed_back

    def counting(self: Any) -> None:
        handed.append(1)
        real_handed_back(self)

    monkeypatch.setattr(connection.ClientConnection, "handed_back", counting)
    n = 5 * connection.POLL_BATCH
    stale = {"type": "intent", "match": mid, "seq": snap["seq"] + 7,
             "intent": snap["legal"][0]}
    await alice.send_raw(b"".join(encode_frame(pack({**stale, "id": i})) for i in range(n)))
    got: list[int] = []
    with trio.fail_after(5):
        while len(got) < n:
            msg = await alice.next_message()
            if msg["type"] == "error":
                assert msg["code"] == "stale", msg
                got.append(msg["id"])
    assert got == list(range(n))
    assert handed   # the poller let go after a batch; the reader ran the rest


async def test_a_peer_gone_mid_frame_is_let_go_of(start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    await alice.expect_ok("games")
    with trio.fail_after(5):
        while len(server.poller) != 1:
            await trio.sleep(0.01)
    frame = encode_frame(pack({"type": "games", "id": 9}))
    await alice.send_raw(frame[: len(frame) // 2])
    await trio.sleep(0.05)
    await alice.aclose()
    with trio.fail_after(5):
        while server.clients or len(server.poller):
            await trio.sleep(0.01)


async def test_a_resumed_session_s_new_connection_is_served(start_server: Any) -> None:
    """The old connection's socket, closed on the server's side while it waited in
    the poller, may leave its number to the new one: the new one is served."""
    server = await start_server(grace=30.0)
    alice = await TestClient.welcomed(server.port, "alice")
    await alice.expect_ok("games")
    token = alice.welcome["token"]   # type: ignore[index]
    [conn] = list(server.clients)
    await conn.stream.aclose()   # closed behind the poller's back
    again = await TestClient.welcomed(server.port, "alice", resume=token)
    for _ in range(3):
        await again.expect_ok("games")
    created = await again.expect_ok("create", game="war", options={"cap": 60})
    assert created["match"]


async def test_each_pass_tells_how_many_sockets_it_serves() -> None:
    class Ready:
        def __init__(self, sock: socket.socket) -> None:
            self.sock = sock

        def serve_ready(self, now: float) -> bool:
            self.sock.recv(16)
            passes.append(("served", 0))
            return True

        def handed_back(self) -> None:
            pass

    passes: list[tuple[str, int]] = []
    poller = Poller()
    poller.on_pass = lambda ready: passes.append(("pass", ready))
    pairs = [socket.socketpair() for _ in range(2)]
    try:
        for ours, _ in pairs:
            poller.add(ours.fileno(), Ready(ours))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(poller.run)
            pairs[0][1].send(b"x")
            await trio.testing.wait_all_tasks_blocked()
            for _, theirs in pairs:
                theirs.send(b"x")
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    finally:
        for a, b in pairs:
            a.close()
            b.close()
    assert passes == [("pass", 1), ("served", 0), ("pass", 0),
                      ("pass", 2), ("served", 0), ("served", 0), ("pass", 0)]


class Recorder:
    """A pollable that reads what is sent and says so."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.served = trio.Event()

    def serve_ready(self, now: float) -> bool:
        self.sock.recv(16)
        self.served.set()
        return True

    def handed_back(self) -> None:
        pass


@asynccontextmanager
async def polling(poller: Poller) -> AsyncIterator[tuple[Recorder, socket.socket]]:
    """``poller`` running over one socket pair: its recorder, and the other end."""
    ours, theirs = socket.socketpair()
    recorder = Recorder(ours)
    try:
        poller.add(ours.fileno(), recorder)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(poller.run)
            yield recorder, theirs
            nursery.cancel_scope.cancel()
    finally:
        ours.close()
        theirs.close()


async def test_a_request_soon_after_a_pass_is_caught_by_polling() -> None:
    """Within the busy-poll window the poller polls instead of sleeping, and the
    run loop's other tasks go on between its polls (here: the sender)."""
    poller = Poller(busy_poll=0.01)
    async with polling(poller) as (first, theirs):
        theirs.send(b"x")
        await first.served.wait()
        second = first.served = trio.Event()
        await trio.sleep(0)   # runs while the poller polls
        theirs.send(b"y")
        with trio.fail_after(5):
            await second.wait()
    assert poller.spin.caught == 2   # both passes, neither after a sleep
    assert 0 < poller.spin.polled


async def test_without_busy_poll_the_poller_sleeps_at_once() -> None:
    poller = Poller()
    async with polling(poller) as (recorder, theirs):
        await trio.testing.wait_all_tasks_blocked()
        theirs.send(b"x")
        await recorder.served.wait()
    assert (poller.spin.caught, poller.spin.polled) == (0, 0.0)


async def test_a_whole_game_over_tcp_with_busy_poll(start_server: Any, connect: Any) -> None:
    server = await start_server(busy_poll=0.01)
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 60}))["match"]
    await bob.expect_ok("join", match=mid)
    final = await play_to_end({0: alice, 1: bob}, mid)
    assert final[0]["status"] == "finished"
    assert server.poller is not None and server.poller.spin.caught > 0
