"""The match answers the requester first: its ok and snapshot are queued before any
other seat's snapshot, and every snapshot follows the journal commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing

from protocol.events import Event
from server.match.bots import BotPool
from server.match.commands import PlayIntent
from server.match.task import Match, MatchContext
from server.session import Session
from server.store import Store
from tests.server.helpers import make_config


class Recorder:
    """A session's outbox that records (who, message, journal rows stored then)."""

    def __init__(self, name: str, log: list[tuple[str, dict[str, Any], int]],
                 store: Store, match_id: str) -> None:
        self.name, self.log, self.store, self.match_id = name, log, store, match_id

    def push(self, msg: Event | dict[str, Any]) -> None:
        msg = msg.to_wire() if isinstance(msg, Event) else msg
        self.log.append((self.name, msg, len(self.store.journal(self.match_id))))


async def test_requester_first_and_commit_before_every_snapshot(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ctx = MatchContext(store, make_config(tmp_path), BotPool(1, 1, 0.01, 1.0))
    match = Match.create(ctx, "m1", "datastructures", {}, 0, "forfeit", 7, "ab" * 16)
    log: list[tuple[str, dict[str, Any], int]] = []
    sessions = [Session(f"s{i}", f"p{i}") for i in (0, 1)]
    for i, session in enumerate(sessions):
        session.client = Recorder(f"p{i}", log, store, "m1")
        match.seat_session(i, session)
    match.store_new()
    async with trio.open_nursery() as nursery:
        await nursery.start(match.run)
        await trio.testing.wait_all_tasks_blocked()
        acted: set[int] = set()
        while acted != {0, 1} and match.status == "active":
            snap = next(m for _, m, _ in reversed(log)
                        if m["type"] == "snapshot" and m["legal"])
            actor = snap["seat"]
            acted.add(actor)
            log.clear()
            await match.submit(PlayIntent(sessions[actor].id, 1, seq=snap["seq"],
                                          intent=snap["legal"][0]), sessions[actor])
            await trio.testing.wait_all_tasks_blocked()
            who = [(name, m["type"]) for name, m, _ in log]
            assert who == [(f"p{actor}", "ok"), (f"p{actor}", "snapshot"),
                           (f"p{1 - actor}", "snapshot")], who
            for _, msg, stored in log:
                if msg["type"] == "snapshot":
                    assert stored >= msg["seq"] == snap["seq"] + 1  # committed first
        assert acted == {0, 1}
        nursery.cancel_scope.cancel()
    store.close()
