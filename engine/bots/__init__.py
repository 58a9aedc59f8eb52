"""Pure bot strategies: a seat's view and legal intents in, one intent out.

Used by the ``cardbot`` command, by the server's own bots and by
``cardsim tournament``. Nothing here does I/O or imports trio::

    from engine.bots import get_strategy, strategy_names
    s = get_strategy("greedy", seed=123, time_budget=0.5)
    intent = s.choose(game, seat, view, legal)   # an element of legal

Names: ``random`` (uniform over legal), ``greedy`` (a documented one-step
heuristic, see :mod:`engine.bots.greedy`), ``search`` (determinized
Monte Carlo search within a per-move time budget, see
:mod:`engine.bots.search`). In War every strategy just flips.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.bots.base import Strategy

__all__ = ["DEFAULT_TIME_BUDGET", "Strategy", "describe", "get_strategy", "strategy_names"]

#: Seconds the search strategy may think per move unless told otherwise.
DEFAULT_TIME_BUDGET = 0.1


def _random(seed: int | None, time_budget: float) -> Strategy:
    from engine.bots.uniform import RandomStrategy

    return RandomStrategy(seed)


def _greedy(seed: int | None, time_budget: float) -> Strategy:
    from engine.bots.greedy import GreedyStrategy

    return GreedyStrategy(seed)


def _search(seed: int | None, time_budget: float) -> Strategy:
    from engine.bots.search import SearchStrategy

    return SearchStrategy(seed, time_budget=time_budget)


_FACTORIES: dict[str, tuple[Callable[[int | None, float], Strategy], str]] = {
    "random": (_random, "uniform over the legal intents"),
    "greedy": (_greedy, "close arrays, keep useful cards, deny the opponent (one-step heuristic)"),
    "search": (_search, "determinized Monte Carlo search over sampled hidden cards, "
                        "greedy rollouts, within --time-budget per move"),
}


def strategy_names() -> list[str]:
    """The names ``get_strategy`` accepts, in a stable order (weakest first)."""
    return list(_FACTORIES)


def describe() -> dict[str, str]:
    """One line about each strategy, by name (for help texts and ``--strategy list``)."""
    return {name: doc for name, (_, doc) in _FACTORIES.items()}


def get_strategy(name: str, seed: int | None = None,
                 time_budget: float = DEFAULT_TIME_BUDGET) -> Strategy:
    """A new strategy object. Each object keeps its own generator: one per seat.

    Args:
        name: one of :func:`strategy_names`.
        seed: seeds the strategy's generator (None: from the OS).
        time_budget: seconds per move a thinking strategy may use (> 0).

    Raises:
        ValueError: unknown name, or a time budget that is not positive.
    """
    try:
        factory, _ = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown strategy {name!r}; known: {', '.join(strategy_names())}") from None
    if not time_budget > 0:
        raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
    return factory(seed, float(time_budget))
