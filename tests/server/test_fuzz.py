"""Random request sequences (seeded) never crash the server, never log an error,
and the server keeps answering everyone."""

from __future__ import annotations

import logging
import random
from typing import Any

import trio
import trio.testing

from tests.server.helpers import Closed, TestClient, frame

TYPES = ["games", "matches", "create", "join", "watch", "leave", "queue", "unqueue", "intent",
         "resign", "auto_flip", "chat", "ping", "pong", "hello", "bogus"]
SCALARS: list[Any] = [None, True, False, -1, 0, 1, 2, 3, "", "x", "flip", "hand", [], {}]


def _field(rng: random.Random, name: str, mid: str) -> Any:
    choices: dict[str, list[Any]] = {
        "game": ["war", "war", "datastructures", "chess", 3],
        "match": [mid, mid, mid, "m0", None],
        "seq": [0, 0, 1, 2, 3, -1],
        "seat": [0, 1, 1, 2],
        "on": [True, False, 1],
        "text": ["hi", "hi", "x" * 201, "\x00"],
        "bot": ["random", "greedy", "nobody"],
        "turn_timer": [0, 5, 5, 5000],
        "abandon": ["forfeit", "bot", "x"],
        "status": ["waiting", "active", "finished", "x"],
    }
    if name == "options":
        return {rng.choice(["cap", "return", "x"]): rng.choice(SCALARS)
                for _ in range(rng.randrange(3))}
    if name == "intent":
        return rng.choice([{"type": "flip"}, {"type": "end_phase"}, {"type": "end_turn"},
                           {"type": "play", "src": "hand", "index": rng.randrange(-1, 6),
                            "array": rng.randrange(-1, 4)},
                           {rng.choice(["type", "index"]): rng.choice(SCALARS)}])
    return rng.choice(choices[name])


REQUIRED = {"create": ["game"], "join": ["match"], "watch": ["match"], "leave": ["match"],
            "queue": ["game"], "intent": ["match", "seq", "intent"], "resign": ["match"],
            "auto_flip": ["match", "on"], "chat": ["match", "text"]}
FIELD_NAMES = ["game", "match", "seq", "seat", "on", "text", "bot", "turn_timer", "abandon",
               "status", "options", "intent"]


async def test_random_requests_never_crash(start_server, caplog) -> None:
    # one address opens every session here: the per-address quotas are not under test
    server = await start_server(max_waiting_per_address=1000, max_active_per_address=1000,
                                creates_per_minute_per_address=10000, chat_burst=1000,
                                handshake_burst=1000)
    rng = random.Random(20261130)
    codes: set[str] = set()
    closed = 0
    for _ in range(60):
        ours, theirs = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_stream, theirs, "fuzz")
            client = TestClient(ours)
            assert (await client.hello("fuzz"))["type"] == "welcome"
            mid = (await client.expect_ok("create", game=rng.choice(["war", "datastructures"])))
            mid = mid["match"]
            for _ in range(rng.randrange(1, 15)):
                mtype = rng.choice(TYPES)
                msg: dict[str, Any] = {"type": mtype, "id": rng.randrange(10**4, 10**5)}
                for name in REQUIRED.get(mtype, ()):  # mostly well-formed, sometimes not
                    if rng.random() < 0.9:
                        msg[name] = _field(rng, name, mid)
                for name in rng.sample(FIELD_NAMES, rng.randrange(3)):
                    msg[name] = _field(rng, name, mid)
                await client.send_raw(frame(msg))
            try:
                await client.expect_ok("games")
            except Closed:
                closed += 1  # a fatal protocol error closes the connection; that is allowed
            codes |= {r.get("code", "ok") for r in client.replies.values()}
            codes |= {m["code"] for m in client.seen if m["type"] == "error"}
            await client.aclose()
    assert closed < 10 and len(codes) >= 8, (closed, sorted(codes))
    probe = await TestClient.connect(server.port)
    assert (await probe.hello("probe"))["type"] == "welcome"
    await probe.expect_ok("matches")
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not failures, failures[0].getMessage()
