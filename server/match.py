"""One match and the trio task that owns it.

Everything that changes a match goes through its task, in order: requests
arrive on a bounded inbox (:class:`Request` subclasses) and timers (turn timer,
auto-flip, grace periods, the linger after the end) fire inside the same loop.
For each accepted change the task

1. calls the engine (``state.apply`` / ``resign`` / ``forfeit``),
2. commits one journal row to the store (before anything is sent),
3. answers the request, then sends every seated session its own snapshot
   (``state.view(seat)``, ``state.legal(seat)``, ``state.project_events``) and
   spectators the public one (seat None).

Intent checks run in the order of PROTOCOL-CORE: ``not_in_match``, ``stale``,
``not_your_turn``, ``illegal_intent`` (``not_seated`` for a spectator and
``match_finished`` after the end come right after ``not_in_match``).

Presence (a seat's connection going away) is reported with :meth:`Match.detach`,
a synchronous call that only touches presence and timers, so a connection
handler can call it while it is being torn down.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from engine.core import Event, RuleError, State
from engine.fairness import commitment, seed_hex
from engine.registry import get_game
from protocol.errors import ProtocolError
from server.config import ServerConfig
from server.replay import rebuild
from server.session import Session
from server.store import JournalEntry, MatchRecord, SeatRecord, Store, StoreError

log = logging.getLogger("cardserver.match")

#: Upper bound on default intents played for one timed-out turn.
MAX_DEFAULTS_PER_TIMEOUT = 200


# -- requests -------------------------------------------------------------


@dataclass(slots=True)
class Request:
    """Something a session asks of a match. ``id`` is echoed in the reply."""

    session: Session | None
    id: int | None


@dataclass(slots=True)
class Join(Request):
    """Take a seat (``seat`` None: the free one)."""

    seat: int | None = None


@dataclass(slots=True)
class Watch(Request):
    """Become a spectator."""


@dataclass(slots=True)
class Leave(Request):
    """Stop watching; free a waiting seat; resign an active one."""


@dataclass(slots=True)
class PlayIntent(Request):
    """One intent for the match's ``seq`` (from a session, or from a server bot)."""

    seq: int = 0
    intent: dict[str, Any] = field(default_factory=dict)
    #: set by a server bot playing that seat (``session`` is then None)
    bot_seat: int | None = None


@dataclass(slots=True)
class Resign(Request):
    """Resign (R0.4); in a waiting match, free the seat."""


@dataclass(slots=True)
class SetAutoFlip(Request):
    """War: let the server flip for this seat."""

    on: bool = False


@dataclass(slots=True)
class Chat(Request):
    """A chat line for every participant."""

    text: str = ""


@dataclass(slots=True)
class Attach(Request):
    """The session (re)connected: mark its seats present, send it fresh snapshots."""


# -- seats and context ----------------------------------------------------


@dataclass(slots=True)
class Seat:
    """One seat: who sits there and its timers (absolute trio times)."""

    index: int
    session: Session | None = None
    name: str | None = None
    bot: str | None = None
    auto_flip: bool = False
    timeouts: int = 0
    turn_deadline: float | None = None
    auto_at: float | None = None
    grace_deadline: float | None = None
    driver: BotDriver | None = None

    @property
    def taken(self) -> bool:
        """A player or a bot sits here."""
        return self.session is not None or self.bot is not None

    @property
    def connected(self) -> bool:
        """A bot, or a player with a live connection."""
        if self.bot is not None:
            return True
        return self.session is not None and self.session.connected

    def record(self) -> SeatRecord:
        """The seat as stored."""
        return SeatRecord(self.index, self.session.id if self.session else None, self.name,
                          self.bot, self.auto_flip)

    def player(self) -> dict[str, Any]:
        """The seat as a protocol ``player`` map."""
        return {"seat": self.index, "name": self.name, "connected": self.connected,
                "bot": self.bot}


