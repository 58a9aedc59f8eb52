"""A reconnect whose connection drops again before the match handles it must not
cancel the seat's grace period (the seat would then never be forfeited)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing

from protocol.events import Event
from server.match.bots import BotPool
from server.match.commands import Attach
from server.match.task import Match, MatchContext
from server.session import Session
from server.store import Store
from tests.server.helpers import make_config


class Sink:
    """An outbox that keeps what it is given."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def push(self, msg: Event | dict[str, Any]) -> None:
        msg = msg.to_wire() if isinstance(msg, Event) else msg
        self.messages.append(msg)


async def test_attach_from_a_dropped_connection_keeps_the_grace_period(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ctx = MatchContext(store, make_config(tmp_path), BotPool(1, 1, 0.01, 1.0))
    match = Match.create(ctx, "m1", "datastructures", {}, 0, "forfeit", 7, "ab" * 16)
    sessions = [Session(f"s{i}", f"p{i}") for i in (0, 1)]
    for i, session in enumerate(sessions):
        session.client = Sink()
        match.seat_session(i, session)
    match.store_new()
    async with trio.open_nursery() as nursery:
        await nursery.start(match.run)
        await trio.testing.wait_all_tasks_blocked()
        gone = sessions[1]
        gone.client = None          # the connection drops ...
        match.detach(gone)
        assert match.seats[1].grace_deadline is not None
        await match.submit(Attach(gone.id), gone)  # ... a resume queued before the drop
        await trio.testing.wait_all_tasks_blocked()
        assert match.seats[1].grace_deadline is not None, "grace period was cancelled"

        back = Sink()               # a real return still clears it
        gone.client = back
        await match.submit(Attach(gone.id), gone)
        await trio.testing.wait_all_tasks_blocked()
        assert match.seats[1].grace_deadline is None
        assert any(m["type"] == "snapshot" for m in back.messages)
        nursery.cancel_scope.cancel()
    store.close()
