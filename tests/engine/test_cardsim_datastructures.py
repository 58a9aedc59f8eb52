"""``cardsim datastructures``: the random-game simulator's arguments, report and JSON."""

from __future__ import annotations

import argparse
import json

import pytest

from client.sim import datastructures as sim


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    sim.add_arguments(parser)
    status = sim.run(parser.parse_args(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_json_report_adds_up_and_is_deterministic(capsys):
    status, out, _ = run(["--games", "6", "--seed", "11", "--json"], capsys)
    assert status == 0
    report = json.loads(out)
    assert report["game"] == "datastructures" and report["games"] == 6 and report["cap"] == 500
    assert sum(report["outcomes"]["wins"]) + report["outcomes"]["draws"] == 6
    assert sum(report["reasons"].values()) == 6
    assert set(report["reasons"]) <= {"three_arrays", "stuck", "cap"}
    assert sum(report["closed_arrays"]["games_by_total"].values()) == 6
    assert report["turns"]["min"] <= report["turns"]["median"] <= report["turns"]["max"] <= 500
    assert sum(b["count"] for b in report["histogram"]) == 6
    _, again, _ = run(["--games", "6", "--seed", "11", "--json"], capsys)
    again = json.loads(again)
    report.pop("elapsed"), again.pop("elapsed")
    assert report == again
    _, other, _ = run(["--games", "6", "--seed", "12", "--json"], capsys)
    assert json.loads(other)["steps"] != report["steps"]


def test_cap_bounds_every_game(capsys):
    status, out, _ = run(["--games", "5", "--seed", "2", "--cap", "3", "--json"], capsys)
    report = json.loads(out)
    assert status == 0 and report["cap"] == 3
    assert report["turns"]["max"] <= 3
    assert report["reasons"] == {"cap": 5}


def test_text_report_names_every_figure(capsys):
    status, out, _ = run(["--games", "4", "--seed", "5"], capsys)
    assert status == 0
    for words in ("4 random games", "game length (turns): mean", "median", "max",
                  "closed arrays", "seat 0 wins", "seat 1 wins", "draws", "end reasons",
                  " | #"):
        assert words in out


def test_bad_arguments(capsys):
    status, _, err = run(["--games", "1", "--cap", "0"], capsys)
    assert status == 2 and "cap" in err
    with pytest.raises(SystemExit):
        run(["--games", "0"], capsys)


def test_summarize_counts():
    results = [
        sim.GameResult(1, 10, (3, 1), 0, "three_arrays", 40),
        sim.GameResult(2, 20, (0, 0), None, "stuck", 60),
        sim.GameResult(3, 30, (1, 2), 1, "cap", 90),
    ]
    summary = sim.summarize(results)
    assert summary["turns"] == {"n": 3, "mean": 20.0, "median": 20, "mode": 10, "max": 30,
                                "min": 10}
    assert sum(b["count"] for b in summary["histogram"]) == 3
    assert summary["outcomes"] == {"wins": [1, 1], "draws": 1}
    assert summary["closed_arrays"]["per_seat"] == [4, 3]
    assert summary["closed_arrays"]["games_by_total"] == {"0": 1, "3": 1, "4": 1}
    assert summary["reasons"] == {"cap": 1, "stuck": 1, "three_arrays": 1}


def test_cardsim_command_dispatches_here(capsys):
    from client.sim.cli import main

    assert main(["datastructures", "--games", "2", "--seed", "4", "--cap", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == "datastructures" and report["games"] == 2
    assert report["turns"]["max"] <= 5
