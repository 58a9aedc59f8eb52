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

When the last few batches held one command each (nothing else arrives in the
same pass, as in a ping-pong), commands commit at once in the reader's task,
requester's reply first, then the rest of the broadcast, all before returning
(nothing interleaves); every eighth goes through the committer again, and a batch
of more than one brings grouping back. Without a running committer
(:meth:`GroupCommit.run`) every command commits at once.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import trio

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

    def store_write(self, store: Store, write: Write) -> None:
        """One write, inside the caller's transaction."""

    def commit_writes(self, writes: list[Write], session: Session | None,
                      command: Any) -> bool:
        """The writes one transaction each; False (rolled back, requester told) on
        a failure."""

    def carry_out(self, fx: Effects) -> None:
        """Send the messages of committed effects, offer bots, arm timers."""


@dataclass(slots=True)
class Pending:
    """One handled command waiting for its batch's commit."""

    match: Match
    session: Session | None
    command: Any
    fx: Effects


class GroupCommit:
    """The server's one batch of handled, not yet committed commands; see the module
    docstring. Without :meth:`run` (no committer task) every command commits now.

    Args:
        store: the store every match writes to.
        collect: a context manager around carrying out a committed command's
            effects; what they send is written at its end (``server.direct.DIRECT``).
    """

    def __init__(self, store: Store,
                 collect: AbstractContextManager[None] | None = None) -> None:
        self.store = store
        self.pending: list[Pending] = []
        self._collect = collect if collect is not None else nullcontext()
        self._wake = trio.Event()
        self._running = False
        #: the last ALONE_AFTER batches held one command each: commit at once
        self._alone = False
        self._singles = 0
        self._countdown = PROBE_EVERY
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
        finally:
            self._running = False
            self.flush()

    def submit(self, match: Match, session: Session | None, command: Any, fx: Effects) -> None:
        """Commit ``fx`` (``match``'s core's effects for ``command``) and carry it out,
        with the next batch (at once when no committer runs)."""
        item = Pending(match, session, command, fx)
        if not self._running or (self._alone and not self.pending and self._probe()):
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
        try:
            with self.store.transaction():
                for item in batch:
                    for write in item.fx.writes:
                        item.match.store_write(self.store, write)
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
            match.carry_out(item.fx)   # the requester's reply is written first...
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
