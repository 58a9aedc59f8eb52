"""``cardsim tournament``: strategies against each other, offline through the engine.

Every pairing of the given bots plays ``--games`` games. Games come in pairs
that share a deal (the same match seed) with the seats swapped, so neither bot
profits from a lucky deck or from moving first. Each game runs through the real
engine: every bot sees only ``state.view(seat)`` and ``state.legal(seat)``, as
over the network. The result is a table of win rates with 95% Wilson
confidence intervals and Elo estimates (``--json`` for a machine-readable
copy, including every game played).

The pure parts (:func:`schedule`, :func:`play_game`, :func:`tabulate`,
:func:`elo_ratings`) are importable and tested on their own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from client.sim.report import Progress
from engine.bots import DEFAULT_TIME_BUDGET, get_strategy, strategy_names, timed
from engine.core import State
from engine.playout import play_out

#: A game that has not ended after this many intents is a bug somewhere (the
#: engines cap both games far below it).
MAX_MOVES = 2_000_000


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: ``bots[seat]`` plays ``seat`` on the deal ``seed``."""

    index: int
    bots: tuple[str, str]
    seed: int
    strategy_seeds: tuple[int, int]


@dataclass(slots=True)
class GameRecord:
    """What happened in one game."""

    index: int
    bots: tuple[str, str]
    seed: int
    winner: int | None
    reason: str
    moves: int
    think: tuple[float, float]
    decisions: tuple[int, int]

    @property
    def winner_bot(self) -> str | None:
        """The name of the winning bot, None for a draw."""
        return None if self.winner is None else self.bots[self.winner]


@dataclass(slots=True)
class PairRow:
    """One line of the table: ``a`` against ``b`` over all their games."""

    a: str
    b: str
    games: int = 0
    a_wins: int = 0
    b_wins: int = 0
    draws: int = 0
    moves: int = 0

    @property
    def decided(self) -> int:
        return self.a_wins + self.b_wins

    def win_rate(self) -> float | None:
        """``a``'s share of the decided games (None when none was decided)."""
        return self.a_wins / self.decided if self.decided else None

    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval of :meth:`win_rate` (None when none was decided)."""
        return wilson(self.a_wins, self.decided) if self.decided else None

    def elo_diff(self) -> float | None:
        """Elo difference a - b implied by a's score (draws count half)."""
        if not self.games:
            return None
        return elo_from_score((self.a_wins + 0.5 * self.draws) / self.games)


@dataclass(slots=True)
class TournamentResult:
    """Everything a tournament produced."""

    game: str
    bots: list[str]
    games_per_pairing: int
    seed: int
    time_budget: float
    options: dict[str, Any]
    records: list[GameRecord] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1
    clock: str = "wall"


#: The clocks a time budget can be measured on (``--clock``): ``wall`` is elapsed
#: time, so other load on the machine cuts what a bot gets; ``cpu`` is the CPU time
#: of the thread playing the game, which does not depend on the machine's other load.
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}


# ---------------------------------------------------------------- statistics

