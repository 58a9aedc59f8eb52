"""The A/B machinery of the in-process benchmarks (``bench_move.py``, ``bench_store.py``):
the same script run against another checkout's code in a subprocess, rounds
alternating between the builds, the best (least disturbed) figure of each kept."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def run_child(script: str, checkout: Path, argv: Sequence[str]) -> Any:
    """``script --child ARGV`` with ``checkout``'s code first on the path; its JSON output.

    Raises:
        RuntimeError: the child failed (its last stderr lines in the message).
    """
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, script, "--child", *argv], env=env, cwd=checkout,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{checkout}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout)


def best_alternating(builds: Sequence[tuple[str, Path]], rounds: int,
                     measure: Callable[[Path], dict[str, float]]
                     ) -> dict[tuple[str, str], float]:
    """``measure(checkout)`` (seconds per figure) ``rounds`` times per build, the builds
    alternating so that the machine's load hits all alike; the least of each
    (build name, figure).

    Raises:
        RuntimeError: as :func:`run_child`.
    """
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for name, path in builds:
            for figure, got in measure(path).items():
                best[name, figure] = min(best.get((name, figure), got), got)
    return best


def run_builds(parser: argparse.ArgumentParser, argv: Sequence[str] | None, root: Path,
               child: Callable[[Any], int], measure: Callable[[Path, Any], dict[str, float]]
               ) -> int | tuple[Any, list[tuple[str, Path]], dict[tuple[str, str], float]]:
    """A benchmark's main: ``parser`` (given ``--base`` and ``--child`` here) parses
    ``argv``; with ``--child``, ``child(args)``'s exit status; else the arguments, the
    builds (this checkout ``root``, and ``--base`` when given) and their best figures
    over ``args.rounds`` alternating rounds, or 2 when a round failed."""
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    builds = [("this", root)] + ([("base", args.base.resolve())] if args.base else [])
    try:
        return args, builds, best_alternating(builds, args.rounds,
                                              lambda path: measure(path, args))
    except RuntimeError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
