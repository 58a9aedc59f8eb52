"""Group commit: the commands of one scheduler pass share one transaction, and each
command's messages go out only after it is committed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
import trio.testing

from server.match.commands import PlayIntent
from server.match.commit import ALONE_AFTER, PROBE_EVERY, GroupCommit
from server.match.task import Match, MatchContext
from server.session import Session
from server.store import Store, StoreError
from tests.server.helpers import make_config


class Recorder:
    """A plain-socket session's outbox (``direct``) that records (who, message, rows of
    its match stored when the message was handed over)."""

    direct = True

    def __init__(self, name: str, log: list[tuple[str, dict[str, Any], int]],
                 store: Store, match_id: str) -> None:
        self.name, self.log, self.store, self.match_id = name, log, store, match_id

    def push(self, msg: Any) -> None:
        wire = msg.to_wire() if hasattr(msg, "to_wire") else msg
        self.log.append((self.name, wire, len(self.store.journal(self.match_id))))


def war_matches(tmp_path: Path, store: Store, count: int
                ) -> tuple[GroupCommit, list[Match], list[list[Session]],
                           list[tuple[str, dict[str, Any], int]]]:
    commits = GroupCommit(store)
    ctx = MatchContext(store, make_config(tmp_path), trio.CapacityLimiter(1),
                       lambda name: None, commits=commits)
    log: list[tuple[str, dict[str, Any], int]] = []
    matches, seats = [], []
    for m in range(count):
        match = Match.create(ctx, f"m{m}", "war", {}, 0, "forfeit", 7 + m, "ab" * 16)
        pair = [Session(f"s{m}-{i}", f"p{m}-{i}") for i in (0, 1)]
        for i, session in enumerate(pair):
            session.client = Recorder(f"p{m}-{i}", log, store, match.id)
            match.seat_session(i, session)
        match.store_new()
        matches.append(match)
        seats.append(pair)
    return commits, matches, seats, log


async def start(nursery: trio.Nursery, commits: GroupCommit, matches: list[Match],
                log: list[Any]) -> None:
    """Run the committer and the matches; forget what their start sent."""
    nursery.start_soon(commits.run)
    for match in matches:
        await nursery.start(match.run)
    await trio.testing.wait_all_tasks_blocked()
    log.clear()


@asynccontextmanager
async def one_running_match(tmp_path: Path) -> AsyncIterator[
        tuple[GroupCommit, Match, list[Session], list[tuple[str, dict[str, Any], int]],
              Store]]:
    """One War match of two recorded seats, its task and the committer running."""
    store = Store(tmp_path / "s.db")
    commits, matches, seats, log = war_matches(tmp_path, store, 1)
    try:
        async with trio.open_nursery() as nursery:
            await start(nursery, commits, matches, log)
            yield commits, matches[0], seats[0], log, store
            nursery.cancel_scope.cancel()
    finally:
        store.close()


async def both_flip(match: Match, pair: list[Session], first_id: int = 0) -> None:
    """Both seats flip in one pass (no yield between): the second reaches a match
    whose first flip is not committed yet."""
    for seat in (0, 1):
        await match.submit(PlayIntent(pair[seat].id, first_id + seat, seq=match.seq,
                                      intent={"type": "flip"}), pair[seat])
        assert match.uncommitted


def assert_snapshots_after_their_rows(log: list[tuple[str, dict[str, Any], int]]) -> None:
    """Every snapshot was handed over once its seq's row was stored."""
    for _, msg, stored in log:
        if msg["type"] == "snapshot":
            assert stored >= msg["seq"]


async def test_one_pass_one_transaction_and_every_reply_after_its_commit(tmp_path: Path
                                                                         ) -> None:
    store = Store(tmp_path / "s.db")
    commits, matches, seats, log = war_matches(tmp_path, store, 3)
    async with trio.open_nursery() as nursery:
        await start(nursery, commits, matches, log)
        before = commits.batches
        for match, pair in zip(matches, seats, strict=True):   # one pass: no yield between
            await match.submit(PlayIntent(pair[0].id, 1, seq=match.seq,
                                          intent={"type": "flip"}), pair[0])
        assert all(m.uncommitted for m in matches) and not log  # nothing sent yet
        await trio.testing.wait_all_tasks_blocked()
        assert commits.batches == before + 1
        for match in matches:
            assert len(store.journal(match.id)) == 1
        for m in range(3):   # per match: the requester's ok and snapshot, then the other's
            mine = [(who, msg["type"]) for who, msg, _ in log if who.startswith(f"p{m}-")]
            assert mine == [(f"p{m}-0", "ok"), (f"p{m}-0", "snapshot"),
                            (f"p{m}-1", "snapshot")]
        for _, msg, stored in log:
            if msg["type"] == "snapshot":
                assert stored >= msg["seq"] == 1
        nursery.cancel_scope.cancel()
    store.close()


