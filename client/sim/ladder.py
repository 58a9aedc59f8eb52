"""``cardsim ladder``: every strategy against every other, ranked by Elo with intervals.

A round-robin ``cardsim tournament`` over all the strategies (or ``--bots``) at
one fixed budget per move, each deal played twice with the seats swapped,
summed up as a ladder: one Elo rating per strategy (Bradley-Terry over all
games at once, mean 0), its 95% interval from a bootstrap that resamples the
deals of every pairing, and the strategy's score. Below it, the pairing table
of the tournament. ``--markdown`` prints the ladder as the README's strategy
table; ``--json`` everything, every game included.

:func:`bootstrap_elo` and :func:`ladder_rows` are importable and tested on
their own; the games are played by :mod:`client.sim.tournament`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from client.sim import tournament
from client.sim.report import Progress, positive_int
from engine.bots import describe, strategy_names

#: Bootstrap resamples behind each interval.
DEFAULT_RESAMPLES = 200


@dataclass(frozen=True, slots=True)
class LadderRow:
    """One rung: a strategy's rating, its 95% interval and its record."""

    rank: int
    name: str
    elo: float
    low: float
    high: float
    games: int
    wins: int
    losses: int
    draws: int

    @property
    def score(self) -> float:
        """Wins plus half the draws, over the games played."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def _deals(records: Sequence[tournament.GameRecord]
           ) -> dict[tuple[str, str], list[list[tournament.GameRecord]]]:
    """The records by pairing (sorted names), each pairing's games grouped by deal."""
    groups: dict[tuple[str, str], dict[int, list[tournament.GameRecord]]] = defaultdict(dict)
    for rec in records:
        pair = tuple(sorted(rec.bots))
        groups[pair].setdefault(rec.seed, []).append(rec)  # type: ignore[index]
    return {pair: list(deals.values()) for pair, deals in groups.items()}


