"""``cardsim ladder``: the ratings, their bootstrap intervals and the command."""

from __future__ import annotations

import json

from client.sim.cli import main
from client.sim.ladder import bootstrap_elo, ladder_rows
from client.sim.tournament import GameRecord, elo_ratings


def _records(a_wins: int, b_wins: int, draws: int = 0) -> list[GameRecord]:
    """Games between bots a and b, two per deal with the seats swapped."""
    outcomes = ["a"] * a_wins + ["b"] * b_wins + [None] * draws
    out = []
    for k, who in enumerate(outcomes):
        bots = ("a", "b") if k % 2 == 0 else ("b", "a")
        winner = None if who is None else bots.index(who)
        out.append(GameRecord(k, bots, k // 2, winner, "three_arrays", 100, (0.0, 0.0), (1, 1)))
    return out


def test_bootstrap_interval_brackets_the_rating_and_narrows_with_games() -> None:
    few, many = _records(16, 4), _records(160, 40)
    for records in (few, many):
        ratings = elo_ratings(records, ["a", "b"])
        intervals = bootstrap_elo(records, ["a", "b"], resamples=100, seed=1)
        for name in ("a", "b"):
            lo, hi = intervals[name]
            assert lo <= ratings[name] + 1 and ratings[name] - 1 <= hi
    # 160 : 40 is clearly better, and the intervals say so.
    intervals = bootstrap_elo(many, ["a", "b"], resamples=100, seed=1)
    assert intervals["a"][0] > 0 > intervals["b"][1]
    width = {id(r): bootstrap_elo(r, ["a", "b"], 100, 1)["a"] for r in (few, many)}
    assert width[id(many)][1] - width[id(many)][0] < width[id(few)][1] - width[id(few)][0]
    assert bootstrap_elo(few, ["a", "b"], 50, 7) == bootstrap_elo(few, ["a", "b"], 50, 7)


def test_ladder_rows_rank_and_count_every_game() -> None:
    rows = ladder_rows(_records(30, 10, 4), ["b", "a"], resamples=30)
    assert [r.name for r in rows] == ["a", "b"] and [r.rank for r in rows] == [1, 2]
    a, b = rows
    assert (a.games, a.wins, a.losses, a.draws) == (44, 30, 10, 4)
    assert (b.wins, b.losses) == (10, 30) and a.score == (30 + 2) / 44
    assert a.elo > 0 > b.elo and a.low <= a.elo <= a.high


def test_ladder_command_plays_every_pairing(capsys) -> None:
    argv = ["ladder", "datastructures", "--bots", "random,greedy,search", "--games", "2",
            "--time-budget", "0.002", "--jobs", "1", "--no-progress", "--option", "cap=30",
            "--resamples", "20"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in report["ladder"]] == sorted(
        ["random", "greedy", "search"], key=lambda n: -report["tournament"]["elo"][n])
    assert len(report["tournament"]["games"]) == 3 * 2
    assert all(r["games"] == 4 for r in report["ladder"])  # two opponents, two games each
    assert main([*argv, "--markdown"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| rank | strategy | Elo (95% interval) |") and "`greedy`" in table
    assert main(argv) == 0
    assert "95% interval" in capsys.readouterr().out


def test_ladder_refuses_unknown_strategies(capsys) -> None:
    assert main(["ladder", "datastructures", "--bots", "greedy,nope", "--no-progress"]) == 2
    assert "unknown strategy 'nope'" in capsys.readouterr().err


def test_ladder_from_saved_tournaments_ranks_their_games(capsys, tmp_path) -> None:
    """Two saved runs with different pairings make one ladder; other budgets are refused."""
    files = []
    for k, bots in enumerate(["random,greedy", "greedy,search"]):
        assert main(["tournament", "datastructures", "--bots", bots, "--games", "2", "--seed",
                     str(k), "--time-budget", "0.002", "--jobs", "1", "--no-progress",
                     "--option", "cap=30", "--json"]) == 0
        path = tmp_path / f"run{k}.json"
        path.write_text(capsys.readouterr().out)
        files.append(str(path))
    argv = ["ladder", "datastructures", "--from", files[0], "--from", files[1],
            "--resamples", "20", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ladder = {r["name"]: r for r in report["ladder"]}
    assert set(ladder) == {"random", "greedy", "search"}
    assert ladder["greedy"]["games"] == 4 and ladder["random"]["games"] == 2
    saved = [json.loads(open(f).read())["games"] for f in files]
    assert [g["seed"] for g in report["tournament"]["games"]] == [
        g["seed"] for run in saved for g in run]
    assert main(argv) == 0 and "4 games from" in capsys.readouterr().out
    assert main(["tournament", "datastructures", "--bots", "random,greedy", "--games", "2",
                 "--time-budget", "0.5", "--jobs", "1", "--no-progress", "--json"]) == 0
    other = tmp_path / "other.json"
    other.write_text(capsys.readouterr().out)
    assert main(["ladder", "datastructures", "--from", files[0], "--from", str(other)]) == 2
    assert "not datastructures at 0.002 s" in capsys.readouterr().err
    assert main(["tournament", "datastructures", "--bots", "random,greedy", "--games", "2",
                 "--time-budget", "0.002", "--clock", "cpu", "--jobs", "1", "--no-progress",
                 "--option", "cap=30", "--json"]) == 0
    cpu = tmp_path / "cpu.json"
    cpu.write_text(capsys.readouterr().out)
    assert main(["ladder", "datastructures", "--from", files[0], "--from", str(cpu)]) == 2
    assert "(cpu time), not datastructures at 0.002 s (wall time)" in capsys.readouterr().err
    assert main(["ladder", "datastructures", "--from", str(cpu), "--markdown"]) == 0
    assert "(cpu time)" in capsys.readouterr().out
    assert main(["ladder", "datastructures", "--from", str(tmp_path / "missing.json")]) == 2
