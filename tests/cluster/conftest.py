"""Fixtures for the cluster tests: a real redis-server per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster.redis_server import RedisServer


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
