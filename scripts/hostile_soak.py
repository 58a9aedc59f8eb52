#!/usr/bin/env python3
"""Hostile soak: every attack at once, at the server's default limits, next to real matches.

    .venv/bin/python scripts/hostile_soak.py [--matches 20] [--calm 10] [--attack 40]

Starts ``cardserver`` (subprocess, temporary ``--db``, default limits except
``--max-connections``). ``--matches`` legitimate Data Structures matches play
throughout (two connections each, random legal intents, ~50 ms think time), in
this process. After ``--calm`` seconds, a second process (multiprocessing)
attacks for ``--attack`` seconds, all at once:

* 1,000 idle connections that say hello and then nothing (no pongs either);
* 500 slowloris connections trickling a hello one byte per second (reconnecting
  when dropped);
* 5 flooders sending requests as fast as they can;
* 5 clients that watch a legitimate match and send requests but never read;
* one connection per second that sends 2 KiB of random bytes.

It reports what each attacker got back (error codes / ``bye`` reasons / closes)
and, for the legitimate matches, errors and intent latency in the calm phase
and under attack. The documented outcomes: idle peers ``bye heartbeat_timeout``
after ``ping_interval + ping_timeout`` (30 s), slowloris ``handshake_timeout``
(5 s), flooders ``rate_limited`` then ``bye rate_limited``, non-readers dropped
as slow consumers, garbage ``frame_too_large``/``bad_frame``; the legitimate
matches see no error at all. Exit status 0 when they saw none, 1 otherwise.
Bounded in time and count; 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import struct
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import (  # noqa: E402
    HOST,
    ONE_ADDRESS_FLAGS,
    SpawnedServer,
    Wire,
    WireClosed,
    percentile,
    proc_cpu,
    proc_runqueue_wait,
    raise_fd_limit,
)

# -- the attackers (a child process) ---------------------------------------------------


def _frame(msg: dict[str, Any]) -> bytes:
    body = msgpack.packb(msg)
    return struct.pack(">I", len(body)) + body


#: Where the legitimate players connect from (the attackers: 127.0.0.1).
LEGIT_ADDRESS = "127.0.0.2"

HELLO = _frame({"type": "hello", "protocol": [1], "name": "evil", "client": "soak"})


class Attack:
    """All the attackers in one trio loop; ``seen[kind]`` counts outcomes."""

    def __init__(self, port: int, matches: list[str], until: float, seed: int) -> None:
        self.port = port
        self.matches = matches
        self.until = until
        self.rng = random.Random(seed)
        self.seen: dict[str, Counter[str]] = {}
        self._fill_nursery: trio.Nursery | None = None

    def note(self, kind: str, outcome: str) -> None:
        self.seen.setdefault(kind, Counter())[outcome] += 1

    async def _open(self) -> trio.SocketStream:
        return await trio.open_tcp_stream(HOST, self.port)

    async def _outcome(self, stream: trio.SocketStream, limit: float) -> str:
        """Read until the server closes (or ``limit`` s); the last error/bye in what came."""
        buf = b""
        with trio.move_on_after(limit) as scope:
            while True:
                try:
                    data = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    break
                buf += data
        last = "open" if scope.cancelled_caught else "closed"
        while len(buf) >= 4:
            (n,) = struct.unpack(">I", buf[:4])
            if len(buf) < 4 + n:
                break
            try:
                msg = msgpack.unpackb(buf[4:4 + n])
            except Exception:
                msg = {}
            if msg.get("type") in ("error", "bye"):
                last = msg.get("reason") or msg.get("code") or last
            buf = buf[4 + n:]
        return last

    def left(self) -> float:
        return max(0.0, self.until - time.monotonic())

    async def idle(self) -> None:
        stream = await self._open()
        await stream.send_all(HELLO)
        self.note("idle", await self._outcome(stream, self.left() + 1))
        await stream.aclose()

    async def slowloris(self) -> None:
        while self.left() > 0:
            try:
                stream = await self._open()
            except OSError as exc:
                self.note("slowloris", f"connect failed: {exc.errno}")
                await trio.sleep(1)
                continue
            got = "open"
            try:
                for byte in HELLO[:-1]:
                    await stream.send_all(bytes([byte]))
                    with trio.move_on_after(1.0):
                        data = await stream.receive_some(65536)
                        got = "answered" if data else "closed"
                        break
                    if self.left() <= 0:
                        break
                if got == "answered":
                    got = await self._outcome_from(data, stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                got = "reset"
            self.note("slowloris", got)
            await stream.aclose()

    async def _outcome_from(self, first: bytes, stream: trio.SocketStream) -> str:
        try:
            (n,) = struct.unpack(">I", first[:4])
            msg = msgpack.unpackb(first[4:4 + n])
            return msg.get("code") or msg.get("reason") or "answered"
        except Exception:
            return await self._outcome(stream, 2)

    async def flood(self) -> None:
        wire = await Wire.open(self.port)
        await wire.hello("flood")
        batch = b"".join(_frame({"type": "games", "id": i}) for i in range(200))
        codes: Counter[str] = Counter()
        wire_bye: list[str] = []

        async def reader() -> None:
            try:
                while True:
                    msg = await wire.recv(self.left() + 2)
                    if msg["type"] == "bye":
                        wire_bye.append(msg["reason"])
                        return
                    codes[msg.get("code") or msg["type"]] += 1
            except WireClosed as exc:
                if exc.last and exc.last.get("type") == "bye":
                    wire_bye.append(exc.last["reason"])
            except trio.TooSlowError:
                return

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            try:
                while self.left() > 0:
                    await wire.stream.send_all(batch)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        final = "bye " + wire_bye[0] if wire_bye else "no bye"
        self.note("flood", f"{final} after {codes['ok']} ok, {codes['rate_limited']} "
                           "rate_limited")
        await wire.aclose()

    async def deaf(self, match: str | None, kind: str = "never reads") -> None:
        """Watch ``match`` (if any), then send ``matches`` requests and never read."""
        stream = await self._open()
        watch = _frame({"type": "watch", "id": 1, "match": match}) if match else b""
        await stream.send_all(HELLO + watch)
        request = _frame({"type": "matches", "id": 2})
        outcome = "open"
        with trio.move_on_after(self.left()):
            try:
                while True:
                    await stream.send_all(request)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                outcome = "closed by the server"
        self.note(kind, outcome)
        await stream.aclose()

    async def garbage(self) -> None:
        while self.left() > 0:
            stream = await self._open()
            await stream.send_all(HELLO + bytes(self.rng.getrandbits(8) for _ in range(2048)))
            self.note("random bytes", await self._outcome(stream, 5))
            await stream.aclose()
            await trio.sleep(1)

    # -- one attack at a time (--case) ----------------------------------------------

    async def _session(self, name: str) -> Wire:
        wire = await Wire.open(self.port)
        await wire.hello(name)
        return wire

    async def _pipeline(self, kind: str, wire: Wire, build: Any, window: int = 64,
                        on_reply: Any = None) -> None:
        """Send ``build(i)`` requests as fast as replies come back (``window`` in
        flight), until time is up or the server closes; count the replies' codes."""
        sent = answered = 0
        done = trio.Event()
        lock = trio.Lock()
        plain_send = wire.send

        async def send(msg: dict[str, Any]) -> int:
            async with lock:
                return await plain_send(msg)

        wire.send = send  # type: ignore[method-assign]  # the reader answers pings too

        async def reader() -> None:
            nonlocal answered
            try:
                while True:
                    msg = await wire.recv(self.left() + 5)
                    if msg["type"] == "bye":
                        self.note(kind, f"bye {msg['reason']}")
                        return
                    if msg["type"] in ("ok", "error") and "id" in msg:
                        answered += 1
                        self.note(kind, msg.get("code") or "ok")
                        if on_reply is not None:
                            await on_reply(send, msg)
                    elif msg["type"] == "error":
                        self.note(kind, f"push {msg['code']}")
            except WireClosed as exc:
                self.note(kind, f"closed {(exc.last or {}).get('reason', '')}".strip())
            except trio.TooSlowError:
                pass
            finally:
                done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            try:
                while self.left() > 0 and not done.is_set():
                    if sent - answered >= window:
                        await trio.sleep(0.001)
                        continue
                    await send({**build(sent), "id": wire.next_id()})
                    sent += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            nursery.cancel_scope.cancel()
        await wire.aclose()

    async def create_flood(self, sessions: int = 20) -> None:
        """``sessions`` sessions from this one address pipeline ``create`` (War, no
        timer): waiting matches, and every other one against a server bot, resigned
        at once (create-then-resign: a finished match)."""

        async def resign_half(send: Any, msg: dict[str, Any]) -> None:
            if msg["type"] == "ok" and msg.get("seat") is not None and msg["id"] % 2 == 0:
                await send({"type": "resign", "match": msg["match"]})

        async def one(i: int) -> None:
            wire = await self._session(f"creator{i}")
            await self._pipeline("create", wire, lambda n: {
                "type": "create", "game": "war", "turn_timer": 0,
                **({"bot": "random"} if n % 2 else {})}, 32, resign_half)

        async with trio.open_nursery() as nursery:
            for i in range(sessions):
                nursery.start_soon(one, i)

    async def _fill(self, matches: int, sessions: int = 10) -> list[str]:
        """Create up to ``matches`` waiting matches from ``sessions`` sessions (kept
        open until the end); their ids."""
        made: list[str] = []

        async def one(i: int) -> None:
            wire = await self._session(f"filler{i}")
            for _ in range(matches // sessions):
                reply = await wire.request({"type": "create", "game": "war", "turn_timer": 0})
                if reply["type"] != "ok":
                    self.note("fill", reply.get("code", "?"))
                    break
                made.append(reply["match"])
            self.note("fill", "sessions")
            with trio.move_on_after(self.left() + 1):
                while True:
                    await wire.recv(self.left() + 2)

        assert self._fill_nursery is not None
        self._fill_nursery.start_soon(_run_all, [lambda i=i: one(i) for i in range(sessions)])
        with trio.move_on_after(min(20.0, self.left())):
            while len(made) < matches - sessions:
                await trio.sleep(0.2)
        self.note("fill", f"{len(made)} matches")
        return made

    async def list_flood(self, readers: int = 4, deaf: int = 30) -> None:
        """1,000 waiting matches, then ``readers`` connections listing them in a loop
        and ``deaf`` connections that send ``matches`` and never read."""
        await self._fill(1000)

        async def reader(i: int) -> None:
            wire = await self._session(f"lister{i}")
            await self._pipeline("list (reads)", wire, lambda n: {"type": "matches"}, 4)

        async with trio.open_nursery() as nursery:
            for i in range(readers):
                nursery.start_soon(reader, i)
            for _ in range(deaf):
                nursery.start_soon(self.deaf, None, "list (never reads)")

    async def chat_flood(self, spectators: int = 300) -> None:
        """``spectators`` spectators of the legitimate matches chat as fast as they may."""

        async def one(i: int) -> None:
            match = self.matches[i % len(self.matches)]
            wire = await self._session(f"chatter{i}")
            reply = await wire.request({"type": "watch", "match": match})
            self.note("chat watch", reply.get("code") or "ok")
            await self._pipeline("chat", wire, lambda n: {"type": "chat", "match": match,
                                                          "text": f"spam {n} " * 8}, 8)

        async with trio.open_nursery() as nursery:
            for i in range(spectators):
                nursery.start_soon(one, i)
                await trio.sleep(0.005)

    async def hello_flood(self, loops: int = 8) -> None:
        """``loops`` connections each: connect, hello (a new session), close, again."""

        async def one() -> None:
            while self.left() > 0:
                try:
                    stream = await self._open()
                    await stream.send_all(HELLO)
                    with trio.move_on_after(2):
                        data = await stream.receive_some(65536)
                        self.note("hello", _first_code(data))
                    await stream.aclose()
                except OSError as exc:
                    self.note("hello", f"os error {exc.errno}")
                    await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            for _ in range(loops):
                nursery.start_soon(one)

    async def resume_loop(self) -> None:
        """One session watches up to 1,000 matches (and the legitimate ones), then
        resumes in a loop: each resume asks every watched match for a snapshot."""
        made = await self._fill(1000) + list(self.matches)
        wire = await Wire.open(self.port)
        token = (await wire.hello("watcher"))["token"]
        for match in made:
            reply = await wire.request({"type": "watch", "match": match})
            self.note("watch", reply.get("code") or "ok")
            if reply["type"] != "ok" and reply.get("code") != "already_seated":
                break
        await wire.aclose()

        async def one() -> None:
            while self.left() > 0:
                try:
                    w = await Wire.open(self.port)
                    await w.send({"type": "hello", "protocol": [1], "name": "watcher",
                                  "client": "soak", "resume": token})
                    reply = await w.recv(5)
                    self.note("resume", reply.get("code") or reply["type"])
                    await w.aclose()
                except (WireClosed, trio.TooSlowError, OSError) as exc:
                    self.note("resume", type(exc).__name__)

        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(one)

    async def lonely_bots(self, count: int = 200) -> None:
        """``count`` matches with ``abandon: "bot"`` whose both players leave at once:
        the seats pass to bots after the grace period."""

        async def one(i: int) -> None:
            a, b = await self._session(f"left{i}a"), await self._session(f"left{i}b")
            made = await a.request({"type": "create", "game": "war", "turn_timer": 0,
                                    "abandon": "bot"})
            if made["type"] != "ok":
                self.note("abandoned", made.get("code", "?"))
                return
            joined = await b.request({"type": "join", "match": made["match"]})
            self.note("abandoned", joined.get("code") or "ok")
            await a.aclose()
            await b.aclose()

        async with trio.open_nursery() as nursery:
            for i in range(count):
                nursery.start_soon(one, i)
                await trio.sleep(0.01)

    async def run_case(self, case: str) -> None:
        """Run the attack ``case`` (a key of :data:`CASES`) until the time is up."""
        async with trio.open_nursery() as nursery:
            self._fill_nursery = nursery
            nursery.cancel_scope.deadline = trio.current_time() + self.left() + 3
            await CASES[case](self)
            await trio.sleep(self.left())  # the fillers hold their matches until the end
            nursery.cancel_scope.cancel()

    async def run(self, idle: int, slow: int) -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(idle):
                nursery.start_soon(self.idle)
                await trio.sleep(0.002)
            for _ in range(slow):
                nursery.start_soon(self.slowloris)
            for _ in range(5):
                nursery.start_soon(self.flood)
            for i in range(5):
                nursery.start_soon(self.deaf, self.matches[i % len(self.matches)])
            nursery.start_soon(self.garbage)


async def _run_all(starters: list[Any]) -> None:
    async with trio.open_nursery() as nursery:
        for start in starters:
            nursery.start_soon(start)


def _first_code(data: bytes) -> str:
    """The type (or error code) of the first frame in ``data``."""
    try:
        (n,) = struct.unpack(">I", data[:4])
        msg = msgpack.unpackb(data[4:4 + n])
        return msg.get("code") or msg.get("type") or "?"
    except Exception:
        return "closed" if not data else "garbled"


#: --case NAME -> the attack run alone (``mix``: the original everything-at-once).
CASES: dict[str, Any] = {
    "create": Attack.create_flood,
    "list": Attack.list_flood,
    "chat": Attack.chat_flood,
    "hello": Attack.hello_flood,
    "resume": Attack.resume_loop,
    "bots": Attack.lonely_bots,
}


def _attack_main(port: int, matches: list[str], seconds: float, idle: int, slow: int,
                 case: str, out: Any) -> None:
    os.nice(10)  # the attacker (CPU-bound) yields to the server and the legitimate players
    raise_fd_limit()
    attack = Attack(port, matches, time.monotonic() + seconds, 7)
    error = None
    try:
        if case == "mix":
            trio.run(attack.run, idle, slow)
        else:
            trio.run(attack.run_case, case)
    except BaseException as exc:
        error = repr(exc)
    out.put(({k: dict(v) for k, v in attack.seen.items()}, error))


# -- the legitimate matches (this process) ------------------------------------------------


class Legit:
    """``n`` matches played to the end, again and again, until ``until``."""

    def __init__(self, port: int, n: int, until: float) -> None:
        self.port = port
        self.n = n
        self.until = until
        self.rng = random.Random(3)
        self.samples: list[tuple[float, float]] = []
        self.errors: Counter[str] = Counter()
        self.finished = 0
        self.first_matches: list[str] = []
        self.ready = trio.Event()

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            for i in range(self.n):
                nursery.start_soon(self._pair, i)

    async def _pair(self, i: int) -> None:
        try:
            # the legitimate players connect from another address than the attackers
            # (127.0.0.1): a user elsewhere, whom the per-address limits must spare
            a = await Wire.open(self.port, local=LEGIT_ADDRESS)
            b = await Wire.open(self.port, local=LEGIT_ADDRESS)
            await a.hello(f"legit{i}a")
            await b.hello(f"legit{i}b")
            while time.monotonic() < self.until:
                created = await a.request({"type": "create", "game": "datastructures",
                                           "turn_timer": 0})
                if created["type"] != "ok":
                    self.errors[f"create refused: {created['code']}"] += 1
                    await trio.sleep(1.0)
                    continue
                joined = await b.request({"type": "join", "match": created["match"]})
                if joined["type"] != "ok":
                    self.errors[f"join refused: {joined['code']}"] += 1
                    return
                if len(self.first_matches) < self.n:
                    self.first_matches.append(created["match"])
                    if len(self.first_matches) == self.n:
                        self.ready.set()
                left = max(0.0, self.until - time.monotonic())
                with trio.move_on_after(left + 2):
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._seat, a, created["match"], True)
                        nursery.start_soon(self._seat, b, created["match"], False)
        except WireClosed as exc:
            self.errors[f"closed: {exc.last}"] += 1
        except trio.TooSlowError:
            self.errors["timeout"] += 1

    async def _seat(self, wire: Wire, match: str, counts: bool) -> None:
        try:
            await self._play(wire, match, counts)
        except trio.TooSlowError:
            self.errors["no message for 30 s"] += 1

    async def _play(self, wire: Wire, match: str, counts: bool) -> None:
        pending: tuple[int, float] | None = None
        while True:
            msg = await wire.recv()
            if msg["type"] == "error":
                self.errors[msg["code"]] += 1
                continue
            if msg["type"] == "bye":
                raise WireClosed(msg)
            if msg["type"] != "snapshot" or msg["match"] != match:
                continue
            if pending is not None and msg["seq"] > pending[0]:
                self.samples.append((pending[1], time.monotonic() - pending[1]))
                pending = None
            if msg["status"] == "finished":
                self.finished += counts
                return
            if not msg["legal"] or pending is not None:
                continue
            await trio.sleep(self.rng.uniform(0.025, 0.075))
            if time.monotonic() >= self.until:
                return
            if wire.pending:
                continue
            sent = time.monotonic()
            await wire.send({"type": "intent", "id": wire.next_id(), "match": match,
                             "seq": msg["seq"], "intent": self.rng.choice(msg["legal"])})
            pending = (msg["seq"], sent)


