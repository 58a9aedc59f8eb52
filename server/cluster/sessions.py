"""Where sessions and resume tokens are kept: the SQLite store, or Redis in cluster mode.

The lobby holds one of the two, chosen at start (:class:`StoreSessions` on a
single server, :class:`RedisSessions` in cluster mode), and calls the same four
methods of either. Only a token's SHA-256 is ever stored (as
:mod:`server.store` does).

In Redis (docs/cluster.md, "Keys"): ``cs:token:HASH`` holds the session id,
``cs:session:ID`` the hash {name, node, created, last_seen, token}; both expire
``session_ttl`` seconds after the session was last seen, so an idle token dies
without a sweep. ``cs:session:ID:matches`` (written by the match owners' commit
scripts, :mod:`server.cluster.journal`) lists the matches it sits in or
watches. A token therefore resumes its session on every node.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

import trio

from server.cluster import keys
from server.cluster.errors import redis_errors
from server.store import SessionRecord, Store

if TYPE_CHECKING:  # a single server keeps its sessions in the store: no coredis
    import coredis

log = logging.getLogger("cardserver.cluster")

#: Seconds a session's round trip may take (Redis stopped: the handshake is refused
#: ``unavailable`` instead of hanging).
TIMEOUT = 2.0

#: KEYS: token key; ARGV: session key prefix, ttl in ms, now. The session's
#: {id, name, created, last_seen} before this touch, or nil; touches both keys.
_FIND = """
local id = redis.call('GET', KEYS[1])
if not id then return false end
local key = ARGV[1] .. id
local s = redis.call('HMGET', key, 'name', 'created', 'last_seen')
if not s[1] then return false end
redis.call('HSET', key, 'last_seen', ARGV[3])
redis.call('PEXPIRE', key, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', key .. ':matches', ARGV[2])
return {id, s[1], s[2], s[3]}
"""

#: KEYS: session keys; ARGV: ttl in ms, now. Touches each session that exists
#: (its hash, its token, its matches).
_TOUCH = """
for _, key in ipairs(KEYS) do
  local token = redis.call('HGET', key, 'token')
  if token then
    redis.call('HSET', key, 'last_seen', ARGV[2])
    redis.call('PEXPIRE', key, ARGV[1])
    redis.call('PEXPIRE', token, ARGV[1])
    redis.call('PEXPIRE', key .. ':matches', ARGV[1])
  end
end
return 0
"""


class SessionStore(Protocol):
    """What the lobby asks of the place sessions are kept."""

    async def create(self, session_id: str, token_hash: str, name: str, now: float) -> None:
        """Store a new session under its token's hash."""

    async def find(self, token_hash: str, now: float) -> SessionRecord | None:
        """The session whose token hashes to ``token_hash`` (as it was last seen),
        recorded as seen at ``now``; None: unknown, or idle past ``session_ttl``."""

    async def touch(self, session_ids: Iterable[str], now: float) -> None:
        """Record that the sessions were seen at ``now``."""

    def touch_soon(self, session_id: str, now: float) -> None:
        """:meth:`touch` without waiting (from synchronous code); never raises."""


class StoreSessions:
    """Sessions in the SQLite store (a single server): the calls the lobby always made."""

    def __init__(self, store: Store, ttl: float) -> None:
        self.store = store
        self.ttl = ttl

    async def create(self, session_id: str, token_hash: str, name: str, now: float) -> None:
        """Store a new session.

        Raises:
            StoreError: the store refused it.
        """
        self.store.create_session(session_id, token_hash, name, now)

    async def find(self, token_hash: str, now: float) -> SessionRecord | None:
        """The stored session of this token's hash, touched; None: unknown or expired.

        Raises:
            StoreError: the store refused the touch.
        """
        rec = self.store.find_session(token_hash)
        if rec is None or now - rec.last_seen > self.ttl:
            return None
        self.store.touch_session(rec.id, now)
        return rec

    async def touch(self, session_ids: Iterable[str], now: float) -> None:
        """Record the sessions as seen at ``now``."""
        for session_id in session_ids:
            self.store.touch_session(session_id, now)

    def touch_soon(self, session_id: str, now: float) -> None:
        """Touch now (SQLite is synchronous); a failure is logged."""
        try:
            self.store.touch_session(session_id, now)
        except Exception:
            log.exception("cannot record the end of session %s", session_id)


class RedisSessions:
    """Sessions in Redis, shared by every node (cluster mode).

    Args:
        redis: an open client.
        node: this node's name (stored as the session's home at creation).
        ttl: ``session_ttl``: seconds a session lives after it was last seen.
        nursery: where :meth:`touch_soon` runs its round trips.
    """

    def __init__(self, redis: coredis.Redis, node: str, ttl: float,
                 nursery: trio.Nursery) -> None:
        self.redis = redis
        self.node = node
        self.ttl_ms = max(1, int(ttl * 1000))
        self._nursery = nursery
        self._find = redis.register_script(_FIND)
        self._touch = redis.register_script(_TOUCH)

    async def create(self, session_id: str, token_hash: str, name: str, now: float) -> None:
        """Store the session and its token's hash in one round trip.

        Raises:
            coredis.exceptions.RedisError: Redis did not store it.
        """
        token_key = keys.session_token(token_hash)
        fields = {"name": name, "node": self.node, "created": repr(now),
                  "last_seen": repr(now), "token": token_key}
        with trio.fail_after(TIMEOUT):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.set(token_key, session_id, px=self.ttl_ms)
                pipe.hset(keys.session(session_id), fields)
                pipe.pexpire(keys.session(session_id), self.ttl_ms)

    async def find(self, token_hash: str, now: float) -> SessionRecord | None:
        """The session of this token's hash as last seen before now, touched (one
        round trip); None: unknown or expired.

        Raises:
            coredis.exceptions.RedisError: Redis did not answer.
        """
        with trio.fail_after(TIMEOUT):
            found = await self._find(keys=[keys.session_token(token_hash)],
                                     args=[keys.session(""), self.ttl_ms, repr(now)])
        if not found:
            return None
        sid, name, created, last_seen = (v.decode() for v in found)
        return SessionRecord(sid, name, float(created), float(last_seen))

    async def touch(self, session_ids: Iterable[str], now: float) -> None:
        """Touch every session of ``session_ids`` in one round trip (their keys live
        ``ttl`` more seconds).

        Raises:
            coredis.exceptions.RedisError: Redis did not answer.
        """
        ids = [keys.session(s) for s in session_ids]
        if ids:
            await self._touch(keys=ids, args=[self.ttl_ms, repr(now)])

    def touch_soon(self, session_id: str, now: float) -> None:
        """Touch the session from a task of its own; a failure is logged."""
        try:
            self._nursery.start_soon(self._touch_logged, session_id, now)
        except RuntimeError:  # the server is shutting down: its touch is not kept
            log.info("session %s: not touched at its end (shutting down)", session_id)

    async def _touch_logged(self, session_id: str, now: float) -> None:
        try:
            await self.touch([session_id], now)
        except (*redis_errors(), OSError, trio.TooSlowError) as exc:
            log.warning("cannot record the end of session %s: %s", session_id, exc)

    async def matches(self, session_id: str) -> set[str]:
        """The ids of the matches the session sits in or watches (every node's).

        Raises:
            coredis.exceptions.RedisError: Redis did not answer.
        """
        found = await self.redis.smembers(keys.session_matches(session_id))
        return {m.decode() for m in found}
