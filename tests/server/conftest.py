"""Fixtures: an in-process server on 127.0.0.1 and an ephemeral port."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from server.app import Server, serve
from tests.server.helpers import TestClient, make_config


@pytest.fixture
def start_server(tmp_path: Path, nursery: trio.Nursery) -> Callable[..., Awaitable[Server]]:
    """``await start_server(**config_overrides)`` -> a running Server."""

    async def start(**overrides: Any) -> Server:
        return await nursery.start(partial(serve, make_config(tmp_path, **overrides)))

    return start


@pytest.fixture
def connect() -> Callable[..., Awaitable[TestClient]]:
    """``await connect(server, name)`` -> a client that has completed its handshake."""

    async def open_client(server: Server, name: str | None = "alice") -> TestClient:
        assert server.port is not None
        client = await TestClient.connect(server.port)
        if name is not None:
            welcome = await client.hello(name)
            assert welcome["type"] == "welcome", welcome
        return client

    return open_client
