"""The server features the terminal client's replay viewer, end screen and War screen
use, over real TCP: finished matches' records page by page (as a spectator saw
them, or as the session's own seat saw them), fast-forward both seats agree to,
the auto-flip pace, and the timer fields of snapshots."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from client.session import ServerError, Session, open_session
from server.app import serve
from server.config import ServerConfig


@asynccontextmanager
async def running_server(tmp_path: Path, **config: Any) -> AsyncIterator[Any]:
    settings: dict[str, Any] = dict(host="127.0.0.1", port=0, db=tmp_path / "rec.db",
                                    turn_timer=0, grace=5.0, shutdown_timeout=0.2,
                                    bot_time_budget=0.01, auto_flip_delay=0.0)
    settings.update(config)
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve, ServerConfig(**settings))
        try:
            yield server
        finally:
            server.shutdown()


async def snapshots_until(session: Session, match: str, done: Any, *, play: bool = True,
                          timeout: float = 30.0) -> dict[str, Any]:
    """Read pushes (playing the first legal intent of each with ``play``) until a
    snapshot of ``match`` satisfies ``done``; returns it."""
    with trio.fail_after(timeout):
        async for push in session.pushes:
            if push.get("type") != "snapshot" or push.get("match") != match:
                continue
            if done(push):
                return push
            if play and push["legal"]:
                try:
                    await session.request({"type": "intent", "match": match,
                                           "seq": push["seq"], "intent": push["legal"][0]})
                except ServerError:
                    pass  # stale: the next snapshot comes
    raise AssertionError("the pushes ended")


def finished(snap: dict[str, Any]) -> bool:
    return snap["status"] == "finished"


async def play_vs_bot(session: Session, game: str, options: dict[str, Any]) -> str:
    reply = await session.request({"type": "create", "game": game, "bot": "random",
                                   "options": options})
    await snapshots_until(session, reply["match"], finished)
    return reply["match"]


async def test_records_and_record_pages_over_tcp(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        async with open_session("127.0.0.1", server.port, name="alice") as alice, \
                open_session("127.0.0.1", server.port, name="carol") as carol:
            war = await play_vs_bot(alice, "war", {"cap": 5})
            ds = await play_vs_bot(alice, "datastructures", {"cap": 3})
            # the listing: newest first, one per page, then the next page by cursor
            first = await carol.request({"type": "records", "limit": 1})
            assert [r["match"] for r in first["records"]] == [ds]
            assert first["records"][0]["result"]["reason"] in ("cap", "three_arrays", "stuck")
            second = await carol.request({"type": "records", "limit": 1,
                                          "before": first["next"]})
            assert [r["match"] for r in second["records"]] == [war] and second.get("next") is None
            only_war = await carol.request({"type": "records", "game": "war"})
            assert [r["match"] for r in only_war["records"]] == [war]
            mine = await carol.request({"type": "records", "player": "alice"})
            assert {r["match"] for r in mine["records"]} == {war, ds}
            with pytest.raises(ServerError) as bad:
                await carol.request({"type": "records", "before": "nonsense"})
            assert bad.value.code == "bad_option"
            # a record page by page, as a spectator saw it
            page = await carol.request({"type": "record", "match": ds, "limit": 4})
            record = page["record"]
            total = record["total"]
            assert record["verified"] is True and record["seat"] is None
            assert record["own_seats"] == [] and page["next"] == 4
            assert [m["seq"] for m in record["moves"]] == [1, 2, 3, 4]
            assert all(m["view"]["hand"] is None for m in record["moves"])
            assert record["start"]["hand"] is None
            seqs: list[int] = []
            offset: int | None = 0
            while offset is not None:
                part = await carol.request({"type": "record", "match": ds, "offset": offset,
                                            "limit": 7})
                seqs += [m["seq"] for m in part["record"]["moves"]]
                offset = part.get("next")
            assert seqs == list(range(1, total + 1))
            # as the seat alice played saw it: her own hand, only hers
            own = await alice.request({"type": "record", "match": ds, "limit": 200})
            seat = own["record"]["own_seats"][0]
            mine_page = await alice.request({"type": "record", "match": ds, "seat": seat,
                                             "limit": 200})
            views = [m["view"] for m in mine_page["record"]["moves"]]
            assert all(v["hand"] is not None and v["seat"] == seat for v in views)
            assert mine_page["record"]["start"]["hand"] is not None
            for m in mine_page["record"]["moves"]:
                for event in m["events"]:
                    if event["type"] == "draw" and event["seat"] != seat:
                        assert "cards" not in event  # the opponent's draws stay hidden
            for who, ask, code in ((carol, {"seat": seat}, "not_seated"),
                                   (alice, {"seat": 1 - seat}, "not_seated")):
                with pytest.raises(ServerError) as refused:
                    await who.request({"type": "record", "match": ds, **ask})
                assert refused.value.code == code
            with pytest.raises(ServerError) as missing:
                await carol.request({"type": "record", "match": "nope"})
            assert missing.value.code == "no_such_match"
            running = await alice.request({"type": "create", "game": "war"})
            with pytest.raises(ServerError) as early:
                await carol.request({"type": "record", "match": running["match"]})
            assert early.value.code == "not_finished"
            # finished matches in the lobby's listing say who won
            listed = await carol.request({"type": "matches", "status": "finished"})
            assert all("result" in m for m in listed["matches"]) and listed["matches"]


async def test_fast_forward_needs_both_seats_and_plays_the_rest_out(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        async with open_session("127.0.0.1", server.port, name="alice") as alice, \
                open_session("127.0.0.1", server.port, name="bob") as bob:
            match = (await alice.request({"type": "create", "game": "war",
                                          "options": {"cap": 3000}}))["match"]
            await bob.request({"type": "join", "match": match})
            await alice.request({"type": "fast_forward", "match": match, "on": True})
            asked = await snapshots_until(bob, match, lambda s: s["fast_forward"] == [True, False],
                                          play=False)
            assert asked["status"] == "active" and asked["seq"] == 0  # nothing played yet
            await bob.request({"type": "fast_forward", "match": match, "on": True})
            last = await snapshots_until(bob, match, finished, play=False)
            assert last["result"] is not None and last["reveal"]
            assert last["seq"] > 2
        rows = server.store.journal(match)  # the running server holds its file
        assert len(rows) == last["seq"]
        assert {r.by for r in rows} == {"fast_forward"}


async def test_fast_forward_against_a_bot_and_outside_war(tmp_path: Path) -> None:
    async with running_server(tmp_path, auto_flip_delay=0.5) as server:
        async with open_session("127.0.0.1", server.port, name="alice") as alice:
            match = (await alice.request({"type": "create", "game": "war", "bot": "random",
                                          "options": {"cap": 2000}}))["match"]
            await alice.request({"type": "fast_forward", "match": match, "on": True})
            last = await snapshots_until(alice, match, finished, play=False)
            assert last["fast_forward"][last["seat"]] is True
            ds = (await alice.request({"type": "create", "game": "datastructures"}))["match"]
            with pytest.raises(ServerError) as refused:
                await alice.request({"type": "fast_forward", "match": ds, "on": True})
            assert refused.value.code == "not_supported"


async def test_auto_flip_pace_is_the_seats_own_within_bounds(tmp_path: Path) -> None:
    async with running_server(tmp_path, auto_flip_delay=0.5) as server:
        async with open_session("127.0.0.1", server.port, name="alice") as alice:
            match = (await alice.request({"type": "create", "game": "war", "bot": "random",
                                          "options": {"cap": 40}}))["match"]
            reply = await alice.request({"type": "auto_flip", "match": match, "on": True,
                                         "delay": 0.0})
            assert reply["delay"] == 0.05  # kept within the server's bounds
            snap = await snapshots_until(alice, match, lambda s: s["auto_flip"], play=False)
            assert snap["auto_flip_delay"] == 0.05
            with trio.fail_after(10):  # 40 battles at 0.05 s a flip: well under 10 s
                await snapshots_until(alice, match, finished, play=False)
            other = (await alice.request({"type": "create", "game": "war",
                                          "bot": "random"}))["match"]
            slow = await alice.request({"type": "auto_flip", "match": other, "on": False,
                                        "delay": 99.0})
            assert slow["delay"] == 5.0


async def test_snapshots_carry_both_timers_and_the_timeouts(tmp_path: Path) -> None:
    async with running_server(tmp_path, turn_timer=1, timeout_forfeit=2) as server:
        async with open_session("127.0.0.1", server.port, name="alice") as alice, \
                open_session("127.0.0.1", server.port, name="bob") as bob:
            match = (await alice.request({"type": "create", "game": "datastructures",
                                          "turn_timer": 1}))["match"]
            await bob.request({"type": "join", "match": match})
            snap = await snapshots_until(bob, match, lambda s: s["status"] == "active",
                                         play=False)
            assert snap["timeout_limit"] == 2 and snap["timeouts"] == [0, 0]
            mover = snap["view"]["to_move"]
            assert snap["timers"][mover] is not None and snap["timers"][1 - mover] is None
            timed_out = await snapshots_until(bob, match, lambda s: any(s["timeouts"]),
                                              play=False, timeout=10)
            assert timed_out["timeouts"][mover] == 1
