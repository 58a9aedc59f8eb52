"""The cluster's Redis client, counting its round trips (``cardserver_redis_*``).

:class:`MeteredRedis` is coredis's client with two public entry points timed:
``execute_command`` (every command and script call: one round trip each) and
``pipeline()`` (one batch: one round trip, measured from the end of the
``async with`` block, when coredis sends it, to its answer). The cluster code
uses it like ``coredis.Redis`` and counts nothing itself. Pub/sub traffic runs
on its own connection and is not counted here (relayed messages are counted
by the relay, :func:`server.metrics.relayed`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import coredis

from server import metrics


class MeteredRedis(coredis.Redis):  # type: ignore[type-arg]
    """``coredis.Redis`` whose round trips land in :mod:`server.metrics`."""

    async def execute_command(self, command: Any) -> Any:  # type: ignore[override]
        began = metrics.perf_counter()
        name = command.name.decode().lower() if isinstance(command.name, bytes) \
            else str(command.name).lower()
        try:
            result = await super().execute_command(command)
        except BaseException:
            metrics.redis_round_trip(name, metrics.perf_counter() - began, failed=True)
            raise
        metrics.redis_round_trip(name, metrics.perf_counter() - began)
        return result

    def pipeline(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return _timed(super().pipeline(*args, **kwargs))


@asynccontextmanager
async def _timed(pipeline: Any) -> AsyncIterator[Any]:
    """``pipeline`` as a context manager that times the batch its exit sends (a body
    that raises sends nothing and counts nothing)."""
    began: float | None = None
    try:
        async with pipeline as entered:
            yield entered
            began = metrics.perf_counter()
    except BaseException:
        if began is not None:
            metrics.redis_round_trip("pipeline", metrics.perf_counter() - began, failed=True)
        raise
    assert began is not None
    metrics.redis_round_trip("pipeline", metrics.perf_counter() - began)
