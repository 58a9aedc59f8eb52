"""Digests see every change of the match generator, cached or not."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine.core import State, new_rng, rng_fingerprint
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


def _chain(state: State, chooser_seed: int, digest: str, worlds: bool = False) -> str:
    """SHA-256 over ``state.<digest>()`` of every position of one random game, of a
    clone at each step and (``worlds``: Data Structures) of a determinized world
    from each mover's view."""
    from engine.datastructures import determinize

    def of(s: State) -> bytes:
        return str(getattr(s, digest)()).encode()

    chooser = random.Random(chooser_seed)
    chain = hashlib.sha256(of(state))
    while state.outcome() is None:
        seat = state.to_move()[0]
        state.apply(seat, chooser.choice(state.legal(seat)))
        chain.update(of(state))
        chain.update(of(state.clone()))
        if worlds and state.outcome() is None:
            deck = len(state.deck)   # type: ignore[attr-defined]
            chain.update(of(determinize(state.view(seat), seat, random.Random(deck))))
    return chain.hexdigest()


def _digest_chain(name: str, seed: int, options: dict, chooser_seed: int) -> str:
    """:func:`_chain` of ``digest()`` (worlds included). The match generator is the one
    of matches journaled before #12 (Python's Mersenne Twister,
    :class:`engine.rng.LegacyStream`), whose stored digests must stay valid."""
    state = get_game(name).new_state(seed, options, rng=LegacyStream(seed))
    return _chain(state, chooser_seed, "digest", worlds=name == "datastructures")


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


def _journal_digest_chain(name: str, seed: int, options: dict, chooser_seed: int) -> str:
    """:func:`_chain` of the version-2 digest (``journal_digest``), the documented stream."""
    return _chain(get_game(name).new_state(seed, options), chooser_seed, "journal_digest")


#: The version-2 digests as first journaled (``journal_digest`` in each game's
#: rules.py): stored rows are checked against them, so these must never change either.
_RECORDED_V2_CHAINS = [
    (("war", 1, {}, 0), "c909bf80e491a6128c6a625159f5e171004697304a6c3f593c1c2264df81c409"),
    (("war", 2, {"return": "played", "short_war": "lose", "cap": 300}, 0),
     "a3e865818901b1a79b662a538c7f6bef26c2f7b53de6649b945f706c8a20de82"),
    (("datastructures", 99, {}, 3), "b16f43526fe972e6f19538f7d8cecd5a3dcb68ea58159185c5c89a4656b4cd88"),
    (("datastructures", 5, {"cap": 40}, 1), "195ba40c8506a16e45f50779281f55c0a2dbea3322b7200a549d8df7e7a81bb8"),
]


@pytest.mark.parametrize(("game", "expected"), _RECORDED_V2_CHAINS,
                         ids=[f"{a[0]}-{a[1]}" for a, _ in _RECORDED_V2_CHAINS])
def test_journal_digests_are_byte_identical_to_the_recorded_ones(game: tuple,
                                                                 expected: str) -> None:
    assert _journal_digest_chain(*game) == expected


@pytest.mark.parametrize("name", ["war", "datastructures"])
def test_the_journal_digest_changes_with_every_move_and_reads_both_versions(name: str) -> None:
    state = get_game(name).new_state(7, {"cap": 40})
    twin = get_game(name).new_state(7, {"cap": 40})
    chooser = random.Random(7)
    seen = {state.journal_digest()}
    while state.outcome() is None:
        seat = state.to_move()[0]
        intent = chooser.choice(state.legal(seat))
        state.apply(seat, intent)
        twin.apply(seat, intent)
        now = state.journal_digest()
        assert now.startswith("2:") and len(now) == 66 and now not in seen
        assert now == twin.journal_digest() == state.clone().journal_digest()
        assert state.digest_as(now) == now
        assert state.digest_as(state.digest()) == state.digest()   # a version-1 row
        assert state.digest_as("3:" + now[2:]) == state.digest()    # unknown: never equal
        seen.add(now)
    assert len(seen) > 30


@pytest.mark.parametrize("name", ["war", "datastructures"])
def test_the_digest_versions_tell_the_same_states_apart(name: str) -> None:
    """Over many positions of several games (and, for Data Structures, worlds
    determinized from a view), two states have equal version-2 digests exactly
    when their version-1 digests are equal (neither version sees less)."""
    from engine.datastructures import determinize

    v1_to_v2: dict[str, str] = {}
    v2_to_v1: dict[str, str] = {}

    def check(state: object) -> None:
        one, two = state.digest(), state.journal_digest()   # type: ignore[attr-defined]
        assert v1_to_v2.setdefault(one, two) == two
        assert v2_to_v1.setdefault(two, one) == one

    for seed, options in [(1, {}), (5, {"cap": 60}), (9, {}), (11, {"cap": 30})]:
        if name == "war":
            options = {1: {}, 5: {"cap": 60}, 9: {"return": "played"},
                       11: {"short_war": "lose"}}[seed]
        state = get_game(name).new_state(seed, options)
        chooser = random.Random(seed)
        while state.outcome() is None:
            seat = state.to_move()[0]
            state.apply(seat, chooser.choice(state.legal(seat)))
            check(state)
            if name == "datastructures" and state.outcome() is None:
                check(determinize(state.view(seat), seat, random.Random(state.turn)))
    assert len(v1_to_v2) > 200
