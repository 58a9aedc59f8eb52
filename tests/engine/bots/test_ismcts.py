"""The ``ismcts`` strategy: legal, reproducible, within its budget, and it sees a win."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bots import describe, get_strategy, strategy_names
from engine.bots.budget import Budget
from engine.bots.ismcts import ISMCTSStrategy, reward_of
from engine.bots.ismcts_policy import PLAYOUTS, greedy_priors
from engine.bots.ismcts_tree import END_PHASE_KEY, Node, distinct_moves, move_key
from engine.bots.search import board_from_state
from engine.datastructures.intents import (
    END_PHASE,
    END_TURN,
    QUEUE,
    STACK,
    Enqueue,
    Mulligan,
    Play,
    StackCard,
    from_wire,
    play_hand,
)
from engine.registry import get_game
from tests.client.bots.conftest import start_server  # noqa: F401  (a fixture)
from tests.engine.test_datastructures_support import arrange

#: Eleven cards of one array, 2..Q: the twelfth (a K) closes it.
RUN_11 = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC"]
WIN = {"type": "play", "src": "hand", "index": 0, "array": 2}


def _reach(seed: int, moves: int, walk_seed: int):
    """The Data Structures state after ``moves`` uniformly random legal intents."""
    state = get_game("datastructures").new_state(seed, {})
    rng = random.Random(walk_seed)
    for _ in range(moves):
        if state.outcome() is not None:
            break
        seat = state.current
        state.apply(seat, rng.choice(state.legal(seat)))
    return state


def _decide(strategy, state, budget):
    seat = state.current
    legal = state.legal(seat)
    return strategy.choose("datastructures", seat, state.view(seat), legal, budget), legal


# ------------------------------------------------------------------ the table


def test_ismcts_is_in_the_strategy_table() -> None:
    assert "ismcts" in strategy_names()
    assert "tree search" in describe()["ismcts"]
    assert get_strategy("ismcts", seed=1).name == "ismcts"


# ------------------------------------------------------------------ legality


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**64), moves=st.integers(0, 400), walk=st.integers(0, 2**32),
       playout=st.sampled_from(sorted(PLAYOUTS)), reuse=st.booleans(), crn=st.booleans(),
       opp_priors=st.sampled_from(["stored", "world", "model", "forced"]))
def test_only_legal_intents_over_random_positions(seed: int, moves: int, walk: int,
                                                  playout: str, reuse: bool, crn: bool,
                                                  opp_priors: str) -> None:
    state = _reach(seed, moves, walk)
    strategy = ISMCTSStrategy(seed=walk, playout=playout, reuse=reuse, crn=crn,
                              opp_priors=opp_priors, opp_bias=2.0)
    for _ in range(8):  # consecutive decisions, so kept subtrees are exercised too
        if state.outcome() is not None:
            break
        intent, legal = _decide(strategy, state, Budget.iterations(12))
        assert intent in legal
        assert any(intent is i for i in legal)  # the very object, as the interface says
        state.apply(state.current, intent)


def test_war_flips_and_an_empty_legal_list_is_refused() -> None:
    war = get_game("war").new_state(3, {})
    strategy = ISMCTSStrategy(seed=1)
    for seat in war.to_move():
        assert strategy.choose("war", seat, war.view(seat), war.legal(seat),
                               Budget.iterations(5)) == {"type": "flip"}
    with pytest.raises(ValueError):
        strategy.choose("datastructures", 0, {}, [], Budget.iterations(5))


# ------------------------------------------------------------------ budget


@pytest.mark.parametrize("options", [
    {"crn": False}, {}, {"opp_priors": "world"}, {"opp_priors": "model"},
    {"opp_priors": "forced"}, {"priors": "expert"}, {"playout": "expert"},
    {"priors": "expert", "playout": "expert"}])
def test_fixed_iterations_and_seed_give_the_same_game(options: dict[str, object]) -> None:
    """Two strategies with one seed, fed the same positions, choose alike; the
    iteration count is exactly the budget whenever there was a choice."""
    runs = []
    for _ in range(2):
        state = _reach(21, 30, 4)
        strategy = ISMCTSStrategy(seed=77, **options)  # type: ignore[arg-type]
        picks = []
        for _ in range(25):
            if state.outcome() is not None:
                break
            intent, legal = _decide(strategy, state, Budget.iterations(40))
            assert strategy.last_iterations in (0, 40)
            picks.append((state.current, intent, strategy.last_iterations))
            state.apply(state.current, intent)
        runs.append((picks, state.digest()))
    assert runs[0] == runs[1]
    assert sum(1 for _, _, n in runs[0][0] if n) >= 10  # most decisions were searched


def test_stops_at_the_deadline_of_a_fake_clock(monkeypatch) -> None:
    """Every reading of the budget's clock advances 1 ms; the search must stop at
    the first reading past the deadline and read no other clock."""
    now = [0.0]

    def tick() -> float:
        now[0] += 0.001
        return now[0]

    def forbidden() -> float:
        raise AssertionError("the strategy read a clock of its own")

    for name in ("time", "perf_counter", "monotonic", "process_time"):
        monkeypatch.setattr(time, name, forbidden)
    state = _reach(42, 10, 0)
    strategy = ISMCTSStrategy(seed=3)
    searched = 0
    for _ in range(30):
        if state.outcome() is not None:
            break
        budget = Budget.timed(0.04, clock=tick)
        deadline = budget.deadline
        intent, legal = _decide(strategy, state, budget)
        assert intent in legal
        assert now[0] < deadline + 0.0015  # not one reading of the clock past it
        if strategy.last_iterations:
            searched += 1
            # One reading per iteration: 40 readings fit before the deadline.
            assert 35 <= strategy.last_iterations <= 40
        state.apply(state.current, intent)
    assert searched >= 5


def test_a_budget_spent_before_the_first_iteration_still_gives_a_legal_move() -> None:
    now = [0.0]
    budget = Budget.timed(0.01, clock=lambda: now[0])
    now[0] = 1.0  # the deadline passed before the call
    state = _reach(5, 0, 0)
    intent, legal = _decide(ISMCTSStrategy(seed=1), state, budget)
    assert intent in legal


# ------------------------------------------------------------------ winning moves


def _closing_position(source: str):
    """Seat 0 has closed two arrays; array 2 holds 2..Q. The K that closes it is
    in the hand (index 0), at the queue head, or on top of a stack."""
    king = "KS"
    hand = ["5D", "7H", "9S", "AH", "4S"]
    queue = ["6D", "AS", "8H", "3H", "JD"]
    stacks: tuple[list[str], list[str]] = (["AD"], ["JH"])
    if source == "hand":
        hand[0] = king
    elif source == "queue":
        queue[0] = king
    elif source == "own stack":
        stacks = (["AD", king], ["JH"])
    else:
        stacks = (["AD"], ["JH", king])
    return arrange(hands=(hand, ["2D", "3D", "4D", "5H", "6H"]), queue=queue, stacks=stacks,
                   closed=([True, True, False], [False] * 3),
                   arrays=([[], [], list(RUN_11)], [["2H"], [], []]))


_WINNING = {
    "hand": {"type": "play", "src": "hand", "index": 0, "array": 2},
    "queue": {"type": "play", "src": "queue", "array": 2},
    "own stack": {"type": "play", "src": "stack", "stack": 0, "array": 2},
    "other stack": {"type": "play", "src": "stack", "stack": 1, "array": 2},
}


@pytest.mark.parametrize("source", sorted(_WINNING))
@pytest.mark.parametrize("knowledge", ["greedy priors", "none"])
def test_finds_the_move_that_closes_the_third_array(source: str, knowledge: str) -> None:
    """With greedy's priors, and without any heuristic in the tree (random expansion,
    no bias), the search plays the closing card rather than ending the phase (the
    seat's only open array is the one that closes, so those are the choices)."""
    state = _closing_position(source)
    legal = state.legal(0)
    assert _WINNING[source] in legal and {"type": "end_phase"} in legal
    kwargs = {} if knowledge == "greedy priors" else {"bias": 0.0, "prior_order": False}
    for seed in range(3):
        strategy = ISMCTSStrategy(seed=seed, **kwargs)
        pick = strategy.choose("datastructures", 0, state.view(0), legal, Budget.iterations(150))
        assert pick == _WINNING[source], (seed, pick)
        after = state.clone()
        after.apply(0, pick)
        assert after.outcome().winner == 0 and after.outcome().reason == "three_arrays"


def test_finds_a_two_move_win_in_one_turn() -> None:
    """Array 2 needs a Q then a K: the Q is in the hand and the K at the queue head,
    so the win is a plan of two plays; the search starts it and ends it."""
    state = arrange(hands=(["QS", "5D", "7H", "9S", "4S"], ["2D", "3D", "4D", "5H", "6H"]),
                    queue=["KS", "AS", "8H", "3H", "JD"], stacks=(["AD"], ["JH"]),
                    closed=([True, True, False], [False] * 3),
                    arrays=([[], [], RUN_11[:-1]], [["2H"], [], []]))
    strategy = ISMCTSStrategy(seed=4, bias=0.0, prior_order=False)
    first = strategy.choose("datastructures", 0, state.view(0), state.legal(0),
                            Budget.iterations(400))
    assert first == {"type": "play", "src": "hand", "index": 0, "array": 2}
    state.apply(0, first)
    second = strategy.choose("datastructures", 0, state.view(0), state.legal(0),
                             Budget.iterations(100))
    assert second == {"type": "play", "src": "queue", "array": 2}
    assert strategy.last_reused > 0  # it went on in the subtree of its first play


# ------------------------------------------------------------------ tree and reuse


def test_move_keys_name_values_not_positions() -> None:
    hand = [5, 5, 7, -1]
    a, b, c = play_hand(0, 1), play_hand(1, 1), play_hand(2, 1)
    assert move_key(a, hand) == move_key(b, hand) != move_key(c, hand)
    kinds = [StackCard(3), Enqueue(3), Mulligan(3), END_PHASE, END_TURN, Play(QUEUE, 0),
             Play(STACK, 0, stack=1), Play(STACK, 0, stack=0), StackCard(2), play_hand(0, 2)]
    keys = [move_key(m, hand) for m in kinds + [a, c]]
    assert len(set(keys)) == len(keys)
    assert list(distinct_moves([a, b, c], hand).values()) == [a, c]
    with pytest.raises(IndexError):
        move_key(play_hand(4, 0), hand)


def test_selection_only_among_moves_legal_in_this_world_counts_availability() -> None:
    root = Node()
    kids = {k: root.add_child(k, seat=0) for k in (1, 2, 3)}
    for k, child in kids.items():
        child.update(0.9 if k == 3 else 0.2, observer=0)
    # Key 3 is best, but not legal in this world: the choice is among 1 and 2.
    chosen = root.select([1, 2], exploration=0.7, bias=0.0)
    assert chosen.key in (1, 2)
    assert (kids[1].avails, kids[2].avails, kids[3].avails) == (2, 2, 1)
    assert root.select([1, 2, 3], exploration=0.0, bias=0.0).key == 3
    # Rewards are kept for the seat that moved into the node.
    other = root.add_child(9, seat=1)
    other.update(0.9, observer=0)
    assert other.reward == pytest.approx(0.1)
    assert root.most_visited([1, 2, 3]) == 3 and root.most_visited([42]) is None


def test_selection_can_take_this_worlds_priors_instead_of_the_stored_ones() -> None:
    root = Node()
    low, high = root.add_child(1, seat=1, prior=0.0), root.add_child(2, seat=1, prior=1.0)
    for child in (low, high):
        child.update(0.5, observer=1)
    assert root.select([1, 2], exploration=0.0, bias=1.0).key == 2
    assert root.select([1, 2], exploration=0.0, bias=1.0, priors={1: 1.0, 2: 0.0}).key == 1


def test_unknown_opponent_priors_and_negative_opponent_bias_are_refused() -> None:
    with pytest.raises(ValueError, match="opp_priors"):
        ISMCTSStrategy(opp_priors="psychic")
    with pytest.raises(ValueError):
        ISMCTSStrategy(opp_bias=-1.0)
    assert ISMCTSStrategy(bias=0.5).opp_bias == 0.5  # None: the seat's own weight


def test_reward_and_priors() -> None:
    assert reward_of(0.0) == 0.5 and reward_of(1000.0) == 1.0 and reward_of(-1000.0) == 0.0
    assert reward_of(3.0) > reward_of(1.0) > 0.5
    state = _closing_position("hand")
    board = board_from_state(state, 0)
    moves = distinct_moves(state.legal_moves(0), board.hand)
    priors = greedy_priors(board, moves)
    assert max(priors, key=priors.get) == move_key(from_wire(WIN), board.hand)
    assert priors[END_PHASE_KEY] == 0.0 and all(0.0 <= p <= 1.0 for p in priors.values())


def test_the_subtree_is_kept_only_when_the_move_was_played() -> None:
    state = _reach(8, 0, 0)
    strategy = ISMCTSStrategy(seed=5)
    for _ in range(40):  # find a decision after which the same seat moves again
        seat = state.current
        intent, legal = _decide(strategy, state, Budget.iterations(60))
        after = state.clone()
        after.apply(seat, intent)
        others = [i for i in legal if i != intent and i["type"] == intent["type"]]
        if after.current == seat and after.outcome() is None and others \
                and intent["type"] in ("play", "enqueue"):
            break
        state.apply(seat, intent)
    else:
        pytest.fail("no decision followed by another of the same seat")
    played = state.clone()
    played.apply(seat, intent)
    twin = ISMCTSStrategy(seed=5)
    twin.__dict__.update({k: v for k, v in strategy.__dict__.items() if k != "rng"})
    twin.rng.setstate(strategy.rng.getstate())
    _decide(strategy, played, Budget.iterations(10))
    assert strategy.last_reused > 0  # its own move: the search went on from that subtree
    # Another move was played instead (e.g. a timeout's default): a fresh tree.
    other = state.clone()
    other.apply(seat, others[0])
    _decide(twin, other, Budget.iterations(10))
    assert twin.last_reused == 0


# ------------------------------------------------------------------ over a real server


CARDBOT = Path(sys.executable).parent / "cardbot"


async def test_cardbot_plays_ismcts_against_an_ismcts_server_bot(start_server) -> None:  # noqa: F811
    """``cardbot --strategy ismcts`` plays a whole Data Structures match over loopback
    TCP against the server's own ``ismcts`` bot (both from the strategy table)."""
    server = await start_server()
    with trio.fail_after(60):
        proc = await trio.run_process(
            [str(CARDBOT), "connect", f"127.0.0.1:{server.port}", "--game", "datastructures",
             "--strategy", "ismcts", "--create", "--vs-bot", "ismcts", "--option", "cap=30",
             "--time-budget", "0.01", "--seed", "3", "--json", "--quiet"],
            capture_stdout=True, capture_stderr=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    summary = json.loads(out[out.index("{"):])
    assert summary["matches"] == 1 and summary["wins"] + summary["losses"] + summary["draws"] == 1
    assert summary["mean_moves"] > 30
