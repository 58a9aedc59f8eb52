#!/usr/bin/env python3
"""``scripts/load.py`` flat out against two cardserver builds, alternating, same run.

    .venv/bin/python scripts/bench_flatout.py --base /path/to/other/checkout
        [--rounds 3] [--matches 200] [--duration 20] [--game datastructures] [--json FILE]

Each round runs ``load.py --spawn-server --think 0`` once against the base
checkout's ``cardserver`` and once against this checkout's (through
``$CARDSERVER_CMD``), the server pinned to CPU 0 and the load processes to CPU 1
when ``taskset`` exists, as the peers harness does. Printed per run and as
medians: intents per second, server CPU per intent, p50 / p99, and this build's
ratio to the base in the same round (goal of issue 16: intents per second at
least 2x). Exit status 0, or 2 when a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_load(checkout: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One flat-out load.py run against ``checkout``'s cardserver; its JSON figures.

    Raises:
        RuntimeError: load.py failed or wrote no figures.
    """
    exe = checkout / ".venv" / "bin" / "cardserver"
    if not exe.exists():
        raise RuntimeError(f"{exe} is missing (run scripts/bootstrap.sh there)")
    taskset = shutil.which("taskset")
    # through bench_cardserver.sh: load.py's hundreds of sessions from 127.0.0.1 would
    # trip the per-address quotas (every check still runs, with raised bounds)
    server_cmd = f"env BENCH_CARDSERVER={exe} {ROOT / 'scripts' / 'bench_cardserver.sh'}"
    if taskset:
        server_cmd = f"{taskset} -c 0 {server_cmd}"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "load.json"
        cmd = [sys.executable, str(ROOT / "scripts" / "load.py"), "--spawn-server",
               "--matches", str(args.matches), "--think", "0", "--duration",
               str(args.duration), "--game", args.game, "--procs", str(args.procs),
               "--json", str(out)]
        if taskset:
            cmd = [taskset, "-c", "1", *cmd]
        env = {**os.environ, "CARDSERVER_CMD": server_cmd}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if not out.exists():
            raise RuntimeError(f"load.py exited {done.returncode}: {done.stderr[-1500:]}")
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--game", default="datastructures", choices=["datastructures", "war"])
    parser.add_argument("--procs", type=int, default=1, help="load processes (all on CPU 1)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    builds = {"base": args.base, "this": ROOT}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    ratios = []
    try:
        for rnd in range(1, args.rounds + 1):
            for name, checkout in builds.items():
                fig = run_load(checkout, args)
                runs[name].append(fig)
                lat = fig["latency_ms"]
                print(f"round {rnd} {name:<5} {fig['intents_per_s']:7.0f} intents/s  "
                      f"server {fig['server_cpu_ms_per_intent'] or 0:.3f} ms CPU/intent, "
                      f"{(fig['server_cpu_share'] or 0):.0%} of a core, waiting "
                      f"{(fig['server_runqueue_wait_share'] or 0):.0%}  p50 {lat['p50']:.1f} / "
                      f"p99 {lat['p99']:.1f} ms  errors {fig['error_count']}", flush=True)
            ratios.append(runs["this"][-1]["intents_per_s"] / runs["base"][-1]["intents_per_s"])
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"bench_flatout: {exc}", file=sys.stderr)
        return 2

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] or 0.0 for r in runs[name])

    for name in builds:
        print(f"median {name:<5} {med(name, 'intents_per_s'):7.0f} intents/s  "
              f"{med(name, 'server_cpu_ms_per_intent'):.3f} ms CPU/intent")
    print(f"this/base intents per second, median of the rounds' ratios: "
          f"{statistics.median(ratios):.2f}x (load average {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "ratios": ratios}, indent=2,
                                        default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
