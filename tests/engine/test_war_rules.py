"""War rulings W1..W6 (docs/rules.md names each test), options, errors, projection.

Positions are built by dealing a real state and then setting its decks: every
test keeps all 52 cards in play unless it says otherwise.
"""

from __future__ import annotations

from collections import Counter, deque
from pathlib import Path

import pytest

from engine import cards
from engine.core import BadOption, GameOver, IllegalIntent, NotYourTurn, RuleError
from engine.registry import get_game
from engine.war import WarState
from tests.modules import load_module

FLIP = {"type": "flip"}
ROOT = Path(__file__).resolve().parents[2]


def c(text: str) -> int:
    return cards.from_str(text)


def rest(*used: str) -> list[int]:
    """Every card not named in ``used``, in id order (filler for the bottom of decks)."""
    taken = {c(t) for t in used}
    return [card for card in cards.deck() if card not in taken]


def position(top0: list[str], top1: list[str], *, options: dict | None = None,
             fill: bool = True, seed: int = 7) -> WarState:
    """A state whose decks start with ``top0`` / ``top1``; with ``fill`` the other
    cards are shared out below them so each deck holds 26 when possible."""
    state = get_game("war").new_state(seed, options)
    d0 = [c(t) for t in top0]
    d1 = [c(t) for t in top1]
    if fill:
        spare = rest(*top0, *top1)
        need0 = max(26 - len(d0), 0)
        d0 += spare[:need0]
        d1 += spare[need0:]
    state.decks = (deque(d0), deque(d1))
    return state


def flip_both(state: WarState, order: tuple[int, ...] = (0, 1)) -> list[dict]:
    events: list[dict] = []
    for seat in order:
        if state.legal(seat):
            events += state.apply(seat, FLIP)
    return events


def all_cards(state: WarState) -> Counter:
    return Counter(list(state.decks[0]) + list(state.decks[1]) + state.table_cards())


# ---------------------------------------------------------------- W1

def test_W1_one_52_card_deck_26_each_ranks_2_to_ace_suits_never_matter() -> None:
    game = get_game("war")
    for seed in (0, 1, 2**255 + 12345):
        state = game.new_state(seed)
        assert len(state.decks[0]) == len(state.decks[1]) == 26
        assert sorted(list(state.decks[0]) + list(state.decks[1])) == cards.deck()
        assert state.view(None)["counts"] == [26, 26]
    # Rank order 2 < 3 < ... < 10 < J < Q < K < A: each beats the one below it.
    names = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    for low, high in zip(names, names[1:], strict=False):
        state = position([low + "C"], [high + "D"])
        events = flip_both(state)
        assert events[-1] == {"type": "battle", "battle": 1, "winner": 1}, (low, high)
    # Suits never matter: the same rank in any two suits is a tie (a war).
    for s0, s1 in (("S", "C"), ("C", "S"), ("H", "D")):
        state = position(["Q" + s0], ["Q" + s1])
        events = flip_both(state)
        assert events[-1]["type"] == "war"


# ---------------------------------------------------------------- W2

def test_W2_higher_rank_takes_both_equal_starts_a_war_repeated_while_equal() -> None:
    # Battle: higher rank takes both.
    state = position(["9H"], ["4S"])
    flip_both(state)
    assert state.last is not None and state.last[1] == 0
    assert len(state.decks[0]) == 27 and len(state.decks[1]) == 25
    assert {c("9H"), c("4S")} <= set(state.decks[0])

    # Tie, then a second tie (double war), then 3 beats 2: seat 1 takes all 10 cards.
    top0 = ["7C", "AD", "KH", "QD", "2C"]
    top1 = ["7S", "AS", "KS", "QS", "3C"]
    state = position(top0, top1)
    events = flip_both(state)
    assert events[-1] == {"type": "war", "battle": 1, "step": 1}
    assert state.legal(0) == [FLIP] and state.legal(1) == [FLIP]
    view = state.view(0)
    assert view["war"] == 1 and view["table"] == [["7C"], ["7S"]]
    events = flip_both(state)
    # One face-down card then one face-up card each.
    assert [e["type"] for e in events] == ["flip", "flip", "war"]
    assert events[0]["down"] == c("AD") and events[0]["up"] == c("KH")
    assert state.view(1)["table"] == [["7C", "back", "KH"], ["7S", "back", "KS"]]
    assert state.view(1)["up"] == ["KH", "KS"]
    events = flip_both(state)
    assert events[-1] == {"type": "battle", "battle": 1, "winner": 1, "cards": 10, "wars": 2}
    assert len(state.decks[1]) == 26 - 5 + 10 and len(state.decks[0]) == 21
    assert {c(t) for t in top0 + top1} <= set(state.decks[1])
    assert state.wars == 2 and state.battles == 1 and state.battle == 2