@dataclass(slots=True)
class MatchContext:
    """What a match needs from the server."""

    store: Store
    config: ServerConfig
    bot_limiter: trio.CapacityLimiter
    make_strategy: Callable[[str], Any]
    on_closed: Callable[[Match], None] = lambda match: None
    clock: Callable[[], float] = trio.current_time
    wall: Callable[[], float] = time.time


class MatchClosed(Exception):
    """The match task has ended; it accepts no more requests."""


# -- the match ------------------------------------------------------------


class Match:
    """A match: engine state, seats, spectators, and the task that owns them."""

    def __init__(self, ctx: MatchContext, rec: MatchRecord, state: State, seq: int) -> None:
        self.ctx = ctx
        self.id = rec.id
        self.game = rec.game
        self.options = rec.options
        self.seed = rec.seed
        self.salt = rec.salt
        self.turn_timer = rec.turn_timer
        self.abandon = rec.abandon
        self.created = rec.created
        self.status = rec.status
        self.commitment = commitment(rec.seed, rec.salt)
        self.state = state
        self.seq = seq
        self.seats = [Seat(i) for i in range(get_game(rec.game).seats)]
        self.spectators: dict[str, Session] = {}
        self.linger_until: float | None = None
        self._send, self._recv = trio.open_memory_channel[Request](ctx.config.inbox_size)
        self._timer_scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        #: the rest of a broadcast, run by the task after it has yielded (_broadcast)
        self._later: Callable[[], None] | None = None
        self.closed = False

    # -- construction ---------------------------------------------------

    @classmethod
    def create(cls, ctx: MatchContext, match_id: str, game: str, options: dict[str, Any],
               turn_timer: int, abandon: str, seed: int, salt: str) -> Match:
        """A new, empty, waiting match (not stored yet: see :meth:`store_new`).

        Raises:
            engine.core.BadOption: bad options (already normalized by the caller).
        """
        rec = MatchRecord(match_id, game, options, seed, salt, turn_timer, abandon,
                          "waiting", ctx.wall())
        return cls(ctx, rec, get_game(game).new_state(seed, options), 0)

    def store_new(self) -> None:
        """Store this new match with its current seats and status.

        Raises:
            StoreError: the store refused it.
        """
        rec = MatchRecord(self.id, self.game, self.options, self.seed, self.salt,
                          self.turn_timer, self.abandon, self.status, self.created,
                          seats=[s.record() for s in self.seats])
        self.ctx.store.create_match(rec)

    @classmethod
    def restore(cls, ctx: MatchContext, rec: MatchRecord,
                session_for: Callable[[str, str], Session]) -> Match:
        """Rebuild a stored, unfinished match by replaying its journal.

        Human seats come back disconnected; their grace periods start when the
        task starts.

        Raises:
            server.replay.ReplayError: the journal does not replay.
        """
        entries = ctx.store.journal(rec.id)
        state = rebuild(rec, entries)
        match = cls(ctx, rec, state, len(entries))
        for srec in rec.seats:
            seat = match.seats[srec.seat]
            seat.name, seat.bot, seat.auto_flip = srec.name, srec.bot, srec.auto_flip
            if srec.session is not None and srec.bot is None:
                seat.session = session_for(srec.session, srec.name or "?")
                seat.session.seats.add((match.id, seat.index))
        for sid in rec.watchers:
            session = session_for(sid, "?")
            match.spectators[sid] = session
            session.watching.add(match.id)
        return match

    def seat_session(self, index: int, session: Session) -> None:
        """Put ``session`` in seat ``index`` before the task starts (create, queue)."""
        seat = self.seats[index]
        seat.session, seat.name = session, session.name
        session.seats.add((self.id, index))
        self._maybe_start()

    def seat_bot(self, index: int, name: str) -> None:
        """Put a server bot in seat ``index`` before the task starts."""
        seat = self.seats[index]
        seat.bot, seat.name = name, f"{name} (bot)"
        self._maybe_start()

    def _maybe_start(self) -> None:
        if self.status == "waiting" and all(s.taken for s in self.seats):
            self.status = "active"

    # -- the public face ------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The match as listed by ``matches``."""
        return {"match": self.id, "game": self.game, "status": self.status,
                "options": self.options, "seq": self.seq, "players": self.players(),
                "spectators": len(self.spectators), "created": self.created}

    def players(self) -> list[dict[str, Any]]:
        """Every seat as a protocol ``player`` map."""
        return [s.player() for s in self.seats]

    def seat_of(self, session: Session | None) -> int | None:
        """The seat ``session`` plays here (not counting seats a bot took), or None."""
        if session is None:
            return None
        for seat in self.seats:
            if seat.session is session and seat.bot is None:
                return seat.index
        return None

    async def submit(self, request: Request) -> None:
        """Queue a request for the match task (waits while the inbox is full).

        With room in the inbox the request is queued at once, without a scheduler
        pass: the caller (a connection's reader) goes straight back to its socket
        while the match task wakes, instead of being woken again in the match's
        pass, which put a task switch on every request's path. A caller that is
        already cancelled still gets Cancelled before anything is queued.

        Raises:
            MatchClosed: the match task has ended.
        """
        if self.closed:
            raise MatchClosed(self.id)
        await trio.lowlevel.checkpoint_if_cancelled()  # a cancelled caller queues nothing
        try:
            try:
                self._send.send_nowait(request)
            except trio.WouldBlock:
                await self._send.send(request)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise MatchClosed(self.id) from None

    def detach(self, session: Session) -> None:
        """The session lost its connection: start grace periods, tell the others.

        Synchronous and cheap: touches presence and timers only, never the engine.
        """
        if self.closed:
            return
        now = self.ctx.clock()
        for seat in self.seats:
            if seat.session is session and seat.bot is None and self.status != "finished":
                seat.grace_deadline = now + self.ctx.config.grace
                self._presence(seat, grace=self.ctx.config.grace)
        self._retime()

    # -- the task -------------------------------------------------------

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Own the match until it is over and has lingered, or until cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                self._start_grace_for_absent()
                for seat in self.seats:
                    if seat.bot is not None:
                        self._start_bot(seat)
                self._update_timers(None)
                self._broadcast([])
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
            self.ctx.on_closed(self)

    async def _loop(self) -> None:
        while True:
            with trio.CancelScope(deadline=self._next_deadline()) as scope:
                self._timer_scope = scope
                try:
                    request = await self._recv.receive()
                except trio.EndOfChannel:
                    return
                self._timer_scope = None
                self._guard(self._handle, request)
                await self._run_later()
                continue
            self._timer_scope = None
            if self._guard(self._fire_timers) is True:
                return

    async def _run_later(self) -> None:
        """Finish a broadcast that :meth:`_broadcast` left for later, after two
        scheduler passes: the requester's writer (woken by its ``ok``) sends its reply
        in the first, before the other connections' writers are even woken, instead of
        racing them in one pass (trio runs a pass in either order). Nothing is handled
        in between, so the deferred snapshots show the same state. Never raises
        Cancelled (a deferred broadcast is not lost to a timer)."""
        if self._later is None:
            return
        await trio.lowlevel.cancel_shielded_checkpoint()
        await trio.lowlevel.cancel_shielded_checkpoint()
        later, self._later = self._later, None
        self._guard(later)

    def _guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run one handler; a failure is logged and answered, never fatal to the match."""
        try:
            return fn(*args)
        except ProtocolError as exc:
            request = args[0] if args else None
            if isinstance(request, Request) and request.session is not None:
                request.session.push(exc.to_message(request.id))
        except Exception:
            log.exception("match %s: handler failed", self.id)
            request = args[0] if args else None
            if isinstance(request, Request) and request.session is not None:
                request.session.push(ProtocolError(
                    "internal_error", "the server failed handling this request",
                    match=self.id).to_message(request.id))
        return None

    # -- timers ---------------------------------------------------------

    def _next_deadline(self) -> float:
        times = [t for s in self.seats for t in (s.turn_deadline, s.auto_at, s.grace_deadline)
                 if t is not None]
        if self.linger_until is not None:
            times.append(self.linger_until)
        return min(times, default=math.inf)

    def _retime(self) -> None:
        if self._timer_scope is not None:
            self._timer_scope.deadline = self._next_deadline()

    def _start_grace_for_absent(self) -> None:
        now = self.ctx.clock()
        for seat in self.seats:
            if (seat.session is not None and seat.bot is None and not seat.session.connected
                    and self.status != "finished" and seat.grace_deadline is None):
                seat.grace_deadline = now + self.ctx.config.grace

    def _update_timers(self, acted: int | None) -> None:
        """Arm or clear each seat's turn timer and auto-flip after a change.

        A seat's turn timer starts when it comes to move and restarts after each
        of its own intents; it stops while the seat has nothing to do.
        """
        now = self.ctx.clock()
        to_move = set(self.state.to_move()) if self.status == "active" else set()
        for seat in self.seats:
            if seat.index in to_move:
                if self.turn_timer > 0 and (seat.turn_deadline is None or seat.index == acted):
                    seat.turn_deadline = now + self.turn_timer
                if self.game == "war" and seat.auto_flip and seat.auto_at is None:
                    seat.auto_at = now + self.ctx.config.auto_flip_delay
            else:
                seat.turn_deadline = None
                seat.auto_at = None

    def _fire_timers(self) -> bool:
        """Handle every timer that is due; True when the match should close."""
        now = self.ctx.clock()
        if self.linger_until is not None and now >= self.linger_until:
            return True
        for seat in self.seats:
            if self.status == "finished":
                break
            if seat.grace_deadline is not None and now >= seat.grace_deadline:
                seat.grace_deadline = None
                self._abandon(seat)
            elif seat.auto_at is not None and now >= seat.auto_at:
                seat.auto_at = None
                self._auto_flip(seat)
            elif seat.turn_deadline is not None and now >= seat.turn_deadline:
                seat.turn_deadline = None
                self._timeout(seat)
        return False

    def _auto_flip(self, seat: Seat) -> None:
        intent = self.state.default_intent(seat.index)
        if intent is None:
            return
        events = self.state.apply(seat.index, intent)
        self._journal("intent", seat.index, intent=intent, by="auto")
        self._changed(events, seat.index)

    def _timeout(self, seat: Seat) -> None:
        """The seat's turn timer ran out: play its default intents, or forfeit it."""
        seat.timeouts += 1
        limit = self.ctx.config.timeout_forfeit
        log.info("match %s: seat %d timed out (%d in a row)", self.id, seat.index, seat.timeouts)
        if limit and seat.timeouts >= limit:
            events = self.state.forfeit(seat.index, "timeout")
            self._journal("forfeit", seat.index, reason="timeout", by="timer")
            self._changed(events, seat.index)
            return
        events: list[Event] = []
        for _ in range(MAX_DEFAULTS_PER_TIMEOUT):
            intent = self.state.default_intent(seat.index)
            if intent is None:
                break
            events += self.state.apply(seat.index, intent)
            self._journal("intent", seat.index, intent=intent, by="timer")
            if self.status == "finished" or self.state.to_move() != (seat.index,):
                break
        self._changed(events, seat.index)

    def _abandon(self, seat: Seat) -> None:
        """The seat's grace period ran out."""
        session = seat.session
        if self.status == "waiting":
            self._free(seat)
            return
        if session is None or seat.bot is not None:
            return
        if self.abandon == "bot":
            session.seats.discard((self.id, seat.index))
            seat.session = None
            seat.bot = self.ctx.config.abandon_bot
            seat.name = f"{seat.name} ({seat.bot} bot)"
            self.ctx.store.set_seat(self.id, seat.record())
            log.info("match %s: seat %d abandoned, bot %s takes over", self.id, seat.index,
                     seat.bot)
            self._presence(seat)
            self._start_bot(seat)
            self._broadcast([])
            return
        log.info("match %s: seat %d abandoned, forfeits", self.id, seat.index)
        events = self.state.forfeit(seat.index, "abandoned")
        self._journal("forfeit", seat.index, reason="abandoned", by="timer")
        self._changed(events, None)

    # -- requests -------------------------------------------------------

    def _handle(self, request: Request) -> None:
        handler = {
            PlayIntent: self._on_intent, Join: self._on_join, Watch: self._on_watch,
            Leave: self._on_leave, Resign: self._on_resign, SetAutoFlip: self._on_auto_flip,
            Chat: self._on_chat, Attach: self._on_attach,
        }[type(request)]
        handler(request)

    def _error(self, request: Request, code: str, message: str, fld: str | None = None) -> None:
        if request.session is not None:
            request.session.push(ProtocolError(code, message, fld, match=self.id)
                                 .to_message(request.id))

    def _ok(self, request: Request, **fields: Any) -> None:
        if request.session is not None:
            msg: dict[str, Any] = {"type": "ok", **fields}
            if request.id is not None:
                msg["id"] = request.id
            request.session.push(msg)

    def _require_seat(self, request: Request) -> int | None:
        """The requester's seat, or None after answering not_in_match / not_seated."""
        seat = self.seat_of(request.session)
        if seat is None:
            if request.session is not None and request.session.id in self.spectators:
                self._error(request, "not_seated", "you watch this match; only seats may act")
            else:
                self._error(request, "not_in_match", f"you do not sit in match {self.id}")
        return seat

    def _on_intent(self, req: PlayIntent) -> None:
        if req.bot_seat is not None:
            seat = req.bot_seat
            if self.seats[seat].bot is None or self.status != "active" or req.seq != self.seq:
                return  # a bot acting on an old snapshot: it gets the next one
            by = "bot"
        else:
            found = self._require_seat(req)
            if found is None:
                return
            seat, by = found, "seat"
            if self.status == "finished":
                self._error(req, "match_finished", "the match is over")
                return
            if req.seq != self.seq:
                self._error(req, "stale", f"seq {req.seq} is not the match's seq {self.seq}",
                            "seq")
                return
            if self.status != "active":
                self._error(req, "not_your_turn", "the match has not started")
                return
        try:
            events = self.state.apply(seat, req.intent)
        except RuleError as exc:
            self._error(req, exc.code, str(exc), "intent")
            return
        self._journal("intent", seat, intent=req.intent, by=by)
        if by == "seat":
            self.seats[seat].timeouts = 0
        self._ok(req, match=self.id, seq=self.seq)
        self._changed(events, seat, first=req.session)

    def _on_resign(self, req: Resign) -> None:
        seat = self._require_seat(req)
        if seat is None:
            return
        if self.status == "finished":
            self._error(req, "match_finished", "the match is over")
            return
        if self.status == "waiting":
            self._free(self.seats[seat])
            self._ok(req, match=self.id)
            return
        events = self.state.resign(seat)
        self._journal("resign", seat)
        self._ok(req, match=self.id)
        self._changed(events, seat, first=req.session)

    def _on_join(self, req: Join) -> None:
        session = req.session
        assert session is not None
        if self.seat_of(session) is not None:
            self._error(req, "already_seated", f"you already sit in match {self.id}")
            return
        if self.status == "finished":
            self._error(req, "match_finished", "the match is over")
            return
        if req.seat is not None and not 0 <= req.seat < len(self.seats):
            self._error(req, "bad_message", f"no seat {req.seat} in {self.game}", "seat")
            return
        free = [s for s in self.seats if not s.taken]
        if req.seat is not None:
            free = [s for s in free if s.index == req.seat]
        if not free:
            self._error(req, "seat_taken", "that seat is taken" if req.seat is not None
                        else "every seat is taken", "seat" if req.seat is not None else None)
            return
        seat = free[0]
        if session.id in self.spectators:
            del self.spectators[session.id]
            session.watching.discard(self.id)
            self.ctx.store.set_watcher(self.id, session.id, False)
        seat.session, seat.name = session, session.name
        self._maybe_start()
        self.ctx.store.set_seat(self.id, seat.record(), self.status)
        session.seats.add((self.id, seat.index))
        log.info("match %s: %s joins seat %d", self.id, session.id, seat.index)
        self._ok(req, match=self.id, seat=seat.index)
        if self.status == "active":
            self._update_timers(None)
            self._broadcast([])
        else:
            self._send_snapshot(session, seat.index)
            self._presence(seat)

    def _on_watch(self, req: Watch) -> None:
        session = req.session
        assert session is not None
        if self.seat_of(session) is not None:
            self._error(req, "already_seated", "you sit in this match; seats see it already")
            return
        self.spectators[session.id] = session
        session.watching.add(self.id)
        self.ctx.store.set_watcher(self.id, session.id, True)
        self._ok(req, match=self.id)
        self._send_snapshot(session, None)

    def _on_leave(self, req: Leave) -> None:
        session = req.session
        assert session is not None
        if session.id in self.spectators:
            del self.spectators[session.id]
            session.watching.discard(self.id)
            self.ctx.store.set_watcher(self.id, session.id, False)
            self._ok(req, match=self.id)
            return
        seat = self._require_seat(req)
        if seat is None:
            return
        if self.status == "active":
            events = self.state.resign(seat)
            self._journal("resign", seat)
            self._ok(req, match=self.id)
            self._changed(events, seat, first=req.session)
        elif self.status == "waiting":
            self._ok(req, match=self.id)
            self._free(self.seats[seat])
        else:
            session.seats.discard((self.id, seat))
            self._ok(req, match=self.id)

    def _on_auto_flip(self, req: SetAutoFlip) -> None:
        seat = self._require_seat(req)
        if seat is None:
            return
        if self.game != "war":
            self._error(req, "not_supported", "auto_flip exists only in War")
            return
        if self.status == "finished":
            self._error(req, "match_finished", "the match is over")
            return
        s = self.seats[seat]
        s.auto_flip = req.on
        if not req.on:
            s.auto_at = None
        self.ctx.store.set_seat(self.id, s.record())
        self._ok(req, match=self.id)
        self._update_timers(None)
        self._send_snapshot(req.session, seat)

    def _on_chat(self, req: Chat) -> None:
        session = req.session
        seat = self.seat_of(session)
        if seat is None and (session is None or session.id not in self.spectators):
            self._error(req, "not_in_match", f"you neither sit in nor watch {self.id}")
            return
        assert session is not None
        self._ok(req)
        msg = {"type": "chat", "match": self.id, "seat": seat, "name": session.name,
               "text": req.text}
        for target in self._audience():
            target.push(msg)

    def _on_attach(self, req: Attach) -> None:
        session = req.session
        assert session is not None
        if not session.connected:
            # It dropped again before this request was handled: detach() has already
            # (re)started its grace periods, and they must stand.
            return
        for seat in self.seats:
            if seat.session is session and seat.bot is None:
                seat.grace_deadline = None
                self._presence(seat)
                self._send_snapshot(session, seat.index)
        if session.id in self.spectators:
            self._send_snapshot(session, None)

    # -- changes ----------------------------------------------------------

    def _free(self, seat: Seat) -> None:
        """Empty a seat of a waiting match; close the match when no seat is taken."""
        if seat.session is not None:
            seat.session.seats.discard((self.id, seat.index))
        seat.session, seat.name, seat.grace_deadline = None, None, None
        if any(s.taken for s in self.seats):
            self.ctx.store.set_seat(self.id, seat.record())
            self._presence(seat)
            return
        log.info("match %s: every seat left before the start; removed", self.id)
        self.ctx.store.delete_match(self.id)
        self.linger_until = self.ctx.clock()
        self.status = "finished"

    def _journal(self, kind: str, seat: int, intent: dict[str, Any] | None = None,
                 reason: str | None = None, by: str = "seat") -> None:
        """Commit the change just applied to the engine as the next journal row.

        On a store failure the engine state is rebuilt from the store, so state
        and journal never disagree, and the failure propagates.

        Raises:
            StoreError: the row could not be committed (the change is undone).
        """
        seq = self.seq + 1
        outcome = self.state.outcome()
        entry = JournalEntry(seq, kind, seat, intent, reason, by, self.ctx.wall(),
                             self.state.digest())
        finished = None if outcome is None else (self.ctx.wall(), outcome.winner, outcome.reason)
        try:
            self.ctx.store.append(self.id, entry, finished)
        except StoreError:
            log.exception("match %s: cannot journal seq %d; reloading from the store",
                          self.id, seq)
            self.state = rebuild(self.ctx.store.load_match(self.id) or self._record(),
                                 self.ctx.store.journal(self.id))
            raise
        self.seq = seq
        log.debug("match %s: seq %d seat %d %s %s by %s", self.id, seq, seat, kind,
                  intent if intent is not None else reason or "", by)
        if outcome is not None and self.status != "finished":
            self.status = "finished"
            self.linger_until = self.ctx.clock() + self.ctx.config.finished_linger
            for s in self.seats:
                s.turn_deadline = s.auto_at = s.grace_deadline = None
            log.info("match %s finished after seq %d: winner %s (%s)", self.id, seq,
                     outcome.winner, outcome.reason)

    def _record(self) -> MatchRecord:
        return MatchRecord(self.id, self.game, self.options, self.seed, self.salt,
                           self.turn_timer, self.abandon, self.status, self.created)

    def _changed(self, events: list[Event], acted: int | None,
                 first: Session | None = None) -> None:
        self._update_timers(acted)
        self._broadcast(events, first)
        if self.status == "finished":
            self._stop_bots()

    # -- output ---------------------------------------------------------

    def _audience(self) -> list[Session]:
        out = [s.session for s in self.seats if s.session is not None and s.bot is None]
        return out + list(self.spectators.values())

    def snapshot(self, seat: int | None, events: list[Event]) -> dict[str, Any]:
        """The ``snapshot`` message for ``seat`` (None: spectator), through the projection."""
        state = self.state
        active = self.status == "active"
        msg: dict[str, Any] = {
            "type": "snapshot", "match": self.id, "game": self.game, "seq": self.seq,
            "seat": seat, "view": state.view(seat),
            "legal": state.legal(seat) if active and seat is not None else [],
            "status": self.status,
            "events": state.project_events(events, seat) if events else [],
            "players": self.players(), "options": self.options,
            "commitment": self.commitment, "deadline": self._deadline_for(seat),
            "auto_flip": seat is not None and self.seats[seat].auto_flip,
        }
        outcome = state.outcome()
        if self.status == "finished" and outcome is not None:
            msg["result"] = outcome.to_dict()
            msg["reveal"] = {"seed": seed_hex(self.seed), "salt": self.salt}
        return msg

    def _deadline_for(self, seat: int | None) -> float | None:
        """Seconds left on the seat's own turn timer (None: none running for it); a
        spectator gets the earliest running timer."""
        now = self.ctx.clock()
        if seat is not None:
            deadline = self.seats[seat].turn_deadline
            return None if deadline is None else max(0.0, deadline - now)
        times = [s.turn_deadline for s in self.seats if s.turn_deadline is not None]
        return max(0.0, min(times) - now) if times else None

    def _send_snapshot(self, session: Session | None, seat: int | None) -> None:
        if session is not None and session.connected:
            session.push(self.snapshot(seat, []))

    def _broadcast(self, events: list[Event], first: Session | None = None) -> None:
        """Every seat its own snapshot, bots their view, spectators the public one.

        With ``first`` (the session whose request made the change, in a seat here) only
        its own snapshot is queued now; the rest is left to :meth:`_run_later`, which
        the task runs before it handles anything else (latency: the requester's reply
        is not queued behind the other snapshots' building and sending).
        """
        if first is not None and self._nursery is not None:
            mine = [s for s in self.seats if s.session is first and s.bot is None]
            if mine:
                if first.connected:
                    for seat in mine:
                        first.push(self.snapshot(seat.index, events))
                self._later = partial(self._broadcast_all, events, first)
                return
        self._broadcast_all(events, None)

    def _broadcast_all(self, events: list[Event], skip: Session | None) -> None:
        """:meth:`_broadcast` to everyone but ``skip`` (whose seats had theirs)."""
        for seat in self.seats:
            if skip is not None and seat.session is skip and seat.bot is None:
                continue
            if seat.driver is not None:
                active = self.status == "active"
                seat.driver.offer(self.seq, self.state.view(seat.index),
                                  self.state.legal(seat.index) if active else [])
            elif seat.session is not None and seat.session.connected:
                seat.session.push(self.snapshot(seat.index, events))
        watching = [s for s in self.spectators.values() if s.connected]
        if watching:
            public = self.snapshot(None, events)
            for session in watching:
                session.push(public)

    def _presence(self, seat: Seat, grace: float | None = None) -> None:
        msg = {"type": "presence", "match": self.id, "seat": seat.index, "name": seat.name,
               "connected": seat.connected, "grace": grace}
        for session in self._audience():
            if session is not seat.session:
                session.push(msg)

    # -- bots -------------------------------------------------------------

    def _start_bot(self, seat: Seat) -> None:
        if self._nursery is None or seat.bot is None or self.status == "finished":
            return
        strategy = self.ctx.make_strategy(seat.bot)
        seat.driver = BotDriver(self, seat.index, strategy, self.ctx.bot_limiter)
        self._nursery.start_soon(seat.driver.run)

    def _stop_bots(self) -> None:
        for seat in self.seats:
            if seat.driver is not None:
                seat.driver.stop()


