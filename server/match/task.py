"""The trio task that owns one match: inbox, timers, commit, then send.

The fast path first: a request from a plain-socket connection, to a match with
nothing queued, half done or uncommitted, runs through the core in the reader's
own task (:meth:`Match.submit`; the core is synchronous, so nothing interleaves)
and its effects go to the server's group commit (:mod:`server.match.commit`),
which commits the rows of every command of one scheduler pass in one transaction
and only then sends what they cause, the requester's reply first, straight to
its socket (:mod:`server.direct`). Such a request to a match whose previous
command is not committed yet waits in the group commit and runs there once it is
(no hop to the task either). Everything else goes through the task, in
order, and the task first commits what the group commit holds: commands
arrive on a bounded inbox, the deadline the core asked for fires as a
:class:`~server.match.commands.Tick`, and each command runs through
:meth:`MatchCore.handle <server.match.core.MatchCore.handle>`. The task then
carries out the effects:

1. every write, in one transaction (nothing a row causes is sent before it is
   committed; a failed commit rolls the core back to where it was before the
   command and the requester gets ``internal_error``; a server-driven change, a
   bot's move or a timer's default, is tried again after a backoff of
   ``store_retry`` seconds doubling up to ``store_retry_max``, so a full disk
   stalls the match only until it has room again),
2. the messages (events of :mod:`protocol.events`, validated when the core
   built them), to each session's outbox (``spectators``: every connected
   spectator),
3. the rest of a broadcast (``effects.later``) after two scheduler passes, so the
   requester's writer sends its reply before the other writers are even woken,
4. bot turns to the seats' :class:`~server.match.bots.BotDriver`, and the next
   deadline.

:meth:`Match.detach` is synchronous (a connection handler calls it while it is
being torn down): it runs the core at once and touches presence and timers only.

Sessions are known by id: the task looks each one up in the server's registry
(``MatchContext.sessions``) when it runs a command or delivers a message, never
through an object it kept. A request queued by a connection that has dropped
since runs as not ``live`` (a ``join`` then seats the session disconnected, with
its grace period running); a resume before it runs makes it live again.

In cluster mode (docs/cluster.md) the group commit is an
:class:`~server.match.commit.AwaitedCommit`: commits wait on a round trip to
Redis, so the task's own commands first wait until the match's earlier ones are
committed, then join the next batch and wait for it; a detach is queued as a
command instead of running at once. The match keeps the rows Redis holds
(:attr:`Match.rows`) to roll back to, writes at its fencing :attr:`Match.epoch`,
and stops (:meth:`Match.fence_off`) when Redis says another node owns it.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import trio

from engine.core import State
from protocol.errors import ProtocolError, Refusal
from server import metrics
from server.config import ServerConfig
from server.match import commands as cmd
from server.match.bots import BotClosed, BotDriver, BotPool
from server.match.commit import AwaitedCommit, GroupCommit, Pending
from server.match.core import MatchCore, Rules, SeatState
from server.match.effects import (
    SPECTATORS,
    AppendJournal,
    BotTurn,
    DeleteMatch,
    Effects,
    SaveSeat,
    SaveTimers,
    SaveWatcher,
    TimersLeft,
    Write,
    wall_timer_rows,
    wall_timers,
)
from server.profiles import player_extras
from server.session import Session
from server.store import JournalEntry, MatchRecord, RatingChange, SeatTimers, Store

if TYPE_CHECKING:  # cluster mode alone loads the cluster code (and coredis)
    from server.cluster import journal as redis_journal

log = logging.getLogger("cardserver.match")

#: The message of ``unavailable`` (protocol/errors.py).
UNAVAILABLE_MESSAGE = "cluster mode: Redis did not answer; the request was not carried out"


@dataclass(slots=True)
class MatchContext:
    """What a match task needs from the server."""

    store: Store
    config: ServerConfig
    bots: BotPool
    on_closed: Callable[[Match], None] = lambda match: None
    clock: Callable[[], float] = trio.current_time
    wall: Callable[[], float] = time.time
    #: the server's group commit (None: every command commits in its match's task)
    commits: GroupCommit | None = None
    #: the server's sessions by id (the lobby's registry; the one object of each id)
    sessions: dict[str, Session] = field(default_factory=dict)
    #: asked before a join or watch runs (session id, command); raises Refusal
    admit: Callable[[str, cmd.Request], None] = lambda session_id, command: None
    #: a session left a seat or stopped watching (the lobby forgets it if idle)
    on_left: Callable[[Session], None] = lambda session: None
    #: cluster mode: a connected session of a match this node no longer owns (the
    #: lobby closes its connection with ``bye match_moved``, so that it resumes)
    on_moved: Callable[[Session], None] = lambda session: None


def replace_match(exc: ProtocolError, match_id: str) -> ProtocolError:
    """``exc`` naming ``match_id`` (a refusal raised without the match in hand)."""
    if exc.match is None:
        exc.match = match_id
    return exc


#: the commands the lobby admits before they run (a tuple: ``Join | Watch`` would
#: build a union object on every command)
_ADMITTED = (cmd.Join, cmd.Watch)


class MatchClosed(Exception):
    """The match task has ended; it accepts no more requests."""

    def __init__(self, match_id: str) -> None:
        super().__init__(match_id)
        self.match_id = match_id

    def refusal(self) -> Refusal:
        """How a request for the closed match is answered (``no_such_match``)."""
        return Refusal("no_such_match", f"match {self.match_id} is closed", "match")


_Item = tuple[Session | None, cmd.Command]


class Match:
    """One match: its :class:`MatchCore` and the task that runs it."""

    def __init__(self, ctx: MatchContext, core: MatchCore) -> None:
        self.ctx = ctx
        self.core = core
        self.id = core.id
        self.closed = False
        self._send, self._recv = trio.open_memory_channel[_Item](ctx.config.inbox_size)
        self._timer_scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._drivers: dict[int, BotDriver] = {}
        self._close = False
        core.rater = self._rate
        #: failed commits of server-driven changes in a row (the backoff's exponent)
        self._failures = 0
        #: timers are held back until then after a failed commit (trio time)
        self._hold_until: float | None = None
        #: commands handed to the inbox and not yet handled (the receiver may hold one)
        self._queued = 0
        #: the task is between handling a command and sending the rest of its broadcast
        self._busy = False
        #: a command handled here waits in the group commit (server.match.commit)
        self.uncommitted = False
        #: commands of this match held in the group commit (GroupCommit.hold)
        self.held = 0
        #: cluster mode: the fencing epoch this node owns the match at
        self.epoch = 0
        #: cluster mode: the journal rows Redis holds (a failed commit rolls back to
        #: them); None on a single server (the store holds them)
        self.rows: list[JournalEntry] | None = None
        #: cluster mode: a commit failed without a known outcome; the next one cuts
        #: Redis's journal back to :attr:`rows` and rewrites the whole record
        self._resync = False
        #: when the core began the latest command (perf_counter; metrics)
        self.began = 0.0

    # -- construction ---------------------------------------------------------

    @classmethod
    def create(cls, ctx: MatchContext, match_id: str, game: str, options: dict[str, Any],
               turn_timer: int, abandon: str, seed: int, salt: str,
               rated: bool = False) -> Match:
        """A new, empty, waiting match (not stored yet: see :meth:`store_new`).

        Raises:
            engine.core.BadOption: bad options (already normalized by the caller).
        """
        rec = MatchRecord(match_id, game, options, seed, salt, turn_timer, abandon,
                          "waiting", ctx.wall(), rated=rated)
        return cls(ctx, MatchCore.create(rec, Rules.from_config(ctx.config)))

    @classmethod
    def restore(cls, ctx: MatchContext, rec: MatchRecord,
                session_for: Callable[[str, str], Session],
                journal: list[JournalEntry] | None = None, epoch: int = 0) -> Match:
        """Rebuild a stored, unfinished match by replaying its journal through the core
        (every row's digest checked).

        Args:
            journal: cluster mode: the match's rows as Redis holds them, owned at
                ``epoch`` (None: read them from the store).

        Raises:
            server.replay.ReplayError: the journal does not replay.
        """
        rows = ctx.store.journal(rec.id) if journal is None else journal
        core = MatchCore.restore(rec, rows, Rules.from_config(ctx.config), wall=ctx.wall())
        match = cls(ctx, core)
        if journal is not None:
            match.rows, match.epoch = list(journal), epoch
        for seat in core.seats:
            if seat.session is not None:
                session = session_for(seat.session, seat.name or "?")
                session.seats.add((match.id, seat.index))
                if journal is not None:
                    continue  # cluster mode: no accounts
                account = ctx.store.session_account(seat.session)
                if account is not None:
                    core.set_account(seat.index, account,
                                     player_extras(ctx.store, ctx.store.account(account),
                                                   rec.game, rec.rated))
        for sid in core.spectators:
            session_for(sid, "?").watching.add(match.id)
        return match

    def seat_session(self, index: int, session: Session, *, client_seed: str = "0") -> None:
        """Put ``session`` in seat ``index`` before the task starts (create, queue)."""
        self.ctx.sessions.setdefault(session.id, session)
        account = session.account
        self.core.seat(index, session.id, session.name,
                       None if account is None else account.id,
                       player_extras(self.ctx.store, account, self.game, self.core.rated),
                       client_seed=client_seed)
        session.seats.add((self.id, index))

    @property
    def rated(self) -> bool:
        """A rated match."""
        return self.core.rated

    def _rate(self, winner: int | None) -> tuple[RatingChange, ...]:
        """The core's rater: the result's rating changes from the stored ratings."""
        accounts = [seat.account for seat in self.core.seats]
        if None in accounts or len(accounts) != 2:
            log.error("match %s: rated, but seats %s have no accounts", self.id, accounts)
            return ()
        a0, a1 = accounts
        assert a0 is not None and a1 is not None
        if self.ctx.commits is not None:
            # another match of the same account may have finished in this pass: its
            # rating changes must be stored before these are computed from the store
            self.ctx.commits.flush()
        return self.ctx.store.rate(self.id, self.game, (a0, a1), winner)

    def seat_bot(self, index: int, name: str, *, client_seed: str = "0") -> None:
        """Put a server bot in seat ``index`` before the task starts."""
        self.core.seat_bot(index, name, client_seed=client_seed)

    def store_new(self) -> None:
        """Store this new match with its current seats and status; when the store
        refuses it, its sessions no longer sit in it (memory and store agree).

        Raises:
            StoreError: the store refused it.
        """
        rec = self.core.record()
        rec.watchers.clear()
        try:
            self.ctx.store.create_match(rec)
        except Exception:
            self.unseat_all()
            raise

    async def store_new_in(self, journal: Any) -> None:
        """Cluster mode: claim this new match for this node and store it in Redis
        (``journal``: :class:`server.cluster.journal.RedisJournal`); when that fails
        its sessions no longer sit in it.

        Raises:
            server.cluster.journal.JournalError: Redis did not store it.
        """
        rec = self.core.record()
        rec.watchers.clear()
        try:
            self.epoch = await journal.create(rec)
        except Exception:
            self.unseat_all()
            raise
        self.rows = []

    def unseat_all(self) -> None:
        """Its sessions no longer sit in this match (one that never started: the store
        refused it, or its launch failed)."""
        for seat in self.core.seats:
            session = self.ctx.sessions.get(seat.session or "")
            if session is not None:
                session.seats.discard((self.id, seat.index))

    # -- the public face ------------------------------------------------------

    @property
    def game(self) -> str:
        """The game's name."""
        return self.core.game.name

    @property
    def status(self) -> str:
        """waiting, active or finished."""
        return self.core.status

    @property
    def seq(self) -> int:
        """Journal rows committed so far."""
        return self.core.seq

    @property
    def state(self) -> State:
        """The engine state (read it only from the server's trio thread)."""
        return self.core.state

    @property
    def seats(self) -> list[SeatState]:
        """The core's seats."""
        return self.core.seats

    @property
    def created(self) -> float:
        """Wall time of creation."""
        return self.core.created

    def summary(self) -> dict[str, Any]:
        """The match as listed by ``matches``."""
        return self.core.summary()

    def members(self) -> list[tuple[Session, int | None]]:
        """Every (session, seat) here; seat None: a spectator."""
        sessions = self.ctx.sessions
        out = [(sessions[s.session], s.index) for s in self.core.seats
               if s.session is not None and s.session in sessions]
        return out + [(sessions[sid], None) for sid in self.core.spectators if sid in sessions]

    async def submit(self, command: cmd.Command, session: Session | None = None) -> None:
        """Queue ``command`` (from ``session``, if any) for the match task; waits
        while the inbox is full.

        A command that may skip the inbox runs through the core at once, or, while
        this match has a command in the group commit, is held there until that
        one is committed (:meth:`GroupCommit.hold`). Else, with room in the inbox,
        it is queued at once, without a scheduler pass: the caller (a connection's
        reader) goes straight back to its socket while the match task wakes. A
        caller that is already cancelled still gets Cancelled before anything is
        queued.

        Raises:
            MatchClosed: the match task has ended.
        """
        if self.closed:
            raise MatchClosed(self.id)
        await trio.lowlevel.checkpoint_if_cancelled()  # a cancelled caller queues nothing
        if self.submit_nowait(command, session):
            return
        self._queued += 1
        try:
            await self._send.send((session, command))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self._queued -= 1
            raise MatchClosed(self.id) from None
        except BaseException:
            self._queued -= 1
            raise

    def submit_nowait(self, command: cmd.Command, session: Session | None = None) -> bool:
        """:meth:`submit` without a wait: True when ``command`` was run, held or
        queued; False, with nothing done, when the inbox is full (await
        :meth:`submit` then).

        Raises:
            MatchClosed: the match task has ended.
        """
        if self.closed:
            raise MatchClosed(self.id)
        if self._can_skip_inbox(session):
            commits = self.ctx.commits
            assert commits is not None
            if not self.uncommitted and not self.held:
                self._handle_now(session, command)
                return True
            if not commits.deferred and self.held < self.ctx.config.inbox_size:
                commits.hold(self, session, command)  # run once the earlier is committed
                return True
        try:
            self._send.send_nowait((session, command))
        except trio.WouldBlock:
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise MatchClosed(self.id) from None
        self._queued += 1
        return True

    def _can_skip_inbox(self, session: Session | None) -> bool:
        """The command may skip the inbox (run now, or held in the group commit
        when something of this match is uncommitted): nothing of this match is
        queued or half done, the task runs, the server groups commits, and the
        requester's replies can be written at once (a plain socket; others keep the
        task's order)."""
        return (self.ctx.commits is not None and self._nursery is not None
                and not self._queued and not self._busy and not self._close
                and (session is None or getattr(session.client, "direct", False)))

    def run_held(self, session: Session | None, command: cmd.Command) -> bool:
        """A command held in the group commit, run now that nothing of this match
        is uncommitted (see :meth:`GroupCommit.hold`); False (it waits longer) while
        the task holds the match (a command queued or half done): the task runs it
        first (:meth:`_run_core`). A closed match answers it ``no_such_match``, as
        :meth:`submit` would have."""
        if self.closed or self._close:
            if session is not None and isinstance(command, cmd.Request):
                session.push(MatchClosed(self.id).refusal().to_event(command.rid))
            return True
        if self._queued or self._busy:
            return False
        self._handle_now(session, command)
        return True

    def _handle_now(self, session: Session | None, command: cmd.Command) -> None:
        """``command`` through the core in the caller's task; its effects to the group
        commit, which commits them before anything they cause is sent."""
        assert self.ctx.commits is not None
        handled = self._through_core(session, command)
        if handled is not None:
            self.ctx.commits.submit(self, *handled)

    def _through_core(self, session: Session | None, command: cmd.Command
                      ) -> tuple[Session | None, cmd.Command, Effects] | None:
        """The registered requester, the command as run and the core's effects for it
        (see :meth:`_note`, :meth:`_handled`); None when it was refused or failed."""
        noted = self._note(session, command)
        if noted is None:
            return None
        session, command = noted
        fx = self._handled(session, command)
        return None if fx is None else (session, command, fx)

    def _handled(self, session: Session | None, command: cmd.Command) -> Effects | None:
        """The core's effects for ``command``; None when the core failed (a bug:
        logged, the requester answered ``internal_error``)."""
        self.began = metrics.perf_counter()
        try:
            fx = self.core.handle(command, self.ctx.clock())
        except Exception:
            log.exception("match %s: handler failed", self.id)
            self._internal_error(session, command)
            return None
        metrics.handled(self.core.game.name, command, fx)
        return fx

    def _note(self, session: Session | None, command: cmd.Command
              ) -> tuple[Session | None, cmd.Command] | None:
        """The registered session of the requester's id and the command to run: a
        resume since the request was queued may have replaced the object the
        connection handed over (one the server has forgotten stays unregistered:
        it is not connected), and a request from a session that has lost its
        connection meanwhile is marked ``live=False``. None when the lobby refuses
        a join or watch (the requester was told)."""
        if session is None:
            return session, command
        session = self.ctx.sessions.get(session.id, session)
        if not session.connected and isinstance(command, cmd.Request):
            command = replace(command, live=False)
        if isinstance(command, _ADMITTED):
            try:
                self.ctx.admit(session.id, command)
            except ProtocolError as exc:
                session.push(replace_match(exc, self.id).to_event(command.rid))
                return None
        return session, command

    def detach(self, session: Session) -> None:
        """The session lost its connection: start grace periods, tell the others.

        Synchronous and cheap: touches presence and timers only, never the engine.
        """
        if self.closed:
            return
        if self.ctx.commits is not None and self.ctx.commits.deferred:
            # cluster mode: nothing runs through the core before its commit is known
            try:
                if self._nursery is not None:
                    self._nursery.start_soon(self.submit_quietly, cmd.Detach(session.id))
            except RuntimeError:
                pass  # the match task is ending (shutdown)
            return
        self._run_core(None, cmd.Detach(session.id))

    async def submit_quietly(self, command: cmd.Command, session: Session | None = None
                             ) -> None:
        """:meth:`submit`, doing nothing if the match task has ended."""
        try:
            await self.submit(command, session)
        except MatchClosed:
            pass

    async def attach(self, session: Session) -> None:
        """Mark ``session`` present in this match, which sends it a fresh snapshot
        (nothing if the match task has ended)."""
        await self.submit_quietly(cmd.Attach(session.id), session)

    # -- the task -------------------------------------------------------------

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Own the match until it is over and has lingered, or until cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await self._apply(None, cmd.Start())
                await self._loop()
                nursery.cancel_scope.cancel()
        except Exception:
            # A bug must not take the server down: this match stops (its journal is
            # intact, so a restart brings it back); its requests get no_such_match.
            log.exception("match %s: task failed; the match is closed", self.id)
        finally:
            self.closed = True
            self._send.close()
            self._recv.close()
            if self.held and self.ctx.commits is not None:
                self.ctx.commits.poke()   # they are answered no_such_match
            self.ctx.on_closed(self)

    async def _loop(self) -> None:
        while not self._close:
            item: _Item | None = None
            with trio.CancelScope(deadline=self._next_deadline()) as scope:
                self._timer_scope = scope
                try:
                    item = await self._recv.receive()
                except trio.EndOfChannel:
                    return
            self._timer_scope = None
            if item is None:
                if self._close:
                    return
                await self._fire_timers()
            else:
                self._queued -= 1
                await self._apply(*item)

    async def _fire_timers(self) -> None:
        await self._apply(None, cmd.Tick())

    def _next_deadline(self) -> float:
        """The core's next deadline, held back while a failed commit backs off."""
        deadline = self.core.next_deadline()
        if self._hold_until is not None:
            return max(deadline, self._hold_until)
        return deadline

    def _retime(self) -> None:
        if self._timer_scope is not None:
            self._timer_scope.deadline = self._next_deadline()

    async def _apply(self, session: Session | None, command: cmd.Command) -> None:
        """Run ``command`` through the core and carry out its effects; the rest of a
        broadcast after two scheduler passes (never lost to a cancellation)."""
        if self.ctx.commits is not None and self.ctx.commits.deferred:
            await self._apply_awaited(session, command)
            return
        fx = self._run_core(session, command)
        if fx is None or fx.later is None:
            return
        self._busy = True
        try:
            await trio.lowlevel.cancel_shielded_checkpoint()
            await trio.lowlevel.cancel_shielded_checkpoint()
            self._send_rest(fx)
        finally:
            self._busy = False
            if self.held and self.ctx.commits is not None:
                self.ctx.commits.poke()   # commands held meanwhile may run now

    def _send_rest(self, fx: Effects) -> None:
        """Build and send the rest of ``fx``'s broadcast."""
        assert fx.later is not None
        try:
            rest = fx.later()
        except Exception:
            log.exception("match %s: building a broadcast failed", self.id)
            return
        self.carry_out(rest)

    async def _apply_awaited(self, session: Session | None, command: cmd.Command) -> None:
        """Cluster mode: ``command`` through the core once this match's earlier
        commands are committed; its effects with the next batch of the group commit,
        which carries them out once Redis has stored them (or rolls them back)."""
        commits = self.ctx.commits
        assert isinstance(commits, AwaitedCommit)
        self._busy = True  # nothing of this match through the fast path meanwhile
        try:
            await commits.settle(self)
            handled = self._through_core(session, command)
            if handled is not None:
                await commits.commit(self, *handled)
        finally:
            self._busy = False

    def _run_core(self, session: Session | None, command: cmd.Command) -> Effects | None:
        """One command through the core, its writes committed, its messages sent;
        the effects, or None when it failed (the requester was told)."""
        commits = self.ctx.commits
        if commits is not None:
            commits.flush()  # what cores were handed before is committed first
            for earlier in commits.take_held(self):   # and what came before this
                fx = self._commit_and_send(*earlier)
                if fx is not None and fx.later is not None:
                    self._send_rest(fx)
        return self._commit_and_send(session, command)

    def _commit_and_send(self, session: Session | None, command: cmd.Command
                         ) -> Effects | None:
        """One command through the core, committed (alone), its messages sent."""
        noted = self._note(session, command)
        if noted is None:
            return None
        session, command = noted
        fx = self._handled(session, command)
        if fx is None or not self.commit_writes(fx.writes, session, command):
            return None
        self.carry_out(fx)
        metrics.delivered(command, self.began)
        return fx

    def commit_writes(self, writes: list[Write], session: Session | None,
                      command: cmd.Command) -> bool:
        """Carry out ``writes`` in one transaction. On a failure the core goes back to
        where it was before ``command`` (:meth:`MatchCore.rollback`), the requester
        is told, a server-driven command is tried again after a backoff, and False
        is returned. Timers alone failing to store is only logged (they are stored
        again with the next change)."""
        if not writes:
            return True
        store = self.ctx.store
        began = metrics.perf_counter()
        try:
            with store.transaction():
                for write in writes:
                    self.store_write(store, write)
            metrics.committed(began)
        except Exception:
            if all(isinstance(w, SaveTimers) for w in writes):
                log.warning("match %s: cannot store its timers; trying again with the next "
                            "change", self.id)
                self.core.timers_unsaved()
                return True
            self._commit_failed(writes, session, command)
            return False
        if self._failures:
            log.info("match %s: the store takes writes again after %d failure(s)", self.id,
                     self._failures)
            self._failures, self._hold_until = 0, None
        return True

    def store_write(self, store: Store, write: Write) -> None:
        """Carry out one write of this match (inside the caller's transaction, if any).

        Raises:
            StoreError: the store refused it.
        """
        if isinstance(write, AppendJournal):
            wall = self.ctx.wall()
            finished = write.finished
            left = write.timers
            # stamped with its wall-clock time and timers as stored, without a second
            # entry or the seats' SeatTimers built to carry them (about 2 µs a row)
            store.append_stamped(self.id, write.entry, wall,
                                 None if left is None else wall_timer_rows(left, wall),
                                 None if finished is None else (wall, *finished),
                                 write.ratings)
        elif isinstance(write, SaveSeat):
            store.set_seat(self.id, write.seat, write.status)
        elif isinstance(write, SaveWatcher):
            store.set_watcher(self.id, write.session, write.watching)
        elif isinstance(write, SaveTimers):
            store.set_timers(self.id, write.seq, self._wall_timers(write.left, self.ctx.wall()))
        elif isinstance(write, DeleteMatch):
            store.delete_match(self.id)

    @staticmethod
    def _wall_timers(left: TimersLeft, wall: float) -> tuple[SeatTimers, ...]:
        """Seconds left -> wall-clock deadlines (as stored)."""
        return wall_timers(left, wall)

    # -- cluster mode: the journal in Redis (server.cluster.journal) -----------

    def journal_batch(self, fx: Effects) -> redis_journal.MatchBatch:
        """``fx``'s writes as this match's part of a batch: fenced at :attr:`epoch`,
        after the :attr:`rows` Redis holds (cut back to them first after a failure)."""
        from server.cluster.journal import MatchBatch

        assert self.rows is not None
        resync = None
        if self._resync:
            resync = self.core.record()
            self.core.timers_unsaved()
        return MatchBatch(self.id, self.epoch, len(self.rows), fx.writes, fx.members,
                          self.ctx.wall(), resync)

    def committed(self, fx: Effects) -> None:
        """``fx``'s writes are in Redis."""
        assert self.rows is not None
        self.rows += fx.journal
        self._resync = False
        if self._failures:
            log.info("match %s: Redis takes writes again after %d failure(s)", self.id,
                     self._failures)
            self._failures, self._hold_until = 0, None

    def commit_refused(self, item: Pending) -> bool:
        """``item``'s writes were not committed: fenced (this node no longer owns
        the match: it stops here, its players are told ``match_moved``), or Redis
        failed (rolled back, the requester told ``unavailable``; timers alone are
        carried out and stored again with the next change). True: carry ``item``
        out all the same."""
        from server.cluster.journal import FENCED

        if item.outcome == FENCED:
            self._tell_failed(item.session, item.command, "match_moved",
                              "this match is now run by another node: resume to reach it")
            self.fence_off()
            return False
        self._resync = True
        if all(isinstance(w, SaveTimers) for w in item.fx.writes):
            log.warning("match %s: cannot store its timers (%s); trying again with the next "
                        "change", self.id, item.outcome)
            self.core.timers_unsaved()
            return True
        self._commit_failed(item.fx.writes, item.session, item.command, "unavailable",
                            UNAVAILABLE_MESSAGE)
        return False

    def fence_off(self) -> None:
        """This node no longer owns the match: end its task here (it writes nothing
        more) and close the connections of its players here with ``bye match_moved``."""
        if self.closed:
            return
        log.warning("match %s: fenced off (another node owns it now); stopping it here",
                    self.id)
        self.closed = True
        for session, _ in self.members():
            if session.connected:
                self.ctx.on_moved(session)
        for driver in self._drivers.values():
            driver.stop()
        self._close = True
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def _journal_rows(self) -> list[JournalEntry]:
        """The rows committed so far: the store's, or in cluster mode Redis's."""
        return self.ctx.store.journal(self.id) if self.rows is None else list(self.rows)

    def _commit_failed(self, writes: list[Write], session: Session | None,
                       command: cmd.Command, code: str = "internal_error",
                       message: str = "the server failed handling this request") -> None:
        """Roll the core back after a failed commit; tell the requester, or try a
        server-driven change again after the backoff."""
        delay = min(self.ctx.config.store_retry_max,
                    self.ctx.config.store_retry * 2 ** self._failures)
        self._failures += 1
        if self._failures == 1:
            log.error("match %s: cannot store %s", self.id,
                      ", ".join(type(w).__name__ for w in writes),
                      exc_info=sys.exc_info()[0] is not None)  # cluster mode: no exception
        else:
            log.warning("match %s: the store still fails (%d in a row); next try in %.2f s",
                        self.id, self._failures, delay)
        journaled = any(isinstance(w, AppendJournal) for w in writes)
        try:
            self.core.rollback(self._journal_rows() if journaled else None)
        except Exception:
            log.exception("match %s: cannot reload the journal", self.id)
        self._tell_failed(session, command, code, message)
        if session is None:
            # Nobody will ask again: a bot's move is submitted again, a timer's due
            # change fires again (every timer waits for the backoff).
            self._hold_until = self.ctx.clock() + delay
            if isinstance(command, cmd.BotIntent) and self._nursery is not None:
                self._nursery.start_soon(self._resubmit, command, delay)
        self._retime()

    async def _resubmit(self, command: cmd.Command, delay: float) -> None:
        await trio.sleep(delay)
        await self.submit_quietly(command)

    def _internal_error(self, session: Session | None, command: cmd.Command) -> None:
        self._tell_failed(session, command, "internal_error",
                          "the server failed handling this request")

    def _tell_failed(self, session: Session | None, command: cmd.Command, code: str,
                     message: str) -> None:
        if session is not None and isinstance(command, cmd.Request):
            session.push(ProtocolError(code, message, match=self.id).to_event(command.rid))

    def carry_out(self, fx: Effects) -> None:
        """Membership, messages, bots, close and the next deadline of ``fx``."""
        self.deliver(fx)
        self.settle(fx)

    def deliver(self, fx: Effects) -> None:
        """The membership changes and the messages of ``fx`` (committed): what
        :meth:`carry_out` does before :meth:`settle`."""
        sessions = self.ctx.sessions
        left: list[Session] = []
        for m in fx.members:
            session = sessions.get(m.session)
            if session is None:
                continue
            if m.seat is None:
                (session.watching.add if m.present else session.watching.discard)(self.id)
            elif m.present:
                session.seats.add((self.id, m.seat))
            else:
                session.seats.discard((self.id, m.seat))
            if not m.present:
                left.append(session)
        for session in left:  # after all of them: a seat handed to a bot becomes a watch
            self.ctx.on_left(session)
        for to, msg in fx.messages:   # Session.push, without its call per message
            if to == SPECTATORS:
                for sid in self.core.spectators:
                    watcher = sessions.get(sid)
                    if watcher is not None and watcher.client is not None:
                        watcher.client.push(msg)
            else:
                target = sessions.get(to)
                if target is not None and target.client is not None:
                    target.client.push(msg)

    def settle(self, fx: Effects) -> None:
        """The bots, the close and the next deadline of ``fx`` (committed), once its
        messages are out (:meth:`deliver`): nothing of it is sent, so the group
        commit does it after the requester's reply is written."""
        for turn in fx.bots:
            self._offer(turn)
        if fx.stop_bots:
            for driver in self._drivers.values():
                driver.stop()
        if fx.close:
            self._close = True
        scope = self._timer_scope
        if scope is not None:
            if self._close:
                scope.deadline = -math.inf
            elif self._hold_until is not None:
                scope.deadline = self._next_deadline()
            elif fx.deadline < scope.deadline:
                scope.deadline = fx.deadline
            # else a later deadline (a turn timer restarted by a move) is left as it
            # was: trio's setter costs 2 us a move, and waking early only hands the
            # core a Tick that finds nothing due and arms the real deadline

    def _offer(self, turn: BotTurn) -> None:
        driver = self._drivers.get(turn.seat)
        if driver is None:
            if self._nursery is None or self.core.status == "finished":
                return
            driver = self._drivers[turn.seat] = BotDriver(
                self.id, self.game, turn.seat, turn.strategy, self.ctx.bots, self._bot_submit)
            self._nursery.start_soon(driver.run)
        driver.offer(turn)

    async def _bot_submit(self, command: cmd.BotIntent) -> None:
        try:
            await self.submit(command)
        except MatchClosed:
            raise BotClosed(self.id) from None
