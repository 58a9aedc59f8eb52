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


def _fit_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "scripts" / "fit_evaluation.py"
    spec = importlib.util.spec_from_file_location("fit_evaluation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_match_positions_are_saved_labelled_and_fitted_by_match(tmp_path, capsys) -> None:
    """Positions of strategy-against-strategy games go to a file and back whole,
    and the fit is scored by match on held-out games."""
    fit = _fit_script()
    rows = list(fit.match_positions("greedy-random", 2, seed=3, iterations=1))
    assert rows and {m for m, _, _, _ in rows} == {"greedy-random"}
    assert all(len(f) == len(FEATURES) and y in (0, 1) for _, _, f, y in rows)
    saved = tmp_path / "positions.jsonl"
    assert fit.main(["--matches", "greedy-random,random-random", "--games", "4",
                     "--iterations", "1", "--seed", "3", "--save", str(saved)]) == 0
    played = capsys.readouterr().out
    back = fit.load_positions([str(saved)])
    assert back[:len(rows)] == rows  # the same seed gives the same games
    assert fit.main(["--load", str(saved)]) == 0
    assert capsys.readouterr().out == played
    assert "greedy-random" in played and "WEIGHTS = (" in played
    with pytest.raises(ValueError):
        list(fit.match_positions("greedy", 1, seed=3, iterations=1))
