"""A match's record and journal in Redis, every write fenced by its owner record.

In cluster mode the match's stored record (the fields of
:class:`server.store.MatchRecord`) is the hash ``cs:{m:ID}:rec`` and its journal
the stream ``cs:{m:ID}:journal``: one entry per :class:`server.store.JournalEntry`,
its stream id ``SEQ-0``, its one field ``e`` the row in msgpack
(docs/cluster.md, "The journal and commit").

Every write is the one script :data:`_COMMIT`: it first checks that the owner
record ``cs:{m:ID}:owner`` names this node at the epoch the caller holds (else
it writes nothing and answers ``fenced``), then that the stream ends at the seq
the caller says (else ``seq:N``: the caller's idea of the journal is wrong), and
only then writes. :meth:`RedisJournal.commit` sends one such script per match of
a batch in one pipelined round trip.

Record hash fields: ``head`` (msgpack: id, game, options, seed as hex, salt,
turn_timer, abandon, created, rated, stream), ``status``, ``end`` (msgpack
[finished, winner, reason]), ``seat:N`` (msgpack [session, name, bot,
auto_flip, client_seed]), ``w:SESSION`` (a spectator), ``timers`` (msgpack
[seq, [[seat, turn, grace, timeouts], ...]], wall-clock deadlines).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import coredis
import msgpack
import trio

from server.cluster import keys
from server.cluster.ownership import Owner, claim_new, release_new
from server.match.effects import (
    AppendJournal,
    DeleteMatch,
    Membership,
    SaveSeat,
    SaveTimers,
    SaveWatcher,
    Write,
    wall_timers,
)
from server.store import JournalEntry, MatchRecord, SeatRecord, SeatTimers

log = logging.getLogger("cardserver.cluster")

#: Seconds a commit's round trip may take before it counts as failed (Redis
#: stopped or partitioned: the requester is answered instead of waiting on).
COMMIT_TIMEOUT = 2.0

#: Seconds a finished match's owner record, record and journal stay in Redis (for
#: replays and audits; cluster mode serves no ``records``): then Redis drops them.
FINISHED_RETENTION = 7 * 24 * 3600

#: KEYS: owner, record, journal, unfinished. ARGV: node, epoch, match id, the seq
#: the journal must end at before these rows, the seq to cut the journal back to
#: and the record to wipe first (-1: none), then (op, a, b) triples.
_COMMIT = """
local o = redis.call('HMGET', KEYS[1], 'node', 'epoch')
if o[1] ~= ARGV[1] or o[2] ~= ARGV[2] then return 'fenced' end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local at = 0
if #last > 0 then at = tonumber(string.match(last[1][1], '^(%d+)')) end
local cut = tonumber(ARGV[5])
if cut >= 0 then
  if at < cut then return 'seq:' .. at end
  at = cut
