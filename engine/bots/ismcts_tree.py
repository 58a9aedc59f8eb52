"""The tree of the ``ismcts`` strategy: nodes over the observer's information sets.

Single-observer information-set MCTS (Cowling, Powley and Whitehouse, 2012)
keeps one tree for the seat that searches (the *observer*). A node stands for
the observer's information set after a sequence of moves from the root; an
edge is a *move* as the observer sees it, identified by :func:`move_key`, not
by the intent's wire form. Data Structures intents name hand positions, and
the opponent's hand (and the observer's own hand after a draw) differs from one
sampled world to the next, so a key names the card's *value* instead: "a 7 from
the hand onto array 2" is the same edge in every world where that seat holds
a 7. Suits never matter (D1), so two equal values are one move.

Because each iteration samples a new world, a node's children are not all
legal in every world. Selection therefore only looks at the children whose
move is legal in the current world, and scores them with UCB1 over
*availability* counts rather than the parent's visits:

    mean + exploration * sqrt(ln(avails) / visits) + bias * prior / (visits + 1)

where ``avails`` counts the iterations in which the child was legal while its
parent was being selected from (the paper's fix for subset-armed bandits), and
the last term is progressive bias: ``prior`` in [0, 1] is a heuristic's opinion
of the move, whose weight fades as real visits come in. Rewards are in [0, 1]
from the point of view of the seat that made the move into the node (``seat``),
so both seats' decisions live in the same tree and each maximises its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from engine.datastructures.intents import HAND, QUEUE, DSIntent

# Key bases by intent kind (see move_key); values are 0..11, an ace is -1.
_HAND, _QUEUE, _STACK_PLAY, _MULLIGAN, _STACK, _ENQUEUE = 100, 200, 300, 400, 500, 600
END_PHASE_KEY = 700
END_TURN_KEY = 800


def move_key(move: DSIntent, hand: Sequence[int]) -> int:
    """A small int naming ``move`` as a move the observer can recognise in any
    sampled world: the same kind, target and card *value* give the same key.

    Args:
        move: a Data Structures intent value of the seat to move.
        hand: the array values (0..11, -1 for an ace) of that seat's hand, in order.

    Raises:
        IndexError: a hand index outside ``hand``.
    """
    kind = move.TYPE
    if kind == "play":
        src = move.src  # type: ignore[union-attr]
        if src == HAND:
            return _HAND + 3 * hand[move.index] + move.array  # type: ignore[union-attr]
        if src == QUEUE:
            return _QUEUE + move.array  # type: ignore[union-attr]
        return _STACK_PLAY + 3 * move.stack + move.array  # type: ignore[union-attr]
    if kind == "stack":
        return _STACK + 1 + hand[move.index]  # type: ignore[union-attr]
    if kind == "enqueue":
        return _ENQUEUE + 1 + hand[move.index]  # type: ignore[union-attr]
    if kind == "end_phase":
        return END_PHASE_KEY
    if kind == "end_turn":
        return END_TURN_KEY
    return _MULLIGAN + 1 + hand[move.keep]  # type: ignore[union-attr]


def distinct_moves(legal: Iterable[DSIntent], hand: Sequence[int]) -> dict[int, DSIntent]:
    """``legal`` by :func:`move_key`, the first move of each key kept (in order)."""
    out: dict[int, DSIntent] = {}
    for move in legal:
        key = move_key(move, hand)
        if key not in out:
            out[key] = move
    return out


class Node:
    """One information set of the observer, reached by the move ``key`` of ``seat``.

    ``visits`` and ``reward`` (the sum of rewards for ``seat``) count the
    iterations that passed through the node; ``avails`` the iterations in which
    its move was legal when its parent chose a child (:meth:`select`).
    The root has ``key`` and ``seat`` None.
    """

    __slots__ = ("avails", "children", "key", "parent", "prior", "reward", "seat", "visits")

    def __init__(self, parent: Node | None = None, key: int | None = None,
                 seat: int | None = None, prior: float = 0.0) -> None:
        self.parent = parent
        self.key = key
        self.seat = seat
        self.prior = prior
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.avails = 1

    def untried(self, moves: Mapping[int, DSIntent]) -> list[int]:
        """The keys among ``moves`` (legal in this world) that have no child yet."""
        children = self.children
        return [k for k in moves if k not in children]

    def tried(self, moves: Mapping[int, DSIntent]) -> list[int]:
        """The keys among ``moves`` (legal in this world) that have a child."""
        children = self.children
        return [k for k in moves if k in children]

    def add_child(self, key: int, seat: int, prior: float = 0.0) -> Node:
        """A new child for ``seat``'s move ``key`` (which must not exist yet)."""
        child = Node(self, key, seat, prior)
        self.children[key] = child
        return child

    def select(self, moves: Iterable[int], exploration: float, bias: float,
               priors: Mapping[int, float] | None = None) -> Node:
        """The child to descend into among the keys ``moves`` (legal in this world,
        each with a child): the best UCB score over availability counts,
        plus progressive bias (module docstring) from each child's stored prior or,
        when given, from ``priors`` (by key: a heuristic's opinion in this world).
        Counts one availability for each legal child, the chosen one included.

        Raises:
            KeyError: a key of ``moves`` has no child (expand it first).
        """
        children = self.children
        best: Node | None = None
        best_score = -math.inf
        log = math.log
        sqrt = math.sqrt
        for key in moves:
            child = children[key]
            n = child.visits
            prior = child.prior if priors is None else priors[key]
            score = (child.reward / n + exploration * sqrt(log(child.avails) / n)
                     + bias * prior / (n + 1))
            if score > best_score:
                best, best_score = child, score
            child.avails += 1
        assert best is not None, "select needs at least one legal move"
        return best

    def update(self, reward: float, observer: int) -> None:
        """Count one iteration through this node; ``reward`` is the observer's (0..1)."""
        self.visits += 1
        self.reward += reward if self.seat == observer else 1.0 - reward

    def most_visited(self, keys: Sequence[int]) -> int | None:
        """Among ``keys``, the child with the most visits (ties: higher mean reward,
        then higher prior, then the first); None when none of them has a child."""
        best_key: int | None = None
        best_rank: tuple[float, float, float] | None = None
        for key in keys:
            child = self.children.get(key)
            if child is None:
                continue
            mean = child.reward / child.visits if child.visits else 0.0
            rank = (child.visits, mean, child.prior)
            if best_rank is None or rank > best_rank:
                best_key, best_rank = key, rank
        return best_key

    def best_mean(self, keys: Sequence[int]) -> int | None:
        """Among ``keys``, the child with the best mean reward (ties: more visits,
        then higher prior, then the first); None when none of them was visited."""
        best_key: int | None = None
        best_rank: tuple[float, float, float] | None = None
        for key in keys:
            child = self.children.get(key)
            if child is None or not child.visits:
                continue
            rank = (child.reward / child.visits, child.visits, child.prior)
            if best_rank is None or rank > best_rank:
                best_key, best_rank = key, rank
        return best_key

    def detach(self) -> Node:
        """Make this node a root (its parent and siblings can be collected)."""
        self.parent = None
        return self

    def size(self) -> int:
        """Nodes in this subtree, this one included."""
        count, todo = 0, [self]
        while todo:
            node = todo.pop()
            count += 1
            todo.extend(node.children.values())
        return count
