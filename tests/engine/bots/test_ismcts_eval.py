"""The learned leaf evaluation of ``ismcts``: symmetric, ordered, final on a finished game."""

from __future__ import annotations

import math
import random

import pytest

from engine.bots.ismcts import EVALUATIONS, ISMCTSStrategy
from engine.bots.ismcts_eval import (
    FEATURES,
    WEIGHTS,
    WIN_LOGIT,
    degree_of,
    features,
    features_and_stage,
    stage,
    staged,
    value,
    win_chance,
)
from engine.registry import get_game
from tests.engine.test_datastructures_support import arrange
from tests.modules import ROOT, load_module

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
    return load_module(ROOT / "scripts" / "fit_evaluation.py")


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


def test_the_stage_is_the_share_of_cards_placed_and_feeds_the_late_features() -> None:
    assert stage(_walk(1, 0)) == 0.0
    state = arrange(hands=(["9D"], ["8D"]), closed=([True, False, False], [False] * 3),
                    arrays=([[], RUN[:6], []], [RUN[:3], [], []]))
    assert stage(state) == pytest.approx((12 + 6 + 3) / 72)
    f, share = features_and_stage(state, 0)
    assert share == stage(state) and f == features(state, 0)
    assert f[FEATURES.index("placed_late")] == pytest.approx(f[0] * share)


def test_weights_by_stage_are_polynomials_in_the_stage() -> None:
    state = _walk(3, 120)
    assert state.outcome() is None
    f, s = features(state, 0), stage(state)
    assert staged(f, s, 0) == f
    assert staged(f, s, 2) == pytest.approx(f + [x * s for x in f] + [x * s * s for x in f])
    # a zero block by stage changes nothing; a constant block adds its stage share
    assert value(state, 0, WEIGHTS + (0.0,) * len(FEATURES)) == pytest.approx(value(state, 0))
    late = (0.0,) * len(FEATURES) + WEIGHTS
    assert value(state, 0, late) == pytest.approx(s * value(state, 0))
    assert value(state, 1, late) == pytest.approx(-value(state, 0, late))
    assert win_chance(state, 0, late) == pytest.approx(2 / (1 + math.exp(-s * value(state, 0))) - 1)
    assert [degree_of(WEIGHTS), degree_of(late)] == [0, 1]
    for bad in ((), WEIGHTS[:-1], WEIGHTS + (1.0,)):
        with pytest.raises(ValueError, match="blocks"):
            degree_of(bad)


def test_the_strategy_takes_other_weights_for_its_learned_evaluations() -> None:
    state = _walk(2, 40)
    zero = ISMCTSStrategy(seed=1, weights=(0.0,) * len(FEATURES))
    assert zero.evaluate(state, 0) == 0.0
    default = ISMCTSStrategy(seed=1)
    assert default.evaluate(state, 0) == ISMCTSStrategy(seed=1, weights=WEIGHTS).evaluate(state, 0)
    with pytest.raises(ValueError, match="blocks"):
        ISMCTSStrategy(seed=1, weights=(1.0, 2.0))
    with pytest.raises(ValueError, match="cards"):
        ISMCTSStrategy(seed=1, evaluation="cards", weights=WEIGHTS)


def test_saved_positions_carry_their_stage_and_fit_by_stage(tmp_path, capsys) -> None:
    """A position's stage is saved with it; by stage its features are staged, today's
    weights (padded) score them as the unstaged ones, and ``--fit-on`` narrows the fit."""
    fit = _fit_script()
    stages: list[float] = []
    rows = list(fit.match_positions("greedy-random", 2, seed=5, iterations=1, stages=stages))
    assert len(stages) == len(rows) and all(0.0 <= x <= 1.0 for x in stages)
    saved = tmp_path / "positions.jsonl"
    assert fit.main(["--matches", "greedy-random,random-greedy", "--games", "4",
                     "--iterations", "1", "--seed", "5", "--save", str(saved)]) == 0
    flat = capsys.readouterr().out
    staged_rows = fit.load_positions([str(saved)], degree=2)
    plain = fit.load_positions([str(saved)])
    assert [len(f) for _, _, f, _ in staged_rows] == [3 * len(FEATURES)] * len(plain)
    assert all(s[2][:len(FEATURES)] == p[2] for s, p in zip(staged_rows, plain, strict=True))
    assert fit.main(["--load", str(saved), "--stage-degree", "2", "--fit-on",
                     "greedy-random"]) == 0
    by_stage = capsys.readouterr().out
    assert "from greedy-random, ridge" in by_stage and "30 weights" in by_stage
    assert "hand*s^2" in by_stage
    # the column of today's weights is the same whatever the form fitted
    today = [line.split()[3] for line in flat.splitlines() if line.strip().startswith(
        ("greedy-random", "random-greedy", "all"))]
    assert today and today == [line.split()[3] for line in by_stage.splitlines()
                               if line.strip().startswith(("greedy-random", "random-greedy",
                                                           "all"))]
    with pytest.raises(ValueError, match="no positions"):
        fit.fit_matches(plain, 0.2, fit_on=["nobody-nobody"])


def test_the_fit_recovers_known_weights_and_its_early_stop_is_converged() -> None:
    fit = _fit_script()
    rng = random.Random(4)
    truth = [1.5, -2.0]
    rows = []
    for _ in range(4000):
        f = [rng.uniform(-1, 1), rng.uniform(-1, 1)]
        p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(truth, f, strict=True))))
        rows.append((f, int(rng.random() < p)))
    w = fit.fit(rows, steps=50)
    assert w == pytest.approx(truth, abs=0.25)
    assert w == pytest.approx(fit.fit(rows, steps=50, tol=0.0), abs=1e-6)  # converged
