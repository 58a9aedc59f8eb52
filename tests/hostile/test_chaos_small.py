"""The small variant of scripts/chaos_restart.py: 3 matches, 2 SIGKILLs at random
moments, restart with the same store; every acknowledged intent survives, every
match finishes, every journal replays to the recorded digests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "chaos_restart.py"


def test_three_matches_survive_two_sigkills(tmp_path: Path) -> None:
    out = tmp_path / "chaos.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--matches", "3", "--kills", "2", "--cap", "60",
         "--min-gap", "0.4", "--max-gap", "0.9", "--seed", "3", "--timeout", "60",
         "--json", str(out)],
        capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = json.loads(out.read_text())
    assert figures["kills"] == 2, figures
    assert figures["finished"] == 3 and not figures["problems"], figures
    assert figures["client_resumes"] >= 6, figures  # both seats of 3 matches, twice
    assert figures["intents_journaled"] > 0
