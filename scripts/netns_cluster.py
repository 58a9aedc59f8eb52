#!/usr/bin/env python3
"""A cluster on simulated hosts: network namespaces on this machine, one per host.

    sudo .venv/bin/python scripts/netns_cluster.py [--matches 200] [--think 1]
        [--duration 20] [--spread matches|seats] [--nodes 2] [--json FILE]

Needs root (``ip netns``) and ``redis-server``. It builds::

    ns <P>-redis  10.77.0.1   redis-server (appendonly yes, appendfsync always)
    ns <P>-n1     10.77.0.11  cardserver --cluster ... --advertise 10.77.0.11:7000
    ns <P>-n2     10.77.0.12  cardserver --cluster ... --advertise 10.77.0.12:7000
    ns <P>-load   10.77.0.2   scripts/load.py, clients spread over the nodes
            \\__ veth pairs to a bridge in ns <P>-sw (no address of its own) __/

(``<P>`` is ``cs`` and this process's id, so two runs never share names). Each
host has only its namespace's addresses: nothing listens on the machine's own
interfaces or loopback, and the traffic between "hosts" crosses real veth
devices and a bridge (no added delay: the kernel here has no netem). The load
runs in its own namespace with scripts/load.py (``--port`` naming the nodes'
addresses, CPU summed over the node processes), and Redis's ``INFO
commandstats`` gives the commands per intent.

Everything it starts is stopped and every namespace deleted at the end, on
Ctrl-C and on failure too (deleting a namespace deletes its veth ends).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from load import ONE_ADDRESS_FLAGS, cardserver_command  # noqa: E402

NET = "10.77.0"
REDIS_IP = f"{NET}.1"
LOAD_IP = f"{NET}.2"
NODE_PORT = 7000
METRICS_PORT = 9100


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command (no shell); raise on failure when ``check``."""
    return subprocess.run(args, capture_output=True, text=True, check=check, timeout=60)