# ---------------------------------------------------------------- W3

def test_W3_return_played_winner_card_first_at_each_step() -> None:
    top0 = ["7C", "2D", "3H"]
    top1 = ["7S", "AS", "KS"]
    state = position(top0, top1, options={"return": "played"})
    flip_both(state)
    flip_both(state, order=(1, 0))      # the order of flips does not change the pile order
    bottom = [cards.to_str(x) for x in list(state.decks[1])[-6:]]
    # Winner is seat 1: its card before seat 0's at each placing, in table order.
    assert bottom == ["7S", "7C", "AS", "2D", "KS", "3H"]
    # A plain battle, won by either seat: the winner's card goes under first.
    for top0, top1, winner, order in ((["9H"], ["4S"], 0, ["9H", "4S"]),
                                      (["4S"], ["9H"], 1, ["9H", "4S"])):
        state = position(top0, top1, options={"return": "played"})
        flip_both(state, order=(1, 0))
        assert [cards.to_str(x) for x in list(state.decks[winner])[-2:]] == order


def test_W3_return_shuffled_uses_the_match_generator_and_varies() -> None:
    top0 = ["7C", "2D", "3H"]
    top1 = ["7S", "AS", "KS"]
    seen = set()
    for seed in range(40):
        state = position(top0, top1, seed=seed)
        flip_both(state)
        flip_both(state)
        bottom = tuple(list(state.decks[1])[-6:])
        assert sorted(bottom) == sorted(c(t) for t in top0 + top1)
        seen.add(bottom)
        # Replaying the same seed gives the same order: only the match generator decides.
        again = position(top0, top1, seed=seed)
        flip_both(again)
        flip_both(again)
        assert tuple(list(again.decks[1])[-6:]) == bottom
    assert len(seen) > 20     # 720 orders; a fixed order would show up as one


def test_W3_pile_goes_to_the_bottom_of_the_winner_deck() -> None:
    state = position(["AC"], ["2C"])
    before = list(state.decks[0])[1:]
    flip_both(state)
    assert list(state.decks[0])[:25] == before
    assert set(list(state.decks[0])[25:]) == {c("AC"), c("2C")}


# ---------------------------------------------------------------- W4

def _mirror_decks() -> tuple[list[str], list[str]]:
    """Two 26-card decks whose cards tie rank for rank at every position."""
    d0 = [f"{cards.RANK_NAMES[r]}C" for r in range(2, 15)] + \
         [f"{cards.RANK_NAMES[r]}D" for r in range(2, 15)]
    d1 = [f"{cards.RANK_NAMES[r]}H" for r in range(2, 15)] + \
         [f"{cards.RANK_NAMES[r]}S" for r in range(2, 15)]
    return d0, d1


def test_W4_one_card_left_in_a_war_is_played_face_up_and_stands() -> None:
    # Seat 0 holds 2 cards: after the tie it has one, played face up (no face-down).
    state = position(["5H", "7C"], ["5D", "9S", "3C"], fill=False)
    state.decks[1].extend(rest("5H", "7C", "5D", "9S", "3C"))
    flip_both(state)
    events = flip_both(state)
    assert "down" not in events[0] and events[0]["up"] == c("7C")
    assert events[1]["down"] == c("9S") and events[1]["up"] == c("3C")
    assert events[-1]["winner"] == 0
    assert state.last is not None
    assert state.view(None)["last"]["table"] == [["5H", "7C"], ["5D", "back", "3C"]]


def test_W4_no_card_left_the_last_face_up_card_stands_for_the_rest_of_the_war() -> None:
    # Seat 0's only card ties; it has nothing left, so its 5H stands while seat 1 plays on.
    state = position(["5H"], ["5D", "KS", "5C", "2S", "9D"], fill=False)
    state.decks[1].extend(rest("5H", "5D", "KS", "5C", "2S", "9D"))
    flip_both(state)
    assert state.to_move() == (1,)
    assert state.legal(0) == [] and state.default_intent(0) is None
    with pytest.raises(NotYourTurn) as err:
        state.apply(0, FLIP)
    assert err.value.rule == "W6"
    view = state.view(0)
    assert view["stands"] == [True, False] and view["waiting"] == [1]
    events = state.apply(1, FLIP)        # KS down, 5C up: ties the standing 5H again
    assert events[-1]["type"] == "war" and state.to_move() == (1,)
    events = state.apply(1, FLIP)        # 2S down, 9D up: beats the standing 5H
    assert [e["type"] for e in events] == ["flip", "battle", "game_over"]
    assert events[1]["winner"] == 1 and events[1]["cards"] == 6
    assert state.outcome() is not None and state.outcome().winner == 1
    assert state.outcome().reason == "all_cards"


