#!/usr/bin/env python3
"""SIGKILL the server at random moments while matches run; restart it; check recovery.

    .venv/bin/python scripts/chaos_restart.py [--matches 20] [--kills 5] [--cap 80] [--seed 1]

Starts ``cardserver`` (subprocess, temporary ``--db``, a fixed loopback port), and
``--matches`` Data Structures matches, each between two clients built on
``client.session`` with ``reconnect=True`` (they keep their resume token and
resume by themselves). The clients play from ``legal`` with a few milliseconds
of think time. ``--kills`` times, at a random moment (uniform in
``--min-gap``..``--max-gap`` seconds after the previous start), the server gets
SIGKILL and is started again at once with the same ``--db`` and port.

Checked:

1. every match resumes at its last accepted intent: the first snapshot a client
   sees after a restart has a seq >= the highest seq any client of that match had
   been answered ``ok`` for (an acknowledged intent is never lost), and the
   match's seq never goes backwards;
2. clients resume with their tokens (each reconnect is a ``resumed`` welcome);
3. every match finishes (status ``finished`` with a result);
4. each finished match's journal, read from the store with ``server.store.Store``
   and replayed from its seed through the engine (``server.replay.replay_steps``,
   which compares every row's recorded state digest), gives the same digests and
   the result the clients saw, and its reveal matches its commitment.

Exit status 0 when everything holds, 1 otherwise (the failures are listed).
Bounded: the whole run gives up after ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HOST, ONE_ADDRESS_FLAGS, SpawnedServer, raise_fd_limit  # noqa: E402

from client.session import Backoff, ConnectionLost, ServerError, SessionClosed, open_session  # noqa: E402, I001
from engine.fairness import verify  # noqa: E402
from server.replay import ReplayError, replay_steps  # noqa: E402
from server.store import Store  # noqa: E402


@dataclass
class MatchLog:
    """What the clients of one match saw."""

    match: str = ""
    acked: int = 0  # highest seq answered ok to any of its clients
    last_seq: int = 0  # highest seq seen in a snapshot
    lost: list[str] = field(default_factory=list)
    final: dict[str, Any] | None = None
    resumes: int = 0


class Chaos:
    """Runs the matches and the killer; see the module docstring."""

    def __init__(self, args: argparse.Namespace, server: SpawnedServer) -> None:
        self.args = args
        self.server = server
        self.rng = random.Random(args.seed)
        self.logs = [MatchLog() for _ in range(args.matches)]
        self.epoch = 0  # server starts so far - 1
        self.acked_at_kill: list[list[int]] = []  # per kill: each match's acked seq
        self.kill_times: list[float] = []
        self.problems: list[str] = []
        self.all_done = trio.Event()

    async def run(self) -> None:
        with trio.move_on_after(self.args.timeout) as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._killer)
                async with trio.open_nursery() as matches:
                    for i in range(self.args.matches):
                        matches.start_soon(self._match, i)
                self.all_done.set()
                nursery.cancel_scope.cancel()
        if scope.cancelled_caught:
            self.problems.append(f"gave up after {self.args.timeout} s")

    async def _killer(self) -> None:
        for _ in range(self.args.kills):
            await trio.sleep(self.rng.uniform(self.args.min_gap, self.args.max_gap))
            if self.all_done.is_set():
                return
            self.acked_at_kill.append([log.acked for log in self.logs])
            self.server.kill()  # SIGKILL
            self.kill_times.append(time.monotonic())
            self.epoch += 1
            await trio.to_thread.run_sync(self.server.start)
            print(f"chaos: kill {len(self.kill_times)}: SIGKILL, restarted (pid "
                  f"{self.server.pid}); matches finished: "
                  f"{sum(1 for log in self.logs if log.final)}/{len(self.logs)}",
                  file=sys.stderr)

    async def _match(self, i: int) -> None:
        log = self.logs[i]
        backoff = Backoff(initial=0.05, maximum=0.5, attempts=200)
        opts = dict(reconnect=True, backoff=backoff, seed=self.args.seed * 100 + i)
        async with open_session(HOST, self.server.port, name=f"chaos{i}a", client="chaos/1",
                                **opts) as a, \
                open_session(HOST, self.server.port, name=f"chaos{i}b", client="chaos/1",
                             **opts) as b:
            created = await self._retry(a, {"type": "create", "game": "datastructures",
                                            "options": {"cap": self.args.cap},
                                            "turn_timer": 0})
            log.match = created["match"]
            await self._retry(b, {"type": "join", "match": log.match})
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._seat, a, log, 0)
                nursery.start_soon(self._seat, b, log, 1)
            log.resumes = a.reconnects + b.reconnects

    async def _retry(self, session: Any, msg: dict[str, Any]) -> dict[str, Any]:
        """A lobby request, retried across a restart (bounded)."""
        for _ in range(100):
            try:
                return await session.request(msg, timeout=10)
            except (ConnectionLost, trio.TooSlowError):
                await trio.sleep(0.1)
        raise RuntimeError(f"{msg['type']} never answered")

    async def _seat(self, session: Any, log: MatchLog, seat_hint: int) -> None:
        rng = random.Random(self.args.seed * 7919 + seat_hint * 104729 + self.logs.index(log))
        epoch_checked = self.epoch
        async for push in session.pushes:
            if push["type"] != "snapshot" or push["match"] != log.match:
                continue
            seq = push["seq"]
            if self.epoch != epoch_checked:
                # first snapshot after a restart: nothing acknowledged may be lost
                kill = self.epoch - 1
                before = self.acked_at_kill[kill][self.logs.index(log)]
                if seq < before:
                    log.lost.append(f"after kill {kill + 1}: seq {seq} < acked {before}")
                epoch_checked = self.epoch
            log.last_seq = max(log.last_seq, seq)
            if push["status"] == "finished":
                log.final = push
                return
            if not push["legal"]:
                continue
            await trio.sleep(rng.uniform(0, self.args.think))
            try:
                reply = await session.request({"type": "intent", "match": log.match, "seq": seq,
                                               "intent": rng.choice(push["legal"])}, timeout=10)
                log.acked = max(log.acked, reply["seq"])
            except ServerError as exc:
                if exc.code not in ("stale", "not_your_turn", "match_finished"):
                    self.problems.append(f"{log.match}: intent refused {exc.code}")
            except (ConnectionLost, trio.TooSlowError):
                pass
            except SessionClosed:
                self.problems.append(f"{log.match}: session closed ({session.close_reason})")
                return


def verify_store(db: Path, logs: list[MatchLog]) -> tuple[list[str], int]:
    """Replay every match's journal; returns (problems, rows replayed)."""
    problems: list[str] = []
    rows = 0
    store = Store(db)
    try:
        for log in logs:
            rec = store.load_match(log.match)
            if rec is None:
                problems.append(f"{log.match}: not in the store")
                continue
            entries = store.journal(log.match)
            try:
                state = None
                for state, _entry, _events in replay_steps(rec, entries, check_digest=True):  # noqa: B007
                    rows += 1
            except ReplayError as exc:
                problems.append(f"{log.match}: {exc}")
                continue
            if state is None or state.outcome() is None:
                problems.append(f"{log.match}: the journal does not reach the end")
                continue
            if log.final is None:
                continue
            if state.outcome().to_dict() != log.final.get("result"):
                problems.append(f"{log.match}: replayed result {state.outcome().to_dict()} "
                                f"!= seen {log.final.get('result')}")
            if len(entries) != log.final["seq"]:
                problems.append(f"{log.match}: {len(entries)} rows, final seq "
                                f"{log.final['seq']}")
            reveal = log.final.get("reveal") or {}
            if not verify(reveal.get("seed", ""), reveal.get("salt", ""),
                          log.final.get("commitment", "")):
                problems.append(f"{log.match}: reveal does not match the commitment")
            if rec.status != "finished":
                problems.append(f"{log.match}: stored status {rec.status}")
    finally:
        store.close()
    return problems, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--cap", type=int, default=80, help="Data Structures turn cap")
    parser.add_argument("--think", type=float, default=0.03, help="max think time, seconds")
    parser.add_argument("--min-gap", type=float, default=0.5)
    parser.add_argument("--max-gap", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not (1 <= args.matches <= 500 and 0 <= args.kills <= 100 and args.timeout <= 3600):
        parser.error("--matches 1..500, --kills 0..100, --timeout <= 3600")
    raise_fd_limit()
    server = SpawnedServer([*ONE_ADDRESS_FLAGS, "--grace", "120", "--turn-timer", "0"])
    started = time.monotonic()
    try:
        server.start()
        chaos = Chaos(args, server)
        trio.run(chaos.run)
        server.stop()  # SIGTERM: a clean stop before the store is read
        problems, rows = verify_store(server.db, chaos.logs)
    finally:
        server.close()
    logs = chaos.logs
    problems = chaos.problems + problems
    for log in logs:
        if log.final is None:
            problems.append(f"{log.match or '?'}: did not finish")
        problems += [f"{log.match}: lost an acknowledged intent: {x}" for x in log.lost]
    resumes = sum(log.resumes for log in logs)
    figures = {
        "matches": len(logs), "kills": len(chaos.kill_times),
        "finished": sum(1 for log in logs if log.final),
        "intents_journaled": rows, "client_resumes": resumes,
        "seconds": round(time.monotonic() - started, 1), "problems": problems,
        "results": sorted({(log.final or {}).get("result", {}).get("reason", "?")
                           for log in logs}),
        "load_average": os.getloadavg(),
    }
    print(f"matches {figures['matches']}, SIGKILLs {figures['kills']}, finished "
          f"{figures['finished']}, journal rows replayed {rows} (every digest equal), "
          f"client resumes {resumes}, {figures['seconds']} s")
    if problems:
        print("PROBLEMS:")
        for p in problems[:50]:
            print("  " + p)
    else:
        print("OK: no acknowledged intent lost, every match finished, every journal replays")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
