"""Lobby over loopback TCP: games, listings, matchmaking, leave, chat, server bots."""

from __future__ import annotations

import trio

from engine.registry import game_names


async def test_games_and_matches_listing(start_server, connect) -> None:
    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    listed = await alice.expect_ok("games")
    games = listed["games"]
    assert [g["name"] for g in games] == game_names()
    # every server bot, each with a line about it; each one a create's bot takes
    assert [b["name"] for b in listed["bots"]] == ["random", "greedy", "search", "ismcts"]
    assert all(b["doc"] for b in listed["bots"])
    war = next(g for g in games if g["name"] == "war")
    assert {o["name"] for o in war["options"]} >= {"cap"}
    mid = (await alice.expect_ok("create", game="war", options={"cap": 99}, seat=1))["match"]
    await bob.expect_ok("queue", game="datastructures")
    listing = await bob.expect_ok("matches")
    assert listing["queues"] == {"datastructures": 1, "war": 0}
    [summary] = listing["matches"]
    assert summary["match"] == mid and summary["status"] == "waiting"
    assert summary["options"] == {"cap": 99, "return": "shuffled", "short_war": "stand"}
    assert summary["players"][1] == {"seat": 1, "name": "alice", "connected": True, "bot": None}
    assert summary["players"][0]["name"] is None
    assert (await bob.expect_ok("matches", game="datastructures"))["matches"] == []
    assert (await bob.expect_ok("matches", status="waiting"))["matches"][0]["match"] == mid
    for bot in listed["bots"]:   # a create's bot takes each name listed
        player = await connect(server, f"vs-{bot['name']}")
        await player.expect_ok("create", game="war", bot=bot["name"])


async def test_queue_pairs_two_players(start_server, connect) -> None:
    server = await start_server()
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    await alice.expect_ok("queue", game="war", options={"cap": 50})
    await bob.expect_ok("queue", game="war")  # other options: not a partner
    await bob.expect_ok("unqueue", game="war")
    await bob.expect_ok("queue", game="war", options={"cap": 50})
    a = await alice.wait_push(lambda m: m["type"] == "snapshot")
    b = await bob.wait_push(lambda m: m["type"] == "snapshot")
    assert a["match"] == b["match"] and {a["seat"], b["seat"]} == {0, 1}
    assert a["status"] == "active" and a["options"]["cap"] == 50
    assert (await alice.expect_ok("matches"))["queues"]["war"] == 0


async def test_leave_chat_and_resign(start_server, connect) -> None:
    server = await start_server()
    alice, bob, eve = (await connect(server, "alice"), await connect(server, "bob"),
                       await connect(server, "eve"))
    # leaving a waiting match frees the seat; the last one out removes the match
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await alice.expect_ok("leave", match=mid)
    with trio.fail_after(2):
        while mid in server.lobby.matches:
            await trio.sleep(0.01)
    await bob.expect_error("no_such_match", "join", match=mid)

    mid = (await alice.expect_ok("create", game="war"))["match"]
    await bob.expect_ok("join", match=mid)
    await eve.expect_ok("watch", match=mid)
    await eve.expect_ok("chat", match=mid, text="good luck")
    for client in (alice, bob, eve):
        chat = await client.wait_push(lambda m: m["type"] == "chat")
        assert chat == {"type": "chat", "match": mid, "seat": None, "name": "eve",
                        "text": "good luck", "role": "spectator"}
    await eve.expect_ok("leave", match=mid)
    await eve.expect_error("not_in_match", "chat", match=mid, text="hi")
    await bob.expect_ok("leave", match=mid)  # an active seat that leaves resigns
    final = await alice.snapshot(mid, lambda s: s["status"] == "finished")
    assert final["result"] == {"winner": 0, "reason": "resign"}


async def test_server_bot_plays_datastructures(start_server, connect) -> None:
    server = await start_server()
    alice = await connect(server)
    created = await alice.expect_ok("create", game="datastructures", options={"cap": 6},
                                    bot="greedy", seat=0)
    mid = created["match"]
    snap = await alice.snapshot(mid, lambda s: s["status"] == "active")
    assert snap["players"][1]["bot"] == "greedy"
    with trio.fail_after(30):
        while snap["status"] != "finished":
            if snap["legal"]:
                reply = await alice.request("intent", match=mid, seq=snap["seq"],
                                            intent=snap["legal"][-1])
                assert reply["type"] == "ok" or reply["code"] == "stale", reply
            snap = await alice.snapshot(mid, lambda s, n=snap["seq"]: s["seq"] > n)
    bot_rows = [r for r in server.store.journal(mid) if r.seat == 1]
    assert bot_rows and {r.by for r in bot_rows} == {"bot"}
    assert snap["result"]["reason"]


async def test_pipelined_requests_are_slowed_not_dropped(start_server, connect) -> None:
    server = await start_server(outbox_size=16, rate=1e9, burst=10**9)
    client = await connect(server)
    n = 600
    async with trio.open_nursery() as nursery:
        async def send_all() -> None:
            for i in range(n):
                await client.send({"type": "games", "id": i})
        nursery.start_soon(send_all)
        answered = 0
        with trio.fail_after(20):
            while answered < n:
                msg = await client.next_message()
                assert msg["type"] in ("ok", "ping"), msg
                answered += msg["type"] == "ok"


def test_handle_nowait_hands_the_match_the_command_of_the_intent_map() -> None:
    """The poller's way in (``Lobby.handle_nowait``) builds an intent's command from
    the event's fields: the same command ``MATCH_COMMANDS`` makes of its wire map,
    with an id and without one."""
    from types import SimpleNamespace

    from protocol.events import Intent
    from server.lobby import MATCH_COMMANDS, Lobby

    handed = []
    match = SimpleNamespace(submit_nowait=lambda command, session: handed.append(command) or True)
    lobby = SimpleNamespace(matches={"m1": match}, relay=None)
    session = SimpleNamespace(id="s1")
    for rid in (7, None):
        event = Intent(match="m1", seq=3, intent={"type": "flip"}, id=rid)
        assert Lobby.handle_nowait(lobby, session, event) is True  # type: ignore[arg-type]
        expected = MATCH_COMMANDS["intent"](session, event.to_wire())  # type: ignore[arg-type]
        assert handed[-1] == expected and handed[-1].intent is event.intent
