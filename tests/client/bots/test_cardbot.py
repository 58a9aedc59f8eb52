"""The ``cardbot`` command end to end: real processes, a real server, loopback TCP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import trio

from client.bots.cli import main

CARDBOT = Path(sys.executable).parent / "cardbot"


async def _cardbot(*args: str) -> trio.CompletedProcess:
    return await trio.run_process([str(CARDBOT), *args], capture_stdout=True,
                                  capture_stderr=True, check=False)


async def test_two_cardbot_processes_play_each_other(start_server) -> None:
    server = await start_server()
    address = f"127.0.0.1:{server.port}"
    done: dict[str, trio.CompletedProcess] = {}

    async def run(name: str, strategy: str) -> None:
        done[name] = await _cardbot("connect", address, "--game", "datastructures",
                                    "--strategy", strategy, "--name", name, "--matches", "2",
                                    "--option", "cap=40", "--time-budget", "0.01", "--json")

    with trio.fail_after(28):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, "searcher", "search")
            nursery.start_soon(run, "greedy", "greedy")
    summaries = {}
    for name, proc in done.items():
        assert proc.returncode == 0, proc.stderr.decode()
        out = proc.stdout.decode()
        assert out.count("paired: match") == 2
        summaries[name] = json.loads(out[out.index("{"):])
    a, b = summaries["searcher"], summaries["greedy"]
    assert a["matches"] == b["matches"] == 2
    assert (a["wins"], a["losses"], a["draws"]) == (b["losses"], b["wins"], b["draws"])
    assert [r["match"] for r in a["results"]] == [r["match"] for r in b["results"]]
    assert a["mean_moves"] == b["mean_moves"] > 0


async def test_cardbot_create_then_join_by_id(start_server) -> None:
    server = await start_server()
    address = f"127.0.0.1:{server.port}"
    creator = await trio.lowlevel.open_process(
        [str(CARDBOT), "connect", address, "--game", "war", "--create", "--quiet"],
        stdout=subprocess.PIPE)
    assert creator.stdout is not None
    first = b""
    with trio.fail_after(15):
        while b"\n" not in first:
            first += await creator.stdout.receive_some(1024)
    match_id = re.search(r"created match (\S+)", first.decode()).group(1)
    with trio.fail_after(20):
        joiner = await _cardbot("connect", address, "--game", "war", "--match", match_id,
                                "--strategy", "random")
        rest = first
        async for chunk in creator.stdout:
            rest += chunk
        await creator.wait()
    assert joiner.returncode == 0 and creator.returncode == 0, joiner.stderr.decode()
    assert f"joined match {match_id}" in joiner.stdout.decode()
    assert re.search(r"1 match: \d wins?, \d loss(es)?, \d draws?; mean \d+\.\d moves",
                     rest.decode())


def test_cardbot_arguments(capsys) -> None:
    assert main(["strategies"]) == 0
    assert "search" in capsys.readouterr().out
    assert main(["connect", "127.0.0.1:1", "--strategy", "list"]) == 0
    assert "greedy" in capsys.readouterr().out
    assert main(["connect", "127.0.0.1:1"]) == 2                       # no --game
    assert "--game is required" in capsys.readouterr().err
    assert main(["connect", "127.0.0.1:1", "--game", "war", "--strategy", "nope"]) == 2
    assert "unknown strategy" in capsys.readouterr().err
    assert main(["connect", "127.0.0.1:1", "--game", "war", "--vs-bot", "greedy"]) == 2
    assert main(["connect", "127.0.0.1:x", "--game", "war"]) == 2
    assert main(["connect", "127.0.0.1:1", "--game", "war"]) == 1        # nothing listens
    assert "cannot connect" in capsys.readouterr().err
