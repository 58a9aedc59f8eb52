"""Data Structures: The Card Game (seed text + rulings D1..D13), registered as
``"datastructures"``.

    from engine.registry import get_game
    state = get_game("datastructures").new_state(seed, {"cap": 500})

:func:`determinize` builds a full state from one seat's view (search bots).
"""

from __future__ import annotations

from engine.datastructures.determinize import determinize
from engine.datastructures.game import DataStructures
from engine.datastructures.state import DSState
from engine.registry import register

GAME = register(DataStructures())

__all__ = ["GAME", "DSState", "DataStructures", "determinize"]
