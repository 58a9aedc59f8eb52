"""The rematch offer: how two clients agree on one new match.

``r`` on a finished match's end screen creates a new match of the same game
and options and offers it in the old match's chat, as the line
``rematch? join match <id>`` (:func:`offer_text`). A client that has seen its
opponent's offer joins that match instead of creating its own
(:func:`opponent_offer` reads the line off a ``chat`` push, trusting only a
speaker whose ``role`` is ``player`` in the other seat). When both press ``r``
at once, each has created a match before it sees the other's offer: both
clients then keep the offer whose match id sorts first (:func:`keeps_own`), so
the one whose own id sorts last leaves its match and joins the other's, and
the two end up in one match, not each in their own.
"""

from __future__ import annotations

import re
from typing import Any

_OFFER = re.compile(r"rematch\? join match (\S+)")


def offer_text(match: str) -> str:
    """The chat line that offers ``match`` as the rematch."""
    return f"rematch? join match {match}"


def opponent_offer(msg: dict[str, Any], own_seat: int | None) -> str | None:
    """The match a ``chat`` push offers as a rematch, if the opponent of ``own_seat``
    said it (a player in the other seat); None for any other line or speaker."""
    if own_seat is None or msg.get("role") != "player" or msg.get("seat") != 1 - own_seat:
        return None
    found = _OFFER.fullmatch(str(msg.get("text", "")))
    return found.group(1) if found else None


def keeps_own(own: str, offered: str) -> bool:
    """Two crossing offers: whether the client that created ``own`` keeps it (and waits
    for the opponent) rather than leaving it to join ``offered``. Both clients decide
    alike: the match id that sorts first is kept."""
    return own <= offered
