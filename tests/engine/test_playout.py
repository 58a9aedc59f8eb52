"""engine.playout.play_out: the one loop that plays a game on."""

from __future__ import annotations

import random

import pytest

from engine.playout import play_out
from engine.registry import game_names, get_game


@pytest.mark.parametrize("name", game_names())
def test_wire_and_value_playouts_reach_the_same_end(name: str) -> None:
    wire = get_game(name).new_state(7, {"cap": 60})
    values = wire.clone()
    pick_wire, pick_values = random.Random(1), random.Random(1)
    n_wire = play_out(wire, lambda _, seat, legal: legal[pick_wire.randrange(len(legal))])
    n_values = play_out(values, lambda _, seat, legal: legal[pick_values.randrange(len(legal))],
                        values=True)
    assert wire.outcome() is not None and n_wire == n_values > 0
    assert wire.digest() == values.digest()


def test_until_stops_early_and_max_moves_refuses_a_long_game() -> None:
    state = get_game("datastructures").new_state(3)
    play_out(state, lambda _, seat, legal: legal[-1], until=lambda s: s.turn >= 4)
    assert state.outcome() is None and state.turn == 4
    with pytest.raises(RuntimeError, match="within 5 intents"):
        play_out(state, lambda _, seat, legal: legal[-1], max_moves=5)
