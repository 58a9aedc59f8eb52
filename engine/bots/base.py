"""The strategy interface shared by `cardbot`, the server's bots and `cardsim`.

A strategy is a pure decision function: it gets what one seat may see (the
``view`` and the ``legal`` intents of a snapshot) and returns one element of
``legal``. It does no I/O and imports no networking code, so the server can
run the same strategies as the command-line bots.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

Intent = dict[str, Any]
View = Mapping[str, Any]

GAMES = ("war", "datastructures")


@runtime_checkable
class Strategy(Protocol):
    """Anything with a ``name`` and a ``choose`` method is a strategy."""

    name: str

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent]) -> Intent:
        """Return one element of ``legal`` (the very object, not a copy).

        Args:
            game: ``"war"`` or ``"datastructures"``.
            seat: the seat this strategy plays (0 or 1).
            view: the seat's view, as in a snapshot.
            legal: the snapshot's legal intents; never empty.

        Raises:
            ValueError: ``legal`` is empty (there is nothing to choose).
        """
        ...


def require_legal(legal: Sequence[Intent]) -> None:
    """Raise ValueError when there is nothing to choose from."""
    if not legal:
        raise ValueError("no legal intent to choose from")


def make_rng(seed: int | None) -> random.Random:
    """A private generator: seeded when ``seed`` is given, else from the OS."""
    return random.Random(seed)


def flip_intent(legal: Sequence[Intent]) -> Intent:
    """War's only decision (W6): the ``flip`` intent, or the first legal one."""
    for intent in legal:
        if intent.get("type") == "flip":
            return intent
    return legal[0]
