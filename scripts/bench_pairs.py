#!/usr/bin/env python3
"""Server CPU per War move with N pairs playing at once, A/B against another build.

    .venv/bin/python scripts/bench_pairs.py [--pairs 10] [--seconds 3] [--rounds 8]
        [--driver threads|selectors] [--base /path/to/other/checkout] [--json FILE]

Each pair is two plain blocking-socket connections playing War in strict
ping-pong, as the peers harness's client does (:class:`bench_echo.WarPair`: the
lowest seat still to flip flips once both seats hold the newest snapshot), one
thread per pair, so that several intents reach the server in one scheduler pass
(its group commit batches them) while each connection waits for its answer, as
in the harness's throughput phase. With ``--driver selectors`` one thread
drives every pair through a ``selectors`` loop over non-blocking sockets (the
same flip rule, no threads and no GIL hand-offs): a client that keeps up with
the server, so that the server is busier and its CPU per move closer to the
harness's. Every round starts a fresh cardserver per
build (pinned to CPU 0, the client to CPU 1 when ``taskset`` exists), warms it
up for a second, then counts the moves of ``--seconds`` and the server's CPU
seconds (``/proc``); the builds alternate round by round. Printed per build: the
least and the median server CPU per move over the rounds, moves per second, and
this build's ratio to the base. With ``--pairs 1`` it is the harness's latency
phase. Exit status 0, or 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import msgpack  # noqa: E402
from bench_echo import HEADER, Server, WarPair  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WARM_S = 1.0


def play(pair: WarPair, until: float, stop: threading.Event, counts: list[int],
         slot: int) -> None:
    """Flip on ``pair`` until ``until`` (a new match whenever one ends); moves
    counted in ``counts[slot]``, only once ``WARM_S`` has passed."""
    started = time.monotonic()
    try:
        pair.new_match()
        while not stop.is_set() and time.monotonic() < until:
            if pair.move() is None:
                pair.new_match()
            elif time.monotonic() - started >= WARM_S:
                counts[slot] += 1
    except (OSError, RuntimeError):
        stop.set()


class Flipper:
    """One pair driven without blocking: sends the next flip once both seats hold
    the newest snapshot (:meth:`WarPair.move`'s rule), counts the moves."""

    def __init__(self, pair: WarPair) -> None:
        self.pair = pair
        self.bufs = [bytearray(), bytearray()]
        self.seq = -1
        self.moves = 0

    def start(self) -> None:
        """A fresh match (blocking), then the first flip."""
        for wire in self.pair.wires:
            wire.sock.setblocking(True)
        self.pair.new_match()
        for wire in self.pair.wires:
            wire.sock.setblocking(False)
        self.flip()

    def flip(self) -> None:
        """Send the lowest waiting seat's flip on the newest snapshot (a new match
        when this one is over)."""
        snap = self.pair.snaps[0]
        if snap["status"] != "active" or not snap["view"]["waiting"]:
            self.start()
            return
        mover = min(snap["view"]["waiting"])
        self.seq = snap["seq"]
        wire = self.pair.wires[mover]
        body = msgpack.packb({"type": "intent", "id": wire.next_id, "match": self.pair.match,
                              "seq": self.seq, "intent": {"type": "flip"}})
        wire.next_id += 1
        wire.sock.sendall(HEADER.pack(len(body)) + body)

    def readable(self, seat: int) -> None:
        """Read what seat's socket holds; flip again once both seats are up to date.

        Raises:
            ConnectionError: the server closed the connection.
        """
        data = self.pair.wires[seat].sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        buf = self.bufs[seat]
        buf += data
        while len(buf) >= 4:
            (size,) = HEADER.unpack_from(buf)
            if len(buf) < 4 + size:
                break
            msg = msgpack.unpackb(bytes(buf[4:4 + size]))
            del buf[:4 + size]
            if msg.get("type") == "snapshot" and msg.get("match") == self.pair.match:
                self.pair.snaps[seat] = msg
        a, b = self.pair.snaps
        if a.get("seq", -1) > self.seq and b.get("seq", -1) == a["seq"]:
            self.moves += 1
            self.flip()


def play_selectors(wars: list[WarPair], until: float, counts: list[int]) -> bool:
    """Drive every pair from this thread until ``until``; moves of each pair counted
    in ``counts`` once ``WARM_S`` has passed. False when a pair failed."""
    flippers = [Flipper(w) for w in wars]
    sel = selectors.DefaultSelector()
    started = time.monotonic()
    try:
        for f in flippers:
            f.start()
            for seat, wire in enumerate(f.pair.wires):
                sel.register(wire.sock, selectors.EVENT_READ, (f, seat))
        warm = False
        while (now := time.monotonic()) < until:
            if not warm and now - started >= WARM_S:
                warm = True
                for f in flippers:
                    f.moves = 0
            for key, _ in sel.select(0.5):
                f, seat = key.data
                f.readable(seat)
        for i, f in enumerate(flippers):
            counts[i] = f.moves
        return True
    except (OSError, RuntimeError):
        return False
    finally:
        sel.close()
        for w in wars:
            for wire in w.wires:
                wire.sock.setblocking(True)


def one_round(checkout: Path, pairs: int, seconds: float, tmp: Path,
              driver: str = "threads") -> tuple[float, float]:
    """(server CPU seconds per move, moves per second) of one fresh server.

    Raises:
        RuntimeError: the server did not start, or a pair failed.
    """
    server = Server.cardserver(f"r{time.monotonic_ns()}", checkout, tmp)
    try:
        wars = [WarPair(server.port) for _ in range(pairs)]
        counts = [0] * pairs
        stop = threading.Event()
        until = time.monotonic() + WARM_S + seconds
        if driver == "selectors":
            threads = [threading.Thread(
                target=lambda: play_selectors(wars, until, counts) or stop.set())]
        else:
            threads = [threading.Thread(target=play, args=(w, until, stop, counts, i))
                       for i, w in enumerate(wars)]
        for t in threads:
            t.start()
        time.sleep(WARM_S)
        c0, t0, m0 = server.cpu_seconds(), time.monotonic(), sum(counts)
        for t in threads:
            t.join()
        cpu, wall, moves = server.cpu_seconds() - c0, time.monotonic() - t0, sum(counts) - m0
        for w in wars:
            w.close()
        if stop.is_set() or moves <= 0:
            raise RuntimeError(f"{checkout}: a pair failed or no moves were made")
        return cpu / moves, moves / wall
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds a round")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--driver", choices=["threads", "selectors"], default="threads")
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not (1 <= args.pairs <= 200 and 0 < args.seconds <= 120 and 1 <= args.rounds <= 50):
        parser.error("out of bounds")
    if shutil.which("taskset"):
        os.sched_setaffinity(0, {1})
    builds = [("this", ROOT)] + ([("base", args.base.resolve())] if args.base else [])
    got: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in builds}
    tmp = Path(tempfile.mkdtemp(prefix="bench_pairs."))
    try:
        for i in range(args.rounds):
            for name, path in (builds if i % 2 == 0 else builds[::-1]):
                got[name].append(one_round(path, args.pairs, args.seconds, tmp,
                                           args.driver))
    except (OSError, RuntimeError) as exc:
        print(f"bench_pairs: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fig: dict[str, Any] = {}
    for name, path in builds:
        cpus = [1e6 * c for c, _ in got[name]]
        fig[name] = {"min_us": min(cpus), "median_us": statistics.median(cpus),
                     "moves_per_s": statistics.median(r for _, r in got[name])}
        print(f"{name:5} {path}: server CPU per move {fig[name]['min_us']:6.1f} µs (least), "
              f"{fig[name]['median_us']:6.1f} (median of {args.rounds}); "
              f"{fig[name]['moves_per_s']:6.0f} moves/s; {args.pairs} pairs ({args.driver})")
    if args.base:
        print(f"this / base: {fig['this']['min_us'] / fig['base']['min_us']:.3f} (least), "
              f"{fig['this']['median_us'] / fig['base']['median_us']:.3f} (median)")
    print(f"(load average {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
