"""Match ownership: claims, adoption only from dead owners, epochs."""

from __future__ import annotations

from server.cluster import keys, ownership
from server.cluster.nodes import NodeRegistry
from server.cluster.redis import client


async def test_claim_adopt_and_epochs(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        a = NodeRegistry(redis, "a", "h:1", lease=5)
        b = NodeRegistry(redis, "b", "h:2", lease=5)
        await a.register()
        await b.register()
        assert await ownership.claim_new(redis, "m1", "a")
        assert not await ownership.claim_new(redis, "m1", "b")
        assert await ownership.owner_of(redis, "m1") == ownership.Owner("a", 1)
        assert await redis.smembers(keys.UNFINISHED) == {b"m1"}
        assert await ownership.adopt(redis, "m1", "b") is None  # a is alive
        await redis.delete([keys.alive("a")])  # a dies
        assert await ownership.adopt(redis, "m1", "b") == 2
        assert await ownership.owner_of(redis, "m1") == ownership.Owner("b", 2)
        assert await ownership.adopt(redis, "m1", "c") is None  # b is alive
        assert await ownership.owner_of(redis, "unknown") is None
        assert await ownership.adopt(redis, "unknown", "b") is None
