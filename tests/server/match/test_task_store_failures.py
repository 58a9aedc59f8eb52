"""A store that fails on demand (a full disk): server-driven changes are retried
with backoff instead of stalling the match; after a failed seat or watcher write
memory and store agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from engine.registry import get_game
from protocol.events import Event
from server.match import commands as cmd
from server.match.bots import BotPool
from server.match.task import Match, MatchContext
from server.replay import rebuild
from server.session import Session
from server.store import Store, StoreError
from tests.server.helpers import make_config


class FlakyStore(Store):
    """A store whose writes fail while ``failures`` > 0 for statements containing
    ``fail_on`` (each refused transaction counts one)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.failures = 0
        self.fail_on = "INSERT INTO journal"
        self.refused = 0
        #: (rows, failures): once ``rows`` journal writes went through, refuse the
        #: next ``failures`` (armed by the store itself, so a fast match cannot
        #: finish before a test polling from outside has armed it)
        self.arm: tuple[int, int] | None = None
        self.written = 0

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        if self.arm is not None and self.written >= self.arm[0]:
            self.failures, self.arm = self.arm[1], None
        if (self._pending is None and self.failures > 0
                and any(self.fail_on in sql for sql, _ in statements)):
            self.failures -= 1
            self.refused += 1
            raise StoreError("database or disk is full")
        super()._write(statements)
        if self._pending is None and any(self.fail_on in sql for sql, _ in statements):
            self.written += 1


class Sink:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def push(self, msg: Event | dict[str, Any]) -> None:
        self.messages.append(msg.to_wire() if isinstance(msg, Event) else msg)


def _war(**options: Any) -> dict[str, Any]:
    return get_game("war").normalize_options(options)


def _ctx(store: Store, tmp_path: Path, **config: Any) -> MatchContext:
    return MatchContext(store, make_config(tmp_path, **config), BotPool(1, 10, 0.01, 5.0))


def _agree(store: Store, match: Match) -> None:
    rec = store.load_match(match.id)
    journal = store.journal(match.id)
    assert len(journal) == match.seq
    assert rebuild(rec, journal).digest() == match.state.digest()


async def _run_until(match: Match, done, limit: float) -> None:
    with trio.fail_after(limit):
        while not done():
            await trio.sleep(0.01)


@pytest.mark.usefixtures("allow_error_logs")
async def test_bot_moves_and_auto_flips_the_store_refuses_are_retried(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "s.db")
    ctx = _ctx(store, tmp_path, store_retry=0.01, store_retry_max=0.05)
    match = Match.create(ctx, "m1", "war", _war(cap=20), 0, "forfeit", 7, "ab" * 16)
    human = Session("s0", "p0")
    human.client = Sink()
    match.seat_session(0, human)  # flips by auto-flip: every move is server-driven
    match.seat_bot(1, "random")
    match.store_new()
    async with trio.open_nursery() as nursery:
        await nursery.start(ctx.bots.run)
        await nursery.start(match.run)
        store.arm = (2, 5)  # the third journal write and the four after it fail
        await match.submit(cmd.SetAutoFlip("s0", 1, on=True), human)
        await _run_until(match, lambda: match.status == "finished", 20)
        nursery.cancel_scope.cancel()
    assert store.refused == 5
    journal = store.journal("m1")
    assert {e.by for e in journal} == {"auto", "bot"}
    _agree(store, match)
    store.close()


@pytest.mark.usefixtures("allow_error_logs")
async def test_a_timer_default_the_store_refuses_is_retried(tmp_path: Path,
                                                            autojump_clock) -> None:
    store = FlakyStore(tmp_path / "s.db")
    ctx = _ctx(store, tmp_path, store_retry=0.5, store_retry_max=4.0, timeout_forfeit=0)
    match = Match.create(ctx, "m1", "war", _war(cap=3), 10, "forfeit", 7, "ab" * 16)
    for i in (0, 1):
        session = Session(f"s{i}", f"p{i}")
        session.client = Sink()
        match.seat_session(i, session)
    match.store_new()
    store.failures = 6  # 0.5 + 1 + 2 + 4 + 4 + 4 s of backoff
    async with trio.open_nursery() as nursery:
        await nursery.start(match.run)
        start = trio.current_time()
        await _run_until(match, lambda: match.seq >= 1, 600)
        first = trio.current_time() - start
        await _run_until(match, lambda: match.status == "finished", 600)
        nursery.cancel_scope.cancel()
    assert store.refused == 6
    # the first turn timer (10 s), then the backoff (not a busy loop, not a stall)
    assert 10 + 15.5 <= first < 10 + 15.5 + 1, first
    assert {e.by for e in store.journal("m1")} == {"timer"}
    _agree(store, match)
    store.close()


