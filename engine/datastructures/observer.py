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


def _mulligan(reveal: dict | None) -> dict | None:
    if reveal is None:
        return None
    return {k: (list(v) if isinstance(v, list) else v) for k, v in reveal.items()}


#: An entry of a fresh list of kept parts: its key never equals a pile.
_NONE: tuple = (None, None, None)
#: Entries of ``DSState._view_kept``, one a pile of a view: 0-1 the stacks, 2-7 the
#: arrays (seat 0's, then seat 1's), 8 the queue, 9 the discard pile, 10-11 the hands,
#: 12-13 the players. A pile's entry is ``(a copy of its card ids, closed, its
#: part of the view)``, a player's ``(hand count, the parts it holds, its map)``.
_SLOTS = 14


def build_view(state: DSState, seat: int | None) -> View:
    """The state as ``seat`` may see it (None: a spectator). A fresh plain map.

    ``hand`` is the seat's own hand (None for a spectator); ``players[s]`` holds
    seat ``s``'s public facts; ``next`` of an array is the rank it needs next
    (None when it is empty: any rank but an ace, from the hand only, or closed).

    Raises:
        ValueError: ``seat`` is not 0, 1 or None.
    """
    _check_seat(seat)
    kept = [_NONE] * _SLOTS   # nothing kept: every part fresh
    view = _view(state, _mulligan(state.last_mulligan), kept)
    if seat is not None:
        view["seat"] = seat
        view["hand"] = _hand(state.hands[seat], kept, 10 + seat)
    return view


def _hand(hand: list[int], kept: list, slot: int) -> list[str]:
    """The names of ``hand``, kept in ``kept[slot]`` while the hand is equal."""
    entry = kept[slot]
    if entry[0] != hand:
        entry = kept[slot] = (hand[:], None, [NAME[c] for c in hand])
    return entry[2]


def _view(state: DSState, mulligan: dict | None, kept: list) -> View:
    """The spectator's view (seat and hand None), with ``mulligan`` as its
    ``last_mulligan`` (a copy of the state's) and the parts of every pile that is
    equal to its copy in ``kept`` taken from there (the others made and kept)."""
    hands = state.hands
    stacks = state.stacks
    players = []
    for s in (0, 1):
        # the seat's stack and arrays: the kept part while the pile is equal to its copy
        entry = kept[s]
        stack = stacks[s]
        if entry[0] != stack:
            entry = kept[s] = (stack[:], None, [NAME[c] for c in stack])
        stack_names = entry[2]
        side = state.arrays[s]
        flags = state.closed[s]
        parts = []
        for a in (0, 1, 2):
            cards = side[a]
            closed = flags[a]
            entry = kept[2 + 3 * s + a]
            if entry[0] != cards or entry[1] is not closed:
                entry = kept[2 + 3 * s + a] = (cards[:], closed, {
                    "cards": [NAME[c] for c in cards],
                    "next": None if closed or not cards else _NEXT[cards[-1]],
                    "closed": closed})
            parts.append(entry[2])
        count = len(hands[s])
        # the player's map while its hand count and every part are the kept ones
        entry = kept[12 + s]
        made = entry[1]
        if (entry[0] != count or made[0] is not stack_names or made[1] is not parts[0]
                or made[2] is not parts[1] or made[3] is not parts[2]):
            entry = kept[12 + s] = (count, (stack_names, *parts), {
                "seat": s,
                "hand_count": count,
                "closed": flags[0] + flags[1] + flags[2],
                "stack": stack_names,
                "arrays": parts,
            })
        players.append(entry[2])
    queue = state.queue
    entry = kept[8]
    if entry[0] != queue:
        entry = kept[8] = (queue[:], None, [NAME[c] for c in queue])
    queue_names = entry[2]
    discard = state.discard
    entry = kept[9]
    if entry[0] != discard:
        entry = kept[9] = (discard[:], None, [NAME[c] for c in discard])
    discard_names = entry[2]
    result = state.result
    over = result is not None
    return {
        "game": "datastructures",
        "seat": None,
        "turn": state.turn,
        "cap": state.cap,
        "to_move": None if over else state.current,
        "phase": state.phase,
        "played": state.played,
        "mulliganed": state.mulliganed,
        "stacked": state.stacked,
        "stack_owed": state.stack_owed(),
        "hand": None,
        "hand_counts": [len(hands[0]), len(hands[1])],
        "players": players,
        "queue": queue_names,
        "deck": len(state.deck),
        "discard": discard_names,
        "recycle": len(state.recycle),
        "idle_turns": state.idle_turns,
        "last_mulligan": mulligan,
        "result": None if result is None else result.to_dict(),
    }


def build_views(state: DSState, seats: Sequence[int | None]) -> list[View]:
    """:func:`build_view` of each of ``seats``, in order, sharing their parts, so
    treat them as frozen: the public parts are built once and shared among the
    maps (only ``seat`` and ``hand`` are each view's own; a spectator's is the
    public map itself), and every pile's part (its names, an array's map, a
    player's map) and ``last_mulligan`` are kept with the state and shared with
    the views of later changes while the pile is equal to the copy kept with it
    (an intent changes one to three of the fourteen).

    Raises:
        ValueError: a seat is not 0, 1 or None.
    """
    for seat in seats:
        if seat is not None and (type(seat) is not int or seat not in (0, 1)):
            _check_seat(seat)   # raises (inline: three calls a change)
    # the copy of last_mulligan (never mutated, only replaced) is kept with the state
    # until it is replaced, shared by the views of every change until then
    reveal = state.last_mulligan
    mulligan = state._view_mulligan
    if mulligan is None or mulligan[0] is not reveal:
        mulligan = state._view_mulligan = (reveal, _mulligan(reveal))
    kept = state._view_kept
    if kept is None:
        kept = state._view_kept = [_NONE] * _SLOTS
    public = _view(state, mulligan[1], kept)
    hands = state.hands
    out = []
    for seat in seats:
        if seat is None:
            out.append(public)
            continue
        view = public.copy()
        view["seat"] = seat
        view["hand"] = _hand(hands[seat], kept, 10 + seat)
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
            event = event.copy()   # a method call: cheaper than dict()'s type call
        out.append(event)
    return out
