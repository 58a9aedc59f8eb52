#!/usr/bin/env python3
"""What TLS costs: connection set-up and per-intent latency, TLS against plain TCP.

    nice .venv/bin/python scripts/bench_tls.py [--connects 300] [--intents 3000]
        [--block 100] [--json FILE]

Starts two ``cardserver`` subprocesses on 127.0.0.1 with their default limits
(temporary stores): one plain, one with ``--tls-cert``/``--tls-key`` (a
certificate from a throwaway CA made by ``trustme``, from the test extra). Then,
in alternating blocks of ``--block`` so that the shared machine's load hits both
alike:

* **set-up**: open a connection and complete the handshake up to ``welcome``
  (TCP connect, for TLS the TLS handshake with certificate checking, then
  ``hello``/``welcome``); the TLS handshake alone is timed too;
* **per intent**: two seats of a Data Structures match, one intent at a time, each
  timed from the moment its frame is written to the moment the acting seat has
  read the snapshot that answers it (seq + 1).

Prints p50/p99 of each and TLS minus plain. Only 127.0.0.1; every loop bounded.
Exit status 0, or 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HOST, SpawnedServer, Wire, latency_ms  # noqa: E402


def _certificates(directory: Path) -> tuple[Path, Path, ssl.SSLContext]:
    """(cert chain file, key file, a client context trusting their CA)."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert(HOST)
    chain, key = directory / "cert.pem", directory / "key.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(chain))
    cert.private_key_pem.write_to_path(str(key))
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return chain, key, context


class Link:
    """How to reach one server: plain, or TLS with ``context``."""

    def __init__(self, port: int, context: ssl.SSLContext | None) -> None:
        self.port = port
        self.context = context

    async def open(self, times: dict[str, list[float]] | None = None) -> Wire:
        """A connection that has completed its handshake (times appended)."""
        start = time.monotonic()
        if self.context is None:
            stream: trio.abc.Stream = await trio.open_tcp_stream(HOST, self.port)
        else:
            tcp = await trio.open_tcp_stream(HOST, self.port)
            stream = trio.SSLStream(tcp, self.context, server_hostname=HOST)
            before = time.monotonic()
            await stream.do_handshake()
            if times is not None:
                times["tls_handshake"].append(time.monotonic() - before)
        wire = Wire(stream)  # type: ignore[arg-type]
        await wire.hello("bench")
        if times is not None:
            times["setup"].append(time.monotonic() - start)
        return wire


async def _setups(link: Link, count: int, times: dict[str, list[float]]) -> None:
    for _ in range(count):
        wire = await link.open(times)
        await wire.aclose()


class Pair:
    """Two seats of one Data Structures match on ``link``, replaced when it ends."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.wires: list[Wire] = []
        self.match = ""
        self.snaps: list[dict[str, Any]] = []

    async def start(self) -> None:
        for wire in self.wires:
            await wire.aclose()
        self.wires = [await self.link.open(), await self.link.open()]
        a, b = self.wires
        self.match = (await a.request({"type": "create", "game": "datastructures",
                                       "options": {"cap": 500}, "turn_timer": 0}))["match"]
        await b.request({"type": "join", "match": self.match})
        self.snaps = [await self._snapshot(w, lambda s: s["status"] == "active")
                      for w in self.wires]

    async def _snapshot(self, wire: Wire, pred: Any) -> dict[str, Any]:
        while True:
            msg = await wire.recv()
            if msg.get("type") == "snapshot" and msg.get("match") == self.match and pred(msg):
                return msg

    async def intents(self, count: int, out: list[float]) -> None:
        for _ in range(count):
            seat = next((i for i in (0, 1) if self.snaps[i]["legal"]), None)
            if seat is None or self.snaps[0]["status"] != "active":
                await self.start()
                continue
            seq = self.snaps[seat]["seq"]
            sent = time.monotonic()
            reply = await self.wires[seat].request({
                "type": "intent", "match": self.match, "seq": seq,
                "intent": self.snaps[seat]["legal"][0]})
            if reply["type"] != "ok":
                raise RuntimeError(f"intent refused: {reply}")
            self.snaps[seat] = await self._snapshot(self.wires[seat],
                                                    lambda s, n=seq: s["seq"] > n)
            out.append(time.monotonic() - sent)
            other = 1 - seat
            self.snaps[other] = await self._snapshot(self.wires[other],
                                                     lambda s, n=seq: s["seq"] > n)


async def bench(links: dict[str, Link], connects: int, intents: int,
                block: int) -> dict[str, dict[str, list[float]]]:
    times = {name: {"setup": [], "tls_handshake": [], "intent": []} for name in links}
    pairs = {name: Pair(link) for name, link in links.items()}
    for pair in pairs.values():
        await pair.start()
    for name, link in links.items():  # warm-up, untimed
        await _setups(link, 5, {"setup": [], "tls_handshake": []})
        await pairs[name].intents(20, [])
    done = 0
    while done < max(connects, intents):
        for name, link in links.items():
            if done < connects:
                await _setups(link, min(block, connects - done), times[name])
            if done < intents:
                await pairs[name].intents(min(block, intents - done), times[name]["intent"])
        done += block
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connects", type=int, default=300)
    parser.add_argument("--intents", type=int, default=3000)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        try:
            chain, key, context = _certificates(Path(tmp))
        except ImportError:
            print("bench_tls: needs trustme (pip install -e '.[test]')", file=sys.stderr)
            return 2
        plain = SpawnedServer([])
        tls = SpawnedServer(["--tls-cert", str(chain), "--tls-key", str(key)])
        try:
            plain.start()
            tls.start()
            links = {"plain": Link(plain.port, None), "tls": Link(tls.port, context)}
            times = trio.run(bench, links, args.connects, args.intents, args.block)
        except RuntimeError as exc:
            print(f"bench_tls: {exc}", file=sys.stderr)
            return 2
        finally:
            plain.close()
            tls.close()
    figures = {name: {what: latency_ms(values) for what, values in kinds.items() if values}
               for name, kinds in times.items()}
    print(f"{'':14} {'plain p50':>10} {'plain p99':>10} {'TLS p50':>10} {'TLS p99':>10} "
          f"{'+p50':>8} {'+p99':>8}   (ms)")
    for what, label in (("setup", "connect+hello"), ("intent", "per intent")):
        p, t = figures["plain"][what], figures["tls"][what]
        print(f"{label:14} {p['p50']:10.2f} {p['p99']:10.2f} {t['p50']:10.2f} {t['p99']:10.2f} "
              f"{t['p50'] - p['p50']:8.2f} {t['p99'] - p['p99']:8.2f}")
    h = figures["tls"]["tls_handshake"]
    print(f"{'TLS handshake':14} {'':10} {'':10} {h['p50']:10.2f} {h['p99']:10.2f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
