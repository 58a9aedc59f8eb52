"""The bot SDK against the real server over loopback TCP."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

from client.bots.sdk import BotError, Summary, parse_address, play, run_bot
from client.session import tcp_connector
from engine.bots import get_strategy
from tests.modules import load_module

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "minimal_bot.py"


def _load_example():
    return load_module(EXAMPLE)


def test_example_is_minimal() -> None:
    assert len(EXAMPLE.read_text().splitlines()) < 20


async def test_example_bot_plays_a_whole_match_against_a_server_bot(start_server) -> None:
    server = await start_server()
    example = _load_example()
    with trio.fail_after(20):
        summary = await play(example.first_legal, "127.0.0.1", server.port,
                             game="datastructures", mode="create", server_bot="greedy",
                             options={"cap": 60})
    [result] = summary.results
    assert result.game == "datastructures" and result.moves > 0 and result.our_moves > 0
    assert result.reason in ("three_arrays", "cap", "stuck")
    assert summary.wins + summary.losses + summary.draws == 1


async def test_example_script_runs_against_the_server(start_server) -> None:
    """The example file as a user runs it, paired by matchmaking with an SDK bot."""
    server = await start_server()
    address = f"127.0.0.1:{server.port}"
    done: dict[str, object] = {}

    async def opponent() -> None:
        done["summary"] = await play(get_strategy("greedy", seed=1), "127.0.0.1", server.port,
                                     game="war", name="opponent")

    with trio.fail_after(25):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(opponent)
            proc = await trio.run_process([sys.executable, str(EXAMPLE), address, "war"],
                                          capture_stdout=True, capture_stderr=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "1 match:" in proc.stdout.decode()
    summary = done["summary"]
    assert isinstance(summary, Summary) and len(summary.results) == 1


async def test_two_strategy_bots_pair_by_queue_and_agree(start_server) -> None:
    server = await start_server()
    out: dict[str, Summary] = {}

    async def run(name: str, strategy: str) -> None:
        out[name] = await play(get_strategy(strategy, seed=3), "127.0.0.1", server.port,
                               game="datastructures", name=name, matches=2,
                               options={"cap": 40})

    with trio.fail_after(25):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, "greedy", "greedy")
            nursery.start_soon(run, "random", "random")
    a, b = out["greedy"], out["random"]
    assert len(a.results) == len(b.results) == 2
    for ra, rb in zip(a.results, b.results, strict=True):
        assert ra.match == rb.match and {ra.seat, rb.seat} == {0, 1}
        assert ra.winner == rb.winner and ra.moves == rb.moves
        assert ra.our_moves + rb.our_moves == ra.moves
    assert a.wins == b.losses and a.draws == b.draws


async def test_war_bots_flipping_at_once_both_count(start_server) -> None:
    """In War both seats flip at once; under the seq rule both flips count."""
    server = await start_server()
    out: list[Summary] = []

    async def run(name: str) -> None:
        out.append(await play(lambda view, legal: legal[0], "127.0.0.1", server.port,
                              game="war", name=name, options={"cap": 300}))

    with trio.fail_after(25):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, "left")
            nursery.start_soon(run, "right")
    assert len(out) == 2
    left, right = out[0].results[0], out[1].results[0]
    assert left.match == right.match and left.moves == right.moves
    # (a dropped link would leave an intent "maybe applied", uncounted: name that case)
    assert left.reconnects == right.reconnects == 0
    # Every flip the journal holds was one bot's accepted intent, counted by that bot. The
    # two counts need not be equal: in a war a seat out of cards does not flip (W4).
    journal = server.store.journal(left.match)
    assert len(journal) == left.moves
    assert all(e.kind == "intent" and e.by == "seat" for e in journal)   # none by a timer
    flips = [sum(1 for e in journal if e.seat == seat) for seat in (0, 1)]
    assert [r.our_moves for r in sorted((left, right), key=lambda r: r.seat)] == flips


async def test_bot_reconnects_with_its_token_and_finishes(start_server) -> None:
    server = await start_server()
    streams: list[trio.SocketStream] = []
    tcp = tcp_connector("127.0.0.1", server.port)

    async def connect() -> trio.abc.Stream:
        stream = await tcp()
        streams.append(stream)
        return stream

    moves = 0
    events: list[str] = []

    def counting(view, legal):
        nonlocal moves
        moves += 1
        return legal[0]

    async def cut_twice() -> None:
        for target in (5, 40):
            while moves < target:
                await trio.sleep(0.001)
            await streams[-1].aclose()   # drop the live connection under the bot

    with trio.fail_after(25):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cut_twice)
            summary = await play(counting, "127.0.0.1", server.port, game="datastructures",
                                 mode="create", server_bot="random", options={"cap": 40},
                                 session_options={"connect": connect}, on_event=events.append)
            nursery.cancel_scope.cancel()
    [result] = summary.results
    assert result.reconnects == 2 and len(streams) == 3
    assert events.count("reconnected") == 2
    assert events[-1].startswith(f"match {result.match} over")
    assert result.reason in ("three_arrays", "cap", "stuck")


async def test_illegal_choice_is_a_bot_error(start_server) -> None:
    server = await start_server()
    with trio.fail_after(10), pytest.raises(BotError, match="not among the legal"):
        await play(lambda view, legal: {"type": "cheat"}, "127.0.0.1", server.port,
                   game="war", mode="create", server_bot="random")


def test_parse_address() -> None:
    assert parse_address("example.org:7001") == ("example.org", 7001)
    assert parse_address("localhost") == ("localhost", 7000)
    assert parse_address("[::1]:9") == ("::1", 9)
    with pytest.raises(ValueError):
        parse_address("host:http")


def test_run_bot_speaks_tls_for_a_tls_address_and_refuses_a_ca_without_it() -> None:
    with pytest.raises(OSError):  # it tries TLS (tests/server/test_tls.py plays over it)
        run_bot(lambda view, legal: legal[0], "tls://127.0.0.1:1", game="war")
    with pytest.raises(ValueError, match="tls://"):
        run_bot(lambda view, legal: legal[0], "127.0.0.1:1", game="war", ca="ca.pem")


async def test_a_drop_while_queued_queues_again(start_server) -> None:
    """The server forgets a queued session that disconnects; the SDK queues again."""
    server = await start_server()
    streams: list[trio.SocketStream] = []
    tcp = tcp_connector("127.0.0.1", server.port)

    async def connect() -> trio.abc.Stream:
        stream = await tcp()
        streams.append(stream)
        return stream

    out: dict[str, Summary] = {}
    events: list[str] = []

    async def waiter() -> None:
        out["waiter"] = await play(lambda view, legal: legal[0], "127.0.0.1", server.port,
                                   game="war", name="waiter", options={"cap": 50},
                                   session_options={"connect": connect},
                                   on_event=events.append)

    async def late() -> None:
        out["late"] = await play(lambda view, legal: legal[-1], "127.0.0.1", server.port,
                                 game="war", name="late", options={"cap": 50})

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            while not events:
                await trio.sleep(0.01)                     # the queue request was answered
            assert events == ["queued for war: waiting for an opponent"]
            await streams[-1].aclose()                     # drop while waiting in the queue
            while server.lobby.queues.get("war"):
                await trio.sleep(0.01)                     # the server unqueued it
            while len(streams) < 2 or not server.lobby.queues.get("war"):
                await trio.sleep(0.01)                     # reconnected and queued again
            nursery.start_soon(late)
    assert out["waiter"].results[0].match == out["late"].results[0].match
    assert "queued for war again after reconnecting" in events


async def test_a_bot_over_the_request_rate_waits_as_told_and_finishes(
        start_server, caplog: pytest.LogCaptureFixture) -> None:
    """A bot that acts at once on every snapshot, on a server allowing 20 requests a
    second in bursts of 3: its refused intents say when to come back (retry_after),
    it waits that long, and the match ends like any other."""
    server = await start_server(rate=20.0, burst=3)
    caplog.set_level(logging.INFO, logger="client.bots.sdk")
    with trio.fail_after(25):
        summary = await play(lambda view, legal: legal[0], "127.0.0.1", server.port,
                             game="datastructures", mode="create", server_bot="random",
                             options={"cap": 30})
    [result] = summary.results
    assert result.reason in ("cap", "three_arrays", "stuck"), result
    journal = server.store.journal(result.match)
    assert sum(1 for e in journal if e.seat == result.seat and e.by == "seat") \
        == result.our_moves > 20   # more than one second's worth at 20 a second
    waits = [r.getMessage() for r in caplog.records if "rate_limited" in r.getMessage()]
    assert waits, "the bot was never refused: the test does not test the pacing"
