"""client/session.py against a small fake server built from protocol.Connection(role="server")."""

from __future__ import annotations

import itertools
import random
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing

from client.session import (
    Backoff,
    ConnectionLost,
    ServerError,
    SessionClosed,
    SessionState,
    open_session,
)
from protocol.connection import CLOSED, NEED_DATA, Connection
from protocol.errors import LocalProtocolError, ProtocolError
from protocol.events import Create, ListGames, Pong
from protocol.versions import negotiate

LIMITS = {
    "max_frame": 65536,
    "rate": 500,
    "burst": 1000,
    "ping_interval": 5.0,
    "ping_timeout": 10.0,
    "grace": 60.0,
    "handshake_timeout": 10.0,
}


def snapshot(match: str, seq: int) -> dict[str, Any]:
    return {
        "type": "snapshot",
        "match": match,
        "game": "war",
        "seq": seq,
        "seat": 0,
        "view": {"pile": 26},
        "legal": [{"type": "flip"}],
        "status": "active",
        "events": [],
        "players": [],
        "options": {},
        "commitment": "00" * 32,
        "deadline": None,
        "auto_flip": False,
    }


class FakeServer:
    """Speaks just enough of the protocol: hello/resume, create, join errors, chat, pings."""

    def __init__(self, nursery: trio.Nursery, *, answer_pings: bool = True) -> None:
        self.nursery = nursery
        self.answer_pings = answer_pings
        self.tokens: dict[str, list[str]] = {}  # token -> matches it sits in
        self.hellos: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.streams: list[trio.abc.Stream] = []
        self.refuse = False
        self.hold_requests = False
        self.reply_delay = 0.0
        self.connects = 0
        self._tokens = itertools.count(1)

    async def connect(self) -> trio.abc.Stream:
        self.connects += 1
        if self.refuse:
            raise OSError("connection refused")
        client_side, server_side = trio.testing.memory_stream_pair()
        self.nursery.start_soon(self.handle, server_side)
        return client_side

    async def drop_all(self) -> None:
        for stream in self.streams:
            await stream.aclose()
        self.streams.clear()

    async def handle(self, stream: trio.abc.Stream) -> None:
        self.streams.append(stream)
        conn = Connection("server")
        send = stream.send_all
        token = ""
        try:
            while True:
                try:
                    msg = conn.next_message()
                except ProtocolError as exc:
                    await send(conn.send(exc.to_message()))
                    if exc.fatal:
                        return
                    continue
                if msg is NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
                    continue
                if msg is CLOSED:
                    return
                assert isinstance(msg, dict)
                self.received.append(msg)
                mtype = msg["type"]
                if mtype == "hello":
                    self.hellos.append(msg)
                    try:
                        version = negotiate(msg["protocol"])
                    except ProtocolError as exc:
                        await send(conn.send(exc.to_message()))
                        return
                    resume = msg.get("resume")
                    if resume is not None and resume not in self.tokens:
                        await send(
                            conn.send(ProtocolError("bad_token", "unknown token").to_message())
                        )
                        return
                    token = resume or f"tok-{next(self._tokens)}"
                    self.tokens.setdefault(token, [])
                    welcome = {
                        "type": "welcome",
                        "protocol": version,
                        "server": "fake/1",
                        "session": f"s-{token}",
                        "token": token,
                        "name": msg["name"],
                        "resumed": resume is not None,
                        "limits": LIMITS,
                    }
                    await send(conn.send(welcome))
                    for match in self.tokens[token]:
                        await send(conn.send(snapshot(match, 1)))
                elif mtype == "ping":
                    if self.answer_pings:
                        await send(conn.send({"type": "pong", "id": msg["id"]}))
                elif mtype == "pong":
                    pass
                elif self.hold_requests:
                    continue
                elif mtype == "create":
                    match = f"m{len(self.tokens[token]) + 1}"
                    self.tokens[token].append(match)
                    await send(
                        conn.send({"type": "ok", "id": msg["id"], "match": match, "seat": 0})
                    )
                    await send(conn.send(snapshot(match, 0)))
                elif mtype == "join":
                    err = ProtocolError("no_such_match", f"no match {msg['match']}", "match")
                    await send(conn.send(err.to_message(msg.get("id"))))
                elif mtype == "chat":
                    await send(conn.send({"type": "ok", "id": msg["id"]}))
                    push = {
                        "type": "chat",
                        "match": msg["match"],
                        "seat": 0,
                        "name": "a",
                        "text": msg["text"],
                    }
                    await send(conn.send(push))
                elif mtype == "resign":  # used to make the server say goodbye
                    reason = "session_resumed" if msg["match"] == "elsewhere" else "server_shutdown"
                    await send(conn.send({"type": "bye", "reason": reason, "message": "bye"}))
                    return
                else:
                    await trio.sleep(self.reply_delay)
                    reply = {"type": "ok", "id": msg["id"]} if "id" in msg else {"type": "ok"}
                    await send(conn.send(reply))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await stream.aclose()


