"""The ``ismcts`` strategy's leaf evaluation: a learned estimate of the chance to win.

``search.evaluate`` (kept as it is: it is ``search``'s own score) adds cards on
arrays and 0.8 times the cards each seat could place next, with hand-set
weights. This module scores the same kind of position by a logistic model of
the final outcome: :func:`features` describes a position from one seat's side
(every feature is that seat's figure minus the opponent's, so the score of one
seat is minus the other's), and :data:`WEIGHTS` were fitted by
``scripts/fit_evaluation.py`` (maximum likelihood, Newton's method) on the
positions at every turn end of games that ``greedy`` played against itself --
the policy that plays out the lines of the search -- labelled with who won.

:func:`value` is then the log-odds that ``seat`` wins and :func:`win_chance`
the chance itself (as ``2 p - 1``); the search sets each move's score against
the others' in the same world on one of those scales (``ismcts``'s
``evaluation``: ``learned`` and ``winprob``, the default). On the chance, a move
counts for what it changes in the odds of winning, little where the game is
won or lost whatever it does; the log-odds alone did no better than
``search.evaluate`` (``engine.bots.ismcts`` records the runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from engine.bots.search import ARRAY_LEN, reach

#: Log-odds of a finished game (won: plus, lost: minus).
WIN_LOGIT = 40.0
#: The names of :func:`features`' entries, in order.
FEATURES = ("placed", "closed", "reach", "near", "hand", "squares", "shortest",
            "placed_late", "reach_late", "to_move")
#: Fitted weights, one per feature (``scripts/fit_evaluation.py``; see its output).
WEIGHTS = (0.0082, 0.1354, 0.0231, 0.0240, 0.1083, -0.0367, 0.2370, 0.2978, 0.3471, 0.0589)


def stage(state: Any) -> float:
    """The share of the 72 cards both seats have placed on arrays (a closed array
    counted as its 12): 0 at the deal, 1 when all six arrays are closed."""
    placed = 0
    for s in (0, 1):
        closed = state.closed[s]
        placed += sum(ARRAY_LEN if closed[a] else len(arr)
                      for a, arr in enumerate(state.arrays[s]))
    return placed / (2 * 3 * ARRAY_LEN)


def features(state: Any, seat: int) -> list[float]:
    """``seat``'s features of an unfinished ``state`` (:data:`FEATURES`), each
    ``seat``'s figure minus the opponent's:

    - ``placed``: cards on arrays, a closed array counted as its 12;
    - ``closed``: closed arrays;
    - ``reach``, ``near``: the two parts of :func:`engine.bots.search.reach`
      (cards placeable at the start of the next phase 1; credit for hand cards
      one or two values short), public cards counted for the seat to move;
    - ``hand``: cards in hand;
    - ``squares``: the sum of the squared array lengths over 12 (cards on few
      arrays are nearer to closing them than the same cards spread);
    - ``shortest``: cards on the shortest array (all three must close);
    - ``placed_late``, ``reach_late``: ``placed`` and ``reach`` times the share
      of the 72 cards both seats have placed (a lead weighs more near the end);
    - ``to_move``: 1 when ``seat`` moves next, else -1.
    """
    return features_and_stage(state, seat)[0]


def features_and_stage(state: Any, seat: int) -> tuple[list[float], float]:
    """:func:`features` of ``state`` for ``seat`` and its :func:`stage`, computed once."""
    other = 1 - seat
    mover = state.current
    sides = []
    for s in (seat, other):
        closed = state.closed[s]
        lengths = [ARRAY_LEN if closed[a] else len(arr) for a, arr in enumerate(state.arrays[s])]
        placed = sum(lengths)
        ready, near = reach(state, s, mover == s)
        sides.append((placed, sum(closed), ready, near, len(state.hands[s]),
                      sum(n * n for n in lengths) / ARRAY_LEN, min(lengths)))
    me, you = sides
    diff = [a - b for a, b in zip(me, you, strict=True)]
    share = (me[0] + you[0]) / (2 * 3 * ARRAY_LEN)
    diff.append(diff[0] * share)
    diff.append(diff[2] * share)
    diff.append(1.0 if mover == seat else -1.0)
    return diff, share


def staged(f: Sequence[float], share: float, degree: int) -> list[float]:
    """``f`` followed by ``f`` times each power of the stage ``share`` from 1 to
    ``degree``: the features of a model whose weights are polynomials in the stage."""
    out = list(f)
    power = 1.0
    for _ in range(degree):
        power *= share
        out.extend(x * power for x in f)
    return out


def degree_of(weights: Sequence[float]) -> int:
    """The stage degree of ``weights`` (:func:`value`): 0 for one block of
    :data:`FEATURES`' length, ``d`` for ``d + 1`` blocks.

    Raises:
        ValueError: ``weights`` is not a whole, non-zero number of blocks.
    """
    blocks, rest = divmod(len(weights), len(FEATURES))
    if rest or not blocks:
        raise ValueError(f"{len(weights)} weights are not a whole number of blocks of "
                         f"{len(FEATURES)}")
    return blocks - 1


def value(state: Any, seat: int, weights: Sequence[float] = WEIGHTS) -> float:
    """The log-odds that ``seat`` wins ``state``: +-:data:`WIN_LOGIT` when the game
    is over (0 for a draw), else the weighted sum of :func:`features`.

    ``weights`` holds one weight per feature or, for a model by stage, ``d + 1``
    blocks of them: then a feature's weight is a polynomial of degree ``d`` in the
    :func:`stage`, block ``k`` its coefficients of ``stage ** k`` (:func:`staged`).
    A caller passing other weights checks them once with :func:`degree_of`; here
    a length that is no whole number of blocks fails on ``zip``.

    Raises:
        ValueError: ``weights`` is not as above.
    """
    result = state.result
    if result is not None:
        if result.winner is None:
            return 0.0
        return WIN_LOGIT if result.winner == seat else -WIN_LOGIT
    f, share = features_and_stage(state, seat)
    n = len(f)
    if len(weights) != n:
        f = staged(f, share, len(weights) // n - 1)
    return sum(w * x for w, x in zip(weights, f, strict=True))


def win_chance(state: Any, seat: int, weights: Sequence[float] = WEIGHTS) -> float:
    """:func:`value` as a chance to win, rescaled to [-1, 1] (``2 p - 1``): moves
    compared on it count a log-odds step for what it changes in the chance to win,
    little in a game already won or lost."""
    z = value(state, seat, weights)
    return 2.0 / (1.0 + math.exp(-z)) - 1.0
