"""Rulings R0.1..R0.4, for every game: each test runs for "war" and "datastructures".

The datastructures cases skip (with a reason) while ``engine.datastructures``
cannot be imported, and run as soon as it can.

R0.3 is checked two ways: (1) a viewer's view does not change when everything
hidden from that viewer is rearranged (so it cannot depend on it), and (2) the
cards named in a projected event are cards the viewer sees in its view just
before or just after, or cards the event turns face up by rule (``TURNED_UP``). The rearranging needs to know each game's hidden zones:
``SCRAMBLE`` below holds one function per game.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from engine import cards, fairness
from engine.core import GameOver, State
from engine.registry import game_names, get_game

GAME_NAMES = game_names()
#: Options that keep random games short enough for the test budget.
OPTIONS = {"war": {"cap": 150}, "datastructures": {"cap": 40}}


GAMES = GAME_NAMES


def random_game(name: str, seed: int, play_seed: int, *, steps: int | None = None,
                hook: Callable[[State], None] | None = None
                ) -> tuple[State, list[tuple[int, dict]], list[str]]:
    """Play random legal intents (at most ``steps``); return the state, the journal of
    (seat, intent) and the digest after each intent (the first is the start)."""
    state = get_game(name).new_state(seed, OPTIONS[name])
    rng = random.Random(play_seed)
    journal: list[tuple[int, dict]] = []
    digests = [state.digest()]
    while state.outcome() is None and (steps is None or len(journal) < steps):
        if hook is not None:
            hook(state)
        seat = rng.choice(state.to_move())
        intent = dict(rng.choice(state.legal(seat)))
        state.apply(seat, intent)
        journal.append((seat, intent))
        digests.append(state.digest())
    return state, journal, digests


# ------------------------------------------------------------------ R0.1

@pytest.mark.parametrize("name", GAMES)
def test_R0_1_same_seed_and_intents_same_game_bit_for_bit(name: str) -> None:
    for seed in (0, 42, 2**256 - 1):
        _, journal, digests = random_game(name, seed, play_seed=seed % 1000)
        replay = get_game(name).new_state(seed, OPTIONS[name])
        assert replay.digest() == digests[0]
        for (seat, intent), digest in zip(journal, digests[1:], strict=True):
            replay.apply(seat, intent)
            assert replay.digest() == digest
    # The deal depends on the seed: different seeds, different starts.
    starts = {get_game(name).new_state(seed, OPTIONS[name]).digest() for seed in range(20)}
    assert len(starts) == 20


@pytest.mark.parametrize("name", GAMES)
def test_R0_1_one_generator_per_match_no_global_randomness(name: str) -> None:
    # Playing a match leaves the process-wide generator alone...
    random.seed(1234)
    expected = random.random()
    random.seed(1234)
    random_game(name, 77, play_seed=5, steps=300)
    assert random.random() == expected
    # ...and two matches interleaved play exactly as each does alone.
    _, alone, digests = random_game(name, 5, play_seed=9, steps=200)
    a = get_game(name).new_state(5, OPTIONS[name])
    b = get_game(name).new_state(6, OPTIONS[name])
    rng = random.Random(1)
    for (seat, intent), digest in zip(alone, digests[1:], strict=True):
        a.apply(seat, intent)
        assert a.digest() == digest
        if b.outcome() is None:
            s = rng.choice(b.to_move())
            b.apply(s, dict(rng.choice(b.legal(s))))


# ------------------------------------------------------------------ R0.2

@pytest.mark.parametrize("name", GAMES)
def test_R0_2_commitment_reveal_lets_anyone_check_the_deal(name: str) -> None:
    seed = 0x1F2E3D4C5B6A79880123456789ABCDEF00112233445566778899AABBCCDDEEFF
    salt = "a5" * 16
    published = fairness.commitment(seed, salt)
    state, journal, digests = random_game(name, seed, play_seed=3, steps=100)
    # At the end, seed and salt are revealed: they match what was published...
    revealed = fairness.seed_hex(seed)
    assert len(revealed) == 64 and revealed == revealed.lower()
    assert fairness.verify(revealed, salt, published)
    # ...a different seed or salt would not...
    assert not fairness.verify(fairness.seed_hex(seed ^ 1), salt, published)
    assert not fairness.verify(revealed, "a4" + salt[2:], published)
    assert not fairness.verify("not hex", salt, published)
    # ...and the revealed seed alone rebuilds the very same deal and game.
    rebuilt = get_game(name).new_state(int(revealed, 16), OPTIONS[name])
    assert rebuilt.digest() == digests[0]
    for seat, intent in journal:
        rebuilt.apply(seat, intent)
    assert rebuilt.digest() == state.digest()


# ------------------------------------------------------------------ R0.3

def _scramble_war(state: Any, seat: int | None, rng: random.Random) -> None:
    """Rearrange what nobody sees in War: deck orders, deck contents, face-down cards."""
    table = state.table
    down = [i for i, card in enumerate(table) if card is not None and i % 4 < 2]
    pool = list(state.decks[0]) + list(state.decks[1]) + [table[i] for i in down]
    rng.shuffle(pool)
    n0, n1 = len(state.decks[0]), len(state.decks[1])
    state.decks = (deque(pool[:n0]), deque(pool[n0:n0 + n1]))
    for i, card in zip(down, pool[n0 + n1:], strict=True):
        table[i] = card


def _scramble_datastructures(state: Any, seat: int | None, rng: random.Random) -> None:
    """Rearrange what ``seat`` does not see in Data Structures (D10): the deck, the
    face-down recycle pile, and the other hand (both hands for a spectator)."""
    hidden_hands = [s for s in (0, 1) if s != seat]
    pool = state.deck + state.recycle + [c for s in hidden_hands for c in state.hands[s]]
    rng.shuffle(pool)
    sizes = [len(state.deck), len(state.recycle)] + [len(state.hands[s]) for s in hidden_hands]
    parts = []
    for size in sizes:
        parts.append(pool[:size])
        pool = pool[size:]
    state.deck, state.recycle = parts[0], parts[1]
    for s, hand in zip(hidden_hands, parts[2:], strict=True):
        state.hands[s] = hand


SCRAMBLE = {"war": _scramble_war, "datastructures": _scramble_datastructures}


def _strings(value: Any) -> set[str]:
    """Every card string (``"10H"``, ``"QS"``...) anywhere inside a view or event."""
    if isinstance(value, str):
        try:
            cards.from_str(value)
        except ValueError:
            return set()
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize("name", GAMES)
def test_R0_3_views_do_not_depend_on_hidden_cards(name: str) -> None:
    rng = random.Random(2024)
    checked = 0

    def hook(state: State) -> None:
        nonlocal checked
        for viewer in (0, 1, None):
            twin = state.clone()
            SCRAMBLE[name](twin, viewer, rng)
            assert twin.view(viewer) == state.view(viewer), viewer
            checked += 1

    for seed in range(6):
        random_game(name, seed, play_seed=seed, steps=150, hook=hook)
    assert checked > 300


@pytest.mark.parametrize("name", GAMES)
def test_R0_3_views_at_once_are_each_seats_own_view(name: str) -> None:
    """``state.views(seats)`` (a game may share the public parts among them) gives
    each seat exactly ``state.view(seat)``: the same projection, never another's hand."""
    checked = 0

    def hook(state: State) -> None:
        nonlocal checked
        for seats in ((0, 1, None), (1,), (None, 0)):
            assert state.views(seats) == [state.view(s) for s in seats]
            checked += 1

    for seed in range(3):
        random_game(name, seed, play_seed=seed, steps=150, hook=hook)
    with pytest.raises(ValueError):
        get_game(name).new_state(1, OPTIONS[name]).views((0, 2))
    assert checked > 100


