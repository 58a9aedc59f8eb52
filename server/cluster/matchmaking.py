"""Casual matchmaking across nodes: one queue per game in Redis, ``cs:queue:GAME``.

A player's entry is a JSON string (its session, name, home node, options, client
seed, and the seed and salt of the match it would start, drawn when it queued,
so that the reply's commitment holds: see ``server.lobby.Waiting``). Pairing is
one script, so atomic across nodes: it takes the oldest compatible entry (same
options, another session, another account) out of the queue, or appends the
newcomer's when there is none. Entries of nodes whose lease is gone are dropped
on the way. The node whose ``queue`` request completed a pair creates the match
and owns it; the waiting player's home node hears of it through the relay.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import coredis
import trio

from server.cluster import keys
from server.cluster.node import ClusterNode
from server.session import Session

log = logging.getLogger("cardserver.cluster")

#: KEYS[1] the queue; ARGV[1] the newcomer's entry, ARGV[2] its options (canonical
#: JSON), ARGV[3] its session, ARGV[4] its account ('' for a guest), ARGV[5] the
#: alive-key prefix. The partner's entry, or false when the newcomer now waits.
_PAIR = """
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local e = cjson.decode(raw)
  if redis.call('EXISTS', ARGV[5] .. e.node) == 0 then
    redis.call('LREM', KEYS[1], 1, raw)
  elseif e.opts == ARGV[2] and e.sid ~= ARGV[3]
      and (ARGV[4] == '' or e.account ~= ARGV[4]) then
    redis.call('LREM', KEYS[1], 1, raw)
    return raw
  end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
return false
"""


@dataclass(frozen=True, slots=True)
class Partner:
    """The waiting player a ``queue`` request was paired with."""

    session: str
    name: str
    node: str
    client_seed: str
    seed: int
    salt: str
    #: its queue entry as it was (to put it back)
    entry: str


def options_key(options: dict[str, Any]) -> str:
    """Options as one comparable string (two entries pair when theirs are equal)."""
    return json.dumps(options, sort_keys=True, separators=(",", ":"))


class Matchmaker:
    """This node's side of the queues (see the module docstring)."""

    def __init__(self, node: ClusterNode) -> None:
        self.redis = node.redis
        self.name = node.name
        self._pair = self.redis.register_script(_PAIR)
        #: (session id, game) -> the entry this node put in the queue for it
        self.entries: dict[tuple[str, str], str] = {}
        self._nursery: trio.Nursery | None = None

    def start(self, nursery: trio.Nursery) -> None:
        """Run the removals of entries of sessions that disconnect in ``nursery``."""
        self._nursery = nursery

    async def pair_or_wait(self, session: Session, game: str, options: dict[str, Any],
                           client_seed: str, seed: int, salt: str) -> Partner | None:
        """Take a waiting compatible player out of ``game``'s queue, or put
        ``session`` in it (None). One round trip.

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable (nothing changed).
        """
        account = "" if session.account is None else str(session.account.id)
        entry = json.dumps({"sid": session.id, "name": session.name, "node": self.name,
                            "opts": options_key(options), "account": account,
                            "client_seed": client_seed, "seed": str(seed), "salt": salt},
                           sort_keys=True)
        found = await self._pair(keys=[keys.queue(game)],
                                 args=[entry, options_key(options), session.id, account,
                                       keys.alive("")])
        if not found:
            self.entries[(session.id, game)] = entry
            return None
        if isinstance(found, bytes):
            found = found.decode()
        got = json.loads(found)
        self.entries.pop((got["sid"], game), None)
        return Partner(got["sid"], got["name"], got["node"], got["client_seed"],
                       int(got["seed"]), got["salt"], found)

    async def put_back(self, game: str, partner: Partner) -> None:
        """Return a partner to the head of the queue (its match could not start).

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable (the partner is lost
                from the queue; its client may queue again).
        """
        await self.redis.lpush(keys.queue(game), [partner.entry])

    async def leave(self, session_id: str, games: set[str]) -> None:
        """Take the session's entries out of ``games``' queues (one round trip).

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        entries = [(g, self.entries.pop((session_id, g), None)) for g in games]
        entries = [(g, e) for g, e in entries if e is not None]
        if not entries:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            results = [pipe.lrem(keys.queue(g), 1, e) for g, e in entries]
        for result in results:
            await result

    def leave_soon(self, session_id: str, games: set[str]) -> None:
        """:meth:`leave` in the background (for a connection being torn down)."""
        if self._nursery is not None and games:
            self._nursery.start_soon(self._leave_quietly, session_id, set(games))

    async def _leave_quietly(self, session_id: str, games: set[str]) -> None:
        try:
            await self.leave(session_id, games)
        except coredis.exceptions.RedisError as exc:
            # the entry stays until a pairing takes it (the player is then seated
            # disconnected, its grace period running) or its node's lease is gone
            log.warning("node %s: cannot take %s out of the queues: %s", self.name,
                        session_id, exc)

    def forget(self, session_id: str, game: str) -> None:
        """The session's entry was taken by another node's pairing."""
        self.entries.pop((session_id, game), None)
