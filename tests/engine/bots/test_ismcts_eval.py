"""The learned leaf evaluation of ``ismcts``: symmetric, ordered, final on a finished game."""

from __future__ import annotations

import random

import pytest

from engine.bots.ismcts import EVALUATIONS, ISMCTSStrategy
from engine.bots.ismcts_eval import FEATURES, WEIGHTS, WIN_LOGIT, features, value
from engine.registry import get_game
from tests.engine.test_datastructures_support import arrange

RUN = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC"]


def _walk(seed: int, moves: int):
    state = get_game("datastructures").new_state(seed, {})
    rng = random.Random(seed)
    for _ in range(moves):
        if state.outcome() is not None:
            break
        state.apply(state.current, rng.choice(state.legal(state.current)))
    return state


def test_one_weight_per_feature() -> None:
    assert len(WEIGHTS) == len(FEATURES) == len(features(_walk(1, 0), 0))


@pytest.mark.parametrize("seed,moves", [(1, 0), (2, 40), (3, 120), (4, 250)])
def test_one_seats_value_is_minus_the_others(seed: int, moves: int) -> None:
    state = _walk(seed, moves)
    if state.outcome() is None:
        assert value(state, 0) == pytest.approx(-value(state, 1))
        assert features(state, 0) == pytest.approx([-x for x in features(state, 1)])


def _run(suit: str, n: int) -> list[str]:
    return [c[:-1] + suit for c in RUN[:n]]


def test_more_cards_on_the_arrays_is_worth_more() -> None:
    hands = (["9D", "JD", "QD", "KD", "AS"], ["8D", "10D", "AD", "AC", "AH"])
    three = [_run(s, 3) for s in "CSH"]
    behind = arrange(hands=hands, arrays=(three, three))
    ahead = arrange(hands=hands, arrays=([_run(s, 6) for s in "CSH"], three))
    assert value(ahead, 0) > value(behind, 0) + 0.5
    assert value(ahead, 1) < value(behind, 1) - 0.5


def test_a_finished_game_scores_its_result() -> None:
    state = arrange(hands=(["KS", "5D"], ["2D"]), closed=([True, True, False], [False] * 3),
                    arrays=([[], [], RUN[:-1]], [[], [], []]))
    state.apply(0, {"type": "play", "src": "hand", "index": 0, "array": 2})
    assert state.outcome().winner == 0
    assert value(state, 0) == WIN_LOGIT and value(state, 1) == -WIN_LOGIT


def test_the_strategy_names_its_evaluation() -> None:
    assert set(EVALUATIONS) == {"cards", "learned", "winprob"}
    with pytest.raises(ValueError, match="evaluation"):
        ISMCTSStrategy(seed=1, evaluation="oracle")
