"""A tiny protocol client for server tests, over protocol.Connection (sans-IO).

It answers server pings automatically (unless ``answer_pings`` is off), keeps
pushed messages (snapshots, presence, chat, bye) in ``self.pushes`` and lets a
test wait for replies and pushes with a bounded timeout.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import trio

from protocol.connection import CLOSED, NEED_DATA, Connection
from server.config import ServerConfig

WAIT = 5.0


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago (another process may take it
    before the caller binds it; for servers started as processes, which need a number)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_config(tmp_path: Path, **overrides: Any) -> ServerConfig:
    """A config for in-process servers: loopback, any port, a fresh store, quick timeouts."""
    base: dict[str, Any] = dict(host="127.0.0.1", port=0, db=tmp_path / "test.db", grace=30.0,
                                turn_timer=0, shutdown_timeout=0.5, bot_time_budget=0.01,
                                auto_flip_delay=0.0)
    base.update(overrides)
    return ServerConfig(**base)


def frame(msg: dict[str, Any]) -> bytes:
    """A frame holding ``msg`` as it is (no validation)."""
    body = msgpack.packb(msg)
    return struct.pack(">I", len(body)) + body


@dataclass
class Closed(Exception):
    """The server closed the connection."""

    last: list[dict[str, Any]]


class TestClient:
    """One connection to a server. Use ``async with TestClient.open(...)``."""

    __test__ = False  # not a pytest class

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.conn = Connection("client")
        self.pushes: list[dict[str, Any]] = []
        #: every push ever received, in order (pushes loses the ones a test took)
        self.seen: list[dict[str, Any]] = []
        self.replies: dict[int, dict[str, Any]] = {}
        self.welcome: dict[str, Any] | None = None
        self.answer_pings = True
        self.closed = False
        self._next_id = 0
        self._changed = trio.Event()

    @classmethod
    async def connect(cls, port: int) -> TestClient:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        return cls(stream)

    @classmethod
    async def welcomed(cls, port: int, name: str, resume: str | None = None) -> TestClient:
        """A client connected to ``port`` whose ``hello`` (resuming ``resume`` if given) was
        answered with a ``welcome``; fails the test on any other answer."""
        client = await cls.connect(port)
        welcome = await client.hello(name, resume=resume)
        assert welcome["type"] == "welcome", welcome
        return client

    async def send(self, msg: dict[str, Any]) -> None:
        await self.stream.send_all(self.conn.send(msg))

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def hello(self, name: str = "alice", resume: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": "hello", "protocol": [1], "name": name, "client": "test"}
        if resume is not None:
            msg["resume"] = resume
        await self.send(msg)
        first = await self.next_message()
        if first["type"] == "welcome":
            self.welcome = first
        return first

    async def next_message(self) -> dict[str, Any]:
        """The next message from the server, raw (pings are answered first).

        Raises:
            Closed: the server closed the connection.
        """
        while True:
            msg = self.conn.next_message()
            if msg is CLOSED:
                self.closed = True
                raise Closed(self.pushes[-3:])
            if msg is NEED_DATA:
                try:
                    data = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                self.conn.receive_data(data)
                continue
            if msg["type"] == "ping" and self.answer_pings:
                await self.send({"type": "pong", "id": msg["id"]})
            return msg

    async def pump(self) -> None:
        """Read one message into replies/pushes."""
        msg = await self.next_message()
        if msg["type"] in ("ok", "error") and "id" in msg:
            self.replies[msg["id"]] = msg
        elif msg["type"] != "ping":
            self.pushes.append(msg)
            self.seen.append(msg)

    async def request(self, mtype: str, raw: bool = False, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id and return its ok/error reply.
        ``raw``: skip the client-side validation (to send invalid messages)."""
        self._next_id += 1
        rid = self._next_id
        msg = {"type": mtype, "id": rid, **fields}
        if raw:
            await self.send_raw(frame(msg))
        else:
            await self.send(msg)
        with trio.fail_after(WAIT):
            while rid not in self.replies:
                await self.pump()
        return self.replies.pop(rid)

    async def expect_ok(self, mtype: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(mtype, **fields)
        assert reply["type"] == "ok", reply
        return reply

    async def expect_error(self, code: str, mtype: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(mtype, raw=True, **fields)
        assert reply["type"] == "error" and reply["code"] == code, reply
        return reply

    async def wait_push(self, pred: Callable[[dict[str, Any]], bool],
                        timeout: float = WAIT) -> dict[str, Any]:
        """The first stored or future push matching ``pred`` (removed from ``pushes``)."""
        with trio.fail_after(timeout):
            while True:
                for i, msg in enumerate(self.pushes):
                    if pred(msg):
                        return self.pushes.pop(i)
                await self.pump()

    async def snapshot(self, match: str, pred: Callable[[dict[str, Any]], bool] = lambda s: True,
                       timeout: float = WAIT) -> dict[str, Any]:
        """The newest snapshot of ``match`` satisfying ``pred`` (older ones are dropped)."""
        def ok(m: dict[str, Any]) -> bool:
            return m["type"] == "snapshot" and m["match"] == match and pred(m)
        found = await self.wait_push(ok, timeout)
        while True:
            later = [m for m in self.pushes if ok(m)]
            if not later:
                return found
            found = later[-1]
            self.pushes = [m for m in self.pushes if not ok(m)]

    async def aclose(self) -> None:
        await self.stream.aclose()


async def play_to_end(clients: dict[int, TestClient], match: str,
                      choose: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                      max_steps: int = 20000) -> dict[int, dict[str, Any]]:
    """Drive every seat by sending its first (or chosen) legal intent until the
    match is finished; returns the last snapshot of each seat."""
    snaps = {seat: await c.snapshot(match, lambda m: m["status"] != "waiting")
             for seat, c in clients.items()}
    for _ in range(max_steps):
        if all(s["status"] == "finished" for s in snaps.values()):
            return snaps
        for seat, client in clients.items():
            snap = snaps[seat]
            if not snap["legal"] or snap["status"] != "active":
                continue
            intent = choose(snap) if choose else snap["legal"][0]
            reply = await client.request("intent", match=match, seq=snap["seq"], intent=intent)
            assert reply["type"] == "ok", reply
            for s2, c2 in clients.items():
                snaps[s2] = await c2.snapshot(match, lambda m, n=reply["seq"]: m["seq"] >= n)
            break
        else:
            raise AssertionError(f"nobody can act: {snaps}")
    raise AssertionError("the match did not finish")
