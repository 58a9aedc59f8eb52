#!/usr/bin/env python3
"""Load generator: N bot connections in M two-seat matches against one cardserver.

    .venv/bin/python scripts/load.py --spawn-server --matches 1000 --think 1.0 --duration 60
    .venv/bin/python scripts/load.py --port 7000 --server-pid PID --matches 200 --think 0

Each match is two connections in the same worker process: seat 0 ``create``s a
match (``turn_timer`` 0), seat 1 ``join``s it, and both play by choosing at
random from the ``legal`` list of their newest snapshot, waiting a think time
(uniform in [0.5, 1.5] x ``--think``; 0 = flat out) before each intent. A
finished match is replaced by a new one on the same two connections until the
run ends. Connections are opened gradually over ``--ramp`` seconds.

Latency is measured per intent, from the moment its frame is written to the
moment the acting seat receives the snapshot that answers it (seq + 1), with
``time.monotonic`` (one clock for every process). Only intents sent after the
ramp count towards the figures ("steady state").

The generator runs ``--procs`` worker processes (multiprocessing), each with
its own trio loop, so that it is not the bottleneck; it reports each worker's
CPU use so that you can tell. It speaks the wire protocol directly
(``protocol.framing`` + msgpack through msgspec, no schema validation of what it receives) to
keep the per-message client cost low: correctness of the server's messages is
the test suite's job, not this script's.

Progress goes to stderr once a second; a table (and ``--json FILE``) at the end.
The server's peak memory is its ``VmHWM`` from ``/proc/<pid>/status``
(``--spawn-server`` knows the pid; otherwise pass ``--server-pid``).

Against a cluster (docs/cluster.md), ``--port`` takes several ports, or
``HOST:PORT`` of other addresses (network namespaces', see
scripts/netns_cluster.py): match *n* is created on node *n* mod the nodes, and
``--spread seats`` has its second seat join from the next node (every intent of
that seat relayed between nodes) where ``--spread matches`` (the default) keeps
both seats on the creator's node; ``--server-pid`` may be repeated (CPU is then
the sum of the nodes').

Every loop is bounded in count and time; it connects only to loopback or to the
hosts ``--port`` names.
Exit status: 0 when the run had no errors, 1 otherwise, 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import queue
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import msgspec
import trio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol.codec import pack  # noqa: E402
from protocol.framing import FrameDecoder  # noqa: E402
from server.fdlimit import raise_fd_limit  # noqa: E402

HOST = "127.0.0.1"
HEADER = struct.Struct(">I")
#: A client must accept frames up to 1 MiB from the server (docs/protocol.md).
CLIENT_MAX_FRAME = 1024 * 1024
#: Seconds without any message from the server before a connection counts as stuck.
RECV_TIMEOUT = 30.0
#: msgspec's msgpack decoder, without the server's checks of what it receives
#: (``protocol.codec.unpack``): the values of ``unpackb(raw=False)``; a whole message
#: decodes in about the time msgpack takes, :class:`Played`'s fields alone in a seventh
_DECODE = msgspec.msgpack.Decoder().decode


class Played(TypedDict, total=False):
    """The fields of a message that a playing seat reads (:meth:`Worker._play`, its
    creates and joins): decoded into a plain map of these alone, every other field
    (a snapshot's view, events, players ...) skipped unread, a seventh of the
    decoding's cost."""

    type: Any
    id: Any
    code: Any
    reason: Any
    match: Any
    seq: Any
    status: Any
    result: Any
    legal: Any


_DECODE_PLAYED = msgspec.msgpack.Decoder(Played).decode


# -- the wire ------------------------------------------------------------------


class WireClosed(Exception):
    """The server closed the connection (``last`` holds a final bye/error, if any)."""

    def __init__(self, last: dict[str, Any] | None = None) -> None:
        super().__init__(f"closed by the server: {last}")
        self.last = last


class Wire:
    """One raw protocol connection: frames + msgpack, pings answered, no validation.

    ``recv`` returns the next message that is not a ping; ``request`` sends one
    request with a fresh id and returns its reply (``ok`` or ``error``), keeping
    every other message it reads in ``pending`` for the next ``recv``.
    """

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(CLIENT_MAX_FRAME)
        self.pending: deque[dict[str, Any]] = deque()
        self.sizes: list[int] = []  # body sizes of frames received (bench_latency uses them)
        self.keep_sizes = False
        self._ids = 0
        #: bytes -> message: every field (the default), or :class:`Played`'s alone
        self.decode: Callable[[bytes], Any] = _DECODE
        #: a plain socket, written directly (None: a TLS stream...)
        self._socket = stream.socket if isinstance(stream, trio.SocketStream) else None

    @classmethod
    async def open(cls, port: int, host: str = HOST, local: str | None = None) -> Wire:
        """Connect (TCP_NODELAY is set by trio), from the address ``local`` if given
        (another loopback address, 127.0.0.2, is another client address)."""
        return cls(await trio.open_tcp_stream(host, port, local_address=local))

    async def send(self, msg: dict[str, Any]) -> int:
        """Write one message; returns the body size.

        Raises:
            trio.BrokenResourceError, trio.ClosedResourceError: as ``send_all``.
        """
        body = pack(msg)
        data = HEADER.pack(len(body)) + body
        sent = 0
        # straight to a plain socket that has room (the common case), without
        # send_all's layers: they were a twelfth of this client's CPU. The descriptor
        # is read each time: -1 once the socket is closed (its number may be reused)
        fd = self._socket.fileno() if self._socket is not None else -1
        if fd >= 0:
            try:
                sent = os.write(fd, data)
            except OSError:   # no room, or broken: send_all waits, or raises as it does
                sent = 0
        if sent < len(data):
            await self.stream.send_all(data[sent:] if sent else data)
        return len(body)

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _decoded(self) -> dict[str, Any] | None:
        """The next message already read (None: none is whole yet)."""
        body = self.decoder.next_frame()
        if body is None:
            return None
        if self.keep_sizes:
            self.sizes.append(len(body))
        try:
            msg: dict[str, Any] = self.decode(body)
        except msgspec.DecodeError as exc:
            raise WireClosed({"reason": f"not a message: {exc}"}) from None
        if type(msg) is not dict or type(msg.get("type")) is not str:
            raise WireClosed({"reason": f"not a message: {msg!r:.80}"})
        return msg

    async def _read_one(self) -> dict[str, Any]:
        while True:
            msg = self._decoded()
            if msg is not None:
                if msg["type"] == "ping":
                    await self.send({"type": "pong", "id": msg["id"]})
                    continue
                return msg
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                raise WireClosed()
            self.decoder.feed(data)

    async def recv(self, timeout: float = RECV_TIMEOUT) -> dict[str, Any]:
        """The next message (pending ones first).

        Raises:
            WireClosed: the server closed the connection.
            trio.TooSlowError: nothing within ``timeout`` seconds.
        """
        if self.pending:
            return self.pending.popleft()
        # one already read (the ok and the snapshot of an intent come in one read)
        # needs no timeout: a cancel scope a message was a tenth of this client's CPU
        while (msg := self._decoded()) is not None:
            if msg["type"] != "ping":
                return msg
            await self.send({"type": "pong", "id": msg["id"]})
        # trio.fail_after's scope without its generator-based context manager
        with trio.CancelScope(deadline=trio.current_time() + timeout):
            return await self._read_one()
        raise trio.TooSlowError

    async def request(self, msg: dict[str, Any], timeout: float = RECV_TIMEOUT) -> dict[str, Any]:
        """Send ``msg`` with a new id; the ``ok``/``error`` reply carrying it."""
        rid = msg["id"] = self.next_id()
        await self.send(msg)
        with trio.fail_after(timeout):
            while True:
                reply = await self._read_one()
                if reply.get("type") in ("ok", "error") and reply.get("id") == rid:
                    return reply
                if reply.get("type") in ("bye",) or (reply.get("type") == "error"
                                                      and "id" not in reply):
                    self.pending.append(reply)
                    if reply.get("type") == "bye":
                        raise WireClosed(reply)
                    continue
                self.pending.append(reply)

    async def hello(self, name: str, resume: str | None = None) -> dict[str, Any]:
        """Handshake; returns the welcome.

        Raises:
            WireClosed: the server refused (``last`` is its error).
        """
        msg: dict[str, Any] = {"type": "hello", "protocol": [1], "name": name,
                               "client": "load/1"}
        if resume is not None:
            msg["resume"] = resume
        await self.send(msg)
        reply = await self.recv()
        if reply.get("type") != "welcome":
            raise WireClosed(reply)
        return reply

    async def aclose(self) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self.stream.aclose()


# -- one worker process ---------------------------------------------------------


@dataclass
class Plan:
    """What one worker does (picklable)."""

    index: int
    port: int
    game: str
    think: float
    matches: list[int]  # global match numbers (they set the ramp slots)
    total_matches: int
    ramp: float
    start_at: float  # time.monotonic() of the first connection
    stop_at: float  # no new intent after this
    seed: int
    #: every node's (host, port) (cluster: match n is created on nodes[n % len]);
    #: () = ((HOST, port),)
    nodes: tuple[tuple[str, int], ...] = ()
    #: "matches": both seats on the creator's node; "seats": seat 1 on the next node
    spread: str = "matches"

    def seat_node(self, number: int, seat: int) -> tuple[str, int]:
        """The (host, port) seat ``seat`` of match ``number`` connects to."""
        nodes = self.nodes or ((HOST, self.port),)
        shift = seat if self.spread == "seats" else 0
        return nodes[(number + shift) % len(nodes)]


#: Error codes a game's flat-out seats draw by racing, not by a fault: in War both
#: seats flip at once, so one's flip may find the battle already resolved
#: (``stale``) or the match already ended by the other's (``match_finished``).
RACES: dict[str, frozenset[str]] = {"war": frozenset({"stale", "match_finished"})}


@dataclass
class Tally:
    """A worker's counters; sent to the parent as a dict."""

    connections: int = 0
    peak_connections: int = 0
    active: int = 0
    started: int = 0
    finished: int = 0
    intents: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    results: Counter[str] = field(default_factory=Counter)

    def snapshot(self) -> dict[str, Any]:
        return {"connections": self.connections, "peak_connections": self.peak_connections,
                "active": self.active, "started": self.started, "finished": self.finished,
                "intents": self.intents, "errors": dict(self.errors),
                "results": dict(self.results)}


class Worker:
    """Runs the matches of one :class:`Plan` in one trio loop."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.tally = Tally()
        self.rng = random.Random(plan.seed)
        #: (send time, latency) of every answered intent
        self.samples: list[tuple[float, float]] = []

    def _error(self, code: str) -> None:
        self.tally.errors[code] += 1

    async def run(self, out: Any) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._report, out)
            async with trio.open_nursery() as pairs:
                for number in self.plan.matches:
                    at = self.plan.start_at + self.plan.ramp * number / max(
                        1, self.plan.total_matches)
                    pairs.start_soon(self._pair, number, at)
            nursery.cancel_scope.cancel()

    async def _report(self, out: Any) -> None:
        while True:
            out.put(("progress", self.plan.index, self.tally.snapshot()))
            await trio.sleep(1.0)

    async def _sleep_until(self, when: float) -> None:
        await trio.sleep(max(0.0, when - time.monotonic()))

    async def _pair(self, number: int, at: float) -> None:
        """Two connections playing match after match until ``stop_at``."""
        await self._sleep_until(at)
        wires: list[Wire] = []
        try:
            for seat in (0, 1):
                host, port = self.plan.seat_node(number, seat)
                wire = await Wire.open(port, host)
                wires.append(wire)
                self.tally.connections += 1
                self.tally.peak_connections = max(self.tally.peak_connections,
                                                  self.tally.connections)
                await wire.hello(f"load{number}s{seat}")
                wire.decode = _DECODE_PLAYED
            while time.monotonic() < self.plan.stop_at:
                created = await wires[0].request({"type": "create", "game": self.plan.game,
                                                  "turn_timer": 0})
                if created["type"] != "ok":
                    self._error(created["code"])
                    return
                joined = await wires[1].request({"type": "join", "match": created["match"]})
                if joined["type"] != "ok":
                    self._error(joined["code"])
                    return
                self.tally.started += 1
                self.tally.active += 1
                try:
                    # the run's end interrupts a match (1 s for intents in flight)
                    left = max(0.0, self.plan.stop_at + 1.0 - time.monotonic())
                    with trio.move_on_after(left):
                        async with trio.open_nursery() as nursery:
                            for seat, wire in enumerate(wires):
                                nursery.start_soon(self._play, wire, created["match"], seat == 0)
                finally:
                    self.tally.active -= 1
        except WireClosed as exc:
            last = exc.last or {}
            self._error(f"closed:{last.get('code') or last.get('reason') or 'eof'}")
        except trio.TooSlowError:
            self._error("timeout")
        except OSError as exc:
            self._error(f"os:{exc.errno}")
        finally:
            for wire in wires:
                await wire.aclose()
                self.tally.connections -= 1

    async def _play(self, wire: Wire, match: str, count: bool) -> None:
        """Play one seat until the match finishes or the run ends (``count``: this seat
        counts the match's end)."""
        pending: tuple[int, float] | None = None  # (seq acted on, send time)
        think = self.plan.think
        while True:
            msg = await wire.recv()
            kind = msg.get("type")
            if kind == "error":
                if msg.get("code") not in RACES.get(self.plan.game, ()):
                    self._error(msg.get("code", "?"))
                pending = None
                continue
            if kind == "ok":
                if "seq" in msg:
                    self.tally.intents += 1
                continue
            if kind == "bye":
                raise WireClosed(msg)
            if kind != "snapshot" or msg.get("match") != match:
                continue
            seq = msg["seq"]
            if pending is not None and seq > pending[0]:
                now = time.monotonic()
                self.samples.append((pending[1], now - pending[1]))
                pending = None
            if msg["status"] == "finished":
                if count:
                    self.tally.finished += 1
                    self.tally.results[msg.get("result", {}).get("reason", "?")] += 1
                return
            if not msg["legal"] or pending is not None:
                continue
            if think > 0:
                await trio.sleep(think * (0.5 + self.rng.random()))
            if time.monotonic() >= self.plan.stop_at:
                return
            if wire.pending:  # a newer snapshot arrived while thinking: act on that one
                continue
            intent = self.rng.choice(msg["legal"])
            sent = time.monotonic()
            await wire.send({"type": "intent", "id": wire.next_id(), "match": match,
                             "seq": seq, "intent": intent})
            pending = (seq, sent)


def _worker_main(plan: Plan, out: Any) -> None:
    """Entry point of a worker process."""
    raise_fd_limit()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker = Worker(plan)
    cpu0 = time.process_time()
    wait0 = proc_runqueue_wait(os.getpid()) or 0.0
    error = None
    try:
        trio.run(worker.run, out)
    except BaseException as exc:  # report, never hang the parent
        error = repr(exc)
    wait = (proc_runqueue_wait(os.getpid()) or 0.0) - wait0
    out.put(("done", plan.index, worker.tally.snapshot(), worker.samples,
             time.process_time() - cpu0, error, wait))


# -- the parent -----------------------------------------------------------------


#: Every load client connects from 127.0.0.1: lift the per-address limits (meant for
#: strangers on the internet, see docs/security.md) for a run of many clients.
ONE_ADDRESS_FLAGS = [
    "--handshakes-per-second", "100000", "--handshake-burst", "100000",
    "--max-sessions-per-address", "100000", "--max-waiting-per-address", "100000",
    "--max-active-per-address", "100000", "--creates-per-minute-per-address", "1000000",
    "--address-rate", "1000000", "--address-burst", "1000000",
]
#: A load client's seat may send faster than a stranger's connection is allowed to.
ONE_CONNECTION_FLAGS = ["--rate", "100000", "--burst", "100000"]


def free_port() -> int:
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def cardserver_command() -> list[str]:
    """How to start the project's server from this checkout (``$CARDSERVER_CMD``, split
    on spaces, overrides it: to measure another build of the server, A/B)."""
    if os.environ.get("CARDSERVER_CMD"):
        return os.environ["CARDSERVER_CMD"].split()
    exe = ROOT / ".venv" / "bin" / "cardserver"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("cardserver")
    return [found] if found else [sys.executable, "-m", "server.cli"]


class SpawnedServer:
    """A cardserver subprocess on a free loopback port with a temporary store."""

    def __init__(self, extra: list[str], db: Path | None = None,
                 log_level: str = "warning", source: Path | None = None) -> None:
        """``source``: run the server of another checkout (``python -m server.cli`` in
        that directory: its code is imported first), for before/after figures."""
        self.tmp = tempfile.TemporaryDirectory(prefix="cardload-")
        self.db = db or Path(self.tmp.name) / "load.db"
        self.port = free_port()
        self.log = open(Path(self.tmp.name) / "server.log", "wb")  # noqa: SIM115
        self.cwd = source or ROOT
        command = [sys.executable, "-m", "server.cli"] if source else cardserver_command()
        self.args = command + [
            "--host", HOST, "--port", str(self.port), "--db", str(self.db),
            "--log-level", log_level, *extra]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 15.0) -> None:
        """Start and wait until it accepts connections.

        Raises:
            RuntimeError: it exited or did not listen in time.
        """
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.cwd)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cardserver exited with {self.proc.returncode}: "
                                   f"{self.log_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 0.2):
                return
            time.sleep(0.05)
        raise RuntimeError(f"cardserver did not listen within {timeout:.0f} s")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log_text(self) -> str:
        self.log.flush()
        return (Path(self.tmp.name) / "server.log").read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL, and wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM (clean shutdown), SIGKILL after 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def close(self) -> None:
        self.stop()
        self.log.close()
        self.tmp.cleanup()


