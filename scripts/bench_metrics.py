#!/usr/bin/env python3
"""What the metrics cost per intent: the calls the server makes on one intent's path,
timed against the same loop without them, in the same run.

    .venv/bin/python scripts/bench_metrics.py [--n 200000] [--repeat 5]

One accepted intent of a plain-socket connection makes these calls
(server/connection.py, server/match/task.py, server/match/commit.py):
``metrics.request`` (the request counter), ``metrics.perf_counter`` (the core's
start), ``metrics.handled`` (accepted or refused), the error check of each
message encoded (an ``ok`` and two snapshots), ``metrics.delivered`` (the latency
histogram) and ``metrics.committed`` (one commit's histogram; a group commit
observes once per batch, so one per intent is the worst case). The figure is
best-of-``--repeat`` µs per intent with the calls minus without them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol.events import Error, Ok  # noqa: E402
from server import metrics  # noqa: E402
from server.match.commands import PlayIntent  # noqa: E402
from server.match.effects import Effects  # noqa: E402


def _loop(n: int, instrumented: bool) -> float:
    """Seconds for ``n`` intents' worth of calls (or of the bare loop)."""
    command = PlayIntent("s1", rid=1, seq=3, intent={"type": "flip"})
    ok = Ok(id=1, match="m1", seq=4)
    fx = Effects(messages=[("s1", ok), ("s1", ok)])
    messages = (ok, ok, ok)
    perf = time.perf_counter
    start = perf()
    if instrumented:
        for _ in range(n):
            metrics.request("intent")
            began = metrics.perf_counter()
            metrics.handled("war", command, fx)
            for msg in messages:
                if type(msg) is Error:
                    metrics.error(msg.code)
            metrics.committed(began)
            metrics.delivered(command, began)
    else:
        for _ in range(n):
            for msg in messages:
                if msg is None:
                    pass
    return perf() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bare = min(_loop(args.n, False) for _ in range(args.repeat))
    full = min(_loop(args.n, True) for _ in range(args.repeat))
    per = (full - bare) / args.n * 1e6
    print(f"metrics per intent: {per:.2f} µs (loop with calls {full / args.n * 1e6:.2f} µs, "
          f"without {bare / args.n * 1e6:.2f} µs; best of {args.repeat} x {args.n})")
    print(f"goal < 2 µs: {'met' if per < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
