"""The strategy interface shared by `cardbot`, the server's bots and `cardsim`.

A strategy is a pure decision function: it gets what one seat may see (the
``view`` and the ``legal`` intents of a snapshot) and a :class:`Budget` for
its thinking, and returns one element of ``legal``. It does no I/O, reads no
clock of its own and imports no networking code, so the server can run the
same strategies as the command-line bots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from engine.bots.budget import Budget

Intent = dict[str, Any]
View = Mapping[str, Any]

#: The budget of a decision whose caller gives none: a fixed amount of work, so
#: the same seed gives the same move.
DEFAULT_BUDGET = Budget.iterations(200)


@runtime_checkable
class Strategy(Protocol):
    """Anything with a ``name`` and a ``choose`` method is a strategy."""

    name: str

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget = DEFAULT_BUDGET) -> Intent:
        """Return one element of ``legal`` (the very object, not a copy).

        Args:
            game: the game's name (``engine.registry.game_names()``).
            seat: the seat this strategy plays (0 or 1).
            view: the seat's view, as in a snapshot.
            legal: the snapshot's legal intents; never empty.
            budget: how much this decision may think (iterations and/or a deadline).

        Raises:
            ValueError: ``legal`` is empty (there is nothing to choose).
        """
        ...


class Timed:
    """A strategy that gets a fresh time budget on the caller's clock for every decision.

    ``choose(game, seat, view, legal)`` calls the wrapped strategy with
    ``Budget.timed(seconds, clock)`` built at that moment; callers that own a
    clock (``cardbot``, the server's bots, tournaments) wrap once and call as
    before.

    Args:
        strategy: the strategy to give the budget to.
        seconds: thinking time per decision (> 0).
        clock: the caller's clock, e.g. ``time.perf_counter``.

    Raises:
        ValueError: ``seconds`` is not positive.
    """

    def __init__(self, strategy: Strategy, seconds: float, clock: Callable[[], float]) -> None:
        if not seconds > 0:
            raise ValueError(f"time_budget must be > 0 seconds, got {seconds!r}")
        self.strategy = strategy
        self.name = strategy.name
        self.seconds = float(seconds)
        self.clock = clock

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget | None = None) -> Intent:
        """The wrapped strategy's choice within ``budget`` (default: the time per decision).

        Raises:
            ValueError: ``legal`` is empty.
        """
        if budget is None:
            budget = Budget.timed(self.seconds, self.clock)
        return self.strategy.choose(game, seat, view, legal, budget)


def require_legal(legal: Sequence[Intent]) -> None:
    """Raise ValueError when there is nothing to choose from."""
    if not legal:
        raise ValueError("no legal intent to choose from")


def flip_intent(legal: Sequence[Intent]) -> Intent:
    """War's only decision (W6): the ``flip`` intent, or the first legal one."""
    for intent in legal:
        if intent.get("type") == "flip":
            return intent
    return legal[0]