def proc_status(pid: int) -> dict[str, int]:
    """VmHWM / VmRSS of a process in KiB ({} when it is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def proc_cpu(pid: int) -> float | None:
    """User + system CPU seconds used by a process so far."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def proc_runqueue_wait(pid: int) -> float | None:
    """Seconds the process's main thread has spent runnable but waiting for a CPU
    (``/proc/<pid>/schedstat``): how much the machine's other load delayed it."""
    try:
        with open(f"/proc/{pid}/schedstat") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _summed(status: Any, pids: list[int], key: str) -> int:
    """The sum of ``status(pid)[key]`` over ``pids``."""
    return sum(status(pid).get(key, 0) for pid in pids)


def _cpu(pids: list[int]) -> float:
    return sum(proc_cpu(pid) or 0.0 for pid in pids)


def _wait(pids: list[int]) -> float:
    return sum(proc_runqueue_wait(pid) or 0.0 for pid in pids)


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; nan for no values."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(round(q * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def latency_ms(seconds: list[float]) -> dict[str, float]:
    """Count, p50, p99 and max of durations given in seconds, in milliseconds."""
    ms = sorted(v * 1000 for v in seconds)
    return {"n": len(ms), "p50": percentile(ms, 0.5), "p99": percentile(ms, 0.99),
            "max": ms[-1] if ms else float("nan")}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the load; returns the figures (see :func:`print_table`)."""
    server: SpawnedServer | None = None
    if args.spawn_server:
        # the per-connection request rate lifted too (1,000 a second by default): a
        # seat playing flat out (--think 0) on a fast machine sends more than that,
        # and its rate_limited answers would be counted as the run's errors
        extra = [*ONE_ADDRESS_FLAGS, *ONE_CONNECTION_FLAGS,
                 "--max-connections", str(2 * args.matches + 100),
                 "--max-matches", str(4 * args.matches + 100)] + args.server_arg
        server = SpawnedServer(extra)
        server.start()
        ports, pids = [server.port], [server.pid]
        print(f"load: cardserver pid {server.pid} on {HOST}:{server.port}", file=sys.stderr)
    else:
        ports, pids = args.port, args.server_pid
    try:
        return _drive(args, ports, pids)
    finally:
        if server is not None:
            server.close()


def _drive(args: argparse.Namespace, ports: list[int] | list[tuple[str, int]],
           pids: list[int], also: list[int] | None = None) -> dict[str, Any]:
    """Run the load against the nodes at ``ports`` (loopback ports, or (host, port)
    pairs) of processes ``pids`` (CPU and memory summed; [] for none known); the
    figures. ``also``: other processes (Redis) whose CPU over the same steady
    window is reported as ``also_cpu_share``."""
    also = also or []
    nodes = tuple((HOST, p) if isinstance(p, int) else p for p in ports)
    procs = max(1, args.procs)
    ramp = args.ramp if args.ramp is not None else max(1.0, args.matches / 250)
    start_at = time.monotonic() + 0.5
    stop_at = start_at + ramp + args.duration
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    numbers = list(range(args.matches))
    workers = []
    for i in range(procs):
        plan = Plan(i, nodes[0][1], args.game, args.think, numbers[i::procs], args.matches,
                    ramp, start_at, stop_at, args.seed * 1000 + i, nodes,
                    getattr(args, "spread", "matches"))
        proc = ctx.Process(target=_worker_main, args=(plan, out), daemon=True)
        proc.start()
        workers.append(proc)
    latest: dict[int, dict[str, Any]] = {}
    done: dict[int, tuple[Any, ...]] = {}
    peak_rss = 0
    # (time, cpu, runqueue wait) when the ramp ended and when the run ended
    cpu_mark: tuple[float, float, float, float] | None = None
    cpu_end: tuple[float, float, float, float] | None = None
    hard_deadline = stop_at + RECV_TIMEOUT + 30
    last_print = 0.0
    tty = sys.stderr.isatty()
    while len(done) < procs and time.monotonic() < hard_deadline:
        try:
            item = out.get(timeout=0.5)
        except queue.Empty:
            item = None
        if item is not None:
            if item[0] == "progress":
                latest[item[1]] = item[2]
            else:
                done[item[1]] = item
                latest[item[1]] = item[2]
        now = time.monotonic()
        if pids:
            peak_rss = max(peak_rss, _summed(proc_status, pids, "VmRSS"))
            if cpu_mark is None and now >= start_at + ramp:
                cpu_mark = (now, _cpu(pids), _wait(pids), _cpu(also))
            if cpu_end is None and now >= stop_at:
                cpu_end = (now, _cpu(pids), _wait(pids), _cpu(also))
        if now - last_print >= 1.0:
            last_print = now
            conns = sum(t["connections"] for t in latest.values())
            active = sum(t["active"] for t in latest.values())
            intents = sum(t["intents"] for t in latest.values())
            errs = sum(sum(t["errors"].values()) for t in latest.values())
            phase = "ramp" if now < start_at + ramp else ("run" if now < stop_at else "stop")
            mem = _summed(proc_status, pids, "VmRSS") // 1024
            line = (f"[{phase} {now - start_at:6.1f}s] conns {conns:5d}  matches {active:5d}  "
                    f"intents {intents:8d}  errors {errs:4d}  server rss {mem} MiB")
            print(("\r" + line) if tty else line, end="" if tty else "\n", file=sys.stderr,
                  flush=True)
    if tty:
        print(file=sys.stderr)
    for proc in workers:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    hwm = (_summed(proc_status, pids, "VmHWM") or peak_rss) if pids else 0
    samples: list[tuple[float, float]] = []
    worker_cpu = []
    worker_wait = []
    failures = []
    for item in done.values():
        samples += item[3]
        worker_cpu.append(item[4])
        worker_wait.append(item[6])
        if item[5]:
            failures.append(item[5])
    if len(done) < procs:
        failures.append(f"{procs - len(done)} worker(s) did not report")
    if args.samples:
        with open(args.samples, "w") as fh:
            fh.writelines(f"{t:.6f} {lat:.6f}\n" for t, lat in sorted(samples))
    window = (start_at + ramp, stop_at)
    steady = sorted(lat for t, lat in samples if window[0] <= t < window[1])
    errors: Counter[str] = Counter()
    results: Counter[str] = Counter()
    for t in latest.values():
        errors.update(t["errors"])
        results.update(t["results"])
    server_cpu = server_wait = also_cpu = None
    if cpu_mark and cpu_end and cpu_end[0] > cpu_mark[0]:
        server_cpu = (cpu_end[1] - cpu_mark[1]) / (cpu_end[0] - cpu_mark[0])
        server_wait = (cpu_end[2] - cpu_mark[2]) / (cpu_end[0] - cpu_mark[0])
        also_cpu = (cpu_end[3] - cpu_mark[3]) / (cpu_end[0] - cpu_mark[0]) if also else None
    elapsed = args.duration
    return {
        "game": args.game, "think": args.think, "procs": procs, "ramp_s": ramp,
        "duration_s": args.duration,
        "connections_peak": sum(t["peak_connections"] for t in latest.values()),
        "matches_target": args.matches,
        "matches_started": sum(t["started"] for t in latest.values()),
        "matches_finished": sum(t["finished"] for t in latest.values()),
        "intents_total": sum(t["intents"] for t in latest.values()),
        "intents_steady": len(steady),
        "intents_per_s": len(steady) / elapsed if elapsed else 0.0,
        "latency_ms": {q: percentile(steady, v) * 1000 for q, v in
                       (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999),
                        ("max", 1.0))},
        "errors": dict(errors), "error_count": sum(errors.values()) + len(failures),
        "failures": failures, "results": dict(results),
        "server_pid": pids[0] if len(pids) == 1 else pids, "server_vmhwm_mib": hwm / 1024 if hwm else None,
        "server_cpu_share": server_cpu, "server_runqueue_wait_share": server_wait,
        "also_cpu_share": also_cpu,
        "load_average": os.getloadavg(),
        "server_cpu_ms_per_intent": (server_cpu * 1000 * len(steady) and
                                     server_cpu * 1000 * elapsed / len(steady))
        if server_cpu is not None and steady else None,
        "worker_cpu_s": worker_cpu,
        "worker_cpu_share": [c / (stop_at - start_at) for c in worker_cpu],
        "worker_runqueue_wait_share": [w / (stop_at - start_at) for w in worker_wait],
        "cores": os.cpu_count(),
    }


def print_table(fig: dict[str, Any], out: Any = sys.stdout) -> None:
    """The figures as a two-column text table."""
    lat = fig["latency_ms"]
    rows = [
        ("game / think time", f"{fig['game']} / {fig['think']:g} s"),
        ("load processes", f"{fig['procs']} (CPU share each: "
         + ", ".join(f"{c:.0%}" for c in fig["worker_cpu_share"]) + "; waiting for a CPU: "
         + ", ".join(f"{w:.0%}" for w in fig["worker_runqueue_wait_share"]) + ")"),
        ("ramp + steady window", f"{fig['ramp_s']:g} s + {fig['duration_s']:g} s"),
        ("connections (peak)", f"{fig['connections_peak']}"),
        ("matches concurrent / started / finished",
         f"{fig['matches_target']} / {fig['matches_started']} / {fig['matches_finished']}"),
        ("intents answered (steady window)", f"{fig['intents_steady']}"),
        ("intents per second (steady)", f"{fig['intents_per_s']:.0f}"),
        ("latency p50 / p90 / p99 (ms)",
         f"{lat['p50']:.2f} / {lat['p90']:.2f} / {lat['p99']:.2f}"),
        ("latency p99.9 / max (ms)", f"{lat['p999']:.2f} / {lat['max']:.2f}"),
        ("errors", f"{fig['error_count']} {fig['errors'] or ''} {fig['failures'] or ''}".strip()),
        ("server peak memory (VmHWM)",
         f"{fig['server_vmhwm_mib']:.0f} MiB" if fig["server_vmhwm_mib"] else "n/a"),
        ("server CPU (steady window)",
         f"{fig['server_cpu_share']:.0%} of one core, "
         f"{fig['server_cpu_ms_per_intent']:.2f} ms per intent"
         if fig["server_cpu_share"] is not None else "n/a"),
        ("server waiting for a CPU (other load)",
         f"{fig['server_runqueue_wait_share']:.0%} of the time"
         if fig["server_runqueue_wait_share"] is not None else "n/a"),
        ("machine load average (1 min)", f"{fig['load_average'][0]:.2f} on {fig['cores']} cores"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}", file=out)


def _nodes(text: str) -> list[tuple[str, int]]:
    """``7000``, ``7000,7001`` or ``10.0.0.2:7000,10.0.0.3:7000``: (host, port) each."""
    out = []
    for part in text.split(","):
        host, _, port = part.rpartition(":")
        out.append((host or HOST, int(port)))
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=_nodes,
                       help="a cardserver already running on 127.0.0.1: PORT; the nodes "
                            "of a cluster: PORT,PORT or HOST:PORT,HOST:PORT")
    where.add_argument("--spawn-server", action="store_true",
                       help="start a cardserver subprocess (temp --db) for this run")
    parser.add_argument("--server-pid", type=int, action="append", default=[],
                        help="pid of the running server (memory, CPU); repeat for nodes")
    parser.add_argument("--spread", choices=("matches", "seats"), default="matches",
                        help="several nodes: matches round-robin (both seats on one node), "
                             "or seat 1 on the next node (relayed)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="extra cardserver argument with --spawn-server (repeatable), "
                             "e.g. --server-arg=--log-level=info")
    parser.add_argument("--matches", type=int, default=100, help="concurrent matches (x2 conns)")
    parser.add_argument("--game", default="datastructures", choices=["datastructures", "war"])
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean seconds before each intent (0: flat out)")
    parser.add_argument("--duration", type=float, default=30.0,
                        help="seconds of steady state after the ramp")
    parser.add_argument("--ramp", type=float, default=None,
                        help="seconds over which connections open [matches/250]")
    parser.add_argument("--procs", type=int, default=2, help="load worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--samples", type=Path,
                        help="write every answered intent as 'send_time latency' lines "
                             "(time.monotonic seconds), to find when the slow ones happened")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.duration <= 0 or args.duration > 3600 or args.matches > 20000:
        parser.error("--matches must be 1..20000 and --duration in (0, 3600]")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    limit = raise_fd_limit()
    need = 2 * args.matches // max(1, args.procs) + 64
    if limit < need:
        print(f"load: open-file limit {limit} < {need}; raise `ulimit -n`", file=sys.stderr)
        return 2
    try:
        fig = run(args)
    except RuntimeError as exc:
        print(f"load: {exc}", file=sys.stderr)
        return 2
    print_table(fig)
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2, default=str))
    return 0 if fig["error_count"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
