"""The seq rule's window (server/seq_window.py) without a server."""

from __future__ import annotations

from engine.registry import get_game
from server.match.window import SeqWindow

FLIP = {"type": "flip"}


def test_war_both_seats_may_flip_on_the_same_snapshot() -> None:
    state = get_game("war").new_state(1)
    window = SeqWindow(2, simultaneous=True)
    window.update(0, state.legal)
    seq = 0
    for seat in (0, 1):   # both act on snapshot 0, in either order
        assert window.accepts(seat, 0, seq)
        state.apply(seat, FLIP)
        seq += 1
        window.update(seq, state.legal)
    assert state.battles == 1
    # seat 1's list was [flip] before and is [flip] for the new battle: unchanged
    assert window.since(1) == 0 and window.accepts(1, 0, seq)
    # seat 0's list went [flip] -> [] -> [flip]: it changed at seq 2
    assert window.since(0) == 2 and not window.accepts(0, 1, seq) and window.accepts(0, 2, seq)


def test_a_seq_from_the_future_is_outside_the_window() -> None:
    window = SeqWindow(2, simultaneous=True)
    window.update(0, lambda seat: [FLIP])
    assert not window.accepts(0, 1, 0)
    assert not window.accepts(0, -1, 0)


def test_turn_based_games_accept_only_the_current_seq() -> None:
    state = get_game("datastructures").new_state(3)
    window = SeqWindow(2, simultaneous=False)
    window.update(0, state.legal)
    mover = state.to_move()[0]
    state.apply(mover, {"type": "end_phase"})
    window.update(1, state.legal)
    assert not window.accepts(mover, 0, 1)       # the position changed under it
    assert window.accepts(mover, 1, 1)
    assert not window.accepts(1 - mover, 0, 1)


def test_the_cached_list_is_the_last_one_recorded() -> None:
    window = SeqWindow(2, simultaneous=True)
    window.update(5, lambda seat: [FLIP] if seat == 0 else [])
    assert window.legal(0) == [FLIP] and window.legal(1) == []
    assert window.snapshot() == (5, 0)   # seat 1 had [] before too
