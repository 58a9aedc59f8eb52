"""Fixtures for the cluster tests: a real redis-server per test module."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from server.app import Server, serve
from tests.cluster.redis_server import RedisServer
from tests.server.helpers import TestClient, make_config


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server shared by one test module (use :func:`redis_url` for a clean one)."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The URL of the module's redis-server, emptied before the test."""
    import socket
    with socket.create_connection(("127.0.0.1", redis_server.port)) as s:
        s.sendall(b"FLUSHALL\r\n")
        s.recv(16)
    yield redis_server.url


@pytest.fixture
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server of the test's own (for tests that kill or restart it)."""
    server = RedisServer(tmp_path_factory.mktemp("redis-own"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def start_node(redis_url: str, tmp_path: Path, nursery: trio.Nursery
               ) -> Callable[..., Awaitable[Server]]:
    """``await start_node(name, **config_overrides)`` -> an in-process ``--cluster`` node
    on the test's redis-server (its own store), listening on a free loopback port."""

    async def start(name: str, **overrides: Any) -> Server:
        config = make_config(tmp_path, db=tmp_path / f"{name}.db", cluster=redis_url,
                             node_name=name, **overrides)
        return await nursery.start(partial(serve, config))

    return start


async def connect_to(server: Server, name: str = "alice") -> TestClient:
    """A client of ``server`` that has completed its handshake."""
    assert server.port is not None
    return await TestClient.welcomed(server.port, name)
