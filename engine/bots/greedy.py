"""The ``greedy`` strategy for Data Structures: a one-step heuristic on the view.

It reads only what a seat may see (its hand, the queue, both stacks, all
arrays) and scores each legal intent; the highest score wins, ties broken by
the strategy's generator. War: it flips.

The heuristic, in the order of a turn (values: ``2``..``K`` are 0..11, cyclic;
an ace has none):

Phase 1 (play)
    Every play is progress, so greedy plays while it can and ends the phase
    only when nothing fits. Among the plays it prefers, in this order of weight:

    1. a play that *closes* an array (its 12th card);
    2. a card on the *longest* array (closer to closing);
    3. a card from a *public* source before the same value from the hand: the
       queue head (it would be discarded in phase 2 anyway), the opponent's
       stack top, then its own stack top; a bonus when the opponent needs that
       value next (*denial*: they cannot take it on their turn);
    4. the last hand card (an empty hand draws 5 new cards, D5);
    5. starting an empty array (hand only) with a card no other array wants
       soon, that begins the longest run of values it can already see.

    With no play at all it takes a *mulligan* (D6) when the rules allow one,
    keeping the card it can best spare on its stack (the kept card is the one
    it must stack in phase 2).

Phase 2 (discard)
    *Stack*: the hand card with the lowest cost, where cost = how much it wants
    the card (``keep``) + 1.5 x how much the opponent wants it on top of a
    stack (``help``). ``keep(v) = max over own open arrays of 1 / (1 + d)``
    with ``d`` the number of cards the array still needs before ``v`` fits
    (0.5 for an empty array, 0 for an ace); ``help(v)`` = 1 if an opponent
    array needs ``v`` next, 0.3 if it needs ``v - 1``, else 0.
    *Enqueue* (cycling cards: the hand refills from the deck in phase 3): each
    card it barely wants (``keep < 0.4``, e.g. aces and cards 2+ values away
    from every array) and that the opponent does not need next, lowest cost
    first; then it ends the turn.

The same scoring runs on a :class:`Board` built from an engine state, so the
search strategy uses it as a fast rollout policy.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from engine.bots.base import DEFAULT_BUDGET, Intent, View, flip_intent, require_legal
from engine.bots.budget import Budget
from engine.datastructures.deck import ACE, N_VALUES, value_of
from engine.datastructures.intents import HAND, QUEUE, STACK, DSIntent, Play, from_wire

T = TypeVar("T")

#: ``need`` markers for an empty array (hand only) and a closed one.
EMPTY = -1
CLOSED = -2
#: Below this ``keep`` a card is worth cycling through the queue.
ENQUEUE_BELOW = 0.4


@dataclass(slots=True)
class Board:
    """What the heuristic needs from one seat's point of view, as values.

    ``need[s][a]`` is the value seat ``s``'s array ``a`` needs next, or
    :data:`EMPTY` / :data:`CLOSED`; ``length[s][a]`` its number of cards.
    ``stack_top[s]`` is the top value of seat ``s``'s stack (None: empty).
    """

    seat: int
    hand: list[int]
    queue: list[int]
    stack_top: list[int | None]
    need: list[list[int]]
    length: list[list[int]]


def board_from_view(view: View, seat: int) -> Board:
    """Read a Data Structures view (engine.datastructures.view) into a :class:`Board`.

    Raises:
        KeyError, ValueError: the view is not a Data Structures seat view.
    """
    need: list[list[int]] = []
    length: list[list[int]] = []
    tops: list[int | None] = []
    for player in view["players"]:
        n, ln = [], []
        for arr in player["arrays"]:
            cards = arr["cards"]
            ln.append(len(cards))
            if arr["closed"]:
                n.append(CLOSED)
            elif not cards:
                n.append(EMPTY)
            else:
                n.append((value_of(cards[-1]) + 1) % N_VALUES)
        need.append(n)
        length.append(ln)
        stack = player["stack"]
        tops.append(value_of(stack[-1]) if stack else None)
    hand = [value_of(c) for c in (view.get("hand") or [])]
    queue = [value_of(c) for c in view["queue"]]
    return Board(seat, hand, queue, tops, need, length)


def distance(value: int, need: int) -> int:
    """Cards an array needing ``need`` still takes before ``value`` fits (0: fits now)."""
    return (value - need) % N_VALUES


def keep_value(board: Board, value: int) -> float:
    """How much this seat wants a card of ``value`` for its own arrays (0..1)."""
    if value == ACE:
        return 0.0
    best = 0.0
    for need in board.need[board.seat]:
        if need == CLOSED:
            continue
        if need == EMPTY:
            best = max(best, 0.5)
        else:
            best = max(best, 1.0 / (1 + distance(value, need)))
    return best


def help_value(board: Board, value: int) -> float:
    """How much the opponent would gain from a card of ``value`` on a public pile."""
    if value == ACE:
        return 0.0
    best = 0.0
    for need in board.need[1 - board.seat]:
        if need < 0:
            continue
        d = distance(value, need)
        if d == 0:
            return 1.0
        if d == 1:
            best = 0.3
    return best


def available_values(board: Board) -> list[int]:
    """Values this seat can see and use: its hand, the queue head, both stack tops
    (in that order, a value once for each card showing it)."""
    vals = list(board.hand)
    if board.queue:
        vals.append(board.queue[0])
    vals.extend(v for v in board.stack_top if v is not None)
    return vals


def run_length(start: int, pool: list[int]) -> int:
    """How many successors of ``start`` follow in a row among ``pool``'s values
    (cyclic, each value of ``pool`` used once, at most ``N_VALUES - 1``)."""
    counts: dict[int, int] = {}
    for v in pool:
        counts[v] = counts.get(v, 0) + 1
    n, v = 0, start
    while n < N_VALUES - 1:
        v = (v + 1) % N_VALUES
        if not counts.get(v):
            break
        counts[v] -= 1
        n += 1
    return n


def play_value(board: Board, move: Play) -> int:
    """The value of the card a ``play`` intent moves (from the hand, the queue head
    or a stack top).

    Raises:
        IndexError, AssertionError: the intent's source holds no such card on ``board``.
    """
    src = move.src
    if src == HAND:
        return board.hand[move.index]  # type: ignore[index]
    if src == QUEUE:
        return board.queue[0]
    top = board.stack_top[move.stack]  # type: ignore[index]
    assert top is not None
    return top


def score_play(board: Board, move: Play, available: list[int] | None = None) -> float:
    """The phase-1 score of a ``play`` intent (higher is better; see the module doc).

    ``available`` is :func:`available_values` of ``board`` when the caller has it already.
    """
    me = board.seat
    a = move.array
    value = play_value(board, move)
    need = board.need[me][a]
    length = board.length[me][a]
    src = move.src
    if need == EMPTY:
        # Start an array: with a card no other array wants, beginning a long run.
        pool = list(available_values(board) if available is None else available)
        pool.remove(value)
        others = [distance(value, n) for n in board.need[me] if n >= 0]
        wanted = max((1.0 / (1 + d) for d in others), default=0.0)
        score = 50.0 + 5.0 * run_length(value, pool) - 20.0 * wanted
    else:
        score = 100.0 + 10.0 * length
        if length == N_VALUES - 1:
            score += 1000.0
    if src == QUEUE:
        score += 6.0
    elif src == STACK:
        score += 8.0 if move.stack != me else 4.0
    elif len(board.hand) == 1:
        score += 15.0
    if src != HAND and help_value(board, value) >= 1.0:
        score += 20.0
    return score


def score_stack(board: Board, value: int) -> float:
    """Cost of putting a card of ``value`` on this seat's stack (lower is better)."""
    return keep_value(board, value) + 1.5 * help_value(board, value)


