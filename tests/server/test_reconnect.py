"""Reconnecting: resume within the grace period, forfeit or bot takeover after it."""

from __future__ import annotations

import trio

from tests.server.helpers import Closed, TestClient


async def _war_pair(server, connect, **create):
    alice, bob = await connect(server, "alice"), await connect(server, "bob")
    mid = (await alice.expect_ok("create", game="war", **create))["match"]
    await bob.expect_ok("join", match=mid)
    await alice.snapshot(mid, lambda s: s["status"] == "active")
    await bob.snapshot(mid, lambda s: s["status"] == "active")
    return alice, bob, mid


def _presence(seat: int, connected: bool):
    return lambda m: (m["type"] == "presence" and m["seat"] == seat
                      and m["connected"] is connected)


async def test_resume_within_grace(start_server, connect) -> None:
    server = await start_server(grace=30.0)
    alice, bob, mid = await _war_pair(server, connect)
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    token = alice.welcome["token"]
    session = alice.welcome["session"]
    await alice.aclose()
    gone = await bob.wait_push(_presence(0, False))
    assert gone["grace"] == 30.0 and gone["name"] == "alice"

    again = await TestClient.connect(server.port)
    welcome = await again.hello("ignored", resume=token)
    assert welcome["type"] == "welcome" and welcome["resumed"] is True
    assert welcome["session"] == session and welcome["name"] == "alice"
    snap = await again.snapshot(mid)
    assert snap["seat"] == 0 and snap["seq"] == 1 and snap["status"] == "active"
    assert snap["players"][0]["connected"] is True
    await bob.wait_push(_presence(0, True))
    # The game goes on: bob flips, the battle resolves, alice may flip again.
    await bob.expect_ok("intent", match=mid, seq=1, intent={"type": "flip"})
    snap = await again.snapshot(mid, lambda s: s["seq"] == 2)
    assert snap["legal"] == [{"type": "flip"}]

    # The same token on a second connection takes the session over.
    third = await TestClient.connect(server.port)
    assert (await third.hello("x", resume=token))["resumed"] is True
    bye = await again.wait_push(lambda m: m["type"] == "bye")
    assert bye["reason"] == "session_resumed"
    assert (await third.snapshot(mid))["seat"] == 0
    # Only the hash of the token is stored.
    db = server.store._db
    assert db.execute("SELECT count(*) FROM sessions WHERE token_hash = ?",
                      (token,)).fetchone()[0] == 0


async def test_forfeit_after_grace(start_server, connect) -> None:
    server = await start_server(grace=0.3)
    alice, bob, mid = await _war_pair(server, connect)
    token = alice.welcome["token"]
    await alice.aclose()
    await bob.wait_push(_presence(0, False))
    with trio.fail_after(3):
        final = await bob.snapshot(mid, lambda s: s["status"] == "finished")
    assert final["result"] == {"winner": 1, "reason": "abandoned"}
    assert "reveal" in final
    # The token still works; the seat is lost and the match shows as finished.
    again = await TestClient.connect(server.port)
    assert (await again.hello("alice", resume=token))["resumed"] is True
    snap = await again.snapshot(mid)
    assert snap["status"] == "finished" and snap["result"]["winner"] == 1


async def test_bot_takes_over_after_grace(start_server, connect) -> None:
    server = await start_server(grace=0.2, abandon_bot="random")
    alice, bob, mid = await _war_pair(server, connect, abandon="bot", options={"cap": 30})
    await bob.aclose()
    back = await alice.wait_push(_presence(1, True), timeout=3)
    assert back["name"].startswith("bob") and "bot" in back["name"]
    # alice keeps flipping; the bot answers every battle until the cap.
    with trio.fail_after(10):
        while True:
            snap = await alice.snapshot(mid)
            if snap["status"] == "finished":
                break
            if snap["legal"]:
                await alice.request("intent", match=mid, seq=snap["seq"], intent=snap["legal"][0])
    assert snap["players"][1]["bot"] == "random"
    assert snap["result"]["reason"] in ("cap", "all_cards", "exhausted", "short_war")
    assert snap["view"]["battles"] > 1


async def test_bye_on_shutdown(start_server, connect) -> None:
    server = await start_server()
    alice = await connect(server)
    server.shutdown()
    bye = await alice.wait_push(lambda m: m["type"] == "bye")
    assert bye["reason"] == "server_shutdown"
    try:
        with trio.fail_after(3):
            while True:
                await alice.next_message()
    except Closed:
        pass
    with trio.fail_after(3):
        await server.stopped.wait()


async def test_restart_in_process_resumes_a_bot_match(start_server, connect) -> None:
    server = await start_server()
    alice = await connect(server)
    mid = (await alice.expect_ok("create", game="war", bot="random", options={"cap": 50}))["match"]
    snap = await alice.snapshot(mid, lambda s: s["status"] == "active")
    await alice.expect_ok("intent", match=mid, seq=snap["seq"], intent={"type": "flip"})
    # the bot flipped too, and flips at once again in the next battle
    snap = await alice.snapshot(mid, lambda s: s["seq"] == 3)
    token = alice.welcome["token"]
    server.shutdown()
    await alice.wait_push(lambda m: m["type"] == "bye")
    with trio.fail_after(5):
        await server.stopped.wait()

    again = await start_server()  # the same store file
    assert again.lobby.matches[mid].seq == 3
    alice = await TestClient.connect(again.port)
    assert (await alice.hello("alice", resume=token))["resumed"]
    snap = await alice.snapshot(mid)
    assert snap["seq"] == 3 and snap["legal"] == [{"type": "flip"}]
    await alice.expect_ok("intent", match=mid, seq=3, intent={"type": "flip"})
    snap = await alice.snapshot(mid, lambda s: s["seq"] == 5)  # the restored bot answers
    assert snap["players"][1]["bot"] == "random"


async def test_shutdown_during_handshake(start_server, connect) -> None:
    server = await start_server()
    silent = await connect(server, None)  # connected, no hello yet
    with trio.fail_after(2):
        while not server.clients:
            await trio.sleep(0.01)
    server.shutdown()
    msg = await silent.next_message()
    assert msg == {"type": "bye", "reason": "server_shutdown",
                   "message": "the server is shutting down"}
    with trio.fail_after(3):
        await server.stopped.wait()


async def test_a_match_whose_humans_all_left_ends(start_server, connect) -> None:
    """abandon "bot": the first seat to run out of grace passes to a bot, the last
    one forfeits (``abandoned``): the match ends instead of bots playing on alone."""
    server = await start_server(grace=0.1, auto_flip_delay=0.05, abandon_bot="random")
    alice, bob, mid = await _war_pair(server, connect, abandon="bot")
    await alice.aclose()
    await trio.sleep(0.3)
    await bob.aclose()
    match = server.lobby.matches[mid]
    with trio.fail_after(3):
        while match.status != "finished":
            await trio.sleep(0.01)
    rec = server.lobby.store.load_match(mid)
    assert rec is not None and rec.status == "finished" and rec.reason == "abandoned"
    assert rec.winner == 0 and match.seats[0].bot == "random"
    seq = match.seq
    await trio.sleep(0.3)
    assert match.seq == seq  # nobody plays on
