"""Fit the weights of ``engine.bots.ismcts_eval`` to the outcomes of greedy games.

Plays ``--games`` Data Structures games of ``greedy`` against itself, records
:func:`engine.bots.ismcts_eval.features` for seat 0 at every turn end (drawn
games left out), labels each position with whether seat 0 won, and fits a
logistic regression without intercept (the features are differences between
the seats) by Newton's method. Prints the weights, the log-loss of the fit
and, as the baseline of the same run, the log-loss of ``search.evaluate``
scaled by its best single factor -- both on positions held out from the fit.

    python scripts/fit_evaluation.py --games 3000 --seed 1
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from typing import Any

from engine.bots.ismcts_eval import FEATURES, features
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
        steps: int = 12) -> list[float]:
    """Maximum-likelihood logistic weights (a small ridge keeps Newton stable)."""
    n = len(rows[0][0])
    w = [0.0] * n
    for _ in range(steps):
        grad = [-ridge * x for x in w]
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
    args = parser.parse_args(argv)
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
