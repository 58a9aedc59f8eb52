"""The ``random`` strategy: uniform over the legal intents."""

from __future__ import annotations

from collections.abc import Sequence

from engine.bots.base import Intent, View, flip_intent, make_rng, require_legal


class RandomStrategy:
    """Pick a legal intent uniformly at random (War: just flip).

    Args:
        seed: seeds the strategy's private generator (None: from the OS).
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = make_rng(seed)

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent]) -> Intent:
        """A uniformly random element of ``legal``.

        Raises:
            ValueError: ``legal`` is empty.
        """
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        return legal[self.rng.randrange(len(legal))]