end
if at ~= tonumber(ARGV[4]) then return 'seq:' .. at end
-- checked: from here on nothing fails (a script's writes are not undone on an error)
if cut >= 0 then
  for _, e in ipairs(redis.call('XRANGE', KEYS[3], (cut + 1) .. '-0', '+')) do
    redis.call('XDEL', KEYS[3], e[1])
  end
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('XSETID', KEYS[3], cut .. '-0') end
  redis.call('DEL', KEYS[2])
end
for i = 6, #ARGV, 3 do
  local op, a, b = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if op == 'j' then redis.call('XADD', KEYS[3], a .. '-0', 'e', b)
  elseif op == 'h' then redis.call('HSET', KEYS[2], a, b)
  elseif op == 'x' then redis.call('HDEL', KEYS[2], a)
  elseif op == 'done' then
    redis.call('SREM', KEYS[4], ARGV[3])
    for k = 1, 3 do redis.call('EXPIRE', KEYS[k], a) end
  elseif op == 's+' then redis.call('SADD', a, ARGV[3])
  elseif op == 's-' then redis.call('SREM', a, ARGV[3])
  elseif op == 'del' then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
    redis.call('SREM', KEYS[4], ARGV[3])
  end
end
return 'ok'
"""


class JournalError(Exception):
    """Redis did not carry a write out (unreachable, too slow, or an error)."""


class Fenced(JournalError):
    """The match's owner record no longer names this node at this epoch."""


OK = "ok"
FENCED = "fenced"
#: Redis did not answer (or answered an error): nothing of the batch item is known
#: to be written; the caller resynchronizes the match at its next write
UNAVAILABLE = "unavailable"


@dataclass(slots=True)
class MatchBatch:
    """One match's writes of one batch: what one fenced script carries.

    ``seq``: the journal rows committed before these (the stream must end there);
    ``resync``: cut the journal back to ``seq`` and rewrite the whole record from
    ``record`` first (after a failed commit whose outcome is unknown).
    """

    match_id: str
    epoch: int
    seq: int
    writes: Sequence[Write]
    members: Sequence[Membership] = ()
    wall: float = 0.0
    resync: MatchRecord | None = None
    #: the outcome, set by :meth:`RedisJournal.commit`
    outcome: str = field(default="")


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def _seat_blob(seat: SeatRecord) -> bytes:
    return _pack([seat.session, seat.name, seat.bot, seat.auto_flip, seat.client_seed])


def _timers(timers: Iterable[SeatTimers]) -> list[list[Any]]:
    return [[t.seat, t.turn, t.grace, t.timeouts] for t in timers]


def _timers_from(rows: list[list[Any]]) -> tuple[SeatTimers, ...]:
    return tuple(SeatTimers(int(s), turn, grace, int(n)) for s, turn, grace, n in rows)


def entry_blob(entry: JournalEntry) -> bytes:
    """One journal row as stored in its stream entry."""
    return _pack({"seq": entry.seq, "kind": entry.kind, "seat": entry.seat,
                  "intent": entry.intent, "reason": entry.reason, "by": entry.by,
                  "ts": entry.ts, "digest": entry.digest,
                  "timers": None if entry.timers is None else _timers(entry.timers)})


def entry_from(blob: bytes) -> JournalEntry:
    """The row of a stream entry (:func:`entry_blob`).

    Raises:
        ValueError, KeyError, TypeError: the entry is damaged.
    """
    d = msgpack.unpackb(blob, raw=False)
    timers = d["timers"]
    return JournalEntry(d["seq"], d["kind"], d["seat"], d["intent"], d["reason"], d["by"],
                        d["ts"], d["digest"], None if timers is None else _timers_from(timers))


def record_fields(rec: MatchRecord) -> list[tuple[str, bytes | str]]:
    """The record hash's fields for ``rec`` (header, status, end, seats, watchers)."""
    head = {"id": rec.id, "game": rec.game, "options": rec.options,
            "seed": format(rec.seed, "064x"), "salt": rec.salt, "turn_timer": rec.turn_timer,
            "abandon": rec.abandon, "created": rec.created, "rated": rec.rated,
            "stream": rec.stream}
    out: list[tuple[str, bytes | str]] = [("head", _pack(head)), ("status", rec.status)]
    if rec.finished is not None:
        out.append(("end", _pack([rec.finished, rec.winner, rec.reason])))
    out += [(f"seat:{s.seat}", _seat_blob(s)) for s in rec.seats]
    out += [(f"w:{sid}", "1") for sid in rec.watchers]
    if rec.timers is not None:
        out.append(("timers", _pack([rec.timers_seq, _timers(rec.timers)])))
    return out


def record_from(fields: dict[bytes, bytes]) -> MatchRecord:
    """The :class:`MatchRecord` of a record hash (:func:`record_fields`).

    Raises:
        ValueError, KeyError, TypeError: the hash is damaged or incomplete.
    """
    head = msgpack.unpackb(fields[b"head"], raw=False)
    rec = MatchRecord(head["id"], head["game"], head["options"], int(head["seed"], 16),
                      head["salt"], head["turn_timer"], head["abandon"],
                      fields[b"status"].decode(), head["created"], rated=head["rated"],
                      stream=head["stream"])
    if b"end" in fields:
        rec.finished, rec.winner, rec.reason = msgpack.unpackb(fields[b"end"], raw=False)
    for name, value in fields.items():
        if name.startswith(b"seat:"):
            session, seat_name, bot, auto_flip, client_seed = msgpack.unpackb(value, raw=False)
            rec.seats.append(SeatRecord(int(name[5:]), session, seat_name, bot, auto_flip,
                                        client_seed))
        elif name.startswith(b"w:"):
            rec.watchers.append(name[2:].decode())
    rec.seats.sort(key=lambda s: s.seat)
    if b"timers" in fields:
        seq, rows = msgpack.unpackb(fields[b"timers"], raw=False)
        rec.timers, rec.timers_seq = list(_timers_from(rows)), int(seq)
    return rec


def _ops(batch: MatchBatch) -> list[bytes | str | int]:
    """The script's (op, a, b) triples for ``batch``'s writes and memberships."""
    ops: list[bytes | str | int] = []
    if batch.resync is not None:
        for name, value in record_fields(batch.resync):
            ops += ["h", name, value]
    wall = batch.wall
    for write in batch.writes:
        if isinstance(write, AppendJournal):
            timers = None if write.timers is None else wall_timers(write.timers, wall)
            entry = replace(write.entry, ts=wall, timers=timers)
            ops += ["j", entry.seq, entry_blob(entry)]
            if write.finished is not None:
                winner, reason = write.finished
                ops += ["h", "status", "finished", "h", "end", _pack([wall, winner, reason]),
                        "done", FINISHED_RETENTION, ""]
        elif isinstance(write, SaveSeat):
            ops += ["h", f"seat:{write.seat.seat}", _seat_blob(write.seat)]
            if write.status is not None:
                ops += ["h", "status", write.status]
        elif isinstance(write, SaveWatcher):
            ops += ["h" if write.watching else "x", f"w:{write.session}", "1"]
        elif isinstance(write, SaveTimers):
            ops += ["h", "timers",
                    _pack([write.seq, _timers(wall_timers(write.left, wall))])]
        elif isinstance(write, DeleteMatch):
            ops += ["del", "", ""]
    for member in batch.members:
        ops += ["s+" if member.present else "s-", keys.session_matches(member.session), ""]
    return ops


class RedisJournal:
    """This node's writes and reads of match records and journals.

    Args:
        redis: an open client (inside its ``async with``).
        node: this node's name (what the fencing check compares).
    """

    def __init__(self, redis: coredis.Redis, node: str) -> None:
        self.redis = redis
        self.node = node
        self._sha: str | None = None
        #: False since a round trip failed, until one succeeds (creates and queues
        #: are refused meanwhile)
        self.available = True
        #: round trips made (pipelines count once), for benchmarks and tests
        self.round_trips = 0

    async def _script(self) -> str:
        if self._sha is None:
            self._sha = await self.redis.script_load(_COMMIT)
        return self._sha

    async def create(self, rec: MatchRecord) -> int:
        """Claim the new match for this node (epoch 1), list it as unfinished and
        store its record; the epoch.

        Raises:
            JournalError: Redis did not store it (nothing of it is to be relied on);
                Fenced: the id is taken (a collision: pick another).
        """
        claimed = False
        seated = [Membership(s.session, s.seat, True) for s in rec.seats
                  if s.session is not None and s.bot is None]
        try:
            with trio.fail_after(COMMIT_TIMEOUT):
                if not await claim_new(self.redis, rec.id, self.node):
                    raise Fenced(f"match id {rec.id} is taken")
                claimed = True
                self.round_trips += 1
                batch = MatchBatch(rec.id, 1, 0, (), seated, resync=rec)
                await self.commit([batch])
        except (coredis.exceptions.RedisError, OSError, trio.TooSlowError) as exc:
            self.available = False
            if claimed:
                await self._release_new(rec.id, [m.session for m in seated])
            raise JournalError(f"cannot store match {rec.id}: {exc}") from exc
        if batch.outcome == FENCED:
            raise Fenced(f"match {rec.id} is owned by another node")
        if batch.outcome != OK:
            await self._release_new(rec.id, [m.session for m in seated])
            raise JournalError(f"cannot store match {rec.id}: {batch.outcome}")
        self.available = True
        return 1

    async def _release_new(self, match_id: str, sessions: list[str]) -> None:
        """Best effort, bounded: undo the claim of a match whose creation failed
        (:func:`~server.cluster.ownership.release_new`). Redis may be what failed: then
        the claim stays, and adoption forgets it later (it finds no record) or, if the
        record did reach Redis, an adopter runs the match as stored."""
        try:
            with trio.fail_after(COMMIT_TIMEOUT):
                await release_new(self.redis, match_id, self.node, sessions)
        except (coredis.exceptions.RedisError, OSError, trio.TooSlowError) as exc:
            log.warning("match %s: cannot undo its claim after a failed create: %s",
                        match_id, exc)

    async def commit(self, batches: Sequence[MatchBatch]) -> None:
        """Run one fenced script per match of ``batches`` in one pipelined round trip;
        sets each batch's :attr:`~MatchBatch.outcome` (:data:`OK`, :data:`FENCED`,
        ``seq:N`` or :data:`UNAVAILABLE`). Never raises for Redis failures: those
        are outcomes."""
        if not batches:
            return
        try:
            sha = await self._script()
            for _attempt in (1, 2):
                results = await self._pipeline(sha, batches)
                if not any(isinstance(r, coredis.exceptions.NoScriptError) for r in results):
                    break
                # Redis restarted and forgot the script: nothing of it ran; load it again
                self._sha = None
                sha = await self._script()
        except (coredis.exceptions.RedisError, OSError, trio.TooSlowError) as exc:
            log.warning("node %s: a commit of %d match(es) failed: %s", self.node,
                        len(batches), exc or type(exc).__name__)
            self.available = False
            for batch in batches:
                batch.outcome = UNAVAILABLE
            return
        failed = False
        for batch, result in zip(batches, results, strict=True):
            if isinstance(result, Exception):
                log.error("match %s: Redis refused its write: %s", batch.match_id, result)
                batch.outcome, failed = UNAVAILABLE, True
            else:
                batch.outcome = result.decode() if isinstance(result, bytes) else str(result)
                if batch.outcome.startswith("seq:"):
                    log.error("match %s: Redis's journal ends at %s, this node holds %d rows",
                              batch.match_id, batch.outcome[4:], batch.seq)
        self.available = not failed

    async def _pipeline(self, sha: str, batches: Sequence[MatchBatch]) -> list[Any]:
        """One round trip: every batch's script; the results (exceptions included)."""
        self.round_trips += 1
        with trio.fail_after(COMMIT_TIMEOUT):
            async with self.redis.pipeline(transaction=False, raise_on_error=False) as pipe:
                calls = [pipe.evalsha(sha, keys=[keys.owner(b.match_id), keys.record(b.match_id),
                                                 keys.journal(b.match_id), keys.UNFINISHED],
                                      args=[self.node, b.epoch, b.match_id, b.seq,
                                            -1 if b.resync is None else b.seq, *_ops(b)])
                         for b in batches]
            out: list[Any] = []
            for call in calls:
                try:
                    out.append(await call)
                except coredis.exceptions.RedisError as exc:
                    out.append(exc)
            return out

    async def load(self, match_id: str) -> tuple[MatchRecord, list[JournalEntry], Owner] | None:
        """The match's record, its journal in seq order and its owner, in one round
        trip; None when Redis holds no record of it.

        Raises:
            ValueError: the record or a row is damaged, or the rows do not run 1..n.
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        self.round_trips += 1
        async with self.redis.pipeline(transaction=False) as pipe:
            fields = pipe.hgetall(keys.record(match_id))
            rows = pipe.xrange(keys.journal(match_id))
            owner = pipe.hmget(keys.owner(match_id), ["node", "epoch"])
        found, stream, who = await fields, await rows, await owner
        if not found:
            return None
        try:
            rec = record_from(found)
            entries = [entry_from(e.field_values[b"e"]) for e in stream]
        except (ValueError, KeyError, TypeError, msgpack.ExtraData) as exc:
            raise ValueError(f"match {match_id}: a damaged record or row: {exc}") from exc
        if [e.seq for e in entries] != list(range(1, len(entries) + 1)):
            raise ValueError(f"match {match_id}: its journal rows do not run 1..n")
        if who[0] is None or who[1] is None:
            raise ValueError(f"match {match_id}: no owner record")
        return rec, entries, Owner(who[0].decode(), int(who[1]))

    async def unfinished(self) -> list[str]:
        """The ids of every unfinished match of the cluster."""
        self.round_trips += 1
        return sorted(m.decode() for m in await self.redis.smembers(keys.UNFINISHED))

    async def forget(self, match_id: str) -> None:
        """Drop a match Redis holds no record of from the unfinished set (a node died
        between claiming it and storing it)."""
        await self.redis.srem(keys.UNFINISHED, [match_id])
