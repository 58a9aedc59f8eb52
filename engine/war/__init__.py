"""War: the game (``game``), its rules (``rules``), its projection (``observer``).

:mod:`engine.registry` lists it as ``"war"``.
"""

from __future__ import annotations

from engine.war.game import WAR, WarGame
from engine.war.rules import FLIP, WarState

__all__ = ["FLIP", "WAR", "WarGame", "WarState"]
