"""The tournament plays real games through the engine and reports exactly those games."""

from __future__ import annotations

import argparse
import json

from client.sim.tournament import (
    GameJob,
    add_arguments,
    play_game,
    run,
    run_tournament,
    schedule,
)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_table_matches_the_games_it_played(capsys) -> None:
    status = run(_args("datastructures", "--bots", "random,greedy,search", "--games", "4",
                       "--seed", "3", "--time-budget", "0.002", "--jobs", "1", "--json",
                       "--option", "cap=60"))
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    games = report["games"]
    assert len(games) == 3 * 4
    jobs = schedule(["random", "greedy", "search"], 4, 3)
    for game, job in zip(games, jobs, strict=True):
        assert tuple(game["bots"]) == job.bots and int(game["seed"], 16) == job.seed
        assert game["moves"] > 0 and game["reason"] in ("three_arrays", "cap", "stuck")
    # Every table row is the count of its own games, from A's point of view.
    for row in report["table"]:
        mine = [g for g in games if set(g["bots"]) == {row["a"], row["b"]}]
        a_wins = sum(1 for g in mine if g["winner"] is not None
                     and g["bots"][g["winner"]] == row["a"])
        draws = sum(1 for g in mine if g["winner"] is None)
        assert (row["games"], row["a_wins"], row["draws"]) == (len(mine), a_wins, draws)
        assert row["b_wins"] == len(mine) - a_wins - draws
        assert row["mean_moves"] == sum(g["moves"] for g in mine) / len(mine)
        decided = row["a_wins"] + row["b_wins"]
        if decided:
            assert row["a_win_rate"] == row["a_wins"] / decided
            assert row["ci95"][0] <= row["a_win_rate"] <= row["ci95"][1]
    # Games between deterministic bots replay to the same result from their record.
    for game, job in zip(games, jobs, strict=True):
        if "search" not in job.bots:
            again = play_game("datastructures", job, {"cap": 60})
            assert (again.winner, again.reason, again.moves) == (
                game["winner"], game["reason"], game["moves"])
    ratings = report["elo"]
    assert set(ratings) == {"random", "greedy", "search"}
    assert ratings["greedy"] > ratings["random"]


def test_processes_give_the_same_games_as_one() -> None:
    one = run_tournament("datastructures", ["random", "greedy"], 6, seed=9, workers=1)
    two = run_tournament("datastructures", ["random", "greedy"], 6, seed=9, workers=2)
    assert [(r.index, r.winner, r.moves) for r in one.records] == \
        [(r.index, r.winner, r.moves) for r in two.records]


def test_war_tournament_and_text_table(capsys) -> None:
    assert run(_args("war", "--bots", "random,greedy", "--games", "2", "--jobs", "1")) == 0
    out = capsys.readouterr().out
    assert "random   greedy      2" in out and "95% CI (Wilson)" in out and "Elo" in out


def test_bad_arguments_are_reported(capsys) -> None:
    assert run(_args("datastructures", "--bots", "random,nope")) == 2
    assert "unknown strategy" in capsys.readouterr().err
    assert run(_args("datastructures", "--bots", "random")) == 2
    assert run(_args("datastructures", "--option", "cap=0")) == 2
    assert run(_args("datastructures", "--option", "colour=red")) == 2


def test_seats_are_what_the_job_says() -> None:
    job = GameJob(0, ("greedy", "random"), 12345, (1, 2))
    record = play_game("datastructures", job)
    assert record.bots == ("greedy", "random")
    assert record.decisions[0] > 0 and record.decisions[1] > 0


def test_cpu_clock_budgets_and_times_on_the_thread_cpu_time(capsys, monkeypatch) -> None:
    """``--clock cpu`` reads the budget and the thinking time on the CPU-time clock."""
    import time

    from client.sim import tournament

    calls = []

    def cpu() -> float:
        calls.append(1)
        return time.thread_time()

    monkeypatch.setitem(tournament.CLOCKS, "cpu", cpu)
    record = play_game("datastructures", GameJob(0, ("search", "greedy"), 7, (1, 2)),
                       {"cap": 20}, 0.002, "cpu")
    assert calls and record.think[0] > 0
    before = len(calls)
    play_game("datastructures", GameJob(0, ("search", "greedy"), 7, (1, 2)), {"cap": 20}, 0.002)
    assert len(calls) == before  # the wall clock is the default
    assert run(_args("datastructures", "--bots", "greedy,search", "--games", "2",
                     "--time-budget", "0.002", "--jobs", "1", "--clock", "cpu", "--json",
                     "--option", "cap=20", "--no-progress")) == 0
    assert json.loads(capsys.readouterr().out)["clock"] == "cpu"
    assert run(_args("datastructures", "--bots", "greedy,search", "--games", "2",
                     "--time-budget", "0.002", "--jobs", "1", "--clock", "cpu",
                     "--option", "cap=20", "--no-progress")) == 0
    assert "s/move (CPU time)" in capsys.readouterr().out


def test_an_unknown_clock_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown clock"):
        run_tournament("datastructures", ["random", "greedy"], 2, clock="sundial")
