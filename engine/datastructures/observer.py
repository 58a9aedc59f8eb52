"""The one projection of a Data Structures state: per-seat views and the event filter.

What is public and what is not is ruling D10 (with R0.3 and D6):

- public: the queue (head first), both stacks (every card, bottom to top), all
  six arrays (cards in play order, the value each needs next, closed flags and
  counts), the discard pile, the number of cards in the deck, in each hand and
  in the face-down ``recycle`` pile (arrays closed this turn, D4), whose turn,
  the phase and its flags, and the last mulligan's revealed hand (D6);
- private to its owner: the hand (a spectator sees no hand);
- secret from everyone: the deck order and the faces in ``recycle``.

Only :func:`build_view` (and :func:`build_views`, several at once) and
:func:`filter_events` turn a state or its raw events into something that may
leave the engine. docs/rules.md shows an example.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.core import Event, View
from engine.datastructures.deck import N_CARDS, N_VALUES, NAME, VALUE, VALUE_NAME
from engine.datastructures.rules import DSState

#: Raw event types that carry cards some seats may not see, and the seat field
#: that names who may. Every other event type is public as it is.
_PRIVATE_CARDS = {"draw": "seat"}


#: ``_NEXT[card]``: the rank an open array whose last card is ``card`` needs next (D2).
_NEXT: tuple[str, ...] = tuple(VALUE_NAME[(VALUE[c] + 1) % N_VALUES] for c in range(N_CARDS))


def _array(cards: list[int], closed: bool) -> dict:
    return {"cards": [NAME[c] for c in cards],
            "next": None if closed or not cards else _NEXT[cards[-1]], "closed": closed}


def _mulligan(reveal: dict | None) -> dict | None:
    if reveal is None:
        return None
    return {k: (list(v) if isinstance(v, list) else v) for k, v in reveal.items()}


def build_view(state: DSState, seat: int | None) -> View:
    """The state as ``seat`` may see it (None: a spectator). A fresh plain map.

    ``hand`` is the seat's own hand (None for a spectator); ``players[s]`` holds
    seat ``s``'s public facts; ``next`` of an array is the rank it needs next
    (None when it is empty: any rank but an ace, from the hand only, or closed).

    Raises:
        ValueError: ``seat`` is not 0, 1 or None.
    """
    _check_seat(seat)
    return _view(state, seat, _mulligan(state.last_mulligan))


def _view(state: DSState, seat: int | None, mulligan: dict | None) -> View:
    """:func:`build_view` of a checked ``seat``, with ``mulligan`` as its
    ``last_mulligan`` (a copy of the state's)."""
    hands = state.hands
    players = []
    for s in (0, 1):
        closed = state.closed[s]
        a0, a1, a2 = state.arrays[s]
        c0, c1, c2 = closed
        players.append({
            "seat": s,
            "hand_count": len(hands[s]),
            "closed": c0 + c1 + c2,
            "stack": [NAME[c] for c in state.stacks[s]],
            "arrays": [_array(a0, c0), _array(a1, c1), _array(a2, c2)],
        })
    result = state.result
    over = result is not None
    return {
        "game": "datastructures",
        "seat": seat,
        "turn": state.turn,
        "cap": state.cap,
        "to_move": None if over else state.current,
        "phase": state.phase,
        "played": state.played,
        "mulliganed": state.mulliganed,
        "stacked": state.stacked,
        "stack_owed": state.stack_owed(),
        "hand": None if seat is None else [NAME[c] for c in hands[seat]],
        "hand_counts": [len(hands[0]), len(hands[1])],
        "players": players,
        "queue": [NAME[c] for c in state.queue],
        "deck": len(state.deck),
        "discard": [NAME[c] for c in state.discard],
        "recycle": len(state.recycle),
        "idle_turns": state.idle_turns,
        "last_mulligan": mulligan,
        "result": None if result is None else result.to_dict(),
    }


def build_views(state: DSState, seats: Sequence[int | None]) -> list[View]:
    """:func:`build_view` of each of ``seats``, in order: the public parts built once
    and shared among the maps (only ``seat`` and ``hand`` are each view's own), and
    ``last_mulligan`` shared with the views of later changes until it is replaced,
    so treat them as frozen.

    Raises:
        ValueError: a seat is not 0, 1 or None.
    """
    for seat in seats:
        _check_seat(seat)
    # the copy of last_mulligan (never mutated, only replaced) is kept with the state
    # until it is replaced, shared by the views of every change until then
    reveal = state.last_mulligan
    kept = state._view_mulligan
    if kept is None or kept[0] is not reveal:
        kept = state._view_mulligan = (reveal, _mulligan(reveal))
    public = _view(state, None, kept[1])
    hands = state.hands
    out = []
    for seat in seats:
        view = dict(public)
        view["seat"] = seat
        if seat is not None:
            view["hand"] = [NAME[c] for c in hands[seat]]
        out.append(view)
    return out


def _check_seat(seat: int | None) -> None:
    if seat is not None and (type(seat) is not int or seat not in (0, 1)):
        raise ValueError(f"no seat {seat!r} in datastructures (0, 1, or None to spectate)")


def filter_events(events: list[Event], seat: int | None) -> list[Event]:
    """Raw events as ``seat`` may see them: fresh copies, in order; a ``draw`` into
    another player's hand keeps its ``count`` but loses its ``cards``.

    Raises:
        ValueError: ``seat`` is not 0, 1 or None.
    """
    if seat is not None and (type(seat) is not int or seat not in (0, 1)):
        raise ValueError(f"no seat {seat!r} in datastructures (0, 1, or None to spectate)")
    out: list[Event] = []
    for event in events:
        owner_field = _PRIVATE_CARDS.get(event["type"])
        if owner_field is not None and event[owner_field] != seat:
            event = {k: v for k, v in event.items() if k != "cards"}
        else:
            event = dict(event)
        out.append(event)
    return out
