"""The ``random`` strategy: uniform over the legal intents."""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.bots.base import DEFAULT_BUDGET, Intent, View, flip_intent, require_legal
from engine.bots.budget import Budget


class RandomStrategy:
    """Pick a legal intent uniformly at random (War: just flip).

    Args:
        seed: seeds the strategy's private generator (None: from the OS).
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget = DEFAULT_BUDGET) -> Intent:
        """A uniformly random element of ``legal`` (the budget is not needed).

        Raises:
            ValueError: ``legal`` is empty.
        """
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        return legal[self.rng.randrange(len(legal))]
