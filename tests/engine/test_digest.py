"""Digests see every change of the match generator, cached or not."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine.core import new_rng, rng_fingerprint
from engine.registry import get_game
from engine.rng import LegacyStream


@pytest.mark.parametrize("make", [new_rng, LegacyStream], ids=["hmac", "legacy"])
def test_rng_fingerprint_changes_with_every_draw_and_matches_equal_states(make) -> None:
    a, b = make(7), make(7)
    assert rng_fingerprint(a) == rng_fingerprint(b)
    a.randbelow(1000)
    assert rng_fingerprint(a) != rng_fingerprint(b)
    b.randbelow(1000)
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


def _digest_chain(name: str, seed: int, options: dict, chooser_seed: int) -> str:
    """SHA-256 over the digest of every position of one random game, of a clone at each
    step and (Data Structures) of a determinized world from each mover's view. The
    match generator is the one of matches journaled before #12 (Python's Mersenne
    Twister, :class:`engine.rng.LegacyStream`), whose stored digests must stay valid."""
    from engine.datastructures import determinize

    state = get_game(name).new_state(seed, options, rng=LegacyStream(seed))
    chooser = random.Random(chooser_seed)
    chain = hashlib.sha256(state.digest().encode())
    while state.outcome() is None:
        seat = state.to_move()[0]
        state.apply(seat, chooser.choice(state.legal(seat)))
        chain.update(state.digest().encode())
        chain.update(state.clone().digest().encode())
        if name == "datastructures" and state.outcome() is None:
            world = determinize(state.view(seat), seat, random.Random(len(state.deck)))
            chain.update(world.digest().encode())
    return chain.hexdigest()


#: Recorded before the states' fields were declared once; stored journals are checked
#: against digests computed this way, so these must never change.
_RECORDED_CHAINS = [
    (("war", 1, {}, 0), "1e3b69560cf1265f25405c32f946c2b1c032b8fd29f6a32881fa5824edf1d3c7"),
    (("war", 2, {"return": "played", "short_war": "lose", "cap": 300}, 0),
     "ed5418b1b17d8deec96bb11bf8a7f6e7b3eecb1806b28405db35f2c4e66c3ff3"),
    (("datastructures", 99, {}, 3),
     "3bdab12c93a3fe21a34c4eb2d458452aef4dcbfc9c2f23e3647f916e8e287fa9"),
    (("datastructures", 5, {"cap": 40}, 1),
     "f51ab7593b39b867929cc2a484500087547db71e500db9d9bd92f81a83d825b1"),
]


@pytest.mark.parametrize(("game", "expected"), _RECORDED_CHAINS,
                         ids=[f"{a[0]}-{a[1]}" for a, _ in _RECORDED_CHAINS])
def test_digests_are_byte_identical_to_the_recorded_ones(game: tuple, expected: str) -> None:
    assert _digest_chain(*game) == expected
