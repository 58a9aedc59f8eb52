"""Availability under attack (#13): match quotas, costed and paginated listings,
outboxes bounded in bytes, chat limits, handshake limits, idle sessions deleted,
the join race. Each attack runs next to a legitimate match that must finish
normally (tests/hostile/legit.py); every peer here is 127.0.0.1, and "another
address" is a memory stream served under another peer name."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from server.app import Server
from tests.hostile.legit import LegitMatch
from tests.hostile.test_hostile import during_legit_match
from tests.server.helpers import TestClient, frame


async def from_address(server: Server, nursery: trio.Nursery, address: str,
                       name: str) -> TestClient:
    """A client whose connection the server sees as coming from ``address``."""
    ours, theirs = trio.testing.memory_stream_pair()
    nursery.start_soon(server.serve_stream, theirs, f"{address}:40000")
    client = TestClient(ours)
    welcome = await client.hello(name)
    assert welcome["type"] == "welcome", welcome
    return client


async def test_create_flood_is_capped_per_session_and_per_address(start_server,
                                                                  nursery) -> None:
    """Eight sessions from one address pipeline creates: each gets its 3 waiting
    matches, then too_many_waiting; the address as a whole stops at 10, long before
    the server's 1,000; a new user at another address still creates."""
    server = await start_server(max_matches=1000, max_waiting_per_session=3,
                                max_waiting_per_address=10)
    refused: list[str] = []

    async def attack(legit: LegitMatch) -> None:
        for i in range(8):
            client = await TestClient.connect(server.port)
            await client.hello(f"creator{i}")
            for _ in range(6):
                reply = await client.request("create", game="war")
                if reply["type"] == "error":
                    refused.append(reply["code"])
        waiting = [m for m in server.lobby.matches.values() if m.status == "waiting"]
        assert len(waiting) == 10
        stranger = await from_address(server, nursery, "203.0.113.9", "stranger")
        await stranger.expect_ok("create", game="war")

    await during_legit_match(server, attack)
    assert refused.count("too_many_waiting") == 8 * 6 - 10


async def test_creates_per_minute_and_unfinished_matches_are_capped(start_server,
                                                                   autojump_clock) -> None:
    """Create-then-resign against a bot (a finished match at once): the session is
    held to creates_per_minute; matches it sits in unfinished to max_active."""
    server = await start_server(creates_per_minute=4, max_active_per_session=2,
                                ping_interval=1000.0, ping_timeout=1000.0)

    async def attack(legit: LegitMatch) -> None:
        client = await TestClient.connect(server.port)
        await client.hello("churn")
        for _ in range(4):
            mid = (await client.expect_ok("create", game="war", bot="random"))["match"]
            await client.expect_ok("resign", match=mid)
        refused = await client.expect_error("creating_too_fast", "create", game="war",
                                            bot="random")
        assert 0 < refused["retry_after"] <= 15   # one creation every 15 s
        await trio.sleep(30)  # half a minute refills two creations
        first = (await client.expect_ok("create", game="war", bot="random"))["match"]
        await client.expect_ok("create", game="war", bot="random")
        await client.expect_error("too_many_active", "create", game="war", bot="random")
        await client.expect_ok("resign", match=first)
        await client.expect_error("creating_too_fast", "create", game="war", bot="random")

    await during_legit_match(server, attack)


async def test_finished_matches_hold_no_capacity(start_server) -> None:
    """Create-then-resign: each finished match lingers (listed) but holds nothing
    of max_matches (2 here, the legitimate match holding one)."""
    server = await start_server(max_matches=2, finished_linger=300.0)

    async def attack(legit: LegitMatch) -> None:
        client = await TestClient.connect(server.port)
        await client.hello("churn")
        for _ in range(5):
            mid = (await client.expect_ok("create", game="war", bot="random"))["match"]
            await client.expect_ok("resign", match=mid)
        finished = [m for m in server.lobby.matches.values() if m.status == "finished"]
        assert len(finished) >= 5
        mid = (await client.expect_ok("create", game="war", bot="random"))["match"]
        await client.expect_error("server_full", "create", game="war")  # legit + this one
        await client.expect_ok("resign", match=mid)

    await during_legit_match(server, attack)


