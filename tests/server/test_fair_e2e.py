"""Over real TCP: client seeds and the documented stream (PROTOCOL-CORE 1.1), the
verification of a finished match, and the points where docs/protocol.md and the
server once disagreed (#12)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from engine.registry import get_game
from engine.rng import HMAC_STREAM, HmacStream
from server.cli import main as cardserver
from tests.server.helpers import TestClient, play_to_end

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


async def _pair(server: Any, connect: Any, game: str, create: dict[str, Any],
                join: dict[str, Any]) -> tuple[TestClient, TestClient, str]:
    alice = await connect(server, "alice")
    bob = await connect(server, "bob")
    mid = (await alice.expect_ok("create", game=game, turn_timer=0, **create))["match"]
    await bob.expect_ok("join", match=mid, **join)
    return alice, bob, mid


async def test_client_seeds_are_announced_and_the_deal_follows_from_them(
        start_server: Any, connect: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    server = await start_server(store_lock="shared")  # replayed while it runs
    alice, bob, mid = await _pair(server, connect, "datastructures",
                                  {"client_seed": "C0FFEE", "options": {"cap": 6}},
                                  {"client_seed": "0123abcd"})
    start = await alice.snapshot(mid, lambda m: m["status"] == "active")
    assert start["stream"] == HMAC_STREAM
    assert start["client_seeds"] == ["c0ffee", "0123abcd"]
    assert "reveal" not in start
    alice.pushes.insert(0, start)   # play_to_end starts from it
    last = await play_to_end({0: alice, 1: bob}, mid)
    final = last[0]
    assert final["status"] == "finished" and final["client_seeds"] == ["c0ffee", "0123abcd"]
    seed = int(final["reveal"]["seed"], 16)
    # the deal alice was shown is the one the seed and both client seeds deal
    dealt = get_game("datastructures").new_state(
        seed, final["options"], rng=HmacStream.for_match(seed, ["c0ffee", "0123abcd"]))
    assert json.loads(json.dumps(dealt.view(0))) == start["view"]

    db = str(server.config.db)
    assert cardserver(["replay", mid, "--db", db, "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"verified: match {mid}" in out and "c0ffee, 0123abcd" in out
    if NODE is not None:   # the same match, verified in JavaScript
        assert cardserver(["replay", mid, "--db", db, "--json"]) == 0
        record = tmp_path / "record.json"
        record.write_text(capsys.readouterr().out)
        done = subprocess.run([NODE, str(ROOT / "examples" / "verify_match.js"), "record",
                               str(record)], capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr


async def test_a_seat_that_sends_no_client_seed_gets_one_chosen_by_the_server(
        start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    mid = (await alice.expect_ok("create", game="war", bot="random",
                                 client_seed="7"))["match"]
    snap = await alice.snapshot(mid, lambda m: m["status"] == "active")
    mine, theirs = snap["client_seeds"]
    assert mine == "7"
    assert len(theirs) == 32 and int(theirs, 16) >= 0


async def test_queued_players_bring_their_client_seeds(start_server: Any,
                                                       connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    bob = await connect(server, "bob")
    queued = await alice.expect_ok("queue", game="war", client_seed="aa")
    await bob.expect_ok("queue", game="war", client_seed="bb")
    snap = await alice.wait_push(lambda m: m["type"] == "snapshot")
    # the server committed to the seed before bob's client seed existed
    assert snap["commitment"] == queued["commitment"]
    seeds = snap["client_seeds"]
    assert sorted(seeds) == ["aa", "bb"]
    assert seeds[snap["seat"]] == "aa"


@pytest.mark.parametrize("bad", ["", "xyz", "0x1f", "1" * 65])
async def test_a_malformed_client_seed_is_a_bad_message(start_server: Any, connect: Any,
                                                        bad: str) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    reply = await alice.expect_error("bad_message", "create", game="war", client_seed=bad)
    assert reply["field"] == "client_seed"


async def test_every_int_option_announces_a_maximum_and_the_server_keeps_it(
        start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    games = (await alice.expect_ok("games"))["games"]
    ints = [o for g in games for o in g["options"] if o["kind"] == "int"]
    assert ints and all(isinstance(o.get("max"), int) for o in ints)
    war_cap = next(o for g in games if g["name"] == "war" for o in g["options"]
                   if o["name"] == "cap")
    assert war_cap["max"] == 1_000_000
    for too_big in (1_000_001, 100_000_000, 2**64 - 1):
        reply = await alice.expect_error("bad_option", "create", game="war",
                                         options={"cap": too_big})
        assert reply["field"] == "options"
    await alice.expect_ok("create", game="war", options={"cap": 1_000_000})


async def test_matches_of_an_unknown_game_is_no_such_game(start_server: Any,
                                                          connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    reply = await alice.expect_error("no_such_game", "matches", game="chess")
    assert reply["field"] == "game"
    await alice.expect_ok("matches", game="war")


async def test_a_seat_handed_to_a_bot_is_told_on_resume(start_server: Any,
                                                        connect: Any) -> None:
    server = await start_server(grace=0.2, abandon_bot="random", auto_flip_delay=0.01)
    alice, bob, mid = await _pair(server, connect, "war",
                                  {"abandon": "bot", "options": {"cap": 5}}, {})
    await bob.snapshot(mid, lambda m: m["status"] == "active")
    token = bob.welcome["token"]
    await bob.aclose()
    await alice.wait_push(lambda m: m["type"] == "presence" and m["seat"] == 1
                          and m["connected"], timeout=3)
    again = await TestClient.connect(server.port)
    assert (await again.hello("bob", resume=token))["resumed"] is True
    snap = await again.snapshot(mid)
    assert snap["seat"] is None and snap["legal"] == []
    assert snap["players"][1]["bot"] == "random"
    # and it may stop watching like any spectator
    await again.expect_ok("leave", match=mid)


async def test_the_snapshot_after_a_resume_carries_the_events_missed(
        start_server: Any, connect: Any) -> None:
    server = await start_server(grace=30.0)
    alice, bob, mid = await _pair(server, connect, "war", {}, {})
    await alice.snapshot(mid, lambda m: m["status"] == "active")
    await bob.snapshot(mid, lambda m: m["status"] == "active")
    token = bob.welcome["token"]
    await bob.aclose()
    await alice.wait_push(lambda m: m["type"] == "presence" and not m["connected"])
    await alice.expect_ok("intent", match=mid, seq=0, intent={"type": "flip"})
    mine = await alice.snapshot(mid, lambda m: m["seq"] == 1)
    again = await TestClient.connect(server.port)
    assert (await again.hello("bob", resume=token))["resumed"] is True
    snap = await again.snapshot(mid)
    assert snap["seq"] == 1 and snap["events"] == mine["events"] != []
    assert not snap.get("events_cut")
    # a resume with nothing missed has no events
    token = again.welcome["token"]
    await again.aclose()
    third = await TestClient.connect(server.port)
    assert (await third.hello("bob", resume=token))["resumed"] is True
    assert (await third.snapshot(mid))["events"] == []


async def test_spectators_are_told_when_a_waiting_match_is_removed(
        start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    carol = await connect(server, "carol")
    mid = (await alice.expect_ok("create", game="war"))["match"]
    await carol.expect_ok("watch", match=mid)
    await carol.snapshot(mid)
    await alice.expect_ok("leave", match=mid)
    with trio.fail_after(5):
        gone = await carol.snapshot(mid, lambda m: m["status"] == "finished")
    assert gone["result"] == {"winner": None, "reason": "cancelled"}
    assert gone["legal"] == [] and "reveal" in gone


async def test_a_resume_is_sent_only_the_newest_finished_matches(start_server: Any,
                                                                 connect: Any) -> None:
    from server.lobby import RESUME_FINISHED

    server = await start_server(auto_flip_delay=0.0)
    alice = await connect(server, "alice")
    ids = []
    for _ in range(RESUME_FINISHED + 3):
        mid = (await alice.expect_ok("create", game="war", bot="random", turn_timer=0,
                                     options={"cap": 1}))["match"]
        snap = await alice.snapshot(mid, lambda m: m["status"] == "active")
        while snap["status"] != "finished":   # one battle (and its wars, if a tie)
            if snap["legal"]:
                await alice.request("intent", match=mid, seq=snap["seq"],
                                    intent={"type": "flip"})
            snap = await alice.snapshot(mid, lambda m, n=snap["seq"]: m["seq"] > n
                                        or m["status"] == "finished")
        ids.append(mid)
    active = (await alice.expect_ok("create", game="war", turn_timer=0))["match"]
    token = alice.welcome["token"]
    await alice.aclose()
    again = await TestClient.connect(server.port)
    assert (await again.hello("alice", resume=token))["resumed"] is True
    await again.snapshot(active)
    with trio.move_on_after(0.5):
        while True:
            await again.pump()
    resent = {m["match"] for m in again.seen if m["type"] == "snapshot"}
    assert resent == {active, *ids[-RESUME_FINISHED:]}


async def test_queues_are_per_game(start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    bob = await connect(server, "bob")
    await alice.expect_ok("queue", game="war")
    await alice.expect_ok("queue", game="datastructures")
    listed = await alice.expect_ok("matches")
    assert listed["queues"] == {"war": 1, "datastructures": 1}
    await bob.expect_ok("queue", game="war")
    snap = await alice.wait_push(lambda m: m["type"] == "snapshot")
    assert snap["game"] == "war"
    # pairing for War left alice waiting for Data Structures
    assert (await bob.expect_ok("matches"))["queues"] == {"war": 0, "datastructures": 1}


async def test_leave_and_watch_of_a_finished_match(start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    carol = await connect(server, "carol")
    mid = (await alice.expect_ok("create", game="war", bot="random", turn_timer=0))["match"]
    await alice.snapshot(mid, lambda m: m["status"] == "active")
    await alice.expect_ok("resign", match=mid)
    final = await alice.snapshot(mid, lambda m: m["status"] == "finished")
    await carol.expect_ok("watch", match=mid)
    seen = await carol.snapshot(mid)
    assert seen["status"] == "finished" and seen["result"] == final["result"]
    assert seen["reveal"] == final["reveal"] and seen["seat"] is None
    await alice.expect_ok("leave", match=mid)
    await carol.expect_ok("leave", match=mid)


async def test_from_the_command_line_cardbot_seeds_and_cardserver_verifies(
        start_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    server = await start_server(store_lock="shared")  # replayed while it runs
    cardbot = Path(sys.executable).with_name("cardbot")
    done = await trio.run_process(
        [str(cardbot), "connect", f"127.0.0.1:{server.port}", "--game", "war", "--create",
         "--vs-bot", "random", "--client-seed", "BEEF", "--option", "cap=20", "--quiet"],
        capture_stdout=True, capture_stderr=True, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    mid = next(word for word in out.split() if word.startswith("m") and len(word) == 11)
    rec = server.store.load_match(mid)
    assert rec is not None and rec.client_seeds[0] == "beef"
    assert cardserver(["replay", mid, "--db", str(server.config.db), "--verify"]) == 0
    assert "client seeds (beef, " in capsys.readouterr().out


async def test_the_rated_queue_commits_first_and_brings_the_client_seeds(
        start_server: Any, connect: Any) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    bob = await connect(server, "bob")
    for client in (alice, bob):
        await client.expect_ok("register", password="pw")
    first = await alice.expect_ok("queue", game="war", rated=True, client_seed="a1")
    await bob.expect_ok("queue", game="war", rated=True, client_seed="b2")
    snap = await alice.wait_push(lambda m: m["type"] == "snapshot", timeout=10)
    assert snap["commitment"] == first["commitment"]   # alice waited longer
    assert snap["client_seeds"][snap["seat"]] == "a1"
    assert sorted(snap["client_seeds"]) == ["a1", "b2"]
