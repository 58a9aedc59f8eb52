"""The ``ismcts`` strategy's policy fitted to a stronger search (``priors``/``playout`` expert)."""

from __future__ import annotations

import random

import pytest

from engine.bots import ismcts_expert
from engine.bots.ismcts import ISMCTSStrategy
from engine.bots.ismcts_expert import (
    FEATURES,
    N_FEATURES,
    expert_choice,
    expert_priors,
    features,
    probabilities,
)
from engine.bots.ismcts_policy import greedy_priors
from engine.bots.ismcts_tree import distinct_moves
from engine.bots.search import board_from_state
from tests.engine.bots.test_ismcts import _reach

#: A policy that is greedy: all its weight on greedy's own favourite.
GREEDY_ONLY = (5.0,) + (0.0,) * (N_FEATURES - 1)


def _decisions(count: int):
    """(state, mover, distinct moves, board) at decisions with a choice, every phase."""
    out = []
    for seed in range(40):
        state = _reach(seed, (seed * 37) % 300, seed + 9)
        if state.outcome() is not None:
            continue
        mover = state.current
        board = board_from_state(state, mover)
        moves = distinct_moves(state.legal_moves(mover), board.hand)
        if len(moves) > 1:
            out.append((state, mover, moves, board))
        if len(out) == count:
            break
    return out


def test_features_describe_every_move_and_mark_greedys_favourites() -> None:
    kinds = set()
    for _, _, moves, board in _decisions(25):
        f = features(board, moves)
        greedy = greedy_priors(board, moves)
        assert set(f) == set(moves)
        assert all(len(v) == N_FEATURES == len(FEATURES) for v in f.values())
        top = max(greedy.values())
        assert {k for k, v in f.items() if v[0] == 1.0} == {
            k for k, p in greedy.items() if p >= top - 1e-9}
        kinds |= {m.TYPE for m in moves.values()}
    assert {"play", "stack"} <= kinds


def test_a_policy_weighted_on_greedys_favourite_prefers_what_greedy_prefers() -> None:
    for _, _, moves, board in _decisions(25):
        p = probabilities(board, moves, GREEDY_ONLY)
        assert abs(sum(p.values()) - 1.0) < 1e-9
        priors = expert_priors(board, moves, GREEDY_ONLY)
        assert max(priors.values()) == 1.0 and min(priors.values()) > 0.0
        greedy = greedy_priors(board, moves)
        top = max(greedy.values())
        assert {k for k, v in priors.items() if v == 1.0} == {
            k for k, v in greedy.items() if v >= top - 1e-9}


def test_wrong_weights_are_refused(monkeypatch) -> None:
    _, _, moves, board = _decisions(1)[0]
    with pytest.raises(ValueError):
        probabilities(board, moves, (1.0,))
    monkeypatch.setattr(ismcts_expert, "WEIGHTS", None)
    with pytest.raises(ValueError):
        expert_priors(board, moves)
    with pytest.raises(ValueError):
        ISMCTSStrategy(1, priors="expert")
    with pytest.raises(ValueError):
        ISMCTSStrategy(1, playout="expert")
    with pytest.raises(ValueError):
        ISMCTSStrategy(1, priors="nope")


def test_the_expert_playout_choice_is_legal() -> None:
    rng = random.Random(3)
    for state, mover, _, _ in _decisions(25):
        legal = state.legal_moves(mover)
        assert expert_choice(state, mover, legal, rng) in legal
