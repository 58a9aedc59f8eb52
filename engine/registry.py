"""Games by name. The one place that knows which games exist."""

from __future__ import annotations

from engine.core import Game, UnknownGame
from engine.datastructures.game import GAME as DATASTRUCTURES
from engine.war.game import WAR

#: Every game, by name.
GAMES: dict[str, Game] = {game.name: game for game in (WAR, DATASTRUCTURES)}


def get_game(name: str) -> Game:
    """The game registered as ``name``.

    Raises:
        UnknownGame: no game has that name.
    """
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGame(f"no game named {name!r}; known: {', '.join(sorted(GAMES))}") from None


def game_names() -> list[str]:
    """Names of all registered games, sorted."""
    return sorted(GAMES)