def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of ``successes / trials``; it holds
    the rate itself, exactly 0 at none and 1 at all (rounding left 5.6e-17 there).

    Raises:
        ValueError: ``trials`` is not positive or ``successes`` is out of range.
    """
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, trials > 0; got {successes}/{trials}")
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, min(p, centre - half))
    high = 1.0 if successes == trials else min(1.0, max(p, centre + half))
    return low, high


def elo_from_score(score: float) -> float:
    """Elo difference for an expected score in [0, 1] (clamped to +-800 at the ends)."""
    score = min(max(score, 0.01), 0.99)
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_ratings(records: Iterable[GameRecord], bots: Sequence[str],
                iterations: int = 500) -> dict[str, float]:
    """Elo ratings (mean 0) fitted to all games at once (Bradley-Terry, draws = half).

    A light prior (one virtual draw between every two bots that met) keeps the
    ratings finite when one bot won every game.
    """
    wins = {a: {b: 0.0 for b in bots} for a in bots}
    met: set[tuple[str, str]] = set()
    for rec in records:
        a, b = rec.bots
        if a == b:
            continue
        met.add((a, b))
        met.add((b, a))
        if rec.winner is None:
            wins[a][b] += 0.5
            wins[b][a] += 0.5
        else:
            w, lo = rec.bots[rec.winner], rec.bots[1 - rec.winner]
            wins[w][lo] += 1.0
    for a, b in met:
        wins[a][b] += 0.5
    gamma = {a: 1.0 for a in bots}
    for _ in range(iterations):
        new = {}
        for a in bots:
            total = sum(wins[a].values())
            denom = sum((wins[a][b] + wins[b][a]) / (gamma[a] + gamma[b])
                        for b in bots if b != a and (a, b) in met)
            new[a] = total / denom if denom > 0 else gamma[a]
        norm = math.exp(sum(math.log(g) for g in new.values()) / len(new))
        gamma = {a: g / norm for a, g in new.items()}
    return {a: 400.0 * math.log10(g) for a, g in gamma.items()}


def tabulate(records: Iterable[GameRecord], bots: Sequence[str]) -> list[PairRow]:
    """One row per pairing (in the order of ``bots``), counted from the records.

    Raises:
        ValueError: a record names a bot pairing not in ``bots``.
    """
    rows = {(a, b): PairRow(a, b) for a, b in pairings(bots)}
    for rec in records:
        x, y = rec.bots
        if (x, y) in rows:
            row, a_seat = rows[(x, y)], 0
        elif (y, x) in rows:
            row, a_seat = rows[(y, x)], 1
        else:
            raise ValueError(f"game {rec.index} between {x} and {y} is not in this tournament")
        row.games += 1
        row.moves += rec.moves
        if rec.winner is None:
            row.draws += 1
        elif rec.winner == a_seat:
            row.a_wins += 1
        else:
            row.b_wins += 1
    return list(rows.values())


# ---------------------------------------------------------------- playing

def pairings(bots: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct bots, in list order."""
    return [(bots[i], bots[j]) for i in range(len(bots)) for j in range(i + 1, len(bots))]


def derive_seed(*parts: object) -> int:
    """A 256-bit seed from the parts (stable across runs and machines)."""
    text = ":".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest(), "big")


def schedule(bots: Sequence[str], games: int, seed: int) -> list[GameJob]:
    """The games of a tournament: ``games`` per pairing, seats swapped on each deal.

    Games ``2k`` and ``2k + 1`` of a pairing share a deal with the bots' seats
    exchanged (an odd count leaves the last deal unplayed in the swap).

    Raises:
        ValueError: fewer than two distinct bots, or ``games < 1``.
    """
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise ValueError("a tournament needs at least two different bots")
    if games < 1:
        raise ValueError("games must be at least 1")
    jobs = []
    for a, b in pairings(bots):
        for g in range(games):
            deal = g // 2
            deal_seed = derive_seed(seed, a, b, deal)
            s0, s1 = derive_seed(deal_seed, "s", 0) % 2**63, derive_seed(deal_seed, "s", 1) % 2**63
            seats = (a, b) if g % 2 == 0 else (b, a)
            strategy_seeds = (s0, s1) if g % 2 == 0 else (s1, s0)
            jobs.append(GameJob(len(jobs), seats, deal_seed, strategy_seeds))
    return jobs


