"""Property tests of the Data Structures engine over many seeds with random legal play.

Every game is played by seats choosing uniformly among ``legal``; at every step
we check the property under test. Hypothesis picks the match seed, the players'
seed and the cap.
"""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core import IllegalIntent, NotYourTurn
from engine.datastructures import DSState, determinize
from engine.datastructures.deck import NAME
from tests.engine.test_datastructures_support import GAME, all_cards, assert_conserved

SEEDS = st.integers(min_value=0, max_value=2**256 - 1)
PLAYER_SEEDS = st.integers(min_value=0, max_value=2**32)
FEW = settings(max_examples=12, deadline=None)
MANY = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=15, deadline=None)

ALL_FACES = {NAME[c] for c in range(104)}


def random_game(seed: int, player_seed: int, cap: int = 500):
    """Yield (state, seat, intent) before each step of one random game, then apply it."""
    state = GAME.new_state(seed, {"cap": cap})
    rng = random.Random(player_seed)
    while state.outcome() is None:
        (seat,) = state.to_move()
        intent = rng.choice(state.legal(seat))
        yield state, seat, intent
        state.apply(seat, intent)
    yield state, None, None


def typed(intent: dict) -> tuple:
    return tuple(sorted((k, type(v).__name__, repr(v)) for k, v in intent.items()))


def candidate_intents(rng: random.Random) -> list[dict]:
    """A sample of intents from the whole intent space, legal or not."""
    idx = [-1, 0, 1, 2, 3, 4, 5, 6, True, "0", None]
    out = []
    for _ in range(12):
        kind = rng.choice(["play", "mulligan", "end_phase", "stack", "enqueue", "end_turn",
                           "flip", None])
        if kind == "play":
            src = rng.choice(["hand", "queue", "stack", "deck"])
            intent = {"type": kind, "src": src, "array": rng.choice(idx)}
            if src in ("hand", "deck"):
                intent["index"] = rng.choice(idx)
            if src == "stack":
                intent["stack"] = rng.choice(idx)
        elif kind == "mulligan":
            intent = {"type": kind, "keep": rng.choice(idx)}
        elif kind in ("stack", "enqueue"):
            intent = {"type": kind, "index": rng.choice(idx)}
        else:
            intent = {"type": kind}
        if rng.random() < 0.1:
            intent["extra"] = 1
        out.append(intent)
    return out


@MANY
@given(seed=SEEDS, player_seed=PLAYER_SEEDS)
def test_card_conservation_at_every_step(seed, player_seed):
    for state, _seat, _intent in random_game(seed, player_seed):
        assert_conserved(state)
        # the view adds up to 104 as well
        view = state.view(None)
        counted = (view["deck"] + view["recycle"] + len(view["queue"]) + len(view["discard"])
                   + sum(view["hand_counts"]))
        for p in view["players"]:
            counted += len(p["stack"]) + sum(len(a["cards"]) for a in p["arrays"])
        assert counted == 104


@settings(max_examples=8, deadline=None)
@given(seed=SEEDS, player_seed=PLAYER_SEEDS)
def test_legal_agrees_with_apply(seed, player_seed):
    probe = random.Random(player_seed ^ 0x5EED)
    for state, seat, _intent in random_game(seed, player_seed):
        if seat is None:
            for s in (0, 1):
                assert state.legal(s) == []
            break
        legal = state.legal(seat)
        assert legal and state.to_move() == (seat,)
        assert state.legal(1 - seat) == []
        before = state.digest()
        for intent in legal:
            state.clone().apply(seat, intent)  # must not raise
        assert state.digest() == before, "applying on a clone changed the original"
        listed = {typed(i) for i in legal}
        for intent in candidate_intents(probe):
            if typed(intent) in listed:
                continue
            try:
                state.apply(seat, intent)
            except IllegalIntent:
                pass
            else:
                raise AssertionError(f"unlisted intent accepted: {intent}")
            assert state.digest() == before
        try:
            state.apply(1 - seat, legal[0])
        except NotYourTurn:
            pass
        else:
            raise AssertionError("the seat not to move was accepted")
        assert state.default_intent(seat) in legal
        assert state.default_intent(1 - seat) is None


def visible(state: DSState, seat: int | None) -> Counter:
    """Card strings ``seat`` may see now (public piles, own hand)."""
    cards = state.queue + state.discard + state.stacks[0] + state.stacks[1]
    for s in (0, 1):
        for arr in state.arrays[s]:
            cards = cards + arr
    if seat is not None:
        cards = cards + state.hands[seat]
    return Counter(NAME[c] for c in cards)


