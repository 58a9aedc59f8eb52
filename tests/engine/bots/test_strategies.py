"""Every strategy returns one of the legal intents, in states the engine reaches."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bots import Budget, describe, get_strategy, strategy_names, timed
from engine.bots.greedy import board_from_view, choose_on_board, choose_wire
from engine.bots.search import SearchStrategy, board_from_state
from engine.datastructures.deck import value_of
from engine.datastructures.intents import from_wire
from engine.registry import get_game


def _reach(game: str, seed: int, moves: int, walk_seed: int):
    """The state after ``moves`` uniformly random legal intents from a fresh deal."""
    state = get_game(game).new_state(seed, {})
    rng = random.Random(walk_seed)
    for _ in range(moves):
        if state.outcome() is not None:
            break
        seat = rng.choice(state.to_move())
        state.apply(seat, rng.choice(state.legal(seat)))
    return state


def test_names_and_errors() -> None:
    assert strategy_names() == ["random", "greedy", "search", "ismcts"]
    assert set(describe()) == set(strategy_names())
    with pytest.raises(ValueError, match="unknown strategy"):
        get_strategy("nope")
    with pytest.raises(ValueError, match="time_budget"):
        timed(get_strategy("search"), 0, clock=time.perf_counter)
    for name in strategy_names():
        with pytest.raises(ValueError):
            get_strategy(name, seed=1).choose("datastructures", 0, {}, [])


def test_a_registered_strategy_is_built_listed_and_forgotten() -> None:
    from engine.bots import register, unregister
    from engine.bots.greedy import GreedyStrategy

    register("greedy2", GreedyStrategy, "greedy again")
    try:
        assert strategy_names()[-1] == "greedy2" and describe()["greedy2"] == "greedy again"
        assert isinstance(get_strategy("greedy2", seed=1), GreedyStrategy)
        with pytest.raises(ValueError, match="already registered"):
            register("greedy2", GreedyStrategy, "twice")
        register("greedy2", GreedyStrategy, "replaced", replace=True)
        assert describe()["greedy2"] == "replaced" and strategy_names()[-1] == "greedy2"
    finally:
        unregister("greedy2")
    assert "greedy2" not in strategy_names()
    with pytest.raises(ValueError, match="unknown strategy"):
        unregister("greedy2")
    for bad in ("", "a-b", "a,b", "a b"):
        with pytest.raises(ValueError, match="strategy name"):
            register(bad, GreedyStrategy, "bad")
    assert strategy_names() == ["random", "greedy", "search", "ismcts"]


def test_card_value() -> None:
    assert [value_of(c) for c in ("2C", "10H", "JD", "QS", "KC", "AH")] == [0, 8, 9, 10, 11, -1]
    with pytest.raises(ValueError):
        value_of("back")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64), moves=st.integers(0, 400), walk=st.integers(0, 2**32),
       name=st.sampled_from(["random", "greedy", "search"]))
def test_datastructures_strategies_only_return_legal_intents(seed: int, moves: int, walk: int,
                                                              name: str) -> None:
    state = _reach("datastructures", seed, moves, walk)
    if state.outcome() is not None:
        return
    strategy = timed(get_strategy(name, seed=walk), 0.003, clock=time.perf_counter)
    for _ in range(6):  # a few consecutive decisions from here
        if state.outcome() is not None:
            break
        seat = state.to_move()[0]
        legal = state.legal(seat)
        intent = strategy.choose("datastructures", seat, state.view(seat), legal)
        assert intent in legal
        state.apply(seat, intent)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**64), moves=st.integers(0, 300), walk=st.integers(0, 2**32))
def test_war_strategies_flip(seed: int, moves: int, walk: int) -> None:
    state = _reach("war", seed, moves, walk)
    for seat in state.to_move():
        legal = state.legal(seat)
        for name in strategy_names():
            intent = get_strategy(name, seed=1).choose(
                "war", seat, state.view(seat), legal, Budget.timed(0.01, clock=time.perf_counter))
            assert intent == {"type": "flip"} and intent in legal


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64), moves=st.integers(0, 300), walk=st.integers(0, 2**32))
def test_board_from_view_equals_board_from_state(seed: int, moves: int, walk: int) -> None:
    """The greedy reads the same facts from a view as the search reads from a state."""
    state = _reach("datastructures", seed, moves, walk)
    for seat in (0, 1):
        assert board_from_view(state.view(seat), seat) == board_from_state(state, seat)


def test_greedy_is_deterministic_for_a_seed_and_closes_when_it_can() -> None:
    state = _reach("datastructures", 11, 0, 0)
    seat = state.current
    # Build an array that needs one card to close, and give that card to the hand.
    arr: list[int] = []
    values = [(3 + k) % 12 for k in range(11)]          # 5..K, 2, 3 ... (11 values)
    pool = [c for c in range(104) if c % 52 < 48]       # no aces
    for v in values:
        card = next(c for c in pool if (c % 52) // 4 == v)
        pool.remove(card)
        arr.append(card)
    state.arrays[seat][1] = arr
    closer = next(c for c in pool if (c % 52) // 4 == (values[-1] + 1) % 12)
    state.hands[seat][2] = closer
    legal = state.legal(seat)
    pick = get_strategy("greedy", seed=3).choose("datastructures", seat, state.view(seat), legal)
    assert pick == {"type": "play", "src": "hand", "index": 2, "array": 1}
    board = board_from_view(state.view(seat), seat)
    again = [choose_wire(board, legal, random.Random(9)) for _ in range(2)]
    assert again[0] == again[1]


def test_search_respects_its_time_budget() -> None:
    for budget in (0.02, 0.05):
        strategy = SearchStrategy(seed=5)
        worst = 0.0
        state = _reach("datastructures", 99, 0, 0)
        for _ in range(25):
            if state.outcome() is not None:
                break
            seat = state.current
            view, legal = state.view(seat), state.legal(seat)
            started = time.perf_counter()
            intent = strategy.choose("datastructures", seat, view, legal,
                                     Budget.timed(budget, clock=time.perf_counter))
            worst = max(worst, time.perf_counter() - started)
            state.apply(seat, intent)
        # The search stops after at most one rollout past 90% of the budget; the
        # slack is for a busy shared machine descheduling the process.
        assert worst <= budget * 1.2 + 0.03, (budget, worst)


def test_search_stops_at_its_deadline_on_a_fake_clock() -> None:
    """Every clock reading advances 1 ms: the search must stop at 90% of the budget."""
    import engine.bots.search as search

    now = [0.0]

    def tick() -> float:
        now[0] += 0.001
        return now[0]

    state = _reach("datastructures", 42, 0, 0)
    strategy = SearchStrategy(seed=1)
    for _ in range(30):
        seat = state.current
        view, legal = state.view(seat), state.legal(seat)
        start = now[0]
        intent = strategy.choose("datastructures", seat, view, legal,
                                 Budget.timed(0.05, clock=tick))
        used = now[0] - start
        assert used <= 0.05 * search.BUDGET_SHARE + 0.003, used
        if strategy.last_worlds:
            assert used >= 0.05 * search.BUDGET_SHARE - 0.02  # and it did use its time
        state.apply(seat, intent)


def test_search_with_its_budget_spent_before_it_starts_plays_one_round() -> None:
    """A budget already spent when choose is called (a busy machine, a slow caller):
    remaining() is 0 from the start, and the search still ends after its one round."""
    now = [0.0]
    readings = [0]

    def late() -> float:
        readings[0] += 1
        assert readings[0] < 100_000, "the search did not stop"
        now[0] += 1.0  # every reading is a second on: the deadline is long past
        return now[0]

    state = _reach("datastructures", 42, 0, 0)
    strategy = SearchStrategy(seed=1)
    chosen = 0
    for _ in range(30):
        seat = state.current
        view, legal = state.view(seat), state.legal(seat)
        intent = strategy.choose("datastructures", seat, view, legal,
                                 Budget.timed(0.5, clock=late))
        assert intent in legal
        assert strategy.last_worlds <= 1
        chosen += strategy.last_worlds
        state.apply(seat, intent)
    assert chosen > 0  # some choices had candidates to sample


def test_search_samples_several_worlds() -> None:
    state = _reach("datastructures", 5, 0, 0)
    seat = state.current
    strategy = SearchStrategy(seed=1)
    legal = state.legal(seat)
    intent = strategy.choose("datastructures", seat, state.view(seat), legal,
                             Budget.iterations(7))
    assert intent in legal
    assert strategy.last_worlds in (0, 7)  # 0 only when every legal intent is equivalent


def test_strategies_import_without_trio_or_networking() -> None:
    """The server imports these; they must not pull in trio, sockets or the client."""
    import subprocess
    import sys

    code = ("import sys\n"
            "for name in ('trio', 'socket', 'client.session', 'client.bots'):\n"
            "    sys.modules[name] = None\n"
            "from engine.bots import get_strategy, strategy_names\n"
            "for n in strategy_names():\n"
            "    get_strategy(n, seed=1)\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_search_keeps_the_heuristic_choice_without_a_clear_margin() -> None:
    """With an impossible confidence bar the search never leaves greedy's choice."""
    import engine.bots.search as search

    state = _reach("datastructures", 8, 0, 0)
    strict = SearchStrategy(seed=2, confidence=1e9)
    searched = deviated = 0
    for _ in range(60):
        if state.outcome() is not None:
            break
        seat = state.current
        view, legal = state.view(seat), state.legal(seat)
        board = board_from_view(view, seat)
        # The search's first use of its generator is the heuristic's choice: replay it.
        rng_copy = random.Random()
        rng_copy.setstate(strict.rng.getstate())
        moves = [from_wire(i) for i in legal]
        expected = search._key(board, choose_on_board(board, moves, rng_copy))
        pick = strict.choose("datastructures", seat, view, legal, Budget.iterations(4))
        if strict.last_worlds:
            searched += 1
            if search._key(board, from_wire(pick)) != expected:
                # only a candidate better in every sampled world may replace it
                assert strict.last_deviated and strict.last_gain > 0
                assert strict.last_stderr == 0.0
                deviated += 1
            else:
                assert not strict.last_deviated
        state.apply(seat, pick)
    assert searched >= 10 and deviated < searched


