"""Property tests for War over many seeds, options and random play orders.

At every step: all 52 cards exactly once; ``legal`` agrees with ``apply``; no
view or projected event holds a card its viewer may not see; the game ends
within its cap; and replaying the intents reproduces every digest.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import cards
from engine.core import RuleError
from engine.registry import get_game
from engine.war import WarState

FLIP = {"type": "flip"}
ALL = Counter(cards.deck())
#: Intents no War seat may ever play (W6).
NOT_INTENTS: list[Any] = [{}, {"type": "play"}, {"type": "flip", "seat": 0}, {"type": "FLIP"},
                          {"kind": "flip"}, "flip", None, 0, [FLIP]]

options_st = st.fixed_dictionaries({
    "return": st.sampled_from(["shuffled", "played"]),
    "short_war": st.sampled_from(["stand", "lose"]),
    "cap": st.integers(min_value=1, max_value=150),
})
seeds_st = st.integers(min_value=0, max_value=2**256 - 1)


def card_strings(value: Any) -> list[str]:
    """Every card string anywhere inside a view or event (maps, lists, scalars)."""
    if isinstance(value, str):
        try:
            cards.from_str(value)
        except ValueError:
            return []
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in card_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in card_strings(v)]
    return []


def face_up(state: WarState) -> set[str]:
    """Cards any viewer may see now: the face-up cards of this battle and the last one."""
    seen = {cards.to_str(x) for i, x in enumerate(state.table) if x is not None and i % 4 >= 2}
    if state.last is not None:
        table = state.last[2]
        seen |= {cards.to_str(x) for i, x in enumerate(table) if x is not None and i % 4 >= 2}
    return seen


def check_step(state: WarState, rng: random.Random) -> None:
    """Conservation, legal/apply agreement on refusals, and the projection, right now."""
    assert Counter(list(state.decks[0]) + list(state.decks[1]) + state.table_cards()) == ALL
    allowed = face_up(state)
    for seat in (0, 1, None):
        view = state.view(seat)
        shown = card_strings(view)
        assert set(shown) <= allowed, (seat, set(shown) - allowed)
        downs = sum(1 for i, x in enumerate(state.table) if x is not None and i % 4 < 2)
        assert sum(pile.count(cards.BACK) for pile in view["table"]) == downs
        assert view["counts"] == [len(state.decks[0]), len(state.decks[1])]
    for seat in (0, 1):
        legal = state.legal(seat)
        assert legal in ([], [FLIP])
        assert (seat in state.to_move()) == bool(legal)
        before = state.digest()
        bad = rng.choice(NOT_INTENTS + ([FLIP] if not legal else []))
        try:
            state.apply(seat, bad)
        except RuleError:
            pass
        else:
            raise AssertionError(f"seat {seat} applied unlisted intent {bad!r}")
        assert state.digest() == before


def play(seed: int, options: dict, order_seed: int, checks: bool) -> tuple[list, list[str]]:
    """Play a game to its end, seats flipping in a random order; return the intents
    played and the digest after each."""
    state = get_game("war").new_state(seed, options)
    order = random.Random(order_seed)
    journal: list[tuple[int, dict]] = []
    digests = [state.digest()]
    limit = options["cap"] * 2 * 27          # flips a capped game can take at most
    while state.outcome() is None:
        assert len(journal) < limit, "the game did not end within its cap"
        if checks:
            check_step(state, order)
        movers = state.to_move()
        seat = order.choice(movers)
        legal = state.legal(seat)
        intent = dict(order.choice(legal))
        events = state.apply(seat, intent)
        journal.append((seat, intent))
        digests.append(state.digest())
        if checks:
            allowed = face_up(state)
            for viewer in (0, 1, None):
                shown = set(card_strings(state.project_events(events, viewer)))
                flipped_up = {cards.to_str(e["up"]) for e in events if e["type"] == "flip"}
                assert shown <= flipped_up and shown <= allowed | flipped_up
    if checks:
        check_step(state, order)
        assert state.battles <= options["cap"]
        assert state.outcome() is not None and state.to_move() == ()
    return journal, digests


@settings(max_examples=25, deadline=None)
@given(seed=seeds_st, options=options_st, order_seed=st.integers(0, 2**32))
def test_war_invariants_hold_at_every_step(seed: int, options: dict, order_seed: int) -> None:
    play(seed, options, order_seed, checks=True)


@settings(max_examples=25, deadline=None)
@given(seed=seeds_st, options=options_st, order_seed=st.integers(0, 2**32))
def test_war_replay_reproduces_every_digest(seed: int, options: dict, order_seed: int) -> None:
    journal, digests = play(seed, options, order_seed, checks=False)
    state = get_game("war").new_state(seed, options)
    assert state.digest() == digests[0]
    for (seat, intent), digest in zip(journal, digests[1:], strict=True):
        state.apply(seat, intent)
        assert state.digest() == digest


@settings(max_examples=20, deadline=None)
@given(seed=seeds_st, options=options_st)
def test_war_clone_mid_game_continues_identically(seed: int, options: dict) -> None:
    state = get_game("war").new_state(seed, options)
    rng = random.Random(seed)
    for _ in range(rng.randrange(0, 200)):
        if state.outcome() is not None:
            break
        state.apply(state.to_move()[0], FLIP)
    twin = state.clone()
    assert twin.digest() == state.digest()
    while state.outcome() is None:
        seat = state.to_move()[-1]
        state.apply(seat, FLIP)
        twin.apply(seat, FLIP)
        assert twin.digest() == state.digest()
    assert twin.outcome() == state.outcome()
