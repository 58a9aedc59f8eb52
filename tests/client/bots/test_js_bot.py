"""examples/minimal_bot.js (JavaScript written from docs/protocol.md alone) plays real
matches against a real server over loopback TCP: against a server bot, against
itself through the matchmaking queue, and across a connection cut mid-match."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from client.session import open_session

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "minimal_bot.js"
NODE = shutil.which("node")
FINISHED = re.compile(
    r"^finished match=(?P<match>\S+) game=(?P<game>\S+) seat=(?P<seat>[01]) winner=(?P<winner>\S+)"
    r" outcome=(?P<outcome>win|loss|draw) reason=(?P<reason>\S+) moves=(?P<moves>\d+)"
    r" mine=(?P<mine>\d+) stale=(?P<stale>\d+)$")


@pytest.fixture
def node() -> str:
    """The node executable; a missing one skips, or fails where CI installs it
    (``CARDSERVER_REQUIRE_NODE`` set)."""
    if NODE is None:
        if os.environ.get("CARDSERVER_REQUIRE_NODE"):
            pytest.fail("node is not on PATH and CARDSERVER_REQUIRE_NODE is set")
        pytest.skip("node is not on PATH")
    return NODE


async def _bot(node: str, port: int, *args: str) -> tuple[list[dict[str, str]], str]:
    """Runs the JavaScript bot to its end; -> (its finished lines, parsed; its stderr).
    Fails the test on a non-zero exit or an output line it does not document."""
    done = await trio.run_process([node, str(SCRIPT), f"127.0.0.1:{port}", *args],
                                  capture_stdout=True, capture_stderr=True, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, out + err
    lines = out.splitlines()
    parsed = [FINISHED.match(line) for line in lines]
    assert all(parsed), out
    return [m.groupdict() for m in parsed if m], err


async def _finished_summary(port: int, match: str) -> dict:
    """The server's own summary of a finished match, asked by the Python client."""
    async with open_session("127.0.0.1", port, name="checker", client="test/1") as session:
        reply = await session.request({"type": "matches", "status": "finished", "limit": 100})
    (summary,) = [s for s in reply["matches"] if s["match"] == match]
    return summary


def _agrees_with_server(line: dict[str, str], summary: dict) -> None:
    winner = summary["result"]["winner"]
    assert line["winner"] == ("none" if winner is None else str(winner))
    assert line["reason"] == summary["result"]["reason"]
    assert int(line["moves"]) == summary["seq"]


async def test_the_codec_reproduces_the_documents_byte_dumps(node: str) -> None:
    done = await trio.run_process([node, str(SCRIPT), "--selftest"], capture_stdout=True,
                                  check=False)
    assert done.returncode == 0 and done.stdout == b"selftest ok\n", done.stdout


async def test_a_whole_datastructures_match_against_a_server_bot(node: str, start_server) -> None:
    server = await start_server()
    with trio.fail_after(20):
        (line,), err = await _bot(node, server.port, "datastructures", "--vs-bot", "random")
    assert line["game"] == "datastructures" and line["seat"] == "0"
    assert line["stale"] == "0" and int(line["mine"]) > 0, err
    assert "protocol 2" in err  # it offered [1, 2] and rebuilt every delta snapshot
    _agrees_with_server(line, await _finished_summary(server.port, line["match"]))


async def test_two_javascript_bots_play_war_through_the_queue(node: str, start_server) -> None:
    server = await start_server()
    lines: dict[str, dict[str, str]] = {}

    async def run(name: str, protocol: str) -> None:
        (lines[name],), _ = await _bot(node, server.port, "war", "--name", name,
                                       "--protocol", protocol, "--option", "cap=300")

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, "alice", "1")
            nursery.start_soon(run, "bob", "2")
    a, b = lines["alice"], lines["bob"]
    assert a["match"] == b["match"] and {a["seat"], b["seat"]} == {"0", "1"}
    assert a["winner"] == b["winner"] and a["moves"] == b["moves"]
    assert {a["outcome"], b["outcome"]} in ({"win", "loss"}, {"draw"})
    # Every accepted intent is one of theirs, each flip answered, none of them stale.
    assert int(a["mine"]) + int(b["mine"]) == int(a["moves"])
    assert a["stale"] == b["stale"] == "0"
    _agrees_with_server(a, await _finished_summary(server.port, a["match"]))


def _length(buffer: bytes) -> int:
    """The body length a frame header announces (4 bytes, big-endian)."""
    return int.from_bytes(buffer[:4], "big")


