"""Glicko-2 (server/ratings.py): Glickman's worked example and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.ratings import (
    PROVISIONAL_RD,
    Rating,
    Seeker,
    counts,
    pair_seekers,
    pairing_window,
    rate_match,
    scores,
    update,
)
from server.store import JournalEntry


def test_glickmans_example() -> None:
    """ "Example of the Glicko-2 system": exact arithmetic gives 1464.05 / 151.52 / 0.059996."""
    player = Rating(1500, 200, 0.06)
    results = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    new = update(player, results)
    assert new.rating == pytest.approx(1464.05, abs=0.01)
    assert new.rd == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.059996, abs=1e-6)


def test_first_match_between_new_players() -> None:
    """Two new players: the winner gains what the loser loses, both RDs shrink."""
    winner, loser = rate_match(Rating(), Rating(), 0)
    assert winner.rating == pytest.approx(1662.31, abs=0.01)
    assert loser.rating == pytest.approx(1337.69, abs=0.01)
    assert winner.rd == pytest.approx(290.32, abs=0.01) and loser.rd == winner.rd
    assert winner.provisional and Rating(rd=PROVISIONAL_RD).provisional is False


def test_no_results_no_change() -> None:
    """No RD growth between matches: an empty period changes nothing."""
    rating = Rating(1600, 80, 0.05)
    assert update(rating, []) is rating


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValueError):
        Rating(rd=0)
    with pytest.raises(ValueError):
        Rating(rating=float("nan"))
    with pytest.raises(ValueError):
        update(Rating(), [(Rating(), 0.7)])
    with pytest.raises(ValueError):
        scores(2)


ratings = st.builds(Rating, st.floats(800, 2400), st.floats(30, 350), st.floats(0.03, 0.1))


@given(ratings, ratings)
def test_a_win_raises_a_loss_lowers(a: Rating, b: Rating) -> None:
    new_a, new_b = rate_match(a, b, 0)
    assert new_a.rating > a.rating and new_b.rating < b.rating


@given(st.floats(1100, 1900), st.floats(-400, 400), st.floats(100, 350), st.floats(100, 350),
       st.floats(0.03, 0.06), st.sampled_from([0, 1, None]))
def test_rd_shrinks(rating: float, gap: float, rd_a: float, rd_b: float, vol: float,
                    winner: int | None) -> None:
    """Against an opponent within 400 points, an RD of 100 or more shrinks with each match.

    (Below that, one match can tell less than the volatility adds, and Glicko-2 lets
    the RD grow a little: that is the algorithm, not a fault.)
    """
    a, b = Rating(rating, rd_a, vol), Rating(rating + gap, rd_b, vol)
    new_a, new_b = rate_match(a, b, winner)
    assert new_a.rd < a.rd and new_b.rd < b.rd


@given(ratings, ratings, st.sampled_from([0, 1, None]))
def test_symmetry(a: Rating, b: Rating, winner: int | None) -> None:
    """Swapping the seats swaps the results."""
    new_a, new_b = rate_match(a, b, winner)
    swapped = None if winner is None else 1 - winner
    new_b2, new_a2 = rate_match(b, a, swapped)
    assert new_a == new_a2 and new_b == new_b2


@given(ratings)
def test_draw_between_equals_keeps_the_rating(a: Rating) -> None:
    new_a, new_b = rate_match(a, a, None)
    assert new_a.rating == pytest.approx(a.rating, abs=1e-9)
    assert new_a == new_b


def test_counts_only_when_each_seat_played() -> None:
    def row(seq: int, kind: str, seat: int, by: str = "seat") -> JournalEntry:
        return JournalEntry(seq, kind, seat, {"type": "flip"} if kind == "intent" else None,
                            by=by)

    assert counts([row(1, "intent", 0), row(2, "intent", 1, "auto"), row(3, "resign", 0)])
    assert not counts([row(1, "intent", 0), row(2, "resign", 1)])
    assert not counts([row(1, "intent", 0), row(2, "intent", 1, "timer"),
                       row(3, "forfeit", 1, "timer")])
    assert not counts([])


def test_pairing_takes_the_closest_ratings_within_the_window() -> None:
    a = Seeker("a", 1, 1500, since=0.0)
    b = Seeker("b", 2, 1580, since=0.0)
    c = Seeker("c", 3, 1530, since=0.0)
    d = Seeker("d", 4, 1900, since=0.0)
    pairs = pair_seekers([a, b, c, d], now=0.0)
    assert [(x.ref, y.ref) for x, y in pairs] == [("a", "c")]
    # d is 320 points above b: both windows reach it after (320 - 100) / 20 = 11 s
    assert [(x.ref, y.ref) for x, y in pair_seekers([b, d], now=10.9)] == []
    assert [(x.ref, y.ref) for x, y in pair_seekers([b, d], now=11.0)] == [("b", "d")]
    # the newcomer's narrow window counts too
    late = Seeker("late", 5, 1900, since=10.0)
    assert pair_seekers([b, late], now=11.0) == []


def test_pairing_never_pairs_an_account_with_itself_nor_different_options() -> None:
    same = [Seeker("a1", 1, 1500, 0.0), Seeker("a2", 1, 1500, 0.0)]
    assert pair_seekers(same, now=100.0) == []
    apart = [Seeker("x", 1, 1500, 0.0, "cap=10"), Seeker("y", 2, 1500, 0.0, "cap=20")]
    assert pair_seekers(apart, now=100.0) == []
    three = same + [Seeker("b", 2, 1510, 5.0)]
    assert [(x.ref, y.ref) for x, y in pair_seekers(three, now=5.0)] == [("a1", "b")]


@given(st.lists(st.tuples(st.integers(1, 6), st.floats(1000, 2000), st.floats(0, 30)),
                max_size=30), st.floats(0, 60))
def test_pairing_properties(entries: list[tuple[int, float, float]], now: float) -> None:
    seekers = [Seeker(i, acc, rating, min(since, now)) for i, (acc, rating, since)
               in enumerate(entries)]
    pairs = pair_seekers(seekers, now)
    refs = [s.ref for pair in pairs for s in pair]
    assert len(refs) == len(set(refs))
    for x, y in pairs:
        assert x.account != y.account and x.since <= y.since
        gap = abs(x.rating - y.rating)
        assert gap <= pairing_window(now - x.since) and gap <= pairing_window(now - y.since)
