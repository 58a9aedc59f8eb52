"""Fixtures for every test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``$XDG_STATE_HOME`` at a fresh directory, so that clients started by a
    test (cardclient, cardbot, also as subprocesses) remember nothing from other
    tests and never write into the real home directory."""
    path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    return path