async def test_a_waiting_match_expires(start_server) -> None:
    server = await start_server(waiting_ttl=0.3)
    alice = await TestClient.connect(server.port)
    await alice.hello("alice")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    notice = await alice.wait_push(lambda m: m["type"] == "error", timeout=3)
    assert (notice["code"], notice["match"]) == ("match_expired", mid) and "id" not in notice
    with trio.fail_after(2):
        while mid in server.lobby.matches:
            await trio.sleep(0.01)
    assert server.lobby.store.load_match(mid) is None
    await alice.expect_ok("create", game="war")  # its waiting quota is free again


async def test_matches_are_paginated_filtered_and_costed(start_server, nursery) -> None:
    """Listing pages of `limit` summaries follow `next` cursors to the end, each
    match once; a page costs 1 + limit/5 tokens, so a listing loop is refused long
    before a loop of cheap requests would be."""
    server = await start_server(rate=20.0, burst=30)

    async def attack(legit: LegitMatch) -> None:
        makers = [await from_address(server, nursery, f"198.51.100.{i}", f"maker{i}")
                  for i in range(4)]
        made = set()
        for maker in makers:
            for game in ("war", "datastructures"):
                made.add((await maker.expect_ok("create", game=game))["match"])
        lister = await TestClient.connect(server.port)
        await lister.hello("lister")
        seen: list[str] = []
        cursor = None
        while True:
            fields: dict[str, Any] = {"status": "waiting", "limit": 3}
            if cursor is not None:
                fields["cursor"] = cursor
            page = await lister.expect_ok("matches", **fields)
            assert len(page["matches"]) <= 3
            seen += [m["match"] for m in page["matches"]]
            cursor = page.get("next")
            if cursor is None:
                break
            await trio.sleep(0.2)  # 1 + 3/5 tokens a page: within the 20/s rate
        assert sorted(seen) == sorted(made)
        await trio.sleep(2)  # a full bucket: 30 tokens
        wars = await lister.expect_ok("matches", game="war", status="waiting", limit=100)
        assert {m["game"] for m in wars["matches"]} == {"war"} and len(wars["matches"]) == 4
        await lister.expect_error("bad_message", "matches", limit=101)  # costs nothing
        await trio.sleep(2)
        await lister.expect_error("bad_message", "matches", cursor="not-a-cursor")
        await trio.sleep(2)
        codes = [(await lister.request("matches", limit=100))["type"] for _ in range(3)]
        assert codes == ["ok", "error", "error"]  # 21 tokens each

    await during_legit_match(server, attack)


async def test_a_spectator_that_never_reads_is_cut_off_by_bytes(start_server,
                                                                nursery) -> None:
    """A spectator whose connection takes no bytes: snapshots of the legitimate
    match pile up in its outbox until the byte bound closes it as a slow consumer
    (the message bound, 10,000 here, is never near); the match never waits for it."""
    server = await start_server(outbox_bytes=20000, outbox_size=10000)
    ours, theirs = trio.testing.lockstep_stream_pair()
    nursery.start_soon(server.serve_stream, theirs, "192.0.2.5:40000")
    deaf = TestClient(ours)

    async def attack(legit: LegitMatch) -> None:
        assert (await deaf.hello("deaf"))["type"] == "welcome"
        await deaf.send({"type": "watch", "id": 1, "match": legit.match})
        # from now on it reads nothing at all
        with trio.fail_after(15):
            while any(c.session is not None and c.session.name == "deaf"
                      for c in server.clients):
                await trio.sleep(0.05)

    await during_legit_match(server, attack)
    assert not any(c.peer.startswith("192.0.2.5") for c in server.clients)