def play_game(game: str, job: GameJob, options: dict[str, Any] | None = None,
              time_budget: float = DEFAULT_TIME_BUDGET, clock: str = "wall") -> GameRecord:
    """Play one game to its end through the engine.

    Each bot gets only its seat's view and legal intents. When both seats may
    move (War), seat 0's choice is applied first. ``clock`` names the clock of
    :data:`CLOCKS` that the time budget and the recorded thinking time are read on.

    Raises:
        RuntimeError: a strategy returned an intent that is not legal, or the
            game did not end within :data:`MAX_MOVES` intents.
        engine.core.RuleError: unknown game or bad options.
        KeyError: an unknown clock.
    """
    from engine.registry import get_game

    now = CLOCKS[clock]
    engine_game = get_game(game)
    state = engine_game.new_state(job.seed, engine_game.normalize_options(options or {}))
    players = [timed(get_strategy(name, seed=s), time_budget, clock=now)
               for name, s in zip(job.bots, job.strategy_seeds, strict=True)]
    think = [0.0, 0.0]
    decisions = [0, 0]

    def choose(state: State, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        started = now()
        intent = players[seat].choose(game, seat, state.view(seat), legal)
        think[seat] += now() - started
        decisions[seat] += 1
        if intent not in legal:
            raise RuntimeError(f"game {job.index}: {job.bots[seat]} chose an illegal "
                               f"intent {intent!r}")
        return intent

    try:
        moves = play_out(state, choose, max_moves=MAX_MOVES)
    except RuntimeError as exc:
        if str(exc).startswith(f"game {job.index}:"):
            raise
        raise RuntimeError(f"game {job.index}: {exc}") from None
    outcome = state.outcome()
    assert outcome is not None
    return GameRecord(job.index, job.bots, job.seed, outcome.winner, outcome.reason, moves,
                      (think[0], think[1]), (decisions[0], decisions[1]))


def _play_chunk(args: tuple[str, list[GameJob], dict[str, Any], float, str]
                ) -> list[GameRecord]:
    game, jobs, options, time_budget, clock = args
    return [play_game(game, job, options, time_budget, clock) for job in jobs]


def play_all(game: str, jobs: Sequence[GameJob], options: dict[str, Any] | None = None,
             time_budget: float = DEFAULT_TIME_BUDGET, workers: int = 1,
             on_done: Callable[[int], None] | None = None,
             clock: str = "wall") -> list[GameRecord]:
    """Play every job; ``workers > 1`` spreads them over that many processes.

    Args:
        on_done: called with the number of games just finished (progress).
        clock: the clock of the time budget (:data:`CLOCKS`).

    Returns:
        The records in job order.
    """
    opts = dict(options or {})
    records: list[GameRecord] = []
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            records.append(play_game(game, job, opts, time_budget, clock))
            if on_done:
                on_done(1)
        return records
    chunk = max(1, min(8, len(jobs) // (workers * 8) or 1))
    chunks = [list(jobs[i:i + chunk]) for i in range(0, len(jobs), chunk)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for done in _as_completed(pool, [(game, c, opts, time_budget, clock) for c in chunks]):
            records.extend(done)
            if on_done:
                on_done(len(done))
    records.sort(key=lambda r: r.index)
    return records


def _as_completed(pool: ProcessPoolExecutor,
                  tasks: list[tuple[str, list[GameJob], dict[str, Any], float, str]]
                  ) -> Iterator[list[GameRecord]]:
    from concurrent.futures import as_completed

    futures = [pool.submit(_play_chunk, t) for t in tasks]
    for fut in as_completed(futures):
        yield fut.result()


def run_tournament(game: str, bots: Sequence[str], games: int, seed: int = 0,
                   options: dict[str, Any] | None = None,
                   time_budget: float = DEFAULT_TIME_BUDGET, workers: int = 1,
                   on_done: Callable[[int], None] | None = None,
                   clock: str = "wall") -> TournamentResult:
    """Schedule and play a whole tournament (``clock``: see :data:`CLOCKS`).

    Raises:
        ValueError: bad bot list or game count (see :func:`schedule`), an
            unknown strategy name or an unknown clock.
    """
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r}; known: {', '.join(CLOCKS)}")
    for name in bots:
        get_strategy(name)  # raises ValueError for unknown names
    jobs = schedule(bots, games, seed)
    started = time.perf_counter()
    records = play_all(game, jobs, options, time_budget, workers, on_done, clock)
    return TournamentResult(game, list(bots), games, seed, time_budget, dict(options or {}),
                            records, time.perf_counter() - started, workers, clock)


# ---------------------------------------------------------------- output

def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{100 * x:5.1f}%"


#: How a table names each clock of :data:`CLOCKS`.
_CLOCK_WORDS = {"wall": "wall time", "cpu": "CPU time"}


def format_table(result: TournamentResult) -> str:
    """The human-readable table: one row per pairing, then the Elo list."""
    rows = tabulate(result.records, result.bots)
    lines = [
        f"{result.game}: {len(result.records)} games, {result.games_per_pairing} per pairing "
        f"(seats swapped), seed {result.seed}, search budget {result.time_budget:g} s/move "
        f"({_CLOCK_WORDS[result.clock]}), "
        f"{result.seconds:.1f} s on {result.jobs} process(es)",
        "",
        f"{'A':>8} {'B':>8} {'games':>6} {'A wins':>7} {'B wins':>7} {'draws':>6} "
        f"{'A win rate':>10} {'95% CI (Wilson)':>17} {'Elo A-B':>8} {'moves':>7}",
    ]
    for row in rows:
        ci = row.interval()
        ci_text = "-" if ci is None else f"{100 * ci[0]:5.1f}-{100 * ci[1]:5.1f}%"
        elo = row.elo_diff()
        lines.append(
            f"{row.a:>8} {row.b:>8} {row.games:>6} {row.a_wins:>7} {row.b_wins:>7} "
            f"{row.draws:>6} {_pct(row.win_rate()):>10} {ci_text:>17} "
            f"{'-' if elo is None else f'{elo:+.0f}':>8} "
            f"{row.moves / row.games if row.games else 0:7.1f}")
    lines += ["", "win rate: A's share of the decided games (draws left out); "
                  "Elo A-B from A's score (draws count half)", ""]
    ratings = elo_ratings(result.records, result.bots)
    lines.append("Elo (all games, mean 0):")
    for name, rating in sorted(ratings.items(), key=lambda kv: -kv[1]):
        moves = [r.decisions[s] for r in result.records for s in (0, 1) if r.bots[s] == name]
        secs = [r.think[s] for r in result.records for s in (0, 1) if r.bots[s] == name]
        per_move = sum(secs) / sum(moves) if sum(moves) else 0.0
        lines.append(f"  {name:>8} {rating:+7.0f}   ({1000 * per_move:.2f} ms per decision, "
                     f"{_CLOCK_WORDS[result.clock]})")
    return "\n".join(lines)


def to_json(result: TournamentResult) -> dict[str, Any]:
    """The tournament as plain data: settings, table, Elo and every game."""
    table = []
    for row in tabulate(result.records, result.bots):
        ci = row.interval()
        table.append({
            "a": row.a, "b": row.b, "games": row.games, "a_wins": row.a_wins,
            "b_wins": row.b_wins, "draws": row.draws, "a_win_rate": row.win_rate(),
            "ci95": None if ci is None else list(ci), "elo_diff": row.elo_diff(),
            "mean_moves": row.moves / row.games if row.games else None,
        })
    return {
        "game": result.game, "bots": result.bots, "games_per_pairing": result.games_per_pairing,
        "seed": result.seed, "time_budget": result.time_budget, "clock": result.clock,
        "options": result.options,
        "seconds": result.seconds, "processes": result.jobs,
        "table": table, "elo": elo_ratings(result.records, result.bots),
        "games": [{**asdict(r), "seed": format(r.seed, "064x")} for r in result.records],
    }


# ---------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``tournament`` subcommand's arguments to ``parser``."""
    parser.add_argument("game", choices=["datastructures", "war"], help="which game to play")
    parser.add_argument("--bots", default="random,greedy,search",
                        help=f"comma-separated strategies (known: {', '.join(strategy_names())}; "
                             "default: %(default)s)")
    parser.add_argument("--games", type=int, default=20,
                        help="games per pairing, seats swapped on each deal (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default %(default)s)")
    parser.add_argument("--time-budget", type=float, default=0.05, metavar="SECONDS",
                        help="search time per move in seconds (default %(default)s)")
    parser.add_argument("--clock", choices=list(CLOCKS), default="wall",
                        help="the clock the time budget is read on: wall (elapsed) time, or the "
                             "CPU time of the process playing the game, which other load on the "
                             "machine does not cut (default %(default)s)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a game option, e.g. --option cap=200 (repeatable)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="FILE.svg",
                        help="also draw the table as an SVG chart (win share with 95%% interval)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``["cap=200", "delay=0.5", "return=played", "x=true"]`` -> a dict (bools,
    ints and finite decimals converted; anything else stays text).

    Raises:
        ValueError: an item without ``=``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"option {pair!r} is not NAME=VALUE")
        out[name] = _option_value(value)
    return out


def _option_value(text: str) -> Any:
    """An option's value as typed: true/false, an int, a finite decimal, else the text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def run(args: argparse.Namespace) -> int:
    """Run the tournament described by parsed ``args``; returns the exit status."""
    from engine.core import RuleError
    from engine.registry import get_game

    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    try:
        options = parse_options(args.option)
        get_game(args.game).normalize_options(options)
        for name in bots:
            timed(get_strategy(name), args.time_budget, clock=time.perf_counter)
        jobs = schedule(bots, args.games, args.seed)
    except (ValueError, RuleError) as exc:
        print(f"cardsim tournament: {exc}", file=sys.stderr)
        return 2
    with Progress(len(jobs), label=f"tournament {args.game}",
                  enabled=False if args.no_progress else None) as progress:
        result = run_tournament(args.game, bots, args.games, args.seed, options,
                                args.time_budget, max(1, args.jobs), progress.advance,
                                args.clock)
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        print(format_table(result))
    if args.plot:
        from client.sim.plot import tournament_svg, write

        title = (f"{args.game}: {args.games} games per pairing, "
                 f"{args.time_budget:g} s per move")
        try:
            write(args.plot, tournament_svg(to_json(result)["table"], title=title))
        except OSError as exc:
            print(f"cardsim tournament: cannot write {args.plot}: {exc}", file=sys.stderr)
            return 1
    return 0
