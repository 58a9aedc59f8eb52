"""The ``search`` strategy for Data Structures: determinized Monte Carlo search.

Each decision is a flat Monte Carlo search over the seat's legal intents:

1. Equivalent intents are merged (two hand cards of the same value put on the
   same array, or stacked, are the same move for the rules that matter).
2. Repeatedly, until the decision's budget is spent: sample one *world*, a full
   state consistent with the seat's view (``engine.datastructures.determinize``
   deals the unseen cards -- the opponent's hand, the deck order, the face-down
   recycle pile -- uniformly at random), then for *every* candidate intent
   clone the world, apply the intent and play both seats on with the greedy
   heuristic (:mod:`engine.bots.greedy`) until the end of the opponent's
   next turn, and score the position reached. All candidates meet the same
   world and the same future shuffles (common random numbers), so their
   difference is measured with much less noise than their values.
3. The candidate with the best mean score is played. (Option
   ``confidence``, off by default: replace the greedy heuristic's own choice
   only with a candidate that beats it, world by world, by more than that many
   standard errors. Measured, it did not make the search stronger.)
4. Scoring: a finished game scores +-1000; otherwise the score is
   ``progress(me) - progress(opponent)``: cards on arrays (a closed array
   counts its 12 plus a bonus of 2) plus 0.8 times the *potential*, the cards
   the seat could place at the start of its next phase 1 (its hand chained
   onto its arrays; the seat to move next also takes the queue from its head
   and the stacks from their tops) and a little for cards one or two values
   short. The race is
   36 cards; this counts how far each seat is.

The search only reads the view (it never sees the real hidden cards) and uses
the engine offline to simulate, as docs/architecture.md allows. It is
CPU-bound: a caller in an event loop should run ``choose`` in a worker thread.
War: it flips.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from engine.bots.base import DEFAULT_BUDGET, Intent, View, flip_intent, require_legal
from engine.bots.budget import Budget
from engine.bots.greedy import (
    CLOSED,
    EMPTY,
    Board,
    board_from_view,
    choose_on_board,
)
from engine.datastructures import determinize
from engine.datastructures.deck import N_VALUES, VALUE
from engine.datastructures.intents import HAND, DSIntent, Play, from_wire
from engine.playout import play_out

#: Cards in a complete array.
ARRAY_LEN = N_VALUES
#: Extra worth of a closed array beyond its 12 cards (closing is what wins).
CLOSE_BONUS = 2.0
#: Weight of the next-turn potential against cards already placed.
POTENTIAL = 0.8

#: Score of a won (lost: minus) game inside a rollout.
WIN = 1000.0
#: Fraction of a time budget used for thinking; the rest is headroom for the caller.
BUDGET_SHARE = 0.9


class SearchStrategy:
    """Determinized flat Monte Carlo search with greedy rollouts (module docstring).

    Each decision samples worlds until its :class:`~engine.bots.budget.Budget` is
    spent: ``max_iterations`` counts worlds; a deadline is kept to
    :data:`BUDGET_SHARE` of the time left when the decision starts (one rollout of
    overshoot at most, typically under a millisecond).

    Args:
        seed: seeds sampling and tie-breaks (None: from the OS).
        horizon: turn ends a rollout plays through before it is scored
            (2: the rest of this turn and the opponent's next one).
        confidence: when > 0, the search leaves the greedy choice only for a
            candidate whose mean advantage over it, world by world, exceeds
            this many standard errors (default 0: always the best mean).
    """

    name = "search"

    def __init__(self, seed: int | None = None, horizon: int = 2,
                 confidence: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.horizon = horizon
        self.confidence = confidence
        #: Statistics of the last decision: worlds sampled, whether it left the
        #: heuristic's choice, and the mean advantage (and its standard error) of
        #: the best candidate over that choice.
        self.last_worlds = 0
        self.last_deviated = False
        self.last_gain = 0.0
        self.last_stderr = 0.0

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget = DEFAULT_BUDGET) -> Intent:
        """The candidate with the best mean rollout score, within ``budget``.

        Raises:
            ValueError: ``legal`` is empty, or the view is not ``seat``'s view.
        """
        left = budget.remaining()
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        board = board_from_view(view, seat)
        moves = [from_wire(intent) for intent in legal]
        candidates = _distinct(board, moves)
        self.last_worlds = 0
        if len(candidates) == 1:
            return legal[moves.index(candidates[0])]
        reserve = None if left is None else left * (1 - BUDGET_SHARE)
        greedy = (_index_of(board, candidates, choose_on_board(board, moves, self.rng))
                  if self.confidence > 0 else 0)
        totals = [0.0] * len(candidates)
        squares = [0.0] * len(candidates)  # sums of squared advantages over greedy's choice
        worlds = 0
        round_cost = 0.0
        while True:
            before = None if reserve is None else budget.remaining()
            if worlds and (worlds == budget.max_iterations or (
                    before is not None and before - round_cost <= reserve)):  # type: ignore[operator]
                break  # the deadline kept is the share's, before the budget's own
            world = determinize(view, seat, self.rng)
            scores = []
            for move in candidates:
                if worlds and reserve is not None and budget.remaining() <= reserve:  # type: ignore[operator]
                    break  # out of time mid-round: drop the round (compare like with like)
                state = world.clone()
                state.apply_move(seat, move)
                scores.append(self._rollout(state, seat))
            if len(scores) < len(candidates):
                break
            base = scores[greedy]
            for k, score in enumerate(scores):
                totals[k] += score
                squares[k] += (score - base) ** 2
            worlds += 1
            if before is not None:
                round_cost = before - budget.remaining()  # type: ignore[operator]
        self.last_worlds = worlds
        best = max(totals)
        tied = [k for k, t in enumerate(totals) if t >= best - 1e-9]
        pick = tied[0] if len(tied) == 1 else tied[self.rng.randrange(len(tied))]
        self.last_gain, self.last_stderr = 0.0, 0.0
        if pick != greedy and self.confidence > 0 and worlds > 1:
            gain = (totals[pick] - totals[greedy]) / worlds
            var = max(0.0, squares[pick] / worlds - gain * gain) / (worlds - 1)
            self.last_gain, self.last_stderr = gain, math.sqrt(var)
            if gain <= self.confidence * self.last_stderr:
                pick = greedy  # not clearly better than the heuristic: keep its choice
        self.last_deviated = pick != greedy
        return legal[moves.index(candidates[pick])]

    def _rollout(self, state: Any, seat: int) -> float:
        """Play greedy for both seats through ``horizon`` turn ends; score for ``seat``."""
        stop = state.turn + self.horizon - (1 if state.current != seat else 0)
        rng = self.rng

        def greedy(state: Any, mover: int, legal: list[DSIntent]) -> DSIntent:
            if len(legal) == 1:
                return legal[0]
            return choose_on_board(board_from_state(state, mover), legal, rng)

        play_out(state, greedy, until=lambda s: s.turn >= stop, values=True)
        return evaluate(state, seat)


def _key(board: Board, move: DSIntent) -> Any:
    """Equal for intent values with the same effect (same card value, same target)."""
    if isinstance(move, Play) and move.src == HAND:
        return ("play", HAND, board.hand[move.index], move.array)  # type: ignore[index]
    kind = move.TYPE
    if kind in ("stack", "enqueue"):
        return (kind, board.hand[move.index])  # type: ignore[union-attr]
    if kind == "mulligan":
        return (kind, board.hand[move.keep])  # type: ignore[union-attr]
    return move


def _distinct(board: Board, legal: Sequence[DSIntent]) -> list[DSIntent]:
    """``legal`` with equivalent intents merged (same card value, same effect)."""
    seen: set[Any] = set()
    out = []
    for move in legal:
        key = _key(board, move)
        if key not in seen:
            seen.add(key)
            out.append(move)
    return out


def _index_of(board: Board, candidates: list[DSIntent], move: DSIntent) -> int:
    """The index of the candidate equivalent to ``move``."""
    key = _key(board, move)
    for k, candidate in enumerate(candidates):
        if _key(board, candidate) == key:
            return k
    raise AssertionError(f"{move!r} is not among the candidates")


def board_from_state(state: Any, seat: int) -> Board:
    """A greedy :class:`Board` for ``seat`` straight from an engine state (rollouts).

    Only used on sampled worlds, never on a live match's real state.
    """
    value = VALUE
    need: list[list[int]] = []
    length: list[list[int]] = []
    for s in (0, 1):
        arrs = state.arrays[s]
        closed = state.closed[s]
        need.append([CLOSED if closed[a] else (value[arrs[a][-1]] + 1) % N_VALUES if arrs[a]
                     else EMPTY for a in (0, 1, 2)])
        length.append([len(arrs[0]), len(arrs[1]), len(arrs[2])])
    s0, s1 = state.stacks
    tops = [value[s0[-1]] if s0 else None, value[s1[-1]] if s1 else None]
    return Board(seat, [value[c] for c in state.hands[seat]], [value[c] for c in state.queue],
                 tops, need, length)


def _placed(state: Any, seat: int) -> int:
    """Cards ``seat`` has on arrays, closed ones counted as their 12."""
    closed = state.closed[seat]
    return sum(ARRAY_LEN if closed[a] else len(arr) for a, arr in enumerate(state.arrays[seat]))


def _potential(state: Any, seat: int, public: bool) -> float:
    """What ``seat`` could place at the start of its next phase 1, chained greedily
    onto its open arrays: its hand and, when it moves next, the public cards in
    the order they come free (the queue from its head, each stack from its top);
    one hand card per empty array; plus a little for hand cards one or two
    values short of an array."""
    placed, near = reach(state, seat, public)
    return placed + near


def reach(state: Any, seat: int, public: bool) -> tuple[int, float]:
    """The two parts of :func:`_potential`: the cards ``seat`` could place at the
    start of its next phase 1, and the credit for hand cards one or two values
    short of an open array."""
    value = VALUE
    arrs = state.arrays[seat]
    closed = state.closed[seat]
    counts = [0] * N_VALUES
    n_hand = 0
    for c in state.hands[seat]:
        v = value[c]
        if v >= 0:
            counts[v] += 1
            n_hand += 1
    needs = []
    empty = 0
    for a in (0, 1, 2):
        if closed[a]:
            continue
        if arrs[a]:
            needs.append((value[arrs[a][-1]] + 1) % N_VALUES)
        else:
            empty += 1
    queue = state.queue if public else []
    s0, s1 = state.stacks if public else ([], [])
    qi, i0, i1 = 0, len(s0) - 1, len(s1) - 1
    placed = used = 0
    progress = True
    while progress and needs:
        progress = False
        for k, n in enumerate(needs):
            if qi < len(queue) and value[queue[qi]] == n:
                qi += 1
            elif i0 >= 0 and value[s0[i0]] == n:
                i0 -= 1
            elif i1 >= 0 and value[s1[i1]] == n:
                i1 -= 1
            elif counts[n]:
                counts[n] -= 1
                used += 1
            else:
                continue
            needs[k] = (n + 1) % N_VALUES
            placed += 1
            progress = True
    if empty and n_hand > used:
        placed += min(empty, n_hand - used)
    near = 0.0
    for n in needs:
        near += 0.35 * counts[(n + 1) % N_VALUES] + 0.15 * counts[(n + 2) % N_VALUES]
    return placed, near


def evaluate(state: Any, seat: int) -> float:
    """Score of a (sampled) state for ``seat``: +-:data:`WIN` when over, else the
    difference of both seats' progress: cards on arrays (a closed array counts
    12, plus a bonus) and what each could place next (:func:`_potential`; the
    seat to move next also counts the public cards it can reach)."""
    result = state.result
    if result is not None:
        if result.winner is None:
            return 0.0
        return WIN if result.winner == seat else -WIN
    other = 1 - seat
    mover = state.current
    score = (_placed(state, seat) + CLOSE_BONUS * sum(state.closed[seat])
             - _placed(state, other) - CLOSE_BONUS * sum(state.closed[other]))
    score += POTENTIAL * (_potential(state, seat, mover == seat)
                          - _potential(state, other, mover == other))
    return score
