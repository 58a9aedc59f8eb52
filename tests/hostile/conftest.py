"""Fixtures for the hostile-input suite: an in-process server on 127.0.0.1, and a
legitimate Data Structures match played alongside each attack."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from server.app import Server, serve
from server.fdlimit import raise_fd_limit
from tests.server.helpers import make_config


@pytest.fixture(autouse=True, scope="session")
def _enough_file_descriptors() -> None:
    """The idle/slowloris tests hold ~2,000 sockets in this one process (client and
    server ends): raise the soft open-file limit to the hard limit, as cardserver
    itself does."""
    raise_fd_limit()


@pytest.fixture
def start_server(tmp_path: Path, nursery: trio.Nursery) -> Callable[..., Awaitable[Server]]:
    """``await start_server(**config_overrides)`` -> a running Server (loopback, port 0)."""

    async def start(**overrides: Any) -> Server:
        return await nursery.start(partial(serve, make_config(tmp_path, **overrides)))

    return start
