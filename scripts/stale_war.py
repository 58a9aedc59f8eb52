#!/usr/bin/env python3
"""Measure: how many War flips a cardserver answers ``stale``, per whole match.

    .venv/bin/python scripts/stale_war.py [--matches 5] [--policy newest|every] [--port P]

Two clients written from docs/protocol.md alone (raw TCP, msgpack, no project
code) play whole War matches against each other and flip the moment they see
a snapshot. Two ways of doing that:

* ``newest`` (the documented bot recipe): at most one intent in flight; act on
  the newest snapshot whose ``legal`` is not empty, once it is at least as new
  as the ``seq`` of the last ``ok`` (the match after your own intent) and newer
  than the snapshot you last acted on.
* ``every``: send an intent for every snapshot whose ``legal`` is not empty,
  even while an earlier intent is in flight (the minimal bot of the document).

Without ``--port`` it starts a cardserver from this checkout on a free
loopback port with a temporary store, and stops it at the end. Prints, per
match: intents sent, ``ok``, ``stale`` and other errors, and the totals.
Only ever connects to 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HOST, SpawnedServer  # noqa: E402

HEADER = struct.Struct(">I")
#: Seconds without a message before a match counts as stuck.
QUIET = 20.0


class Wire:
    """One framed msgpack connection."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.ids = 0

    async def send(self, msg: dict[str, Any]) -> int:
        self.ids += 1
        msg = {**msg, "id": self.ids}
        body = msgpack.packb(msg)
        await self.stream.send_all(HEADER.pack(len(body)) + body)
        return self.ids

    async def recv(self) -> dict[str, Any]:
        while True:
            if len(self.buffer) >= 4:
                (size,) = HEADER.unpack_from(self.buffer)
                if len(self.buffer) >= 4 + size:
                    body = bytes(self.buffer[4:4 + size])
                    del self.buffer[:4 + size]
                    return msgpack.unpackb(body)
            with trio.fail_after(QUIET):
                chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buffer += chunk


async def _open(port: int, name: str) -> Wire:
    wire = Wire(await trio.open_tcp_stream(HOST, port))
    await wire.send({"type": "hello", "protocol": [1], "name": name, "client": "stale_war/1"})
    while (msg := await wire.recv())["type"] != "welcome":
        if msg["type"] == "error":
            raise RuntimeError(f"handshake refused: {msg}")
    return wire


async def _reply(wire: Wire, request_id: int) -> dict[str, Any]:
    while True:
        msg = await wire.recv()
        if msg["type"] == "ping":
            await wire.send({"type": "pong", "id": msg["id"]})
        elif msg.get("id") == request_id and msg["type"] in ("ok", "error"):
            return msg


async def _play(wire: Wire, match: str, policy: str, tally: Counter[str]) -> None:
    """Flip until the match is finished, counting answers."""
    newest: dict[str, Any] | None = None
    in_flight = 0            # intents sent and not answered yet
    floor = -1               # newest's seq must reach this (the last ok's seq)
    acted = -1               # seq of the snapshot last acted on
    while True:
        msg = await wire.recv()
        kind = msg["type"]
        if kind == "ping":
            await wire.send({"type": "pong", "id": msg["id"]})
            continue
        if kind == "snapshot" and msg["match"] == match:
            if newest is None or msg["seq"] >= newest["seq"]:
                newest = msg
            if msg["status"] == "finished":
                return
            if policy == "every" and msg["legal"]:
                await wire.send({"type": "intent", "match": match, "seq": msg["seq"],
                                 "intent": msg["legal"][0]})
                tally["intents"] += 1
                continue
        elif kind in ("ok", "error") and msg.get("id") is not None:
            in_flight -= 1
            tally["ok" if kind == "ok" else msg["code"]] += 1
            if kind == "ok" and isinstance(msg.get("seq"), int):
                floor = max(floor, msg["seq"])
        if (policy == "newest" and in_flight == 0 and newest is not None and newest["legal"]
                and newest["seq"] >= floor and newest["seq"] > acted):
            acted = newest["seq"]
            await wire.send({"type": "intent", "match": match, "seq": acted,
                             "intent": newest["legal"][0]})
            in_flight += 1
            tally["intents"] += 1


async def one_match(port: int, policy: str, number: int) -> Counter[str]:
    """Create a War match with seat 0, join it with seat 1, play it out; the counts."""
    alice = await _open(port, f"alice{number}")
    bob = await _open(port, f"bob{number}")
    try:
        created = await _reply(alice, await alice.send({"type": "create", "game": "war",
                                                        "turn_timer": 0}))
        match = created["match"]
        await _reply(bob, await bob.send({"type": "join", "match": match}))
        tallies = [Counter(), Counter()]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_play, alice, match, policy, tallies[0])
            nursery.start_soon(_play, bob, match, policy, tallies[1])
        return tallies[0] + tallies[1]
    finally:
        await alice.stream.aclose()
        await bob.stream.aclose()


async def run(port: int, matches: int, policy: str) -> list[Counter[str]]:
    results = []
    for number in range(matches):
        tally = await one_match(port, policy, number)
        results.append(tally)
        others = {k: v for k, v in tally.items() if k not in ("intents", "ok", "stale")}
        print(f"match {number + 1}: {tally['intents']} intents, {tally['ok']} ok, "
              f"{tally['stale']} stale" + (f", other {others}" if others else ""), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=5, help="War matches to play [5]")
    parser.add_argument("--policy", choices=("newest", "every"), default="newest",
                        help="when a client flips (see the module doc) [newest]")
    parser.add_argument("--port", type=int, default=None,
                        help="a running cardserver on 127.0.0.1 (default: start one)")
    args = parser.parse_args(argv)
    server = None
    port = args.port
    if port is None:
        server = SpawnedServer([])
        server.start()
        port = server.port
    try:
        results = trio.run(run, port, max(1, args.matches), args.policy)
    finally:
        if server is not None:
            server.stop()
    intents = sum(r["intents"] for r in results)
    stale = sum(r["stale"] for r in results)
    print(f"policy {args.policy}: {len(results)} matches, {intents} intents, {stale} stale "
          f"({stale / len(results):.1f} per match, {100 * stale / max(intents, 1):.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
