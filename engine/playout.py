"""The one playout loop: play a state on, each seat to move choosing in turn.

Simulators, tournaments and search rollouts all drive a game the same way::

    moves = play_out(state, lambda state, seat, legal: legal[0])

Each round takes :meth:`~engine.core.State.to_move` once and lets those seats
move in that order (War: seat 0, then seat 1), skipping a seat with nothing
legal any more; the loop stops when the game has ended or ``until(state)`` is
true (checked before every round).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.core import State

#: ``choose(state, seat, legal) -> one element of legal``.
Chooser = Callable[[State, int, list[Any]], Any]


def play_out(state: State, choose: Chooser, *, until: Callable[[State], bool] | None = None,
             values: bool = False, max_moves: int | None = None) -> int:
    """Apply ``choose``'s pick for each seat to move until the game ends (or ``until``).

    Args:
        state: played on in place.
        choose: picks one element of ``legal`` for ``seat``.
        until: stop early once this is true of the state (None: play to the end).
        values: hand ``choose`` the intent values (``legal_moves``/``apply_move``)
            instead of the wire maps (``legal``/``apply``); faster for rollouts.
        max_moves: refuse to play more than this many intents (None: no limit).

    Returns:
        The number of intents applied.

    Raises:
        RuntimeError: nobody is to move in an unfinished game, or ``max_moves`` passed.
        engine.core.RuleError: ``choose`` picked an intent the rules refuse.
    """
    legal_of = state.legal_moves if values else state.legal
    apply = state.apply_move if values else state.apply
    moves = 0
    while state.outcome() is None and (until is None or not until(state)):
        seats = state.to_move()
        if not seats:
            raise RuntimeError("nobody is to move, yet the game has not ended")
        for seat in seats:
            if state.outcome() is not None:
                break
            legal = legal_of(seat)
            if legal:
                apply(seat, choose(state, seat, legal))
                moves += 1
        if max_moves is not None and moves > max_moves:
            raise RuntimeError(f"the game did not end within {max_moves} intents")
    return moves