def card_strings(obj) -> Counter:
    """Every card string anywhere inside a JSON-like value."""
    out: Counter = Counter()
    if isinstance(obj, str):
        if obj in ALL_FACES:
            out[obj] += 1
    elif isinstance(obj, dict):
        for value in obj.values():
            out += card_strings(value)
    elif isinstance(obj, list):
        for value in obj:
            out += card_strings(value)
    return out


@FEW
@given(seed=SEEDS, player_seed=PLAYER_SEEDS)
def test_projection_never_shows_hidden_cards(seed, player_seed):
    state = GAME.new_state(seed)
    rng = random.Random(player_seed)
    while state.outcome() is None:
        (seat,) = state.to_move()
        before = {s: visible(state, s) for s in (0, 1, None)}
        events = state.apply(seat, rng.choice(state.legal(seat)))
        for s in (0, 1, None):
            view = state.view(s)
            json.dumps(view)  # plain data only
            reveal = view.pop("last_mulligan")
            assert card_strings(view) == visible(state, s), "view shows a card it may not"
            if reveal is not None:
                assert reveal == state.last_mulligan
            allowed = set(before[s]) | set(visible(state, s))
            if any(e["type"] == "close" for e in events):
                # D4: the card that completes an array is seen face up, then the
                # array turns face down; that play may name it.
                allowed |= {e["card"] for e in events if e["type"] == "play"}
            projected = state.project_events(events, s)
            json.dumps(projected)
            for event in projected:
                if event["type"] == "mulligan":
                    continue  # D6: the revealed hand is public by rule
                if event["type"] == "draw" and event["seat"] != s:
                    assert "cards" not in event
                for card in card_strings(event):
                    assert card in allowed, (s, event)
            assert "deck_order" not in json.dumps(projected)


@MANY
@given(seed=SEEDS, player_seed=PLAYER_SEEDS, cap=st.integers(min_value=1, max_value=60))
def test_every_game_ends_within_its_cap(seed, player_seed, cap):
    steps = 0
    for state, _seat, _intent in random_game(seed, player_seed, cap):
        steps += 1
        assert state.turn <= cap
        assert steps < 2000 * cap
    assert state.outcome() is not None
    if state.outcome().reason == "cap":
        assert state.turn == cap


@SOME
@given(seed=SEEDS, player_seed=PLAYER_SEEDS)
def test_replay_reproduces_every_digest(seed, player_seed):
    journal, digests = [], []
    for state, seat, intent in random_game(seed, player_seed):
        digests.append(state.digest())
        if seat is not None:
            journal.append((seat, intent))
    replay = GAME.new_state(seed)
    assert replay.digest() == digests[0]
    for (seat, intent), digest in zip(journal, digests[1:], strict=True):
        replay.apply(seat, intent)
        assert replay.digest() == digest


@SOME
@given(seed=SEEDS, player_seed=PLAYER_SEEDS, sample_seed=PLAYER_SEEDS)
def test_determinize_builds_a_consistent_state(seed, player_seed, sample_seed):
    rng = random.Random(sample_seed)
    for n, (state, seat, _intent) in enumerate(random_game(seed, player_seed)):
        if n % 17 and seat is not None:
            continue
        for who in (0, 1):
            view = state.view(who)
            guess = determinize(view, who, rng)
            assert_conserved(guess)
            assert guess.view(who) == view
            assert guess.legal(who) == state.legal(who)
            assert guess.to_move() == state.to_move()
            hidden = Counter(NAME[c] for c in state.hands[1 - who] + state.deck + state.recycle)
            sampled = Counter(NAME[c] for c in guess.hands[1 - who] + guess.deck + guess.recycle)
            assert hidden == sampled  # the same unseen cards, redistributed
            # ...and the guess plays on like any state.
            play = random.Random(n)
            for _ in range(20):
                if guess.outcome() is not None:
                    break
                (s,) = guess.to_move()
                guess.apply(s, play.choice(guess.legal(s)))
                assert len(all_cards(guess)) == 104


def test_clone_is_independent():
    state = GAME.new_state(99)
    copy = state.clone()
    assert copy.digest() == state.digest()
    rng = random.Random(1)
    for _ in range(300):
        if copy.outcome() is not None:
            break
        (s,) = copy.to_move()
        copy.apply(s, rng.choice(copy.legal(s)))
    assert state.digest() == GAME.new_state(99).digest()
    # two clones that both shuffle stay in step with a fresh replay
    a, b = state.clone(), state.clone()
    for st_ in (a, b):
        rng = random.Random(5)
        while st_.outcome() is None:
            (s,) = st_.to_move()
            st_.apply(s, rng.choice(st_.legal(s)))
    assert a.digest() == b.digest()
