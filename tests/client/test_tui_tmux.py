"""Runs scripts/tmux_e2e.py: a real server and two real `cardclient`s in tmux, played by
key presses and checked with capture-pane. Skipped cleanly where tmux is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tmux_e2e.py"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_two_clients_play_in_tmux() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=240)
    if done.returncode == 77:
        pytest.skip("tmux_e2e: tmux not usable here")
    assert done.returncode == 0, done.stdout + done.stderr
    for step in ("lobby: ok", "colour: ok", "chat: ok", "match: ok", "turns: ok",
                 "reconnect: ok", "end screen: ok", "lobby result: ok", "war fast-forward: ok",
                 "replay: ok", "watch: ok", "war: ok", "resize: ok", "quit: ok"):
        assert step in done.stdout, done.stdout
