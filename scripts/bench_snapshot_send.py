#!/usr/bin/env python3
"""What validating a snapshot costs on the way out, against framing it unchecked.

    nice .venv/bin/python scripts/bench_snapshot_send.py [--snapshots 300] [--repeat 5]

Plays Data Structures and War with random legal intents (fixed seeds) and keeps
the snapshot maps a seat would get along the way, built as server/match.py
builds them. Then it times, over the same snapshots and in alternating rounds
(so a change in the machine's load hits every variant alike):

* ``unchecked``: ``encode_frame(pack(msg))``, the old path of server/connection.py
  (no validation at all; the baseline);
* ``map``: ``Connection.send(msg)``, a plain map turned into its event and so
  validated (the transitional path for code that still pushes maps);
* ``event``: ``Connection.send(Snapshot(...))``, the event built from its fields
  (validated on construction) and sent.

Prints microseconds per snapshot (best round of ``--repeat``) and the ratio to
the baseline; for scale, also what the engine takes to build the same snapshots'
contents (``state.view`` and ``state.legal`` of the seat), which the server pays
for every snapshot anyway.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.registry import get_game  # noqa: E402
from protocol.codec import pack  # noqa: E402
from protocol.connection import Connection, State  # noqa: E402
from protocol.events import Snapshot  # noqa: E402
from protocol.framing import encode_frame  # noqa: E402

PLAYERS = [
    {"seat": 0, "name": "alice", "connected": True, "bot": None},
    {"seat": 1, "name": "bob", "connected": True, "bot": None},
]


def snapshots(game: str, count: int, seed: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """``count`` snapshot maps of random play (restarting finished games), and a
    copy of the state (with the seat) each was built from."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    states: list[Any] = []
    state = get_game(game).new_state(seed)
    seq = 0
    while len(out) < count:
        if state.outcome() is not None:
            state = get_game(game).new_state(rng.randrange(2**32))
            seq = 0
        movers = [s for s in (0, 1) if state.legal(s)]
        seat = rng.choice(movers)
        events = state.apply(seat, rng.choice(state.legal(seat)))
        seq += 1
        states.append((state.clone(), seat))
        out.append({
            "type": "snapshot", "match": "m1a2b3c4d5", "game": game, "seq": seq,
            "seat": seat, "view": state.view(seat), "legal": state.legal(seat),
            "status": "active", "events": state.project_events(events, seat),
            "players": PLAYERS, "options": {}, "commitment": "ab" * 32,
            "deadline": None, "auto_flip": False,
        })
    return out, states


def open_server_connection() -> Connection:
    conn = Connection("server")
    conn.state = State.OPEN  # sending snapshots needs an open connection; skip the handshake
    return conn


def timed(fn: Callable[[dict[str, Any]], bytes], msgs: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for msg in msgs:
        fn(msg)
    return (time.perf_counter() - start) / len(msgs) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    conn = open_server_connection()
    variants: dict[str, Callable[[dict[str, Any]], bytes]] = {
        "unchecked": lambda m: encode_frame(pack(m)),
        "map": conn.send,
        "event": lambda m: conn.send(Snapshot(**{k: v for k, v in m.items() if k != "type"})),
    }
    for game in ("datastructures", "war"):
        msgs, states = snapshots(game, args.snapshots, seed=7)
        size = sum(len(pack(m)) for m in msgs) / len(msgs)
        best = {name: float("inf") for name in variants}
        build = float("inf")
        for _ in range(args.repeat):
            for name, fn in variants.items():
                best[name] = min(best[name], timed(fn, msgs))
            start = time.perf_counter()
            for state, seat in states:
                state.view(seat), state.legal(seat)
            build = min(build, (time.perf_counter() - start) / len(states) * 1e6)
        base = best["unchecked"]
        print(f"{game}: {len(msgs)} snapshots, {size:.0f} bytes on average")
        for name, us in best.items():
            extra = f"  (+{us - base:.1f} us)" if name != "unchecked" else ""
            print(f"  {name:10s} {us:8.1f} us/snapshot  {us / base:5.2f}x{extra}")
        print(f"  (the engine's view + legal for the same snapshots: {build:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
