"""This node's liveness lease, and the live nodes of the cluster.

A node is alive while its key ``cs:alive:NAME`` exists: it is set with a TTL of
``lease`` seconds and renewed every ``lease / 5``. Its value is the node's
*incarnation* (random, new at every start), so a restarted node with the same
name is told from its previous life. ``cs:nodes`` maps every node that ever
registered to its advertised address; :meth:`NodeRegistry.live` keeps those whose
lease is present.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

import coredis
import msgpack
import trio

from server.cluster import keys

log = logging.getLogger("cardserver.cluster")


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One registered node."""

    name: str
    advertise: str
    started: float


class NodeRegistry:
    """This node's lease and a cached view of the others.

    Args:
        redis: an open client (inside its ``async with``).
        name: this node's unique name.
        advertise: ``host:port`` clients reach this node at.
        lease: seconds the liveness key lives without renewal.
    """

    def __init__(self, redis: coredis.Redis, name: str, advertise: str, lease: float) -> None:
        self.redis = redis
        self.name = name
        self.advertise = advertise
        self.lease = lease
        self.incarnation = secrets.token_hex(8)
        #: name -> info of every node whose lease was present at the last refresh
        self.live_nodes: dict[str, NodeInfo] = {}
        #: called with this node's name when a renewal finds the lease already gone
        #: (this node was presumed dead: its matches may have been adopted)
        self.on_lease_lost: Callable[[], None] | None = None
        #: each called with the names of nodes whose lease expired since the last
        #: refresh (adoption and the relay both listen)
        self.on_nodes_gone: list[Callable[[set[str]], None]] = []

    async def register(self) -> None:
        """Take this node's lease and publish its address.

        Raises:
            RuntimeError: a live node of the same name holds the lease.
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        taken = await self.redis.set(keys.alive(self.name), self.incarnation,
                                     px=int(self.lease * 1000), condition="NX")
        if not taken:
            raise RuntimeError(f"a live node named {self.name!r} is already in the cluster")
        info = msgpack.packb({"advertise": self.advertise, "started": time.time()})
        await self.redis.hset(keys.NODES, {self.name: info})
        await self.refresh()

    async def renew(self) -> bool:
        """Renew the lease; False if it had expired (and was taken again now)."""
        key = keys.alive(self.name)
        previous = await self.redis.set(key, self.incarnation, px=int(self.lease * 1000),
                                        get=True)
        if previous is None or previous.decode() != self.incarnation:
            log.error("node %s: its lease had expired; its matches may have been adopted",
                      self.name)
            if self.on_lease_lost is not None:
                self.on_lease_lost()
            return False
        return True

    async def refresh(self) -> dict[str, NodeInfo]:
        """Reload the live nodes (this one included) into :attr:`live_nodes`."""
        registered = await self.redis.hgetall(keys.NODES)
        names = [n.decode() for n in registered]
        alive = await self.redis.mget([keys.alive(n) for n in names]) if names else []
        live: dict[str, NodeInfo] = {}
        for name, lease in zip(names, alive, strict=True):
            if lease is None:
                continue
            info = msgpack.unpackb(registered[name.encode()])
            live[name] = NodeInfo(name, info["advertise"], info["started"])
        gone = set(self.live_nodes) - set(live)
        self.live_nodes = live
        if gone:
            for listener in self.on_nodes_gone:
                listener(gone)
        return live

    def addresses(self) -> list[str]:
        """The advertised ``host:port`` of every live node, this one first."""
        others = sorted(i.advertise for n, i in self.live_nodes.items() if n != self.name)
        return [self.advertise, *others]

    def is_alive(self, name: str) -> bool:
        """Whether ``name`` held its lease at the last refresh."""
        return name in self.live_nodes

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Renew the lease and refresh the live nodes every ``lease / 5`` seconds.

        A failed round trip (Redis unreachable) is logged and retried at the next
        tick; the lease then expires on its own after ``lease`` seconds.
        """
        task_status.started()
        while True:
            await trio.sleep(self.lease / 5)
            try:
                await self.renew()
                await self.refresh()
            except coredis.exceptions.RedisError as exc:
                log.warning("node %s: lease renewal failed: %s", self.name, exc)

    async def leave(self) -> None:
        """Give the lease up at a clean shutdown (other nodes adopt at once)."""
        await self.redis.delete([keys.alive(self.name)])
        await self.redis.publish(keys.ALL, msgpack.packb({"t": "left", "node": self.name}))