#: Cards an event turns face up for everyone by rule, even if they do not stay in
#: sight (a War flip; a Data Structures play, which may close its array at once).
TURNED_UP: dict[str, Callable[[list[dict]], set[str]]] = {
    "war": lambda events: {cards.to_str(e["up"]) for e in events if e["type"] == "flip"},
    "datastructures": lambda events: {e["card"] for e in events if e["type"] == "play"},
}


@pytest.mark.parametrize("name", GAMES)
def test_R0_3_events_name_only_cards_the_viewer_sees(name: str) -> None:
    for seed in range(6):
        state = get_game(name).new_state(seed, OPTIONS[name])
        rng = random.Random(seed)
        for _ in range(200):
            if state.outcome() is not None:
                break
            before = {v: _strings(state.view(v)) for v in (0, 1, None)}
            seat = rng.choice(state.to_move())
            events = state.apply(seat, dict(rng.choice(state.legal(seat))))
            for viewer in (0, 1, None):
                shown = _strings(state.project_events(events, viewer))
                seen = before[viewer] | _strings(state.view(viewer)) | TURNED_UP[name](events)
                assert shown <= seen, (viewer, shown - seen)


# ------------------------------------------------------------------ R0.4

@pytest.mark.parametrize("name", GAMES)
def test_R0_4_a_player_may_resign_at_any_time_and_the_opponent_wins(name: str) -> None:
    for seed in range(12):
        rng = random.Random(seed)
        steps = rng.choice([0, 1, 2, 5, 30, 120])
        state, _, _ = random_game(name, seed, play_seed=seed, steps=steps)
        if state.outcome() is not None:
            continue
        quitter = rng.choice([0, 1])      # to move or not, it makes no difference
        events = state.resign(quitter)
        outcome = state.outcome()
        assert outcome is not None
        assert (outcome.winner, outcome.reason) == (1 - quitter, "resign")
        assert state.to_move() == () and state.legal(0) == state.legal(1) == []
        assert state.view(None)["result"] == {"winner": 1 - quitter, "reason": "resign"}
        assert any(e.get("type") == "resign" for e in state.project_events(events, 1 - quitter))
        with pytest.raises(GameOver):
            state.resign(1 - quitter)
        with pytest.raises(GameOver):
            state.apply(0, {"type": "flip"})
