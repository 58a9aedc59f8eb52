"""Pure bot strategies: a seat's view and legal intents in, one intent out.

Used by the ``cardbot`` command, by the server's own bots and by
``cardsim tournament``. Nothing here does I/O, reads a clock or imports trio;
the caller owns the clock and hands each decision a budget::

    from engine.bots import Budget, get_strategy, timed
    s = get_strategy("search", seed=123)
    intent = s.choose(game, seat, view, legal, Budget.iterations(500))  # reproducible
    bot = timed(s, 0.5, clock=time.perf_counter)   # a fresh 0.5 s budget per decision
    intent = bot.choose(game, seat, view, legal)

Names: ``random`` (uniform over legal), ``greedy`` (a documented one-step
heuristic, see :mod:`engine.bots.greedy`), ``search`` (determinized
Monte Carlo search within its budget, see :mod:`engine.bots.search`),
``ismcts`` (information-set tree search, see :mod:`engine.bots.ismcts`). In
War every strategy just flips. :func:`register` adds a strategy under a name of
its own (or, told to, in place of one), e.g. a variant to screen offline.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.bots.base import DEFAULT_BUDGET, Strategy, Timed
from engine.bots.budget import Budget

__all__ = ["DEFAULT_BUDGET", "DEFAULT_TIME_BUDGET", "Budget", "Strategy", "Timed", "describe",
           "get_strategy", "register", "strategy_names", "timed", "unregister"]

#: Seconds a thinking strategy may use per move when a command is not told otherwise.
DEFAULT_TIME_BUDGET = 0.1


def _random(seed: int | None) -> Strategy:
    from engine.bots.uniform import RandomStrategy

    return RandomStrategy(seed)


def _greedy(seed: int | None) -> Strategy:
    from engine.bots.greedy import GreedyStrategy

    return GreedyStrategy(seed)


def _search(seed: int | None) -> Strategy:
    from engine.bots.search import SearchStrategy

    return SearchStrategy(seed)


def _ismcts(seed: int | None) -> Strategy:
    from engine.bots.ismcts import ISMCTSStrategy

    return ISMCTSStrategy(seed)


#: name -> (factory taking the seed, one line for help texts). One row per strategy.
_FACTORIES: dict[str, tuple[Callable[[int | None], Strategy], str]] = {
    "random": (_random, "uniform over the legal intents"),
    "greedy": (_greedy, "close arrays, keep useful cards, deny the opponent (one-step heuristic)"),
    "search": (_search, "determinized Monte Carlo search over sampled hidden cards, "
                        "greedy rollouts, within --time-budget per move"),
    "ismcts": (_ismcts, "information-set Monte Carlo tree search over both seats' decisions"),
}


#: Characters a strategy name may not hold: lists of names are comma-separated,
#: and a match of two is written ``a-b``.
_NOT_IN_NAMES = frozenset(",- \t\n")


def register(name: str, factory: Callable[[int | None], Strategy], doc: str, *,
             replace: bool = False) -> None:
    """Make :func:`get_strategy` build ``factory(seed)`` for ``name`` (listed after
    the others by :func:`strategy_names`, or in its old place when replacing), with
    ``doc`` as its line in :func:`describe`.

    Raises:
        ValueError: ``name`` is empty or holds a comma, a hyphen or white space, or
            is already registered and ``replace`` is False.
    """
    if not name or _NOT_IN_NAMES & set(name):
        raise ValueError(f"a strategy name is non-empty, without commas, hyphens or spaces: "
                         f"{name!r}")
    if name in _FACTORIES and not replace:
        raise ValueError(f"strategy {name!r} is already registered")
    _FACTORIES[name] = (factory, doc)


def unregister(name: str) -> None:
    """Forget the strategy ``name`` (built in or registered).

    Raises:
        ValueError: unknown name.
    """
    if _FACTORIES.pop(name, None) is None:
        raise ValueError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")


def strategy_names() -> list[str]:
    """The names ``get_strategy`` accepts, in a stable order (weakest first)."""
    return list(_FACTORIES)


def describe() -> dict[str, str]:
    """One line about each strategy, by name (for help texts and ``--strategy list``)."""
    return {name: doc for name, (_, doc) in _FACTORIES.items()}


def get_strategy(name: str, seed: int | None = None) -> Strategy:
    """A new strategy object. Each object keeps its own generator: one per seat.

    Args:
        name: one of :func:`strategy_names`.
        seed: seeds the strategy's generator (None: from the OS).

    Raises:
        ValueError: unknown name.
    """
    try:
        factory, _ = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown strategy {name!r}; known: {', '.join(strategy_names())}") from None
    return factory(seed)


def timed(strategy: Strategy, seconds: float, clock: Callable[[], float]) -> Timed:
    """``strategy`` with a fresh ``Budget.timed(seconds, clock)`` for every decision.

    Raises:
        ValueError: ``seconds`` is not positive.
    """
    return Timed(strategy, seconds, clock)
