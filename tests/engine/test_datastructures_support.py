"""Helpers for the Data Structures tests: lay out a position card by card.

(No tests here; the file name keeps it inside this room's test files.)
"""

from __future__ import annotations

from engine.datastructures import DSState
from engine.datastructures.deck import N_CARDS, copies
from engine.registry import get_game

GAME = get_game("datastructures")


def all_cards(state: DSState) -> list[int]:
    """Every physical card in every pile of ``state`` (104 when conserved)."""
    out = state.deck + state.discard + state.recycle + state.queue
    for s in (0, 1):
        out += state.stacks[s] + state.hands[s]
        for arr in state.arrays[s]:
            out += arr
    return out


def assert_conserved(state: DSState) -> None:
    """Each of the 104 cards is in exactly one place."""
    cards = all_cards(state)
    assert sorted(cards) == list(range(N_CARDS)), "card conservation broken"


def arrange(
    *,
    current: int = 0,
    hands: tuple[list[str], list[str]] = ([], []),
    queue: list[str] | tuple = (),
    stacks: tuple[list[str], list[str]] = ([], []),
    arrays: tuple[list[list[str]], list[list[str]]] | None = None,
    closed: tuple[list[bool], list[bool]] | None = None,
    discard: list[str] | tuple = (),
    deck: list[str] | tuple = (),
    rest: str = "deck",
    cap: int = 500,
    seed: int = 1,
) -> DSState:
    """A state in phase 1 of ``current``'s turn with exactly these piles.

    ``deck`` is listed top first; every card not named goes to the bottom of
    ``rest`` ("deck", "discard", "stack0" or "stack1"), in id order.
    """
    state = GAME.new_state(seed, {"cap": cap})
    used = [False] * N_CARDS

    def take(texts) -> list[int]:
        out = []
        for text in texts:
            for card in copies(text):
                if not used[card]:
                    used[card] = True
                    out.append(card)
                    break
            else:
                raise AssertionError(f"{text} named more than twice")
        return out

    state.hands = [take(hands[0]), take(hands[1])]
    state.queue = take(queue)
    state.stacks = [take(stacks[0]), take(stacks[1])]
    arrays = arrays or ([[], [], []], [[], [], []])
    state.arrays = [[take(a) for a in arrays[s]] for s in (0, 1)]
    state.closed = [list(c) for c in closed] if closed else [[False] * 3, [False] * 3]
    state.discard = take(discard)
    state.deck = list(reversed(take(deck)))
    state.recycle = []
    leftover = [c for c in range(N_CARDS) if not used[c]]
    target = {"deck": state.deck, "discard": state.discard,
              "stack0": state.stacks[0], "stack1": state.stacks[1]}[rest]
    target[:0] = leftover
    state.current = current
    state.phase = "play"
    state.turn = 1
    state.played = state.mulliganed = state.stacked = False
    state.idle_turns = 0
    state.last_mulligan = None
    state.result = None
    assert_conserved(state)
    return state


def names(cards: list[int]) -> list[str]:
    from engine.datastructures.deck import NAME

    return [NAME[c] for c in cards]
