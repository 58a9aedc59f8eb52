#!/usr/bin/env python3
"""One intent's latency on a single server (SQLite) against one cluster node (Redis).

    .venv/bin/python scripts/bench_cluster_commit.py [--intents 2000] [--block 200]

Starts a redis-server (``appendonly yes``, ``appendfsync always``, temporary
directory) and two ``cardserver`` subprocesses on 127.0.0.1: one plain, one
``--cluster``. One client plays War matches against each over two connections,
one intent at a time, and times each intent from writing its frame to reading
its ``ok`` (the reply is sent only after the commit: SQLite's, or Redis's
answer). Both are measured in alternating blocks of ``--block`` intents so the
shared machine's load hits both alike. Redis's own counters give the commit
scripts (``EVALSHA``) and all commands per intent; with one intent in flight
each commit is one round trip.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from load import SpawnedServer, percentile  # noqa: E402

from tests.cluster.redis_server import RedisServer, command_calls  # noqa: E402
from tests.server.helpers import TestClient  # noqa: E402


class Player:
    """Two connections playing War matches one intent at a time."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.clients: dict[int, TestClient] = {}
        self.match = ""
        self.snaps: dict[int, dict] = {}

    async def new_match(self) -> None:
        for c in self.clients.values():
            await c.aclose()
        one, two = await TestClient.connect(self.port), await TestClient.connect(self.port)
        await one.hello("one")
        await two.hello("two")
        self.clients = {0: one, 1: two}
        self.match = (await one.expect_ok("create", game="war", options={"cap": 1000}))["match"]
        await two.expect_ok("join", match=self.match)
        self.snaps = {s: await c.snapshot(self.match, lambda m: m["status"] == "active")
                      for s, c in self.clients.items()}

    async def intents(self, count: int) -> list[float]:
        """Seconds from each intent's send to its ``ok``."""
        times: list[float] = []
        while len(times) < count:
            if not self.clients or any(s["status"] != "active" for s in self.snaps.values()):
                await self.new_match()
            seat = next(s for s, snap in self.snaps.items() if snap["legal"])
            snap = self.snaps[seat]
            start = time.perf_counter()
            reply = await self.clients[seat].request("intent", match=self.match, seq=snap["seq"],
                                                     intent=snap["legal"][0])
            times.append(time.perf_counter() - start)
            assert reply["type"] == "ok", reply
            for s, c in self.clients.items():
                self.snaps[s] = await c.snapshot(self.match,
                                                 lambda m, n=reply["seq"]: m["seq"] >= n)
        return times


async def measure(single: int, node: int, intents: int, block: int
                  ) -> tuple[list[float], list[float]]:
    a, b = Player(single), Player(node)
    out_a: list[float] = []
    out_b: list[float] = []
    await a.intents(50)  # warm up both
    await b.intents(50)
    while len(out_a) < intents:
        out_a += await a.intents(block)
        out_b += await b.intents(block)
    return out_a, out_b


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    mean = sum(ordered) / len(ordered)
    return (f"mean {mean * 1e6:7.0f} us  p50 {percentile(ordered, 0.5) * 1e6:7.0f} us  "
            f"p99 {percentile(ordered, 0.99) * 1e6:7.0f} us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--intents", type=int, default=2000)
    parser.add_argument("--block", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cardbench-") as tmp:
        redis = RedisServer(Path(tmp))
        redis.start()
        port = redis.port
        single = SpawnedServer([])
        node = SpawnedServer(["--cluster", f"redis://127.0.0.1:{port}/0", "--node-name", "n1"])
        try:
            single.start()
            node.start()
            before = command_calls(port)
            a, b = trio.run(measure, single.port, node.port, args.intents, args.block)
            after = command_calls(port)
        finally:
            for server in (single, node):
                server.close()
            redis.stop()
    counted = len(b) + 50
    evalsha = after.get("evalsha", 0) - before.get("evalsha", 0)
    total = sum(after.values()) - sum(before.values())
    print(f"single server (SQLite)  {summary(a)}  ({len(a)} intents)")
    print(f"cluster node (Redis)    {summary(b)}  ({len(b)} intents)")
    print(f"cluster - single: mean {(sum(b) / len(b) - sum(a) / len(a)) * 1e6:+.0f} us, "
          f"p50 {(percentile(sorted(b), 0.5) - percentile(sorted(a), 0.5)) * 1e6:+.0f} us")
    print(f"Redis per intent: {evalsha / counted:.2f} commit scripts (EVALSHA), "
          f"{total / counted:.2f} commands in all (creates, sessions, leases included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
