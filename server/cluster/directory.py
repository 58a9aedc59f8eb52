"""The cluster-wide lobby: every owner keeps its matches' summaries in ``cs:lobby``,
and every node's ``matches`` listing reads them (docs/cluster.md, "The lobby").

An owner writes a match's entry when it is created (before the ``create`` is
answered), then whenever its listed state changes (status, players, their
presence, spectators; checked every :data:`SYNC_INTERVAL`), and removes it when
the match has closed (after its linger), together with its ownership record and
its place in ``cs:unfinished``. It keeps ``cs:session:ID:matches`` of every
session that sits in or watches one of its matches the same way (what a resume
on another node re-attaches). An entry is msgpack ``{n: node, s: summary}``; its
``seq`` is the one of its last other change (a listing is no feed of moves).

A listing reads ``cs:lobby`` (and the queues' lengths) in one round trip, at most
once every :data:`FETCH_AGE` seconds, and pages it with the same order and cursors
as a single server (:class:`server.listing.Listing`); this node's own matches are
listed from memory. A finished match of a dead node is not listed (nobody will
remove its entry); an unfinished one is (it will be adopted).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import coredis
import msgpack
import trio

from engine.registry import game_names
from server.cluster import keys
from server.cluster.node import ClusterNode
from server.listing import Listed, Listing
from server.match.task import Match

log = logging.getLogger("cardserver.cluster")

#: Seconds between two looks at this node's matches for changed listings.
SYNC_INTERVAL = 0.5
#: Matches looked at between two checkpoints of a sync.
SYNC_SLICE = 250
#: Seconds a fetched ``cs:lobby`` is reused by the listings that follow.
FETCH_AGE = 0.25

#: KEYS[1] owner record, KEYS[2] cs:unfinished, KEYS[3] cs:lobby; ARGV[1] node,
#: ARGV[2] match id. Forget a closed match, unless another node owns it now.
_FORGET = """
local owner = redis.call('HGET', KEYS[1], 'node')
if owner and owner ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
return 1
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """A match of another node, as its owner listed it."""

    id: str
    game: str
    status: str
    created: float
    listed: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        return self.listed


def _listed_state(match: Match) -> tuple[Any, ...]:
    """What of a match makes a new entry (or membership) worth writing: its status,
    spectators and seats (names, sessions, presence), not its seq. Cheap: read
    from the core without building the summary."""
    core = match.core
    connected = core.connected
    return (core.status, tuple(core.spectators),
            tuple((s.name, s.session, s.bot, s.session in connected) for s in core.seats))


def _members(match: Match) -> set[str]:
    """The sessions sitting in or watching ``match``."""
    members = {s.session for s in match.seats if s.session is not None}
    members.update(match.core.spectators)
    return members


