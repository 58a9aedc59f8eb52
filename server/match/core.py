"""The rules of engagement of one match, sans-IO: :meth:`MatchCore.handle`.

``MatchCore.handle(command, now) -> Effects`` is plain synchronous code: no
trio, no store, no sockets. It holds the seats (who sits where, connected or
not, its timers), the engine state and the match's ``seq``, and decides for
each command (:mod:`server.match.commands`) what changes, what to journal, which
message goes to whom and which deadline to arm (:mod:`server.match.effects`).
``now`` is the task's clock (trio time, seconds); every deadline is on it.

Intent checks run in the order of PROTOCOL-CORE: ``not_in_match``, ``stale``,
``not_your_turn``, ``illegal_intent`` (``not_seated`` for a spectator and
``match_finished`` after the end come right after ``not_in_match``). ``stale``
is the seq rule of :mod:`server.match.window`: a seat may act on any snapshot
since its ``legal`` list last changed.

The deal is made when the last seat is taken, from the server seed and every
seat's client seed (:func:`server.replay.new_match_state`); until then a
waiting match holds a placeholder state that deals nothing of the real one.

A command's writes are one transaction: when its commit fails, the task calls
:meth:`MatchCore.rollback` and the core goes back to where it was before the
command (its engine state rebuilt from the rows the store holds, its seats and
spectators as they were), so memory and store never disagree.

Running timers are stored with the match (:class:`SaveTimers`, written whenever
they change): a restored match resumes them (:meth:`MatchCore.restore`'s
``wall``) instead of starting them afresh.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.core import Event, RuleError, State
from engine.fairness import commitment
from engine.registry import get_game
from engine.rng import LEGACY_STREAM, HmacStream
from protocol import events as ev
from protocol.errors import ProtocolError, Refusal, RemoteProtocolError
from server.config import ServerConfig
from server.match import commands as cmd
from server.match import snapshots
from server.match.effects import (
    SPECTATORS,
    AppendJournal,
    BotTurn,
    DeleteMatch,
    Effects,
    Membership,
    SaveSeat,
    SaveTimers,
    SaveWatcher,
    journal_entry,
)
from server.match.history import EventHistory
from server.match.window import SeqWindow
from server.ratelimit import TokenBucket
from server.ratings import played, played_seats
from server.replay import ReplayError, new_match_state, rebuild
from server.store import JournalEntry, MatchRecord, RatingChange, SeatRecord, SeatTimers

log = logging.getLogger("cardserver.match")

#: Upper bound on default intents played for one timed-out turn.
MAX_DEFAULTS_PER_TIMEOUT = 200
#: The auto-flip pace a seat may ask for (``auto_flip.delay``), seconds: kept within.
FLIP_DELAY_MIN, FLIP_DELAY_MAX = 0.05, 5.0
#: Intents a fast-forward plays per step; the match's other requests (and the journal
#: commit) come between steps, so a long game never blocks the match for long.
FAST_FORWARD_STEP = 200


@dataclass(frozen=True, slots=True)
class Rules:
    """The server-wide settings a match plays by (times in seconds)."""

    grace: float = 60.0
    timeout_forfeit: int = 3
    auto_flip_delay: float = 0.5
    abandon_bot: str = "greedy"
    finished_linger: float = 300.0
    #: seconds a waiting match waits for its players (0: for ever)
    waiting_ttl: float = 0.0
    #: spectators' chat lines relayed per second, all of them together, and the burst
    spectator_chat_rate: float = 10.0
    spectator_chat_burst: int = 20

    @classmethod
    def from_config(cls, config: ServerConfig) -> Rules:
        """The rules of ``config``."""
        return cls(config.grace, config.timeout_forfeit, config.auto_flip_delay,
                   config.abandon_bot, config.finished_linger, config.waiting_ttl,
                   config.spectator_chat_rate, 4 * config.chat_burst)


@dataclass(slots=True)
class SeatState:
    """One seat: who sits there (a session id or a bot) and its timers."""

    index: int
    session: str | None = None
    name: str | None = None
    bot: str | None = None
    auto_flip: bool = False
    #: the player here does not receive the spectators' chat
    mute_spectators: bool = False
    timeouts: int = 0
    turn_deadline: float | None = None
    auto_at: float | None = None
    grace_deadline: float | None = None
    #: the account of the player sitting here (None: a guest or a bot)
    account: int | None = None
    #: what the player map says about that account (``registered``, ``rating``...)
    player: dict[str, Any] | None = None
    #: the seat's client seed (hex), given by its player or chosen by the lobby
    client_seed: str | None = None
    #: seq of the last snapshot its session was sent (None: unknown, after a restart)
    seen: int | None = None
    flip_delay: float | None = None  # the seat's own auto-flip pace (None: the server's)
    fast_forward: bool = False  # asks to play the rest out at once

    @property
    def taken(self) -> bool:
        """A player or a bot sits here."""
        return self.session is not None or self.bot is not None

    def human(self, session: str | None) -> bool:
        """``session`` plays this seat itself (not a bot that took it over)."""
        return session is not None and self.session == session and self.bot is None

    def copy(self) -> SeatState:
        """An independent copy (for a rollback); ``dataclasses.replace`` took 1.6 µs a
        seat on every command, this 0.2."""
        return SeatState(self.index, self.session, self.name, self.bot, self.auto_flip,
                         self.mute_spectators, self.timeouts, self.turn_deadline,
                         self.auto_at, self.grace_deadline, self.account, self.player,
                         self.client_seed, self.seen, self.flip_delay, self.fast_forward)

    def record(self) -> SeatRecord:
        """The seat as stored."""
        return SeatRecord(self.index, self.session, self.name, self.bot, self.auto_flip,
                          self.client_seed)


#: The commands that change no seat, no connection and no name: the snapshots'
#: :attr:`MatchCore.roster` survives them (an intent changes at most the status,
#: which the roster is checked against).
_ROSTER_KEEPING = frozenset({cmd.PlayIntent, cmd.BotIntent})


def _placeholder(rec: MatchRecord) -> State:
    """The state a waiting match holds until the deal: dealt from a fixed key (it
    tells nothing of the real deal, made when the last seat is taken); its views
    are sent face down (:func:`server.match.snapshots.face_down`)."""
    return get_game(rec.game).new_state(rec.seed, rec.options, rng=HmacStream(bytes(32)))


def stored_timers(rec: MatchRecord, entries: list[JournalEntry]) -> tuple[SeatTimers, ...]:
    """The newest timers stored for the match: those of its last journal row that
    has any, or ``rec.timers`` when they were stored at that row's seq or later."""
    for entry in reversed(entries):
        if entry.timers is not None:
            if rec.timers is not None and rec.timers_seq >= entry.seq:
                return tuple(rec.timers)
            return entry.timers
    return tuple(rec.timers or ())


