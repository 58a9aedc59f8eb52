"""``cardserver --cluster``: nodes start, see each other, and refuse what is unsafe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.nodeproc import NodeProcess
from tests.cluster.redis_server import RedisServer
from tests.server.helpers import TestClient


async def test_welcome_lists_every_live_node(redis_url: str, tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path).start()
    b = await NodeProcess(redis_url, "b", tmp_path).start()
    try:
        client = await TestClient.connect(b.port)
        welcome = await client.hello("alice")
        assert welcome["nodes"] == [b.address, a.address]
        await client.aclose()
    finally:
        a.kill()
        b.kill()


def test_a_redis_without_fsync_always_is_refused(tmp_path_factory: pytest.TempPathFactory
                                                 ) -> None:
    weak = RedisServer(tmp_path_factory.mktemp("weak"), fsync="everysec")
    weak.start()
    try:
        result = NodeProcess(weak.url, "a", tmp_path_factory.mktemp("node")).run_to_exit()
        assert result.returncode == 1
        assert "appendfsync everysec" in result.stderr
    finally:
        weak.stop()


async def test_a_second_node_of_the_same_name_is_refused(redis_url: str,
                                                         tmp_path: Path) -> None:
    a = await NodeProcess(redis_url, "a", tmp_path).start()
    try:
        second = tmp_path / "second"
        second.mkdir()
        result = NodeProcess(redis_url, "a", second).run_to_exit()
        assert result.returncode == 1
        assert "already in the cluster" in result.stderr
    finally:
        a.kill()


def test_an_unreachable_redis_is_a_clear_error(tmp_path: Path) -> None:
    from tests.server.helpers import free_port
    result = NodeProcess(f"redis://127.0.0.1:{free_port()}/0", "a", tmp_path).run_to_exit()
    assert result.returncode == 1
    assert "cannot use the cluster's Redis" in result.stderr
