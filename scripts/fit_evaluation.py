"""Fit the weights of ``engine.bots.ismcts_eval`` to the outcomes of games.

Plays ``--games`` Data Structures games of ``greedy`` against itself, records
:func:`engine.bots.ismcts_eval.features` for seat 0 at every turn end (drawn
games left out), labels each position with whether seat 0 won, and fits a
logistic regression without intercept (the features are differences between
the seats) by Newton's method. Prints the weights, the log-loss of the fit
and, as the baseline of the same run, the log-loss of ``search.evaluate``
scaled by its best single factor -- both on positions held out from the fit.

    python scripts/fit_evaluation.py --games 3000 --seed 1

With ``--matches``, the positions come instead from games of registered
strategies against each other (``ismcts-greedy,ismcts-search,ismcts-ismcts``:
seats swapped every game), each bot given ``--iterations`` per decision (a
cheap, deterministic budget); ``--save`` writes them (one JSON line a
position: match, game, features, label, stage) and ``--load`` fits saved files
instead of playing; ``--fit-on`` fits on some of the matches only (all are
scored), and ``--stage-degree D`` fits weights that are polynomials of degree
``D`` in the stage of the game (``engine.bots.ismcts_eval.value``'s blocks by
stage; the ridge pulls toward today's weights at every stage). The fit's held-out log-loss is then printed for each
match, beside that of the weights in ``engine.bots.ismcts_eval`` today, so an
evaluation fitted to the games a bot really plays can be set against one fitted
to greedy's own games on the same positions. Games are split into fitted and
held-out whole (by game number), never position by position.

    python scripts/fit_evaluation.py --matches ismcts-greedy,ismcts-search \
        --games 400 --iterations 12 --save /tmp/positions.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from engine.bots import Budget, get_strategy
from engine.bots.ismcts_eval import FEATURES, WEIGHTS, degree_of, features, stage, staged
from engine.bots.ismcts_policy import greedy_playout
from engine.bots.search import evaluate
from engine.playout import play_out
from engine.registry import get_game

Rows = list[tuple[list[float], int]]


def positions(games: int, seed: int) -> tuple[Rows, Rows]:
    """(features of seat 0, 1 if seat 0 won) at every turn end of ``games`` games,
    and the same positions with ``[search.evaluate]`` as their one feature."""
    game = get_game("datastructures")
    rng = random.Random(seed)
    rows: Rows = []
    cards: Rows = []
    for g in range(games):
        state = game.new_state(seed * 100003 + g, {})
        seen: list[tuple[list[float], float]] = []
        turn = [state.turn]

        def choose(state: Any, mover: int, legal: list[Any],
                   seen: list[tuple[list[float], float]] = seen, turn: list[int] = turn) -> Any:
            if state.turn != turn[0]:
                turn[0] = state.turn
                seen.append((features(state, 0), evaluate(state, 0)))
            return legal[0] if len(legal) == 1 else greedy_playout(state, mover, legal, rng)

        play_out(state, choose, values=True, max_moves=5000)
        winner = state.result.winner
        if winner is not None:
            rows.extend((f, int(winner == 0)) for f, _ in seen)
            cards.extend(([x], int(winner == 0)) for _, x in seen)
    return rows, cards


#: One recorded position of a match game: (match, game number, features, seat 0 won).
Position = tuple[str, int, list[float], int]


def match_positions(match: str, games: int, seed: int, iterations: int,
                    stages: list[float] | None = None) -> Iterator[Position]:
    """Seat 0's features at every turn end of ``games`` games of ``match``
    (``"a-b"``: two strategy names; ``a`` is seat 0 in even games, seat 1 in odd
    ones), labelled 1 if seat 0 won; drawn games yield nothing. With ``stages``,
    the :func:`engine.bots.ismcts_eval.stage` of each position yielded is appended
    to it as the position is.

    Raises:
        ValueError: ``match`` is not two registered strategy names joined by ``-``.
    """
    names = match.split("-")
    if len(names) != 2:
        raise ValueError(f"a match is two strategy names joined by '-', got {match!r}")
    game = get_game("datastructures")
    for g in range(games):
        seats = names if g % 2 == 0 else names[::-1]
        deal = seed * 100003 + g
        bots = [get_strategy(name, deal * 2 + i) for i, name in enumerate(seats)]
        state = game.new_state(deal, {})
        seen: list[tuple[list[float], float]] = []
        turn = [state.turn]

        def choose(state: Any, mover: int, legal: list[Any],
                   seen: list[tuple[list[float], float]] = seen, turn: list[int] = turn,
                   bots: list[Any] = bots) -> Any:
            if state.turn != turn[0]:
                turn[0] = state.turn
                seen.append((features(state, 0), stage(state)))
            if len(legal) == 1:
                return legal[0]
            return bots[mover].choose("datastructures", mover, state.view(mover), legal,
                                      Budget.iterations(iterations))

        play_out(state, choose, max_moves=5000)
        winner = state.result.winner
        if winner is not None:
            for f, x in seen:
                if stages is not None:
                    stages.append(x)
                yield match, g, f, int(winner == 0)


def load_positions(paths: Sequence[str], degree: int = 0) -> list[Position]:
    """The positions saved by ``--save`` in ``paths``; with ``degree`` above 0, each
    one's features by stage (:func:`engine.bots.ismcts_eval.staged`, from the
    ``stage`` saved with it).

    Raises:
        OSError, ValueError: a file cannot be read or is not such JSON lines.
        KeyError: ``degree`` above 0 and a position saved without its stage.
    """
    out: list[Position] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                x = row["features"]
                if degree:
                    x = staged(x, row["stage"], degree)
                out.append((row["match"], row["game"], x, row["label"]))
    return out


def fit_matches(data: list[Position], holdout: float, ridge: float = 1e-3,
                fit_on: Sequence[str] | None = None) -> list[float]:
    """Fit on the games of ``data`` outside the held-out share (the last games of
    each match by number), with a ``ridge`` toward today's weights (by stage: today's
    weights at every stage), print the held-out log-loss by match (and of all the
    held-out positions together) for the fit, the weights of today and a coin, and
    return the fitted weights. ``fit_on``: fit on the games of these matches only
    (all matches are still scored).

    Raises:
        ValueError: no position left to fit.
    """
    last: dict[str, int] = {}
    for match, g, _, _ in data:
        last[match] = max(last.get(match, 0), g + 1)
    cut = {m: n - max(1, int(n * holdout)) for m, n in last.items()}
    train = [(f, y) for m, g, f, y in data
             if g < cut[m] and (fit_on is None or m in fit_on)]
    if not train:
        raise ValueError("no positions to fit")
    n = len(train[0][0])
    today = list(WEIGHTS) + [0.0] * (n - len(WEIGHTS))
    degree_of(today)
    w = fit(train, ridge, toward=today)
    print(f"{len(train)} positions fitted from "
          f"{', '.join(sorted(fit_on or last))}, ridge {ridge:g}, {n} weights")
    names = [f"{name}*s^{k}" if k else name
             for k in range(n // len(FEATURES)) for name in FEATURES]
    for name, x in zip(names, w, strict=True):
        print(f"  {name:>16} {x:+.4f}")
    print("WEIGHTS = (" + ", ".join(f"{x:.4f}" for x in w) + ")")
    print(f"{'held out':>16} {'positions':>9} {'fitted':>7} {'today':>7} {'coin':>7}")
    everything: list[tuple[list[float], int]] = []
    for match in sorted(last):
        test = [(f, y) for m, g, f, y in data if m == match and g >= cut[m]]
        everything.extend(test)
        if test:
            print(f"{match:>16} {len(test):9d} {log_loss(test, w):7.4f} "
                  f"{log_loss(test, today):7.4f} {math.log(2):7.4f}")
    if len(last) > 1 and everything:
        print(f"{'all':>16} {len(everything):9d} {log_loss(everything, w):7.4f} "
              f"{log_loss(everything, today):7.4f} {math.log(2):7.4f}")
    return w


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``x`` with ``a x = b`` (Gaussian elimination with partial pivoting)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def fit(rows: list[tuple[list[float], int]], ridge: float = 1e-3,
        steps: int = 12, toward: Sequence[float] | None = None,
        tol: float = 1e-7) -> list[float]:
    """Maximum-likelihood logistic weights with a ridge penalty ``ridge |w - toward|^2 / 2``
    (``toward`` None: zero; a small ridge keeps Newton stable, a larger one toward
    earlier weights keeps a fit on few games from chasing rare features), from
    ``toward``: at most ``steps`` Newton steps, stopping after one that moves no
    weight by more than ``tol``."""
    n = len(rows[0][0])
    w0 = [0.0] * n if toward is None else list(toward)
    w = list(w0)
    for _ in range(steps):
        grad = [-ridge * (x - x0) for x, x0 in zip(w, w0, strict=True)]
        hess = [[ridge if i == j else 0.0 for j in range(n)] for i in range(n)]
        for f, y in rows:
            z = sum(a * b for a, b in zip(w, f, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
            g = y - p
            h = p * (1.0 - p)
            for i in range(n):
                grad[i] += g * f[i]
                hi = h * f[i]
                row = hess[i]
                for j in range(i, n):
                    row[j] += hi * f[j]
        for i in range(n):
            for j in range(i):
                hess[i][j] = hess[j][i]
        step = _solve(hess, grad)
        w = [a + b for a, b in zip(w, step, strict=True)]
        if max(abs(x) for x in step) <= tol:
            break
    return w


def log_loss(rows: list[tuple[list[float], int]], w: list[float]) -> float:
    """Mean negative log-likelihood of ``rows`` under weights ``w``."""
    total = 0.0
    for f, y in rows:
        z = max(-40.0, min(40.0, sum(a * b for a, b in zip(w, f, strict=True))))
        p = 1.0 / (1.0 + math.exp(-z))
        total -= math.log(max(1e-12, p if y else 1.0 - p))
    return total / len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--holdout", type=float, default=0.2,
                        help="share of the games held out to score the fit")
    parser.add_argument("--matches", default=None,
                        help="comma-separated strategy pairs, e.g. ismcts-greedy,ismcts-search "
                             "(default: greedy against itself, with the search.evaluate baseline)")
    parser.add_argument("--iterations", type=int, default=12,
                        help="iterations per decision for every bot of --matches")
    parser.add_argument("--save", default=None, help="write the --matches positions here")
    parser.add_argument("--load", nargs="*", default=None,
                        help="fit the positions saved in these files instead of playing")
    parser.add_argument("--ridge", type=float, default=1e-3,
                        help="with --matches/--load: the ridge toward today's weights")
    parser.add_argument("--stage-degree", type=int, default=0,
                        help="with --matches/--load: fit weights that are polynomials of "
                             "this degree in the stage of the game (0: one weight a feature)")
    parser.add_argument("--fit-on", default=None,
                        help="with --matches/--load: comma-separated matches to fit on "
                             "(default: all; every match is scored)")
    args = parser.parse_args(argv)
    if args.stage_degree < 0:
        parser.error("--stage-degree must be >= 0")
    fit_on = args.fit_on.split(",") if args.fit_on else None
    if args.load:
        fit_matches(load_positions(args.load, args.stage_degree), args.holdout, args.ridge,
                    fit_on)
        return 0
    if args.matches:
        data: list[Position] = []
        out = open(args.save, "w", encoding="utf-8") if args.save else None  # noqa: SIM115
        try:
            stages: list[float] = []
            for match in args.matches.split(","):
                for pos in match_positions(match, args.games, args.seed, args.iterations,
                                           stages):
                    data.append(pos)
                    if out is not None:
                        m, g, f, y = pos
                        out.write(json.dumps({"match": m, "game": g, "features": f,
                                              "label": y, "stage": stages[-1]}) + "\n")
                        out.flush()
        finally:
            if out is not None:
                out.close()
        if args.stage_degree:
            data = [(m, g, staged(f, x, args.stage_degree), y)
                    for (m, g, f, y), x in zip(data, stages, strict=True)]
        fit_matches(data, args.holdout, args.ridge, fit_on)
        return 0
    held = max(1, int(args.games * args.holdout))
    train, train_cards = positions(args.games - held, args.seed)
    test, test_cards = positions(held, args.seed + 7919)
    w = fit(train)
    scale = fit(train_cards)
    print(f"{len(train)} positions fitted, {len(test)} held out")
    for name, x in zip(FEATURES, w, strict=True):
        print(f"  {name:>12} {x:+.4f}")
    print("WEIGHTS = (" + ", ".join(f"{x:.4f}" for x in w) + ")")
    print(f"held-out log-loss: fitted {log_loss(test, w):.4f}, search.evaluate x "
          f"{scale[0]:.3f}: {log_loss(test_cards, scale):.4f}, coin: {math.log(2):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