def test_W4_both_run_out_at_the_same_moment_is_a_draw() -> None:
    d0, d1 = _mirror_decks()
    state = position(d0, d1, fill=False)
    steps = 0
    while state.outcome() is None:
        flip_both(state)
        steps += 1
    assert state.outcome().winner is None and state.outcome().reason == "exhausted"
    # 1 battle flip + 12 war steps of two cards + one last card face up = 14 steps.
    assert steps == 14
    assert len(state.table_cards()) == 52 and state.battles == 0


def test_W4_variant_short_war_lose_too_few_cards_for_a_war_loses_at_once() -> None:
    state = position(["5H", "7C"], ["5D", "9S", "3C"], options={"short_war": "lose"},
                     fill=False)
    state.decks[1].extend(rest("5H", "7C", "5D", "9S", "3C"))
    events = flip_both(state)
    assert events[-1] == {"type": "game_over", "winner": 1, "reason": "short_war"}
    assert state.outcome().winner == 1
    assert state.legal(0) == state.legal(1) == []
    # Same position under the default: the war is played out instead.
    state = position(["5H", "7C"], ["5D", "9S", "3C"], fill=False)
    state.decks[1].extend(rest("5H", "7C", "5D", "9S", "3C"))
    flip_both(state)
    assert state.outcome() is None and state.to_move() == (0, 1)


def test_W4_variant_short_war_lose_both_short_is_a_draw() -> None:
    d0, d1 = _mirror_decks()
    state = position(d0, d1, options={"short_war": "lose"}, fill=False)
    while state.outcome() is None:
        flip_both(state)
    assert state.outcome().winner is None and state.outcome().reason == "short_war"
    assert len(state.table_cards()) == 50   # the last card each was never needed


# ---------------------------------------------------------------- W5

def test_W5_game_ends_when_one_player_has_all_52_cards() -> None:
    state = position(["AS"], ["2H"], fill=False)
    state.decks[0].extend(rest("AS", "2H"))
    events = flip_both(state)
    assert events[-1] == {"type": "game_over", "winner": 0, "reason": "all_cards"}
    assert len(state.decks[0]) == 52 and state.to_move() == ()
    assert state.battles == 1
    with pytest.raises(GameOver):
        state.apply(0, FLIP)


def test_W5_cap_ends_the_game_more_cards_wins_equal_is_a_draw() -> None:
    # cap 1: one battle, 27 cards against 25.
    state = position(["AS"], ["2H"], options={"cap": 1})
    events = flip_both(state)
    assert events[-1] == {"type": "game_over", "winner": 0, "reason": "cap"}
    assert state.view(None)["result"] == {"winner": 0, "reason": "cap"}
    # cap 2: one battle each way, 26 against 26: a draw.
    state = position(["AS", "2D"], ["2H", "AH"], options={"cap": 2})
    flip_both(state)
    assert state.outcome() is None
    flip_both(state)
    assert state.outcome() is not None
    assert (state.outcome().winner, state.outcome().reason) == (None, "cap")
    assert state.battles == 2


def test_W5_cap_default_and_bounds() -> None:
    game = get_game("war")
    assert game.normalize_options(None)["cap"] == 10000
    assert game.new_state(3, {"cap": 1}).view(None)["cap"] == 1
    for bad in (0, -3, "10", 2.5, True):
        with pytest.raises(BadOption):
            game.new_state(3, {"cap": bad})
    # With a cap, every game ends by battle ``cap`` at the latest.
    for seed in range(30):
        state = game.new_state(seed, {"cap": 25, "return": "played"})
        while state.outcome() is None:
            flip_both(state)
        assert state.battles <= 25


# ---------------------------------------------------------------- W6

def test_W6_flip_is_the_only_intent_either_order_resolves_when_both_have() -> None:
    game = get_game("war")
    for order in ((0, 1), (1, 0)):
        state = game.new_state(99)
        assert state.legal(0) == [FLIP] and state.legal(1) == [FLIP]
        assert state.default_intent(0) == FLIP == state.default_intent(1)
        first, second = order
        events = state.apply(first, FLIP)
        assert [e["type"] for e in events] == ["flip"]          # not resolved yet
        assert state.battles == 0 and state.to_move() == (second,)
        assert state.legal(first) == [] and state.default_intent(first) is None
        with pytest.raises(NotYourTurn):
            state.apply(first, FLIP)
        assert state.view(None)["flipped"] == [first == 0, first == 1]
        events = state.apply(second, FLIP)
        assert events[-1]["type"] in ("battle", "war")
    # Either order leads to the same state.
    a, b = game.new_state(5), game.new_state(5)
    for _ in range(50):
        flip_both(a, (0, 1))
        flip_both(b, (1, 0))
        assert a.digest() == b.digest()
    # Anything but exactly {"type": "flip"} is refused, and refusing changes nothing.
    state = game.new_state(5)
    before = state.digest()
    for bad in ({}, {"type": "Flip"}, {"type": "flip", "x": 1}, {"type": "play"}, "flip",
                None, [FLIP]):
        with pytest.raises(IllegalIntent) as err:
            state.apply(0, bad)  # type: ignore[arg-type]
        assert err.value.code == "illegal_intent" and err.value.rule == "W6"
    assert state.digest() == before


