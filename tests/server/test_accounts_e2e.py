"""Accounts, API tokens, rated matches, the rated queue, profiles and the leaderboard,
over real TCP (#14)."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import argon2
import pytest
import trio

from server import tokens
from server.app import Server
from server.ratings import Rating, rate_match
from tests.server.helpers import Closed, TestClient, play_to_end
from tests.server.test_store_schema import FIRST_SCHEMA

Start = Callable[..., Awaitable[Server]]
Connect = Callable[..., Awaitable[TestClient]]

#: Valid argon2id at the smallest costs, for tests that hash many times.
CHEAP = argon2.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


async def _hello(server: Server, name: str, **fields: Any) -> tuple[TestClient, dict[str, Any]]:
    """A connection and the server's answer to its hello (with ``fields`` added)."""
    assert server.port is not None
    client = await TestClient.connect(server.port)
    await client.send({"type": "hello", "protocol": [1], "name": name, "client": "test",
                       **fields})
    first = await client.next_message()
    if first["type"] == "welcome":
        client.welcome = first
    return client, first


async def _closed_after(client: TestClient) -> None:
    with pytest.raises(Closed), trio.fail_after(5):
        while True:
            await client.next_message()


async def _login(server: Server, name: str, password: str) -> TestClient:
    client, welcome = await _hello(server, name, auth={"password": password})
    assert welcome["type"] == "welcome", welcome
    return client


async def _account(server: Server, connect: Connect, name: str,
                   password: str = "pw") -> TestClient:
    """A connection of a newly registered account ``name``."""
    client = await connect(server, name)
    await client.expect_ok("register", password=password)
    return client


async def test_register_login_wrong_password_and_name_theft(start_server: Start,
                                                             connect: Connect) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    reply = await alice.expect_ok("register", password="correct horse")
    assert reply["account"] == {"name": "alice", "bot": False}
    await alice.expect_error("already_registered", "register", password="again")
    dump = "\n".join(server.lobby.store._db.iterdump())
    assert "correct horse" not in dump and "$argon2id$" in dump

    for name in ("alice", "Alice", "a_lice", "al1ce"):  # the name and its look-alikes
        thief, answer = await _hello(server, name)
        assert answer["type"] == "error" and answer["code"] == "name_taken", answer
        await _closed_after(thief)

    wrong, answer = await _hello(server, "alice", auth={"password": "battery staple"})
    assert answer["type"] == "error" and answer["code"] == "bad_credentials", answer
    await _closed_after(wrong)
    unknown, answer = await _hello(server, "nobody", auth={"password": "x"})
    assert answer["code"] == "bad_credentials"
    both, answer = await _hello(server, "alice", auth={"password": "x", "api_token": "y"})
    assert answer["code"] == "bad_message"

    again = await _login(server, "ALICE", "correct horse")  # the account's own spelling wins
    assert again.welcome is not None
    assert again.welcome["name"] == "alice" and again.welcome["account"]["name"] == "alice"
    assert "account" not in (await connect(server, "bob")).welcome

    bob = await connect(server, "bob")
    await bob.expect_error("bad_password", "register", password="")
    await bob.expect_error("not_registered", "change_password", old="", new="x")
    _, welcome = await _hello(server, "e\u0301tienne")  # decomposed: shown composed (NFC)
    assert welcome["name"] == "\u00e9tienne"
    for bad_name, why in (("p\u0430ypal", "scripts"), ("eve (bot)", "bot"),
                          ("\u2800", "invisible")):
        _, answer = await _hello(server, bad_name)
        assert answer["code"] == "bad_name" and why in answer["message"], answer


async def test_password_change_and_logout(start_server: Start, connect: Connect) -> None:
    server = await start_server()
    alice = await _account(server, connect, "alice", "old")
    await alice.expect_error("bad_credentials", "change_password", old="nope", new="new")
    await alice.expect_error("bad_password", "change_password", old="old", new="")
    await alice.expect_ok("change_password", old="old", new="new")  # the connection stayed open
    _, answer = await _hello(server, "alice", auth={"password": "old"})
    assert answer["code"] == "bad_credentials"
    session = await _login(server, "alice", "new")
    assert session.welcome is not None
    token = session.welcome["token"]
    await session.expect_ok("logout")
    bye = await session.wait_push(lambda m: m["type"] == "bye")
    assert bye["reason"] == "logged_out"
    _, answer = await _hello(server, "alice", resume=token)
    assert answer["code"] == "bad_token"


