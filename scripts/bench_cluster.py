#!/usr/bin/env python3
"""The same load against one server and against cluster nodes on Redis, in one run.

    .venv/bin/python scripts/bench_cluster.py [--matches 1000] [--think 2] [--duration 20]
        [--configs single,node1,node2,node2-seats] [--game datastructures] [--json FILE]

Configurations, each with a fresh store (and an emptied Redis), run one after the
other against the same load (scripts/load.py's clients: ``--matches`` two-seat
matches, random legal intents after a think time):

``single``
    one ``cardserver`` without ``--cluster`` (SQLite): the baseline;
``node1``
    one node of a cluster (``--cluster``, Redis with ``appendfsync always``);
``node2``
    two nodes, the matches spread over both (both seats of a match on its node);
``node2-seats``
    two nodes, each match's second seat connected to the other node (its
    requests and its snapshots relayed between the nodes).

For each it prints: intents answered per second of the server processes' CPU
(the nodes' CPU summed, over the steady window; Redis's own CPU over the same
window beside it, and the figure with it counted),
that figure against ``single`` (the goal: the cluster within 30 %), Redis
commands per intent (``INFO commandstats`` before and after, every command of
the run counted, those a script runs included, divided by the intents
answered), the nodes' round trips to Redis per intent (their
``cardserver_redis_round_trips_total``, scraped from ``--metrics-port``), and
the p50/p99 latency of an intent to its snapshot.

The machine is shared: the load average is printed with each row; the ratios
between configurations of one run are what to compare. Everything runs on
loopback; every process started is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "scripts"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from load import ONE_ADDRESS_FLAGS, SpawnedServer, _drive, free_port  # noqa: E402

from server.fdlimit import raise_fd_limit  # noqa: E402
from tests.cluster.redis_server import RedisServer, command_calls  # noqa: E402

CONFIGS = ("single", "node1", "node2", "node2-seats")


def redis_cli(port: int, *args: str) -> str:
    """``redis-cli -p PORT ARGS`` on loopback; its output."""
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, check=True, timeout=10).stdout


#: commands this script sends itself (not counted)
OWN_COMMANDS = frozenset({"info", "config|resetstat", "flushall"})


def redis_calls(port: int) -> dict[str, int]:
    """Calls per command from ``INFO commandstats`` (less this script's own)."""
    return {name: n for name, n in command_calls(port).items() if name not in OWN_COMMANDS}


def scrape(ports: list[int]) -> dict[str, float]:
    """The nodes' counters that matter here, summed over the nodes whose metrics are
    on ``ports``: Redis round trips, and the commit histogram's buckets
    (``commit_le_BOUND``)."""
    found: dict[str, float] = {}
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                name, _, number = line.rpartition(" ")
                if name.startswith("cardserver_redis_round_trips_total{"):
                    key = "trips"
                elif name.startswith("cardserver_commit_seconds_bucket{"):
                    key = "commit_le_" + name.split('le="', 1)[1].split('"', 1)[0]
                else:
                    continue
                found[key] = found.get(key, 0.0) + float(number)
    return found


def commit_quantile(before: dict[str, float], after: dict[str, float], q: float
                    ) -> float | None:
    """The upper bound (ms) of the commit-time bucket holding the ``q`` quantile of the
    commits between two scrapes (None: no commit)."""
    bounds = sorted((float(k[len("commit_le_"):]), k) for k in after
                    if k.startswith("commit_le_"))
    if not bounds:
        return None
    total = after[bounds[-1][1]] - before.get(bounds[-1][1], 0.0)
    if total <= 0:
        return None
    for bound, key in bounds:
        if after[key] - before.get(key, 0.0) >= q * total:
            return bound * 1000
    return None


def _server_flags(matches: int) -> list[str]:
    return [*ONE_ADDRESS_FLAGS, "--max-connections", str(2 * matches + 100),
            "--max-matches", str(4 * matches + 100)]


def run_config(name: str, args: argparse.Namespace, redis: RedisServer) -> dict[str, Any]:
    """One configuration: its nodes started, the load run, the figures."""
    nodes = 2 if name.startswith("node2") else 1
    cluster = name != "single"
    servers: list[SpawnedServer] = []
    metrics_ports: list[int] = []
    if cluster:
        redis_cli(redis.port, "FLUSHALL")
        redis_cli(redis.port, "CONFIG", "RESETSTAT")
    try:
        for i in range(nodes):
            metrics_ports.append(free_port())
            extra = [*_server_flags(args.matches), "--metrics-port", str(metrics_ports[-1])]
            if cluster:
                extra += ["--cluster", redis.url, "--node-name", f"n{i}",
                          "--node-lease", "5"]
            server = SpawnedServer(extra)
            server.start()
            servers.append(server)
        before = redis_calls(redis.port) if cluster else {}
        scraped0 = scrape(metrics_ports)
        load = argparse.Namespace(
            procs=args.procs, ramp=args.ramp, duration=args.duration, game=args.game,
            think=args.think, matches=args.matches, seed=args.seed, samples=None,
            spread="seats" if name.endswith("seats") else "matches")
        fig = _drive(load, [s.port for s in servers], [s.pid for s in servers],
                     also=[redis.process.pid] if cluster and redis.process else [])
        after = redis_calls(redis.port) if cluster else {}
        scraped = scrape(metrics_ports)
        trips = scraped.get("trips", 0.0) - scraped0.get("trips", 0.0)
    finally:
        for server in servers:
            server.close()
    cpu = fig["server_cpu_share"]
    steady = fig["intents_steady"]
    per_cpu = steady / (cpu * args.duration) if cpu else None
    redis_cpu = fig["also_cpu_share"]
    per_cpu_all = steady / ((cpu + (redis_cpu or 0.0)) * args.duration) if cpu else None
    commands = sum(after.values()) - sum(before.values())
    return {
        "config": name, "nodes": nodes, "intents_steady": steady,
        "intents_total": fig["intents_total"], "intents_per_s": fig["intents_per_s"],
        "server_cpu_share": cpu, "intents_per_cpu_s": per_cpu,
        "redis_cpu_share": redis_cpu, "intents_per_cpu_s_with_redis": per_cpu_all,
        "redis_commands": commands if cluster else None,
        "redis_per_intent": commands / fig["intents_total"] if cluster and
        fig["intents_total"] else None,
        "round_trips_per_intent": trips / fig["intents_total"] if cluster and
        fig["intents_total"] else None,
        "redis_top": sorted(((n, k) for k in after
                             if (n := after.get(k, 0) - before.get(k, 0)) > 0),
                            reverse=True)[:6],
        "latency_ms": fig["latency_ms"], "errors": fig["errors"],
        "commit_p50_ms": commit_quantile(scraped0, scraped, 0.5),
        "commit_p99_ms": commit_quantile(scraped0, scraped, 0.99),
        "error_count": fig["error_count"], "matches_finished": fig["matches_finished"],
        "load_average": os.getloadavg()[0],
    }


def print_rows(rows: list[dict[str, Any]]) -> None:
    """One line per configuration and round; each compared with ``single`` of its round."""
    head = (f"{'round':>5} {'config':<12} {'intents':>8} {'/s':>6} {'CPU':>5} {'intents/CPU-s':>13} "
            f"{'vs single':>9} {'cmds/intent':>11} {'trips/intent':>12} {'p50 ms':>7} "
            f"{'p99 ms':>7} "
            f"{'errors':>6} {'load':>5}")
    print(head)
    for r in rows:
        base = next((b["intents_per_cpu_s"] for b in rows
                     if b["config"] == "single" and b.get("round") == r.get("round")), None)
        per = r["intents_per_cpu_s"]
        ratio = f"{per / base - 1:+.0%}" if base and per else "-"
        rpi = f"{r['redis_per_intent']:.2f}" if r["redis_per_intent"] is not None else "-"
        tpi = (f"{r['round_trips_per_intent']:.2f}"
               if r["round_trips_per_intent"] is not None else "-")
        cpu = f"{r['server_cpu_share']:.0%}" if r["server_cpu_share"] is not None else "-"
        print(f"{r.get('round', 1):>5} {r['config']:<12} {r['intents_steady']:>8} {r['intents_per_s']:>6.0f} "
              f"{cpu:>5} {per or 0:>13.0f} {ratio:>9} {rpi:>11} {tpi:>12} "
              f"{r['latency_ms']['p50']:>7.2f} {r['latency_ms']['p99']:>7.2f} "
              f"{r['error_count']:>6} {r['load_average']:>5.1f}")
    for r in rows:
        if not r["redis_top"]:
            print(f"  {r['config']}: commit p50 <= {r['commit_p50_ms']} ms, p99 <= "
                  f"{r['commit_p99_ms']} ms (cardserver_commit_seconds buckets)")
        if r["redis_top"]:
            top = ", ".join(f"{k} {n}" for n, k in r["redis_top"])
            print(f"  {r['config']}: Redis commands {r['redis_commands']} ({top}); Redis "
                  f"{r['redis_cpu_share'] or 0:.0%} of a core; nodes and Redis together "
                  f"{r['intents_per_cpu_s_with_redis'] or 0:.0f} intents per CPU-second; "
                  f"commit p50 <= {r['commit_p50_ms']} ms, p99 <= {r['commit_p99_ms']} ms "
                  "(the nodes' cardserver_commit_seconds buckets)")
        if r["errors"]:
            print(f"  {r['config']}: errors {r['errors']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--think", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--ramp", type=float, default=None)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--game", default="datastructures", choices=["datastructures", "war"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--configs", default="single,node1,node2,node2-seats")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the configurations this many times, interleaved")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    configs = args.configs.split(",")
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        parser.error(f"unknown configs {sorted(unknown)}; known: {', '.join(CONFIGS)}")
    raise_fd_limit()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        redis = RedisServer(Path(tmp))
        redis.start()
        try:
            for round_no in range(1, args.rounds + 1):
                for name in configs:
                    print(f"bench_cluster: round {round_no}, {name} ...", file=sys.stderr,
                          flush=True)
                    started = time.monotonic()
                    rows.append(run_config(name, args, redis) | {"round": round_no})
                    print(f"bench_cluster: {name} done in {time.monotonic() - started:.0f} s",
                          file=sys.stderr, flush=True)
        finally:
            redis.stop()
    print(f"{args.matches} matches, think {args.think:g} s, {args.duration:g} s steady, "
          f"{args.game}, {os.cpu_count()} cores")
    print_rows(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
