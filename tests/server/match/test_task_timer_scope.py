"""The match task's timer: a turn timer that a move restarts later is not re-armed
on every move (the task's wake-up stays at the earlier time, and that early Tick
finds nothing due); the timeout still comes exactly when the restarted timer ends."""

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


class Outbox:
    def __init__(self, log: list[dict[str, Any]]) -> None:
        self.log = log

    def push(self, msg: Event | dict[str, Any]) -> None:
        self.log.append(msg.to_wire() if isinstance(msg, Event) else msg)


async def test_a_restarted_turn_timer_times_out_when_it_ends(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    store = Store(tmp_path / "s.db")
    ctx = MatchContext(store, make_config(tmp_path, turn_timer=10), BotPool(1, 1, 0.01, 1.0))
    match = Match.create(ctx, "m1", "war", {}, 10, "forfeit", 7, "ab" * 16)
    logs: list[list[dict[str, Any]]] = [[], []]
    sessions = [Session(f"s{i}", f"p{i}") for i in (0, 1)]
    for i, session in enumerate(sessions):
        session.client = Outbox(logs[i])
        match.seat_session(i, session)
    match.store_new()
    async with trio.open_nursery() as nursery:
        await nursery.start(match.run)
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        await trio.sleep(6)
        # both flip at t=6: the battle resolves, both timers restart, to end at t=16
        for seat in (0, 1):
            snap = [m for m in logs[seat] if m["type"] == "snapshot"][-1]
            await match.submit(PlayIntent(sessions[seat].id, 1, seq=snap["seq"],
                                          intent={"type": "flip"}), sessions[seat])
        await trio.testing.wait_all_tasks_blocked()
        seq = match.seq
        await trio.sleep(10 - 6 + 1)   # past t=10, the first timers' end: nothing happens
        assert match.seq == seq and all(s.timeouts == 0 for s in match.seats)
        await trio.sleep_until(start + 6 + 10 + 0.5)   # past t=16: both timed out
        assert all(s.timeouts == 1 for s in match.seats), [s.timeouts for s in match.seats]
        assert match.seq > seq
        nursery.cancel_scope.cancel()
    store.close()
