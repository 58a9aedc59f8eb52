"""A hint for the player: a local bot suggests a move from the player's own view.

The strategy (``engine.bots``) runs in this client, in a worker thread, on
exactly what the player was sent: the seat's view and the snapshot's ``legal``
list. It never talks to the server and sees nothing the player cannot see; its
answer is one element of ``legal``, which the screen highlights. Playing it is
still the player's choice.
"""

from __future__ import annotations

import time
from typing import Any

#: The strategy the hint asks, and the seconds it may think.
HINT_STRATEGY = "search"
HINT_SECONDS = 0.5


def suggest(game: str, seat: int, view: dict[str, Any], legal: list[dict[str, Any]], *,
            strategy: str = HINT_STRATEGY, seconds: float = HINT_SECONDS,
            seed: int | None = None) -> dict[str, Any]:
    """The strategy's choice for ``seat`` on ``view``: one element of ``legal``.

    Blocking (runs a search for up to ``seconds``): call it in a worker thread.

    Raises:
        ValueError: ``legal`` is empty, or an unknown strategy.
    """
    if not legal:
        raise ValueError("nothing to suggest: no legal move")
    from engine.bots import get_strategy
    from engine.bots.budget import Budget

    bot = get_strategy(strategy, seed=seed)
    intent = bot.choose(game, seat, view, legal, Budget.timed(seconds, time.monotonic))
    if intent not in legal:
        raise ValueError(f"the {strategy} strategy suggested a move that is not legal")
    return intent