# -- main ---------------------------------------------------------------------------------


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "p50_ms": percentile(ordered, 0.5) * 1000,
            "p99_ms": percentile(ordered, 0.99) * 1000,
            "max_ms": (ordered[-1] * 1000) if ordered else float("nan")}


async def _drive(args: argparse.Namespace, port: int, out: Any, ctx: Any) -> dict[str, Any]:
    start = time.monotonic()
    attack_at = start + args.calm
    until = attack_at + args.attack
    legit = Legit(port, args.matches, until)
    procs: list[Any] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(legit.run)
        with trio.fail_after(30):
            await legit.ready.wait()
        await trio.sleep(max(0.0, attack_at - time.monotonic()))
        proc = ctx.Process(target=_attack_main, args=(port, legit.first_matches, args.attack,
                                                      args.idle, args.slowloris, args.case, out),
                           daemon=True)
        proc.start()
        procs.append(proc)
        print(f"hostile_soak: attacking for {args.attack:g} s", file=sys.stderr)
    calm = [lat for t, lat in legit.samples if t < attack_at]
    under = [lat for t, lat in legit.samples if attack_at <= t < until]
    return {"legit_finished": legit.finished, "legit_errors": dict(legit.errors),
            "calm": _stats(calm), "under_attack": _stats(under)}