class BotDriver:
    """Plays one seat with a strategy: thinks in a worker thread on the newest
    view it was offered and submits its choice like any client would."""

    def __init__(self, match: Match, seat: int, strategy: Any,
                 limiter: trio.CapacityLimiter) -> None:
        self.match = match
        self.seat = seat
        self.strategy = strategy
        self.limiter = limiter
        self._latest: tuple[int, dict[str, Any], list[dict[str, Any]]] | None = None
        self._wake = trio.Event()
        self._scope = trio.CancelScope()

    def offer(self, seq: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        """The seat's newest view and legal intents (older offers are dropped)."""
        self._latest = (seq, view, legal)
        self._wake.set()

    def stop(self) -> None:
        """Stop thinking and playing (the match is over)."""
        self._scope.cancel()

    async def run(self) -> None:
        """Play until stopped or the match closes."""
        with self._scope:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                assert self._latest is not None
                seq, view, legal = self._latest
                if not legal:
                    continue
                intent = await trio.to_thread.run_sync(
                    self._choose, view, legal, limiter=self.limiter, abandon_on_cancel=True)
                if all(seat.bot is not None for seat in self.match.seats):
                    # nobody human is left (both seats abandoned to bots): play on at a
                    # walking pace instead of burning the server's CPU
                    await trio.sleep(self.match.ctx.config.auto_flip_delay)
                try:
                    await self.match.submit(PlayIntent(None, None, seq=seq, intent=intent,
                                                       bot_seat=self.seat))
                except MatchClosed:
                    return

    def _choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The strategy's choice; falls back to the first legal intent if it fails."""
        try:
            choice = self.strategy.choose(self.match.game, self.seat, view, legal)
        except Exception:
            log.exception("match %s: bot for seat %d failed; playing its first legal intent",
                          self.match.id, self.seat)
            return legal[0]
        return choice if choice in legal else legal[0]


def new_strategy(name: str, budget: float) -> Any:
    """A fresh server-bot strategy (seeded from the OS generator).

    Raises:
        ValueError: unknown strategy name.
    """
    from engine.bots import get_strategy, timed

    return timed(get_strategy(name, seed=secrets.randbits(64)), budget, clock=time.perf_counter)
