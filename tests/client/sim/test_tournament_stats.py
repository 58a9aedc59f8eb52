"""The tournament's statistics and bookkeeping, without playing any game."""

from __future__ import annotations

import math

import pytest

from client.sim.tournament import (
    GameRecord,
    elo_from_score,
    elo_ratings,
    pairings,
    parse_options,
    schedule,
    tabulate,
    wilson,
)


def _rec(i: int, bots: tuple[str, str], winner: int | None) -> GameRecord:
    return GameRecord(i, bots, 1, winner, "test", 10, (0.0, 0.0), (5, 5))


def test_wilson_matches_known_values() -> None:
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-3)
    assert hi == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 5)[0] == 0.0
    assert wilson(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        wilson(1, 0)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_wilson_holds_the_rate_and_is_exact_at_the_ends() -> None:
    for trials in range(1, 401):
        assert wilson(0, trials)[0] == 0.0 and wilson(trials, trials)[1] == 1.0
        for wins in range(trials + 1):
            lo, hi = wilson(wins, trials)
            assert 0.0 <= lo <= wins / trials <= hi <= 1.0, (wins, trials)


def test_elo_from_score_is_symmetric_and_zero_at_even() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(-elo_from_score(0.25))
    assert elo_from_score(0.75) == pytest.approx(190.8, abs=0.5)


def test_schedule_swaps_seats_on_each_deal() -> None:
    jobs = schedule(["random", "greedy", "search"], 4, seed=7)
    assert len(jobs) == 3 * 4
    assert [j.index for j in jobs] == list(range(12))
    first, second = jobs[0], jobs[1]
    assert first.bots == ("random", "greedy") and second.bots == ("greedy", "random")
    assert first.seed == second.seed
    assert first.strategy_seeds == second.strategy_seeds[::-1]
    assert jobs[2].seed != first.seed
    assert schedule(["random", "greedy", "search"], 4, seed=7) == jobs
    assert schedule(["random", "greedy", "search"], 4, seed=8) != jobs
    with pytest.raises(ValueError):
        schedule(["random"], 4, 0)
    with pytest.raises(ValueError):
        schedule(["random", "random"], 4, 0)
    with pytest.raises(ValueError):
        schedule(["random", "greedy"], 0, 0)


def test_tabulate_counts_each_game_once_from_a_point_of_view() -> None:
    bots = ["random", "greedy"]
    records = [
        _rec(0, ("random", "greedy"), 1),   # greedy wins
        _rec(1, ("greedy", "random"), 0),   # greedy wins
        _rec(2, ("random", "greedy"), 0),   # random wins
        _rec(3, ("greedy", "random"), None),
    ]
    [row] = tabulate(records, bots)
    assert (row.a, row.b) == ("random", "greedy")
    assert (row.games, row.a_wins, row.b_wins, row.draws) == (4, 1, 2, 1)
    assert row.win_rate() == pytest.approx(1 / 3)
    assert row.interval() == wilson(1, 3)
    assert row.elo_diff() == pytest.approx(elo_from_score(1.5 / 4))
    with pytest.raises(ValueError):
        tabulate([_rec(0, ("random", "search"), 0)], bots)


def test_elo_ratings_order_and_center() -> None:
    bots = ["a", "b", "c"]
    records = []
    for i, (x, y, wins_x, n) in enumerate([("a", "b", 2, 10), ("b", "c", 3, 10),
                                             ("a", "c", 1, 10)]):
        for k in range(n):
            records.append(_rec(i * 100 + k, (x, y), 0 if k < wins_x else 1))
    ratings = elo_ratings(records, bots)
    assert ratings["c"] > ratings["b"] > ratings["a"]
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-6)
    # one-sided results stay finite thanks to the prior
    lopsided = elo_ratings([_rec(k, ("a", "b"), 0) for k in range(20)], ["a", "b"])
    assert all(math.isfinite(v) for v in lopsided.values())
    assert lopsided["a"] > lopsided["b"]


def test_pairings_and_options() -> None:
    assert pairings(["x", "y", "z"]) == [("x", "y"), ("x", "z"), ("y", "z")]
    assert parse_options(["cap=200", "return=played", "auto=true"]) == {
        "cap": 200, "return": "played", "auto": True}
    assert parse_options(["delay=0.25", "c=1e-1", "big=inf", "nan=nan", "v=1.2.3"]) == {
        "delay": 0.25, "c": 0.1, "big": "inf", "nan": "nan", "v": "1.2.3"}
    assert type(parse_options(["n=7"])["n"]) is int
    with pytest.raises(ValueError):
        parse_options(["cap"])
