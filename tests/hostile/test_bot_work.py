"""Server bots think in worker processes with a bound on the whole server's bot
work: an attacker's search-bot matches cannot starve a legitimate match, and a
move the pool cannot think about in time gets the seat's default intent."""

from __future__ import annotations

import os

import trio

from server.match.bots import BotPool, _Worker
from tests.hostile.test_hostile import during_legit_match
from tests.server.helpers import TestClient

SEARCH_MATCHES = 12


async def test_search_bot_matches_do_not_starve_a_legit_match(start_server) -> None:
    server = await start_server(bot_workers=1, bot_queue=4, bot_deadline=0.3,
                                bot_time_budget=0.25)
    attackers: list[TestClient] = []
    created: list[str] = []

    async def attack(legit) -> None:
        for i in range(SEARCH_MATCHES):
            client = await TestClient.connect(server.port)
            assert (await client.hello(f"att{i}"))["type"] == "welcome"
            reply = await client.expect_ok("create", game="datastructures", bot="search",
                                           options={"cap": 200}, turn_timer=0)
            created.append(reply["match"])
            attackers.append(client)
            # the attacker plays its own seat flat out whenever it can
            match = reply["match"]

            async def play(client=client, match=match) -> None:
                while True:
                    snap = await client.snapshot(match, timeout=30)
                    if snap["status"] == "finished":
                        return
                    if snap["legal"]:
                        await client.request("intent", match=match, seq=snap["seq"],
                                             intent=snap["legal"][0])

            legit_nursery.start_soon(play)
        with trio.fail_after(25):
            await legit.done.wait()

    async with trio.open_nursery() as legit_nursery:
        await during_legit_match(server, attack, pause=0.005)
        legit_nursery.cancel_scope.cancel()
    stats = server.lobby.ctx.bots.stats
    # the pool stayed within its bound: one worker took jobs (it may answer none in
    # time: a niced process on a loaded machine gets little CPU), the rest got their
    # default intent
    assert stats.started >= 1 and stats.thought + stats.late > 0, stats
    assert stats.refused + stats.expired + stats.late > 0, stats
    # and every bot match moved on all the same
    for mid in created:
        match = server.lobby.matches[mid]
        assert any(e.by == "bot" for e in server.store.journal(mid)), mid
        assert match.seq > 1
    for client in attackers:
        await client.aclose()


async def test_a_worker_past_its_deadline_is_killed_and_the_pool_goes_on() -> None:
    worker = _Worker(nice=0)
    try:
        assert worker.proc.pid != os.getpid()
        legal = [{"type": "flip"}]
        job = ("war", 0, "random", 1, {}, legal, 0.01)
        with trio.fail_after(30):  # the process starts (imports) first
            await worker.ready()
        assert await worker.ask(job, trio.current_time() + 5) == legal[0]
        # a search that would think for 5 s, against a 0.2 s deadline
        from engine.registry import get_game

        state = get_game("datastructures").new_state(3, get_game("datastructures")
                                                     .normalize_options({}))
        seat = state.to_move()[0]
        slow = ("datastructures", seat, "search", 1, state.view(seat), state.legal(seat), 5.0)
        try:
            await worker.ask(slow, trio.current_time() + 0.2)
        except trio.TooSlowError:
            pass
        else:
            raise AssertionError("a 5 s search answered within 0.2 s")
        worker.kill()
        assert not worker.proc.is_alive()
    finally:
        worker.kill()

    pool = BotPool(workers=1, queue=1, budget=0.05, deadline=10.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(pool.run)
        first = nursery.start_soon
        answers: list[object] = []

        async def ask() -> None:
            answers.append(await pool.choose("war", 0, "random", {}, [{"type": "flip"}]))

        for _ in range(3):  # one thinks, one waits, one finds the queue full
            first(ask)
        with trio.fail_after(30):
            while len(answers) < 3:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert sorted(answers, key=repr) == sorted([None, {"type": "flip"}, {"type": "flip"}],
                                               key=repr)
    assert pool.stats.refused == 1 and pool.stats.thought == 2