async def test_handshake_request_and_pushes() -> None:
    states: list[SessionState] = []
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(
            name="alice", client="t/1", connect=server.connect, on_state=states.append
        ) as s:
            assert s.state is SessionState.CONNECTED
            assert (s.token, s.session_id, s.resumed) == ("tok-1", "s-tok-1", False)
            assert s.limits["ping_interval"] == 5.0
            reply = await s.request({"type": "create", "game": "war"})
            assert reply == {"type": "ok", "id": reply["id"], "match": "m1", "seat": 0}
            push = await s.next_push(timeout=1)
            assert push["type"] == "snapshot" and push["match"] == "m1"
            reply2 = await s.request({"type": "chat", "match": "m1", "text": "hi"})
            assert reply2["id"] != reply["id"]
            assert (await s.next_push(timeout=1))["text"] == "hi"
        assert server.hellos[0] == {
            "type": "hello",
            "protocol": [1, 2],
            "name": "alice",
            "client": "t/1",
        }
        nursery.cancel_scope.cancel()
    assert states == [SessionState.CONNECTED, SessionState.CLOSED]
    assert s.state is SessionState.CLOSED


async def test_error_reply_raises_server_error() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="bob", connect=server.connect) as s:
            with pytest.raises(ServerError) as info:
                await s.request({"type": "join", "match": "nope"})
            assert (info.value.code, info.value.field) == ("no_such_match", "match")
            # the connection survives
            assert (await s.request({"type": "games"}))["type"] == "ok"
        nursery.cancel_scope.cancel()


async def test_invalid_request_is_refused_locally() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="bob", connect=server.connect) as s:
            with pytest.raises(ProtocolError) as info:
                await s.request({"type": "join"})
            assert info.value.field == "match"
            assert (await s.request({"type": "games"}))["type"] == "ok"
        nursery.cancel_scope.cancel()


async def test_requests_as_events_and_our_own_mistakes_refused_before_sending() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="bob", connect=server.connect) as s:
            reply = await s.request(Create(game="war"))
            assert (reply["type"], reply["match"]) == ("ok", "m1")
            for bad in ({"type": "join", "match": "m1", "sneaky": 1}, {"type": "teleport"}):
                with pytest.raises(LocalProtocolError):
                    await s.request(bad)
            with pytest.raises(ValueError, match="not a request"):
                await s.request(Pong(id=1))
            assert (await s.request(ListGames()))["type"] == "ok"
        nursery.cancel_scope.cancel()


async def test_answers_server_pings() -> None:
    client_side, server_side = trio.testing.memory_stream_pair()

    async def connect() -> trio.abc.Stream:
        return client_side

    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            conn = Connection("server")
            while (msg := conn.next_message()) is NEED_DATA:
                conn.receive_data(await server_side.receive_some(65536))
            welcome = {
                "type": "welcome",
                "protocol": 1,
                "server": "x",
                "session": "s",
                "token": "t",
                "name": "n",
                "resumed": False,
                "limits": LIMITS,
            }
            await server_side.send_all(conn.send(welcome) + conn.send({"type": "ping", "id": 77}))
            while (msg := conn.next_message()) is NEED_DATA:
                conn.receive_data(await server_side.receive_some(65536))
            assert msg == {"type": "pong", "id": 77}
            pong_seen.set()

        pong_seen = trio.Event()
        nursery.start_soon(serve)
        async with open_session(name="n", connect=connect):
            with trio.fail_after(2):
                await pong_seen.wait()


async def test_heartbeat_measures_rtt(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect, ping_interval=1.0) as s:
            assert s.rtt is None
            await trio.sleep(3.5)
            pings = [m for m in server.received if m["type"] == "ping"]
            assert len(pings) == 3
            assert s.rtt is not None and s.rtt >= 0
            assert await s.ping() >= 0
        nursery.cancel_scope.cancel()


async def test_dead_server_is_detected(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery, answer_pings=False)
        async with open_session(name="a", connect=server.connect) as s:
            start = trio.current_time()
            with pytest.raises(SessionClosed):
                async for _ in s.pushes:
                    pass
                await s.request({"type": "games"})
            # first ping after ping_interval (5), dead ping_timeout (10) later
            assert trio.current_time() - start == pytest.approx(15.0)
            assert s.close_reason == "heartbeat_timeout"
            assert s.state is SessionState.CLOSED
        nursery.cancel_scope.cancel()


