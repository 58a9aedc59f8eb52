"""``build_views`` keeps each pile's part of the view with the state while the pile is
equal to the copy kept with it: the views must still be exactly ``build_view``'s,
whatever changed the piles, and no seat's part may reach another seat's view."""

from __future__ import annotations

import random

from engine.datastructures.observer import build_view, build_views
from tests.engine.test_datastructures_support import GAME

SEATS = (0, 1, None)


def fresh(state) -> list[dict]:
    return [build_view(state, seat) for seat in SEATS]


def test_kept_parts_follow_every_change_of_random_games() -> None:
    """Along whole random games (every intent changes one to three piles, every end of
    a turn draws and may shuffle), each change's views equal fresh ones; a clone
    starts without kept parts and goes its own way."""
    checked = 0
    for seed in range(4):
        state = GAME.new_state(seed, {"cap": 500})
        rng = random.Random(seed)
        while state.outcome() is None:
            assert build_views(state, SEATS) == fresh(state)
            checked += 1
            if checked % 50 == 0:   # a clone played on apart, then the original again
                other = state.clone()
                assert other._view_kept is None
                (seat,) = other.to_move()
                other.apply(seat, rng.choice(other.legal(seat)))
                assert build_views(other, SEATS) == fresh(other)
                assert build_views(state, SEATS) == fresh(state)
            (seat,) = state.to_move()
            state.apply(seat, rng.choice(state.legal(seat)))
        assert build_views(state, SEATS) == fresh(state)
    assert checked > 1000


def test_a_pile_changed_in_place_to_the_same_length_is_seen() -> None:
    """The kept parts are keyed by the piles' contents, not their lengths or
    identities: a pile reordered, or replaced card by card, shows in the next views."""
    state = GAME.new_state(3, {"cap": 500})
    build_views(state, SEATS)
    state.queue.reverse()
    state.hands[0][0], state.hands[1][0] = state.hands[1][0], state.hands[0][0]
    state.stacks[0][:] = state.stacks[1]
    state.arrays[1][2][:] = [state.deck.pop()]
    state.closed[0][1] = True
    assert build_views(state, SEATS) == fresh(state)


def test_each_seat_gets_only_its_own_hand_and_the_spectator_none() -> None:
    """A seat's kept hand is its own: seat 0's names never appear as seat 1's hand,
    and the spectator's view (the shared public map) has no hand."""
    state = GAME.new_state(5, {"cap": 500})
    rng = random.Random(5)
    for _ in range(200):
        if state.outcome() is not None:
            break
        v0, v1, spectator = build_views(state, SEATS)
        assert v0["hand"] == build_view(state, 0)["hand"]
        assert v1["hand"] == build_view(state, 1)["hand"]
        assert spectator["hand"] is None and spectator["seat"] is None
        assert (v0["seat"], v1["seat"]) == (0, 1)
        (seat,) = state.to_move()
        state.apply(seat, rng.choice(state.legal(seat)))
