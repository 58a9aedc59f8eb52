"""Fixtures: an in-process server on 127.0.0.1 and an ephemeral port."""

from __future__ import annotations

import logging
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
        if name is None:
            return await TestClient.connect(server.port)
        return await TestClient.welcomed(server.port, name)

    return open_client


@pytest.fixture
def allow_error_logs() -> None:
    """Request this in a test that provokes server errors on purpose."""


@pytest.fixture(autouse=True)
def no_error_logs(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture):
    """Every server test fails if the server logged an error it did not expect."""
    yield
    if "allow_error_logs" in request.fixturenames:
        return
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR]
    assert not errors, f"unexpected server error log: {errors[0].getMessage()}"
