#!/usr/bin/env python3
"""One War move through the match core and the codec, in process: CPU per move.

    .venv/bin/python scripts/bench_move.py [--moves 4000] [--rounds 7]
        [--base /path/to/other/checkout] [--protocol 1] [--game datastructures]

What a move costs the server between reading the intent and having the bytes to
write, without sockets, the scheduler or the store: a ``PlayIntent`` through
:meth:`MatchCore.handle` (the seq rule, the engine, the digest, the journal row,
the mover's snapshot), the rest of the broadcast (``effects.later``), and every
message framed by a server-side :class:`protocol.connection.Connection` per
seat (validation where it happens, ``to_wire``, msgpack, protocol 2's delta
when ``--protocol 2``). The journal rows are not committed (that is the store's
cost, measured by the harness).

Each round plays ``--moves`` flips of fresh War matches (a finished match is
replaced) and keeps the best round (the least disturbed by the machine's other
load). With ``--base`` the same moves run against that checkout's code in a
subprocess, rounds alternating, and the ratio is printed: the figure to keep or
revert a change by. ``--game datastructures`` plays Data Structures instead
(each intent the first of the mover's legal list; a finished match is replaced
likewise): the same path for a game whose views are private to each seat.
Exit status 0, or 2 when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ab import run_builds, run_child  # noqa: E402


def run_moves(moves: int, protocol: int, game_name: str = "war") -> float:
    """CPU seconds (process time) for ``moves`` moves of ``game_name`` (War: flips),
    both seats' messages framed."""
    from engine.registry import get_game
    from protocol.codec import pack
    from protocol.connection import Connection
    from protocol.events import Welcome
    from protocol.framing import encode_frame
    from server.config import ServerConfig
    from server.match import commands as c
    from server.match.core import MatchCore, Rules
    from server.store import MatchRecord

    rules = Rules()
    game = get_game(game_name)
    sessions = ("sa", "sb")

    limits = ServerConfig().limits()

    def connection() -> Connection:
        conn = Connection("server")
        conn.receive_data(encode_frame(pack({"type": "hello", "protocol": [1, 2],
                                             "name": "x", "client": "bench"}), 65536))
        conn.next_event()
        conn.send(Welcome(protocol=protocol, server="bench", session="s", token="t" * 22,
                          name="x", resumed=False, limits=limits))
        return conn

    conns = {s: connection() for s in sessions}
    n = 0

    def new_core() -> MatchCore:
        nonlocal n
        n += 1
        rec = MatchRecord(f"m{n:09d}", game_name, game.normalize_options({}), 1000 + n, "ab" * 16,
                          120, "forfeit", "waiting", 1.0)
        core = MatchCore.create(rec, rules)
        core.seat(0, sessions[0], "alice", client_seed="1234")
        core.seat(1, sessions[1], "bob", client_seed="5678")
        core.handle(c.Start(), 0.0)
        return core

    def send(fx: Any) -> None:
        for to, msg in fx.messages:
            conns[to].send(msg)

    core = new_core()
    now = 1.0
    start = time.process_time()
    for i in range(moves):
        if core.status == "finished":
            core = new_core()
        seat = core.state.to_move()[0]
        intent = core.window.legal(seat)[0] if hasattr(core, "window") else {"type": "flip"}
        now += 0.001
        fx = core.handle(c.PlayIntent(sessions[seat], i, seq=core.seq, intent=intent), now)
        send(fx)
        if fx.later is not None:
            send(fx.later())
    return time.process_time() - start


def child(args: argparse.Namespace) -> int:
    """Run the rounds in this process (the code on sys.path) and print JSON."""
    run_moves(min(500, args.moves), args.protocol, args.game)  # warm up
    print(json.dumps([run_moves(args.moves, args.protocol, args.game)
                      for _ in range(args.rounds)]))
    return 0


def measure(checkout: Path, args: argparse.Namespace) -> dict[str, float]:
    """One round in a subprocess running ``checkout``'s code."""
    got = run_child(__file__, checkout, ["--moves", str(args.moves), "--rounds", "1",
                                         "--protocol", str(args.protocol),
                                         *(["--game", args.game] if args.game != "war" else [])])
    return {"moves": min(got)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--protocol", type=int, default=1, choices=[1, 2])
    parser.add_argument("--game", default="war", choices=["war", "datastructures"])
    ran = run_builds(parser, argv, ROOT, child, measure)
    if isinstance(ran, int):
        return ran
    args, builds, best = ran
    load = os.getloadavg()[0]
    for name, path in builds:
        print(f"{name:5} {path}: {1e6 * best[name, 'moves'] / args.moves:7.1f} µs CPU per move "
              f"(best of {args.rounds}, protocol {args.protocol}, {args.game})")
    if args.base:
        print(f"this / base: {best['this', 'moves'] / best['base', 'moves']:.3f}   (load average {load:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
