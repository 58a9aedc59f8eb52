"""Fixtures: a real in-process server on 127.0.0.1, an ephemeral port."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from server.app import Server, serve
from server.config import ServerConfig


def bot_server_config(tmp_path: Path, **overrides: Any) -> ServerConfig:
    """Loopback, any free port, a fresh store, no turn timer, quick server bots."""
    base: dict[str, Any] = dict(host="127.0.0.1", port=0, db=tmp_path / "bots.db", grace=30.0,
                                turn_timer=0, shutdown_timeout=0.5, bot_time_budget=0.01,
                                auto_flip_delay=0.0)
    base.update(overrides)
    return ServerConfig(**base)


@pytest.fixture
def start_server(tmp_path: Path, nursery: trio.Nursery) -> Callable[..., Awaitable[Server]]:
    """``await start_server(**config_overrides)`` -> a running, listening Server."""

    async def start(**overrides: Any) -> Server:
        return await nursery.start(partial(serve, bot_server_config(tmp_path, **overrides)))

    return start
