"""Data Structures: The Card Game (seed text + rulings D1..D13): the game (``game``),
its rules (``rules``), its projection (``observer``); :mod:`engine.registry` lists
it as ``"datastructures"``.

    from engine.registry import get_game
    state = get_game("datastructures").new_state(seed, {"cap": 500})

:func:`determinize` builds a full state from one seat's view (search bots).
"""

from __future__ import annotations

from engine.datastructures.determinize import determinize
from engine.datastructures.game import GAME, DataStructures
from engine.datastructures.rules import DSState

__all__ = ["GAME", "DSState", "DataStructures", "determinize"]
