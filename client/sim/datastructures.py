"""``cardsim datastructures``: random Data Structures games through the engine.

Both seats choose uniformly at random among ``state.legal(seat)``. Game ``i``
of a run gets its match seed and its two players' seeds from
``random.Random(--seed)``, so the same ``--seed`` prints the same numbers. The
report: game length in turns (mean, median, mode, max, min, and a text
histogram), closed arrays, outcomes (wins per seat, draws) and end reasons;
``--json`` prints one JSON object (keys: see :func:`summarize`). Statistics,
histogram and the stderr progress bar come from :mod:`client.sim.report`.

:func:`simulate` and :func:`summarize` are the pure parts (tested on their own);
:func:`add_arguments` and :func:`run` are what ``client/sim/cli.py`` calls.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client.sim.plot import plot_lengths
from client.sim.report import Progress, bins_of, describe, histogram, positive_int
from engine.core import RuleError
from engine.playout import play_out
from engine.registry import get_game

GAME = "datastructures"


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished random game."""

    seed: int
    turns: int  # turns played: the number of the last turn
    closed: tuple[int, int]  # closed arrays per seat at the end
    winner: int | None
    reason: str
    steps: int  # intents applied


def play_random_game(seed: int, player_seeds: tuple[int, int], cap: int) -> GameResult:
    """Play one game to its end with both seats choosing uniformly among legal intents.

    Raises:
        BadOption: ``cap`` is not a valid cap.
    """
    state = get_game(GAME).new_state(seed, {"cap": cap})
    rngs = (random.Random(player_seeds[0]), random.Random(player_seeds[1]))
    steps = play_out(state, lambda _, seat, legal: legal[rngs[seat].randrange(len(legal))])
    outcome = state.outcome()
    assert outcome is not None
    view = state.view(None)
    closed = (view["players"][0]["closed"], view["players"][1]["closed"])
    return GameResult(seed, view["turn"], closed, outcome.winner, outcome.reason, steps)


def simulate(games: int, seed: int, cap: int,
             progress: Callable[[], None] | None = None) -> list[GameResult]:
    """Play ``games`` random games, deterministically from ``seed``.

    Args:
        progress: called once after each game (e.g. ``Progress.advance``).

    Raises:
        BadOption: ``cap`` is not a valid cap.
    """
    get_game(GAME).normalize_options({"cap": cap})
    rng = random.Random(seed)
    results = []
    for _ in range(games):
        match_seed = rng.getrandbits(256)
        players = (rng.getrandbits(64), rng.getrandbits(64))
        results.append(play_random_game(match_seed, players, cap))
        if progress is not None:
            progress()
    return results


def summarize(results: list[GameResult], bins: int = 10) -> dict[str, Any]:
    """The report as plain data (what ``--json`` prints, minus run facts and timing).

    Keys: ``games``; ``turns`` (``n, mean, median, mode, max, min`` of turns per
    game); ``closed_arrays`` (``mean_per_game``, ``per_seat`` totals,
    ``games_by_total``: how many games ended with 0..6 arrays closed in all);
    ``outcomes`` (``wins`` per seat, ``draws``); ``reasons`` (count per end
    reason); ``steps`` (intents applied in all); ``histogram``
    (``[{"low", "high", "count"}]`` over turns per game).
    """
    turns = [r.turns for r in results]
    closed_total = Counter(sum(r.closed) for r in results)
    n = len(results)
    return {
        "games": n,
        "turns": describe(turns),
        "closed_arrays": {
            "mean_per_game": round(sum(sum(r.closed) for r in results) / n, 3) if n else None,
            "per_seat": [sum(r.closed[s] for r in results) for s in (0, 1)],
            "games_by_total": {str(k): closed_total[k] for k in sorted(closed_total)},
        },
        "outcomes": {
            "wins": [sum(r.winner == s for r in results) for s in (0, 1)],
            "draws": sum(r.winner is None for r in results),
        },
        "reasons": dict(sorted(Counter(r.reason for r in results).items())),
        "steps": sum(r.steps for r in results),
        "histogram": [{"low": lo, "high": hi, "count": k} for lo, hi, k in bins_of(turns, bins)],
    }


def format_report(summary: dict[str, Any], seed: int, cap: int, turns: list[int],
                  elapsed: float) -> str:
    """The human-readable report."""
    n = summary["games"]
    t = summary["turns"]
    c = summary["closed_arrays"]
    o = summary["outcomes"]

    def pct(k: int) -> str:
        return f"{100 * k / n:.1f}%" if n else "-"

    lines = [
        f"datastructures: {n} random games, seed {seed}, cap {cap}",
        f"game length (turns): mean {t['mean']}  median {t['median']}  mode {t['mode']}"
        f"  max {t['max']}  min {t['min']}",
        f"closed arrays: {c['mean_per_game']} per game; seat 0 {c['per_seat'][0]}, "
        f"seat 1 {c['per_seat'][1]} in all",
        "  games by arrays closed (both seats): "
        + ", ".join(f"{k}: {v}" for k, v in c["games_by_total"].items()),
        f"outcomes: seat 0 wins {o['wins'][0]} ({pct(o['wins'][0])}), seat 1 wins "
        f"{o['wins'][1]} ({pct(o['wins'][1])}), draws {o['draws']} ({pct(o['draws'])})",
        "end reasons: " + ", ".join(f"{k} {v} ({pct(v)})" for k, v in summary["reasons"].items()),
        "game length (turns):",
        histogram(turns),
        f"time: {elapsed:.2f} s ({n / elapsed if elapsed > 0 else 0:.0f} games/s, "
        f"{summary['steps']} intents)",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--games``, ``--seed``, ``--cap`` and ``--json`` to ``parser``."""
    parser.add_argument("--games", type=positive_int, default=100,
                        help="number of games to play (default 100)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the whole run: same seed, same report (default 0)")
    parser.add_argument("--cap", type=int, default=None,
                        help="turn cap per game (D12; default: the game's default, 500)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="FILE.svg",
                        help="also draw the game-length histogram as an SVG file")


def run(args: argparse.Namespace) -> int:
    """Run the simulation described by ``args``; print the report; return the exit status
    (0 done, 2 bad arguments such as an invalid cap)."""
    cap = args.cap if args.cap is not None else get_game(GAME).normalize_options({})["cap"]
    start = time.perf_counter()
    bar = Progress(args.games, label=GAME)
    try:
        results = simulate(args.games, args.seed, cap, bar.advance)
    except RuleError as exc:
        print(f"cardsim datastructures: {exc}", file=sys.stderr)
        return 2
    finally:
        bar.close()
    elapsed = time.perf_counter() - start
    summary = summarize(results)
    if args.json:
        out = {"game": GAME, "seed": args.seed, "cap": cap, **summary,
               "elapsed": round(elapsed, 4)}
        print(json.dumps(out))
    else:
        print(format_report(summary, args.seed, cap, [r.turns for r in results], elapsed))
    return plot_lengths(args.plot, [r.turns for r in results], "turns",
                        f"Data Structures: turns per game ({args.games} games, seed {args.seed})")


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m client.sim.datastructures``)."""
    parser = argparse.ArgumentParser(prog="cardsim datastructures", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
