"""One named test per Data Structures ruling (D1..D13), plus R0.x and the contract.

Each test sets up a position with :func:`arrange` and checks the rule's effect,
and what the rules refuse, so that breaking the rule fails the test.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from engine.core import BadOption, GameOver, IllegalIntent, NotYourTurn, new_rng
from engine.datastructures.deck import N_CARDS, NAME
from tests.engine.test_datastructures_support import GAME, arrange, assert_conserved, names

HAND = "hand"


def play_hand(i: int, a: int) -> dict:
    return {"type": "play", "src": "hand", "index": i, "array": a}


def play_queue(a: int) -> dict:
    return {"type": "play", "src": "queue", "array": a}


def play_stack(s: int, a: int) -> dict:
    return {"type": "play", "src": "stack", "stack": s, "array": a}


END_PHASE = {"type": "end_phase"}
END_TURN = {"type": "end_turn"}


def refused(state, seat, intent, rule=None):
    before = state.digest()
    with pytest.raises(IllegalIntent) as info:
        state.apply(seat, intent)
    assert state.digest() == before, "a refused intent changed the state"
    typed = sorted((k, type(v).__name__, v) for k, v in intent.items())
    assert all(sorted((k, type(v).__name__, v) for k, v in i.items()) != typed
               for i in state.legal(seat))
    if rule is not None:
        assert info.value.rule == rule, info.value
    return info.value


# ------------------------------------------------------------------ D1


def test_D1_two_decks_aces_never_on_arrays_but_stack_queue_discard():
    state = GAME.new_state(123)
    assert_conserved(state)
    faces = Counter(NAME[c] for c in range(N_CARDS))
    assert len(faces) == 52 and set(faces.values()) == {2}
    # An ace in hand: not playable, even onto an empty array.
    state = arrange(hands=(["AS", "AH", "AD", "AC", "AS"], ["2C"] * 2), queue=["9C"] * 2)
    for a in range(3):
        refused(state, 0, play_hand(0, a), rule="D1")
    assert all(i["type"] != "play" for i in state.legal(0))
    # An ace at the queue head or a stack top never fits, even after a K.
    state = arrange(hands=(["5C"], []), queue=["AS"], stacks=(["AH"], []),
                    arrays=([["KD"], [], []], [[], [], []]))
    refused(state, 0, play_queue(0), rule="D1")
    refused(state, 0, play_stack(0, 0), rule="D1")
    # ...but an ace can go on a stack, into the queue and (mulligan) the discard.
    state = arrange(hands=(["AS", "AH", "3C"], []), queue=["7C", "8C"])
    state.apply(0, END_PHASE)
    state.apply(0, {"type": "stack", "index": 0})
    assert NAME[state.stacks[0][-1]] == "AS"
    state.apply(0, {"type": "enqueue", "index": 0})
    assert NAME[state.queue[-1]] == "AH"
    # Suits never matter: 5H then 6S then 7H.
    state = arrange(hands=(["5H", "6S", "7H"], []))
    state.apply(0, play_hand(0, 0))
    state.apply(0, play_hand(0, 0))
    state.apply(0, play_hand(0, 0))
    assert names(state.arrays[0][0]) == ["5H", "6S", "7H"]


# ------------------------------------------------------------------ D2


def test_D2_arrays_are_cyclic_runs_on_own_arrays_only():
    state = arrange(hands=(["2C", "3D", "9H", "5S"], ["2H"]),
                    arrays=([["JC", "QC", "KC"], [], []], [[], [], []]))
    # After K comes 2, then 3; a card out of sequence is refused.
    refused(state, 0, play_hand(3, 0), rule="D2")  # 5 after K
    state.apply(0, play_hand(0, 0))
    assert state.view(0)["players"][0]["arrays"][0]["next"] == "3"
    state.apply(0, play_hand(0, 0))
    assert names(state.arrays[0][0]) == ["JC", "QC", "KC", "2C", "3D"]
    # An array may start at any value (9 here).
    state.apply(0, play_hand(0, 1))
    assert names(state.arrays[0][1]) == ["9H"]
    # Only three arrays, and they are the player's own: the opponent's stay empty.
    refused(state, 0, play_hand(0, 3))
    refused(state, 0, {"type": "play", "src": "hand", "index": 0, "array": 0, "seat": 1})
    assert state.arrays[1] == [[], [], []]
    # A run cycles back to one less than its start and is complete at 12 cards.
    state = arrange(hands=(["8D"], []),
                    arrays=([["9C", "10C", "JC", "QC", "KC", "2C", "3C", "4C", "5C", "6C",
                              "7C"], [], []], [[], [], []]))
    state.apply(0, play_hand(0, 0))
    assert state.closed[0][0] and state.arrays[0][0] == []


# ------------------------------------------------------------------ D3


def test_D3_sources_hand_both_stack_tops_queue_head_empty_array_from_hand_only():
    state = arrange(
        hands=(["4C", "KD", "KD", "KS", "KS"], []),
        queue=["5C", "6C"],  # head 5
        stacks=(["6H", "9D"], ["4S", "7H"]),  # tops 9D (own), 7H (opponent's)
        arrays=([["4D"], ["8D"], ["6D"]], [[], [], []]),
    )
    legal = state.legal(0)
    assert play_queue(0) in legal  # queue head 5 on 4
    assert play_stack(0, 1) in legal  # own stack top 9 on 8
    assert play_stack(1, 2) in legal  # opponent's stack top 7 on 6
    # Not the second queue card (6), not a card under a stack top (6H, 4S).
    assert play_queue(2) not in legal
    refused(state, 0, play_queue(2))
    # Several plays in one phase, each source in turn.
    state.apply(0, play_queue(0))
    state.apply(0, play_stack(0, 1))
    state.apply(0, play_stack(1, 2))
    assert names(state.arrays[0][0]) == ["4D", "5C"]
    assert names(state.arrays[0][1]) == ["8D", "9D"]
    assert names(state.arrays[0][2]) == ["6D", "7H"]
    assert state.phase == "play" and END_PHASE in state.legal(0)
    # The new head (6C) fits array 0 (after 5) but not array 2 (after 7).
    assert play_queue(0) in state.legal(0)
    refused(state, 0, play_queue(2), rule="D2")


def test_D3_empty_array_only_from_hand():
    state = arrange(hands=(["AS", "AS", "AH", "AH", "AD"], []), queue=["5C"],
                    stacks=(["9D"], ["7H"]), arrays=([[], [], []], [[], [], []]))
    for a in range(3):
        refused(state, 0, play_queue(a), rule="D3")
        refused(state, 0, play_stack(0, a), rule="D3")
        refused(state, 0, play_stack(1, a), rule="D3")
    state = arrange(hands=(["5C"], []))
    state.apply(0, play_hand(0, 2))
    assert names(state.arrays[0][2]) == ["5C"]


# ------------------------------------------------------------------ D4

RUN_11 = ["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC"]  # needs a 2


def test_D4_complete_array_closes_at_once_slot_stays_closed_third_wins():
    state = arrange(hands=(["2D", "2H", "3D", "9S", "KS"], []),
                    arrays=([list(RUN_11), ["4D"], []], [[], [], []]))
    events = state.apply(0, play_hand(0, 0))
    assert state.closed[0] == [True, False, False]
    assert state.arrays[0][0] == []
    assert len(state.recycle) == 12  # face down, waiting for phase 3
    assert {"type": "close", "seat": 0, "array": 0, "closed": 1} in events
    view = state.view(1)
    assert view["players"][0]["closed"] == 1
    assert view["players"][0]["arrays"][0] == {"cards": [], "next": None, "closed": True}
    assert view["recycle"] == 12 and "2D" not in json.dumps(view["players"])
    # The closed slot never takes a card again, not even a 2 or a new start.
    refused(state, 0, play_hand(0, 0), rule="D4")
    assert all(i.get("array") != 0 for i in state.legal(0))
    assert state.outcome() is None
    # Closing the third array wins at once, mid-phase.
    state = arrange(hands=(["2D", "5S", "5S"], []), closed=([True, True, False], [False] * 3),
                    arrays=([[], [], list(RUN_11)], [[], [], []]))
    events = state.apply(0, play_hand(0, 2))
    assert state.outcome().winner == 0 and state.outcome().reason == "three_arrays"
    assert events[-1] == {"type": "game_over", "winner": 0, "reason": "three_arrays"}
    assert state.to_move() == () and state.legal(0) == [] and state.legal(1) == []
    with pytest.raises(GameOver):
        state.apply(0, END_PHASE)


# ------------------------------------------------------------------ D5


def test_D5_empty_hand_draws_five_empty_queue_refills_at_once():
    state = arrange(hands=(["5C"], ["2C"]), queue=["6C"],
                    deck=["KS", "KS", "KH", "KH", "KD", "QS", "QS", "QH", "QH", "QD"])
    events = state.apply(0, play_hand(0, 0))
    assert names(state.hands[0]) == ["KS", "KS", "KH", "KH", "KD"]
    assert state.phase == "play"
    draw = [e for e in events if e["type"] == "draw"]
    assert draw and draw[0]["seat"] == 0 and draw[0]["count"] == 5
    events = state.apply(0, play_queue(0))
    assert names(state.queue) == ["QS", "QS", "QH", "QH", "QD"]
    assert any(e["type"] == "queue" for e in events)
    # With the deck and discard empty, the hand stays empty (D9) and play goes on.
    state = arrange(hands=(["5C"], []), queue=["6C"], rest="stack1")
    state.apply(0, play_hand(0, 0))
    assert state.hands[0] == [] and state.phase == "play"
    state.apply(0, play_queue(0))
    assert state.queue == []
    assert_conserved(state)


# ------------------------------------------------------------------ D6

STUCK_HAND = ["AS", "AH", "KD", "KD", "AC"]  # no play onto arrays that need 5


def test_D6_mulligan_only_without_play_reveals_hand_keeps_one():
    arrays = ([["4C"], ["4D"], ["4H"]], [[], [], []])
    state = arrange(hands=(list(STUCK_HAND), ["3S"]), queue=["9C", "8C"],
                    stacks=(["9D"], ["9H"]), arrays=arrays)
    legal = state.legal(0)
    assert [i for i in legal if i["type"] == "mulligan"] == [
        {"type": "mulligan", "keep": i} for i in range(5)]
    refused(state, 0, {"type": "mulligan", "keep": 5}, rule="D6")
    events = state.apply(0, {"type": "mulligan", "keep": 2})
    assert names(state.hands[0]) == ["KD"]
    assert sorted(names(state.discard)) == sorted(["AS", "AH", "KD", "AC", "9C"])
    # It ends phase 1: phase 2 starts (queue head discarded), stack card owed.
    assert state.phase == "discard" and state.legal(0) == [{"type": "stack", "index": 0}]
    # The revealed hand goes to the opponent and to spectators.
    for seat in (1, None):
        seen = state.project_events(events, seat)
        reveal = [e for e in seen if e["type"] == "mulligan"][0]
        assert reveal["hand"] == STUCK_HAND and reveal["card"] == "KD"
        assert state.view(seat)["last_mulligan"]["hand"] == STUCK_HAND
    # Not when any play is possible (a stack top that fits, here).
    state = arrange(hands=(list(STUCK_HAND), []), stacks=([], ["5H"]), arrays=arrays)
    assert all(i["type"] != "mulligan" for i in state.legal(0))
    refused(state, 0, {"type": "mulligan", "keep": 0}, rule="D6")
    # Not after a play, even when no play is left.
    state.apply(0, play_stack(1, 0))
    assert not state._plays(0)
    refused(state, 0, {"type": "mulligan", "keep": 0}, rule="D6")
    # A short hand of 2 keeps one; a hand of 1 cannot mulligan.
    state = arrange(hands=(["AS", "AH"], []), arrays=arrays)
    state.apply(0, {"type": "mulligan", "keep": 1})
    assert names(state.hands[0]) == ["AH"]
    state = arrange(hands=(["AS"], []), arrays=arrays)
    refused(state, 0, {"type": "mulligan", "keep": 0}, rule="D6")


# ------------------------------------------------------------------ D7


def test_D7_phase2_discards_head_then_one_stack_card_then_optional_enqueue():
    state = arrange(hands=(["AS", "AH", "KD", "KD"], []), queue=["9C", "8C", "7C", "6C", "5C"])
    events = state.apply(0, END_PHASE)
    assert names(state.queue) == ["8C", "7C", "6C", "5C"]
    assert names(state.discard)[-1] == "9C"
    assert {"type": "discard", "seat": 0, "src": "queue", "card": "9C"} in events
    # The stack card comes first: no enqueue, no end_turn before it.
    assert state.legal(0) == [{"type": "stack", "index": i} for i in range(4)]
    refused(state, 0, END_TURN, rule="D7")
    refused(state, 0, {"type": "enqueue", "index": 0}, rule="D7")
    refused(state, 0, play_hand(0, 0), rule="D3")
    state.apply(0, {"type": "stack", "index": 1})
    assert names(state.stacks[0])[-1] == "AH"
    refused(state, 0, {"type": "stack", "index": 0}, rule="D7")  # only one
    # Enqueue at the tail, one at a time, while the queue has fewer than 5.
    state.apply(0, {"type": "enqueue", "index": 2})
    assert names(state.queue) == ["8C", "7C", "6C", "5C", "KD"]
    refused(state, 0, {"type": "enqueue", "index": 0}, rule="D7")
    assert state.legal(0) == [END_TURN]
    state.apply(0, END_TURN)
    assert state.current == 1
    # An empty hand skips the stack card.
    state = arrange(hands=(["5C"], []), queue=["6C", "7C"], rest="stack1")
    state.apply(0, play_hand(0, 0))
    state.apply(0, END_PHASE)
    assert state.legal(0) == [END_TURN] and not state.stack_owed()
    # The timeout action: stack hand card 0 while owed, else end the turn.
    state = arrange(hands=(["AS", "AH"], []), queue=["6C"])
    assert state.default_intent(0) == END_PHASE and state.default_intent(1) is None
    state.apply(0, END_PHASE)
    assert state.default_intent(0) == {"type": "stack", "index": 0}
    state.apply(0, state.default_intent(0))
    assert state.default_intent(0) == END_TURN


# ------------------------------------------------------------------ D8


def test_D8_phase3_recycles_only_after_a_close_then_queue_then_hand():
    # No close: the discard pile stays; the queue fills before the hand.
    state = arrange(hands=(["AS", "AH"], ["2C"] * 2), queue=["9C", "8C", "7C"],
                    discard=["JS"], deck=["3D", "4D", "5D"], rest="stack1")
    state.apply(0, END_PHASE)  # 9C -> discard
    state.apply(0, {"type": "stack", "index": 0})
    events = state.apply(0, END_TURN)
    assert names(state.queue) == ["8C", "7C", "3D", "4D", "5D"]
    # the hand then needs 4 cards: the deck is empty, so the discard is shuffled in
    assert sorted(names(state.hands[0])) == sorted(["AH", "JS", "9C"])
    assert [e["type"] for e in events].index("queue") < [e["type"] for e in events].index("draw")
    assert state.current == 1 and state.phase == "play"
    # No close and enough deck: the discard pile stays put.
    state = arrange(hands=(["AS", "AH"], []), queue=["9C"], discard=["JS"])
    state.apply(0, END_PHASE)
    state.apply(0, {"type": "stack", "index": 0})
    state.apply(0, END_TURN)
    assert names(state.discard) == ["JS", "9C"] and state.recycle == []
    # A close: recycle + discard + deck are shuffled together into the deck.
    state = arrange(hands=(["2D", "AS", "AH"], []), queue=["9C"], discard=["JS", "QS"],
                    arrays=([list(RUN_11), [], []], [[], [], []]), rest="deck")
    deck_before = len(state.deck)
    state.apply(0, play_hand(0, 0))
    state.apply(0, END_PHASE)
    state.apply(0, {"type": "stack", "index": 0})
    events = state.apply(0, END_TURN)
    recycle = [e for e in events if e["type"] == "recycle"][0]
    assert recycle == {"type": "recycle", "cards": 12, "discard": 3, "deck": deck_before + 15}
    assert state.discard == [] and state.recycle == []
    assert len(state.queue) == 5 and len(state.hands[0]) == 5
    assert_conserved(state)
    # Shuffled in: the closed run's cards are not simply on top in order.
    assert names(state.deck[-12:]) != list(reversed(RUN_11 + ["2D"]))


# ------------------------------------------------------------------ D9


def test_D9_empty_deck_takes_discard_short_when_both_empty_and_turn_start_topup():
    state = arrange(hands=(["5C"], []), queue=["6C"], discard=["9S", "9S", "8H", "8H", "7D"],
                    rest="stack1")
    events = state.apply(0, play_hand(0, 0))
    assert sorted(names(state.hands[0])) == sorted(["9S", "9S", "8H", "8H", "7D"])
    assert state.discard == [] and any(e["type"] == "reshuffle" for e in events)
    events = state.apply(0, play_queue(0))
    assert state.queue == []  # both empty: the queue stays short
    # The player to move tops up to 5 at the start of the turn.
    state = arrange(hands=(["AS", "AH"], ["KS", "KH"]), queue=["9C"],
                    deck=["2D", "3D", "4D", "5D", "6D", "7D", "8D"])
    state.apply(0, END_PHASE)
    state.apply(0, {"type": "stack", "index": 0})
    events = state.apply(0, END_TURN)
    assert len(state.hands[0]) == 5 and len(state.hands[1]) == 5
    assert names(state.hands[1])[:2] == ["KS", "KH"]
    top_up = [e for e in events if e["type"] == "draw" and e["seat"] == 1]
    assert top_up and top_up[0]["rule"] == "D9" and top_up[0]["count"] == 3
    assert [e["type"] for e in events].index("turn") < events.index(top_up[0])


# ------------------------------------------------------------------ D10

SECRET_HAND = ["AS", "AS", "KD", "KD", "QC"]  # both copies of AS and KD
SECRET_DECK = ["JH", "JH", "10S", "10S"]


def test_D10_views_show_public_piles_hide_hands_and_deck():
    state = arrange(hands=(list(SECRET_HAND), ["QC", "2H", "2H", "3S", "3S"]),
                    queue=["5C", "6C"], stacks=(["7D", "8D"], ["9D"]),
                    arrays=([["4H"], [], []], [["2S"], [], []]), discard=["6H"],
                    deck=SECRET_DECK)
    own = state.view(0)
    assert own["hand"] == SECRET_HAND
    for seat in (1, None):
        text = json.dumps(state.view(seat))
        for card in ("AS", "KD", "JH", "10S"):
            assert f'"{card}"' not in text, (seat, card)
    for seat in (0, 1, None):
        text = json.dumps(state.view(seat))
        for card in ("JH", "10S"):
            assert f'"{card}"' not in text
        view = state.view(seat)
        assert view["queue"] == ["5C", "6C"]
        assert view["players"][0]["stack"] == ["7D", "8D"]
        assert view["players"][1]["arrays"][0] == {"cards": ["2S"], "next": "3", "closed": False}
        assert view["discard"] == ["6H"] and view["deck"] == len(state.deck)
        assert view["hand_counts"] == [5, 5]
        assert view["to_move"] == 0 and view["phase"] == "play" and view["turn"] == 1
    assert state.view(None)["hand"] is None
    assert state.view(1)["hand"] == ["QC", "2H", "2H", "3S", "3S"]
    # Drawn cards: only the drawer sees them.
    state = arrange(hands=(["4C"], []), deck=SECRET_DECK + ["5S"])
    events = state.apply(0, play_hand(0, 0))
    mine = [e for e in state.project_events(events, 0) if e["type"] == "draw"][0]
    assert mine["cards"] == SECRET_DECK + ["5S"]
    for seat in (1, None):
        theirs = [e for e in state.project_events(events, seat) if e["type"] == "draw"][0]
        assert "cards" not in theirs and theirs["count"] == 5
        assert "JH" not in json.dumps(state.project_events(events, seat))
    assert "cards" in events[-1]  # the raw event is untouched


# ------------------------------------------------------------------ D11


def test_D11_first_player_drawn_by_the_match_generator():
    firsts = Counter()
    for seed in range(40):
        state = GAME.new_state(seed)
        rng = new_rng(seed)
        rng.shuffle(list(range(N_CARDS)))
        assert state.current == rng.randbelow(2)
        assert state.view(None)["to_move"] == state.current
        firsts[state.current] += 1
    assert firsts[0] > 5 and firsts[1] > 5


# ------------------------------------------------------------------ D12


def _finish_turn(state):
    seat = state.current
    while state.current == seat and state.outcome() is None:
        state.apply(seat, state.default_intent(seat))


def test_D12_cap_ends_game_closed_arrays_then_open_cards_then_draw():
    # Seat 1 has more cards in open arrays; nobody closed one.
    state = arrange(hands=(["AS"] * 2, []), arrays=([["4C"], [], []], [["2C", "3C"], [], []]),
                    cap=2)
    _finish_turn(state)
    assert state.outcome() is None and state.turn == 2
    _finish_turn(state)
    assert state.outcome().to_dict() == {"winner": 1, "reason": "cap"}
    assert state.turn == 2 and state.to_move() == ()
    # A closed array beats any number of open cards.
    state = arrange(closed=([True, False, False], [False] * 3),
                    arrays=([[], [], []], [list(RUN_11), ["2D"], []]), cap=1)
    _finish_turn(state)
    assert state.outcome().to_dict() == {"winner": 0, "reason": "cap"}
    # Equal on both counts: a draw.
    state = arrange(arrays=([["4C"], [], []], [["9C"], [], []]), cap=1)
    _finish_turn(state)
    assert state.outcome().to_dict() == {"winner": None, "reason": "cap"}
    # The option: default 500, min 1.
    assert GAME.normalize_options({}) == {"cap": 500}
    with pytest.raises(BadOption):
        GAME.normalize_options({"cap": 0})
    with pytest.raises(BadOption):
        GAME.normalize_options({"turns": 5})


# ------------------------------------------------------------------ D13


def test_D13_stuck_game_ends_after_20_idle_turns_with_empty_deck_and_discard():
    kwargs = dict(hands=(["AS", "AS", "AH", "AH", "5D"], ["AD", "AC", "AC", "KS", "KS"]),
                  queue=["9C"], arrays=([["4C"], [], []], [[], [], []]), rest="stack1")
    state = arrange(**kwargs)
    for _ in range(19):
        _finish_turn(state)
    assert state.outcome() is None and state.idle_turns == 19
    _finish_turn(state)
    assert state.outcome().to_dict() == {"winner": 0, "reason": "stuck"}
    assert state.turn == 20
    # A card placed on an array starts the count again.
    state = arrange(**kwargs)
    for _ in range(10):
        _finish_turn(state)
    seat = state.current
    plays = [i for i in state.legal(seat) if i["type"] == "play"]
    assert plays
    state.apply(seat, plays[0])
    _finish_turn(state)
    assert state.idle_turns == 0
    for _ in range(19):
        _finish_turn(state)
    assert state.outcome() is None
    # While the deck has cards, idle turns do not end the game.
    state = arrange(**{**kwargs, "rest": "deck"})
    for _ in range(30):
        _finish_turn(state)
    assert state.outcome() is None and state.idle_turns == 0


# ------------------------------------------------------------------ R0.x and contract


def test_R0_1_same_seed_same_game_and_seed_range():
    a, b = GAME.new_state(2**256 - 1), GAME.new_state(2**256 - 1)
    assert a.digest() == b.digest()
    assert GAME.new_state(1).digest() != GAME.new_state(2).digest()
    with pytest.raises(ValueError):
        GAME.new_state(2**256)


def test_R0_4_resign_any_time_other_seat_wins():
    state = arrange(hands=(["5C"], []), current=0)
    events = state.resign(1)  # not seat 1's turn: still allowed
    assert state.outcome().to_dict() == {"winner": 0, "reason": "resign"}
    assert events[0] == {"type": "resign", "seat": 1, "reason": "resign"}
    with pytest.raises(GameOver):
        state.resign(0)
    state = GAME.new_state(5)
    loser = 1 - state.current  # not to move: forfeits are the server's, any time
    events = state.forfeit(loser, "timeout")
    assert state.outcome().to_dict() == {"winner": 1 - loser, "reason": "timeout"}
    assert events[-1]["type"] == "game_over" and state.to_move() == ()


def test_contract_turn_order_bad_intents_and_registry():
    state = arrange(hands=(["5C"], ["6C"]))
    with pytest.raises(NotYourTurn):
        state.apply(1, END_PHASE)
    assert state.legal(1) == [] and state.to_move() == (0,)
    for bad in ({}, {"type": "flip"}, {"type": "end_phase", "x": 1},
                {"type": "play", "src": "hand", "index": True, "array": 0},
                {"type": "play", "src": "hand", "index": 0, "array": 0.0},
                {"type": "play", "src": "deck", "array": 0}, {"type": "end_turn"},
                {"type": "stack", "index": 0}):
        refused(state, 0, bad)
    with pytest.raises(IllegalIntent):
        state.apply(2, END_PHASE)
    assert GAME.describe()["options"][0]["name"] == "cap"

