"""War: rules (``state``), options (``game``) and the projection (``view``).

Importing this package registers the game as ``"war"`` in :mod:`engine.registry`.
"""

from __future__ import annotations

from engine.registry import register
from engine.war.game import WAR, WarGame
from engine.war.state import FLIP, WarState

register(WAR)

__all__ = ["FLIP", "WAR", "WarGame", "WarState"]
