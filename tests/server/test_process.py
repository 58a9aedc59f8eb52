"""The `cardserver` process: SIGKILL and restart with matches resuming; clean SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import trio

from server.cli import main as cli_main
from tests.server.helpers import Closed, TestClient, free_port

ROOT = Path(__file__).resolve().parents[2]


async def start_process(db: Path, port: int, log: Path, *flags: str) -> subprocess.Popen:
    """A `cardserver` process on ``db`` and ``port`` (more ``flags`` after the tests'
    own), its log appended to ``log``, once it accepts connections."""
    args = [sys.executable, "-m", "server.cli", "--host", "127.0.0.1", "--port", str(port),
            "--db", str(db), "--log-level", "debug", "--grace", "60", "--turn-timer", "0",
            *flags]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=open(log, "a"))  # noqa: SIM115
    with trio.fail_after(15):
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                assert proc.poll() is None, log.read_text()
                await trio.sleep(0.05)
                continue
            await stream.aclose()
            return proc


def kill_if_running(proc: subprocess.Popen) -> None:
    """Kill ``proc`` if it still runs (a test's cleanup after a failure), and reap it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def _play(clients: dict[int, TestClient], mid: str, steps: int,
                snaps: dict[int, dict] | None = None) -> dict[int, dict]:
    """Make ``steps`` accepted intents (first legal of whoever may act)."""
    if snaps is None:
        snaps = {s: await c.snapshot(mid, lambda m: m["status"] == "active")
                 for s, c in clients.items()}
    for _ in range(steps):
        seat = next(s for s, snap in snaps.items() if snap["legal"])
        reply = await clients[seat].request("intent", match=mid, seq=snaps[seat]["seq"],
                                            intent=snaps[seat]["legal"][0])
        assert reply["type"] == "ok", reply
        for s, c in clients.items():
            snaps[s] = await c.snapshot(mid, lambda m, n=reply["seq"]: m["seq"] >= n)
        if snaps[0]["status"] == "finished":
            break
    return snaps


async def test_sigkill_and_restart_resumes_matches(tmp_path: Path, capsys) -> None:
    db, log, port = tmp_path / "kill.db", tmp_path / "server.log", free_port()
    proc = await start_process(db, port, log)
    try:
        alice, bob, eve = [await TestClient.welcomed(port, name)
                           for name in ("alice", "bob", "eve")]
        mid = (await alice.expect_ok("create", game="datastructures",
                                     options={"cap": 10}))["match"]
        await bob.expect_ok("join", match=mid)
        await eve.expect_ok("watch", match=mid)
        before = await _play({0: alice, 1: bob}, mid, 12)
        tokens = {name: c.welcome["token"] for name, c in
                  (("alice", alice), ("bob", bob), ("eve", eve))}
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        for c in (alice, bob, eve):
            await c.aclose()

        proc = await start_process(db, port, log)
        alice = await TestClient.welcomed(port, "alice", tokens["alice"])
        bob = await TestClient.welcomed(port, "bob", tokens["bob"])
        eve = await TestClient.welcomed(port, "eve", tokens["eve"])
        assert alice.welcome["resumed"] and bob.welcome["resumed"]
        after = await alice.snapshot(mid)
        assert after["seq"] == before[0]["seq"]
        assert after["view"] == before[0]["view"] and after["legal"] == before[0]["legal"]
        assert after["commitment"] == before[0]["commitment"]
        assert (await eve.snapshot(mid))["seat"] is None
        final = await _play({0: alice, 1: bob}, mid, 10000,
                            {0: after, 1: await bob.snapshot(mid)})
        assert final[0]["status"] == "finished" and final[0]["reveal"]
        assert (await eve.snapshot(mid, lambda s: s["status"] == "finished"))["result"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        kill_if_running(proc)

    text = log.read_text()
    assert "restored at seq" in text and "finished after seq" in text
    hand = before[0]["view"]["hand"]
    assert "'cards'" not in text and not any(f"'{card}'" in text for card in hand)

    capsys.readouterr()
    assert cli_main(["replay", mid, "--db", str(db), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert len(record["moves"]) == final[0]["seq"] and record["verified"] is True
    assert record["reveal"] == final[0]["reveal"]
    assert all(m["view"]["hand"] is None for m in record["moves"])
    assert cli_main(["replay", mid, "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "matches the commitment" in text and f"match {mid}" in text


async def test_sigterm_shuts_down_cleanly(tmp_path: Path) -> None:
    db, log, port = tmp_path / "term.db", tmp_path / "server.log", free_port()
    proc = await start_process(db, port, log)
    try:
        alice = await TestClient.welcomed(port, "alice")
        mid = (await alice.expect_ok("create", game="war"))["match"]
        os.kill(proc.pid, signal.SIGTERM)
        bye = await alice.wait_push(lambda m: m["type"] == "bye")
        assert bye["reason"] == "server_shutdown"
        try:
            with trio.fail_after(5):
                while True:
                    await alice.next_message()
        except Closed:
            pass
        assert proc.wait(10) == 0
    finally:
        kill_if_running(proc)
    text = log.read_text()
    for event in ("starting", "listening on 127.0.0.1:", "connection from", f"match {mid} created",
                  "received SIGTERM", "stopped"):
        assert event in text, (event, text)
    # the waiting match is still in the store
    from server.store import Store
    store = Store(db)
    assert store.load_match(mid).status == "waiting"
    store.close()


def test_startup_failures_are_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "server.cli", "--host", "127.0.0.1",
                               "--port", str(port), "--db", str(tmp_path / "x.db")],
                              cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot listen" in done.stderr
    assert "Traceback" not in done.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = subprocess.run([sys.executable, "-m", "server.cli", "--db",
                           str(blocker / "sub" / "x.db")],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot open store" in done.stderr
    assert "Traceback" not in done.stderr


async def test_sigkill_mid_game_loses_no_acknowledged_intent(tmp_path: Path) -> None:
    db, log, port = tmp_path / "flurry.db", tmp_path / "server.log", free_port()
    proc = await start_process(db, port, log)
    try:
        alice = await TestClient.welcomed(port, "alice")
        # Data Structures lasts hundreds of intents (War may end by all_cards too soon)
        mid = (await alice.expect_ok("create", game="datastructures", bot="random",
                                     options={"cap": 500}))["match"]
        acked = 0
        snap = await alice.snapshot(mid, lambda s: s["status"] == "active")

        going = trio.Event()

        async def kill_soon() -> None:
            await going.wait()  # well into the game, long before its end
            proc.send_signal(signal.SIGKILL)  # no warning, intents in flight

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(kill_soon)
                with trio.fail_after(10):
                    while True:  # flat out until the connection dies
                        if snap["legal"]:
                            reply = await alice.request("intent", match=mid, seq=snap["seq"],
                                                        intent=snap["legal"][0])
                            if reply["type"] == "ok":
                                acked = max(acked, reply["seq"])
                                if acked >= 40:
                                    going.set()
                        snap = await alice.snapshot(mid, lambda s, n=snap["seq"]: s["seq"] > n)
        except* (Closed, trio.BrokenResourceError):
            pass
        proc.wait(10)
        await alice.aclose()
        assert acked > 10
        proc = await start_process(db, port, log)
        again = await TestClient.welcomed(port, "alice", alice.welcome["token"])
        after = await again.snapshot(mid)
        assert after["seq"] >= acked and after["status"] == "active"
        await again.expect_ok("resign", match=mid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        kill_if_running(proc)