def _store_figures(db: Path) -> dict[str, Any]:
    """Rows in the store's tables, matches per status, and the files' size in bytes."""
    import sqlite3

    out: dict[str, Any] = {"bytes": sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))}
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        for table in ("sessions", "journal", "watchers"):
            out[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        out["matches"] = dict(con.execute("SELECT status, count(*) FROM matches GROUP BY status"))
        con.close()
    except sqlite3.Error as exc:
        out["error"] = str(exc)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--calm", type=float, default=10.0)
    parser.add_argument("--attack", type=float, default=40.0)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--slowloris", type=int, default=500)
    parser.add_argument("--case", choices=["mix", *CASES], default="mix",
                        help="one attack alone (default: the mix, all at once)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an extra cardserver argument (repeatable)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not (1 <= args.matches <= 200 and 0 < args.attack <= 600 and args.idle <= 5000
            and args.slowloris <= 5000):
        parser.error("out of bounds")
    raise_fd_limit()
    need = args.idle + args.slowloris + 2 * args.matches + 100
    # the mix attacks heartbeats and handshakes from one address (127.0.0.1), as it
    # did before the per-address limits: those are lifted for it; every --case runs
    # at the defaults
    flags = ONE_ADDRESS_FLAGS if args.case == "mix" else []
    # the store's figures are read while the server still runs
    server = SpawnedServer(["--max-connections", str(need), "--store-lock", "shared", *flags,
                            *args.server_arg],
                           log_level="info")
    ctx = mp.get_context("spawn")  # not fork: the attack starts from inside trio.run
    out = ctx.Queue()
    try:
        server.start()
        result = trio.run(_drive, args, server.port, out, ctx)
        try:
            seen, error = out.get(timeout=60)
        except Exception:
            seen, error = {}, "the attack process did not report"
        result["attacks"] = seen
        result["attack_error"] = error
        result["server_vmhwm_mib"] = None
        with open(f"/proc/{server.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    result["server_vmhwm_mib"] = int(line.split()[1]) / 1024
        result["server_alive"] = server.proc is not None and server.proc.poll() is None
        result["server_cpu_s"] = proc_cpu(server.pid)
        result["server_runqueue_wait_s"] = proc_runqueue_wait(server.pid)
        result["server_log_bytes"] = len(server.log_text().encode())
        result["store"] = _store_figures(server.db)
    finally:
        server.close()
    result["load_average"] = os.getloadavg()
    print(f"legitimate matches: {result['legit_finished']} finished, errors "
          f"{result['legit_errors'] or 'none'}")
    for phase in ("calm", "under_attack"):
        s = result[phase]
        print(f"  intent latency {phase:12}: n {s['n']:5d}  p50 {s['p50_ms']:7.2f} ms  "
              f"p99 {s['p99_ms']:7.2f} ms  max {s['max_ms']:7.2f} ms")
    print("attackers got:")
    for kind, outcomes in sorted(result["attacks"].items()):
        print(f"  {kind:14} " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    print(f"server CPU {result['server_cpu_s']:.1f} s (waited "
          f"{result['server_runqueue_wait_s'] or 0:.1f} s for a CPU), info log {result['server_log_bytes']} "
          f"bytes, store {result['store']}")
    print(f"server alive at the end: {result['server_alive']}, peak memory "
          f"{result['server_vmhwm_mib']:.0f} MiB; attack process error: {result['attack_error']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    ok = not result["legit_errors"] and result["server_alive"] and result["legit_finished"] > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
