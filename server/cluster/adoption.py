"""Adoption of a dead node's matches, and fencing of this node's when it was presumed dead.

:class:`Adoption` scans ``cs:unfinished`` once at start (taking over, too, the
matches of this node's previous incarnation: a restart under the same name),
whenever the :class:`~server.cluster.nodes.NodeRegistry` reports nodes gone,
and when a ``left`` notice arrives on ``cs:all``. Each match whose owner's lease
is gone is claimed with :func:`server.cluster.ownership.adopt` (epoch + 1: one
node wins), loaded from Redis, rebuilt by replaying its journal (every digest
checked, the same replay as a restart on one node), started, and announced as
``{t: "adopted", match, node}`` on ``cs:all``.

When this node's lease renewal finds the lease gone (it was paused or cut off
longer than ``--node-lease``), :meth:`Adoption.check_owners` looks at the owner
record of every match it runs and fences off those it no longer owns.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol

import anyio
import coredis
import msgpack
import trio

from server import metrics
from server.cluster import keys
from server.cluster.journal import RedisJournal
from server.cluster.node import ClusterNode
from server.cluster.ownership import adopt
from server.store import JournalEntry, MatchRecord

log = logging.getLogger("cardserver.cluster")

#: Seconds between two tries of a scan that failed (Redis unreachable).
RETRY = 0.5
#: Matches claimed and loaded at once by one scan (their round trips overlap).
ADOPTING_AT_ONCE = 16


class Host(Protocol):
    """What adoption needs of the lobby."""

    def local_matches(self) -> dict[str, int]:
        """Every match this node runs: id -> the epoch it owns it at."""

    async def adopt_match(self, rec: MatchRecord, rows: list[JournalEntry],
                          epoch: int) -> None:
        """Rebuild the match from its rows, owned at ``epoch``, and start its task.

        Raises:
            Exception: the rows do not replay (the match stays owned, unstarted).
        """

    def fence_off(self, match_id: str) -> None:
        """Stop the local match ``match_id``: another node owns it now."""


class Adoption:
    """This node's adoption scans and ownership checks (see the module docstring)."""

    def __init__(self, node: ClusterNode, journal: RedisJournal, host: Host) -> None:
        self.node = node
        self.redis = node.redis
        self.journal = journal
        self.host = host
        self._wake = trio.Event()
        self._check = trio.Event()
        #: the matches adopted so far, and how long each took from the scan's start
        #: (seconds), for logs and tests
        self.adopted: dict[str, float] = {}
        #: matches an adoption of this node began and Redis failed before it was
        #: settled (claimed and started, or found taken): the next scan tries again
        self._unstarted: set[str] = set()
        #: the scan at start (of this node's previous incarnation's matches too) has
        #: not completed yet: the next scan is one
        self._own_due = True

    async def start(self, nursery: trio.Nursery) -> None:
        """Adopt what is due now (this node's previous incarnation's matches too),
        then watch for nodes that go and for this node's own lost lease."""
        try:
            await self.scan(own=True)
        except (coredis.exceptions.RedisError, OSError) as exc:
            log.warning("adoption scan at start failed: %s; trying again", exc)
            self._wake.set()
        registry = self.node.registry
        registry.on_nodes_gone.append(self._nodes_gone)
        registry.on_lease_lost = self._lease_lost
        nursery.start_soon(self._whenever, "_wake", partial(self.scan, own=False), "scan")
        nursery.start_soon(self._whenever, "_check", self.check_owners, "ownership check")
        nursery.start_soon(self._listen)

    def _nodes_gone(self, names: set[str]) -> None:
        log.info("node(s) %s gone: scanning for their matches", ", ".join(sorted(names)))
        self._wake.set()

    def _lease_lost(self) -> None:
        self._check.set()

    async def _whenever(self, event: str, work: Callable[[], Awaitable[object]],
                        what: str) -> None:
        """Run ``work`` each time the event attribute ``event`` is set; a failed run
        (Redis unreachable) is tried again after :data:`RETRY`."""
        while True:
            await getattr(self, event).wait()
            setattr(self, event, trio.Event())
            try:
                await work()
            except (coredis.exceptions.RedisError, OSError) as exc:
                log.warning("%s failed: %s; trying again", what, exc)
                await trio.sleep(RETRY)
                getattr(self, event).set()

    async def _listen(self) -> None:
        """``left`` notices on ``cs:all`` start a scan at once (a clean shutdown)."""
        while True:
            try:
                await self._listen_once()
            except* (coredis.exceptions.RedisError, OSError) as group:
                log.warning("listening on %s failed: %s; again in %.1f s", keys.ALL,
                            group.exceptions[0], RETRY)
            except* anyio.ClosedResourceError:
                pass  # coredis's pub/sub cleanup after a cancellation (shutdown)
            await trio.sleep(RETRY)

    async def _listen_once(self) -> None:
        pubsub = self.redis.pubsub(channels=[keys.ALL])
        async with pubsub:
            async for message in pubsub:
                if message.get("type") != "message":
                    continue
                try:
                    notice = msgpack.unpackb(message["data"], raw=False)
                except (ValueError, msgpack.ExtraData):
                    continue
                if (isinstance(notice, dict) and notice.get("t") == "left"
                        and notice.get("node") != self.node.name):
                    self._wake.set()

    async def scan(self, *, own: bool) -> list[str]:
        """Adopt every unfinished match whose owner's lease is gone (``own``: and
        those still owned by this node's name that it does not run: a previous
        incarnation's); the ids adopted.

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable (nothing half done
                is left: an adopted match that cannot be loaded is logged).
        """
        started = time.monotonic()
        own = own or self._own_due
        local = self.host.local_matches()
        ids = [m for m in await self.journal.unfinished() if m not in local]
        if not ids:
            self._own_due = False
            return []
        await self.node.registry.refresh()
        live = set(self.node.registry.live_nodes)
        async with self.redis.pipeline(transaction=False) as pipe:
            calls = [pipe.hmget(keys.owner(m), ["node", "epoch"]) for m in ids]
        owners = [await c for c in calls]
        due = []
        for match_id, (node, _epoch) in zip(ids, owners, strict=True):
            if node is None:
                await self.journal.forget(match_id)  # claimed, never stored
                continue
            name = node.decode()
            if name == self.node.name and not own and match_id not in self._unstarted:
                continue  # being created here right now
            if name != self.node.name and name in live:
                continue
            due.append(match_id)
        done: list[str] = []
        limit = trio.CapacityLimiter(ADOPTING_AT_ONCE)
        async with trio.open_nursery() as nursery:
            for match_id in due:
                nursery.start_soon(self._adopt_one, match_id, started, limit, done)
        self._own_due = False
        return done

    async def _adopt_one(self, match_id: str, started: float, limit: trio.CapacityLimiter,
                         done: list[str]) -> None:
        """Claim, load and start one match (a few at once: their round trips overlap)."""
        async with limit:
            self._unstarted.add(match_id)  # until it is settled, whatever fails
            try:
                epoch = await adopt(self.redis, match_id, self.node.name)
                if epoch is not None and await self._take(match_id, epoch, started):
                    done.append(match_id)
                # None: its owner came back, or another node was first
                self._unstarted.discard(match_id)
            except (coredis.exceptions.RedisError, OSError) as exc:
                log.warning("match %s: adoption failed: %s; scanning again", match_id, exc)
                self._wake.set()

    async def _take(self, match_id: str, epoch: int, started: float) -> bool:
        loaded = await self.journal.load(match_id)
        if loaded is None:
            await self.journal.forget(match_id)
            return False
        rec, rows, owner = loaded
        if (owner.node, owner.epoch) != (self.node.name, epoch):
            return False  # taken over again meanwhile
        if rec.status == "finished":
            await self.journal.forget(match_id)
            return False
        try:
            await self.host.adopt_match(rec, rows, epoch)
        except Exception:
            log.exception("match %s: adopted at epoch %d but cannot be rebuilt", match_id,
                          epoch)
            return False
        took = time.monotonic() - started
        self.adopted[match_id] = took
        metrics.adopted()
        log.info("match %s adopted at epoch %d, seq %d (%.3f s after the scan began)",
                 match_id, epoch, len(rows), took)
        try:
            await self.redis.publish(keys.ALL, msgpack.packb(
                {"t": "adopted", "match": match_id, "node": self.node.name}))
        except (coredis.exceptions.RedisError, OSError) as exc:
            log.warning("cannot announce the adoption of %s: %s", match_id, exc)
        return True

    async def check_owners(self) -> list[str]:
        """Fence off every local match whose owner record no longer names this node
        at the epoch it runs it at; their ids.

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        local = self.host.local_matches()
        ids = list(local)
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            calls = [pipe.hmget(keys.owner(m), ["node", "epoch"]) for m in ids]
        lost = []
        for match_id, call in zip(ids, calls, strict=True):
            node, epoch = await call
            mine = (node is not None and epoch is not None and node.decode() == self.node.name
                    and int(epoch) == local[match_id])
            if not mine:
                lost.append(match_id)
                self.host.fence_off(match_id)
        if lost:
            log.warning("node %s no longer owns %d match(es): fenced off", self.node.name,
                        len(lost))
        return lost
