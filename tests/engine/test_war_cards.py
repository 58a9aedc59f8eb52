"""engine.cards: ids, ranks, suits and wire strings."""

from __future__ import annotations

import pytest

from engine import cards


def test_every_id_round_trips_through_its_string() -> None:
    strings = [cards.to_str(c) for c in cards.deck()]
    assert len(set(strings)) == 52
    assert [cards.from_str(s) for s in strings] == cards.deck()


def test_known_cards() -> None:
    assert cards.to_str(cards.make(10, "H")) == "10H"
    assert cards.to_str(cards.make(12, "S")) == "QS"
    assert cards.to_str(cards.make(14, "C")) == "AC"
    assert cards.rank(cards.from_str("2D")) == 2
    assert cards.rank(cards.from_str("JH")) == 11
    assert cards.rank(cards.from_str("AS")) == 14
    assert cards.suit(cards.from_str("KD")) == "D"


def test_ranks_table_matches_rank() -> None:
    assert all(cards.RANKS[c] == cards.rank(c) for c in cards.deck())
    assert sorted(set(cards.RANKS)) == list(range(2, 15))
    assert all(cards.RANKS.count(r) == 4 for r in range(2, 15))


@pytest.mark.parametrize("bad", ["back", "1H", "10h", "QX", "", None, 5])
def test_from_str_refuses_non_cards(bad: object) -> None:
    with pytest.raises(ValueError):
        cards.from_str(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 52, True, "3"])
def test_ids_out_of_range_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        cards.to_str(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        cards.rank(bad)  # type: ignore[arg-type]


def test_make_refuses_unknown_rank_or_suit() -> None:
    with pytest.raises(ValueError):
        cards.make(1, "H")
    with pytest.raises(ValueError):
        cards.make(10, "X")
