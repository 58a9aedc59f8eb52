"""The seq rule of PROTOCOL-CORE: which ``intent.seq`` a seat may still act on.

The server remembers, for each seat, the seq at which that seat's ``legal``
list last changed. An intent whose seq lies in ``[that seq, current seq]`` is
checked against the seat's current ``legal`` list; any other seq is ``stale``.
So in War both seats may flip on the same snapshot and both flips count (the
first flip does not change the other seat's list), while in a game whose seats
take turns every accepted intent moves the position a list refers to (a hand
index names another card once a card left the hand), so there the window is
the current seq alone: a seat can never act on a position that changed under it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Legal = list[dict[str, Any]]


class SeqWindow:
    """Per seat: its current ``legal`` list and the seq at which it last changed."""

    __slots__ = ("_legal", "_since", "_simultaneous")

    def __init__(self, seats: int, simultaneous: bool) -> None:
        """A window for ``seats`` seats, all with an empty list since seq 0.

        Args:
            seats: how many seats the game has.
            simultaneous: the game lets several seats hold intents at once and an
                unchanged list means an unchanged choice (War); otherwise every
                change of the match counts as a change of every seat's list.
        """
        self._legal: list[Legal] = [[] for _ in range(seats)]
        self._since = [0] * seats
        self._simultaneous = simultaneous

    def update(self, seq: int, legal_of: Callable[[int], Legal]) -> None:
        """Record the lists after the change that made the match's seq ``seq``.

        Args:
            seq: the match's seq after the change.
            legal_of: ``legal_of(seat)`` is that seat's legal list now.
        """
        for seat in range(len(self._legal)):
            legal = legal_of(seat)
            if not self._simultaneous or legal != self._legal[seat]:
                self._since[seat] = seq
            self._legal[seat] = legal

    def legal(self, seat: int) -> Legal:
        """The seat's list as of the last :meth:`update` (do not mutate it)."""
        return self._legal[seat]

    def since(self, seat: int) -> int:
        """The seq at which the seat's list last changed."""
        return self._since[seat]

    def accepts(self, seat: int, seq: int, current: int) -> bool:
        """Whether an intent of ``seat`` on snapshot ``seq`` is in the window
        (``since(seat) <= seq <= current``); outside it the answer is ``stale``."""
        return self._since[seat] <= seq <= current

    def snapshot(self) -> Sequence[int]:
        """Every seat's change seq, seat 0 first (for tests and logs)."""
        return tuple(self._since)
