#!/usr/bin/env python3
"""Intent latency against a bare trio echo server of the same frames.

    .venv/bin/python scripts/bench_latency.py [--intents 3000] [--block 250] [--json FILE]

Starts two subprocesses on 127.0.0.1: ``cardserver`` (temporary ``--db``) and a
bare trio echo server (this file with ``--echo-server``). One client process
plays Data Structures matches against the cardserver over two connections (one
per seat), one intent at a time, and times each intent from the moment its frame
is written to the moment the acting seat has read the snapshot that answers it
(seq + 1). It records the size of the intent frame and the bytes of each frame
the acting seat read in between (the ``ok`` and the snapshot).

The echo server is then given those recorded frames (untimed) and, for each
intent, answers a request of the intent's size by writing exactly those bytes
back with one ``send_all`` (as the cardserver writes the ``ok`` and the snapshot
together); the client reads and decodes them, timed the same way. So both sides
of the comparison move and decode the same bytes: the echo's figure is the floor
set by trio, loopback TCP, framing and msgpack, with no game, no store and no
validation. The two are measured in alternating blocks (``--block`` intents
each) so that the shared machine's load changes hit both alike.

Goal: cardserver p50 within 2x of the echo's p50, p99 within 3x of the echo's p99.
Exit status 0 when both are met, 1 when not, 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HEADER, HOST, SpawnedServer, Wire, free_port, percentile  # noqa: E402

#: Recorded groups sent to the echo server per ``load`` message (frame size bound).
LOAD_CHUNK = 100

# -- the echo server ---------------------------------------------------------------


def echo_body(size: int) -> bytes:
    """A msgpack map ``{"type": "echo", "pad": <bin>}`` of exactly ``size`` bytes
    (or the smallest such map when ``size`` is below it)."""
    pad = max(0, size - 20)
    body = msgpack.packb({"type": "echo", "pad": b"x" * pad})
    while len(body) > size and pad > 0:
        pad -= 1
        body = msgpack.packb({"type": "echo", "pad": b"x" * pad})
    while len(body) < size:
        pad += 1
        body = msgpack.packb({"type": "echo", "pad": b"x" * pad})
        if len(body) > size:  # a bin header grew by a byte: give up exactness by one
            break
    return body


async def _echo_handler(stream: trio.SocketStream) -> None:
    """Serve one client: ``load`` stores frames to replay (answered ``loaded``, not
    timed); ``echo`` with ``replay: i`` writes the i-th stored group of frames back
    with one ``send_all`` (as the cardserver writes an ``ok`` and a snapshot)."""
    from protocol.framing import FrameDecoder

    decoder = FrameDecoder(1 << 20)
    loaded: list[bytes] = []
    loaded_reply = echo_body(8)
    loaded_reply = HEADER.pack(len(loaded_reply)) + loaded_reply
    try:
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            decoder.feed(data)
            while (body := decoder.next_frame()) is not None:
                request = msgpack.unpackb(body)
                if request["type"] == "load":
                    for group in request["groups"]:
                        loaded.append(b"".join(HEADER.pack(len(b)) + b for b in group))
                    await stream.send_all(loaded_reply)
                    continue
                await stream.send_all(loaded[request["replay"]])
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return


def run_echo_server(port: int) -> None:
    """Serve until killed (bounded: exits by itself after an hour)."""

    async def main() -> None:
        with trio.move_on_after(3600):
            await trio.serve_tcp(_echo_handler, port, host=HOST)

    trio.run(main)


# -- the client ---------------------------------------------------------------------


class Echo:
    """A connection to the echo server that replays recorded frames."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.loaded = 0

    async def load(self, groups: list[list[bytes]]) -> int:
        """Store ``groups`` (the bodies the actor read for each intent) on the echo
        server, untimed; returns the index of the first."""
        first = self.loaded
        for i in range(0, len(groups), LOAD_CHUNK):
            await self.wire.send({"type": "load", "groups": groups[i:i + LOAD_CHUNK]})
            await self.wire.recv()
        self.loaded += len(groups)
        return first

    async def exchange(self, request_size: int, index: int, replies: int) -> float:
        """Send a frame of ``request_size`` bytes asking for stored group ``index``
        (``replies`` frames); the seconds until the last reply has been read and
        decoded."""
        probe = {"type": "echo", "replay": index, "pad": b""}
        base = len(msgpack.packb(probe))
        probe["pad"] = b"x" * max(0, request_size - base - 1)
        start = time.monotonic()
        await self.wire.send(probe)
        for _ in range(replies):
            await self.wire.recv()
        return time.monotonic() - start


class Recorder:
    """Wraps a Wire's frame decoder to keep the bodies it returns while ``keep``."""

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder
        self.keep = False
        self.bodies: list[bytes] = []

    def feed(self, data: bytes) -> None:
        self.decoder.feed(data)

    def next_frame(self) -> bytes | None:
        body = self.decoder.next_frame()
        if body is not None and self.keep:
            self.bodies.append(body)
        return body