async def test_api_tokens(start_server: Start, connect: Connect) -> None:
    server = await start_server()
    guest = await connect(server, "guest")
    await guest.expect_error("not_registered", "token_create", label="x")
    await guest.expect_error("not_registered", "tokens")
    robo = await _account(server, connect, "robo")
    created = await robo.expect_ok("token_create", label="my bot")
    api_token, record = created["api_token"], created["token"]
    assert api_token.startswith("cst_") and record["label"] == "my bot"
    assert api_token not in "\n".join(server.lobby.store._db.iterdump())
    listed = (await robo.expect_ok("tokens"))["tokens"]
    assert [t["id"] for t in listed] == [record["id"]] and "api_token" not in listed[0]

    bot, welcome = await _hello(server, "robo", auth={"api_token": api_token})
    assert welcome["type"] == "welcome" and welcome["account"]["name"] == "robo"
    await bot.expect_ok("set_bot", bot=True)
    profile = (await bot.expect_ok("profile"))["profile"]
    assert profile["bot"] and profile["registered"]
    assert (await robo.expect_ok("tokens"))["tokens"][0]["last_used"] is not None

    other = await _account(server, connect, "other")
    _, answer = await _hello(server, "other", auth={"api_token": api_token})
    assert answer["code"] == "bad_credentials"  # a token of another account
    await other.expect_error("no_such_token", "token_revoke", token=record["id"])
    bot_token = welcome["token"]
    await robo.expect_ok("token_revoke", token=record["id"])
    # the session that logged in with it is closed and cannot be resumed
    bye = await bot.wait_push(lambda m: m["type"] == "bye")
    assert bye["reason"] == "logged_out" and "revoked" in bye["message"]
    _, answer = await _hello(server, "robo", resume=bot_token)
    assert answer["code"] == "bad_token"
    _, answer = await _hello(server, "robo", auth={"api_token": api_token})
    assert answer["code"] == "bad_credentials"
    assert (await robo.expect_ok("tokens"))["tokens"] == []


async def test_failed_logins_are_rate_limited(start_server: Start, connect: Connect) -> None:
    server = await start_server()
    server.lobby.accounts.hasher = CHEAP
    await _account(server, connect, "alice", "secret")
    for _ in range(10):
        _, answer = await _hello(server, "alice", auth={"password": "guess"})
        assert answer["code"] == "bad_credentials"
    client, answer = await _hello(server, "alice", auth={"password": "secret"})
    assert answer["code"] == "rate_limited" and "try again" in answer["message"]
    assert 0 < answer["retry_after"] <= 600   # the oldest failure leaves the 10-minute window
    await _closed_after(client)


async def _rated_pair(server: Server, connect: Connect, names: tuple[str, str],
                      clients: dict[str, TestClient], options: dict[str, Any]
                      ) -> tuple[str, dict[int, TestClient]]:
    """A rated War match between two accounts, started: its id and its seats."""
    for name in names:
        if name not in clients:
            clients[name] = await _account(server, connect, name)
    first, second = clients[names[0]], clients[names[1]]
    created = await first.expect_ok("create", game="war", options=options, rated=True)
    match = created["match"]
    await second.expect_ok("join", match=match)
    return match, {0: first, 1: second}


async def test_rated_results_update_both_ratings_exactly(start_server: Start,
                                                         connect: Connect) -> None:
    server = await start_server()
    clients: dict[str, TestClient] = {}
    expected = {"alice": Rating(), "bob": Rating()}
    for names in (("alice", "bob"), ("bob", "alice")):
        match, seats = await _rated_pair(server, connect, names, clients, {"cap": 30})
        final = await play_to_end(seats, match)
        players = final[0]["players"]  # ratings as they were when the seats were taken
        assert [p["rating"] for p in players] == \
            [expected[names[0]].rating, expected[names[1]].rating]
        assert all(p["registered"] and p["provisional"] for p in players)
        result = final[0]["result"]
        assert result["rated"] and final[1]["result"] == result
        want = rate_match(expected[names[0]], expected[names[1]], result["winner"])
        for seat, (name, new) in enumerate(zip(names, want, strict=True)):
            change = result["ratings"][seat]
            assert change["name"] == name and change["seat"] == seat
            assert change["rating_before"] == expected[name].rating
            assert (change["rating_after"], change["rd_after"], change["volatility_after"]) == \
                (new.rating, new.rd, new.volatility)
            expected[name] = new
    profile = (await clients["alice"].expect_ok("profile", name="alice"))["profile"]
    war = profile["ratings"]["war"]
    assert (war["rating"], war["rd"], war["volatility"], war["games"]) == (
        expected["alice"].rating, expected["alice"].rd, expected["alice"].volatility, 2)
    assert profile["ratings"]["datastructures"]["games"] == 0
    assert profile["recent_total"] == 2 and profile["recent"][0]["rated"]
    page = (await clients["alice"].expect_ok("profile", name="alice", limit=1, offset=1))
    assert len(page["profile"]["recent"]) == 1
    board = (await clients["bob"].expect_ok("leaderboard", game="war"))["entries"]
    assert sorted(e["name"] for e in board) == ["alice", "bob"]
    assert board[0]["rating"] >= board[1]["rating"] and board[0]["rank"] == 1
    assert (await clients["bob"].expect_ok("leaderboard", game="datastructures"))["entries"] == []
    await clients["bob"].expect_error("no_such_game", "leaderboard", game="chess")


