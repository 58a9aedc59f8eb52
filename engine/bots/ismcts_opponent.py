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
over enough turns, stays low. :class:`RankLikelihood` reads the same ranks as
evidence for ``greedy`` against ``search`` (a log-likelihood ratio by rank
bin); neither tells ``search`` or ``ismcts`` from ``greedy`` at better than
about a third of their decisions called greedy (``engine.bots.ismcts``
records the runs).

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


#: The log-likelihood ratio, ``greedy`` against ``search``, of one stacked card's
#: rank by its bin (``round(13 * rank)``, the last bin 8 and above), from the
#: ranks seen in 160 games of ``ismcts`` against ``greedy`` (2015 cards) and 20
#: against ``search`` at 0.05 s of CPU time a move (301), one count added to each
#: bin: greedy's stacked cards are the cheap ones of its hand, ``search``'s spread.
RANK_LLR = (0.70, 1.09, 0.62, 0.42, -0.28, -0.48, -1.07, -1.41, -1.38)
#: The log-odds that the opponent is ``greedy`` before any card is seen, and the
#: bound on the running sum either way (so a change of policy shows within turns).
LLR_PRIOR = 0.5
LLR_BOUND = 4.0


class StackRanks:
    """The :func:`stack_rank` of every card the opponent stacked in one game, as
    :meth:`observe` sees them: ``turns`` of them, their sum ``rank_sum``, each in
    ``ranks`` in the order seen. Subclasses say what the ranks mean (:meth:`seen`,
    ``greedy_like``)."""

    def __init__(self) -> None:
        self.turns = 0
        self.rank_sum = 0.0
        #: Every stacked card's rank, in the order seen.
        self.ranks: list[float] = []

    def observe(self, before: View, now: View, seat: int) -> None:
        """Count the opponent's turn between ``before`` and ``now``, if it shows
        the card stacked (:func:`stacked_card`)."""
        card = stacked_card(before, now, seat)
        if card is None:
            return
        rank = stack_rank(now, seat, card)
        self.turns += 1
        self.rank_sum += rank
        self.ranks.append(rank)
        self.seen(rank)

    def seen(self, rank: float) -> None:
        """A subclass's own count of one more stacked card's ``rank`` (none here)."""


class RankLikelihood(StackRanks):
    """Whether the opponent stacks like ``greedy``: the running log-odds, from
    :data:`LLR_PRIOR`, that its stacked cards' ranks come from ``greedy``'s
    distribution rather than ``search``'s (:data:`RANK_LLR`), bounded by
    :data:`LLR_BOUND`; :meth:`greedy_like` while it is above 0.
    """

    def __init__(self, prior: float = LLR_PRIOR, bound: float = LLR_BOUND) -> None:
        super().__init__()
        self.log_odds = prior
        self.bound = bound

    def seen(self, rank: float) -> None:
        """Add the log-likelihood ratio of ``rank``'s bin, within the bound."""
        step = RANK_LLR[min(round(rank * len(_VALUES)), len(RANK_LLR) - 1)]
        self.log_odds = max(-self.bound, min(self.bound, self.log_odds + step))

    def greedy_like(self) -> bool:
        """The log-odds of ``greedy`` are above 0 (class docstring)."""
        return self.log_odds > 0.0


class OpponentModel(StackRanks):
    """The mean :func:`stack_rank` of the opponent's stacked cards in one game.

    :meth:`greedy_like` is true once at least ``min_turns`` stacked cards were
    seen and their mean rank is at most ``threshold``.
    """

    def __init__(self, threshold: float, min_turns: int) -> None:
        super().__init__()
        self.threshold = threshold
        self.min_turns = min_turns

    def greedy_like(self) -> bool:
        """Enough turns seen, and a low mean rank (class docstring)."""
        return self.turns >= self.min_turns and self.rank_sum <= self.threshold * self.turns