async def test_chat_is_limited_and_says_who_speaks(start_server, nursery) -> None:
    """40 spectators of the legitimate match chat as fast as they can: each gets its
    burst of 5 through, then chat_rate_limited, and the seats are never dropped; a
    201-character line is refused, not cut; in another match, a player who mutes
    the spectators hears only players, and every line says who spoke."""
    server = await start_server(chat_rate=1.0, chat_burst=5, **_MANY)

    async def attack(legit: LegitMatch) -> None:
        spectators = []
        for i in range(40):
            client = await TestClient.connect(server.port)
            await client.hello(f"chatter{i}")
            await client.expect_ok("watch", match=legit.match)
            spectators.append(client)
        codes: list[str] = []
        retry_after = 0.0
        for client in spectators:
            for n in range(8):
                reply = await client.request("chat", match=legit.match, text=f"spam {n}")
                codes.append(reply.get("code", "ok"))
                retry_after = reply.get("retry_after", retry_after)
        assert set(codes) == {"ok", "chat_rate_limited"}
        assert 0 < retry_after <= 1.0   # one line a second
        assert codes.count("ok") <= 40 * 6  # the burst, and what refilled meanwhile
        await spectators[0].expect_error("bad_message", "chat", match=legit.match,
                                         text="x" * 201)
        for client in spectators:
            await client.aclose()

        a = await from_address(server, nursery, "198.51.100.1", "ann")
        b = await from_address(server, nursery, "198.51.100.2", "ben")
        eve = await from_address(server, nursery, "198.51.100.3", "ann")  # a look-alike
        mid = (await a.expect_ok("create", game="war"))["match"]
        await b.expect_ok("join", match=mid)
        await eve.expect_ok("watch", match=mid)
        await a.expect_ok("mute_spectators", match=mid, on=True)
        await eve.expect_ok("chat", match=mid, text="I am ann, the player")
        await b.expect_ok("chat", match=mid, text="gl")
        heard = await b.wait_push(lambda m: m["type"] == "chat" and m["text"].startswith("I"))
        assert (heard["role"], heard["seat"], heard["name"]) == ("spectator", None, "ann")
        line = await a.wait_push(lambda m: m["type"] == "chat")
        assert (line["role"], line["seat"], line["text"]) == ("player", 1, "gl")
        assert not any(m["type"] == "chat" and m["role"] == "spectator" for m in a.seen)

    await during_legit_match(server, attack)


#: Sessions opened quickly from 127.0.0.1 (the handshake limits are tested below).
_MANY = {"handshakes_per_second": 1000.0, "handshake_burst": 1000}


async def test_handshakes_are_limited_per_address(start_server, nursery) -> None:
    """A hello loop from one address: past the burst, too_many_handshakes (fatal);
    the address's live sessions are capped; another address is served meanwhile."""
    server = await start_server(handshakes_per_second=5.0, handshake_burst=10,
                                max_sessions_per_address=40)
    start_rows = 0

    async def attack(legit: LegitMatch) -> None:
        nonlocal start_rows
        start_rows = _session_rows(server)
        answers: list[str] = []
        for _ in range(30):
            client = await TestClient.connect(server.port)
            msg = await client.hello("loop")
            answers.append(msg.get("code") or msg["type"])
            await client.aclose()
        assert answers.count("welcome") <= 10 + 2  # the burst, and what refilled meanwhile
        assert answers[-1] == "too_many_handshakes"
        assert _session_rows(server) - start_rows == answers.count("welcome")
        other = await from_address(server, nursery, "203.0.113.20", "elsewhere")
        await other.expect_ok("games")
        await trio.sleep(0.6)  # the bucket refills: the check after the attack says hello

    await during_legit_match(server, attack, pause=0.01)


def _session_rows(server: Server) -> int:
    return server.lobby.store._db.execute("SELECT count(*) FROM sessions").fetchone()[0]


async def test_watches_per_session_are_limited(start_server, nursery) -> None:
    server = await start_server(max_watches_per_session=3)

    async def attack(legit: LegitMatch) -> None:
        makers = [await from_address(server, nursery, f"198.51.100.{i}", f"m{i}")
                  for i in range(4)]
        mids = [(await m.expect_ok("create", game="war"))["match"] for m in makers]
        watcher = await TestClient.connect(server.port)
        await watcher.hello("watcher")
        for mid in mids[:2] + [legit.match]:
            await watcher.expect_ok("watch", match=mid)
        err = await watcher.expect_error("too_many_watches", "watch", match=mids[3])
        assert err["match"] == mids[3]
        await watcher.expect_ok("leave", match=mids[0])
        await watcher.expect_ok("watch", match=mids[3])

    await during_legit_match(server, attack)


async def test_sessions_past_their_lifetime_are_deleted(start_server) -> None:
    server = await start_server(session_ttl=0.2, session_sweep_interval=0.1)

    async def attack(legit: LegitMatch) -> None:
        for i in range(20):
            client = await TestClient.connect(server.port)
            await client.hello(f"gone{i}")
            await client.aclose()
        await trio.sleep(0.6)
        # only the two legitimate players (connected, seated) are left
        assert _session_rows(server) == 2

    await during_legit_match(server, attack)


