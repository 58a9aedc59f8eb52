"""War has one decision (W6): every strategy just flips."""

from __future__ import annotations

from collections.abc import Sequence

from engine.bots.base import Intent, View, flip_intent, require_legal


class FlipStrategy:
    """Always flip. Used for War under every strategy name.

    Args:
        name: the strategy name it stands in for (shown in summaries).
    """

    def __init__(self, name: str = "flip") -> None:
        self.name = name

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent]) -> Intent:
        """The ``flip`` intent (or the first legal intent if there is no flip).

        Raises:
            ValueError: ``legal`` is empty.
        """
        require_legal(legal)
        return flip_intent(legal)
