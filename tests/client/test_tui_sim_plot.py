"""`cardsim --plot FILE.svg`: the game-length histogram and the tournament chart as SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from client.sim import plot
from client.sim.cli import main as cardsim
from client.sim.report import bins_of

SVG = "{http://www.w3.org/2000/svg}"


def bars(path: Path) -> list[ET.Element]:
    root = ET.parse(path).getroot()
    return [e for e in root.iter(f"{SVG}rect") if e.get("class") == "bar"]


def test_war_plot_has_one_bar_per_bin_of_the_text_histogram(tmp_path: Path, capsys) -> None:
    out = tmp_path / "war.svg"
    assert cardsim(["war", "--games", "40", "--seed", "3", "--plot", str(out), "--json"]) == 0
    drawn = bars(out)
    import json
    report = json.loads(capsys.readouterr().out)
    counts = [b["count"] for b in report["histogram"]]
    assert len(drawn) == len(counts)
    titles = [e.find(f"{SVG}title").text for e in drawn]
    assert [int(re.search(r": (\d+) games", t).group(1)) for t in titles] == counts
    heights = [float(e.get("height")) for e in drawn]
    assert heights.index(max(heights)) == counts.index(max(counts))


def test_datastructures_plot_and_an_unwritable_file(tmp_path: Path) -> None:
    out = tmp_path / "ds.svg"
    assert cardsim(["datastructures", "--games", "4", "--seed", "1", "--cap", "30",
                    "--plot", str(out)]) == 0
    assert bars(out) and "turns per game" in out.read_text()
    assert cardsim(["datastructures", "--games", "2", "--seed", "1", "--cap", "10",
                    "--plot", str(tmp_path / "no" / "dir" / "x.svg")]) == 1


def test_tournament_chart_one_bar_per_pairing(tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    assert cardsim(["tournament", "datastructures", "--bots", "random,greedy", "--games", "4",
                    "--no-progress", "--jobs", "1", "--option", "cap=40",
                    "--plot", str(out)]) == 0
    text = out.read_text()
    assert "random vs greedy" in text and "95% interval" in text


def test_histogram_svg_matches_bins_of() -> None:
    values = [3, 5, 5, 9, 12, 40]
    svg = plot.histogram_svg(values, title="t", unit="turns", bins=4)
    assert svg.count('class="bar"') == len(bins_of(values, 4))
    ET.fromstring(svg)  # well-formed
    assert plot.histogram_svg([], title="empty", unit="turns").count('class="bar"') == 0
