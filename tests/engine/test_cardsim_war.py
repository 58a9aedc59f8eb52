"""`cardsim` command line (war subcommand, routing) and client/sim/report.py helpers."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from client.sim import cli, report
from client.sim import war as war_sim

BIN = Path(sys.executable).parent


def run_json(capsys, *argv: str) -> dict:
    assert cli.main(["war", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_war_json_report_adds_up_and_is_deterministic(capsys) -> None:
    out = run_json(capsys, "--games", "40", "--seed", "3")
    assert out["games"] == 40 and out["game"] == "war"
    assert out["options"] == {"return": "shuffled", "short_war": "stand", "cap": 10000}
    assert sum(out["wins"]) + out["draws"] == 40
    assert sum(out["reasons"].values()) == 40
    assert sum(b["count"] for b in out["histogram"]) == 40
    assert out["min_battles"] <= out["median_battles"] <= out["max_battles"]
    assert out["min_battles"] <= out["mode_battles"] <= out["max_battles"]
    assert out["min_battles"] <= out["mean_battles"] <= out["max_battles"]
    assert out["capped"] == out["reasons"].get("cap", 0)
    again = run_json(capsys, "--games", "40", "--seed", "3")
    out.pop("elapsed"), again.pop("elapsed")
    assert again == out
    other = run_json(capsys, "--games", "40", "--seed", "4")
    assert other["mean_battles"] != out["mean_battles"]


def test_war_results_match_the_engine_game_by_game() -> None:
    results = war_sim.simulate(5, 9, {"cap": 300})
    from engine.registry import get_game

    for r in results:
        state = get_game("war").new_state(r.seed, {"cap": 300})
        while state.outcome() is None:
            for seat in state.to_move():
                state.apply(seat, {"type": "flip"})
        assert (state.battles, state.wars, state.outcome().winner, state.outcome().reason) == \
            (r.battles, r.wars, r.winner, r.reason)


def test_war_cap_and_variants_reach_the_engine(capsys) -> None:
    out = run_json(capsys, "--games", "12", "--seed", "1", "--cap", "5")
    assert out["capped"] == 12 and out["capped_share"] == 1.0 and out["max_battles"] == 5
    assert out["reasons"] == {"cap": 12}
    out = run_json(capsys, "--games", "30", "--seed", "1", "--return", "played",
                   "--short-war", "lose", "--cap", "400")
    assert out["options"] == {"return": "played", "short_war": "lose", "cap": 400}
    assert set(out["reasons"]) <= {"all_cards", "cap", "short_war"}


def test_war_text_report_names_every_figure(capsys) -> None:
    assert cli.main(["war", "--games", "25", "--seed", "2"]) == 0
    text = capsys.readouterr().out
    for words in ("war: 25 games, seed 2", "mean", "median", "mode", "max",
                  "wars per game", "hit the cap:", "seat 0", "seat 1", "draws",
                  "game length (battles):", " | #"):
        assert words in text, words


def test_bad_arguments_exit_2(capsys) -> None:
    for argv in (["war", "--cap", "0"], ["war", "--games", "x"], ["war", "--return", "up"],
                 ["nope"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
    assert cli.main([]) == 2
    capsys.readouterr()


def test_help_lists_every_subcommand(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in cli.SUBCOMMANDS)


def test_other_subcommands_are_routed(capsys) -> None:
    for name in ("datastructures", "tournament"):
        with pytest.raises(SystemExit) as exc:
            cli.main([name, "--help"])
        assert exc.value.code == 0
        assert f"cardsim {name}" in capsys.readouterr().out


def test_console_script_runs_war() -> None:
    done = subprocess.run([BIN / "cardsim", "war", "--games", "3", "--seed", "5", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 3
    assert done.stderr == ""          # no progress bar for a quick run or a pipe


# ------------------------------------------------------------- report.py

def test_statistics_helpers() -> None:
    values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    assert report.mean(values) == pytest.approx(44 / 11)
    assert report.median(values) == 4
    assert report.mode(values) == 5
    assert report.mode([2, 1, 2, 1]) == 1            # tie: the smallest
    assert report.maximum(values) == 9
    assert report.median([1, 2, 3, 4]) == 2.5
    assert report.describe([]) == {"n": 0, "mean": None, "median": None, "mode": None,
                                   "max": None, "min": None}
    assert report.describe([7]) == {"n": 1, "mean": 7, "median": 7, "mode": 7, "max": 7,
                                    "min": 7}


def test_histogram_bins_cover_every_value_once() -> None:
    values = list(range(0, 100)) + [100] * 7
    rows = report.bins_of(values, bins=10)
    assert len(rows) <= 10 and sum(k for _, _, k in rows) == len(values)
    assert rows[0][0] == 0 and rows[-1][1] == 100
    for (_, hi, _), (lo, _, _) in zip(rows, rows[1:], strict=False):
        assert lo == hi + 1
    text = report.histogram(values, bins=10, width=20)
    lines = text.splitlines()
    assert len(lines) == len(rows)
    assert max(line.count("#") for line in lines) == 20
    assert report.histogram([]) == "(no data)"
    assert report.bins_of([5, 5, 5]) == [(5, 5, 3)]
    floats = report.bins_of([0.0, 0.5, 1.0], bins=2)
    assert [k for _, _, k in floats] == [1, 2]
    with pytest.raises(ValueError):
        report.bins_of([1], bins=0)


def test_progress_shows_only_after_the_delay() -> None:
    now = [0.0]
    stream = io.StringIO()
    bar = report.Progress(10, "x", delay=0.5, stream=stream, enabled=True,
                          clock=lambda: now[0])
    for _ in range(5):
        bar.advance()
    assert stream.getvalue() == ""                    # a quick run shows nothing
    now[0] = 1.0
    bar.advance()
    assert "6/10" in stream.getvalue() and "[" in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\n")
    quick = io.StringIO()
    with report.Progress(3, stream=quick, enabled=True, clock=lambda: 0.0) as fast:
        fast.advance(3)
    assert quick.getvalue() == ""
    silent = io.StringIO()
    off = report.Progress(3, stream=silent, clock=lambda: 99.0)   # not a terminal
    off.advance()
    off.close()
    assert silent.getvalue() == ""
