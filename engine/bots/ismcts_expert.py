"""A move policy for the ``ismcts`` strategy fitted to a stronger search's choices.

Expert iteration after Anthony, Tian and Barber, "Thinking Fast and Slow with
Deep Learning and Tree Search" (2017): ``scripts/fit_expert.py`` plays games,
asks ``ismcts`` with many more worlds than it gets in play (the *expert*)
which move it would make at sampled decisions, and fits a softmax over a
linear score of each move's :func:`features` to those choices (maximum
likelihood with a ridge). :data:`WEIGHTS` is that fit (ridge 1, on 1016
decisions of 30 ``ismcts``-``greedy`` games labelled at 500 worlds; held-out
figures and the games played with it in ``engine.bots.ismcts``, round 8: it
predicts the expert better than greedy does, and plays worse);
:func:`expert_priors` turns it into priors in [0, 1] (the move it likes best
1) that the tree can use in place of greedy's
(:func:`engine.bots.ismcts_policy.greedy_priors`) at the seat's own nodes:
for progressive bias and for the order in which moves are first tried;
:func:`expert_choice` is the policy's favourite, for the seat's own moves in
the playouts.

The features are greedy's own terms (:mod:`engine.bots.greedy`) taken apart,
plus greedy's verdict itself (its prior and whether the move is its choice),
so that a weight vector of zeros but for ``greedy_best`` is greedy: the fit
only has to learn where the stronger search departs from it. Every feature
compares moves of one decision (a softmax ignores what all of them share).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.bots.greedy import (
    EMPTY,
    ENQUEUE_BELOW,
    Board,
    available_values,
    distance,
    help_value,
    keep_value,
    play_value,
    run_length,
)
from engine.bots.ismcts_policy import greedy_priors
from engine.bots.ismcts_tree import distinct_moves
from engine.bots.search import board_from_state
from engine.datastructures.deck import ACE, N_VALUES
from engine.datastructures.intents import HAND, QUEUE, DSIntent
from engine.datastructures.rules import ARRAY_LEN

#: The names of :func:`features`' entries, in order.
FEATURES = (
    "greedy_best", "greedy_prior",
    # phase 1 plays
    "play_start", "play_length", "play_closes", "play_queue", "play_own_stack",
    "play_opp_stack", "play_last_card", "play_denial", "play_run", "play_fits_other",
    "play_wanted",
    # phase 1 otherwise
    "end_phase", "mulligan_keep", "mulligan_help",
    # phase 2 stack card
    "stack_keep", "stack_help_next", "stack_help_near", "stack_ace", "stack_pairs",
    # phase 2 enqueue or end the turn
    "end_turn", "enqueue_keep", "enqueue_help_next", "enqueue_help_near", "enqueue_ace",
    "enqueue_cycle", "enqueue_pairs",
)
N_FEATURES = len(FEATURES)
#: Fitted weights, one per feature (``scripts/fit_expert.py``, ``--ridge 1``); None: not fitted.
WEIGHTS: tuple[float, ...] | None = (
    -0.1666, 0.0915, -2.0168, -0.8082, 0.0454, 0.2691, 0.0434, -0.1933, -0.0498, 0.0726,
    1.9098, -0.2130, 0.7670, -2.2291, 1.5528, -2.1806, 0.1982, -1.4253, -0.6943, -0.4765,
    0.0761, -1.8869, -1.9718, 0.3454, 0.2045, 0.5869, 0.6355, 1.1053)


def expert_weights() -> tuple[float, ...] | None:
    """:data:`WEIGHTS` as it is now (None: not fitted)."""
    return WEIGHTS


def features(board: Board, moves: Mapping[int, DSIntent],
             greedy: Mapping[int, float] | None = None) -> dict[int, list[float]]:
    """The features (:data:`FEATURES`) of every move of one decision, by key.

    Args:
        board: the mover's board, as greedy sees it (its own hand).
        moves: key -> intent, every intent legal for the mover.
        greedy: :func:`engine.bots.ismcts_policy.greedy_priors` of the same
            moves when the caller has them (else computed here).

    Raises:
        IndexError: a move names a hand card or stack the board does not have.
    """
    if greedy is None:
        greedy = greedy_priors(board, moves)
    top = max(greedy.values())
    hand = board.hand
    me = board.seat
    counts: dict[int, int] = {}
    for v in hand:
        counts[v] = counts.get(v, 0) + 1
    available: list[int] | None = None
    out: dict[int, list[float]] = {}
    for key, move in moves.items():
        f = [0.0] * N_FEATURES
        f[0] = 1.0 if greedy[key] >= top - 1e-9 else 0.0
        f[1] = greedy[key]
        kind = move.TYPE
        if kind == "play":
            if available is None:
                available = available_values(board)
            value = play_value(board, move)  # type: ignore[arg-type]
            a = move.array  # type: ignore[union-attr]
            need = board.need[me][a]
            length = board.length[me][a]
            src = move.src  # type: ignore[union-attr]
            pool = list(available)
            pool.remove(value)
            others = [distance(value, n) for i, n in enumerate(board.need[me])
                      if i != a and n >= 0]
            if need == EMPTY:
                f[2] = 1.0
            else:
                f[3] = length / ARRAY_LEN
                f[4] = 1.0 if length == ARRAY_LEN - 1 else 0.0
            f[5] = 1.0 if src == QUEUE else 0.0
            own_stack = src not in (HAND, QUEUE) and move.stack == me  # type: ignore[union-attr]
            f[6] = 1.0 if own_stack else 0.0
            f[7] = 1.0 if src not in (HAND, QUEUE) and not own_stack else 0.0
            f[8] = 1.0 if src == HAND and len(hand) == 1 else 0.0
            f[9] = 1.0 if src != HAND and help_value(board, value) >= 1.0 else 0.0
            f[10] = run_length(value, pool) / N_VALUES
            f[11] = 1.0 if 0 in others else 0.0
            f[12] = max((1.0 / (1 + d) for d in others), default=0.0)
        elif kind == "end_phase":
            f[13] = 1.0
        elif kind == "mulligan":
            value = hand[move.keep]  # type: ignore[union-attr]
            f[14] = keep_value(board, value)
            f[15] = help_value(board, value)
        elif kind == "stack":
            value = hand[move.index]  # type: ignore[union-attr]
            h = help_value(board, value)
            f[16] = keep_value(board, value)
            f[17] = 1.0 if h >= 1.0 else 0.0
            f[18] = 1.0 if 0.0 < h < 1.0 else 0.0
            f[19] = 1.0 if value == ACE else 0.0
            f[20] = 1.0 if counts[value] > 1 else 0.0
        elif kind == "end_turn":
            f[21] = 1.0
        else:  # enqueue
            value = hand[move.index]  # type: ignore[union-attr]
            h = help_value(board, value)
            k = keep_value(board, value)
            f[22] = k
            f[23] = 1.0 if h >= 1.0 else 0.0
            f[24] = 1.0 if 0.0 < h < 1.0 else 0.0
            f[25] = 1.0 if value == ACE else 0.0
            f[26] = 1.0 if k < ENQUEUE_BELOW and h < 1.0 else 0.0
            f[27] = 1.0 if counts[value] > 1 else 0.0
        out[key] = f
    return out


def probabilities(board: Board, moves: Mapping[int, DSIntent],
                  weights: tuple[float, ...]) -> dict[int, float]:
    """The softmax policy's chance of each move (by key) under ``weights``.

    Raises:
        ValueError: ``weights`` is not one weight per feature.
    """
    if len(weights) != N_FEATURES:
        raise ValueError(f"{N_FEATURES} weights needed, got {len(weights)}")
    scores = {k: sum(w * x for w, x in zip(weights, f, strict=True))
              for k, f in features(board, moves).items()}
    hi = max(scores.values())
    exp = {k: math.exp(s - hi) for k, s in scores.items()}
    total = sum(exp.values())
    return {k: e / total for k, e in exp.items()}


def expert_priors(board: Board, moves: Mapping[int, DSIntent],
                  weights: tuple[float, ...] | None = None) -> dict[int, float]:
    """Priors in [0, 1] for each move (by key): the fitted policy's chance of it
    over that of the move it likes best (so the favourite has 1, as with greedy's).

    Args:
        weights: the policy's weights (None: :data:`WEIGHTS`).

    Raises:
        ValueError: no weights given and none fitted, or not one per feature.
    """
    if weights is None:
        if WEIGHTS is None:
            raise ValueError("no fitted expert weights (scripts/fit_expert.py)")
        weights = WEIGHTS
    p = probabilities(board, moves, weights)
    best = max(p.values())
    return {k: x / best for k, x in p.items()}


def expert_choice(state: Any, mover: int, legal: Sequence[DSIntent], rng: random.Random,
                  weights: tuple[float, ...] | None = None) -> DSIntent:
    """The fitted policy's favourite among the intent values ``legal`` for ``mover``
    on the sampled world ``state`` (ties broken by ``rng``); a playout policy.

    Raises:
        ValueError: ``legal`` is empty, or no weights (see :func:`expert_priors`).
    """
    if not legal:
        raise ValueError("no legal move")
    board = board_from_state(state, mover)
    moves = distinct_moves(legal, board.hand)
    if len(moves) == 1:
        return legal[0]
    priors = expert_priors(board, moves, weights)
    best = [k for k, p in priors.items() if p >= 1.0 - 1e-9]
    return moves[best[0] if len(best) == 1 else best[rng.randrange(len(best))]]