async def test_reconnects_and_resumes_with_the_token(
    autojump_clock: trio.testing.MockClock,
) -> None:
    states: list[SessionState] = []
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(
            name="a", connect=server.connect, reconnect=True, on_state=states.append, seed=1
        ) as s:
            await s.request({"type": "create", "game": "war"})
            assert (await s.next_push())["seq"] == 0
            server.hold_requests = True

            async def in_flight() -> None:
                with pytest.raises(ConnectionLost):
                    await s.request({"type": "games"})

            async with trio.open_nursery() as inner:
                inner.start_soon(in_flight)
                await trio.sleep(0.1)
                server.refuse = True
                await server.drop_all()
            await trio.sleep(1)
            assert s.state is SessionState.RECONNECTING
            server.refuse = False
            server.hold_requests = False
            # a request made while reconnecting waits for the new connection
            reply = await s.request({"type": "games"})
            assert reply["type"] == "ok"
            assert s.state is SessionState.CONNECTED and s.resumed and s.reconnects == 1
            assert server.hellos[-1]["resume"] == "tok-1" and s.token == "tok-1"
            fresh = await s.next_push(timeout=1)
            assert (fresh["type"], fresh["match"], fresh["seq"]) == ("snapshot", "m1", 1)
        nursery.cancel_scope.cancel()
    assert states == [
        SessionState.CONNECTED,
        SessionState.RECONNECTING,
        SessionState.CONNECTED,
        SessionState.CLOSED,
    ]
    assert server.connects >= 3  # at least one refused attempt in between


async def test_reconnect_gives_up_after_the_attempts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        backoff = Backoff(initial=1, maximum=4, attempts=3)
        async with open_session(
            name="a", connect=server.connect, reconnect=True, backoff=backoff
        ) as s:
            server.refuse = True
            await server.drop_all()
            while s.state is SessionState.CONNECTED:
                await trio.sleep(0)
            with pytest.raises(SessionClosed):
                await s.request({"type": "games"})
            assert s.close_reason == "reconnect_failed"
            assert server.connects == 4
        nursery.cancel_scope.cancel()


async def test_bad_token_on_reconnect_ends_the_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect, reconnect=True) as s:
            server.tokens.clear()  # the server forgot us
            await server.drop_all()
            pushes = [m async for m in s.pushes]
            assert pushes == [{"type": "error", "code": "bad_token", "message": "unknown token"}]
            assert s.close_reason == "bad_token" and s.state is SessionState.CLOSED
        nursery.cancel_scope.cancel()


async def test_bad_token_at_start_raises() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        with pytest.raises(ServerError) as info:
            async with open_session(name="a", connect=server.connect, token="stolen"):
                pass  # pragma: no cover
        assert info.value.code == "bad_token"
        nursery.cancel_scope.cancel()


async def test_unsupported_version_carries_versions() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        import client.session as mod

        old = mod.PROTOCOL_VERSIONS
        mod.PROTOCOL_VERSIONS = (9,)
        try:
            with pytest.raises(ServerError) as info:
                async with open_session(name="a", connect=server.connect):
                    pass  # pragma: no cover
        finally:
            mod.PROTOCOL_VERSIONS = old
        assert (info.value.code, info.value.versions) == ("unsupported_version", [1, 2])
        nursery.cancel_scope.cancel()


async def test_bye_is_pushed_and_closes_without_reconnect() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect) as s:
            with pytest.raises((ConnectionLost, SessionClosed)):
                await s.request({"type": "resign", "match": "m1"})
            pushes = [m async for m in s.pushes]
            assert pushes == [{"type": "bye", "reason": "server_shutdown", "message": "bye"}]
            assert s.close_reason == "server_shutdown"
        nursery.cancel_scope.cancel()


async def test_connect_failure_raises_oserror() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        server.refuse = True
        with pytest.raises(OSError):
            async with open_session(name="a", connect=server.connect):
                pass  # pragma: no cover
        nursery.cancel_scope.cancel()


def test_backoff_grows_caps_and_jitters() -> None:
    rng = random.Random(3)
    b = Backoff(initial=0.5, maximum=8, factor=2, jitter=0.5)
    for attempt, base in enumerate([0.5, 1, 2, 4, 8, 8, 8]):
        delays = [b.delay(attempt, rng) for _ in range(50)]
        assert all(base / 2 <= d <= base for d in delays)
        assert len(set(delays)) > 1
    assert b.delay(10_000, rng) <= 8