class MatchCore:
    """A match's engine state, seats and spectators, and the rules that change them."""

    def __init__(self, rec: MatchRecord, state: State, seq: int, rules: Rules) -> None:
        self.rec = rec
        self.id = rec.id
        self.game = get_game(rec.game)
        self.options = rec.options
        self.turn_timer = rec.turn_timer
        self.abandon = rec.abandon
        self.created = rec.created
        self.status = rec.status
        self.commitment = commitment(rec.seed, rec.salt)
        self.rules = rules
        self.state = state
        self.seq = seq
        self.seats = [SeatState(i) for i in range(self.game.seats)]
        #: session ids of spectators, in the order they came
        self.spectators: dict[str, None] = {}
        #: session ids with a live connection, as last reported
        self.connected: set[str] = set()
        self.linger_until: float | None = None
        #: a rated match; ``rater(winner)`` gives the rating changes of its result
        #: (set by the task: it reads the stored ratings)
        self.rated = rec.rated
        self.rater: Callable[[int | None], tuple[RatingChange, ...]] | None = None
        #: seats that made an intent of their own (an aborted match rates nobody)
        self.played: set[int] = set()
        #: ``result.ratings`` of a finished rated match
        self.rating_result: list[dict[str, Any]] = []
        #: when the next fast-forward step is due (None: not fast-forwarding)
        self.fast_at: float | None = None
        #: when a waiting match expires (armed by Start)
        self.expires_at: float | None = None
        #: the spectators' chat, all together (on the task's clock)
        self.spectator_chat = TokenBucket(rules.spectator_chat_rate,
                                          rules.spectator_chat_burst, 0.0)
        self._now = 0.0
        self._fx = Effects()
        self._deadline = math.inf  # handle's last fx.deadline, for its later broadcast
        #: status, linger and seats before the command being handled (rollback)
        self._before: tuple[str, float | None, list[SeatState]] = (self.status, None, [])
        #: the spectators before the command, when it changed them (rollback)
        self._spectators_before: dict[str, None] | None = None
        #: the timers the store holds (None: unknown, store them at the next change)
        self._saved_timers: tuple[tuple[float | None, float | None, int], ...] | None = None
        #: seat -> (turn seconds left, grace seconds left, timeouts) to resume at Start
        self._resume: dict[int, tuple[float | None, float | None, int]] = {}
        #: the seq rule: per seat, its legal list and the seq it last changed at
        self.window = SeqWindow(self.game.seats, self.game.simultaneous)
        #: (seq, status) the window was last brought up to date at
        self._window_at: tuple[int, str] | None = None
        #: recent raw events, for the snapshot after a seat's resume
        self.history = EventHistory(first_seq=seq)
        #: the snapshot parts that change only with the seats, their connections and
        #: the status, kept by :func:`snapshots.parts` between changes (None: build
        #: them afresh; every command but an intent, and every change of a seat from
        #: outside :meth:`handle`, clears it)
        self.roster: snapshots.Roster | None = None

    # -- construction -------------------------------------------------------

    @classmethod
    def create(cls, rec: MatchRecord, rules: Rules) -> MatchCore:
        """A new, empty match from its record (status ``waiting``).

        Raises:
            engine.core.BadOption: bad options (already normalized by the caller).
        """
        return cls(rec, _placeholder(rec), 0, rules)

    @classmethod
    def restore(cls, rec: MatchRecord, entries: list[JournalEntry], rules: Rules,
                wall: float | None = None) -> MatchCore:
        """A stored, unfinished match rebuilt by replaying its journal. Human seats
        come back disconnected; their grace periods start with :class:`Start`.

        Args:
            wall: the wall-clock time now (``time.time()``): the stored timers
                (``rec.timers``, wall-clock deadlines) resume at :class:`Start`
                with the time they had left (a grace period only for a seat that
                was already away); None: every timer starts afresh.

        Raises:
            server.replay.ReplayError: the journal does not replay, or a stored seat
                is outside the game's seats.
        """
        state = rebuild(rec, entries) if rec.status != "waiting" else _placeholder(rec)
        core = cls(rec, state, len(entries), rules)
        core.played = played_seats(entries)
        for srec in rec.seats:
            if not 0 <= srec.seat < len(core.seats):
                raise ReplayError(f"match {rec.id} has a stored seat {srec.seat}; "
                                  f"{core.game.name} has seats 0..{len(core.seats) - 1}")
            seat = core.seats[srec.seat]
            seat.name, seat.bot, seat.auto_flip = srec.name, srec.bot, srec.auto_flip
            seat.client_seed = srec.client_seed
            if srec.session is not None and srec.bot is None:
                seat.session = srec.session
        for sid in rec.watchers:
            core.spectators[sid] = None
        core.roster = None   # (the seats changed above)
        if wall is not None:
            core._resume = {
                t.seat: (None if t.turn is None else t.turn - wall,
                         None if t.grace is None else t.grace - wall, t.timeouts)
                for t in stored_timers(rec, entries) if 0 <= t.seat < len(core.seats)}
        return core

    def seat(self, index: int, session: str, name: str, account: int | None = None,
             player: dict[str, Any] | None = None, *, client_seed: str = "0") -> None:
        """Seat a connected ``session`` before the match starts (create, queue);
        ``account`` and ``player`` as for :meth:`set_account`; ``client_seed``: the
        seat's client seed (the lobby always passes one; the default is for tests)."""
        seat = self.seats[index]
        seat.session, seat.name, seat.client_seed = session, name, client_seed
        self.roster = None
        self.set_account(index, account, player)
        self.connected.add(session)
        self._maybe_start()

    def seat_bot(self, index: int, strategy: str, *, client_seed: str = "0") -> None:
        """Seat a server bot playing ``strategy`` before the match starts."""
        seat = self.seats[index]
        seat.bot, seat.name, seat.client_seed = strategy, f"{strategy} (bot)", client_seed
        self.roster = None
        self._maybe_start()

    def set_account(self, index: int, account: int | None,
                    player: dict[str, Any] | None) -> None:
        """Say which account sits in seat ``index`` and what its player map adds
        (``registered``, ``account_bot``, ``rating``, ``provisional``)."""
        seat = self.seats[index]
        seat.account, seat.player = account, player
        self.roster = None

    def record(self) -> MatchRecord:
        """The match as stored now (seats included)."""
        rec = self.rec
        return MatchRecord(self.id, rec.game, self.options, rec.seed, rec.salt,
                           self.turn_timer, self.abandon, self.status, self.created,
                           seats=[s.record() for s in self.seats],
                           watchers=list(self.spectators), rated=self.rated,
                           stream=rec.stream)

    def client_seeds(self) -> list[str] | None:
        """Every seat's client seed, seat 0 first, once the match has started on the
        documented stream (None before, and for matches of the old generator)."""
        seeds = [s.client_seed for s in self.seats]
        if self.status == "waiting" or self.rec.stream == LEGACY_STREAM or None in seeds:
            return None   # (None in seeds: a waiting match removed when its seats left)
        return [seed for seed in seeds if seed is not None]

    def _maybe_start(self) -> None:
        """The last seat is taken: deal from the server seed and the client seeds."""
        if self.status == "waiting" and all(s.taken for s in self.seats):
            self.status = "active"
            self.state = new_match_state(self.record())
            self._refresh_window()

    # -- the public face ----------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The match as listed by ``matches`` (a finished one with its ``result``)."""
        out = {"match": self.id, "game": self.game.name, "status": self.status,
               "options": self.options, "seq": self.seq, "players": self.players(),
               "spectators": len(self.spectators), "created": self.created,
               "rated": self.rated}
        outcome = self.state.outcome() if self.status == "finished" else None
        if outcome is not None:
            out["result"] = self.result_of(outcome)
        return out

    def players(self) -> list[dict[str, Any]]:
        """Every seat as a protocol ``player`` map."""
        return [{"seat": s.index, "name": s.name, "connected": self._seat_connected(s),
                 "bot": s.bot, **(s.player or {})} for s in self.seats]

    def seat_of(self, session: str | None) -> int | None:
        """The seat ``session`` plays here itself, or None."""
        if session is not None:
            for seat in self.seats:
                if seat.session == session and seat.bot is None:
                    return seat.index
        return None

    @property
    def now(self) -> float:
        """The time of the command being handled (the task's clock, seconds)."""
        return self._now

    def next_deadline(self) -> float:
        """The earliest armed timer (math.inf: none)."""
        earliest = math.inf
        for s in self.seats:
            for t in (s.turn_deadline, s.auto_at, s.grace_deadline):
                if t is not None and t < earliest:
                    earliest = t
        for t in (self.linger_until, self.fast_at,
                  self.expires_at if self.status == "waiting" else None):
            if t is not None and t < earliest:
                earliest = t
        return earliest

    def _seat_connected(self, seat: SeatState) -> bool:
        return seat.bot is not None or (seat.session is not None
                                        and seat.session in self.connected)

    # -- handling -----------------------------------------------------------

    def handle(self, command: cmd.Command, now: float) -> Effects:
        """Apply ``command`` at time ``now``; what the task must do about it.

        A refusal is answered inside the effects (an ``error`` to the requester).

        Raises:
            Exception: only a bug (the task logs it and answers ``internal_error``).
        """
        self._now = now
        self._fx = fx = Effects()
        if type(command) not in _ROSTER_KEEPING:
            self.roster = None
        self._before = (self.status, self.linger_until, [s.copy() for s in self.seats])
        self._spectators_before = None
        try:
            self._HANDLERS[type(command)](self, command)
        except ProtocolError as exc:  # a Refusal, or a request out of the game's bounds
            assert isinstance(command, cmd.Request)
            fx.messages.append((command.session, exc.to_event(command.rid)))
        self._save_timers()
        self._deadline = fx.deadline = self.next_deadline()
        return fx

    def _save_timers(self) -> None:
        """A :class:`SaveTimers` write when the seats' timers differ from the stored ones."""
        if self.status == "finished":
            return
        key = tuple([(s.turn_deadline, s.grace_deadline, s.timeouts) for s in self.seats])
        if key == self._saved_timers:
            return
        self._saved_timers = key
        now = self._now
        left = tuple([(i, None if turn is None else turn - now,   # (a list: no generator)
                       None if grace is None else grace - now, n)
                      for i, (turn, grace, n) in enumerate(key)])
        writes = self._fx.writes
        for write in reversed(writes):  # with the command's last journal row
            if isinstance(write, AppendJournal):
                write.timers = left
                return
        writes.append(SaveTimers(self.seq, left))

    def timers_unsaved(self) -> None:
        """Storing the timers failed: store them again with the next change."""
        self._saved_timers = None

    def rollback(self, committed: list[JournalEntry] | None) -> None:
        """The last command's writes failed to commit: go back to where the match was
        before it (seats, spectators, status, timers), with the engine state rebuilt
        from ``committed``, the rows the store holds (None: no journal row was part
        of the failed writes, the engine state stands).

        Raises:
            server.replay.ReplayError: the stored rows do not replay.
        """
        status, self.linger_until, seats = self._before
        self.roster = None
        if seats:
            self.seats = [s.copy() for s in seats]
        if self._spectators_before is not None:
            self.spectators = self._spectators_before
            self._spectators_before = None
        if committed is None and status == "waiting" and self.status == "active":
            committed = []  # the command dealt the cards: deal as before it, unstarted
        if committed is not None:
            log.warning("match %s: a commit failed; rebuilt at seq %d", self.id,
                        len(committed))
            self.state = rebuild(self.record(), committed)
            # the window may hold changes of rows that are gone: start it afresh
            self.window = SeqWindow(self.game.seats, self.game.simultaneous)
            self._window_at = None
            self.seq = len(committed)
            self.played = played_seats(committed)
            self.history = EventHistory(first_seq=self.seq)   # it may hold undone events
        if self.status != status:
            self.status = status
            self.rating_result = []
        self._saved_timers = None

    def _remember_spectators(self) -> None:
        """Keep the spectators as they were before this command (for :meth:`rollback`)."""
        if self._spectators_before is None:
            self._spectators_before = dict(self.spectators)

    def _refuse(self, code: str, message: str, fld: str | None = None) -> None:
        raise Refusal(code, message, fld, match=self.id)

    def _ok(self, req: cmd.Request, **fields: Any) -> None:
        self._fx.messages.append((req.session, ev.trusted(ev.Ok, **fields, id=req.rid)))

    def _require_seat(self, req: cmd.Request) -> int:
        """The requester's seat.

        Raises:
            Refusal: ``not_seated`` for a spectator, else ``not_in_match``.
        """
        seat = self.seat_of(req.session)
        if seat is None:
            if req.session in self.spectators:
                self._refuse("not_seated", "you watch this match; only seats may act")
            self._refuse("not_in_match", f"you do not sit in match {self.id}")
        assert seat is not None
        return seat

    def _on_start(self, _: cmd.Start) -> None:
        resume, self._resume = self._resume, {}
        now = self._now
        for index, (turn_left, grace_left, timeouts) in resume.items():
            seat = self.seats[index]
            seat.timeouts = timeouts
            if turn_left is not None and self.turn_timer > 0 and self.status == "active":
                seat.turn_deadline = now + max(0.0, turn_left)
            if (grace_left is not None and seat.session is not None and seat.bot is None
                    and seat.session not in self.connected and self.status != "finished"):
                seat.grace_deadline = now + max(0.0, grace_left)
        for seat in self.seats:
            if (seat.session is not None and seat.bot is None and self.status != "finished"
                    and seat.session not in self.connected and seat.grace_deadline is None):
                seat.grace_deadline = self._now + self.rules.grace
        if self.status == "waiting" and self.rules.waiting_ttl > 0:
            self.expires_at = self._now + self.rules.waiting_ttl
        self._update_timers(None)
        if self.status == "active" and not any(s.bot is None for s in self.seats):
            # stored before matches of bots alone were ended (see _abandon)
            self._end_without_humans(self.seats[0])
            return
        self._broadcast([])

    def _on_detach(self, c: cmd.Detach) -> None:
        self.connected.discard(c.session)
        for seat in self.seats:
            if seat.human(c.session) and self.status != "finished":
                seat.grace_deadline = self._now + self.rules.grace
                self._presence(seat, grace=self.rules.grace)

    def _on_attach(self, req: cmd.Attach) -> None:
        if not req.live:
            # It dropped again before this was handled: the Detach that came after
            # it has (re)started its grace periods, and they must stand.
            return
        self.connected.add(req.session)
        for seat in self.seats:
            if seat.human(req.session):
                seat.grace_deadline = None
                self._presence(seat)
                # what happened while it was away, as this seat may see it
                missed, cut = self.history.since(seat.seen)
                self._send_seat(seat, missed, cut=cut or None)
        if req.session in self.spectators:
            self._send(req.session, self.snapshot(None, []))

    def _on_intent(self, req: cmd.PlayIntent) -> None:
        seat = self._require_seat(req)
        if self.status == "finished":
            self._refuse("match_finished", "the match is over")
        self._refresh_window()
        if not self.window.accepts(seat, req.seq, self.seq):
            self._refuse("stale", f"seq {req.seq} is outside {self.window.since(seat)}.."
                         f"{self.seq}: act on your newest snapshot", "seq")
        if self.status != "active":
            self._refuse("not_your_turn", "the match has not started")
        try:
            events = self.state.apply(seat, req.intent)
        except RuleError as exc:
            self._refuse(exc.code, str(exc), "intent")
        self._journal("intent", seat, intent=req.intent, by="seat")
        self.seats[seat].timeouts = 0
        # the ok of every intent, as its wire map (what _ok makes, without the sort)
        wire: dict[str, Any] = {"type": "ok", "match": self.id, "seq": self.seq}
        if req.rid is not None:
            wire["id"] = req.rid
        self._fx.messages.append((req.session, ev.trusted_wire(ev.Ok, wire)))
        self._changed(events, seat, first=req.session)

    def _on_bot_intent(self, c: cmd.BotIntent) -> None:
        self._refresh_window()
        if (self.seats[c.seat].bot is None or self.status != "active"
                or not self.window.accepts(c.seat, c.seq, self.seq)):
            return  # a bot acting on an outdated snapshot: it gets the next one
        try:
            events = self.state.apply(c.seat, c.intent)
        except RuleError:
            return
        self._journal("intent", c.seat, intent=c.intent, by="bot")
        self._changed(events, c.seat)

    def _on_resign(self, req: cmd.Resign) -> None:
        seat = self._require_seat(req)
        if self.status == "finished":
            self._refuse("match_finished", "the match is over")
        if self.status == "waiting":
            self._free(self.seats[seat])
            self._ok(req, match=self.id)
            return
        events = self.state.resign(seat)
        self._journal("resign", seat)
        self._ok(req, match=self.id)
        self._changed(events, seat, first=req.session)

    def _on_join(self, req: cmd.Join) -> None:
        if self.seat_of(req.session) is not None:
            self._refuse("already_seated", f"you already sit in match {self.id}")
        if self.status == "finished":
            self._refuse("match_finished", "the match is over")
        if self.rated:
            if req.account is None:
                self._refuse("not_registered", "a rated match is between accounts: register, "
                             "or log in with hello.auth")
            if any(s.account == req.account for s in self.seats):
                self._refuse("already_seated", "your account already sits in this match")
        if req.seat is not None and not 0 <= req.seat < len(self.seats):
            raise RemoteProtocolError("bad_message", f"no seat {req.seat} in {self.game.name}",
                                      "seat", match=self.id)
        free = [s for s in self.seats if not s.taken
                and (req.seat is None or s.index == req.seat)]
        if not free:
            self._refuse("seat_taken", "that seat is taken" if req.seat is not None
                         else "every seat is taken", "seat" if req.seat is not None else None)
        seat = free[0]
        if self._gone(req, "join"):
            return
        if req.session in self.spectators:
            self._stop_watching(req.session)
        if req.live:
            self.connected.add(req.session)
        seat.session, seat.name, seat.client_seed = req.session, req.name, req.client_seed
        self.set_account(seat.index, req.account, req.player)
        self._maybe_start()
        self._fx.writes.append(SaveSeat(seat.record(), self.status))
        self._fx.members.append(Membership(req.session, seat.index, True))
        log.info("match %s: %s joins seat %d", self.id, req.session, seat.index)
        self._ok(req, match=self.id, seat=seat.index)
        if self.status == "active":
            self._update_timers(None)
            self._broadcast([])
        else:
            self._send_seat(seat, [])
            self._presence(seat)

    def _gone(self, req: cmd.Request, what: str) -> bool:
        """The requester's connection dropped while its join or watch waited in the
        inbox, and it has not resumed: the request is undone (nothing changes, and
        nobody is left to answer), so no seat is ever taken but unusable. A resume
        before the request runs makes it live again, and it is served."""
        if req.live or req.session in self.connected:
            return False
        log.info("match %s: %s from %s dropped: its connection is gone", self.id, what,
                 req.session)
        return True

    def _on_watch(self, req: cmd.Watch) -> None:
        if self.seat_of(req.session) is not None:
            self._refuse("already_seated", "you sit in this match; seats see it already")
        if self._gone(req, "watch"):
            return
        self._remember_spectators()
        self.spectators[req.session] = None
        if req.live:
            self.connected.add(req.session)
        self._fx.writes.append(SaveWatcher(req.session, True))
        self._fx.members.append(Membership(req.session, None, True))
        self._ok(req, match=self.id)
        self._send(req.session, self.snapshot(None, []))

    def _on_leave(self, req: cmd.Leave) -> None:
        if req.session in self.spectators:
            self._stop_watching(req.session)
            self._ok(req, match=self.id)
            return
        seat = self._require_seat(req)
        if self.status == "active":
            events = self.state.resign(seat)
            self._journal("resign", seat)
            self._ok(req, match=self.id)
            self._changed(events, seat, first=req.session)
        elif self.status == "waiting":
            self._ok(req, match=self.id)
            self._free(self.seats[seat])
        else:
            self._fx.members.append(Membership(req.session, seat, False))
            self._ok(req, match=self.id)

    def _on_auto_flip(self, req: cmd.SetAutoFlip) -> None:
        seat = self.seats[self._require_seat(req)]
        if not self.game.auto_play:
            self._refuse("not_supported", "auto_flip exists only in War")
        if self.status == "finished":
            self._refuse("match_finished", "the match is over")
        seat.auto_flip = req.on
        if req.delay is not None:
            seat.flip_delay = min(max(req.delay, FLIP_DELAY_MIN), FLIP_DELAY_MAX)
            seat.auto_at = None  # re-armed at the new pace below
        if not req.on:
            seat.auto_at = None
        self._fx.writes.append(SaveSeat(seat.record()))
        self._ok(req, match=self.id, delay=self.flip_delay(seat))
        self._update_timers(None)
        self._send_seat(seat, [])

    def flip_delay(self, seat: SeatState) -> float:
        """The seat's auto-flip pace, seconds (its own, else the server's)."""
        return seat.flip_delay if seat.flip_delay is not None else self.rules.auto_flip_delay

    def _on_fast_forward(self, req: cmd.SetFastForward) -> None:
        """A seat asks (or stops asking) to play the rest out; when every seat asks
        (a bot always agrees) the match plays itself out in steps of
        :data:`FAST_FORWARD_STEP` intents, each journaled like an auto-flip."""
        seat = self.seats[self._require_seat(req)]
        if not self.game.auto_play:
            self._refuse("not_supported", "fast_forward exists only in games that play "
                                          "themselves (War)")
        if self.status == "finished":
            self._refuse("match_finished", "the match is over")
        seat.fast_forward = req.on
        self._ok(req, match=self.id)
        if self._fast_agreed():
            log.info("match %s: every seat agreed to fast-forward", self.id)
            self.fast_at = self._now
        else:
            self.fast_at = None
        self._broadcast([])

    def _fast_agreed(self) -> bool:
        return self.status == "active" and all(s.fast_forward or s.bot is not None
                                               for s in self.seats)

    def _fast_step(self) -> None:
        """Play up to :data:`FAST_FORWARD_STEP` default intents, then one snapshot each
        (the step's events are not sent: they are in the journal and the replay)."""
        self.fast_at = None
        if not self._fast_agreed():
            return
        for _ in range(FAST_FORWARD_STEP):
            movers = self.state.to_move()
            if self.status != "active" or not movers:
                break
            mover = movers[0]
            intent = self.state.default_intent(mover)
            if intent is None:
                break
            self.state.apply(mover, intent)
            self._journal("intent", mover, intent=intent, by="fast_forward")
        self._changed([], None)
        if self._fast_agreed():
            self.fast_at = self._now

    def _on_chat(self, req: cmd.Chat) -> None:
        seat = self.seat_of(req.session)
        if seat is None and req.session not in self.spectators:
            self._refuse("not_in_match", f"you neither sit in nor watch {self.id}")
        if seat is None and not self.spectator_chat.allow(self._now):
            # however many spectators there are, the seats (who must keep up with the
            # snapshots) get at most this many of their lines
            self._refuse("chat_rate_limited", "the spectators of this match say more than "
                         f"{self.rules.spectator_chat_rate:g} lines per second together")
        self._ok(req)
        msg = ev.Chat(match=self.id, seat=seat, name=req.name, text=req.text,
                      role="spectator" if seat is None else "player")
        muted = {s.session for s in self.seats if s.mute_spectators} if seat is None else set()
        for s in self.seats:
            if s.session is not None and s.bot is None and s.session not in muted:
                self._send(s.session, msg)
        if any(sid in self.connected for sid in self.spectators):
            self._fx.messages.append((SPECTATORS, msg))

    def _on_mute_spectators(self, req: cmd.MuteSpectators) -> None:
        seat = self.seats[self._require_seat(req)]
        seat.mute_spectators = req.on
        self._ok(req, match=self.id)

    # -- timers -------------------------------------------------------------

    def _on_tick(self, _: cmd.Tick) -> None:
        now = self._now
        if self.linger_until is not None and now >= self.linger_until:
            self._fx.close = True
            return
        if self.fast_at is not None and now >= self.fast_at:
            self._fast_step()
        if self.status == "waiting" and self.expires_at is not None and now >= self.expires_at:
            self._expire()
            return
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

    def _update_timers(self, acted: int | None) -> None:
        """Arm or clear each seat's turn timer and auto-play after a change.

        A seat's turn timer starts when it comes to move and restarts after each
        of its own intents; it stops while the seat has nothing to do.
        """
        now = self._now
        to_move = self.state.to_move() if self.status == "active" else ()
        for seat in self.seats:
            if seat.index in to_move:
                if self.turn_timer > 0 and (seat.turn_deadline is None or seat.index == acted):
                    seat.turn_deadline = now + self.turn_timer
                if self.game.auto_play and seat.auto_flip and seat.auto_at is None \
                        and self.fast_at is None:
                    seat.auto_at = now + self.flip_delay(seat)
            else:
                seat.turn_deadline = None
                seat.auto_at = None

    def _auto_flip(self, seat: SeatState) -> None:
        intent = self.state.default_intent(seat.index)
        if intent is None:
            return
        events = self.state.apply(seat.index, intent)
        self._journal("intent", seat.index, intent=intent, by="auto")
        self._changed(events, seat.index)

    def _timeout(self, seat: SeatState) -> None:
        """The seat's turn timer ran out: play its default intents, or forfeit it."""
        seat.timeouts += 1
        limit = self.rules.timeout_forfeit
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

    def _abandon(self, seat: SeatState) -> None:
        """The seat's grace period ran out: free it (waiting), a bot takes over, or
        it forfeits (the match's ``abandon`` rule)."""
        if self.status == "waiting":
            self._free(seat)
            return
        if seat.session is None or seat.bot is not None:
            return
        if not any(s.bot is None and s.session is not None and s is not seat
                   for s in self.seats):
            self._end_without_humans(seat)
            return
        if self.abandon == "bot":
            # The former player watches from now on, so that its session, when it
            # resumes, is sent the match and sees the bot in its seat.
            session = seat.session
            self._fx.members.append(Membership(session, seat.index, False))
            self.spectators[session] = None
            self._fx.writes.append(SaveWatcher(session, True))
            self._fx.members.append(Membership(session, None, True))
            seat.session = seat.account = seat.player = None
            seat.bot = self.rules.abandon_bot
            seat.name = f"{seat.name} ({seat.bot} bot)"
            self._fx.writes.append(SaveSeat(seat.record()))
            log.info("match %s: seat %d abandoned, bot %s takes over", self.id, seat.index,
                     seat.bot)
            self._presence(seat)
            self._broadcast([])
            return
        log.info("match %s: seat %d abandoned, forfeits", self.id, seat.index)
        events = self.state.forfeit(seat.index, "abandoned")
        self._journal("forfeit", seat.index, reason="abandoned", by="timer")
        self._changed(events, None)

    def _end_without_humans(self, seat: SeatState) -> None:
        """No human would be left: ``seat`` (the last one abandoned) forfeits with
        reason ``abandoned`` instead of passing to a bot, so that no match of bots
        alone plays on (and journals) with nobody at the table."""
        log.info("match %s: seat %d abandoned and no human is left; it forfeits", self.id,
                 seat.index)
        events = self.state.forfeit(seat.index, "abandoned")
        self._journal("forfeit", seat.index, reason="abandoned", by="timer")
        self._changed(events, None)

    def _expire(self) -> None:
        """A waiting match nobody joined within ``waiting_ttl``: its players are told
        (``match_expired``) and it is removed like a match every seat left."""
        log.info("match %s: nobody joined within %g s; expired", self.id,
                 self.rules.waiting_ttl)
        notice = Refusal("match_expired", f"nobody joined within {self.rules.waiting_ttl:g} "
                         "s; the match is gone", match=self.id).to_event()
        for seat in self.seats:
            if seat.session is not None:
                self._send(seat.session, notice)
                self._fx.members.append(Membership(seat.session, seat.index, False))
        for sid in list(self.spectators):
            self._send(sid, notice)
            self._stop_watching(sid)
        for seat in self.seats:
            seat.session, seat.name, seat.bot, seat.grace_deadline = None, None, None, None
        self._fx.writes.append(DeleteMatch())
        self.linger_until = self._now
        self.status = "finished"

    # -- changes ------------------------------------------------------------

    def _stop_watching(self, session: str) -> None:
        self._remember_spectators()
        del self.spectators[session]
        self._fx.writes.append(SaveWatcher(session, False))
        self._fx.members.append(Membership(session, None, False))

    def _free(self, seat: SeatState) -> None:
        """Empty a seat of a waiting match; end the match when no seat is taken."""
        if seat.session is not None:
            self._fx.members.append(Membership(seat.session, seat.index, False))
        seat.session, seat.name, seat.grace_deadline = None, None, None
        seat.account = seat.player = None
        seat.client_seed = seat.seen = None
        if any(s.taken for s in self.seats):
            self._fx.writes.append(SaveSeat(seat.record()))
            self._presence(seat)
            return
        log.info("match %s: every seat left before the start; removed", self.id)
        self._fx.writes.append(DeleteMatch())
        self.linger_until = self._now
        self.status = "finished"
        if any(sid in self.connected for sid in self.spectators):
            # spectators are told it is gone: a last snapshot, result "cancelled"
            self._fx.messages.append((SPECTATORS, self.snapshot(None, [])))

    def _journal(self, kind: str, seat: int, intent: dict[str, Any] | None = None,
                 reason: str | None = None, by: str = "seat") -> None:
        """Journal the change just applied to the engine as the next row (the task
        commits it before sending anything; see :meth:`rollback`)."""
        seq = self.seq + 1
        outcome = self.state.outcome()
        entry = journal_entry(seq, kind, seat, intent, reason, by, 0.0,
                              self.state.journal_digest(), None)
        finished = None if outcome is None else (outcome.winner, outcome.reason)
        if played(kind, by):   # as played_seats() counts the row
            self.played.add(seat)
        ratings: tuple[RatingChange, ...] = ()
        if outcome is not None and self.status != "finished" and self.rated:
            ratings = self._rate(outcome.winner)
        self._fx.writes.append(AppendJournal(entry, finished, ratings))
        self.seq = seq
        self._refresh_window_after(outcome is not None)
        log.debug("match %s: seq %d seat %d %s %s by %s", self.id, seq, seat, kind,
                  intent if intent is not None else reason or "", by)
        if outcome is not None and self.status != "finished":
            self.status = "finished"
            self.linger_until = self._now + self.rules.finished_linger
            for s in self.seats:
                s.turn_deadline = s.auto_at = s.grace_deadline = None
            log.info("match %s finished after seq %d: winner %s (%s)", self.id, seq,
                     outcome.winner, outcome.reason)

    def _rate(self, winner: int | None) -> tuple[RatingChange, ...]:
        """The rating changes of this rated match's result (none when it was aborted:
        a seat made no intent of its own), remembered for ``result.ratings``."""
        if self.played < set(range(len(self.seats))) or self.rater is None:
            log.info("match %s: rated but aborted (seats %s played); ratings unchanged",
                     self.id, sorted(self.played))
            self.rating_result = []
            return ()
        changes = self.rater(winner)
        self.rating_result = [
            {"seat": c.seat, "name": self.seats[c.seat].name or "",
             "rating_before": c.before.rating, "rating_after": c.after.rating,
             "rd_before": c.before.rd, "rd_after": c.after.rd,
             "volatility_after": c.after.volatility, "change": c.delta}
            for c in changes]
        return changes

    def result_of(self, outcome: Any) -> dict[str, Any]:
        """``snapshot.result``: the outcome, and for a rated match its rating changes."""
        result = outcome.to_dict()
        if self.rated:
            result["rated"] = True
            result["ratings"] = self.rating_result
        return result

    def _refresh_window_after(self, finished: bool) -> None:
        """Record every seat's legal list after the journal row just made (the seq
        rule needs each change, not only the ones that were broadcast)."""
        if finished:   # the status turns finished right after: nobody may act
            self.window.update(self.seq, lambda seat: [])
            self._window_at = (self.seq, "finished")
        else:
            self._refresh_window()

    def _refresh_window(self) -> None:
        """Bring :attr:`window` up to the current seq and status (cheap when it is)."""
        at = (self.seq, self.status)
        if at == self._window_at:
            return
        active = self.status == "active"
        self.window.update(self.seq, self.state.legal if active else lambda seat: [])
        self._window_at = at

    def legal_of(self, seat: int) -> list[dict[str, Any]]:
        """The seat's legal intents now (the window's copy: computed once per change)."""
        self._refresh_window()
        return self.window.legal(seat)

    def _changed(self, events: list[Event], acted: int | None,
                 first: str | None = None) -> None:
        self.history.add(self.seq, events)
        self._update_timers(acted)
        self._broadcast(events, first)
        if self.status == "finished":
            self._fx.stop_bots = True

    # -- output -------------------------------------------------------------

    def _send(self, session: str, msg: ev.Event) -> None:
        if session in self.connected:
            self._fx.messages.append((session, msg))

    def _tell_audience(self, msg: ev.Event, but: str | None) -> None:
        """``msg`` to every connected seated session (in seat order) but ``but``, then
        to the spectators."""
        for seat in self.seats:
            if seat.session is not None and seat.bot is None and seat.session != but:
                self._send(seat.session, msg)
        if any(sid in self.connected for sid in self.spectators):
            self._fx.messages.append((SPECTATORS, msg))

    def snapshot(self, seat: int | None, events: list[Event],
                 cut: bool | None = None) -> ev.Snapshot:
        """The ``snapshot`` for ``seat`` (None: spectator), through the projection.
        ``cut``: older events this seat missed were left out of ``events``."""
        return snapshots.build(self, seat, snapshots.parts(self, events), cut)

    def _send_seat(self, seat: SeatState, events: list[Event], cut: bool | None = None,
                   shared: snapshots.SnapshotParts | None = None) -> None:
        """Send the seat's player its snapshot (if connected) and remember its seq;
        ``shared``: the parts of this change's snapshots, built already."""
        if seat.session is not None and seat.session in self.connected:
            if shared is None:
                shared = snapshots.parts(self, events)
            self._fx.messages.append((seat.session, snapshots.build(self, seat.index,
                                                                    shared, cut)))
            seat.seen = self.seq

    def _broadcast(self, events: list[Event], first: str | None = None) -> None:
        """Every seat its own snapshot, bots their view, spectators the public one.

        With ``first`` (the requester, seated here) only its own snapshot goes into
        these effects; the rest goes into ``effects.later``, which the task builds
        and sends after two scheduler passes, before it hands the core anything else
        (the requester's reply is not queued behind the other snapshots).
        """
        mine = [s for s in self.seats if s.human(first)] if first is not None else []
        if not mine:
            self._broadcast_all(events, None)
            return
        assert first is not None
        shared = snapshots.parts(self, events)
        for seat in mine:
            self._send_seat(seat, events, shared=shared)
        self._fx.later = self._deferred(events, first, self._now, shared)

    def _deferred(self, events: list[Event], skip: str, now: float,
                  shared: snapshots.SnapshotParts) -> Callable[[], Effects]:
        """The rest of the broadcast, built later from the same ``shared`` parts
        (nothing reaches the core in between, so they still hold, and so does the
        deadline of the command's own effects: a broadcast arms no timer)."""
        def later() -> Effects:
            self._now = now
            self._fx = fx = Effects()
            self._broadcast_all(events, skip, shared)
            fx.deadline = self._deadline
            return fx

        return later

    def _broadcast_all(self, events: list[Event], skip: str | None,
                       shared: snapshots.SnapshotParts | None = None) -> None:
        """:meth:`_broadcast` to everyone but ``skip`` (whose seats had theirs);
        ``shared``: this change's snapshot parts when built already."""
        active = self.status == "active"
        for seat in self.seats:
            if seat.bot is not None:
                legal = self.legal_of(seat.index) if active else []
                pace = self.rules.auto_flip_delay if all(s.bot for s in self.seats) else 0.0
                self._fx.bots.append(BotTurn(
                    seat.index, seat.bot, self.seq, self.state.view(seat.index), legal, pace,
                    self.state.default_intent(seat.index) if legal else None))
            elif (seat.session is not None and seat.session != skip
                  and seat.session in self.connected):
                if shared is None:
                    shared = snapshots.parts(self, events)
                self._send_seat(seat, events, shared=shared)
        if self.spectators and any(sid in self.connected for sid in self.spectators):
            if shared is None:
                shared = snapshots.parts(self, events)
            self._fx.messages.append((SPECTATORS, snapshots.build(self, None, shared)))

    def _presence(self, seat: SeatState, grace: float | None = None) -> None:
        msg = ev.Presence(match=self.id, seat=seat.index, name=seat.name,
                          connected=self._seat_connected(seat), grace=grace)
        self._tell_audience(msg, seat.session)

    _HANDLERS: ClassVar[dict[type, Callable[[MatchCore, Any], None]]] = {
        cmd.Start: _on_start, cmd.Tick: _on_tick, cmd.Detach: _on_detach,
        cmd.Attach: _on_attach, cmd.PlayIntent: _on_intent, cmd.BotIntent: _on_bot_intent,
        cmd.Join: _on_join, cmd.Watch: _on_watch, cmd.Leave: _on_leave,
        cmd.Resign: _on_resign, cmd.SetAutoFlip: _on_auto_flip, cmd.Chat: _on_chat,
        cmd.SetFastForward: _on_fast_forward,
        cmd.MuteSpectators: _on_mute_spectators,
    }
