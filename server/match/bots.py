"""Server bots: engine strategies (:mod:`engine.bots`) thinking in worker threads.

The match core says when a bot seat has something to decide
(:class:`~server.match.effects.BotTurn`); a :class:`BotDriver` per seat thinks
on the newest offer in a worker thread (bounded by a shared
``trio.CapacityLimiter``) and hands its choice back to the match as a
:class:`~server.match.commands.BotIntent`, which the core checks like any
intent. This module is the one place the server loads strategies.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from engine.bots import Strategy, get_strategy, timed
from engine.bots import strategy_names as _strategy_names
from server.match.commands import BotIntent
from server.match.effects import BotTurn

log = logging.getLogger("cardserver.match")


def strategy_names() -> list[str]:
    """The strategies a server bot may play (``create``'s ``bot`` field)."""
    return _strategy_names()


def new_strategy(name: str, budget: float) -> Strategy:
    """A fresh server-bot strategy, seeded from the OS generator, with a fresh
    ``budget``-second budget on this process's ``perf_counter`` for every decision.

    Raises:
        ValueError: unknown strategy name, or a budget that is not positive.
    """
    return timed(get_strategy(name, seed=secrets.randbits(64)), budget, clock=time.perf_counter)


class BotClosed(Exception):
    """The match no longer takes the bot's choices."""


class BotDriver:
    """Plays one seat: thinks in a worker thread on the newest turn it was offered
    and submits its choice (older offers are dropped unseen)."""

    def __init__(self, match_id: str, game: str, seat: int, strategy: Strategy,
                 limiter: trio.CapacityLimiter,
                 submit: Callable[[BotIntent], Awaitable[None]]) -> None:
        self.match_id = match_id
        self.game = game
        self.seat = seat
        self.strategy = strategy
        self.limiter = limiter
        self.submit = submit
        self._latest: BotTurn | None = None
        self._wake = trio.Event()
        self._scope = trio.CancelScope()

    def offer(self, turn: BotTurn) -> None:
        """The seat's newest turn (an empty ``legal``: nothing to do for now)."""
        self._latest = turn
        self._wake.set()

    def stop(self) -> None:
        """Stop thinking and playing (the match is over)."""
        self._scope.cancel()

    async def run(self) -> None:
        """Play until stopped or the match stops taking choices."""
        with self._scope:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                turn = self._latest
                assert turn is not None
                if not turn.legal:
                    continue
                intent = await trio.to_thread.run_sync(
                    self.choose, turn.view, turn.legal, limiter=self.limiter,
                    abandon_on_cancel=True)
                if turn.pace > 0:
                    await trio.sleep(turn.pace)
                try:
                    await self.submit(BotIntent(self.seat, turn.seq, intent))
                except BotClosed:
                    return

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The strategy's choice; the first legal intent if it fails or cheats."""
        try:
            choice = self.strategy.choose(self.game, self.seat, view, legal)
        except Exception:
            log.exception("match %s: bot for seat %d failed; playing its first legal intent",
                          self.match_id, self.seat)
            return legal[0]
        return choice if choice in legal else legal[0]
