#!/usr/bin/env python3
"""What a relayed intent costs: War flips of a player on another node than the
match's owner, against flips of players on the owner, in the same run.

    .venv/bin/python scripts/bench_relay.py [--moves 2000] [--block 200]
        [--fsync always|everysec] [--json FILE]

Starts a redis-server (AOF, ``appendfsync always`` as a cluster needs, or
``everysec`` to take the disk's fsync out of the comparison: the nodes then run
with ``--redis-persistence warn``) and two ``cardserver --cluster`` nodes, ``a`` and ``b``, each its own process, on
loopback. Two War matches run in strict ping-pong (scripts/bench_echo.py's
client: blocking sockets, a move timed from writing the ``intent`` to reading
the mover's own snapshot of the next seq):

* ``local``: both players connected to ``a``, which owns the match;
* ``cross``: seat 0 connected to ``a`` (the owner), seat 1 to ``b``: each of
  seat 1's intents goes b -> Redis -> a, its ``ok`` and snapshot a -> Redis -> b.

They alternate in blocks of ``--block`` moves so that the machine's load
changes hit both alike. Printed: p50 / p90 / p99 per seat of each match, the
extra latency of a relayed intent (cross seat 1 against the local match; also
the median over the block pairs of the difference of their p50s, which a load
that changes during the run moves less), the nodes' CPU per move in each match
(/proc, both nodes together), the
floor of one hop (a coredis ``publish`` delivered to a subscriber in the same
trio process; a relayed intent makes two), and Redis commands per move in each
match (``INFO commandstats``, less what the nodes do when idle: lease renewals,
the lobby index).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_echo import WarPair, Wire  # noqa: E402
from load import free_port  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.cluster.redis_server import RedisServer, command_calls  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
START_TIMEOUT = 20.0


def wait_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


class Redis(RedisServer):
    """A redis-server of this run (AOF with ``fsync``), and its command counter."""

    def __init__(self, directory: Path, fsync: str) -> None:
        super().__init__(directory, fsync=fsync)
        self.start()

    def commands(self) -> int:
        """Commands Redis has run so far (``INFO commandstats``, INFO itself excluded)."""
        return sum(n for name, n in command_calls(self.port).items() if name != "info")


def start_node(name: str, redis: Redis, directory: Path, fsync: str
               ) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    weaker = [] if fsync == "always" else ["--redis-persistence", "warn"]
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "--host", HOST, "--port", str(port),
         "--db", str(directory / f"{name}.db"), "--cluster", redis.url, "--node-name", name,
         "--log-level", "warning", *weaker], cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=open(directory / f"{name}.log", "w"))  # noqa: SIM115
    wait_port(port, process, f"node {name}")
    return process, port


class CrossPair(WarPair):
    """A War pair whose seat 0 is connected to one node and seat 1 to another."""

    def __init__(self, port0: int, port1: int) -> None:  # noqa: D107
        self.wires = [Wire(port0), Wire(port1)]
        for i, wire in enumerate(self.wires):
            wire.send({"type": "hello", "protocol": [1], "name": f"cross{i}",
                       "client": "bench_relay/1"})
            if wire.read().get("type") != "welcome":
                raise RuntimeError("no welcome")
        self.match = ""
        self.snaps = [{}, {}]


def run_block(pair: WarPair, moves: int, times: dict[int, list[float]]) -> int:
    """``moves`` flips of ``pair`` (new matches as they end); how many were made."""
    done = 0
    while done < moves:
        snap = pair.snaps[0]
        mover = min(snap["view"]["waiting"]) if snap.get("status") == "active" and \
            snap["view"]["waiting"] else None
        result = pair.move() if mover is not None else None
        if result is None:
            pair.new_match()
            continue
        times[mover].append(result[0])
        done += 1
    return done


def cpu_seconds(processes: list[subprocess.Popen[bytes]]) -> float:
    """User + system CPU seconds the processes have used so far (/proc, Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in processes:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def pubsub_hops(url: str, hops: int) -> list[float]:
    """Seconds from a coredis ``publish`` to its delivery to a subscriber of the same
    process (trio), ``hops`` times: the floor of one hop of the relay."""
    import trio

    from server.cluster.redis import client

    async def run() -> list[float]:
        times: list[float] = []
        redis = client(url)
        async with redis:
            pubsub = redis.pubsub(channels=["bench:hop"], ignore_subscribe_messages=True)
            async with pubsub:
                for _ in range(hops):
                    start = time.perf_counter()
                    await redis.publish("bench:hop", b"x")
                    async for _message in pubsub:
                        break
                    times.append(time.perf_counter() - start)
        return times

    return trio.run(run)


def quantiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100)
    return {"p50": cuts[49] * 1e6, "p90": cuts[89] * 1e6, "p99": cuts[98] * 1e6,
            "n": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=2000, help="moves per match")
    parser.add_argument("--block", type=int, default=200)
    parser.add_argument("--fsync", choices=("always", "everysec"), default="always")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_relay") as tmp:
        directory = Path(tmp)
        redis = Redis(directory, args.fsync)
        nodes: list[subprocess.Popen[bytes]] = []
        try:
            node_a, port_a = start_node("a", redis, directory, args.fsync)
            nodes.append(node_a)
            node_b, port_b = start_node("b", redis, directory, args.fsync)
            nodes.append(node_b)
            local, cross = WarPair(port_a), CrossPair(port_a, port_b)
            local.new_match()
            cross.new_match()
            hop = quantiles(pubsub_hops(redis.url, 500))
            idle_start, t0 = redis.commands(), time.perf_counter()
            time.sleep(2.0)
            idle_rate = (redis.commands() - idle_start - 1) / (time.perf_counter() - t0)
            times = {"local": {0: [], 1: []}, "cross": {0: [], 1: []}}
            commands = {"local": 0.0, "cross": 0.0}
            cpu = {"local": 0.0, "cross": 0.0}
            made = {"local": 0, "cross": 0}
            block_gaps = []
            for _ in range(max(1, args.moves // args.block)):
                counts = {}
                for name, pair in (("local", local), ("cross", cross)):
                    counts[name] = {seat: len(times[name][seat]) for seat in (0, 1)}
                    before, start = redis.commands(), time.perf_counter()
                    cpu_before = cpu_seconds(nodes)
                    made[name] += run_block(pair, args.block, times[name])
                    spent = time.perf_counter() - start
                    cpu[name] += cpu_seconds(nodes) - cpu_before
                    commands[name] += redis.commands() - before - 1 - idle_rate * spent
                local_block = [t for seat in (0, 1)
                               for t in times["local"][seat][counts["local"][seat]:]]
                relayed_block = times["cross"][1][counts["cross"][1]:]
                block_gaps.append(statistics.median(relayed_block)
                                  - statistics.median(local_block))
        finally:
            for node in nodes:
                node.terminate()
            for node in nodes:
                node.wait(10)
            redis.stop()
    report: dict[str, Any] = {"idle_commands_per_s": idle_rate, "pubsub_hop": hop}
    for name in ("local", "cross"):
        for seat in (0, 1):
            report[f"{name}_seat{seat}"] = quantiles(times[name][seat])
        # less the idle rate, a match with no command of its own may come out a hair
        # below zero: it is zero
        report[f"{name}_commands_per_move"] = max(0.0, commands[name] / made[name])
        report[f"{name}_node_cpu_us_per_move"] = cpu[name] / made[name] * 1e6
    local_all = times["local"][0] + times["local"][1]
    report["local_both"] = quantiles(local_all)
    relayed, base = report["cross_seat1"], report["local_both"]
    report["relay_extra_us"] = {k: relayed[k] - base[k] for k in ("p50", "p90", "p99")}
    report["relay_extra_block_median_us"] = statistics.median(block_gaps) * 1e6
    report["fsync"] = args.fsync
    print(f"appendfsync {args.fsync}; moves per match: {made['local']} local, "
          f"{made['cross']} cross; "
          f"Redis idle: {idle_rate:.1f} commands/s")
    print(f"{'':28} {'p50 us':>9} {'p90 us':>9} {'p99 us':>9}")
    rows = [("local match, both seats", base), ("cross, seat 0 (on owner)",
            report["cross_seat0"]), ("cross, seat 1 (relayed)", relayed)]
    for label, q in rows:
        print(f"{label:28} {q['p50']:9.0f} {q['p90']:9.0f} {q['p99']:9.0f}")
    print(f"{'one coredis pub/sub hop':28} {hop['p50']:9.0f} {hop['p90']:9.0f} "
          f"{hop['p99']:9.0f}")
    extra = report["relay_extra_us"]
    print(f"relayed intent, extra:       {extra['p50']:9.0f} {extra['p90']:9.0f} "
          f"{extra['p99']:9.0f}")
    print(f"relayed intent, extra p50, median over {len(block_gaps)} block pairs: "
          f"{report['relay_extra_block_median_us']:.0f} us")
    print(f"Redis commands per move: local match {report['local_commands_per_move']:.2f}, "
          f"cross-node match {report['cross_commands_per_move']:.2f}")
    print(f"node CPU per move (both nodes): local match "
          f"{report['local_node_cpu_us_per_move']:.0f} us, cross-node match "
          f"{report['cross_node_cpu_us_per_move']:.0f} us")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