class Hosts:
    """The namespaces, their links, and the processes started in them."""

    def __init__(self, nodes: int) -> None:
        self.prefix = f"cs{os.getpid()}"
        self.names = ["redis", *(f"n{i + 1}" for i in range(nodes)), "load"]
        self.ip = {"redis": REDIS_IP, "load": LOAD_IP,
                   **{f"n{i + 1}": f"{NET}.{11 + i}" for i in range(nodes)}}
        self.created: list[str] = []
        self.procs: list[subprocess.Popen[bytes]] = []

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def exec(self, name: str, *args: str) -> list[str]:
        """``args`` run inside host ``name``."""
        return ["ip", "netns", "exec", self.ns(name), *args]

    def build(self) -> None:
        """The switch namespace with a bridge, and one veth pair per host."""
        switch = self.ns("sw")
        sh("ip", "netns", "add", switch)
        self.created.append(switch)
        sh("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", switch, "link", "set", "br0", "up")
        for i, name in enumerate(self.names):
            ns = self.ns(name)
            sh("ip", "netns", "add", ns)
            self.created.append(ns)
            port = f"p{i}"
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name",
               port, "netns", switch)
            sh("ip", "-n", switch, "link", "set", port, "master", "br0", "up")
            sh("ip", "-n", ns, "addr", "add", f"{self.ip[name]}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")

    def start(self, name: str, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(self.exec(name, *args), stdout=open(log, "ab"),  # noqa: SIM115
                                stderr=subprocess.STDOUT, cwd=ROOT)
        self.procs.append(proc)
        return proc

    def cleanup(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL), delete every namespace."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for ns in reversed(self.created):
            sh("ip", "netns", "del", ns, check=False)
        self.created.clear()


def wait_for(host: Hosts, name: str, port: int, proc: subprocess.Popen[bytes],
             log: Path, timeout: float = 20.0) -> None:
    """Until ``name`` accepts TCP on ``port`` at its address (checked from the load host)."""
    probe = ("import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited: {log.read_text()[-2000:]}")
        if sh(*host.exec("load", sys.executable, "-c", probe, host.ip[name], str(port)),
              check=False).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not listen on {host.ip[name]}:{port}")


def redis_calls(host: Hosts) -> int:
    """Every command Redis ran so far (``INFO commandstats``), less INFO's own."""
    out = sh(*host.exec("redis", "redis-cli", "-h", REDIS_IP, "INFO", "commandstats")).stdout
    total = 0
    for line in out.splitlines():
        if line.startswith("cmdstat_") and not line.startswith("cmdstat_info:"):
            total += int(line.split("calls=", 1)[1].split(",", 1)[0])
    return total


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    hosts = Hosts(args.nodes)
    try:
        hosts.build()
        redis_log = tmp / "redis.log"
        redis = hosts.start("redis", ["redis-server", "--bind", REDIS_IP, "--port", "6379",
                                      "--dir", str(tmp), "--appendonly", "yes",
                                      "--appendfsync", "always", "--save", "",
                                      "--protected-mode", "no"], redis_log)
        wait_for(hosts, "redis", 6379, redis, redis_log)
        url = f"redis://{REDIS_IP}:6379/0"
        nodes = []
        for i in range(args.nodes):
            name = f"n{i + 1}"
            ip = hosts.ip[name]
            log = tmp / f"{name}.log"
            proc = hosts.start(name, [
                *cardserver_command(), "--host", ip, "--port", str(NODE_PORT), "--db",
                str(tmp / f"{name}.db"), "--cluster", url, "--node-name", name,
                "--advertise", f"{ip}:{NODE_PORT}", "--metrics-port", str(METRICS_PORT),
                "--log-level", "warning", *ONE_ADDRESS_FLAGS,
                "--max-connections", str(2 * args.matches + 100),
                "--max-matches", str(4 * args.matches + 100)], log)
            wait_for(hosts, name, NODE_PORT, proc, log)
            nodes.append((name, ip, proc))
        before = redis_calls(hosts)
        figures = tmp / "load.json"
        load = [sys.executable, str(ROOT / "scripts" / "load.py"), "--port",
                ",".join(f"{ip}:{NODE_PORT}" for _, ip, _ in nodes),
                # ip netns exec execs the command: the node's pid is its Popen's
                *(a for _, _, p in nodes for a in ("--server-pid", str(p.pid))),
                "--matches", str(args.matches), "--think", str(args.think),
                "--duration", str(args.duration), "--spread", args.spread,
                "--procs", str(args.procs), "--json", str(figures)]
        done = subprocess.run(hosts.exec("load", *load), cwd=ROOT, capture_output=True,
                              text=True, timeout=args.duration + 300, check=False)
        if not figures.exists():
            raise RuntimeError(f"load.py failed ({done.returncode}): {done.stderr[-2000:]}")
        fig = json.loads(figures.read_text())
        commands = redis_calls(hosts) - before
        health = sh(*hosts.exec("load", sys.executable, "-c",
                                "import sys,urllib.request as u;print(u.urlopen("
                                "sys.argv[1],timeout=2).read().decode())",
                                f"http://{nodes[0][1]}:{METRICS_PORT}/healthz"),
                    check=False).stdout.strip()
        return {"load": fig, "load_table": done.stdout, "redis_commands": commands,
                "redis_per_intent": commands / fig["intents_total"]
                if fig["intents_total"] else None, "healthz": health}
    finally:
        hosts.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--spread", choices=("matches", "seats"), default="matches")
    parser.add_argument("--nodes", type=int, default=2, choices=(1, 2, 3))
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("needs root (ip netns)")
    for tool in ("ip", "redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not installed")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleanup runs in finally
    with tempfile.TemporaryDirectory(prefix="netns-cluster-") as tmp:
        os.chmod(tmp, 0o755)
        try:
            result = run(args, Path(tmp))
        except RuntimeError as exc:
            print(f"netns_cluster: {exc}", file=sys.stderr)
            return 2
    print(f"{args.nodes} node(s) on simulated hosts, {args.matches} matches, think "
          f"{args.think:g} s, spread {args.spread}")
    print(result["load_table"], end="")
    rpi = result["redis_per_intent"]
    print(f"Redis commands: {result['redis_commands']} "
          f"({rpi:.2f} per intent)" if rpi is not None else "Redis commands: n/a")
    print(f"/healthz of n1 at the end: {result['healthz']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
    return 0 if result["load"]["error_count"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
