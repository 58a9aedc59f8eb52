"""greedy's public helpers on a board: the values in sight, the run a value starts,
the value a play moves (also the move features of ``ismcts_expert``)."""

from __future__ import annotations

from engine.bots.greedy import (
    CLOSED,
    EMPTY,
    Board,
    available_values,
    play_value,
    run_length,
    score_play,
)
from engine.datastructures.deck import ACE, N_VALUES
from engine.datastructures.intents import HAND, QUEUE, STACK, Play


def _board() -> Board:
    # seat 0 holds 3, 4, ace; the queue shows 9 then 10; stack tops 5 (own), K (other).
    return Board(seat=0, hand=[1, 2, ACE], queue=[7, 8], stack_top=[3, 11],
                 need=[[EMPTY, 4, CLOSED], [0, EMPTY, EMPTY]], length=[[0, 3, 12], [2, 0, 0]])


def test_available_values_are_the_hand_the_queue_head_and_both_stack_tops() -> None:
    board = _board()
    assert available_values(board) == [1, 2, ACE, 7, 3, 11]
    board.queue, board.stack_top = [], [None, None]
    assert available_values(board) == [1, 2, ACE]


def test_run_length_counts_successors_in_a_row_each_value_once() -> None:
    assert run_length(0, [1, 2, 4]) == 2
    assert run_length(0, [2, 3]) == 0
    assert run_length(N_VALUES - 1, [0, 1]) == 2  # cyclic: K is followed by 2
    assert run_length(0, list(range(N_VALUES)) * 2) == N_VALUES - 1


def test_play_value_reads_the_card_from_its_source() -> None:
    board = _board()
    assert play_value(board, Play(HAND, 1, index=1)) == 2
    assert play_value(board, Play(QUEUE, 1)) == 7
    assert play_value(board, Play(STACK, 1, stack=0)) == 3
    assert play_value(board, Play(STACK, 1, stack=1)) == 11


def test_score_play_is_the_same_with_the_available_values_given() -> None:
    board = _board()
    move = Play(HAND, 0, index=0)  # 3 starts the empty array, 4 in hand follows it
    assert score_play(board, move) == score_play(board, move, available_values(board))
    assert score_play(board, move) > score_play(board, Play(HAND, 0, index=2))
