"""The fenced commit script: one round trip for many matches, a stale epoch or a wrong
seq writes nothing, and a resync cuts the journal back to what was acknowledged."""

from __future__ import annotations

import coredis
import pytest

from server.cluster import keys
from server.cluster.journal import (
    FENCED,
    FINISHED_RETENTION,
    OK,
    JournalError,
    MatchBatch,
    RedisJournal,
)
from server.cluster.ownership import adopt, release_new
from server.cluster.redis import client
from server.match.effects import AppendJournal, Membership, SaveSeat, SaveWatcher
from server.store import JournalEntry, MatchRecord, SeatRecord


def record(match_id: str) -> MatchRecord:
    return MatchRecord(match_id, "war", {"cap": 100}, 12345, "00" * 16, 0, "forfeit", "active",
                       1.0, seats=[SeatRecord(0, "s0", "alice"), SeatRecord(1, "s1", "bob")])


def row(seq: int) -> AppendJournal:
    return AppendJournal(JournalEntry(seq, "intent", seq % 2, {"type": "flip"}, digest="d"))


async def test_one_round_trip_commits_every_match_and_fences_each_alone(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        journal = RedisJournal(redis, "a")
        for mid in ("m1", "m2", "m3"):
            assert await journal.create(record(mid)) == 1
        await redis.delete([keys.alive("a")])
        assert await adopt(redis, "m2", "b") == 2  # m2 now belongs to b
        before = journal.round_trips
        batches = [MatchBatch("m1", 1, 0, [row(1)], [Membership("w", None, True)], 5.0),
                   MatchBatch("m2", 1, 0, [row(1)]),
                   MatchBatch("m3", 1, 0, [row(1), row(2),
                                           SaveSeat(SeatRecord(1, None, "greedy", "greedy"))]),
                   MatchBatch("m1", 1, 5, [row(6)])]
        await journal.commit(batches)
        assert journal.round_trips == before + 1
        assert [b.outcome for b in batches] == [OK, FENCED, OK, "seq:1"]
        rec1, rows1, _ = await journal.load("m1")
        assert [r.seq for r in rows1] == [1] and rows1[0].ts == 5.0
        _, rows2, owner2 = await journal.load("m2")
        assert rows2 == [] and (owner2.node, owner2.epoch) == ("b", 2)
        rec3, rows3, _ = await journal.load("m3")
        assert [r.seq for r in rows3] == [1, 2] and rec3.seats[1].bot == "greedy"
        assert await redis.smembers(keys.session_matches("w")) == {b"m1"}
        assert await redis.smembers(keys.session_matches("s0")) == {b"m1", b"m2", b"m3"}


async def test_a_resync_cuts_back_to_the_acknowledged_rows(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        journal = RedisJournal(redis, "a")
        await journal.create(record("m"))
        first = MatchBatch("m", 1, 0, [row(1), row(2), row(3), SaveWatcher("w", True)])
        await journal.commit([first])
        assert first.outcome == OK
        # the node acknowledged only seq 1 (its answer for 2 and 3 was lost): it resyncs
        rec = record("m")
        again = MatchBatch("m", 1, 1, [row(2)], resync=rec)
        await journal.commit([again])
        assert again.outcome == OK
        loaded, rows, _ = await journal.load("m")
        assert [r.seq for r in rows] == [1, 2]
        assert loaded.watchers == [] and loaded.seats == rec.seats


async def test_a_finished_match_leaves_the_unfinished_set(redis_url: str) -> None:
    redis = client(redis_url)
    async with redis:
        journal = RedisJournal(redis, "a")
        await journal.create(record("m"))
        assert await journal.unfinished() == ["m"]
        done = MatchBatch("m", 1, 0, [AppendJournal(row(1).entry, finished=(0, "cap"))], wall=9.0)
        await journal.commit([done])
        assert done.outcome == OK and await journal.unfinished() == []
        rec, _, _ = await journal.load("m")
        assert (rec.status, rec.finished, rec.winner, rec.reason) == ("finished", 9.0, 0, "cap")
        for key in (keys.owner("m"), keys.record("m"), keys.journal("m")):
            assert 0 < await redis.ttl(key) <= FINISHED_RETENTION


async def test_a_create_that_fails_after_the_claim_leaves_nothing_behind(
        redis_url: str, monkeypatch) -> None:
    """The claim went through, the record's commit did not: the owner record, the
    unfinished entry, the record, and the players' match sets are undone, so no node
    ever adopts a match its players were told was not created."""
    redis = client(redis_url)
    async with redis:
        journal = RedisJournal(redis, "a")
        plain_commit = journal.commit

        async def commit_then_fail(batches: list[MatchBatch]) -> None:
            await plain_commit(batches)   # it reached Redis, but the answer is lost
            raise coredis.exceptions.ConnectionError("connection lost (test)")

        monkeypatch.setattr(journal, "commit", commit_then_fail)
        with pytest.raises(JournalError):
            await journal.create(record("m"))
        assert await journal.unfinished() == []
        for key in (keys.owner("m"), keys.record("m"), keys.journal("m")):
            assert not await redis.exists([key]), key
        assert await redis.smembers(keys.session_matches("s0")) == set()
        # a match another node adopted meanwhile is left to it
        monkeypatch.setattr(journal, "commit", plain_commit)
        await journal.create(record("n"))
        await redis.delete([keys.alive("a")])
        assert await adopt(redis, "n", "b") == 2
        assert not await release_new(redis, "n", "a", ["s0"])
        assert await journal.unfinished() == ["n"] and await redis.exists([keys.owner("n")])