def bootstrap_elo(records: Sequence[tournament.GameRecord], bots: Sequence[str],
                  resamples: int = DEFAULT_RESAMPLES, seed: int = 0
                  ) -> dict[str, tuple[float, float]]:
    """A 95% interval (2.5th and 97.5th percentile) of each bot's Elo rating.

    Each resample draws, for every pairing, as many deals as it played, with
    replacement (a deal keeps both of its seat-swapped games), and refits
    :func:`client.sim.tournament.elo_ratings`.

    Raises:
        ValueError: ``resamples`` < 1.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    rng = random.Random(seed)
    deals = _deals(records)
    samples: dict[str, list[float]] = {b: [] for b in bots}
    for _ in range(resamples):
        drawn: list[tournament.GameRecord] = []
        for games in deals.values():
            for _ in range(len(games)):
                drawn.extend(games[rng.randrange(len(games))])
        for name, rating in tournament.elo_ratings(drawn, bots, iterations=200).items():
            samples[name].append(rating)
    out = {}
    for name, values in samples.items():
        values.sort()
        lo = values[int(0.025 * (len(values) - 1))]
        hi = values[int(round(0.975 * (len(values) - 1)))]
        out[name] = (lo, hi)
    return out


def ladder_rows(records: Sequence[tournament.GameRecord], bots: Sequence[str],
                resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[LadderRow]:
    """The ladder, best first: Elo (mean 0), its bootstrap interval, wins, losses, draws."""
    ratings = tournament.elo_ratings(records, bots)
    intervals = bootstrap_elo(records, bots, resamples, seed)
    tally = {b: [0, 0, 0, 0] for b in bots}  # games, wins, losses, draws
    for rec in records:
        for seat, name in enumerate(rec.bots):
            t = tally[name]
            t[0] += 1
            if rec.winner is None:
                t[3] += 1
            elif rec.winner == seat:
                t[1] += 1
            else:
                t[2] += 1
    order = sorted(bots, key=lambda b: -ratings[b])
    return [LadderRow(rank, name, ratings[name], *intervals[name], *tally[name])
            for rank, name in enumerate(order, start=1)]


def _origin(result: tournament.TournamentResult, sources: Sequence[str]) -> str:
    """Where the games come from, for the headers."""
    if sources:
        files = sources[0] if len(sources) == 1 else f"{len(sources)} files"
        return (f"{len(result.records)} games from {files}, {result.time_budget:g} s per move"
                f"{_clock_note(result)}")
    return (f"{result.games_per_pairing} games per pairing (seats swapped), "
            f"{result.time_budget:g} s per move{_clock_note(result)}, seed {result.seed}")


def _clock_note(result: tournament.TournamentResult) -> str:
    """Nothing for wall time (the default), else which clock the budget was read on."""
    return "" if result.clock == "wall" else f" ({result.clock} time)"


def format_ladder(result: tournament.TournamentResult, rows: Sequence[LadderRow],
                  sources: Sequence[str] = ()) -> str:
    """The ladder as text, then the pairing table (``sources``: the files read)."""
    lines = [f"{result.game} ladder: {len(result.bots)} strategies, "
             f"{_origin(result, sources)}", "",
             f"{'rank':>4} {'strategy':>9} {'Elo':>6} {'95% interval':>15} {'score':>7} "
             f"{'games':>6} {'W-L-D':>13}"]
    for r in rows:
        lines.append(f"{r.rank:>4} {r.name:>9} {r.elo:+6.0f} {f'{r.low:+.0f}..{r.high:+.0f}':>15} "
                     f"{100 * r.score:6.1f}% {r.games:>6} "
                     f"{f'{r.wins}-{r.losses}-{r.draws}':>13}")
    table = tournament.format_table(result)
    if sources:  # the table's own header speaks of one tournament's settings
        table = table.split("\n", 2)[2]
    lines += ["", "Elo: Bradley-Terry over all games, mean 0; interval: bootstrap over deals", "",
              table]
    return "\n".join(lines)


def format_markdown(result: tournament.TournamentResult, rows: Sequence[LadderRow],
                    sources: Sequence[str] = ()) -> str:
    """The ladder as a Markdown table (the README's strategy table)."""
    docs = describe()
    lines = ["| rank | strategy | Elo (95% interval) | score | what it does |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.rank} | `{r.name}` | {r.elo:+.0f} ({r.low:+.0f} to {r.high:+.0f}) "
                     f"| {100 * r.score:.1f}% | {docs.get(r.name, '')} |")
    lines.append("")
    if sources:
        lines.append(f"`cardsim ladder {result.game} --from ...`: {_origin(result, sources)}, "
                     "seats swapped on every deal.")
    else:
        lines.append(f"`cardsim ladder {result.game} --games {result.games_per_pairing} "
                     f"--seed {result.seed} --time-budget {result.time_budget:g}"
                     f"{'' if result.clock == 'wall' else f' --clock {result.clock}'}`: "
                     f"{len(result.records)} games, {result.games_per_pairing} per pairing, "
                     "seats swapped on every deal.")
    return "\n".join(lines)


def load_results(paths: Sequence[str]) -> tournament.TournamentResult:
    """The games of saved ``cardsim tournament --json`` (or ``ladder --json``) files,
    as one result: the ladder of several runs without playing them again.

    Raises:
        OSError: a file cannot be read.
        ValueError: not such a file, or the files disagree on the game or the budget.
    """
    records: list[tournament.GameRecord] = []
    bots: list[str] = []
    game = budget = clock = None
    for path in paths:
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not JSON ({exc})") from None
        try:
            data = data.get("tournament", data)
            games = data["games"]
            here = data.get("clock", "wall")
            if game is None:
                game, budget, clock = data["game"], data["time_budget"], here
            elif (data["game"], data["time_budget"], here) != (game, budget, clock):
                raise ValueError(f"{path}: {data['game']} at {data['time_budget']} s per move "
                                 f"({here} time), not {game} at {budget} s ({clock} time) "
                                 "like the files before it")
            for name in data["bots"]:
                if name not in bots:
                    bots.append(name)
            for g in games:
                records.append(tournament.GameRecord(
                    len(records), tuple(g["bots"]), int(g["seed"], 16), g["winner"], g["reason"],
                    g["moves"], tuple(g["think"]), tuple(g["decisions"])))  # type: ignore[arg-type]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a cardsim tournament --json file ({exc!r})") from None
    if game is None:
        raise ValueError("no file given")
    per_pair = max(row.games for row in tournament.tabulate(records, bots)) if records else 0
    return tournament.TournamentResult(game, bots, per_pair, 0, budget, {}, records,  # type: ignore[arg-type]
                                       clock=clock or "wall")


def to_json(result: tournament.TournamentResult, rows: Sequence[LadderRow]) -> dict[str, Any]:
    """The ladder, then the whole tournament as :func:`client.sim.tournament.to_json` has it."""
    return {"ladder": [{"rank": r.rank, "name": r.name, "elo": r.elo, "elo95": [r.low, r.high],
                        "games": r.games, "wins": r.wins, "losses": r.losses, "draws": r.draws,
                        "score": r.score} for r in rows],
            "tournament": tournament.to_json(result)}


# ---------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``ladder`` subcommand's arguments: the tournament's, with every strategy."""
    tournament.add_arguments(parser)
    parser.set_defaults(bots=",".join(strategy_names()))
    for action in parser._actions:  # the help should say what the default now is
        if action.dest == "bots":
            action.help = (f"comma-separated strategies (default: all, "
                           f"{', '.join(strategy_names())})")
    parser.add_argument("--resamples", type=positive_int, default=DEFAULT_RESAMPLES,
                        help="bootstrap resamples per interval (default %(default)s)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the ladder as a Markdown table")
    parser.add_argument("--from", dest="sources", action="append", default=[], metavar="FILE",
                        help="rank the games of saved 'cardsim tournament --json' files instead "
                             "of playing (repeatable; the game argument and play options are "
                             "then ignored)")


def run(args: argparse.Namespace) -> int:
    """Run the ladder described by parsed ``args``; returns the exit status."""
    from engine.core import RuleError
    from engine.registry import get_game

    if args.sources:
        try:
            result = load_results(args.sources)
        except (OSError, ValueError) as exc:
            print(f"cardsim ladder: {exc}", file=sys.stderr)
            return 2
        return _report(args, result, args.sources)
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    try:
        options = tournament.parse_options(args.option)
        get_game(args.game).normalize_options(options)
        jobs = tournament.schedule(bots, args.games, args.seed)
        for name in bots:
            if name not in strategy_names():
                raise ValueError(f"unknown strategy {name!r}; known: "
                                 f"{', '.join(strategy_names())}")
    except (ValueError, RuleError) as exc:
        print(f"cardsim ladder: {exc}", file=sys.stderr)
        return 2
    with Progress(len(jobs), label=f"ladder {args.game}",
                  enabled=False if args.no_progress else None) as progress:
        result = tournament.run_tournament(args.game, bots, args.games, args.seed, options,
                                           args.time_budget, max(1, args.jobs),
                                           progress.advance, args.clock)
    return _report(args, result, [])


def _report(args: argparse.Namespace, result: tournament.TournamentResult,
            sources: Sequence[str]) -> int:
    rows = ladder_rows(result.records, result.bots, args.resamples, args.seed)
    if args.json:
        print(json.dumps(to_json(result, rows), indent=2))
    elif args.markdown:
        print(format_markdown(result, rows, sources))
    else:
        print(format_ladder(result, rows, sources))
    return 0
