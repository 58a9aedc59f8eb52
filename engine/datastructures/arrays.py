"""Which card fits which array (D1-D4), and every phase-1 play of a seat.

Pure functions of one seat's piles (card ids, :mod:`engine.datastructures.deck`):
``arrays`` is the seat's three arrays (cards in play order), ``closed`` their
closed flags. An array needs the value after its last card's, cyclically (D2);
an empty array takes any value but an ace, from the hand only (D1, D3); a
closed array takes nothing (D4).
"""

from __future__ import annotations

from engine.datastructures.deck import ACE, N_VALUES, NAME, VALUE, VALUE_NAME
from engine.datastructures.intents import N_ARRAYS, PLAY_QUEUE, PLAY_STACK, Play, play_hand

# Array needs in plays(): never equal to a card's VALUE (ACE is -1).
_EMPTY = -3
_CLOSED = -2


def fits(arrays: list[list[int]], closed: list[bool], card: int, array: int,
         from_hand: bool) -> bool:
    """Whether ``card`` may go on array ``array`` now (D1, D2, D3, D4)."""
    if closed[array]:
        return False
    value = VALUE[card]
    if value == ACE:
        return False
    arr = arrays[array]
    if not arr:
        return from_hand
    return (VALUE[arr[-1]] + 1) % N_VALUES == value


def why_not(arrays: list[list[int]], closed: list[bool], card: int, array: int
            ) -> tuple[str, str]:
    """Why ``card`` does not fit array ``array``: ``(message, ruling)``."""
    if closed[array]:
        return f"array {array} is closed", "D4"
    if VALUE[card] == ACE:
        return f"{NAME[card]}: an ace never goes on an array", "D1"
    arr = arrays[array]
    if not arr:
        return f"array {array} is empty: start it from your hand", "D3"
    want = (VALUE[arr[-1]] + 1) % N_VALUES
    return f"{NAME[card]} does not fit array {array}: it needs a {VALUE_NAME[want]}", "D2"


def plays(arrays: list[list[int]], closed: list[bool], hand: list[int], queue: list[int],
          stacks: list[list[int]]) -> list[Play]:
    """Every phase-1 play onto these arrays: hand cards, the queue head, both stack tops,
    in that order (hand index, then array)."""
    out: list[Play] = []
    need: list[int] = []  # _EMPTY: any value from the hand; _CLOSED: nothing
    for a in range(N_ARRAYS):
        arr = arrays[a]
        if closed[a]:
            need.append(_CLOSED)
        elif arr:
            need.append((VALUE[arr[-1]] + 1) % N_VALUES)
        else:
            need.append(_EMPTY)
    any_card = _EMPTY in need
    for i, card in enumerate(hand):
        value = VALUE[card]
        if value == ACE or not (any_card or value in need):
            continue  # most hand cards fit nowhere: one test instead of three
        for a in range(N_ARRAYS):
            if need[a] == value or need[a] == _EMPTY:
                out.append(play_hand(i, a))
    if queue:
        value = VALUE[queue[0]]
        if value in need:
            for a in range(N_ARRAYS):
                if need[a] == value:
                    out.append(PLAY_QUEUE[a])
    for s in (0, 1):
        stack = stacks[s]
        if stack:
            value = VALUE[stack[-1]]
            if value in need:
                for a in range(N_ARRAYS):
                    if need[a] == value:
                        out.append(PLAY_STACK[s][a])
    return out