class Directory:
    """This node's side of ``cs:lobby`` (see the module docstring).

    Args:
        node: this node.
        matches: the lobby's matches of this node, by id (read, never changed).
    """

    def __init__(self, node: ClusterNode, matches: dict[str, Match]) -> None:
        self.redis = node.redis
        self.name = node.name
        self.registry = node.registry
        self.matches = matches
        self.listing = Listing()
        #: match id -> the listed state last written
        self._written: dict[str, tuple[Any, ...]] = {}
        #: match id -> the sessions written as sitting in or watching it
        self._members: dict[str, set[str]] = {}
        self._forget = self.redis.register_script(_FORGET)
        self._fetched_at = -float("inf")
        self._remote: list[Entry] = []
        self._queues: dict[str, int] = {}

    def _entry(self, summary: dict[str, Any]) -> bytes:
        return msgpack.packb({"n": self.name, "s": summary})

    async def listed(self, match: Match) -> None:
        """List the new ``match`` and its players' membership (one round trip), once
        it is owned by this node.

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        members = _members(match)
        async with self.redis.pipeline(transaction=False) as pipe:
            results = [pipe.hset(keys.LOBBY, {match.id: self._entry(match.summary())})]
            results += [pipe.sadd(keys.session_matches(sid), [match.id]) for sid in members]
        for result in results:
            await result
        self._written[match.id] = _listed_state(match)
        self._members[match.id] = members
        self.listing.changed()

    async def run(self) -> None:
        """Write the entries that changed every :data:`SYNC_INTERVAL`, until cancelled
        (a failed round trip is logged and tried again at the next)."""
        while True:
            await trio.sleep(SYNC_INTERVAL)
            try:
                await self.sync()
            except coredis.exceptions.RedisError as exc:
                log.warning("node %s: cannot update the lobby index: %s", self.name, exc)

    async def sync(self) -> int:
        """Write every changed entry and membership, forget every closed match; how
        many entries changed."""
        changed: dict[str, bytes] = {}
        states: dict[str, tuple[Any, ...]] = {}
        members: dict[str, set[str]] = {}
        for i, (match_id, match) in enumerate(list(self.matches.items())):
            if i and not i % SYNC_SLICE:
                await trio.lowlevel.checkpoint()  # a long scan lets the matches run
            state = _listed_state(match)
            if self._written.get(match_id) == state:
                continue
            changed[match_id] = self._entry(match.summary())
            states[match_id] = state
            now = _members(match)
            if self._members.get(match_id, set()) != now:
                members[match_id] = now
        finished = [m for m, s in states.items() if s[0] == "finished"]
        gone = [m for m in self._written if m not in self.matches and m not in states]
        for match_id in gone:
            if match_id in self._members:
                members[match_id] = set()
        if changed or finished or members:
            async with self.redis.pipeline(transaction=False) as pipe:
                results = []
                if changed:
                    results.append(pipe.hset(keys.LOBBY, changed))
                if finished:
                    results.append(pipe.srem(keys.UNFINISHED, finished))
                for match_id, now in members.items():
                    before = self._members.get(match_id, set())
                    for sid in now - before:
                        results.append(pipe.sadd(keys.session_matches(sid), [match_id]))
                    for sid in before - now:
                        results.append(pipe.srem(keys.session_matches(sid), [match_id]))
            for result in results:
                await result
            self._written.update(states)
            for match_id, now in members.items():
                if now:
                    self._members[match_id] = now
                else:
                    self._members.pop(match_id, None)
        for match_id in gone:
            await self._forget(keys=[keys.owner(match_id), keys.UNFINISHED, keys.LOBBY],
                               args=[self.name, match_id])
            self._written.pop(match_id, None)
        return len(changed) + len(gone)

    async def page(self, game: str | None, status: str | None, limit: int,
                   cursor: str | None) -> tuple[list[dict[str, Any]], str | None,
                                                dict[str, int]]:
        """One page of the cluster's matches (summaries), the next cursor, and the
        number of players waiting in each game's casual queue.

        Raises:
            RemoteProtocolError: ``bad_message``: a cursor no node gave.
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        now = trio.current_time()
        if now - self._fetched_at >= FETCH_AGE:
            await self._fetch()
            self._fetched_at = now
            self.listing.changed()
        listed: Iterable[Listed] = [*self.matches.values(), *self._remote]
        page, after = self.listing.page(listed, game, status, limit, cursor, now)
        return [m.summary() for m in page], after, dict(self._queues)

    async def _fetch(self) -> None:
        games = game_names()
        async with self.redis.pipeline(transaction=False) as pipe:
            everything = pipe.hgetall(keys.LOBBY)
            lengths = [pipe.llen(keys.queue(g)) for g in games]
        raw = await everything
        self._queues = {g: int(await n) for g, n in zip(games, lengths, strict=True)}
        remote = []
        for match_id, body in raw.items():
            mid = match_id.decode()
            if mid in self.matches:
                continue
            entry = msgpack.unpackb(body)
            node, summary = entry["n"], entry["s"]
            if node == self.name:
                continue  # one of ours that has closed since
            if summary["status"] == "finished" and not self.registry.is_alive(node):
                continue
            remote.append(Entry(mid, summary["game"], summary["status"], summary["created"],
                                summary))
        self._remote = remote
