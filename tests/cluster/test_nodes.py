"""Node leases and the live-node list, against a real redis-server."""

from __future__ import annotations

import pytest
import trio

from server.cluster import keys
from server.cluster.nodes import NodeRegistry
from server.cluster.redis import PersistenceError, check_persistence, client
from tests.cluster.redis_server import RedisServer


async def test_two_nodes_see_each_other_and_a_dead_one_drops_out(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        a = NodeRegistry(redis, "a", "127.0.0.1:7001", lease=1.0)
        b = NodeRegistry(redis, "b", "127.0.0.1:7002", lease=1.0)
        await a.register()
        await b.register()
        await a.refresh()
        assert a.addresses() == ["127.0.0.1:7001", "127.0.0.1:7002"]
        gone: list[set[str]] = []
        a.on_nodes_gone.append(gone.append)
        await redis.delete([keys.alive("b")])  # b dies: its lease is gone
        await a.refresh()
        assert not a.is_alive("b") and gone == [{"b"}]
        assert a.addresses() == ["127.0.0.1:7001"]


async def test_a_second_node_of_the_same_name_is_refused(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        await NodeRegistry(redis, "a", "h:1", lease=5).register()
        with pytest.raises(RuntimeError, match="already"):
            await NodeRegistry(redis, "a", "h:2", lease=5).register()


async def test_renewal_notices_an_expired_lease(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        node = NodeRegistry(redis, "a", "h:1", lease=5)
        await node.register()
        assert await node.renew()
        lost: list[bool] = []
        node.on_lease_lost = lambda: lost.append(True)
        await redis.delete([keys.alive("a")])
        assert not await node.renew()
        assert lost == [True]


async def test_persistence_check(redis_url: str, tmp_path_factory: pytest.TempPathFactory
                                 ) -> None:
    redis = client(redis_url)
    async with redis:
        assert await check_persistence(redis) == "appendonly yes, appendfsync always"
    weak = RedisServer(tmp_path_factory.mktemp("weak"), fsync="everysec")
    weak.start()
    try:
        redis = client(weak.url)
        async with redis:
            with pytest.raises(PersistenceError, match="everysec"):
                await check_persistence(redis)
            assert "everysec" in await check_persistence(redis, allow_weaker=True)
    finally:
        weak.stop()


async def test_lease_expires_on_its_own(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        node = NodeRegistry(redis, "a", "h:1", lease=0.3)
        await node.register()
        await trio.sleep(0.5)
        assert await redis.get(keys.alive("a")) is None
