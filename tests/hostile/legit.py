"""A legitimate match played next to an attack: it must finish normally.

:class:`LegitMatch` seats two well-behaved clients in a Data Structures match
and plays it to the end at a steady pace (a short pause before each intent, so
that the attack has time to run while it plays), and never faster than the
request rate the server announced in ``welcome.limits`` (an honest client keeps
to it: a token bucket a little under the announced ``rate`` and ``burst``, per
connection). It records anything abnormal:
an error reply, an unexpected ``bye`` or error push, a seq that does not advance
by one, a push about another match, or a connection that closed.
"""

from __future__ import annotations

import random
from typing import Any

import trio

from server.app import Server
from server.ratelimit import TokenBucket
from tests.server.helpers import Closed, TestClient

#: Data Structures with a short turn cap, so a whole match takes a second or two.
OPTIONS = {"cap": 12}


class LegitMatch:
    """Two honest seats playing one match; see the module docstring."""

    def __init__(self, server: Server, pause: float = 0.002, seed: int = 7) -> None:
        self.server = server
        self.pause = pause
        self.rng = random.Random(seed)
        self.match: str | None = None
        self.clients: list[TestClient] = []
        self.buckets: list[TokenBucket] = []
        self.problems: list[str] = []
        self.intents = 0
        self.final: dict[str, Any] | None = None
        self.started = trio.Event()
        self.done = trio.Event()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Seat both clients, report started, play to the end (bounded: 20 s)."""
        assert self.server.port is not None
        try:
            for name in ("legit-a", "legit-b"):
                client = await TestClient.connect(self.server.port)
                welcome = await client.hello(name)
                assert welcome["type"] == "welcome", welcome
                self.clients.append(client)
                limits = welcome["limits"]
                # a little under the announced figures: requests sent evenly may
                # still arrive bunched (the server's bucket counts arrivals)
                self.buckets.append(TokenBucket(0.9 * limits["rate"],
                                                max(1, limits["burst"] - 2),
                                                trio.current_time()))
            a, b = self.clients
            self.match = (await a.expect_ok("create", game="datastructures", options=OPTIONS,
                                            turn_timer=0))["match"]
            await b.expect_ok("join", match=self.match)
            task_status.started(self)
            with trio.fail_after(20):
                await self._play()
        except Closed as exc:
            self.problems.append(f"connection closed: {exc.last}")
        except trio.TooSlowError:
            self.problems.append("the match did not finish within 20 s")
        finally:
            for client in self.clients:
                for push in client.seen:
                    self._check_push(push)
                await client.aclose()
            self.done.set()

    def _check_push(self, push: dict[str, Any]) -> None:
        if push["type"] in ("bye", "error"):
            self.problems.append(f"unexpected push {push}")
        elif push.get("match") not in (None, self.match):
            self.problems.append(f"push about another match {push}")

    async def _play(self) -> None:
        assert self.match is not None
        snaps = [await c.snapshot(self.match, lambda m: m["status"] == "active")
                 for c in self.clients]
        seq = snaps[0]["seq"]
        for _ in range(5000):
            if snaps[0]["status"] == "finished":
                self.final = snaps[0]
                return
            seat = next((i for i in (0, 1) if snaps[i]["legal"]), None)
            if seat is None:
                self.problems.append(f"nobody can act at seq {seq}")
                return
            await trio.sleep(self.pause)
            await self._keep_to_the_rate(seat)
            intent = self.rng.choice(snaps[seat]["legal"])
            reply = await self.clients[seat].request("intent", match=self.match, seq=seq,
                                                     intent=intent)
            if reply["type"] != "ok" or reply.get("seq") != seq + 1:
                self.problems.append(f"intent at seq {seq} answered {reply}")
                return
            self.intents += 1
            seq += 1
            snaps = [await c.snapshot(self.match, lambda m, n=seq: m["seq"] >= n)
                     for c in self.clients]
            if any(s["seq"] != seq for s in snaps):
                self.problems.append(f"snapshots skipped a seq: {[s['seq'] for s in snaps]}")
                return
        self.problems.append("no end after 5000 intents")

    async def _keep_to_the_rate(self, seat: int) -> None:
        """Wait until the seat's connection may send one more request (the create and
        join before play were within the burst)."""
        bucket = self.buckets[seat]
        while not bucket.allow(trio.current_time()):
            await trio.sleep((1.0 - bucket.tokens) / bucket.rate)

    def assert_finished_normally(self) -> None:
        """Raises AssertionError unless the match ended by its rules with nothing odd."""
        assert not self.problems, self.problems
        assert self.final is not None and self.final["status"] == "finished", self.final
        assert self.final["result"]["reason"] in ("three_arrays", "cap", "stuck"), self.final
        assert self.intents > 0