class CuttingProxy:
    """A TCP relay to the server that cuts its first connection (both directions,
    at once) after the client has sent ``cut_after`` frames; later connections are
    relayed untouched."""

    def __init__(self, server_port: int, cut_after: int) -> None:
        self.server_port = server_port
        self.cut_after = cut_after
        self.connections = 0
        self.cut = False

    async def handle(self, client: trio.SocketStream) -> None:
        self.connections += 1
        first = self.connections == 1
        server = await trio.open_tcp_stream("127.0.0.1", self.server_port)
        async with client, server, trio.open_nursery() as nursery:

            async def upstream() -> None:
                pending, frames = b"", 0
                async for data in client:
                    await server.send_all(data)
                    if not first:
                        continue
                    pending += data
                    while len(pending) >= 4 and len(pending) >= (end := 4 + _length(pending)):
                        pending, frames = pending[end:], frames + 1
                    if frames >= self.cut_after:
                        self.cut = True
                        nursery.cancel_scope.cancel()
                        return
                nursery.cancel_scope.cancel()

            async def downstream() -> None:
                async for data in server:
                    await client.send_all(data)
                nursery.cancel_scope.cancel()

            nursery.start_soon(upstream)
            nursery.start_soon(downstream)


async def test_the_bot_resumes_its_session_after_its_connection_is_cut(
        node: str, start_server, nursery: trio.Nursery) -> None:
    server = await start_server()
    proxy = CuttingProxy(server.port, cut_after=30)  # hello, create, then 28 intents
    (listener,) = await nursery.start(partial(trio.serve_tcp, proxy.handle, 0,
                                                host="127.0.0.1"))
    proxy_port = listener.socket.getsockname()[1]
    with trio.fail_after(20):
        (line,), err = await _bot(node, proxy_port, "datastructures", "--vs-bot", "random")
    assert proxy.cut and proxy.connections == 2, err
    assert "connection lost" in err and "resumed session" in err, err
    summary = await _finished_summary(server.port, line["match"])
    _agrees_with_server(line, summary)
    assert summary["players"][int(line["seat"])]["name"].startswith("jsbot-")
    assert int(line["mine"]) > 28  # answers to intents sent after the resume


CARDSERVER = Path(sys.executable).parent / "cardserver"


class ServerProcess:
    """``cardserver`` as a subprocess on one store; ``start`` again after ``stop``
    serves the same store on the same port."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.port = 0
        self.starts = 0
        self.process: trio.Process | None = None

    async def start(self) -> None:
        log = self.db.with_suffix(f".{self.starts}.log")
        self.starts += 1
        with log.open("wb") as stderr:  # a file, so that the server never blocks on a full pipe
            self.process = await trio.lowlevel.open_process(
                [str(CARDSERVER), "--host", "127.0.0.1", "--port", str(self.port),
                 "--db", str(self.db), "--turn-timer", "0", "--grace", "30", "--bot-workers", "1",
                 "--bot-time-budget", "0.01", "--shutdown-timeout", "0.5"], stderr=stderr)
        while (found := re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text())) is None:
            assert self.process.poll() is None, log.read_text()
            await trio.sleep(0.05)
        self.port = int(found.group(1))

    async def stop(self) -> None:
        """SIGTERM: the server says ``bye server_shutdown`` to everyone and exits."""
        assert self.process is not None
        self.process.terminate()
        assert await self.process.wait() == 0


async def test_the_bot_resumes_its_match_after_a_server_restart(node: str, tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "restart.db")
    await server.start()
    bot = await trio.lowlevel.open_process(
        [node, str(SCRIPT), f"127.0.0.1:{server.port}", "datastructures", "--vs-bot", "random",
         "--think", "0.02"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert bot.stdout is not None and bot.stderr is not None
    err = b""
    try:
        with trio.fail_after(25):
            while b"paired: match" not in err:
                chunk = await bot.stderr.receive_some(4096)
                assert chunk, err.decode()
                err += chunk
            await trio.sleep(0.5)  # a few moves into the match (about 100 of its own to come)
            await server.stop()
            await server.start()
            out = b""
            async for chunk in bot.stdout:
                out += chunk
            async for chunk in bot.stderr:
                err += chunk
            assert await bot.wait() == 0, err.decode()
        (line,) = [m.groupdict() for m in map(FINISHED.match, out.decode().splitlines()) if m]
        assert "bye server_shutdown" in err.decode() and "resumed session" in err.decode()
        _agrees_with_server(line, await _finished_summary(server.port, line["match"]))
    finally:
        for process in (bot, server.process):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()