def choose_on_board(board: Board, legal: Sequence[DSIntent], rng: random.Random) -> DSIntent:
    """The greedy choice among the intent values ``legal`` for ``board``. Pure; ``rng``
    breaks ties.

    Raises:
        ValueError: ``legal`` is empty.
    """
    require_legal(legal)
    kind = legal[0].TYPE
    hand = board.hand
    if kind in ("play", "mulligan", "end_phase"):
        plays = [m for m in legal if m.TYPE == "play"]
        if plays:
            available = available_values(board)
            return best_scored(plays, [score_play(board, m, available)  # type: ignore[arg-type]
                                 for m in plays], rng)
        mulligans = [m for m in legal if m.TYPE == "mulligan"]
        if mulligans:
            # The kept card is the one to stack: keep the cheapest to give up.
            return best_scored(mulligans, [-score_stack(board, hand[m.keep])  # type: ignore[union-attr]
                                     for m in mulligans], rng)
        return legal[0] if kind == "end_phase" else _first(legal, "end_phase")
    if kind == "stack":
        return best_scored(list(legal), [-score_stack(board, hand[m.index])  # type: ignore[union-attr]
                                   for m in legal], rng)
    candidates = [m for m in legal if m.TYPE == "enqueue"
                  and keep_value(board, hand[m.index]) < ENQUEUE_BELOW  # type: ignore[union-attr]
                  and help_value(board, hand[m.index]) < 1.0]  # type: ignore[union-attr]
    if candidates:
        return best_scored(candidates, [-score_stack(board, hand[m.index])  # type: ignore[union-attr]
                                  for m in candidates], rng)
    return _first(legal, "end_turn")


def choose_wire(board: Board, legal: Sequence[Intent], rng: random.Random) -> Intent:
    """:func:`choose_on_board` for wire intents: returns the very element of ``legal``.

    Raises:
        ValueError: ``legal`` is empty.
        IllegalIntent: an element of ``legal`` is not a Data Structures intent.
    """
    require_legal(legal)
    moves = [from_wire(intent) for intent in legal]
    return legal[moves.index(choose_on_board(board, moves, rng))]


def _first(legal: Sequence[DSIntent], kind: str) -> DSIntent:
    for move in legal:
        if move.TYPE == kind:
            return move
    return legal[-1]


def best_scored(options: Sequence[T], scores: Sequence[float], rng: random.Random) -> T:
    """The option of the highest score (``scores[i]`` is ``options[i]``'s); ties,
    within 1e-9, broken by ``rng`` as greedy breaks them (one draw only for a tie)."""
    top = max(scores)
    best = [o for o, s in zip(options, scores, strict=True) if s >= top - 1e-9]
    return best[0] if len(best) == 1 else best[rng.randrange(len(best))]


class GreedyStrategy:
    """The documented one-step heuristic (module docstring); War: flip.

    Args:
        seed: seeds the tie-breaking generator (None: from the OS).
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget = DEFAULT_BUDGET) -> Intent:
        """The best-scoring element of ``legal`` (one step: the budget is not needed).

        Raises:
            ValueError: ``legal`` is empty, or the view is not a seat's view.
        """
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        return choose_wire(board_from_view(view, seat), legal, self.rng)
