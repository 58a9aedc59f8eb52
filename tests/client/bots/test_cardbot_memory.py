"""A bot that remembers: its resume token and matches survive a restart (#14)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import trio

from client.bots.sdk import play
from client.state import ClientState, SessionMemory

CARDBOT = Path(sys.executable).parent / "cardbot"


def first_legal(view: dict, legal: list) -> dict:
    return legal[0]


def _interruptible() -> None:
    """Run in the child before exec: Ctrl-C at its default, as in a terminal. A suite
    started as a background job of a non-interactive shell ignores SIGINT, the child
    inherits that, and Python then installs no KeyboardInterrupt handler at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_a_restarted_bot_resumes_its_seat(start_server, tmp_path: Path) -> None:
    server = await start_server()
    state = ClientState(tmp_path / "state")
    address = f"127.0.0.1:{server.port}"
    events: list[str] = []
    with trio.move_on_after(0.6):  # the bot "crashes" in the middle of its match
        await play(first_legal, "127.0.0.1", server.port, game="war", name="robo",
                   mode="create", server_bot="random", options={"cap": 5000}, think=0.05,
                   on_event=events.append, memory=SessionMemory(state, address, "robo"))
    remembered = state.load(address, "robo")
    assert remembered.resume and len(remembered.matches) == 1
    (match,) = remembered.matches
    assert any(f"created match {match}" in e for e in events)

    events.clear()
    summary = await play(first_legal, "127.0.0.1", server.port, game="war", name="robo",
                         mode="create", server_bot="random", options={"cap": 5000},
                         on_event=events.append, memory=SessionMemory(state, address, "robo"))
    assert f"back in match {match} (seat 0)" in events
    assert [r.match for r in summary.results] == [match]  # that one counted; no new one
    assert state.load(address, "robo").matches == ()
    assert state.load(address, "robo").resume == remembered.resume


async def test_forget_starts_afresh(start_server, tmp_path: Path) -> None:
    server = await start_server()
    state = ClientState(tmp_path / "state")
    address = f"127.0.0.1:{server.port}"
    state.update(address, "robo", resume="not-a-token-of-this-server", matches=["m1"])
    with SessionMemory(state, address, "robo", forget=True) as memory:
        assert memory.remembered.resume is None
    # and a token the server does not know is dropped for a new session, not fatal
    state.update(address, "robo", resume="not-a-token-of-this-server")
    events: list[str] = []
    summary = await play(first_legal, "127.0.0.1", server.port, game="war", name="robo",
                         mode="create", server_bot="random", options={"cap": 30},
                         on_event=events.append, memory=SessionMemory(state, address, "robo"))
    assert len(summary.results) == 1 and any("no longer knows" in e for e in events)
    assert state.load(address, "robo").resume not in (None, "not-a-token-of-this-server")


async def test_cardbot_resumes_after_ctrl_c(start_server) -> None:
    """The real command: interrupted mid-match, started again, it is back in its match."""
    server = await start_server()
    command = [str(CARDBOT), "connect", f"127.0.0.1:{server.port}", "--game", "war",
               "--create", "--vs-bot", "random", "--option", "cap=5000", "--name", "robo"]
    first = await trio.lowlevel.open_process([*command, "--think", "0.05"],
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                             preexec_fn=_interruptible)
    assert first.stdout is not None
    out = b""
    with trio.fail_after(15):
        while b"created match" not in out:
            out += await first.stdout.receive_some(1024)
    await trio.sleep(0.5)
    first.send_signal(signal.SIGINT)
    with trio.fail_after(10):
        await first.wait()
    match = out.decode().split("created match ")[1].split()[0]
    with trio.fail_after(60):
        again = await trio.run_process([*command], capture_stdout=True, capture_stderr=True,
                                       check=False)
    text = again.stdout.decode()
    assert again.returncode == 0, again.stderr.decode()
    assert f"back in match {match} (seat 0)" in text
    assert "created match" not in text and f"match {match} over" in text


async def test_two_cardbots_of_one_name_each_play_their_own_session(start_server) -> None:
    """The same command twice at once on one machine (the default name is per
    strategy): the second does not resume, and so take over, the first one's
    session; each plays its match to the end."""
    server = await start_server()
    command = [str(CARDBOT), "connect", f"127.0.0.1:{server.port}", "--game", "war",
               "--create", "--vs-bot", "random", "--option", "cap=300", "--think", "0.01"]
    results: list[subprocess.CompletedProcess[bytes]] = []

    async def run_one() -> None:
        results.append(await trio.run_process(command, capture_stdout=True,
                                              capture_stderr=True, check=False))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_one)
            await trio.sleep(0.3)   # the first has claimed the name's record by now
            nursery.start_soon(run_one)
    for result in results:
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout.decode().splitlines()[-1].startswith("1 match: ")
    warned = [r for r in results if b"another client plays as 'bot-greedy'" in r.stderr]
    assert len(warned) == 1
    assert all(b"session_resumed" not in r.stdout + r.stderr for r in results)
