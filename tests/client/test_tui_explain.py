"""Refused Data Structures choices explained in words read off the view."""

from __future__ import annotations

from typing import Any

from client.tui import explain

PLAY = [{"type": "play", "src": "hand", "index": 1, "array": 0}, {"type": "end_phase"}]


def view(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "phase": "play", "played": False, "stacked": False, "hand": ["8S", "9H", "AC"],
        "queue": ["KD", "2C"],
        "players": [
            {"seat": 0, "stack": ["4C"], "arrays": [
                {"cards": ["7C", "8D"], "next": "9", "closed": False},
                {"cards": [], "next": None, "closed": False},
                {"cards": [], "next": None, "closed": True}]},
            {"seat": 1, "stack": [], "arrays": []}]}
    base.update(changes)
    return base


def test_a_card_that_fits_no_array_names_what_each_needs() -> None:
    words = explain.why_not_source(("hand", 0), view(), 0, PLAY)
    assert words == "8♠ does not fit: array 1 needs 9, array 2 is empty (hand only), " \
                    "array 3 is closed"


def test_aces_never_go_on_arrays() -> None:
    assert explain.why_not_source(("hand", 2), view(), 0, PLAY) == \
        "A♣ is an ace: aces never go on arrays"
    assert "AC is an ace" in explain.why_not_source(("hand", 2), view(), 0, PLAY, glyphs=False)


def test_sources_that_are_not_there_or_not_now() -> None:
    assert explain.why_not_source(("stack", 1), view(), 0, PLAY).endswith("that stack is empty")
    assert explain.why_not_source(("hand", 7), view(), 0, PLAY) == "there is no hand card 8"
    assert explain.why_not_source(("hand", 0), view(), 0, []) == "it is not your move"
    assert "only hand cards move" in explain.why_not_source(("queue",), view(phase="discard"),
                                                            0, PLAY)
    full = view(phase="discard", queue=["2C"] * 5, stacked=True)
    assert "the queue is full" in explain.why_not_source(("hand", 0), full, 0, PLAY)


def test_targets() -> None:
    assert explain.why_not_target(("hand", 0), ("array", 0), view(), 0) == \
        "8♠ does not fit: array 1 needs 9"
    assert explain.why_not_target(("queue",), ("array", 1), view(), 0) == \
        "array 2 is empty: an empty array starts only from the hand"
    assert explain.why_not_target(("hand", 0), ("array", 2), view(), 0) == "array 3 is closed"
    assert explain.why_not_target(("hand", 0), ("qtail",), view(phase="discard"), 0) == \
        "put a hand card on your stack first (phase 2 starts with it)"


def test_mulligan_and_end() -> None:
    assert "a card can still be played" in explain.why_no_mulligan(view(), PLAY)
    assert "already played" in explain.why_no_mulligan(view(played=True), [{"type": "x"}])
    assert explain.why_cannot_end(view(phase="discard"), [{"type": "stack", "index": 0}]) == \
        "first put a hand card on your stack (pick it, then s)"
