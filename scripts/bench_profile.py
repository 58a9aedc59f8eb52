#!/usr/bin/env python3
"""Sort a py-spy profile of the server into the per-move budget's rows.

    py-spy record -f raw -r 250 -o prof.txt -- .venv/bin/cardserver ...
    .venv/bin/python scripts/bench_profile.py prof.txt [--moves N] [--cpu-s S]

Each sample (a stack, root first) is charged to one row of the budget
(decode and validate, seq rule, engine, digest, journal commit, views, legal,
encode, write, read, scheduler, ...): the row of the deepest frame that
matches one of :data:`ROWS`' patterns, so ``digest`` under ``_journal`` is the
digest's and ``sqlite3`` under ``_journal`` the commit's. A stack that matches
no row but runs inside trio's core is the scheduler's (task switches, cancel
scopes, epoll); the rest is "other". With ``--moves`` and ``--cpu-s`` (the
moves and server CPU seconds of the sampled window) each row is also given in
microseconds of CPU per move.

Only the samples py-spy records as active count (by default it drops a thread
idle in ``epoll_wait``), so the shares are shares of CPU, not of wall time.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

#: (row, pattern on one frame "function (file:line)"), most specific first within
#: a stack's depth: the deepest matching frame decides.
ROWS: list[tuple[str, re.Pattern[str]]] = [
    ("write (send syscalls)", re.compile(r"^(SocketStream\.send_all|socket\.send|"
                                         r"ClientConnection\._send|ClientConnection\.flush) ")),
    ("read (recv syscalls)", re.compile(r"^(SocketStream\.receive_some|socket\.recv"
                                        r"(_into)?|ClientConnection\._read) ")),
    ("views", re.compile(r"(\(server/match/snapshots\.py:|^trusted\w* \()")),
    ("validate (events, schema walks)", re.compile(r"\(protocol/(events|schema)\.py:")),
    ("encode", re.compile(r"^(pack|packb|encode_frame|Connection\.send|"
                          r"ClientConnection\._encode|_encode\w*|encode\w*) \(")),
    ("decode (framing, msgpack)", re.compile(r"^(unpack|unpackb|validate\w*|_check_shape|"
                                       r"Connection\.next_message|Connection\.receive_data|"
                                       r"FrameDecoder\.\w+|next_event|receive_data|"
                                       r"\w+\.__init__ \(protocol/events)")),
    ("journal commit", re.compile(r"^(Store\.append|Store\._write|Connection\.execute|"
                                  r"Cursor\.execute|Connection\.commit|_dumps|JSONEncoder"
                                  r"\.\w+|Store\.\w+|Journal\w*\.\w+|commit_batch) \(")),
    ("digest", re.compile(r"^(\w+\.(journal_)?digest|rng_fingerprint|digest\w*) \(")),
    ("views", re.compile(r"^(\w+\.view|view|_table|project_events|\w+\.project_events|"
                         r"Match\.snapshot|Match\.players|Seat\.player|\w+\._deadline_for|"
                         r"to_dict|\w+\.to_dict|steps_of|to_str|snapshot\w*|\w+\.snapshot\w*|"
                         r"build_snapshot\w*) \(")),
    ("legal", re.compile(r"^(\w+\.legal|legal) \(")),
    ("engine (apply)", re.compile(r"^(\w+State\.apply|\w+State\._\w+|\w+Game\.apply)")),
    ("timers, outcome, to_move", re.compile(r"^(Match\._update_timers|\w+\.to_move|"
                                            r"Match\._next_deadline|\w+\.outcome) \(")),
    ("rate limit", re.compile(r"^TokenBucket\.\w+ \(")),
    ("lobby routing", re.compile(r"^Lobby\.\w+ \(")),
    ("push to outbox", re.compile(r"^(Session\.push|ClientConnection\.push|"
                                  r"MemorySendChannel\.send_nowait) \(")),
    ("seq rule and match handling", re.compile(r"^(Match\._on_intent|Match\._handle|"
                                               r"Match\._guard|Match\._ok|Match\.submit|"
                                               r"Match\.\w+|GroupCommit\.\w+|Effects\.\w+|"
                                               r"MatchCore\.\w+|Match\._changed|"
                                               r"Match\._broadcast\w*|Match\._journal) \(")),
    ("logging", re.compile(r"^\w+ \((logging/|.*/logging/)")),
    ("gc", re.compile(r"^gc\b")),
]

TRIO_CORE = re.compile(r"\(.*trio/_core/")
#: Rows that are not CPU spent on moves: left out of the per-move figures.
#: (py-spy counts a thread blocked in epoll_wait as active; under a saturating
#: load epoll_wait returns at once and is scheduler time, in a ping-pong run
#: it is mostly waiting: read the row with the run's server CPU share.)
IDLE = "idle? (epoll_wait)"
STARTUP = "start-up (imports, tune_gc)"
NOT_MOVES = (IDLE, STARTUP)
STARTUP_FRAME = re.compile(r"(<frozen importlib|tune_gc \(|_compile_and_eval \(attr)")


def classify(stack: list[str]) -> str:
    """The budget row of one sampled stack (frames root first)."""
    if stack and stack[-1].startswith("EpollIOManager.get_events "):
        return IDLE
    if any(STARTUP_FRAME.search(f) for f in stack):
        return STARTUP
    for frame in reversed(stack):
        for row, pattern in ROWS:
            if pattern.search(frame):
                return row
    if any(TRIO_CORE.search(f) for f in stack):
        return "scheduler (trio core, epoll, task switches)"
    return "other"


def read_raw(path: Path) -> Counter[str]:
    """Samples per row from a py-spy ``-f raw`` file (``frame;frame;... count`` lines)."""
    rows: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        rows[classify(stack.split(";"))] += int(count)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", type=Path, nargs="+")
    parser.add_argument("--moves", type=int, help="moves in the sampled window")
    parser.add_argument("--cpu-s", type=float, help="server CPU seconds in that window")
    args = parser.parse_args(argv)
    for path in args.profiles:
        rows = read_raw(path)
        total = sum(n for row, n in rows.items() if row not in NOT_MOVES)
        per_move = (args.cpu_s * 1e6 / args.moves) if args.moves and args.cpu_s else None
        print(f"{path}: {total} samples on moves" + (f", {per_move:.1f} µs CPU per move"
                                                     if per_move else ""))
        for row, n in rows.most_common():
            if row in NOT_MOVES:
                continue
            share = n / total
            extra = f"  {share * per_move:6.1f} µs" if per_move else ""
            print(f"  {row:<46} {share:6.1%}{extra}")
        for row in NOT_MOVES:
            print(f"  ({row}: {rows[row]} samples, not counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