# ------------------------------------------------------------ errors etc.

def test_bad_seats_and_options_are_refused_with_codes() -> None:
    game = get_game("war")
    state = game.new_state(5)
    for seat in (2, -1, None, "0"):
        with pytest.raises(IllegalIntent):
            state.apply(seat, FLIP)  # type: ignore[arg-type]
        assert state.legal(seat) == []  # type: ignore[arg-type]
    for seat in (2, -1, True, "0"):
        with pytest.raises(ValueError):
            state.view(seat)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            state.project_events([], seat)  # type: ignore[arg-type]
    with pytest.raises(BadOption) as err:
        game.new_state(5, {"colour": "red"})
    assert err.value.code == "bad_option"
    for name, value in (("return", "random"), ("short_war", "win")):
        with pytest.raises(BadOption):
            game.new_state(5, {name: value})
    for seed in (-1, 2**256, "1", 1.0):
        with pytest.raises(ValueError):
            game.new_state(seed)  # type: ignore[arg-type]
    assert issubclass(BadOption, RuleError)


def test_options_are_described_for_the_games_listing() -> None:
    described = get_game("war").describe()
    assert described["name"] == "war" and described["seats"] == 2
    options = {o["name"]: o for o in described["options"]}
    assert options["return"]["default"] == "shuffled"
    assert options["return"]["choices"] == ["shuffled", "played"]
    assert options["short_war"]["choices"] == ["stand", "lose"]
    assert options["cap"] == {"name": "cap", "kind": "int", "default": 10000, "min": 1,
                              "max": 1_000_000, "doc": options["cap"]["doc"]}


def test_forfeit_and_resign_end_the_game_once() -> None:
    state = get_game("war").new_state(8)
    state.apply(1, FLIP)
    events = state.forfeit(1, "timeout")
    assert events == [{"type": "forfeit", "seat": 1, "reason": "timeout"},
                      {"type": "game_over", "winner": 0, "reason": "timeout"}]
    assert state.to_move() == () and state.legal(0) == []
    with pytest.raises(GameOver):
        state.resign(0)
    assert state.project_events(events, None) == events


def test_view_shows_the_last_battle_and_event_projection_hides_face_down_cards() -> None:
    state = position(["7C", "AD", "KH"], ["7S", "AS", "2S"])
    flip_both(state)
    events = flip_both(state)
    for seat in (0, 1, None):
        projected = state.project_events(events, seat)
        assert projected[0] == {"type": "flip", "seat": 0, "up": "KH", "down": "back"}
        assert projected[1] == {"type": "flip", "seat": 1, "up": "2S", "down": "back"}
        assert projected[2] == {"type": "battle", "battle": 1, "winner": 0, "cards": 6,
                                "wars": 1}
        view = state.view(seat)
        assert view["seat"] == seat
        assert view["last"] == {"battle": 1, "winner": 0, "wars": 1, "up": ["KH", "2S"],
                                "table": [["7C", "back", "KH"], ["7S", "back", "2S"]]}
        assert view["table"] == [[], []] and view["battle"] == 2 and view["battles"] == 1
        assert "AD" not in repr(view) and "AS" not in repr(view) + repr(projected)
    assert state.project_events([{"type": "secret", "card": 3}], 0) == []


def test_clone_is_independent_and_digest_tracks_the_generator() -> None:
    state = get_game("war").new_state(11)
    flip_both(state)
    twin = state.clone()
    assert twin.digest() == state.digest()
    for _ in range(30):
        flip_both(twin)
    assert twin.digest() != state.digest()
    for _ in range(30):
        flip_both(state)
    assert twin.digest() == state.digest()
    other = state.clone()
    other.rng.randbelow(7)              # only the generator differs
    assert other.digest() != state.digest()
    assert all_cards(state) == Counter(cards.deck())


def _bare_game():
    return load_module(ROOT / "scripts" / "bench_war.py")


@pytest.mark.parametrize("options", [
    {}, {"return": "played", "cap": 400}, {"short_war": "lose"},
    {"return": "played", "short_war": "lose", "cap": 60},
])
def test_engine_plays_the_same_games_as_the_independent_bare_loop(options: dict) -> None:
    bench = _bare_game()
    kwargs = {"cap": options.get("cap", 10000), "played": options.get("return") == "played",
              "lose": options.get("short_war") == "lose"}
    for seed in range(40):
        assert bench.engine_game(seed, options) == bench.bare_game(seed, **kwargs), seed
