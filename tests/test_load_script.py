"""``scripts/load.py`` over real sockets: its client (its own codec, a seat that
decodes only the fields it reads) plays whole matches of both games against a
server it starts, every intent legal (the server refuses any other: an error
fails the run), and reports what it measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LOAD = Path(__file__).resolve().parents[1] / "scripts" / "load.py"


@pytest.mark.parametrize("game", ["war", "datastructures"])
def test_load_plays_flat_out_without_an_error(game: str, tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(LOAD), "--spawn-server", "--game", game, "--matches", "4",
         "--think", "0", "--duration", "2", "--ramp", "0.5", "--procs", "1",
         "--json", str(out)],
        capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["error_count"] == 0, figures["errors"]
    assert figures["intents_steady"] > 0
    assert figures["matches_started"] >= 4
    assert figures["server_cpu_ms_per_intent"] > 0
    if game == "war":   # War's capped matches are short: some end within the run
        assert figures["matches_finished"] > 0
