"""Sessions in Redis: a resume token works on every node, only its hash is stored, and an
idle session expires after ``session_ttl`` while a held one lives on."""

from __future__ import annotations

from pathlib import Path

import trio

from server import tokens
from server.cluster import keys
from server.cluster.redis import client
from tests.cluster.test_journal import players, start_node
from tests.server.helpers import TestClient


async def test_a_resume_token_works_on_another_node(tmp_path: Path, redis_url: str,
                                                    nursery: trio.Nursery) -> None:
    a = await start_node(nursery, tmp_path, redis_url, "a")
    b = await start_node(nursery, tmp_path, redis_url, "b")
    (alice,) = await players(a, "alice")
    assert alice.welcome is not None
    token, sid = alice.welcome["token"], alice.welcome["session"]
    await alice.aclose()
    again = await TestClient.connect(b.port)
    welcome = await again.hello("x", resume=token)
    assert welcome["type"] == "welcome" and welcome["resumed"], welcome
    assert welcome["session"] == sid and welcome["name"] == "alice"
    bad = await TestClient.connect(b.port)
    assert (await bad.hello("x", resume="0" * 43))["code"] == "bad_token"
    redis = client(redis_url)
    async with redis:
        assert await redis.get(keys.session_token(tokens.hash_token(token))) == sid.encode()
        for key in await redis.keys("*"):
            kind = await redis.type(key)
            values = ([await redis.get(key)] if kind == b"string" else
                      list((await redis.hgetall(key)).values()) if kind == b"hash" else [])
            assert not any(v is not None and token.encode() in v for v in values), key
    a.shutdown()
    b.shutdown()


async def test_an_idle_session_expires_and_a_held_one_lives_on(
        tmp_path: Path, redis_url: str, nursery: trio.Nursery) -> None:
    server = await start_node(nursery, tmp_path, redis_url, "a", session_ttl=1.0,
                              session_sweep_interval=0.2)
    idle, held = await players(server, "idle", "held")
    assert idle.welcome is not None and held.welcome is not None
    await idle.aclose()
    await trio.sleep(1.6)
    late = await TestClient.connect(server.port)
    assert (await late.hello("x", resume=idle.welcome["token"]))["code"] == "bad_token"
    await held.aclose()  # it stayed connected past its ttl: touched all along
    again = await TestClient.connect(server.port)
    welcome = await again.hello("x", resume=held.welcome["token"])
    assert welcome["type"] == "welcome" and welcome["session"] == held.welcome["session"]
    server.shutdown()