def test_potential_chains_hand_queue_and_stacks() -> None:
    """The search's evaluation counts what a seat could place next turn."""
    from engine.bots.search import _potential

    def card(rank: str, copy: int = 0) -> int:
        from engine.datastructures.deck import copies
        return copies(rank + "C")[copy]

    state = _reach("datastructures", 3, 0, 0)
    seat = 0
    # Array 0 ends on a 4 (needs 5); arrays 1 and 2 are closed.
    state.arrays[seat] = [[card("3"), card("4")], [], []]
    state.closed[seat] = [False, True, True]
    state.hands[seat] = [card("5"), card("AC"[0]), card("9")]
    state.queue = [card("6"), card("7"), card("K")]
    state.stacks = [[card("9", 1), card("8")], [card("2")]]
    # hand 5, queue 6 then 7, stack 8, then hand 9 (the stack's 9 sits under the 8 and
    # comes free after it): 5 placed; what is left is nothing near the array's need (10).
    assert _potential(state, seat, public=True) == 5
    # Without the public cards only the 5 fits; the 9 is 3 short of the next need (6).
    assert _potential(state, seat, public=False) == 1
    # An empty open array takes one spare hand card.
    state.closed[seat] = [False, False, True]
    assert _potential(state, seat, public=False) == 2


def test_timed_gives_every_decision_a_fresh_budget_on_the_callers_clock() -> None:
    now = [0.0]
    seen: list[Budget] = []

    class Recorder:
        name = "recorder"

        def choose(self, game, seat, view, legal, budget):
            seen.append(budget)
            now[0] += 10.0          # each decision takes "10 s" of the fake clock
            return legal[0]

    bot = timed(Recorder(), 0.5, clock=lambda: now[0])
    assert bot.name == "recorder"
    for _ in range(2):
        assert bot.choose("war", 0, {}, [{"type": "flip"}]) == {"type": "flip"}
    assert [b.deadline for b in seen] == [0.5, 10.5]
    explicit = Budget.iterations(3)
    bot.choose("war", 0, {}, [{"type": "flip"}], explicit)
    assert seen[-1] is explicit