async def test_a_failed_group_commits_one_by_one_and_only_the_bad_row_fails(
        tmp_path: Path, monkeypatch: Any, allow_error_logs: None) -> None:
    store = Store(tmp_path / "s.db")
    commits, matches, seats, log = war_matches(tmp_path, store, 2)
    real_append = store.append_stamped   # what the match task stores its rows with

    def append(match_id: str, *args: Any, **kwargs: Any) -> None:
        if match_id == "m1":
            raise StoreError("disk full (test)")
        real_append(match_id, *args, **kwargs)

    async with trio.open_nursery() as nursery:
        await start(nursery, commits, matches, log)
        monkeypatch.setattr(store, "append_stamped", append)
        for match, pair in zip(matches, seats, strict=True):
            await match.submit(PlayIntent(pair[0].id, 5, seq=match.seq,
                                          intent={"type": "flip"}), pair[0])
        await trio.testing.wait_all_tasks_blocked()
        assert [(who, msg["type"]) for who, msg, _ in log if who.startswith("p0-")] == [
            ("p0-0", "ok"), ("p0-0", "snapshot"), ("p0-1", "snapshot")]
        failed = [msg for who, msg, _ in log if who.startswith("p1-")]
        assert [(m["type"], m.get("code"), m.get("id")) for m in failed] == [
            ("error", "internal_error", 5)]
        assert (matches[0].seq, matches[1].seq) == (1, 0)   # m1 rolled back
        assert len(store.journal("m0")) == 1 and store.journal("m1") == []
        nursery.cancel_scope.cancel()
    store.close()


async def test_a_match_with_an_uncommitted_command_defers_the_next(tmp_path: Path) -> None:
    async with one_running_match(tmp_path) as (commits, match, pair, log, store):
        before = commits.batches
        await both_flip(match, pair)   # the second waits for the first
        assert match.held == 1 and not match._queued   # in the group commit, not the inbox
        assert match.seq == 1 and not log
        await trio.testing.wait_all_tasks_blocked()
        assert match.held == 0 and commits.waiting == []
        assert commits.batches == before + 2   # both through the committer, in order
        rows = store.journal(match.id)
        assert [(r.seq, r.seat) for r in rows] == [(1, 0), (2, 1)]
        oks = [(who, msg["seq"]) for who, msg, _ in log if msg["type"] == "ok"]
        assert oks == [("p0-0", 1), ("p0-1", 2)]
        assert_snapshots_after_their_rows(log)


async def test_the_task_runs_held_commands_before_its_own(tmp_path: Path) -> None:
    async with one_running_match(tmp_path) as (commits, match, pair, log, store):
        await both_flip(match, pair)
        assert match.held == 1
        pair[0].client = None
        match.detach(pair[0])   # through the core at once: the held flip runs first
        assert match.held == 0 and commits.waiting == []
        assert [(r.seq, r.seat) for r in store.journal(match.id)][:2] == [(1, 0), (2, 1)]
        # seat 0 is gone (nothing of it recorded); seat 1 saw the first flip, then its
        # own flip answered and its snapshot, then seat 0's detach
        assert [(msg["type"], msg.get("id"), msg.get("seq")) for _, msg, _ in log] == [
            ("snapshot", None, 1), ("ok", 1, 2), ("snapshot", None, 2),
            ("presence", None, None)]
        assert_snapshots_after_their_rows(log)


async def test_a_held_command_of_a_closed_match_is_answered(tmp_path: Path) -> None:
    async with one_running_match(tmp_path) as (commits, match, pair, log, store):
        await both_flip(match, pair, first_id=7)
        match.closed = True   # as if its task had ended before the committer's pass
        await trio.testing.wait_all_tasks_blocked()
        answers = [(who, msg["type"], msg.get("code")) for who, msg, _ in log
                   if msg.get("id") == 8]
        assert answers == [("p0-1", "error", "no_such_match")]
        assert commits.waiting == [] and match.held == 0


async def test_lone_commands_commit_at_once_with_a_probe_every_eighth(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    commits, matches, seats, log = war_matches(tmp_path, store, 2)
    match, pair = matches[0], seats[0]
    deferred = []
    async with trio.open_nursery() as nursery:
        await start(nursery, commits, matches, log)
        for step in range(ALONE_AFTER + 2 * PROBE_EVERY):   # one command per pass
            seat = min(match.core.state.to_move())
            await match.submit(PlayIntent(pair[seat].id, step, seq=match.seq,
                                          intent={"type": "flip"}), pair[seat])
            deferred.append(match.uncommitted)
            await trio.testing.wait_all_tasks_blocked()
            assert len(store.journal(match.id)) == step + 1
        assert all(deferred[:ALONE_AFTER]) and deferred.count(True) == ALONE_AFTER + 2
        nursery.cancel_scope.cancel()
    store.close()


async def test_the_poller_s_passes_of_one_socket_make_no_probe(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    commits, matches, seats, log = war_matches(tmp_path, store, 2)
    match, pair = matches[0], seats[0]
    deferred = []

    async def flip(step: int, ready: int) -> None:
        seat = min(match.core.state.to_move())
        commits.poller_pass(ready)   # as the poller does around a pass
        await match.submit(PlayIntent(pair[seat].id, step, seq=match.seq,
                                      intent={"type": "flip"}), pair[seat])
        commits.poller_pass(0)
        deferred.append(match.uncommitted)
        await trio.testing.wait_all_tasks_blocked()
        assert len(store.journal(match.id)) == step + 1

    async with trio.open_nursery() as nursery:
        await start(nursery, commits, matches, log)
        steps = ALONE_AFTER + 2 * PROBE_EVERY
        for step in range(steps):   # one socket a pass: none goes through the committer
            await flip(step, 1)
        assert all(deferred[:ALONE_AFTER]) and deferred.count(True) == ALONE_AFTER
        await flip(steps, 2)   # several sockets in one pass: grouping again
        assert deferred[-1]
        nursery.cancel_scope.cancel()
    store.close()
