#!/usr/bin/env python3
"""Human-vs-human latency while many search-bot matches run on the same server.

    nice .venv/bin/python scripts/bench_bots.py [--bot-matches 100] [--legit 2]
        [--calm 8] [--loaded 20] [--baseline DIR] [--json FILE]

For each build (``--baseline DIR``: another checkout, e.g. ``git archive main``
unpacked, measured first; then this one) a ``cardserver`` subprocess with its
default limits (temporary ``--db``) serves ``--legit`` human-vs-human Data
Structures matches, two connections each, one intent every 20 ms (about 50
intents a second per match, a new match after each end). Each intent is timed
from the moment its frame is written to the moment the acting seat has read the
snapshot that answers it (seq + 1).

First ``--calm`` seconds with nothing else; then a second process opens
``--bot-matches`` connections, each creating a Data Structures match against the
server's ``search`` bot and playing its own seat at once whenever it may, and
the legit matches are timed for ``--loaded`` more seconds. The attacker process
reports the bot moves it saw per second.

Only 127.0.0.1; every loop bounded. Exit status 0, or 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import SpawnedServer, Wire, WireClosed, latency_ms  # noqa: E402

PACE = 0.02
OPTIONS = {"cap": 500}


async def _legit_match(port: int, stop_at: float, samples: list[tuple[float, float]],
                       name: str) -> None:
    """Two seats playing match after match at PACE per intent until ``stop_at``."""
    a, b = await Wire.open(port), await Wire.open(port)
    await a.hello(f"{name}-a")
    await b.hello(f"{name}-b")
    wires = [a, b]
    try:
        while time.monotonic() < stop_at:
            mid = (await a.request({"type": "create", "game": "datastructures",
                                    "options": OPTIONS, "turn_timer": 0}))["match"]
            await b.request({"type": "join", "match": mid})
            snaps = [await _snapshot(w, mid, lambda s: s["status"] == "active") for w in wires]
            while time.monotonic() < stop_at and snaps[0]["status"] == "active":
                seat = next((i for i in (0, 1) if snaps[i]["legal"]), None)
                if seat is None:
                    break
                await trio.sleep(PACE)
                seq = snaps[seat]["seq"]
                sent = time.monotonic()
                reply = await wires[seat].request({"type": "intent", "match": mid, "seq": seq,
                                                   "intent": snaps[seat]["legal"][0]})
                if reply["type"] != "ok":
                    raise RuntimeError(f"legit intent refused: {reply}")
                snaps[seat] = await _snapshot(wires[seat], mid, lambda s, n=seq: s["seq"] > n)
                samples.append((sent, time.monotonic() - sent))
                other = 1 - seat
                snaps[other] = await _snapshot(wires[other], mid, lambda s, n=seq: s["seq"] > n)
    finally:
        for w in wires:
            await w.aclose()


async def _snapshot(wire: Wire, match: str, pred: Any) -> dict[str, Any]:
    """The next snapshot of ``match`` satisfying ``pred`` (newer pending ones first)."""
    while True:
        msg = await wire.recv()
        if msg.get("type") == "snapshot" and msg.get("match") == match and pred(msg):
            return msg
        if msg.get("type") in ("bye", "error"):
            raise WireClosed(msg)


async def _attacker(port: int, index: int, stop_at: float, tally: dict[str, int]) -> None:
    """One connection playing against the search bot, match after match."""
    wire = await Wire.open(port)
    await wire.hello(f"botfan{index}")
    try:
        while time.monotonic() < stop_at:
            reply = await wire.request({"type": "create", "game": "datastructures",
                                        "bot": "search", "options": OPTIONS, "turn_timer": 0})
            mid = reply["match"]
            tally["created"] += 1
            while time.monotonic() < stop_at:
                with trio.move_on_at(trio.current_time() + max(0.0, stop_at - time.monotonic())):
                    snap = await _snapshot(wire, mid, lambda s: True)
                if time.monotonic() >= stop_at:
                    return
                tally["snapshots"] += 1
                if snap["status"] == "finished":
                    break
                if snap["legal"]:
                    got = await wire.request({"type": "intent", "match": mid, "seq": snap["seq"],
                                              "intent": snap["legal"][0]})
                    if got["type"] == "ok":
                        tally["own"] += 1
                        tally["seq"] += 1
    finally:
        await wire.aclose()


def _attack_main(port: int, count: int, seconds: float, out: Any) -> None:
    tally = {"created": 0, "own": 0, "seq": 0, "snapshots": 0}
    stop_at = time.monotonic() + seconds

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for i in range(count):
                nursery.start_soon(_attacker, port, i, stop_at, tally)
                await trio.sleep(0.01)

    trio.run(main)
    out.put(tally)


def measure(args: argparse.Namespace, source: Path | None) -> dict[str, Any]:
    """Calm, then loaded figures of one build (``--server-arg`` only for this one)."""
    extra = [] if source else args.server_arg
    server = SpawnedServer(["--max-connections", str(args.bot_matches + 4 * args.legit + 50),
                            *extra], source=source)
    server.start()
    try:
        samples: list[tuple[float, float]] = []
        t0 = time.monotonic()
        calm_until = t0 + args.calm
        stop_at = calm_until + args.loaded
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        attack = ctx.Process(target=_attack_main,
                             args=(server.port, args.bot_matches, args.loaded, out))

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                for i in range(args.legit):
                    nursery.start_soon(_legit_match, server.port, stop_at, samples, f"h{i}")
                await trio.sleep(args.calm)
                attack.start()

        trio.run(main)
        tally = out.get(timeout=60)
        attack.join(30)
        calm = [d for t, d in samples if t < calm_until]
        # the attack ramps up over its first seconds: time only what comes after
        loaded = [d for t, d in samples if t >= calm_until + min(5.0, args.loaded / 3)]
        server.stop()  # the pool logs its final count as it stops
        overloaded = [line for line in server.log_text().splitlines()
                      if "server bots overloaded" in line]
        return {"source": str(source or "this checkout"), "calm": latency_ms(calm),
                "loaded": latency_ms(loaded), "attack": tally,
                "pool": overloaded[-1].split(": ", 1)[-1] if overloaded else None}
    finally:
        server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot-matches", type=int, default=100)
    parser.add_argument("--legit", type=int, default=2)
    parser.add_argument("--calm", type=float, default=8.0)
    parser.add_argument("--loaded", type=float, default=20.0)
    parser.add_argument("--baseline", type=Path, help="another checkout, measured first")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="an argument for this checkout's cardserver (repeat), e.g. "
                             "--server-arg=--bot-workers=1")
    parser.add_argument("--no-this", action="store_true",
                        help="measure only the baseline")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    runs = []
    try:
        for source in ([args.baseline] if args.baseline else []) + ([] if args.no_this
                                                                   else [None]):
            runs.append(measure(args, source))
    except RuntimeError as exc:
        print(f"bench_bots: {exc}", file=sys.stderr)
        return 2
    print(f"{'build':40} {'calm p50':>9} {'calm p99':>9} {'load p50':>9} {'load p99':>9} "
          f"{'load max':>9} {'own':>6} {'bot mv/s':>8}")
    for run in runs:
        c, ld, t = run["calm"], run["loaded"], run["attack"]
        bot_moves = t["snapshots"] - t["own"] - t["created"]
        print(f"{run['source'][-40:]:40} {c['p50']:9.1f} {c['p99']:9.1f} {ld['p50']:9.1f} "
              f"{ld['p99']:9.1f} {ld['max']:9.1f} {t['own']:6d} "
              f"{bot_moves / args.loaded:8.1f}")
    print("(ms per legit intent; own: the attackers' own intents; bot mv/s: the bot moves "
          "they saw per second)")
    for run in runs:
        if run["pool"]:
            print(f"{run['source'][-40:]}: {run['pool']}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