async def test_the_join_race_never_leaves_a_seat_taken_but_unusable(start_server) -> None:
    """20 times: a client sends join and drops at once, then resumes. Afterwards it
    is either seated (a snapshot on resume, its intents accepted) or the seat is
    free (another client can take it); never taken but unusable."""
    server = await start_server(grace=30.0, **_MANY)
    outcomes: list[str] = []

    async def attack(legit: LegitMatch) -> None:
        host = await TestClient.connect(server.port)
        await host.hello("host")
        for i in range(20):
            mid = (await host.expect_ok("create", game="war"))["match"]
            racer = await TestClient.connect(server.port)
            token = (await racer.hello(f"racer{i}"))["token"]
            await racer.send({"type": "join", "id": 1, "match": mid})
            await racer.aclose()
            if i % 2:
                await trio.sleep(0.01)
            back = await TestClient.connect(server.port)
            assert (await back.hello(f"racer{i}", resume=token))["type"] == "welcome"
            await trio.testing.wait_all_tasks_blocked(0.01)  # the join has run
            seated = server.lobby.matches[mid].seats[1].session is not None
            if seated:
                snap = await back.snapshot(mid, lambda s: s["status"] == "active")
                assert snap["seat"] == 1
                await back.expect_ok("resign", match=mid)
                outcomes.append("seated")
            else:
                other = await TestClient.connect(server.port)
                await other.hello(f"other{i}")
                await other.expect_ok("join", match=mid)
                await other.expect_ok("resign", match=mid)
                await other.aclose()
                outcomes.append("undone")
            await back.aclose()

    await during_legit_match(server, attack)
    assert len(outcomes) == 20


async def test_an_error_too_long_for_its_limits_is_cut_not_dropped(start_server) -> None:
    server = await start_server()

    async def attack(legit: LegitMatch) -> None:
        client = await TestClient.connect(server.port)
        await client.hello("long")
        deep = {"k" * 100: {"l" * 100: {"m" * 100: {"n" * 100: {"o": 1}}}}}
        reply = await client.request("intent", raw=True, match=legit.match, seq=0,
                                     intent=deep)
        assert reply["type"] == "error" and reply["code"] == "bad_message", reply
        assert len(reply["field"]) <= 256

    await during_legit_match(server, attack)


def test_log_volume_is_bounded_per_address(caplog) -> None:
    import logging

    from server.logvolume import LogVolume

    now = [0.0]
    volume = LogVolume(burst=3, interval=10.0, clock=lambda: now[0])
    log = logging.getLogger("cardserver.test")
    with caplog.at_level(logging.INFO, "cardserver.test"):
        for i in range(100):
            volume.info(log, "10.0.0.1", "line %d", i)
        volume.info(log, "10.0.0.2", "other")
        now[0] = 10.0
        volume.info(log, "10.0.0.1", "after")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["line 0", "line 1", "line 2", "other",
                     "97 more connection log lines from 10.0.0.1 in 10 s not written",
                     "after"]



async def test_one_address_is_served_at_its_rate_however_many_connections(
        start_server, nursery) -> None:
    """Five connections from one address pipeline 200 requests each: all are
    answered (none refused), but the address's readers wait beyond its 400
    requests/s, so the 1,000 take at least (1,000 - 100) / 400 s; the legitimate
    match, at another address, plays on."""
    server = await start_server(address_rate=400.0, address_burst=100)

    async def attack(legit: LegitMatch) -> None:
        flooders = [await from_address(server, nursery, "198.51.100.7", f"flood{i}")
                    for i in range(5)]
        start = trio.current_time()

        async def flood(client: TestClient) -> None:
            await client.send_raw(b"".join(frame({"type": "games", "id": i})
                                           for i in range(1, 201)))
            with trio.fail_after(20):
                while len(client.replies) < 200:
                    await client.pump()

        async with trio.open_nursery() as inner:
            for client in flooders:
                inner.start_soon(flood, client)
        assert trio.current_time() - start >= (1000 - 100) / 400
        assert all(r["type"] == "ok" for c in flooders for r in c.replies.values())

    await during_legit_match(server, attack)


def test_the_address_throttle_makes_requests_wait_off_a_debt() -> None:
    from server.ratelimit import AddressThrottle

    throttle = AddressThrottle(rate=10.0, burst=5)
    assert [throttle.delay("a", 0.0) for _ in range(5)] == [0.0] * 5
    assert throttle.delay("a", 0.0) == 0.1 and throttle.delay("a", 0.0) == 0.2
    assert throttle.delay("b", 0.0) == 0.0  # another address has its own
    assert throttle.delay("a", 1.0) == 0.0  # 1 s later the debt of 2 is paid, 8 - 1 left
