#!/usr/bin/env python3
"""War flip -> snapshot latency of one or more cardserver builds against a bare trio echo.

    .venv/bin/python scripts/bench_echo.py [--moves 3000] [--block 300]
        [--build /path/to/other/checkout ...] [--variant NAME="ARGS" ...] [--json FILE]

The client is plain blocking sockets (``socket`` + ``msgpack``, TCP_NODELAY,
no trio, no event loop), so that its own overhead is as small as it can be in
Python and the same for every server measured. It plays War over two
connections (one per seat) in strict ping-pong, as the peers harness does: the
lowest seat still to flip sends its ``intent`` once both seats hold the newest
snapshot; the move is timed from just before that frame is written to the
moment the mover has read its own snapshot of seq + 1. The bytes the mover read
in between (the ``ok`` and the snapshot) are recorded.

The bare trio echo (this file with ``--echo-server``, its own process) is given
those recorded replies first (untimed); then, for each request frame, it writes
the next recorded reply back with one ``send_all``; the client reads and decodes
it, timed the same way. The echo is the floor: trio, loopback TCP, framing and
msgpack for the same bytes, with no game, no store, no validation.

Every server (the cardserver of this checkout, of each ``--build``, and the
echo) runs pinned to CPU 0 and the client to CPU 1 when ``taskset`` exists;
they are measured in alternating blocks of ``--block`` moves so that the shared
machine's load changes hit all alike. Printed: p50 / p90 / p99 per server, each
cardserver's ratio to the echo (goal: p50 and p99 within 4x), and to the first
``--build`` when one is given (same run). ``--variant NAME="ARGS"`` measures this
checkout's cardserver once more, started with the extra arguments (e.g.
``--variant sleep="--busy-poll 0"``). Exit status 0, or 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgpack
from load import free_port  # the scripts' one copy

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
HEADER = struct.Struct(">I")
START_TIMEOUT = 20.0
READ_TIMEOUT = 10.0


# -- the wire (blocking) ----------------------------------------------------------


class Wire:
    """One blocking connection speaking length-prefixed msgpack frames."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=READ_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.next_id = 1

    def send(self, msg: dict[str, Any]) -> None:
        """Write one message as one frame."""
        body = msgpack.packb(msg)
        self.sock.sendall(HEADER.pack(len(body)) + body)

    def send_raw(self, frame: bytes) -> None:
        """Write bytes that are already a frame."""
        self.sock.sendall(frame)

    def read_frame(self) -> bytes:
        """The next whole frame (prefix included).

        Raises:
            ConnectionError: the peer closed.
        """
        while True:
            if len(self.buf) >= 4:
                (size,) = HEADER.unpack_from(self.buf)
                if len(self.buf) >= 4 + size:
                    frame = bytes(self.buf[:4 + size])
                    del self.buf[:4 + size]
                    return frame
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buf += data

    def read(self) -> dict[str, Any]:
        """The next message, decoded."""
        return msgpack.unpackb(self.read_frame()[4:])

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send ``msg`` with a fresh id and return its ``ok`` / ``error``; snapshots
        that arrive first are handed to :attr:`on_snapshot`."""
        rid = self.next_id
        self.next_id += 1
        self.send({**msg, "id": rid})
        while True:
            reply = self.read()
            if reply.get("type") in ("ok", "error") and reply.get("id") == rid:
                return reply
            if reply.get("type") == "snapshot":
                self.latest = reply

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()


# -- War in strict ping-pong ------------------------------------------------------


class WarPair:
    """Two seats of one War match after another, on two connections."""

    def __init__(self, port: int) -> None:
        self.wires = [Wire(port), Wire(port)]
        for i, wire in enumerate(self.wires):
            wire.send({"type": "hello", "protocol": [1], "name": f"bench{i}",
                       "client": "bench_echo/1"})
            welcome = wire.read()
            if welcome.get("type") != "welcome":
                raise RuntimeError(f"no welcome: {welcome}")
        self.match = ""
        self.snaps: list[dict[str, Any]] = [{}, {}]

    def new_match(self) -> None:
        """Create a War match on seat 0's connection, join it on seat 1's."""
        a, b = self.wires
        created = a.request({"type": "create", "game": "war", "options": {}})
        joined = b.request({"type": "join", "match": created["match"]})
        if created.get("type") != "ok" or joined.get("type") != "ok":
            raise RuntimeError(f"create/join failed: {created} {joined}")
        self.match = created["match"]
        if created["seat"] != 0:
            self.wires.reverse()
        for seat in (0, 1):
            self.snaps[seat] = self._until(seat, lambda s: s["status"] != "waiting")[0]

    def _until(self, seat: int, done: Any) -> tuple[dict[str, Any], list[bytes]]:
        """Read seat's connection until a snapshot of this match satisfies ``done``;
        the frames read on the way (the last one included)."""
        frames = []
        while True:
            frame = self.wires[seat].read_frame()
            frames.append(frame)
            msg = msgpack.unpackb(frame[4:])
            if (msg.get("type") == "snapshot" and msg.get("match") == self.match
                    and done(msg)):
                return msg, frames

    def move(self) -> tuple[float, int, bytes] | None:
        """One flip in ping-pong; (seconds, request frame size, reply bytes), or None
        when the match is over (the caller starts a new one)."""
        snap = self.snaps[0]
        if snap["status"] != "active" or not snap["view"]["waiting"]:
            return None
        mover = min(snap["view"]["waiting"])
        seq = snap["seq"]
        wire = self.wires[mover]
        body = msgpack.packb({"type": "intent", "id": wire.next_id, "match": self.match,
                              "seq": seq, "intent": {"type": "flip"}})
        wire.next_id += 1
        frame = HEADER.pack(len(body)) + body
        t0 = time.perf_counter()
        wire.send_raw(frame)
        mine, frames = self._until(mover, lambda s: s["seq"] > seq)
        elapsed = time.perf_counter() - t0
        other = 1 - mover
        self.snaps[mover] = mine
        self.snaps[other] = self._until(other, lambda s: s["seq"] >= mine["seq"])[0]
        return elapsed, len(frame), b"".join(frames)

    def close(self) -> None:
        """Close both connections."""
        for wire in self.wires:
            wire.close()


# -- the echo server ----------------------------------------------------------------


def run_echo_server(port: int) -> None:
    """A bare trio server: a ``load`` frame queues replies (bytes, untimed, answered
    with an empty frame); any other frame is answered with the next queued reply,
    written with one ``send_all``."""
    import trio

    async def handler(stream: trio.SocketStream) -> None:
        replies: list[bytes] = []
        buf = bytearray()
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            buf += data
            while len(buf) >= 4:
                (size,) = HEADER.unpack_from(buf)
                if len(buf) < 4 + size:
                    break
                body = bytes(buf[4:4 + size])
                del buf[:4 + size]
                msg = msgpack.unpackb(body)
                if msg.get("type") == "load":
                    replies.extend(msg["replies"])
                    await stream.send_all(HEADER.pack(0))
                else:
                    await stream.send_all(replies.pop(0))

    async def main() -> None:
        listeners = await trio.open_tcp_listeners(port, host=HOST)
        for listener in listeners:
            listener.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await trio.serve_listeners(handler, listeners)

    trio.run(main)


# -- servers -------------------------------------------------------------------------


def pinned(cpu: int, cmd: list[str]) -> list[str]:
    """``cmd`` pinned to ``cpu`` when taskset exists."""
    return ["taskset", "-c", str(cpu), *cmd] if shutil.which("taskset") else cmd


class Server:
    """One server subprocess on a free port (a cardserver build, or the echo)."""

    def __init__(self, name: str, cmd: list[str], port: int, scratch: Path | None,
                 env: dict[str, str] | None = None) -> None:
        self.name, self.port, self.scratch = name, port, scratch
        self.proc = subprocess.Popen(pinned(0, cmd), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     env=None if env is None else {**os.environ, **env})
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{name} exited at start ({self.proc.returncode})") from None
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{name} did not listen within {START_TIMEOUT} s")

    @classmethod
    def cardserver(cls, name: str, checkout: Path, tmp: Path,
                   extra: Sequence[str] = ()) -> Server:
        """The ``cardserver`` of ``checkout`` (its .venv), with a scratch store,
        started by ``bench_cardserver.sh``: the per-address quotas raised (the
        default ``--address-rate`` of 2,000 requests/s would make a fast client's
        reader sleep), every check still made."""
        exe = checkout / ".venv" / "bin" / "cardserver"
        if not exe.exists():
            raise RuntimeError(f"{exe} is missing (run scripts/bootstrap.sh there)")
        port = free_port()
        db = tmp / f"{name}.db"
        return cls(name, [str(ROOT / "scripts" / "bench_cardserver.sh"), "--host", HOST,
                          "--port", str(port), "--db", str(db), "--rate", "100000",
                          "--burst", "100000", "--log-level", "warning", *extra],
                   port, db, env={"BENCH_CARDSERVER": str(exe)})

    @classmethod
    def echo(cls) -> Server:
        """The bare trio echo of this file."""
        port = free_port()
        return cls("echo", [sys.executable, __file__, "--echo-server", str(port)], port, None)

    def cpu_seconds(self) -> float:
        """utime + stime of the process so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """Terminate the process (this one only) and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- the run ----------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of already sorted values."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def measure_block(pair: WarPair, moves: int) -> tuple[list[float], list[tuple[int, bytes]]]:
    """``moves`` timed flips on ``pair``; the latencies and (request size, reply)."""
    times, record = [], []
    while len(times) < moves:
        done = pair.move()
        if done is None:
            pair.new_match()
            continue
        elapsed, size, reply = done
        times.append(elapsed)
        record.append((size, reply))
    return times, record


def echo_block(wire: Wire, record: list[tuple[int, bytes]]) -> list[float]:
    """The same exchanges against the echo: a request of each recorded size, its
    recorded reply read back and decoded."""
    wire.send({"type": "load", "replies": [reply for _, reply in record]})
    wire.read_frame()
    times = []
    for size, reply in record:
        body = msgpack.packb({"type": "echo", "pad": b"x" * max(0, size - 4 - 16)})
        frame = HEADER.pack(len(body)) + body
        t0 = time.perf_counter()
        wire.send_raw(frame)
        got = 0
        while got < len(reply):
            frame_in = wire.read_frame()
            msgpack.unpackb(frame_in[4:])
            got += len(frame_in)
        times.append(time.perf_counter() - t0)
    return times


def summarize(samples: dict[str, list[float]], cpu: dict[str, float]) -> dict[str, Any]:
    """p50 / p90 / p99 (µs) per server, server CPU per move, and the ratios."""
    out: dict[str, Any] = {}
    for name, values in samples.items():
        s = sorted(values)
        out[name] = {"moves": len(s), "p50_us": percentile(s, 0.5) * 1e6,
                     "p90_us": percentile(s, 0.9) * 1e6, "p99_us": percentile(s, 0.99) * 1e6,
                     "cpu_us_per_move": cpu.get(name, 0.0) * 1e6 / max(1, len(s))}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="timed moves per server")
    parser.add_argument("--block", type=int, default=300, help="moves per alternation")
    parser.add_argument("--warm", type=int, default=300, help="untimed moves per server first")
    parser.add_argument("--build", type=Path, action="append", default=[],
                        help="another checkout whose cardserver to measure too (repeatable); "
                             "the first is the baseline of the ratios")
    parser.add_argument("--variant", action="append", default=[], metavar='NAME="ARGS"',
                        help="this checkout's cardserver again, with extra arguments "
                             "(repeatable)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--echo-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.echo_server:
        run_echo_server(args.echo_server)
        return 0
    if shutil.which("taskset"):
        os.sched_setaffinity(0, {1})
    tmp = Path(tempfile.mkdtemp(prefix="bench_echo."))
    names = [f"base:{b.name}" for b in args.build] + ["this"]
    servers: list[Server] = []
    try:
        for name, checkout in zip(names, [*args.build, ROOT], strict=True):
            servers.append(Server.cardserver(name.replace(":", "_"), checkout, tmp))
        for variant in args.variant:
            name, _, extra = variant.partition("=")
            servers.append(Server.cardserver(f"this_{name}", ROOT, tmp, shlex.split(extra)))
        echo = Server.echo()
        servers.append(echo)
        pairs = {s.name: WarPair(s.port) for s in servers[:-1]}
        echo_wire = Wire(echo.port)
        for pair in pairs.values():
            pair.new_match()
            record = measure_block(pair, args.warm)[1]
        echo_block(echo_wire, record)
        samples: dict[str, list[float]] = {s.name: [] for s in servers}
        cpu: dict[str, float] = {s.name: 0.0 for s in servers}
        while len(samples["echo"]) < args.moves:
            n = min(args.block, args.moves - len(samples["echo"]))
            for server in servers[:-1]:
                c0 = server.cpu_seconds()
                times, record = measure_block(pairs[server.name], n)
                cpu[server.name] += server.cpu_seconds() - c0
                samples[server.name] += times
            c0 = echo.cpu_seconds()
            samples["echo"] += echo_block(echo_wire, record)
            cpu["echo"] += echo.cpu_seconds() - c0
    except (OSError, RuntimeError) as exc:
        print(f"bench_echo: {exc}", file=sys.stderr)
        return 2
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    fig = summarize(samples, cpu)
    echo_fig = fig["echo"]
    base = fig[servers[0].name] if args.build else None
    print(f"{'server':<22} {'p50 µs':>8} {'p90 µs':>8} {'p99 µs':>8} {'CPU µs/move':>12}"
          f" {'p50/echo':>9} {'p99/echo':>9}" + (f" {'p50/base':>9} {'p99/base':>9}"
                                                  if base else ""))
    for name, f in fig.items():
        line = (f"{name:<22} {f['p50_us']:8.0f} {f['p90_us']:8.0f} {f['p99_us']:8.0f} "
                f"{f['cpu_us_per_move']:12.1f} {f['p50_us'] / echo_fig['p50_us']:9.2f} "
                f"{f['p99_us'] / echo_fig['p99_us']:9.2f}")
        if base:
            line += f" {f['p50_us'] / base['p50_us']:9.2f} {f['p99_us'] / base['p99_us']:9.2f}"
        print(line)
    print(f"(the echo's CPU is the last server's replayed replies; load average "
          f"{os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
