"""The ``ismcts`` strategy's belief about the opponent's hand: which cards it kept.

:func:`engine.datastructures.determinize` deals the cards a seat cannot see
uniformly at random. But on the seat's turn the opponent's hand is, in part,
what the opponent *kept* through its own last turn, and what it kept says
something: a player who plays while it can (``greedy`` does; so does almost
every sensible player, since every play is progress) ends its phase 1 with no
hand card that fits one of its arrays, and then cycles through the queue the
cards it barely wants, keeping those one value short of an array or that the
seat needs next (it keeps them from the seat's stack, ``greedy``'s ``help``).
It also stacked the card it could best spare (the one on top of its stack
now), so what it kept cost it at least as much to give up
(:func:`engine.bots.greedy.score_stack`). The rest of the hand is fresh from
the deck, drawn at the end of that turn, and says nothing; after a mulligan
(the hand it kept was the one card it had to stack) all of it is fresh.

So the belief is a mixture, card by card: each of the opponent's hand cards
is, with probability :data:`KEPT_SHARE` (in 100 greedy games the opponent kept
1.0 of its 5 cards on average), a kept card -- drawn from the unseen cards
weighted by :func:`kept_weights` of its value -- and otherwise a uniform draw.
The weights are soft: a card that would have fitted still has a small weight
(:data:`FIT_WEIGHT`), so an opponent that does not play like this misleads the
belief without making any world impossible (an earlier try that forbade the
whole hand any fitting card was false at 19 of the seat's turns in one greedy
game: most of the hand is fresh). :func:`resample_hand` redeals a sampled
world's opponent hand by that mixture.

Everything here is read from the seat's own view at the first decision of its
turn: the opponent's arrays as they are (nothing on them moves during the
seat's turn) and the seat's own arrays before it plays (as the opponent saw
them in its phase 2). Never the real hidden cards.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import accumulate
from typing import Any

from engine.bots.base import View
from engine.bots.greedy import (
    EMPTY,
    ENQUEUE_BELOW,
    board_from_view,
    help_value,
    keep_value,
    score_stack,
)
from engine.datastructures.deck import ACE, N_VALUES, VALUE

#: The chance that one opponent hand card is a kept card (else a fresh draw).
KEPT_SHARE = 0.2
#: A kept card's weight by its value: one that fits an opponent array now (it
#: would have been played), one that an opponent who cycles what it barely wants
#: keeps (one short of an array, or what the seat needs next), and the others
#: (an ace or a far card, kept only when the queue was full or by another policy).
FIT_WEIGHT = 0.1
KEEP_WEIGHT = 1.0
OTHER_WEIGHT = 0.25
#: The factor on the weight of a card cheaper to give up than the one it stacked.
BELOW_STACK = 0.25


def kept_weights(view: View, seat: int) -> list[float] | None:
    """The weight of a card the opponent kept, by array value (index ``value + 1``,
    an ace at 0), from ``seat``'s view at the first decision of its turn; None on
    the first turn of the game (the opponent's hand is the deal) and after the
    opponent's mulligan on its last turn (nothing of that hand is left).

    Raises:
        KeyError, ValueError: the view is not a Data Structures seat view.
    """
    if view["turn"] <= 1:
        return None
    opponent = 1 - seat
    mulligan = view["last_mulligan"]
    if mulligan is not None and mulligan["seat"] == opponent and mulligan["turn"] == view["turn"] - 1:
        return None
    board = board_from_view(view, opponent)   # the opponent's side: its needs, then ours
    needs = board.need[opponent]
    any_fits = EMPTY in needs
    stacked = board.stack_top[opponent]
    floor = -1.0 if stacked is None else score_stack(board, stacked) - 1e-9
    weights = []
    for value in range(ACE, N_VALUES):
        if value != ACE and (any_fits or value in needs):
            weight = FIT_WEIGHT
        elif keep_value(board, value) >= ENQUEUE_BELOW or help_value(board, value) >= 1.0:
            weight = KEEP_WEIGHT
        else:
            weight = OTHER_WEIGHT
        weights.append(weight * BELOW_STACK if score_stack(board, value) < floor else weight)
    return weights


def resample_hand(world: Any, seat: int, weights: list[float], share: float,
                  rng: random.Random) -> None:
    """Redeal the opponent's hand of the sampled ``world`` (in place) by the
    mixture of the module docstring: each hand card, with chance ``share``, is
    swapped for an unseen card (the opponent's hand, the recycle pile or the deck)
    drawn by ``weights`` of its value; the cards it leaves stay in random order.

    Args:
        world: a determinized state for ``seat`` (its hidden cards dealt at random).
        weights: :func:`kept_weights`, by ``value + 1``.
    """
    opponent = 1 - seat
    hand = world.hands[opponent]
    n = len(hand)
    if not n:
        return
    recycle = world.recycle
    pool = hand + recycle + world.deck
    value = VALUE
    changed = False
    for i in range(n):
        if rng.random() >= share:
            continue
        cumulative = list(accumulate(weights[value[c] + 1] for c in pool[i:]))
        j = i + bisect_right(cumulative, rng.random() * cumulative[-1])
        if j >= len(pool):   # rounding at the very top
            j = len(pool) - 1
        pool[i], pool[j] = pool[j], pool[i]
        changed = True
    if not changed:
        return
    r = len(recycle)
    world.hands[opponent] = pool[:n]
    world.recycle = pool[n:n + r]
    world.deck = pool[n + r:]