async def test_rated_matches_are_between_accounts(start_server: Start, connect: Connect) -> None:
    server = await start_server()
    guest = await connect(server, "guest")
    await guest.expect_error("not_registered", "create", game="war", rated=True)
    await guest.expect_error("not_registered", "create", game="war", options={"rated": True})
    await guest.expect_error("not_registered", "queue", game="war", rated=True)
    alice = await _account(server, connect, "alice")
    await alice.expect_error("bad_option", "create", game="war", rated=True, bot="random")
    await alice.expect_error("bad_option", "create", game="war", rated=True, abandon="bot")
    match = (await alice.expect_ok("create", game="war", rated=True))["match"]
    listed = (await guest.expect_ok("matches"))["matches"]
    assert [m["rated"] for m in listed if m["match"] == match] == [True]
    await guest.expect_error("not_registered", "join", match=match)
    twin = await _login(server, "alice", "pw")  # a second session of the same account
    await twin.expect_error("already_seated", "join", match=match)


async def test_an_aborted_rated_match_rates_nobody(start_server: Start,
                                                   connect: Connect) -> None:
    server = await start_server()
    clients: dict[str, TestClient] = {}
    match, seats = await _rated_pair(server, connect, ("alice", "bob"), clients, {})
    await seats[0].snapshot(match, lambda m: m["status"] == "active")
    await seats[0].expect_ok("resign", match=match)
    final = await seats[1].snapshot(match, lambda m: m["status"] == "finished")
    assert final["result"]["rated"] and final["result"]["ratings"] == []
    profile = (await seats[1].expect_ok("profile", name="alice"))["profile"]
    assert profile["ratings"]["war"]["games"] == 0 and profile["recent"][0]["rated"] is False


def _set_rating(server: Server, name: str, rating: float) -> None:
    store = server.lobby.store
    account = server.lobby.accounts.find(name)
    assert account is not None
    store._db.execute("INSERT OR REPLACE INTO ratings VALUES (?, 'war', ?, 80, 0.06, 5, 5, 0, 0)",
                      (account.id, rating))
    store._db.commit()


async def test_the_rated_queue_pairs_by_rating(start_server: Start, connect: Connect) -> None:
    server = await start_server()
    clients = {name: await _account(server, connect, name) for name in ("low", "high", "mid")}
    for name, rating in (("low", 1500.0), ("high", 1900.0), ("mid", 1540.0)):
        _set_rating(server, name, rating)
    assert (await clients["low"].expect_ok("queue", game="war", rated=True))["rated"]
    await clients["high"].expect_ok("queue", game="war", rated=True)
    waiting = await clients["high"].expect_ok("matches")
    assert waiting["rated_queues"]["war"] == 2 and waiting["queues"]["war"] == 0
    await clients["mid"].expect_ok("queue", game="war", rated=True)
    snap = await clients["mid"].wait_push(lambda m: m["type"] == "snapshot")
    names = sorted(p["name"] for p in snap["players"])
    assert names == ["low", "mid"]  # 40 points apart; high is 360 above mid
    await clients["low"].wait_push(lambda m: m["type"] == "snapshot" and
                                   m["match"] == snap["match"])
    assert (await clients["high"].expect_ok("matches"))["rated_queues"]["war"] == 1
    # one account twice in the rated queue is never paired with itself
    twin = await _login(server, "high", "pw")
    await twin.expect_ok("queue", game="war", rated=True)
    await trio.sleep(1.5)  # a pairing pass runs meanwhile
    assert (await twin.expect_ok("matches"))["rated_queues"]["war"] == 2
    await clients["high"].expect_ok("unqueue", game="war")
    assert (await twin.expect_ok("matches"))["rated_queues"]["war"] == 1
    # nor in the casual queue, which is apart from the rated one
    await twin.expect_ok("unqueue")
    await clients["high"].expect_ok("queue", game="war")
    await twin.expect_ok("queue", game="war")
    waiting = await twin.expect_ok("matches")
    assert waiting["queues"]["war"] == 2 and waiting["rated_queues"]["war"] == 0


