"""Fixtures for every test."""

from __future__ import annotations

import os
from pathlib import Path

# Server-built events skip the schema walk in production (protocol.events.trusted);
# every test checks them, in this process and in the servers it starts.
os.environ["CARDSERVER_CHECK_EVENTS"] = "1"

import pytest  # noqa: E402

import protocol.events  # noqa: E402

protocol.events.CHECK_TRUSTED = True


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``$XDG_STATE_HOME`` at a fresh directory, so that clients started by a
    test (cardclient, cardbot, also as subprocesses) remember nothing from other
    tests and never write into the real home directory."""
    path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    return path
