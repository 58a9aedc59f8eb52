"""Runs scripts/tmux_resume.py: a real `cardclient` in tmux whose terminal is closed
mid-match, started again: back in its match, asking before it quits; a registration
at the password prompt and a remembered login (#14)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tmux_resume.py"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_restarted_cardclient_takes_its_seat_back() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=120)
    if done.returncode == 77:
        pytest.skip("tmux_resume: tmux not usable here")
    assert done.returncode == 0, done.stdout + done.stderr
    for step in ("play: ok", "resume: ok", "ask: ok", "forget: ok", "login: ok"):
        assert step in done.stdout, done.stdout