@pytest.mark.usefixtures("allow_error_logs")
async def test_a_failed_seat_or_watcher_write_leaves_memory_as_the_store(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "s.db")
    ctx = _ctx(store, tmp_path)
    match = Match.create(ctx, "m1", "war", {}, 0, "forfeit", 7, "ab" * 16)
    alice, bob = Session("sa", "alice"), Session("sb", "bob")
    for session in (alice, bob):
        session.client = Sink()
    match.seat_session(0, alice)
    match.store_new()

    def stored() -> tuple[list[Any], list[str]]:
        rec = store.load_match("m1")
        return [(s.seat, s.session) for s in rec.seats if s.session], rec.watchers

    async with trio.open_nursery() as nursery:
        await nursery.start(match.run)
        # bob watches: the watcher row is refused
        store.fail_on, store.failures = "watchers", 1
        await match.submit(cmd.Watch("sb", 1), bob)
        await trio.testing.wait_all_tasks_blocked()
        assert bob.client.messages[-1]["code"] == "internal_error"
        assert "sb" not in match.core.spectators and "m1" not in bob.watching
        assert stored()[1] == []
        # he watches for real, then joins from the stands: the seat row is refused, so
        # neither his seat nor the end of his watching is kept anywhere
        await match.submit(cmd.Watch("sb", 2), bob)
        await trio.testing.wait_all_tasks_blocked()
        assert stored()[1] == ["sb"] and "sb" in match.core.spectators
        store.fail_on, store.failures = "seats", 1
        await match.submit(cmd.Join("sb", 3, name="bob"), bob)
        await trio.testing.wait_all_tasks_blocked()
        assert bob.client.messages[-1]["code"] == "internal_error"
        assert match.seats[1].session is None and match.status == "waiting"
        assert "sb" in match.core.spectators and ("m1", 1) not in bob.seats
        assert stored() == ([(0, "sa")], ["sb"])
        # the store has room again: the same join succeeds
        await match.submit(cmd.Join("sb", 4, name="bob"), bob)
        await trio.testing.wait_all_tasks_blocked()
        assert match.seats[1].session == "sb" and match.status == "active"
        assert stored() == ([(0, "sa"), (1, "sb")], [])
        nursery.cancel_scope.cancel()
    store.close()


@pytest.mark.usefixtures("allow_error_logs")
async def test_a_match_the_store_refuses_leaves_no_seat_and_keeps_the_queue(
        start_server, connect, monkeypatch) -> None:
    server = await start_server()
    alice, bob, carol = [await connect(server, n) for n in ("alice", "bob", "carol")]
    healthy = server.store._write

    def full(statements):
        if any("INSERT INTO matches" in sql for sql, _ in statements):
            raise StoreError("database or disk is full")
        healthy(statements)

    monkeypatch.setattr(server.store, "_write", full)
    reply = await alice.request("create", game="war")
    assert reply["type"] == "error" and reply["code"] == "internal_error"
    assert server.lobby.matches == {}
    assert all(not s.seats for s in server.lobby.sessions.values())
    await alice.expect_ok("queue", game="war")
    reply = await bob.request("queue", game="war")  # the pairing cannot be stored
    assert reply["type"] == "error" and reply["code"] == "internal_error"
    assert [e.session.name for e in server.lobby.queues["war"]] == ["alice"]
    monkeypatch.setattr(server.store, "_write", healthy)
    await carol.expect_ok("queue", game="war")
    assert server.lobby.queues["war"] == [] and len(server.lobby.matches) == 1
    match = next(iter(server.lobby.matches.values()))
    assert {s.name for s in match.seats} == {"alice", "carol"}
