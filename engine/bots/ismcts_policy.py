"""Heuristic knowledge for the ``ismcts`` strategy: move priors and playout policies.

Both come from the ``greedy`` heuristic (:mod:`engine.bots.greedy`), read on a
sampled world through :func:`engine.bots.search.board_from_state`:

- :func:`greedy_priors` turns greedy's scores of the legal moves into priors in
  [0, 1] (1 for the move greedy likes best), for progressive bias in the tree
  and for the order in which a node's moves are first tried;
- :data:`PLAYOUTS` are the rollout policies, by name: ``greedy`` (greedy for
  both seats), ``random`` (uniform over the legal intents, the paper's default)
  and ``mixed`` (greedy, but one decision in five uniform);
- :func:`greedy_play_out` plays the ``greedy`` playout to a horizon without the
  general loop: the same choices, but each phase 2 decided from one board.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.bots.greedy import (
    ENQUEUE_BELOW,
    Board,
    best_scored,
    choose_on_board,
    help_value,
    keep_value,
    score_play,
    score_stack,
)
from engine.bots.search import board_from_state
from engine.datastructures.intents import END_TURN, DSIntent, enqueues, stack_cards
from engine.datastructures.rules import PLAY, QUEUE_SIZE

#: ``policy(state, mover, legal, rng) -> move`` (an element of ``legal``, intent values).
Playout = Callable[[Any, int, Sequence[DSIntent], random.Random], DSIntent]
#: The share of uniform decisions in the ``mixed`` playout.
MIXED_RANDOM_SHARE = 0.2


def _spread(scores: Mapping[int, float], low: float = 0.0) -> dict[int, float]:
    """Scores rescaled to [low, 1] (best 1); all equal: all 1."""
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo < 1e-9:
        return dict.fromkeys(scores, 1.0)
    return {k: low + (1.0 - low) * (s - lo) / (hi - lo) for k, s in scores.items()}


def greedy_priors(board: Board, moves: Mapping[int, DSIntent]) -> dict[int, float]:
    """A prior in [0, 1] for each move (by key), from greedy's scores on ``board``.

    Phase 1: plays by :func:`engine.bots.greedy.score_play` (ending the phase
    while a play exists scores 0, as greedy never does it); mulligans by how
    cheaply the kept card can be stacked. Phase 2: stack cards by their cost
    (:func:`engine.bots.greedy.score_stack`, lowest best); enqueues greedy would
    make score 0.5..1, others 0, and ending the turn 1 when greedy would end it,
    else 0.25.

    Args:
        board: the mover's board (its own hand), as greedy sees it.
        moves: key -> intent, every intent legal for the mover.
    """
    scores: dict[int, float] = {}
    rest: dict[int, float] = {}
    hand = board.hand
    for key, move in moves.items():
        kind = move.TYPE
        if kind == "play":
            scores[key] = score_play(board, move)  # type: ignore[arg-type]
        elif kind == "mulligan":
            scores[key] = -score_stack(board, hand[move.keep])  # type: ignore[union-attr]
        elif kind == "stack":
            scores[key] = -score_stack(board, hand[move.index])  # type: ignore[union-attr]
        elif kind == "enqueue":
            value = hand[move.index]  # type: ignore[union-attr]
            if keep_value(board, value) < ENQUEUE_BELOW and help_value(board, value) < 1.0:
                scores[key] = -score_stack(board, value)
            else:
                rest[key] = 0.0
        else:  # end_phase, end_turn
            rest[key] = 0.0
    if not scores:  # nothing greedy would do but end the phase or the turn
        return {k: 0.0 if m.TYPE == "enqueue" else 1.0 for k, m in moves.items()}
    enqueueing = any(m.TYPE == "enqueue" for m in moves.values())
    priors = _spread(scores, 0.5 if enqueueing else 0.0)
    for key in rest:
        priors[key] = 0.25 if moves[key].TYPE == "end_turn" else 0.0
    return priors


def greedy_playout(state: Any, mover: int, legal: Sequence[DSIntent],
                   rng: random.Random) -> DSIntent:
    """Greedy's choice for ``mover`` on the sampled world ``state``."""
    return choose_on_board(board_from_state(state, mover), legal, rng)


def random_playout(state: Any, mover: int, legal: Sequence[DSIntent],
                   rng: random.Random) -> DSIntent:
    """A uniformly random element of ``legal``."""
    return legal[rng.randrange(len(legal))]


def mixed_playout(state: Any, mover: int, legal: Sequence[DSIntent],
                  rng: random.Random) -> DSIntent:
    """Greedy, except that :data:`MIXED_RANDOM_SHARE` of the decisions are uniform."""
    if rng.random() < MIXED_RANDOM_SHARE:
        return legal[rng.randrange(len(legal))]
    return choose_on_board(board_from_state(state, mover), legal, rng)


def greedy_play_out(state: Any, stop: int, rng: random.Random) -> None:
    """Play ``state`` on in place, both seats by greedy's choices, until the game
    ends or turn ``stop`` begins: what :func:`engine.playout.play_out` with
    :func:`greedy_playout` does (``until`` the turn), in fewer steps.

    A phase 1 move is greedy's choice on a fresh board. A phase 2 is decided from
    one board: its costs (:func:`engine.bots.greedy.score_stack`) and which cards
    greedy would cycle depend only on the arrays, which phase 2 does not touch.
    So the stack card is the cheapest hand card, then the candidates for the
    queue go cheapest first while it has room, then the turn ends; ties are
    broken by ``rng`` among the cheapest, as greedy breaks them.

    Raises:
        engine.core.RuleError: never for a consistent state (every move is legal).
    """
    apply = state.apply_move
    while state.result is None and state.turn < stop:
        mover = state.current
        if state.phase == PLAY:
            legal = state.legal_moves(mover)
            apply(mover, legal[0] if len(legal) == 1
                  else choose_on_board(board_from_state(state, mover), legal, rng))
            continue
        board = board_from_state(state, mover)
        hand = board.hand
        cost = [score_stack(board, v) for v in hand]
        if not state.stacked and hand:
            i = 0 if len(hand) == 1 else best_scored(range(len(hand)), [-c for c in cost], rng)
            apply(mover, stack_cards(len(hand))[i])
            del hand[i], cost[i]
        cycle = [keep_value(board, v) < ENQUEUE_BELOW and help_value(board, v) < 1.0
                 for v in hand]
        while hand and len(state.queue) < QUEUE_SIZE:
            candidates = [i for i, c in enumerate(cycle) if c]
            if not candidates:
                break
            i = best_scored(candidates, [-cost[c] for c in candidates], rng)
            apply(mover, enqueues(len(hand))[i])
            del hand[i], cost[i], cycle[i]
        apply(mover, END_TURN)


PLAYOUTS: dict[str, Playout] = {
    "greedy": greedy_playout,
    "random": random_playout,
    "mixed": mixed_playout,
}