class Player:
    """Two seats of a Data Structures match against the cardserver, one intent at a time."""

    def __init__(self, wires: list[Wire], rng: random.Random) -> None:
        self.wires = wires
        self.recorders = [Recorder(w.decoder) for w in wires]
        for wire, recorder in zip(wires, self.recorders, strict=True):
            wire.decoder = recorder  # type: ignore[assignment]
        self.rng = rng
        self.match: str | None = None
        self.latest: list[dict[str, Any] | None] = [None, None]

    async def new_match(self) -> None:
        created = await self.wires[0].request({"type": "create", "game": "datastructures",
                                               "turn_timer": 0})
        joined = await self.wires[1].request({"type": "join", "match": created["match"]})
        assert joined["type"] == "ok", joined
        self.match = created["match"]
        self.latest = [None, None]
        for seat in (0, 1):
            await self._until(seat, 0)

    async def _until(self, seat: int, seq: int) -> None:
        """Read seat's messages until its snapshot of ``seq`` (or later)."""
        while True:
            msg = await self.wires[seat].recv(10.0)
            if msg.get("type") == "error":
                raise RuntimeError(f"server error: {msg}")
            if msg.get("type") == "snapshot" and msg["match"] == self.match:
                self.latest[seat] = msg
                if msg["seq"] >= seq and (msg["status"] == "finished" or msg["status"] == "active"):
                    return

    async def step(self) -> tuple[float, int, list[bytes]]:
        """Play one intent; (latency, intent body size, bodies the actor read)."""
        if self.match is None or any(s is None or s["status"] == "finished"
                                     for s in self.latest):
            await self.new_match()
        seat = next(i for i in (0, 1) if self.latest[i]["legal"])  # type: ignore[index]
        snap = self.latest[seat]
        assert snap is not None
        wire, recorder = self.wires[seat], self.recorders[seat]
        recorder.bodies.clear()
        recorder.keep = True
        msg = {"type": "intent", "id": wire.next_id(), "match": self.match, "seq": snap["seq"],
               "intent": self.rng.choice(snap["legal"])}
        start = time.monotonic()
        size = await wire.send(msg)
        await self._until(seat, snap["seq"] + 1)
        latency = time.monotonic() - start
        recorder.keep = False
        bodies = list(recorder.bodies)  # the ok, then the snapshot (the server sends them so)
        await self._until(1 - seat, snap["seq"] + 1)
        return latency, size, bodies


async def bench(cardserver_port: int, echo_port: int, intents: int, block: int,
                seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    wires = [await Wire.open(cardserver_port), await Wire.open(cardserver_port)]
    for i, wire in enumerate(wires):
        await wire.hello(f"bench{i}")
    echo = Echo(await Wire.open(echo_port))
    player = Player(wires, rng)
    real: list[float] = []
    base: list[float] = []
    with trio.fail_after(max(120.0, intents * 0.05)):
        while len(real) < intents:
            recorded = []
            for _ in range(min(block, intents - len(real))):
                latency, size, bodies = await player.step()
                real.append(latency)
                recorded.append((size, bodies))
            first = await echo.load([bodies for _, bodies in recorded])
            for i, (size, bodies) in enumerate(recorded):
                base.append(await echo.exchange(size, first + i, len(bodies)))
    for wire in [*wires, echo.wire]:
        await wire.aclose()
    return {"cardserver": real, "echo": base}


def summarize(samples: dict[str, list[float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, values in samples.items():
        ordered = sorted(values)
        out[name] = {"n": len(ordered), "p50_ms": percentile(ordered, 0.5) * 1000,
                     "p90_ms": percentile(ordered, 0.9) * 1000,
                     "p99_ms": percentile(ordered, 0.99) * 1000,
                     "max_ms": ordered[-1] * 1000 if ordered else float("nan")}
    real, echo = out["cardserver"], out["echo"]
    out["ratio_p50"] = real["p50_ms"] / echo["p50_ms"]
    out["ratio_p99"] = real["p99_ms"] / echo["p99_ms"]
    out["goal_p50_met"] = out["ratio_p50"] <= 2.0
    out["goal_p99_met"] = out["ratio_p99"] <= 3.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--intents", type=int, default=3000)
    parser.add_argument("--block", type=int, default=250)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--echo-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.echo_server is not None:
        run_echo_server(args.echo_server)
        return 0
    if not 1 <= args.intents <= 100000:
        parser.error("--intents must be in 1..100000")
    server = SpawnedServer([])
    echo_port = free_port()
    echo = subprocess.Popen([sys.executable, __file__, "--echo-server", str(echo_port)])
    try:
        server.start()
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((HOST, echo_port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("echo server did not start") from None
                time.sleep(0.05)
        samples = trio.run(bench, server.port, echo_port, args.intents, args.block, args.seed)
    except RuntimeError as exc:
        print(f"bench_latency: {exc}", file=sys.stderr)
        return 2
    finally:
        echo.kill()
        echo.wait(5)
        server.close()
    fig = summarize(samples)
    fig["load_average"] = os.getloadavg()
    print(f"{'':12} {'n':>6} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name in ("cardserver", "echo"):
        f = fig[name]
        print(f"{name:12} {f['n']:6d} {f['p50_ms']:8.3f} {f['p90_ms']:8.3f} "
              f"{f['p99_ms']:8.3f} {f['max_ms']:8.3f}")
    print(f"ratio p50 {fig['ratio_p50']:.2f}x (goal <= 2x: "
          f"{'met' if fig['goal_p50_met'] else 'MISSED'}), "
          f"ratio p99 {fig['ratio_p99']:.2f}x (goal <= 3x: "
          f"{'met' if fig['goal_p99_met'] else 'MISSED'}); "
          f"load average {fig['load_average'][0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2))
    return 0 if fig["goal_p50_met"] and fig["goal_p99_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
