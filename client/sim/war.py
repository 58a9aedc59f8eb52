"""``cardsim war``: full War games through the engine, and statistics about them.

Both seats just flip (W6: flipping is the only decision). Game ``i`` of a run
gets its 256-bit match seed from ``random.Random(--seed)``, so the same
``--seed`` and options print the same numbers. The report: battles per game
(mean, median, mode, max, min), wars per game (every tie counts, so a double
war counts two), how many games hit the battle cap, wins per seat and draws,
end reasons, and a text histogram of game lengths; ``--json`` prints one JSON
object instead.

:func:`play_game`, :func:`simulate` and :func:`summarize` (which lists the JSON
keys) are the pure parts; :func:`add_arguments` and :func:`run` are what
``client/sim/cli.py`` calls.
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

GAME = "war"


@dataclass(frozen=True, slots=True)
class WarResult:
    """One finished War game."""

    seed: int
    battles: int           # battles resolved
    wars: int              # ties (a double war counts two)
    winner: int | None
    reason: str            # all_cards, cap, exhausted, short_war


def play_game(seed: int, options: dict[str, Any]) -> WarResult:
    """Play one War game to its end through ``legal``/``apply``, both seats flipping.

    Raises:
        BadOption: invalid ``options``.
    """
    state = get_game(GAME).new_state(seed, options)
    play_out(state, lambda _, seat, legal: legal[0])
    outcome = state.outcome()
    assert outcome is not None
    view = state.view(None)
    return WarResult(seed, view["battles"], view["wars"], outcome.winner, outcome.reason)


def simulate(games: int, seed: int, options: dict[str, Any],
             progress: Callable[[], None] | None = None) -> list[WarResult]:
    """Play ``games`` games, deterministically from ``seed``.

    Args:
        progress: called once after each game (e.g. ``Progress.advance``).

    Raises:
        BadOption: invalid ``options``.
    """
    options = get_game(GAME).normalize_options(options)
    rng = random.Random(seed)
    results = []
    for _ in range(games):
        results.append(play_game(rng.getrandbits(256), options))
        if progress is not None:
            progress()
    return results


def summarize(results: list[WarResult], cap: int, bins: int = 10) -> dict[str, Any]:
    """The report as plain data (what ``--json`` prints, minus run facts and timing).

    Keys: ``games``; ``mean_battles``, ``median_battles``, ``mode_battles``,
    ``max_battles``, ``min_battles``; ``mean_wars`` (wars per game) and
    ``max_wars``; ``capped`` (games that hit the cap) and ``capped_share``
    (0..1); ``wins`` (per seat), ``draws``; ``reasons`` (count per end reason);
    ``histogram`` (``[{"low", "high", "count"}]`` over battles per game).
    """
    battles = [r.battles for r in results]
    wars = [r.wars for r in results]
    b = describe(battles)
    w = describe(wars)
    n = len(results)
    capped = sum(1 for r in results if r.reason == "cap")
    return {
        "games": n,
        "mean_battles": b["mean"], "median_battles": b["median"], "mode_battles": b["mode"],
        "max_battles": b["max"], "min_battles": b["min"],
        "mean_wars": w["mean"], "max_wars": w["max"],
        "cap": cap,
        "capped": capped,
        "capped_share": round(capped / n, 4) if n else None,
        "wins": [sum(1 for r in results if r.winner == s) for s in (0, 1)],
        "draws": sum(1 for r in results if r.winner is None),
        "reasons": dict(sorted(Counter(r.reason for r in results).items())),
        "histogram": [{"low": lo, "high": hi, "count": k}
                      for lo, hi, k in bins_of(battles, bins)],
    }


def format_report(summary: dict[str, Any], seed: int, options: dict[str, Any],
                  battles: list[int], elapsed: float) -> str:
    """The human-readable report."""
    n = summary["games"]

    def pct(k: int) -> str:
        return f"{100 * k / n:.1f}%" if n else "-"

    wins, draws = summary["wins"], summary["draws"]
    lines = [
        f"war: {n} games, seed {seed}, return {options['return']}, "
        f"short_war {options['short_war']}, cap {options['cap']}",
        f"battles per game: mean {summary['mean_battles']}  median {summary['median_battles']}"
        f"  mode {summary['mode_battles']}  max {summary['max_battles']}"
        f"  min {summary['min_battles']}",
        f"wars per game: mean {summary['mean_wars']}  max {summary['max_wars']}",
        f"hit the cap: {summary['capped']} of {n} ({pct(summary['capped'])})",
        f"wins: seat 0 {wins[0]} ({pct(wins[0])}), seat 1 {wins[1]} ({pct(wins[1])}), "
        f"draws {draws} ({pct(draws)})",
        "end reasons: " + ", ".join(f"{k} {v}" for k, v in summary["reasons"].items()),
        "game length (battles):",
        histogram(battles),
        f"time: {elapsed:.2f} s ({n / elapsed if elapsed > 0 else 0:.0f} games/s)",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--games --seed --return --short-war --cap --json`` to ``parser``."""
    parser.add_argument("--games", type=positive_int, default=100,
                        help="number of games (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the whole run: same seed, same report (default 0)")
    parser.add_argument("--return", dest="return_order", choices=["shuffled", "played"],
                        default="shuffled",
                        help="W3: how a won pile goes under the deck (default %(default)s)")
    parser.add_argument("--short-war", dest="short_war", choices=["stand", "lose"],
                        default="stand",
                        help="W4: too few cards for a war (default %(default)s)")
    parser.add_argument("--cap", type=positive_int, default=10000,
                        help="W5: battle cap per game (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="FILE.svg",
                        help="also draw the game-length histogram as an SVG file")


def run(args: argparse.Namespace) -> int:
    """Run the simulation described by ``args`` and print its report.

    Returns the exit status: 0 done, 2 bad options.
    """
    options = {"return": args.return_order, "short_war": args.short_war, "cap": args.cap}
    start = time.perf_counter()
    bar = Progress(args.games, label="war")
    try:
        results = simulate(args.games, args.seed, options, bar.advance)
    except RuleError as exc:
        print(f"cardsim war: {exc}", file=sys.stderr)
        return 2
    finally:
        bar.close()
    elapsed = time.perf_counter() - start
    summary = summarize(results, args.cap)
    if args.json:
        print(json.dumps({"game": GAME, "seed": args.seed, "options": options, **summary,
                          "elapsed": round(elapsed, 4)}))
    else:
        print(format_report(summary, args.seed, options, [r.battles for r in results], elapsed))
    return plot_lengths(args.plot, [r.battles for r in results], "battles",
                        f"War: battles per game ({args.games} games, seed {args.seed})")
