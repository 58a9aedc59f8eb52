"""Data Structures intent values: the one parser, and legal() as their wire form."""

from __future__ import annotations

import random

import pytest

from engine.registry import get_game


def test_intent_values_round_trip_and_match_legal_in_order() -> None:
    from engine.datastructures import intents

    chooser = random.Random(11)
    for seed in range(3):
        state = get_game("datastructures").new_state(seed)
        while state.outcome() is None:
            seat = state.to_move()[0]
            moves = state.legal_moves(seat)
            assert [m.to_wire() for m in moves] == state.legal(seat)
            assert all(intents.from_wire(m.to_wire()) == m for m in moves)
            assert len(set(moves)) == len(moves)   # hashable and distinct
            state.apply_move(seat, chooser.choice(moves))


def test_intent_parser_refuses_bad_shapes_with_their_rule() -> None:
    from engine.core import IllegalIntent
    from engine.datastructures.intents import from_wire

    for wire, rule in [({"type": "play", "src": "hand", "index": 0, "array": 3}, "D2"),
                       ({"type": "play", "src": "hand", "index": True, "array": 0}, "D3"),
                       ({"type": "play", "src": "deck", "array": 0}, "D3"),
                       ({"type": "mulligan", "keep": -1}, "D6"),
                       ({"type": "stack", "index": "0"}, "D7"),
                       ({"type": "end_turn", "now": True}, None)]:
        with pytest.raises(IllegalIntent) as info:
            from_wire(wire)
        assert info.value.rule == rule, wire
