"""The ``ismcts`` strategy's fast greedy playout and its belief about the opponent's hand."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.bots import ismcts_belief
from engine.bots.ismcts import ISMCTSStrategy
from engine.bots.ismcts_belief import FIT_WEIGHT, KEEP_WEIGHT, kept_weights, resample_hand
from engine.bots.ismcts_policy import greedy_play_out, greedy_playout
from engine.datastructures import determinize
from engine.datastructures.deck import VALUE
from engine.playout import play_out
from engine.registry import get_game
from tests.engine.bots.test_ismcts import _reach


@pytest.mark.parametrize("seed", range(6))
def test_the_fast_greedy_playout_plays_what_the_general_loop_plays(seed: int) -> None:
    # The same choices and the same draws of the tie-breaking generator: both
    # end in the same state, through every kind of phase 2 and game end.
    for moves in (0, 7, 30, 61, 120):
        start = _reach(seed, moves, seed + 50)
        if start.outcome() is not None:
            continue
        for horizon in (1, 3, 400):
            stop = start.turn + horizon
            slow, fast = start.clone(), start.clone()
            rng_slow, rng_fast = random.Random(seed), random.Random(seed)

            def choose(state, mover, legal, rng=rng_slow):
                return legal[0] if len(legal) == 1 else greedy_playout(state, mover, legal, rng)

            play_out(slow, choose, until=lambda s, stop=stop: s.turn >= stop, values=True)
            greedy_play_out(fast, stop, rng_fast)
            assert fast.digest() == slow.digest()
            assert rng_fast.getstate() == rng_slow.getstate()


def _turn_start_view(seed: int, moves: int):
    """A seat's view at the first decision of one of its turns after ``moves`` plies."""
    state = _reach(seed, moves, seed)
    while state.outcome() is None and (state.played or state.phase != "play"
                                       or state.turn < 2):
        seat = state.current
        state.apply(seat, state.legal(seat)[-1])
    return state


def test_kept_weights_favour_what_a_player_who_plays_while_it_can_keeps() -> None:
    state = _turn_start_view(3, 40)
    seat = state.current
    view = state.view(seat)
    weights = kept_weights(view, seat)
    assert weights is not None and len(weights) == 13
    opponent = view["players"][1 - seat]
    needs = [a["next"] for a in opponent["arrays"] if a["next"] is not None]
    from engine.datastructures.deck import value_of
    for rank in needs:   # a card that fits the opponent now would have been played
        assert weights[value_of(rank + "C") + 1] == FIT_WEIGHT
    assert KEEP_WEIGHT in weights
    first = get_game("datastructures").new_state(1, {})
    assert kept_weights(first.view(first.current), first.current) is None  # the deal


def test_resampling_keeps_the_cards_and_shifts_the_hand_towards_kept_values() -> None:
    state = _turn_start_view(4, 50)
    seat = state.current
    view = state.view(seat)
    weights = kept_weights(view, seat)
    assert weights is not None
    favoured = Counter()
    plain = Counter()
    rng = random.Random(0)
    for _ in range(400):
        world = determinize(view, seat, rng)
        hidden = sorted(world.hands[1 - seat] + world.deck + world.recycle)
        counts = (len(world.hands[1 - seat]), len(world.deck), len(world.recycle))
        plain.update(weights[VALUE[c] + 1] for c in world.hands[1 - seat])
        resample_hand(world, seat, weights, 0.5, rng)
        assert sorted(world.hands[1 - seat] + world.deck + world.recycle) == hidden
        assert (len(world.hands[1 - seat]), len(world.deck), len(world.recycle)) == counts
        assert world.view(seat) == view   # nothing the seat can see has changed
        favoured.update(weights[VALUE[c] + 1] for c in world.hands[1 - seat])
    assert favoured[KEEP_WEIGHT] > plain[KEEP_WEIGHT]
    assert favoured[FIT_WEIGHT] < plain[FIT_WEIGHT]


def test_the_belief_can_be_turned_off_and_is_checked() -> None:
    with pytest.raises(ValueError):
        ISMCTSStrategy(1, belief=1.5)
    state = _turn_start_view(5, 30)
    seat = state.current
    view, legal = state.view(seat), state.legal(seat)
    off = ISMCTSStrategy(7, belief=0.0)
    from engine.bots.budget import Budget
    off.choose("datastructures", seat, view, legal, Budget.iterations(3))
    assert off._weights is None
    on = ISMCTSStrategy(7, belief=ismcts_belief.KEPT_SHARE)
    on.choose("datastructures", seat, view, legal, Budget.iterations(3))
    assert on._weights == kept_weights(view, seat)


def test_the_root_race_drops_only_moves_clearly_behind_and_keeps_two() -> None:
    bot = ISMCTSStrategy(1, prune=3.0)
    # key: [worlds, reward sum, sum of squares]
    bot._race_stats = {
        1: [20, 20 * 0.6, 20 * (0.6 ** 2 + 0.01)],   # best, sd 0.1
        2: [20, 20 * 0.58, 20 * (0.58 ** 2 + 0.01)],  # within the margin
        3: [20, 20 * 0.3, 20 * (0.3 ** 2 + 0.01)],    # far behind
    }
    assert bot._race([1, 2, 3]) == [1, 2]
    bot._race_stats[2] = [20, 20 * 0.3, 20 * (0.3 ** 2 + 0.01)]
    kept = bot._race([3, 2, 1])
    assert len(kept) == 2 and 1 in kept   # two always stay, the best among them
    with pytest.raises(ValueError):
        ISMCTSStrategy(1, prune=-1.0)


def test_the_race_keeps_a_fixed_budget_deterministic_and_legal() -> None:
    from engine.bots.budget import Budget
    state = _turn_start_view(6, 20)
    seat = state.current
    view, legal = state.view(seat), state.legal(seat)
    picks = [ISMCTSStrategy(3, prune=3.0).choose("datastructures", seat, view, legal,
                                                  Budget.iterations(40)) for _ in range(2)]
    assert picks[0] is picks[1] and picks[0] in legal
