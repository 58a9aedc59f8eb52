"""Group commit: the journal rows of every command handled in one scheduler pass in
one SQLite transaction, each command's messages sent only once it is committed.

A connection's reader hands a command straight to its match's core when nothing
else of that match is queued, half done or uncommitted
(:meth:`server.match.task.Match.submit`): no hop to the match's task. Its effects
come here and wait in :attr:`GroupCommit.pending`; the committer task, woken by
the first of them, runs in the next scheduler pass, after every reader woken in
this one: it commits everything pending in one transaction, then carries out each
command's effects in order: the requester's reply (written to its socket at
once), then the rest of the broadcast, built only now. Until its command is
committed a match takes no other command straight from a reader, and everything
else that reaches a core (the match task's inbox, timers, detach) first calls
:meth:`GroupCommit.flush`. So the rest of a broadcast shows the state that was
committed, rows reach the journal in seq order, and replies leave in the order
the commands were handled.

A failed group transaction is retried command by command (one transaction each, as
without grouping): only a command whose own rows fail is rolled back and answered
``internal_error``.

A command that reaches a match from a reader while the match's previous one
waits here (both seats of a War battle flip at once; a flat-out client answered
``stale``) waits here too (:meth:`GroupCommit.hold`), in arrival order, instead
of going to the match task's inbox: once the batch is committed and carried out,
the committer runs it through its core (in :meth:`GroupCommit.run`, in the same
pass) and it joins the next batch, its reply written straight to the socket. So a
race costs no wake-up of the match task and none of the connection's writer. A
match holds at most ``inbox_size`` such commands (then the inbox takes them, and
the reader waits on it), and its task, before it runs anything through the core,
first runs what waits here for it (:meth:`GroupCommit.take_held`), so the
commands keep their order.

When the last few batches held one command each (nothing else arrives in the
same pass, as in a ping-pong), commands commit at once in the reader's task,
requester's reply first, then the rest of the broadcast, all before returning
(nothing interleaves); every eighth goes through the committer again, and a batch
of more than one brings grouping back. The poller (server/poller.py), where
the requests of every idle plain socket arrive, says how many sockets each of
its passes serves (:meth:`GroupCommit.poller_pass`): several end the one-by-one
mode at once, and the first command of a pass that serves one socket commits at
once without counting towards the probe, as nothing else can come with it from
the poller (so a ping-pong makes no committer pass at all). Without a running
committer (:meth:`GroupCommit.run`) every command commits at once.

In cluster mode (docs/cluster.md) the rows go to the match journals in Redis
instead, which is a round trip away: :class:`AwaitedCommit` has the same
``submit`` and carries out committed effects the same way, but never commits in
the reader's task. Its committer sends one pass's writes of every match in one
pipelined round trip (one fenced script per match, :mod:`server.cluster.journal`)
and carries out nothing before Redis has answered; a match whose write was
fenced or failed has its command rolled back as a failed SQLite commit is, and
nothing of it is acknowledged. The lobby chooses one of the two at start; the
SQLite path is the same code as without a cluster.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from server import metrics
from server.match.effects import Effects, Write
from server.session import Session
from server.store import Store

log = logging.getLogger("cardserver.match")

#: Batches of one command in a row after which commands commit at once, in the
#: reader's task (a ping-pong: the committer's pass would only add latency) ...
ALONE_AFTER = 3
#: ... except every PROBE_EVERY-th, which goes through the committer again to see
#: whether the server has become busy (a batch of more than one: grouping again).
PROBE_EVERY = 8


class Match(Protocol):
    """What the group commit needs of a match (:class:`server.match.task.Match`)."""

    id: str
    #: a command of this match waits here: it takes no other one from a reader
    uncommitted: bool
    #: when its core began the command (perf_counter)
    began: float
    #: its commands held in the group commit (:meth:`GroupCommit.hold`)
    held: int

    def run_held(self, session: Session | None, command: Any) -> bool:
        """Run a held command now (nothing of this match is uncommitted); False
        when it must wait longer (the match's task is busy with it)."""

    def store_write(self, store: Store, write: Write) -> None:
        """One write, inside the caller's transaction."""

    def commit_writes(self, writes: list[Write], session: Session | None,
                      command: Any) -> bool:
        """The writes one transaction each; False (rolled back, requester told) on
        a failure."""

    def carry_out(self, fx: Effects) -> None:
        """Send the messages of committed effects, offer bots, arm timers: what
        :meth:`deliver` and then :meth:`settle` do."""

    def deliver(self, fx: Effects) -> None:
        """The membership changes and the messages of committed effects."""

    def settle(self, fx: Effects) -> None:
        """The rest of committed effects (bots, timers), which sends nothing."""

    def journal_batch(self, fx: Effects) -> Any:
        """Cluster mode: ``fx``'s writes as one fenced script's batch
        (:class:`server.cluster.journal.MatchBatch`)."""

    def committed(self, fx: Effects) -> None:
        """Cluster mode: ``fx``'s writes are in Redis."""

    def commit_refused(self, item: Pending) -> bool:
        """Cluster mode: ``item``'s writes were fenced or failed (``item.outcome``):
        roll its command back and tell its requester; True when its effects are
        to be carried out all the same (only timers failed to store)."""


class Journal(Protocol):
    """Where :class:`AwaitedCommit` writes (:class:`server.cluster.journal.RedisJournal`)."""

    async def commit(self, batches: list[Any]) -> None:
        """Write every batch in one round trip; set each one's ``outcome``."""


@dataclass(slots=True)
class Pending:
    """One handled command waiting for its batch's commit."""

    match: Match
    session: Session | None
    command: Any
    fx: Effects
    #: cluster mode: the journal's answer (``ok``, ``fenced``, ``unavailable``, ...)
    outcome: str = ""


class GroupCommit:
    """The server's one batch of handled, not yet committed commands; see the module
    docstring. Without :meth:`run` (no committer task) every command commits now.

    Args:
        store: the store every match writes to.
        collect: a context manager around carrying out a committed command's
            effects; what they send is written at its end (``server.direct.DIRECT``).
    """

    #: False: commands commit synchronously (SQLite), :meth:`flush` commits them
    deferred = False

    def __init__(self, store: Store,
                 collect: AbstractContextManager[None] | None = None) -> None:
        self.store = store
        self.pending: list[Pending] = []
        #: commands that reached a match with an uncommitted one, in arrival order
        self.waiting: list[tuple[Match, Session | None, Any]] = []
        self._collect = collect if collect is not None else nullcontext()
        self._wake = trio.Event()
        self._running = False
        #: the last ALONE_AFTER batches held one command each: commit at once
        self._alone = False
        self._singles = 0
        self._countdown = PROBE_EVERY
        #: the poller's pass serves one socket, and no command of it has come yet
        self._lone = False
        #: transactions and commands committed through here (benchmarks, tests)
        self.batches = 0
        self.commands = 0

    async def run(self) -> None:
        """The committer: commit what is pending once per scheduler pass it is woken."""
        self._running = True
        try:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                self.flush()
                if self.waiting:
                    self._run_held()
        finally:
            self._running = False
            self.flush()

    def hold(self, match: Match, session: Session | None, command: Any) -> None:
        """Run ``command`` of ``match`` (which has one uncommitted, or held
        already) once what ``match`` has here is committed: in the committer's pass,
        after the batch is carried out."""
        match.held += 1
        self.waiting.append((match, session, command))
        self._wake.set()

    def poke(self) -> None:
        """Have the committer look at the held commands again (a match whose
        task held them back is free again)."""
        if self._running and self.waiting:
            self._wake.set()

    def _run_held(self) -> None:
        """Run each held command whose match has nothing uncommitted, in order;
        a match's later ones wait for the next pass once one of it has run (it is
        uncommitted again)."""
        waiting, self.waiting = self.waiting, []
        held: set[int] = set()
        with self._collect:
            for item in waiting:
                match = item[0]
                if id(match) not in held and not match.uncommitted:
                    match.held -= 1
                    if match.run_held(item[1], item[2]):
                        if match.uncommitted:
                            held.add(id(match))
                        continue
                    match.held += 1
                held.add(id(match))
                self.waiting.append(item)

    def take_held(self, match: Match) -> list[tuple[Session | None, Any]]:
        """Remove and return ``match``'s held commands, in order (its task runs
        them itself before anything else of it)."""
        if not match.held:
            return []
        mine = [(session, command) for m, session, command in self.waiting if m is match]
        self.waiting = [item for item in self.waiting if item[0] is not match]
        match.held = 0
        return mine

    def poller_pass(self, ready: int) -> None:
        """The poller is about to serve ``ready`` sockets in one pass (0: it has
        served them). More than one ends the one-by-one mode: their commands may
        come together, and wait for the committer's pass. One alone lets the first
        command of the pass commit at once in the one-by-one mode without a probe
        (no other socket of the poller has a request in this pass)."""
        self._lone = ready == 1
        if ready > 1 and self._alone:
            self._alone = False
            self._singles = 0

    def submit(self, match: Match, session: Session | None, command: Any, fx: Effects) -> None:
        """Commit ``fx`` (``match``'s core's effects for ``command``) and carry it out,
        with the next batch (at once when no committer runs)."""
        item = Pending(match, session, command, fx)
        lone, self._lone = self._lone, False
        if not self._running or (self._alone and not self.pending
                                 and (lone or self._probe())):
            self.batches += 1
            self.commands += 1
            if match.commit_writes(fx.writes, session, command):
                self._carry_out(item)
            return
        match.uncommitted = True
        self.pending.append(item)
        if len(self.pending) == 1:
            self._wake.set()

    def _probe(self) -> bool:
        """In the one-by-one mode: True to commit this command at once, False (every
        :data:`PROBE_EVERY` th) to send it through the committer, to see whether
        others now come with it."""
        self._countdown -= 1
        if self._countdown > 0:
            return True
        self._countdown = PROBE_EVERY
        return False

    def flush(self) -> None:
        """Commit and carry out everything pending, now."""
        batch, self.pending = self.pending, []
        if not batch:
            return
        self._singles = self._singles + 1 if len(batch) == 1 else 0
        self._alone = self._singles >= ALONE_AFTER
        for item in batch:
            item.match.uncommitted = False
        self.batches += 1
        self.commands += len(batch)
        began = metrics.perf_counter()
        try:
            with self.store.transaction():
                for item in batch:
                    for write in item.fx.writes:
                        item.match.store_write(self.store, write)
            metrics.committed(began)
        except Exception:
            log.warning("a group commit of %d commands failed; committing them one by one",
                        len(batch), exc_info=True)
            self._one_by_one(batch)
            return
        for item in batch:
            self._carry_out(item)

    def _one_by_one(self, batch: list[Pending]) -> None:
        for item in batch:
            if item.match.commit_writes(item.fx.writes, item.session, item.command):
                self._carry_out(item)

    def _carry_out(self, item: Pending) -> None:
        match = item.match
        with self._collect:
            match.deliver(item.fx)   # the requester's reply is written first (at the
        match.settle(item.fx)        # end of this block), then its bots and timers...
        metrics.delivered(item.command, match.began)
        rest = _build_rest(match, item.fx)
        if rest is not None:
            with self._collect:
                match.carry_out(rest)  # ...then everyone else's


def _build_rest(match: Match, fx: Effects) -> Effects | None:
    """The rest of ``fx``'s broadcast, built now (None: there is none)."""
    if fx.later is None:
        return None
    try:
        return fx.later()
    except Exception:
        log.exception("match %s: building a broadcast failed", match.id)
        return None


#: The outcome of a committed item (:data:`server.cluster.journal.OK`).
COMMITTED = "ok"


class AwaitedCommit(GroupCommit):
    """The group commit of cluster mode: every command's writes go to ``journal``
    (Redis) from the committer task, one round trip per batch; see the module
    docstring. Requires :meth:`run`.

    Args:
        journal: the match journals (:class:`server.cluster.journal.RedisJournal`).
        collect: as for :class:`GroupCommit`.
    """

    #: True: committing waits on a round trip; callers await :meth:`commit`/:meth:`settle`
    deferred = True

    def __init__(self, store: Store, journal: Journal,
                 collect: AbstractContextManager[None] | None = None) -> None:
        super().__init__(store, collect)
        self.journal = journal
        #: set (and replaced) after each batch has been carried out
        self._done = trio.Event()

    async def run(self) -> None:
        """The committer: one batch (everything pending) per round trip."""
        self._running = True
        try:
            while True:
                if not self.pending:
                    await self._wake.wait()
                    self._wake = trio.Event()
                batch, self.pending = self.pending, []
                if batch:
                    await self._commit(batch)
                done, self._done = self._done, trio.Event()
                done.set()
        finally:
            self._running = False

    def submit(self, match: Match, session: Session | None, command: Any, fx: Effects) -> None:
        """Queue ``fx`` for the next batch; its effects are carried out once Redis has
        stored its writes (never in the caller's task)."""
        match.uncommitted = True
        self.pending.append(Pending(match, session, command, fx))
        if len(self.pending) == 1:
            self._wake.set()

    def flush(self) -> None:
        """Nothing: commands commit only in the committer (await :meth:`settle`)."""

    async def settle(self, match: Match) -> None:
        """Return once nothing of ``match`` waits for a commit."""
        while match.uncommitted:
            await self._done.wait()

    async def commit(self, match: Match, session: Session | None, command: Any,
                     fx: Effects) -> bool:
        """Commit ``fx`` with the next batch and wait for it; True when it was
        committed (and carried out), False when refused (rolled back, requester told)."""
        self.submit(match, session, command, fx)
        item = self.pending[-1]
        await self.settle(match)
        return item.outcome == COMMITTED

    async def _commit(self, batch: list[Pending]) -> None:
        writing = [item for item in batch if item.fx.writes or item.fx.members]
        batches = [item.match.journal_batch(item.fx) for item in writing]
        self.batches += 1
        self.commands += len(batch)
        began = metrics.perf_counter()
        await self.journal.commit(batches)
        metrics.committed(began)
        for item, written in zip(writing, batches, strict=True):
            item.outcome = written.outcome
        for item in batch:
            item.match.uncommitted = False
            if not item.outcome:
                item.outcome = COMMITTED
            if item.outcome == COMMITTED:
                item.match.committed(item.fx)
                self._carry_out(item)
            elif item.match.commit_refused(item):
                self._carry_out(item)
