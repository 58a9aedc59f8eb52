"""The SDK's timing rules, against a scripted fake session (no network, MockClock)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from client.bots.sdk import BotRunner, as_decider
from client.session import ConnectionLost, ServerError, SessionState
from protocol.events import Event


def _snap(seq: int, legal: list[dict[str, Any]], status: str = "active",
          result: dict[str, Any] | None = None) -> dict[str, Any]:
    snap = {"type": "snapshot", "match": "m1", "game": "war", "seq": seq, "seat": 0,
            "view": {"seq": seq}, "legal": legal, "status": status}
    if result is not None:
        snap["result"] = result
    return snap


class FakeSession:
    """Pushes come from the test; each intent request is answered by ``answer``."""

    def __init__(self) -> None:
        self._send, self.pushes = trio.open_memory_channel[dict[str, Any]](100)
        self.sent: list[dict[str, Any]] = []
        self.answers: list[Any] = []
        self.reconnects = 0
        self.state = SessionState.CONNECTED

    def push(self, msg: dict[str, Any]) -> None:
        self._send.send_nowait(msg)

    async def next_push(self) -> dict[str, Any]:
        return await self.pushes.receive()

    async def request(self, msg: Event) -> dict[str, Any]:
        self.sent.append(msg.to_wire())  # the SDK builds its requests as events
        answer = self.answers.pop(0) if self.answers else None
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            answer()
        return {"type": "ok"}

    async def wait_connected(self) -> None:
        return None


FLIP = {"type": "flip"}
OTHER = {"type": "other"}


async def test_a_newer_snapshot_during_think_is_decided_again(autojump_clock) -> None:
    session = FakeSession()
    seen: list[int] = []

    def bot(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        seen.append(view["seq"])
        if view["seq"] == 1:
            session.push(_snap(2, [OTHER]))  # arrives while the bot "thinks"
        return legal[0]

    runner = BotRunner(session, bot, "war", think=1.0)  # type: ignore[arg-type]
    session.push(_snap(1, [FLIP]))
    session.answers = [lambda: session.push(_snap(3, [], "finished", {"winner": 0,
                                                                      "reason": "x"}))]
    result = await runner.play_match("m1", 0)
    assert seen == [1, 2]
    assert [(m["seq"], m["intent"]) for m in session.sent] == [(2, OTHER)]
    assert result.outcome == "win" and result.our_moves == 1 and result.moves == 3


async def test_stale_is_retried_on_the_next_snapshot(autojump_clock) -> None:
    session = FakeSession()
    runner = BotRunner(session, lambda view, legal: legal[0], "war")  # type: ignore[arg-type]
    session.push(_snap(5, [FLIP]))
    session.answers = [
        ServerError("stale", "old seq"),
        lambda: session.push(_snap(7, [], "finished", {"winner": None, "reason": "cap"})),
    ]

    async def later() -> None:
        await trio.sleep(0.5)
        session.push(_snap(6, [FLIP]))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later)
        result = await runner.play_match("m1", 0)
    assert [m["seq"] for m in session.sent] == [5, 6]
    assert result.outcome == "draw" and result.our_moves == 1


async def test_connection_lost_acts_again_on_the_resent_snapshot(autojump_clock) -> None:
    session = FakeSession()
    runner = BotRunner(session, lambda view, legal: legal[0], "war")  # type: ignore[arg-type]
    session.push(_snap(4, [FLIP]))

    def resume() -> None:
        session.reconnects += 1
        session.push(_snap(4, [FLIP]))        # the server re-sends the same seq on resume

    session.answers = [ConnectionLost("drop"),
                       lambda: session.push(_snap(5, [], "finished",
                                                  {"winner": 1, "reason": "x"}))]

    async def later() -> None:
        await trio.sleep(0.5)
        resume()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later)
        result = await runner.play_match("m1", 0)
    assert [m["seq"] for m in session.sent] == [4, 4]
    assert result.outcome == "loss"


async def test_unavailable_is_sent_again_on_the_same_snapshot(autojump_clock) -> None:
    session = FakeSession()
    runner = BotRunner(session, lambda view, legal: legal[0], "war")  # type: ignore[arg-type]
    session.push(_snap(3, [FLIP]))
    session.answers = [ServerError("unavailable", "no Redis"), ServerError("unavailable", ""),
                       lambda: session.push(_snap(4, [], "finished",
                                                  {"winner": 0, "reason": "x"}))]
    start = trio.current_time()
    result = await runner.play_match("m1", 0)
    assert [m["seq"] for m in session.sent] == [3, 3, 3]
    assert trio.current_time() - start >= 0.5  # two pauses before sending it again
    assert result.outcome == "win"


async def test_a_decision_from_before_a_reconnect_waits_for_the_resume(autojump_clock
                                                                       ) -> None:
    session = FakeSession()

    def bot(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        if view["seq"] == 1:
            session.reconnects += 1  # the connection dropped and came back meanwhile
        return legal[0]

    async def resumed() -> None:
        await trio.sleep(1.0)  # the adopting node sends the snapshot a moment later
        session.push(_snap(2, [OTHER]))

    runner = BotRunner(session, bot, "war", think=0.1)  # type: ignore[arg-type]
    session.push(_snap(1, [FLIP]))
    session.answers = [lambda: session.push(_snap(3, [], "finished",
                                                  {"winner": 0, "reason": "x"}))]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(resumed)
        result = await runner.play_match("m1", 0)
    assert [(m["seq"], m["intent"]) for m in session.sent] == [(2, OTHER)]
    assert result.our_moves == 1


async def test_strategy_objects_and_async_functions_are_bots() -> None:
    class Strategy:
        def choose(self, game: str, seat: int, view: Any, legal: list[Any]) -> Any:
            return legal[-1]

    async def coro(view: Any, legal: list[Any]) -> Any:
        return legal[0]

    assert await as_decider(Strategy(), "war")(0, {}, [FLIP, OTHER]) == OTHER
    assert await as_decider(coro, "war")(0, {}, [FLIP, OTHER]) == FLIP
    with pytest.raises(TypeError):
        as_decider(42, "war")
    with pytest.raises(ValueError):
        BotRunner(FakeSession(), coro, "chess")  # type: ignore[arg-type]
