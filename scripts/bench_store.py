#!/usr/bin/env python3
"""A War move's journal row through the SQLite store, in process: CPU per row.

    .venv/bin/python scripts/bench_store.py [--rows 30000] [--rounds 5] [--batch 1 10]
        [--base /path/to/other/checkout]

What :meth:`server.store.Store.append` costs for the row a War flip writes (the
intent, the digest, both seats' timers) inside :meth:`Store.transaction`, with
``--batch`` rows per transaction (1: a ping-pong, each command alone; 10: a busy
server's group commit), on a file store in WAL mode as the server opens it (the
same ``synchronous`` setting and lock: nothing weakened for the benchmark). CPU
is the figure to steer by; the wall clock adds the checkpoints' waits for the
disk (``fdatasync``), during which the server's one thread does nothing else. A store
with a redo log (``--journal-log on``) is folded every 50 ms, as the server folds it,
and its folds are counted in both figures. Each round
uses a fresh store in a temporary folder and the best round is kept. With
``--base`` the same rows run against that checkout's code in a subprocess,
rounds alternating, and the ratio is printed. Exit status 0, or 2 when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ab import run_builds, run_child  # noqa: E402

#: How often a store with a redo log is folded (the server's ``--journal-fold``).
FOLD_SECONDS = 0.05


def run_rows(rows: int, batch: int, lock: str = "shared",
             journal_log: str = "on") -> tuple[float, float]:
    """CPU seconds (process time) and wall-clock seconds for ``rows`` journal rows,
    ``batch`` per transaction (the wall clock also counts the checkpoints' waits
    for the disk, which block the server's thread without using its CPU), on a
    store opened as the server opens it with ``--store-lock lock`` and
    ``--journal-log journal_log``."""
    from server.store import JournalEntry, MatchRecord, SeatTimers, Store

    with tempfile.TemporaryDirectory() as folder:
        # a build from before --journal-log commits each write; one from before
        # --store-lock locks as "shared" does
        for options in ({"hold_file": lock == "exclusive", "redo_log": journal_log == "on"},
                        {"hold_file": lock == "exclusive"}, {}):
            try:
                store = Store(Path(folder) / "bench.db", exclusive=True, **options)
                break
            except TypeError:
                continue
        try:
            store.create_match(MatchRecord("m1", "war", {}, 1, "ab" * 16, 120, "forfeit",
                                           "active", 1.0))
            seq = 0
            # with a redo log, fold it as the server's folding task does (every 50 ms)
            fold = getattr(store, "fold", None)
            start, wall = time.process_time(), time.perf_counter()
            fold_at = wall + FOLD_SECONDS
            for _ in range(rows // batch):
                if fold is not None and time.perf_counter() >= fold_at:
                    fold()
                    fold_at += FOLD_SECONDS
                with store.transaction():
                    for _ in range(batch):
                        seq += 1
                        timers = (SeatTimers(0, 1000.0 + seq, None, 0),
                                  SeatTimers(1, 1000.5 + seq, None, 0))
                        store.append("m1", JournalEntry(seq, "intent", seq % 2, {"type": "flip"},
                                                        None, "seat", 1.0 + seq, "ab" * 32,
                                                        timers))
            return time.process_time() - start, time.perf_counter() - wall
        finally:
            store.close()


def child(args: argparse.Namespace) -> int:
    """Run one round per batch size in this process (the code on sys.path); print JSON."""
    run_rows(min(500, args.rows), 1, args.store_lock, args.journal_log)  # warm up
    out = {}
    for b in args.batch:
        out[str(b)], out[f"{b} wall"] = run_rows(args.rows, b, args.store_lock,
                                                 args.journal_log)
    print(json.dumps(out))
    return 0


def measure(checkout: Path, args: argparse.Namespace) -> dict[str, float]:
    """One round per batch size in a subprocess running ``checkout``'s code."""
    return run_child(__file__, checkout, ["--rows", str(args.rows), "--store-lock",
                                          args.store_lock, "--journal-log", args.journal_log,
                                          "--batch", *map(str, args.batch)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=30000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--store-lock", choices=("shared", "exclusive"), default="shared",
                        help="open the store as the server does with this --store-lock "
                             "(default: shared, the server's default)")
    parser.add_argument("--journal-log", choices=("on", "off"), default="on",
                        help="open the store as the server does with this --journal-log "
                             "(default: on; a build without it commits each write)")
    ran = run_builds(parser, argv, ROOT, child, measure)
    if isinstance(ran, int):
        return ran
    args, builds, best = ran
    load = os.getloadavg()[0]
    for batch in map(str, args.batch):
        for name, path in builds:
            print(f"{name:5} {path}: {1e6 * best[name, batch] / args.rows:6.2f} µs CPU per row, "
                  f"{1e6 * best[name, batch + ' wall'] / args.rows:6.2f} µs wall, "
                  f"{batch} per transaction (best of {args.rounds})")
        if args.base:
            print(f"this / base, {batch} per transaction: "
                  f"{best['this', batch] / best['base', batch]:.3f} CPU, "
                  f"{best['this', batch + ' wall'] / best['base', batch + ' wall']:.3f} wall")
    print(f"(load average {load:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
