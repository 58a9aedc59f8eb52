"""The opponent model of ``ismcts``: what the opponent's stacked cards say, from views alone."""

from __future__ import annotations

import copy
import random

import pytest

from engine.bots import Budget, get_strategy
from engine.bots.greedy import choose_on_board
from engine.bots.ismcts import ISMCTSStrategy
from engine.bots.ismcts_opponent import (
    RANK_LLR,
    OpponentModel,
    RankLikelihood,
    stack_rank,
    stacked_card,
)
from engine.bots.ismcts_tree import Node, distinct_moves, move_key
from engine.bots.search import board_from_state
from engine.datastructures.deck import VALUE
from engine.playout import play_out
from engine.registry import get_game
from tests.engine.bots.test_ismcts import _reach
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


def test_the_model_keeps_every_rank_in_order() -> None:
    before, now = _views()
    model = OpponentModel(threshold=0.24, min_turns=0)
    assert model.greedy_like()  # no card seen, no minimum: taken for greedy
    model.observe(before, now, 0)
    assert model.ranks == [stack_rank(now, 0, "9S")] and model.turns == 1
    model.observe(before, before, 0)  # nothing stacked: nothing counted
    assert model.turns == 1
    high = OpponentModel(threshold=model.ranks[0] - 0.01, min_turns=0)
    high.observe(before, now, 0)
    assert not high.greedy_like()


def _forced_game(opp_priors: str, opponent: str = "greedy", seed: int = 11):
    """Seat 0 (``ismcts``, 6 worlds a move) against ``opponent`` for 60 intents:
    seat 0's picks, each with whether it forced the opponent."""
    seat0 = ISMCTSStrategy(seed=3, opp_priors=opp_priors, opp_model_turns=0)
    bots = [seat0, get_strategy(opponent, 4)]
    state = get_game("datastructures").new_state(seed, {})
    picks = []
    for _ in range(60):
        if state.outcome() is not None:
            break
        mover = state.current
        pick = bots[mover].choose("datastructures", mover, state.view(mover),
                                  state.legal(mover), Budget.iterations(6))
        if mover == 0:
            picks.append((pick, seat0.forced))
        state.apply(mover, pick)
    return picks


def test_forcing_greedy_changes_play_against_a_greedy_history() -> None:
    """Against ``greedy`` the model says greedy from the start, so with ``forced``
    the search forces the opponent at every decision, and the seat plays otherwise
    than with the stored priors on the same seeds."""
    forced = _forced_game("forced")
    stored = _forced_game("stored")
    assert all(on for _, on in forced) and not any(on for _, on in stored)
    assert [p for p, _ in forced] != [p for p, _ in stored]


def test_forcing_stops_when_the_stacked_cards_are_not_greedys() -> None:
    """A random opponent stacks dear cards: the model soon says not greedy and the
    search forces nothing."""
    picks = _forced_game("forced", opponent="random", seed=5)
    assert picks[0][1]  # taken for greedy until a card is seen
    assert not picks[-1][1]


def test_a_forced_opponent_node_follows_greedys_choice_in_this_world() -> None:
    """At an opponent's node whose only child is another move (and which may not
    widen), the forced search enters greedy's choice in this world instead."""
    state = _reach_opponent_choice()
    world = state.clone()
    hand = [VALUE[c] for c in world.hands[1]]
    moves = distinct_moves(world.legal_moves(1), hand)
    for forced in (True, False):
        strategy = ISMCTSStrategy(seed=1, opp_priors="forced")
        strategy.forced = forced
        twin = random.Random()
        twin.setstate(strategy.rng.getstate())
        greedy = move_key(choose_on_board(board_from_state(world, 1), list(moves.values()),
                                          twin), hand)
        other = next(k for k in moves if k != greedy)
        node = Node()
        seen = node.add_child(other, 1, 0.0)
        seen.visits = seen.avails = 1
        seen.reward = 0.5
        path = strategy._descend(node, world.clone(), None, world.turn + 1, 0)
        assert path[0].key == (greedy if forced else other)


def _reach_opponent_choice():
    """A state where seat 1 is to move with at least two distinct moves."""
    for walk in range(100):
        state = _reach(7, 20 + walk, walk)
        if state.outcome() is None and state.current == 1:
            world = state.clone()
            hand = [VALUE[c] for c in world.hands[1]]
            if len(distinct_moves(world.legal_moves(1), hand)) > 1:
                return state
    raise AssertionError("no such state")


def _stacking_views(card: str):
    """Seat 0's view before and after seat 1 stacked ``card`` on its ``JH`` stack."""
    before, now = _views()
    now["players"][1]["stack"][-1] = card
    return before, now


def test_the_likelihood_detector_takes_cheap_stacked_cards_for_greedys() -> None:
    """Aces (nothing is cheaper) raise the log-odds of greedy up to the bound; the
    card greedy would keep most lowers them below 0; a turn without a stacked
    card changes nothing."""
    model = RankLikelihood(prior=0.5, bound=4.0)
    assert model.greedy_like()
    before, ace = _stacking_views("AS")
    for _ in range(10):
        model.observe(before, ace, 0)
    assert model.log_odds == 4.0 and model.turns == 10 and model.ranks[0] == 0.0
    _, dear = _stacking_views("3C")  # the next card of its 2H array
    assert stack_rank(dear, 0, "3C") >= 8 / 13
    for _ in range(2):
        model.observe(before, dear, 0)
        assert model.greedy_like()
    model.observe(before, dear, 0)
    assert not model.greedy_like()
    assert model.log_odds == pytest.approx(4.0 + 3 * RANK_LLR[-1])
    model.observe(before, before, 0)
    assert model.turns == 13
    with pytest.raises(ValueError, match="opp_detector"):
        ISMCTSStrategy(opp_priors="model", opp_detector="psychic")


def test_the_likelihood_detector_sets_the_world_priors_in_play() -> None:
    """With ``opp_detector`` ``llr``, world priors are on from the first decision
    against ``greedy`` and off by the end against ``random``."""
    for opponent, expect in (("greedy", True), ("random", False)):
        seat0 = ISMCTSStrategy(seed=3, opp_priors="model", opp_detector="llr")
        bots = [seat0, get_strategy(opponent, 4)]
        state = get_game("datastructures").new_state(5, {})
        seen = []
        while state.outcome() is None and len(seen) < 60:
            mover = state.current
            pick = bots[mover].choose("datastructures", mover, state.view(mover),
                                      state.legal(mover), Budget.iterations(3))
            if mover == 0:
                seen.append(seat0.world_priors)
            state.apply(mover, pick)
        assert seen[0] and seen[-1] == expect
