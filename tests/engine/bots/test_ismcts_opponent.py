"""The opponent model of ``ismcts``: what the opponent's stacked cards say, from views alone."""

from __future__ import annotations

import copy

import pytest

from engine.bots import Budget, get_strategy
from engine.bots.ismcts import ISMCTSStrategy
from engine.bots.ismcts_opponent import OpponentModel, stack_rank, stacked_card
from engine.playout import play_out
from engine.registry import get_game
from tests.engine.test_datastructures_support import arrange


def _views():
    """Seat 0's view, and a copy where seat 1 has stacked one more card (a 9)."""
    state = arrange(hands=(["5C"], ["2D"]), stacks=(["AD"], ["JH"]),
                    arrays=([[], [], []], [["2H"], ["7S"], []]))
    before = state.view(0)
    now = copy.deepcopy(before)
    now["players"][1]["stack"].append("9S")
    now["turn"] += 2
    return before, now


def test_the_stacked_card_is_the_one_new_on_top_of_the_opponents_stack() -> None:
    before, now = _views()
    assert stacked_card(before, now, 0) == "9S"
    assert stacked_card(before, before, 0) is None  # nothing stacked
    played = copy.deepcopy(now)
    played["players"][1]["stack"] = ["9S"]  # the old top was played, then a card stacked
    assert stacked_card(before, played, 0) is None


def test_stack_rank_is_low_for_cards_greedy_spares_and_high_for_those_it_keeps() -> None:
    _, now = _views()
    assert stack_rank(now, 0, "AS") == 0.0  # an ace costs nothing to stack
    fits = stack_rank(now, 0, "3C")  # the next card of its 2H array
    far = stack_rank(now, 0, "QC")
    assert 0.0 <= far < fits <= 1.0


def _watched_game(opponent: str, seed: int) -> OpponentModel:
    """Seat 0 (greedy) watches ``opponent`` in seat 1 through one game, by its views."""
    model = OpponentModel(threshold=0.24, min_turns=8)
    bots = [get_strategy("greedy", seed), get_strategy(opponent, seed + 1)]
    state = get_game("datastructures").new_state(seed, {})
    last: list = []

    def choose(state, mover, legal):
        view = state.view(mover)
        if mover == 0:
            if last and last[0]["turn"] == view["turn"] - 2:
                model.observe(last[0], view, 0)
            last[:] = [view]
        return bots[mover].choose("datastructures", mover, view, legal)

    play_out(state, choose, max_moves=5000)
    return model


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_greedy_opponent_looks_greedy_and_a_random_one_does_not(seed: int) -> None:
    greedy = _watched_game("greedy", seed)
    assert greedy.turns >= 8 and greedy.greedy_like()
    assert not _watched_game("random", seed).greedy_like()
    assert not OpponentModel(threshold=1.0, min_turns=8).greedy_like()  # nothing seen yet


def test_the_model_sets_the_opponents_priors_during_the_game() -> None:
    """With ``opp_priors`` ``model`` the search takes this world's priors at the
    opponent's nodes only once the opponent's stacked cards looked greedy."""
    seat0 = ISMCTSStrategy(seed=3, opp_priors="model")
    bots = [seat0, get_strategy("greedy", 4)]
    state = get_game("datastructures").new_state(11, {})
    seen = []

    def choose(state, mover, legal):
        pick = bots[mover].choose("datastructures", mover, state.view(mover), legal,
                                  Budget.iterations(4))
        if mover == 0:
            seen.append((seat0._model.turns, seat0.world_priors))
        return pick

    play_out(state, choose, max_moves=5000)
    assert not any(world for turns, world in seen if turns < 8)
    assert any(world for _, world in seen)
