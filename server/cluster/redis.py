"""The cluster's Redis client, and the start-up check that Redis persists every write.

coredis runs under trio (through anyio), keeps a pool of connections and
pipelines; redis-py's asyncio client does not run under trio. The client must be
used inside ``async with``, which runs its connection pool's tasks.
"""

from __future__ import annotations

import logging

import coredis

from server.cluster.metered import MeteredRedis

log = logging.getLogger("cardserver.cluster")


class PersistenceError(RuntimeError):
    """Redis does not persist every write before acknowledging it."""


def client(url: str) -> coredis.Redis:
    """A client for ``url`` (``redis://HOST:PORT/DB`` or ``rediss://``), not yet connected.

    Raises:
        ValueError: ``url`` is not a Redis URL.
    """
    if not url.startswith(("redis://", "rediss://")):
        raise ValueError(f"not a redis:// URL: {url!r}")
    return MeteredRedis.from_url(url, decode_responses=False)


def _text(value: bytes | str | None) -> str:
    return value.decode() if isinstance(value, bytes) else (value or "")


async def check_persistence(redis: coredis.Redis, *, allow_weaker: bool = False) -> str:
    """Return Redis's persistence setting, e.g. ``"appendonly yes, appendfsync always"``.

    Only ``appendonly yes`` with ``appendfsync always`` makes a write durable before
    Redis answers it, which is what "an accepted intent survives a crash" needs.

    Raises:
        PersistenceError: a weaker setting, unless ``allow_weaker`` (then it is
            logged as a warning: an acknowledged intent may be lost if Redis's host
            fails within ``everysec``'s second, or at any time without the AOF).
        coredis.exceptions.RedisError: Redis cannot be reached or refuses CONFIG
            (then it is reported as unknown, and refused unless ``allow_weaker``).
    """
    try:
        found = await redis.config_get(["appendonly", "appendfsync"])
        got = {_text(k): _text(v) for k, v in found.items()}
    except coredis.exceptions.ResponseError as exc:  # CONFIG renamed or disabled
        got = {"appendonly": "unknown", "appendfsync": f"unknown ({exc})"}
    setting = f"appendonly {got.get('appendonly')}, appendfsync {got.get('appendfsync')}"
    if got.get("appendonly") == "yes" and got.get("appendfsync") == "always":
        return setting
    message = (f"Redis persists with {setting}: an acknowledged intent can be lost if Redis "
               "stops; set appendonly yes and appendfsync always (docs/cluster.md)")
    if not allow_weaker:
        raise PersistenceError(message)
    log.warning("%s", message)
    return setting
