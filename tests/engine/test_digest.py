"""Digests see every change of the match generator, cached or not."""

from __future__ import annotations

import random

from engine.core import rng_fingerprint
from engine.registry import get_game


def test_rng_fingerprint_changes_with_every_draw_and_matches_equal_states() -> None:
    a, b = random.Random(7), random.Random(7)
    assert rng_fingerprint(a) == rng_fingerprint(b)
    a.random()
    assert rng_fingerprint(a) != rng_fingerprint(b)
    b.random()
    assert rng_fingerprint(a) == rng_fingerprint(b)


def test_datastructures_cached_digest_equals_a_fresh_computation_at_every_step() -> None:
    game = get_game("datastructures")
    chooser = random.Random(3)
    state = game.new_state(99)
    reshuffles = 0
    while state.outcome() is None:
        seat = state.to_move()[0]
        before = state.deck[:]
        state.digest()  # fill the cache, then change the state
        state.apply(seat, chooser.choice(state.legal(seat)))
        if len(state.deck) > len(before) + 1:
            reshuffles += 1
        cached = state.digest()
        state._rng_print = None  # what a state that never digested before would compute
        assert cached == state.digest()
    assert reshuffles > 0, "the game never reshuffled, so the cache was never tested"
