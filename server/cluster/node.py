"""This process as one node of a cluster: its Redis client, its name and its lease.

:func:`open_node` is what ``serve`` enters in cluster mode; everything of the
cluster that the lobby, the match tasks and the connections use hangs off the
:class:`ClusterNode` it yields (``server.lobby.cluster``; None on a single server).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import coredis
import trio

from server.cluster.nodes import NodeRegistry
from server.cluster.redis import check_persistence, client
from server.config import ServerConfig

log = logging.getLogger("cardserver.cluster")


class ClusterNode:
    """One node: ``redis`` (open), ``name``, ``advertise`` and the ``registry``."""

    def __init__(self, config: ServerConfig, redis: coredis.Redis, name: str,
                 advertise: str) -> None:
        self.config = config
        self.redis = redis
        self.name = name
        self.advertise = advertise
        self.registry = NodeRegistry(redis, name, advertise, config.node_lease)

    def addresses(self) -> list[str]:
        """Every live node's advertised ``host:port``, this one first (``welcome.nodes``)."""
        return self.registry.addresses()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Register this node, then renew its lease until cancelled.

        Raises:
            RuntimeError: a live node of the same name is in the cluster.
        """
        await self.registry.register()
        log.info("node %s (%s) joined the cluster: %d live node(s)", self.name,
                 self.advertise, len(self.registry.live_nodes))
        await self.registry.run(task_status=task_status)


def default_advertise(config: ServerConfig, port: int) -> str:
    """``--advertise``, else the address the node listens on (its host name when it
    listens on every interface)."""
    if config.advertise:
        return config.advertise
    host = config.host if config.host not in (None, "", "0.0.0.0", "::") else socket.gethostname()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@asynccontextmanager
async def open_node(config: ServerConfig, port: int) -> AsyncIterator[ClusterNode]:
    """Connect to ``config.cluster`` and check that Redis persists every write.

    Raises:
        PersistenceError: Redis does not fsync every write and
            ``--redis-persistence`` is ``refuse``.
        coredis.exceptions.RedisError: Redis cannot be reached.
    """
    assert config.cluster is not None
    redis = client(config.cluster)
    async with redis:
        setting = await check_persistence(redis,
                                          allow_weaker=config.redis_persistence == "warn")
        advertise = default_advertise(config, port)
        name = config.node_name or f"{socket.gethostname()}:{port}"
        log.info("cluster %s (%s) as node %s", config.cluster, setting, name)
        yield ClusterNode(config, redis, name, advertise)
