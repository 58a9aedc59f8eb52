"""Every console script is installed and answers --help and --version."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from protocol.version import __version__

SCRIPTS = ["cardserver", "cardclient", "cardbot", "cardsim"]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_exits_zero_and_names_the_command(name: str) -> None:
    done = subprocess.run([BIN / name, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert name in done.stdout
    assert "usage" in done.stdout.lower()


@pytest.mark.parametrize("name", SCRIPTS)
def test_version_prints_the_package_version(name: str) -> None:
    done = subprocess.run([BIN / name, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
    assert __version__ != "0.0.0+unknown"