async def test_over_loopback_tcp() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        listeners = await nursery.start(partial(trio.serve_tcp, server.handle, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        async with open_session("127.0.0.1", port, name="tcp") as s:
            reply = await s.request({"type": "create", "game": "war"})
            assert reply["match"] == "m1"
            assert (await s.next_push(timeout=2))["type"] == "snapshot"
            assert await s.ping() < 1
        nursery.cancel_scope.cancel()


async def test_unread_pushes_never_stall_replies() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect, push_buffer=4) as s:
            for i in range(10):
                await s.request({"type": "chat", "match": "m1", "text": str(i)})
            await trio.testing.wait_all_tasks_blocked()  # the last push follows its ok
            assert s.dropped_pushes == 6
            assert [p["text"] for p in [s.pushes.receive_nowait() for _ in range(4)]] == [
                "6",
                "7",
                "8",
                "9",
            ]
        nursery.cancel_scope.cancel()


async def test_errors_raised_in_the_block_come_out_unwrapped() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        with pytest.raises(KeyError):
            async with open_session(name="a", connect=server.connect):
                raise KeyError("mine")
        nursery.cancel_scope.cancel()


async def test_bye_server_shutdown_reconnects_but_session_resumed_does_not(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect, reconnect=True) as s:
            with pytest.raises(ConnectionLost):
                await s.request({"type": "resign", "match": "m1"})
            assert (await s.next_push())["reason"] == "server_shutdown"
            await s.wait_connected()
            assert s.reconnects == 1 and s.resumed
            with pytest.raises(ConnectionLost):
                await s.request({"type": "resign", "match": "elsewhere"})
            assert [m["reason"] async for m in s.pushes] == ["session_resumed"]
            assert s.close_reason == "session_resumed" and s.reconnects == 1
        nursery.cancel_scope.cancel()


# --------------------------------------------------------------------------- the real server


def _config(tmp_path: Any, port: int = 0) -> Any:
    from server.config import ServerConfig

    return ServerConfig(
        host="127.0.0.1",
        port=port,
        db=tmp_path / "session.db",
        turn_timer=0,
        shutdown_timeout=0.5,
        bot_time_budget=0.01,
        auto_flip_delay=0.0,
    )


async def _play_until(session: Any, match: str, done: Any) -> dict[str, Any]:
    """Answer every snapshot of ``match`` with its first legal intent until ``done(snapshot)``."""
    while True:
        push = await session.next_push(timeout=10)
        if push["type"] != "snapshot" or push["match"] != match:
            continue
        if done(push):
            return push
        if push["legal"]:
            try:
                await session.request(
                    {
                        "type": "intent",
                        "match": match,
                        "seq": push["seq"],
                        "intent": push["legal"][0],
                    }
                )
            except ServerError as exc:  # acting on every snapshot: some were outdated
                assert exc.code in ("stale", "not_your_turn", "match_finished")


async def test_against_the_real_server_plays_to_the_end_and_verifies_the_shuffle(
    tmp_path: Any,
) -> None:
    from engine.fairness import verify
    from server.app import serve

    async with trio.open_nursery() as nursery:
        server = await nursery.start(partial(serve, _config(tmp_path)))
        async with open_session("127.0.0.1", server.port, name="sess", client="test/1") as s:
            assert s.limits["max_frame"] == 65536 and s.token
            reply = await s.request(
                {"type": "create", "game": "war", "bot": "random", "options": {"cap": 15}}
            )
            last = await _play_until(s, reply["match"], lambda snap: snap["status"] == "finished")
            assert verify(last["reveal"]["seed"], last["reveal"]["salt"], last["commitment"])
            assert set(last["result"]) == {"winner", "reason"}
            with pytest.raises(ServerError) as info:
                await s.request({"type": "join", "match": "nope"})
            assert info.value.code == "no_such_match"
            assert await s.ping() < 1
        server.shutdown()


async def test_against_the_real_server_resumes_after_a_restart(tmp_path: Any) -> None:
    from server.app import serve

    states: list[SessionState] = []
    async with trio.open_nursery() as nursery:
        server = await nursery.start(partial(serve, _config(tmp_path)))
        port = server.port

        async def connect() -> trio.abc.Stream:
            return await trio.open_tcp_stream("127.0.0.1", port)

        backoff = Backoff(initial=0.05, maximum=0.2)
        async with open_session(
            name="phoenix", connect=connect, reconnect=True, backoff=backoff, on_state=states.append
        ) as s:
            reply = await s.request({"type": "create", "game": "datastructures", "bot": "random"})
            match = reply["match"]
            before = await _play_until(s, match, lambda snap: snap["seq"] >= 3)
            token = s.token
            server.shutdown()
            await server.stopped.wait()
            while (bye := await s.next_push(timeout=5))["type"] != "bye":
                pass  # snapshots sent before the shutdown
            assert bye["reason"] == "server_shutdown"
            server = await nursery.start(partial(serve, _config(tmp_path, port=port)))
            with trio.fail_after(10):
                await s.wait_connected()
            assert s.resumed and s.token == token and s.reconnects == 1
            fresh = await s.next_push(
                timeout=5
            )  # the first push after the bye: the resume snapshot
            assert (fresh["type"], fresh["match"]) == ("snapshot", match)
            assert fresh["seq"] >= before["seq"] and fresh["status"] == "active"
            reply = await s.request({"type": "resign", "match": match})
            assert reply["match"] == match
        server.shutdown()
    assert states[:3] == [SessionState.CONNECTED, SessionState.RECONNECTING, SessionState.CONNECTED]


async def test_late_replies_are_dropped_and_send_errors_are_pushed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="a", connect=server.connect, ping_interval=1000) as s:
            server.reply_delay = 2
            with pytest.raises(trio.TooSlowError):
                await s.request({"type": "games"}, timeout=1)
            await trio.sleep(2)  # the late ok arrives and is dropped
            server.reply_delay = 0
            await s.send({"type": "games"})  # its ok (no id) is nobody's
            await s.send({"type": "join", "match": "zzz"})  # its error is pushed
            push = await s.next_push(timeout=1)
            assert (push["type"], push["code"]) == ("error", "no_such_match")
            await trio.testing.wait_all_tasks_blocked()
            assert s.pushes.statistics().current_buffer_used == 0
        nursery.cancel_scope.cancel()


