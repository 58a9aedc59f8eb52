"""Server bots: engine strategies (:mod:`engine.bots`) thinking in worker processes.

The match core says when a bot seat has something to decide
(:class:`~server.match.effects.BotTurn`); a :class:`BotDriver` per seat hands
the newest offer to the server's one :class:`BotPool` and submits the choice to
the match as a :class:`~server.match.commands.BotIntent`, which the core checks
like any intent.

The pool bounds the server's whole bot work: ``bot_workers`` processes (each
thinks on one move at a time, at a lower CPU priority, outside the server's
interpreter lock), at most ``bot_queue`` moves waiting for one, and a deadline
per move (``bot_deadline`` seconds from the offer, waiting included). A move
that cannot be queued, waits past its deadline, or is still being thought
about at it gets the seat's default intent (the one a turn timeout plays; else
the first legal one). A worker's start-up counts against no move; a worker
still thinking ``bot_deadline`` seconds after a move's deadline is killed and
replaced. This module is the one place the server loads strategies.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import secrets
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import trio

from engine.bots import describe as _describe
from engine.bots import get_strategy, timed
from engine.bots import strategy_names as _strategy_names
from server import metrics
from server.match.commands import BotIntent
from server.match.effects import BotTurn

log = logging.getLogger("cardserver.bots")

#: Seconds of a move's deadline kept back from the strategy's own budget, for the
#: round trip to the worker.
DEADLINE_MARGIN = 0.05
#: Shortest budget a strategy is given (a move already close to its deadline).
MIN_BUDGET = 0.005
#: Seconds between two log lines about moves that got the default intent.
REPORT_EVERY = 10.0


def strategy_names() -> list[str]:
    """The strategies a server bot may play (``create``'s ``bot`` field)."""
    return _strategy_names()


def strategy_docs() -> dict[str, str]:
    """One line about each strategy a server bot may play, by name, weakest first
    (``games`` lists them as ``bots``)."""
    return _describe()


def think(game: str, seat: int, strategy: str, seed: int, view: dict[str, Any],
          legal: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    """One decision of ``strategy`` (seeded with ``seed``) within ``budget`` seconds
    of this process's ``perf_counter``; the first legal intent if the strategy fails
    or returns something not in ``legal``. Runs in a worker process."""
    try:
        choice = timed(get_strategy(strategy, seed=seed), budget,
                       clock=time.perf_counter).choose(game, seat, view, legal)
    except Exception:
        log.exception("bot %s for seat %d failed; playing its first legal intent",
                      strategy, seat)
        return legal[0]
    return choice if choice in legal else legal[0]


def _worker_main(conn: Connection, nice: int) -> None:
    """A worker process: answer ``(game, seat, strategy, seed, view, legal, budget)``
    with :func:`think`'s intent until the pipe closes or ``None`` comes. A server that
    has gone (its end of the pipe closed, even before ``ready``) ends it quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops its workers itself
    if nice:
        os.nice(nice)
    for name in _strategy_names():  # import every strategy before the first move
        get_strategy(name, seed=0)
    try:
        conn.send("ready")
        while (job := conn.recv()) is not None:
            conn.send(think(*job))
    except (EOFError, OSError):   # BrokenPipeError included
        return


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, nice: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, nice), daemon=True,
                                name="cardserver-bot")
        self.proc.start()
        child.close()

    async def ready(self) -> None:
        """Wait until the process has started and imported the strategies.

        Raises:
            EOFError, OSError: the worker died.
        """
        await self.answer()

    async def ask(self, job: tuple[Any, ...], deadline: float) -> dict[str, Any]:
        """Send ``job``; the worker's answer.

        Raises:
            trio.TooSlowError: no answer by ``deadline`` (trio time; the job is still
                being thought about: wait for :meth:`answer` or :meth:`kill`).
            EOFError, OSError: the worker died.
        """
        self.conn.send(job)
        with trio.fail_at(deadline):
            return await self.answer()

    async def answer(self) -> Any:
        """The next message from the worker.

        Raises:
            EOFError, OSError: the worker died.
        """
        await trio.lowlevel.wait_readable(self.conn.fileno())
        return self.conn.recv()

    def kill(self) -> None:
        """End the process at once (idempotent)."""
        self.conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(1)

    def stop(self) -> None:
        """Ask the process to end; kill it if it does not within 0.2 s."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(0.2)
        self.kill()


@dataclass(eq=False, slots=True)
class _Move:
    """One queued decision and where its answer goes."""

    job: tuple[Any, ...]
    deadline: float
    done: trio.Event = field(default_factory=trio.Event)
    intent: dict[str, Any] | None = None
    abandoned: bool = False


@dataclass(slots=True)
class BotStats:
    """What the pool did since it started."""

    thought: int = 0      # moves a worker answered in time
    refused: int = 0      # the queue was full: default intent at once
    expired: int = 0      # waited in the queue past the deadline
    late: int = 0         # the worker was still thinking at the deadline
    killed: int = 0       # ... and still after as long again: replaced
    started: int = 0      # worker processes started (replacements included)


class BotPool:
    """Worker processes that think for every server bot (see the module's text).

    Workers start when the first move needs one; :meth:`run` serves the queue and
    stops every worker when it ends.
    """

    def __init__(self, workers: int, queue: int, budget: float, deadline: float,
                 nice: int = 0) -> None:
        self.workers = workers
        self.budget = budget
        self.deadline = deadline
        self.nice = nice
        self.stats = BotStats()
        self._send, self._recv = trio.open_memory_channel[_Move](queue)
        self._reported = (0.0, 0)

    async def choose(self, game: str, seat: int, strategy: str, view: dict[str, Any],
                     legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The strategy's choice, or None when it cannot be had within the move's
        deadline (queue full, waited too long, thought too long)."""
        now = trio.current_time()
        move = _Move((game, seat, strategy, secrets.randbits(64), view, legal, self.budget),
                     now + self.deadline)
        try:
            self._send.send_nowait(move)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.stats.refused += 1
            self._report()
            metrics.bot_move(now, False)
            return None
        with trio.move_on_at(move.deadline):
            await move.done.wait()
        if not move.done.is_set():
            move.abandoned = True
        metrics.bot_move(now, move.intent is not None)
        return move.intent

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve queued moves with ``workers`` processes until cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                for _ in range(self.workers):
                    nursery.start_soon(self._slot)
                task_status.started()
        finally:
            self._report(final=True)

    async def _slot(self) -> None:
        worker: _Worker | None = None
        try:
            async for move in self._recv:
                if move.abandoned or trio.current_time() >= move.deadline:
                    self.stats.expired += 1
                    move.done.set()
                    self._report()
                    continue
                if worker is None:
                    worker = await self._start_worker(move)
                    if worker is None:
                        continue
                left = move.deadline - trio.current_time() - DEADLINE_MARGIN
                job = move.job[:-1] + (max(MIN_BUDGET, min(self.budget, left)),)
                try:
                    move.intent = await worker.ask(job, move.deadline)
                    self.stats.thought += 1
                except trio.TooSlowError:
                    self.stats.late += 1
                    move.done.set()  # the seat plays its default intent now
                    self._report()
                    worker = await self._finish_late(worker)
                except (EOFError, OSError):
                    log.warning("bot worker %s died; starting another", worker.proc.pid)
                    worker.kill()
                    worker = None
                move.done.set()
        finally:
            if worker is not None:
                worker.stop()

    async def _start_worker(self, move: _Move) -> _Worker | None:
        """A new worker process, once it is ready (its start-up counts against no
        move's think time); None if it died starting (``move`` is then answered)."""
        worker = _Worker(self.nice)
        self.stats.started += 1
        try:
            await worker.ready()
        except (EOFError, OSError):
            log.error("a bot worker process failed to start")
            worker.kill()
            move.done.set()
            return None
        return worker

    async def _finish_late(self, worker: _Worker) -> _Worker | None:
        """A worker still thinking at a move's deadline: let it finish within another
        ``deadline`` seconds (its answer is dropped), else kill it (None)."""
        with trio.move_on_after(max(1.0, self.deadline)):
            try:
                await worker.answer()
                return worker
            except (EOFError, OSError):
                pass
        log.warning("bot worker %s overran its move's deadline; replaced", worker.proc.pid)
        self.stats.killed += 1
        worker.kill()
        return None

    def _report(self, final: bool = False) -> None:
        """Log how many moves got the default intent: at most every REPORT_EVERY s,
        and once more when the pool stops (``final``)."""
        stats = self.stats
        missed = stats.refused + stats.expired + stats.late
        when, before = self._reported
        now = trio.current_time()
        if missed > before and (final or now - when >= REPORT_EVERY):
            self._reported = (now, missed)
            log.warning("server bots overloaded: %d move(s) got the default intent so far "
                        "(%d queue full, %d waited past the deadline, %d thought past it), "
                        "%d thought in time", missed, stats.refused, stats.expired,
                        stats.late, stats.thought)


class BotClosed(Exception):
    """The match no longer takes the bot's choices."""


class BotDriver:
    """Plays one seat: asks the pool about the newest turn it was offered and
    submits the choice (older offers are dropped unseen); a move the pool could not
    think about in time gets the seat's default intent."""

    def __init__(self, match_id: str, game: str, seat: int, strategy: str, pool: BotPool,
                 submit: Callable[[BotIntent], Awaitable[None]]) -> None:
        self.match_id = match_id
        self.game = game
        self.seat = seat
        self.strategy = strategy
        self.pool = pool
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
                intent = await self.pool.choose(self.game, self.seat, self.strategy,
                                                turn.view, turn.legal)
                if intent is None:
                    intent = turn.default if turn.default in turn.legal else turn.legal[0]
                if turn.pace > 0:
                    await trio.sleep(turn.pace)
                try:
                    await self.submit(BotIntent(self.seat, turn.seq, intent))
                except BotClosed:
                    return
