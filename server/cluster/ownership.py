"""Who owns a match: the record ``cs:{m:ID}:owner`` = ``{node, epoch}``.

The creator of a match claims it at epoch 1 (:func:`claim_new`). Another node
takes it over only while its owner's liveness lease is gone, by a compare-and-set
that raises the epoch (:func:`adopt`), so at most one node wins each adoption.
Every write of the match's journal and record is checked against this record by
the journal's fenced scripts (epoch and node both), which is what stops a node
that lost a match from writing to it again.
"""

from __future__ import annotations

from dataclasses import dataclass

import coredis

from server.cluster import keys

#: KEYS[1] owner record, KEYS[2] the unfinished set; ARGV[1] node, ARGV[2] match id.
#: 1 if claimed, 0 if the match id is owned already.
_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'node', ARGV[1], 'epoch', 1)
redis.call('SADD', KEYS[2], ARGV[2])
return 1
"""

#: KEYS[1] owner record, KEYS[2] the unfinished set, KEYS[3] the match's record,
#: KEYS[4] its journal, KEYS[5..] the seated sessions' match sets; ARGV[1] node,
#: ARGV[2] match id. 1 if released, 0 if the match is not (or no longer) this node's
#: at epoch 1 (another node adopted it meanwhile: it is left to that node).
_RELEASE_NEW = """
if redis.call('HGET', KEYS[1], 'node') ~= ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'epoch')) ~= 1 then return 0 end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
redis.call('SREM', KEYS[2], ARGV[2])
for i = 5, #KEYS do redis.call('SREM', KEYS[i], ARGV[2]) end
return 1
"""

#: KEYS[1] owner record; ARGV[1] the adopting node, ARGV[2] the alive-key prefix.
#: The new epoch, or 0 when the owner is alive (or the match unknown).
_ADOPT = """
local owner = redis.call('HGET', KEYS[1], 'node')
if not owner then return 0 end
if owner ~= ARGV[1] and redis.call('EXISTS', ARGV[2] .. owner) == 1 then return 0 end
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'node', ARGV[1])
return epoch
"""


@dataclass(frozen=True, slots=True)
class Owner:
    """A match's owner and the fencing epoch of its ownership."""

    node: str
    epoch: int


async def claim_new(redis: coredis.Redis, match_id: str, node: str) -> bool:
    """Claim a new match for ``node`` at epoch 1 and list it as unfinished.

    Returns False when ``match_id`` is owned already (an id collision: pick another).
    """
    script = redis.register_script(_CLAIM)
    return bool(await script(keys=[keys.owner(match_id), keys.UNFINISHED],
                             args=[node, match_id]))


async def release_new(redis: coredis.Redis, match_id: str, node: str,
                      sessions: list[str]) -> bool:
    """Undo :func:`claim_new` for a match whose creation failed: drop its owner record,
    whatever of its record and journal reached Redis, and its entries in the unfinished
    set and in ``sessions``' match sets, so no node ever starts a match its players were
    told was not created. Only while ``node`` still owns it at epoch 1; the result
    says whether it did.

    Raises:
        coredis.exceptions.RedisError, OSError: Redis did not answer.
    """
    script = redis.register_script(_RELEASE_NEW)
    match_keys = [keys.owner(match_id), keys.UNFINISHED, keys.record(match_id),
                  keys.journal(match_id)]
    return bool(await script(keys=match_keys + [keys.session_matches(s) for s in sessions],
                             args=[node, match_id]))


async def owner_of(redis: coredis.Redis, match_id: str) -> Owner | None:
    """The match's owner, or None for a match the cluster does not know."""
    found = await redis.hmget(keys.owner(match_id), ["node", "epoch"])
    if found[0] is None or found[1] is None:
        return None
    return Owner(found[0].decode(), int(found[1]))


async def adopt(redis: coredis.Redis, match_id: str, node: str) -> int | None:
    """Take the match over for ``node`` if its owner's lease is gone (or it is
    ``node`` itself, restarted); the new epoch, or None if the owner is alive."""
    script = redis.register_script(_ADOPT)
    epoch = int(await script(keys=[keys.owner(match_id)],
                             args=[node, keys.alive("")]))
    return epoch or None