def _trickle_one_way() -> tuple[trio.testing.MemorySendStream, trio.testing.MemoryReceiveStream]:
    """A one-way memory stream that moves one byte per pump."""
    send, recv = trio.testing.memory_stream_one_way_pair()

    def pump() -> None:
        trio.testing.memory_stream_pump(send, recv, max_bytes=1)

    async def async_pump() -> None:
        pump()

    send.send_all_hook = async_pump
    recv.receive_some_hook = async_pump
    return send, recv


async def test_works_when_bytes_trickle_one_at_a_time() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        c2s_send, c2s_recv = _trickle_one_way()
        s2c_send, s2c_recv = _trickle_one_way()
        nursery.start_soon(server.handle, trio.StapledStream(s2c_send, c2s_recv))

        async def connect() -> trio.abc.Stream:
            return trio.StapledStream(c2s_send, s2c_recv)

        async with open_session(name="slow", connect=connect) as s:
            reply = await s.request({"type": "create", "game": "war"})
            assert reply["match"] == "m1"
            assert (await s.next_push(timeout=5))["type"] == "snapshot"
        nursery.cancel_scope.cancel()


async def test_many_concurrent_requests_get_their_own_replies() -> None:
    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="busy", connect=server.connect, outbox_size=8) as s:
            replies: dict[int, dict[str, Any]] = {}

            async def one(i: int) -> None:
                replies[i] = await s.request({"type": "chat", "match": "m1", "text": f"n{i}"})

            async with trio.open_nursery() as inner:
                for i in range(300):
                    inner.start_soon(one, i)
            ids = {r["id"] for r in replies.values()}
            assert len(replies) == 300 and len(ids) == 300
        nursery.cancel_scope.cancel()


async def test_a_request_the_server_never_answers_times_out(autojump_clock) -> None:
    """A server that never replies does not hang the caller: the session's
    request_timeout (DEFAULT_REQUEST_TIMEOUT unless set) ends the wait, the late
    reply is dropped, and the session stays usable."""
    from client.session import DEFAULT_REQUEST_TIMEOUT

    async with trio.open_nursery() as nursery:
        server = FakeServer(nursery)
        async with open_session(name="bob", connect=server.connect, ping_interval=1e6) as s:
            assert s.request_timeout == DEFAULT_REQUEST_TIMEOUT == 30.0
            server.hold_requests = True
            start = trio.current_time()
            with pytest.raises(trio.TooSlowError):
                await s.request({"type": "games"})
            assert trio.current_time() - start == pytest.approx(DEFAULT_REQUEST_TIMEOUT)
            s.request_timeout = 2.0
            with pytest.raises(trio.TooSlowError):
                await s.request({"type": "games"})
            assert trio.current_time() - start == pytest.approx(DEFAULT_REQUEST_TIMEOUT + 2.0)
            server.hold_requests = False
            assert (await s.request({"type": "games"}))["type"] == "ok"
        nursery.cancel_scope.cancel()
