"""Games by name. The one place that knows which games exist."""

from __future__ import annotations

from engine.core import Game, UnknownGame

GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add a game to the registry under its name (idempotent for the same object)."""
    GAMES[game.name] = game
    return game


def get_game(name: str) -> Game:
    """The game registered as ``name``.

    Raises:
        UnknownGame: no game has that name.
    """
    _load_builtin_games()
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGame(f"no game named {name!r}; known: {', '.join(sorted(GAMES))}") from None


def game_names() -> list[str]:
    """Names of all registered games, sorted."""
    _load_builtin_games()
    return sorted(GAMES)


def _load_builtin_games() -> None:
    """Import the built-in games so they register themselves (each import is cached)."""
    import importlib

    for module in ("engine.war", "engine.datastructures"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a game package not built yet
            if exc.name != module:
                raise
