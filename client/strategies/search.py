"""The ``search`` strategy for Data Structures: determinized Monte Carlo search.

Each decision is a flat Monte Carlo search over the seat's legal intents:

1. Equivalent intents are merged (two hand cards of the same value put on the
   same array, or stacked, are the same move for the rules that matter).
2. Repeatedly, until the time budget is spent: sample one *world*, a full
   state consistent with the seat's view (``engine.datastructures.determinize``
   deals the unseen cards -- the opponent's hand, the deck order, the face-down
   recycle pile -- uniformly at random), then for *every* candidate intent
   clone the world, apply the intent and play both seats on with the greedy
   heuristic (:mod:`client.strategies.greedy`) until the end of the opponent's
   next turn, and score the position reached. All candidates meet the same
   world and the same future shuffles (common random numbers), so their
   difference is measured with much less noise than their values.
3. The candidate with the best mean score is played. A finished game scores
   +-1000; otherwise the score is ``worth(me) - worth(opponent)`` where worth
   counts closed arrays (22 each), open array lengths (growing faster near 12,
   the cards that close) and how well the hand fits the seat's arrays.

The search only reads the view (it never sees the real hidden cards) and uses
the engine offline to simulate, as docs/architecture.md allows. It is
CPU-bound: a caller in an event loop should run ``choose`` in a worker thread.
War: it flips.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from client.strategies.base import Intent, View, flip_intent, make_rng, require_legal
from client.strategies.greedy import (
    ACE,
    CLOSED,
    EMPTY,
    N_VALUES,
    Board,
    board_from_view,
    choose_on_board,
    keep_value,
)

#: Score of a won (lost: minus) game inside a rollout.
WIN = 1000.0
#: Fraction of the budget used for thinking; the rest is headroom for the caller.
BUDGET_SHARE = 0.9


class SearchStrategy:
    """Determinized flat Monte Carlo search with greedy rollouts (module docstring).

    Args:
        seed: seeds sampling and tie-breaks (None: from the OS).
        time_budget: seconds per decision (the search stops in time; one
            rollout of overshoot at most, typically under a millisecond).
        horizon: turn ends a rollout plays through before it is scored
            (2: the rest of this turn and the opponent's next one).
        max_worlds: optional cap on sampled worlds per decision (for tests and
            reproducible runs); None: only the time budget limits it.
    """

    name = "search"

    def __init__(self, seed: int | None = None, time_budget: float = 0.1, horizon: int = 2,
                 max_worlds: int | None = None) -> None:
        if not time_budget > 0:
            raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
        self.rng = make_rng(seed)
        self.time_budget = float(time_budget)
        self.horizon = horizon
        self.max_worlds = max_worlds
        self.last_worlds = 0

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent]) -> Intent:
        """The candidate with the best mean rollout score, within the time budget.

        Raises:
            ValueError: ``legal`` is empty, or the view is not ``seat``'s view.
        """
        started = time.perf_counter()
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        from engine.datastructures import determinize

        board = board_from_view(view, seat)
        candidates = _distinct(board, legal)
        self.last_worlds = 0
        if len(candidates) == 1:
            return candidates[0]
        deadline = started + self.time_budget * BUDGET_SHARE
        totals = [0.0] * len(candidates)
        worlds = 0
        round_cost = 0.0
        while True:
            now = time.perf_counter()
            if worlds and now + round_cost > deadline:
                break
            if self.max_worlds is not None and worlds >= self.max_worlds:
                break
            world = determinize(view, seat, self.rng)
            scores = []
            for intent in candidates:
                if worlds and time.perf_counter() > deadline:
                    break  # out of time mid-round: drop the round (compare like with like)
                state = world.clone()
                state.apply(seat, intent)
                scores.append(self._rollout(state, seat))
            if len(scores) < len(candidates):
                break
            for k, score in enumerate(scores):
                totals[k] += score
            worlds += 1
            round_cost = time.perf_counter() - now
        self.last_worlds = worlds
        best = max(totals)
        tied = [c for c, t in zip(candidates, totals, strict=True) if t >= best - 1e-9]
        return tied[0] if len(tied) == 1 else tied[self.rng.randrange(len(tied))]

    def _rollout(self, state: Any, seat: int) -> float:
        """Play greedy for both seats through ``horizon`` turn ends; score for ``seat``."""
        stop = state.turn + self.horizon - (1 if state.current != seat else 0)
        rng = self.rng
        while state.result is None and state.turn < stop:
            mover = state.current
            legal = state.legal(mover)
            state.apply(mover, choose_on_board(board_from_state(state, mover), legal, rng))
        return evaluate(state, seat)


def _distinct(board: Board, legal: Sequence[Intent]) -> list[Intent]:
    """``legal`` with equivalent intents merged (same card value, same effect)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for intent in legal:
        kind = intent["type"]
        if kind == "play" and intent["src"] == "hand":
            key: tuple[Any, ...] = (kind, "hand", board.hand[intent["index"]], intent["array"])
        elif kind in ("stack", "enqueue"):
            key = (kind, board.hand[intent["index"]])
        elif kind == "mulligan":
            key = (kind, board.hand[intent["keep"]])
        else:
            key = tuple(sorted(intent.items()))
        if key not in seen:
            seen.add(key)
            out.append(intent)
    return out


def board_from_state(state: Any, seat: int) -> Board:
    """A greedy :class:`Board` for ``seat`` straight from an engine state (rollouts).

    Only used on sampled worlds, never on a live match's real state.
    """
    from engine.datastructures.deck import VALUE

    need: list[list[int]] = []
    length: list[list[int]] = []
    for s in (0, 1):
        n, ln = [], []
        for a, arr in enumerate(state.arrays[s]):
            ln.append(len(arr))
            if state.closed[s][a]:
                n.append(CLOSED)
            elif not arr:
                n.append(EMPTY)
            else:
                n.append((VALUE[arr[-1]] + 1) % N_VALUES)
        need.append(n)
        length.append(ln)
    tops = [VALUE[st[-1]] if st else None for st in state.stacks]
    return Board(seat, [VALUE[c] for c in state.hands[seat]], [VALUE[c] for c in state.queue],
                 tops, need, length)


def _worth(state: Any, seat: int) -> float:
    total = 0.0
    for a, arr in enumerate(state.arrays[seat]):
        if state.closed[seat][a]:
            total += 22.0
        else:
            n = len(arr)
            total += n + 0.05 * n * n
    return total


def evaluate(state: Any, seat: int) -> float:
    """Score of a (sampled) state for ``seat``: +-:data:`WIN` when over, else the
    difference of both seats' worth (arrays, plus how well each hand fits)."""
    result = state.result
    if result is not None:
        if result.winner is None:
            return 0.0
        return WIN if result.winner == seat else -WIN
    score = _worth(state, seat) - _worth(state, 1 - seat)
    for s, sign in ((seat, 1.0), (1 - seat, -1.0)):
        board = board_from_state(state, s)
        score += sign * 0.5 * sum(keep_value(board, v) for v in board.hand if v != ACE)
    return score
