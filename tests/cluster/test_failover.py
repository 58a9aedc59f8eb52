"""Clients with several addresses, over real TCP: the SDK, ``cardbot`` and a server
that dies under a bot (two single servers here: one that does not know the
session refuses its token, the same server restarted on its store accepts it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from client.bots.sdk import Summary, play
from client.session import Backoff, open_session
from server import metrics
from server.app import Server, serve
from server.config import ServerConfig
from tests.server.helpers import free_port, make_config

CARDBOT = Path(sys.executable).parent / "cardbot"
QUICK = Backoff(initial=0.05, maximum=0.2)


class InProcess:
    """A server in this process that can be killed (its task cancelled: connections
    drop without a bye) and started again on the same port and store."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.server: Server | None = None
        self._scope = trio.CancelScope()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.config.port}"

    async def start(self, nursery: trio.Nursery) -> Server:
        self._scope = trio.CancelScope()
        self.server = await nursery.start(self._run)
        return self.server

    async def _run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        with self._scope:
            await serve(self.config, task_status=task_status)

    async def kill(self) -> None:
        assert self.server is not None
        self._scope.cancel()
        await self.server.stopped.wait()


def bad_tokens() -> float:
    """``bad_token`` errors this process's servers have sent."""
    return sum(s.value for family in metrics.ERRORS.collect() for s in family.samples
               if s.name.endswith("_total") and s.labels["code"] == "bad_token")


def _config(tmp_path: Path, name: str) -> ServerConfig:
    return make_config(tmp_path, port=free_port(), db=tmp_path / f"{name}.db")


async def test_a_bot_whose_first_address_is_dead_plays_on_the_second(
        tmp_path: Path, nursery: trio.Nursery) -> None:
    live = await InProcess(_config(tmp_path, "live")).start(nursery)
    dead = f"127.0.0.1:{free_port()}"
    addresses = f"{dead},127.0.0.1:{live.port}"
    summary = await play(lambda view, legal: legal[0], game="datastructures",
                         mode="create", server_bot="random", options={"cap": 12},
                         addresses=addresses, session_options={"backoff": QUICK})
    assert len(summary.results) == 1 and summary.results[0].reason != "?"
    assert not live.lobby.matches or all(m.status == "finished"
                                         for m in live.lobby.matches.values())


async def test_cardbot_takes_several_addresses(tmp_path: Path, nursery: trio.Nursery) -> None:
    live = await InProcess(_config(tmp_path, "live")).start(nursery)
    dead = f"127.0.0.1:{free_port()}"
    env_home = tmp_path / "home"
    env_home.mkdir()
    with trio.fail_after(30):
        done = await trio.run_process(
            [str(CARDBOT), "connect", dead, f"127.0.0.1:{live.port}", "--game",
             "datastructures", "--create", "--vs-bot", "random", "--option", "cap=12",
             "--quiet"], capture_stdout=True, capture_stderr=True, check=False,
            env={"HOME": str(env_home), "XDG_STATE_HOME": str(env_home),
                 "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr.decode()
    assert "1 match:" in done.stdout.decode()


async def test_the_session_goes_to_the_next_address_and_back(
        tmp_path: Path, nursery: trio.Nursery) -> None:
    """A bot plays on A; A dies mid-match. B (a server of its own) refuses the
    resume token; A, started again on its store, accepts it and the match ends."""
    a = InProcess(_config(tmp_path, "a"))
    b = InProcess(_config(tmp_path, "b"))
    server_a = await a.start(nursery)
    await b.start(nursery)
    refused_before = bad_tokens()
    summary = Summary()
    finished = trio.Event()
    states: list[str] = []

    async def bot() -> None:
        await play(lambda view, legal: legal[0], game="datastructures", mode="create",
                   server_bot="random", options={"cap": 12}, think=0.02,
                   addresses=[a.address, b.address], summary=summary,
                   session_options={"backoff": QUICK},
                   on_event=states.append)
        finished.set()

    nursery.start_soon(bot)
    with trio.fail_after(20):
        while not any(m.seq >= 4 for m in server_a.lobby.matches.values()):
            await trio.sleep(0.01)
        await a.kill()
        while bad_tokens() == refused_before:
            await trio.sleep(0.01)  # B said it does not know the session
        await a.start(nursery)
        await finished.wait()
    assert len(summary.results) == 1
    result = summary.results[0]
    assert result.reconnects >= 1 and result.reason != "?"
    assert "reconnected" in states


async def test_a_session_connects_past_a_full_server(tmp_path: Path,
                                                     nursery: trio.Nursery) -> None:
    """A server that refuses the hello (too_many_connections) passes the turn on."""
    full = await InProcess(make_config(tmp_path, port=free_port(), db=tmp_path / "f.db",
                                       max_connections=1)).start(nursery)
    other = await InProcess(_config(tmp_path, "other")).start(nursery)
    addresses = [f"127.0.0.1:{full.port}", f"127.0.0.1:{other.port}"]
    async with open_session(name="first", addresses=addresses) as first:
        assert first.address == addresses[0]
        async with open_session(name="second", addresses=addresses) as second:
            assert second.address == addresses[1]
            await second.ping()
        await first.ping()