async def test_a_store_of_the_first_schema_keeps_its_matches(tmp_path: Path,
                                                             start_server: Start) -> None:
    """A store written before schema versions opens, migrates and resumes its match."""
    db_path = tmp_path / "old.db"
    token = tokens.new_token()
    db = sqlite3.connect(db_path)
    db.executescript(FIRST_SCHEMA)
    with db:
        db.execute("INSERT INTO sessions VALUES ('s1', ?, 'alice', 1.0, 9e9)",
                   (tokens.hash_token(token),))
        db.execute("INSERT INTO matches VALUES ('m1', 'war', '{\"cap\":40}', ?, ?, 0, "
                   "'forfeit', 'active', 1.0, NULL, NULL, NULL)",
                   (format(12345, "064x"), tokens.new_salt()))
        db.execute("INSERT INTO seats VALUES ('m1', 0, 's1', 'alice', NULL, 0)")
        db.execute("INSERT INTO seats VALUES ('m1', 1, NULL, 'random (bot)', 'random', 0)")
    db.close()
    server = await start_server(db=db_path)
    client, welcome = await _hello(server, "alice", resume=token)
    assert welcome["type"] == "welcome" and welcome["resumed"]
    snap = await client.snapshot("m1")
    assert snap["status"] == "active" and snap["players"][0]["name"] == "alice"


async def test_a_rated_match_survives_a_restart_and_still_rates(start_server: Start,
                                                               connect: Connect) -> None:
    server = await start_server()
    clients: dict[str, TestClient] = {}
    match, seats = await _rated_pair(server, connect, ("alice", "bob"), clients, {"cap": 30})
    for client in seats.values():  # one battle each, so the match counts
        snap = await client.snapshot(match, lambda m: m["status"] == "active")
        await client.request("intent", match=match, seq=snap["seq"], intent={"type": "flip"})
    tokens_ = {seat: c.welcome["token"] for seat, c in seats.items() if c.welcome}
    server.shutdown()
    with trio.fail_after(5):
        await server.stopped.wait()

    again = await start_server()  # the same store: the match comes back rated
    assert again.lobby.matches[match].rated
    resumed = {}
    for seat, token in tokens_.items():
        client, welcome = await _hello(again, "x", resume=token)
        assert welcome["resumed"] and welcome["account"]["name"] == ("alice", "bob")[seat]
        resumed[seat] = client
    final = await play_to_end(resumed, match)
    result = final[0]["result"]
    want = rate_match(Rating(), Rating(), result["winner"])
    assert [c["rating_after"] for c in result["ratings"]] == [w.rating for w in want]
    board = (await resumed[0].expect_ok("leaderboard", game="war"))["entries"]
    assert {e["name"] for e in board} == {"alice", "bob"}


async def test_a_rated_pair_the_store_refuses_waits_on(start_server: Start, connect: Connect,
                                                       allow_error_logs: None) -> None:
    from tests.server.test_errors import _refuse_one_match

    server = await start_server()
    low, mid = await _account(server, connect, "low"), await _account(server, connect, "mid")
    first = await low.expect_ok("queue", game="war", rated=True, client_seed="a1")
    refused = _refuse_one_match(server)
    await mid.expect_ok("queue", game="war", rated=True, client_seed="b2")  # then it fails
    assert len(refused) == 1
    assert all(s.seats == set() for s in server.lobby.sessions.values())
    # both wait on with the seeds they were promised, and the next pass pairs them
    snap = await mid.wait_push(lambda m: m["type"] == "snapshot", timeout=5)
    assert sorted(p["name"] for p in snap["players"]) == ["low", "mid"]
    assert snap["match"] != refused[0]
    assert snap["commitment"] == first["commitment"] and sorted(snap["client_seeds"]) == \
        ["a1", "b2"]
