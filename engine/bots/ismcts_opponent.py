"""What the ``ismcts`` strategy can tell of its opponent's policy from its own views.

Every turn the opponent puts one hand card on its stack (phase 2), and that
card is public. ``greedy`` always stacks the card it can best spare, the one
of least :func:`engine.bots.greedy.score_stack` (a cost that depends on both
seats' arrays only, which the seat sees), so a ``greedy`` opponent's stacked
cards are the cheap ones. :func:`stack_rank` puts a number on that: the share
of the 13 values that would have cost the opponent less than the card it
stacked (0: no cheaper value exists). A ``greedy`` opponent, stacking the
cheapest of the few cards it holds, had a mean rank of 0.12-0.25 after ten
stacked cards; ``search``, which weighs its stack card by its rollouts (it
stacked greedy's card at 28 of 69 decisions), 0.28-0.46 at 0.05 s a move
(``engine.bots.ismcts`` records the runs). :class:`OpponentModel` keeps the
mean over a game; the search models the opponent as ``greedy`` on each
sampled world (``ismcts``'s ``opp_priors`` ``model``) only while that mean,
over enough turns, stays low.

Everything is read from two of the seat's own views: its last decision of a
turn and its first of the next (between them the opponent's turn). Never the
hidden cards.
"""

from __future__ import annotations

from dataclasses import replace

from engine.bots.base import View
from engine.bots.greedy import board_from_view, score_stack, value_of
from engine.datastructures.deck import ACE, N_VALUES

#: The values a card can have (an ace is ``ACE``).
_VALUES = (ACE, *range(N_VALUES))


def stacked_card(before: View, now: View, seat: int) -> str | None:
    """The card ``seat``'s opponent stacked in the turn between the views
    ``before`` and ``now``, when the views show it: its stack is the old one with
    one card on top (None when it played from its own stack, or did not stack)."""
    other = 1 - seat
    old, new = before["players"][other]["stack"], now["players"][other]["stack"]
    if len(new) == len(old) + 1 and new[:len(old)] == old:
        return new[-1]
    return None


def stack_rank(now: View, seat: int, card: str) -> float:
    """The share of the 13 values that would have cost ``seat``'s opponent less to
    stack than ``card`` did (:func:`engine.bots.greedy.score_stack` on the arrays
    of ``now``, which its phase 2 saw as they are)."""
    board = replace(board_from_view(now, seat), seat=1 - seat, hand=[])
    cost = score_stack(board, value_of(card))
    return sum(1 for v in _VALUES if score_stack(board, v) < cost - 1e-9) / len(_VALUES)


class OpponentModel:
    """The mean :func:`stack_rank` of the opponent's stacked cards in one game.

    :meth:`greedy_like` is true once at least ``min_turns`` stacked cards were
    seen and their mean rank is at most ``threshold``.
    """

    def __init__(self, threshold: float, min_turns: int) -> None:
        self.threshold = threshold
        self.min_turns = min_turns
        self.turns = 0
        self.rank_sum = 0.0

    def observe(self, before: View, now: View, seat: int) -> None:
        """Count the opponent's turn between ``before`` and ``now``, if it shows
        the card stacked (:func:`stacked_card`)."""
        card = stacked_card(before, now, seat)
        if card is not None:
            self.turns += 1
            self.rank_sum += stack_rank(now, seat, card)

    def greedy_like(self) -> bool:
        """Enough turns seen, and a low mean rank (class docstring)."""
        return self.turns >= self.min_turns and self.rank_sum <= self.threshold * self.turns
