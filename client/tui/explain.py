"""Why a Data Structures choice is not on offer, in words read off the view.

The server's ``legal`` list alone decides what the client offers and sends
(:mod:`client.tui.selection`). When a player picks something that is not in
it, these functions say why in the game's own terms, from what the snapshot's
view shows: "8♠ does not fit: array 1 needs 10, array 2 needs 9, array 3 is
closed". They never decide anything: they are only called after ``legal`` has
refused, and every sentence names what the view shows (the phase, the card,
what each array needs), so a view that disagrees can only make a sentence less
precise, never allow a move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine import notation

Thing = tuple[Any, ...]


def _own(view: Mapping[str, Any], me: int | None) -> Mapping[str, Any]:
    players = view.get("players") or []
    if isinstance(me, int) and 0 <= me < len(players) and isinstance(players[me], Mapping):
        return players[me]
    return {}


def _arrays(view: Mapping[str, Any], me: int | None) -> list[Mapping[str, Any]]:
    return [a for a in _own(view, me).get("arrays") or [] if isinstance(a, Mapping)]


def _card_of(thing: Thing, view: Mapping[str, Any], me: int | None) -> str | None:
    """The card a source would move, as the view shows it (None: none there)."""
    kind = thing[0]
    if kind == "hand":
        hand = view.get("hand") or []
        return hand[thing[1]] if isinstance(thing[1], int) and thing[1] < len(hand) else None
    if kind == "queue":
        queue = view.get("queue") or []
        return queue[0] if queue else None
    if kind == "stack":
        players = view.get("players") or []
        owner = thing[1]
        if isinstance(owner, int) and 0 <= owner < len(players):
            stack = players[owner].get("stack") or []
            return stack[-1] if stack else None
    return None


def _needs(arr: Mapping[str, Any], index: int, glyphs: bool) -> str:
    if arr.get("closed"):
        return f"{notation.array_name(index)} is closed"
    if not arr.get("cards"):
        return f"{notation.array_name(index)} is empty (hand only)"
    return f"{notation.array_name(index)} needs {arr.get('next')}"


def _rank(card: str | None) -> str | None:
    parts = notation.split_card(card)
    return parts[0] if parts else None


def why_not_source(thing: Thing, view: Mapping[str, Any], me: int | None,
                   legal: Sequence[Mapping[str, Any]], *, glyphs: bool = True) -> str:
    """Why ``thing`` (``("hand", i)``, ``("queue",)``, ``("stack", s)``) cannot be
    played now, in words."""
    name = {"hand": "that hand card", "queue": "the queue head",
            "stack": "that stack top"}.get(thing[0], "that")
    if not legal:
        return "it is not your move"
    card = _card_of(thing, view, me)
    if thing[0] == "hand" and card is None:
        return f"there is no hand card {notation.number(thing[1])}"
    if card is None:
        return f"{name} is not there: {'the queue' if thing[0] == 'queue' else 'that stack'} " \
               "is empty"
    shown = notation.card(card, glyphs=glyphs)
    phase = view.get("phase")
    if phase == "discard":
        if thing[0] != "hand":
            return "in phase 2 only hand cards move: one onto your stack, then some into " \
                   "the queue"
        if len(view.get("queue") or []) >= 5:
            return f"{shown} cannot be enqueued: the queue is full (5 cards); e ends the turn"
        return f"{shown} cannot move now"
    if phase != "play":
        return "nothing can be played now"
    if _rank(card) == "A":
        return f"{shown} is an ace: aces never go on arrays"
    fits = [_needs(arr, i, glyphs) for i, arr in enumerate(_arrays(view, me))]
    if thing[0] != "hand" and all(not arr.get("cards") or arr.get("closed")
                                  for arr in _arrays(view, me)):
        return f"{shown} does not fit: an empty array starts only from the hand"
    return f"{shown} does not fit: " + ", ".join(fits) if fits else f"{shown} does not fit"


def why_not_target(source: Thing, target: Thing, view: Mapping[str, Any], me: int | None,
                   *, glyphs: bool = True) -> str:
    """Why ``source`` cannot go to ``target``, in words."""
    card = _card_of(source, view, me)
    shown = notation.card(card, glyphs=glyphs) if card else "that card"
    if target[0] == "array":
        arrays = _arrays(view, me)
        index = target[1]
        if not isinstance(index, int) or not 0 <= index < len(arrays):
            return f"there is no {notation.array_name(index)}"
        arr = arrays[index]
        if arr.get("closed"):
            return f"{notation.array_name(index)} is closed"
        if not arr.get("cards"):
            if source[0] != "hand":
                return f"{notation.array_name(index)} is empty: an empty array starts " \
                       "only from the hand"
            return f"{shown} cannot start {notation.array_name(index)}" + \
                (": aces never go on arrays" if _rank(card) == "A" else "")
        return f"{shown} does not fit: {notation.array_name(index)} needs {arr.get('next')}"
    if target[0] == "qtail":
        if not view.get("stacked"):
            return "put a hand card on your stack first (phase 2 starts with it)"
        return "the queue is full (5 cards)"
    if target[0] == "mystack":
        return "your stack card for this turn is already down" if view.get("stacked") \
            else "only in phase 2"
    if target[0] == "keep":
        return why_no_mulligan(view, [])
    return "that is not a place for it"


def why_no_mulligan(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]]) -> str:
    """Why a mulligan is not offered now."""
    if not legal:
        return "no mulligan: it is not your move"
    if view.get("phase") != "play":
        return "no mulligan: only at the start of phase 1"
    if view.get("played"):
        return "no mulligan: a card was already played this phase"
    if any(i.get("type") == "play" for i in legal):
        return "no mulligan: a card can still be played (it needs a hand with no play)"
    if len(view.get("hand") or []) < 2:
        return "no mulligan: it needs at least 2 hand cards"
    return "no mulligan now"


def why_cannot_end(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]]) -> str:
    """Why neither end_phase nor end_turn is offered now."""
    if not legal:
        return "it is not your move"
    if view.get("phase") == "discard" and not view.get("stacked"):
        return "first put a hand card on your stack (pick it, then s)"
    return "you cannot end the phase or the turn yet"
