"""The lobby: sessions, the match directory, matchmaking queues, request routing.

Requests that are about one match are handed to that match's task (its inbox);
everything else (games, matches, create, queue, unqueue) is answered here. All
of it runs in the server's one trio thread; the lobby never touches a match's
engine state.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from engine.core import RuleError
from engine.registry import game_names, get_game
from protocol import events as ev
from protocol.errors import Refusal, RemoteProtocolError
from server import tokens
from server.config import ServerConfig
from server.match import commands as cmd
from server.match.bots import new_strategy, strategy_names
from server.match.task import Match, MatchClosed, MatchContext
from server.replay import ReplayError
from server.session import Outbox, Session
from server.store import Store

log = logging.getLogger("cardserver.lobby")

#: Most summaries in one ``matches`` reply (waiting first, then newest), so the
#: reply stays far below the client's frame limit.
MAX_LISTED = 1000


class Lobby:
    """Sessions, matches and queues of one server."""

    def __init__(self, config: ServerConfig, store: Store) -> None:
        self.config = config
        self.store = store
        self.sessions: dict[str, Session] = {}
        self.matches: dict[str, Match] = {}
        #: game -> waiting entries (session, normalized options), oldest first
        self.queues: dict[str, list[tuple[Session, dict[str, Any]]]] = {}
        self._nursery: trio.Nursery | None = None
        self.ctx = MatchContext(
            store=store, config=config,
            bot_limiter=trio.CapacityLimiter(config.bot_threads),
            make_strategy=lambda name: new_strategy(name, config.bot_time_budget),
            on_closed=self._match_closed,
        )

    # -- life cycle -------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        """Run match tasks in ``nursery``; rebuild every unfinished stored match."""
        self._nursery = nursery
        for rec in self.store.unfinished_matches():
            try:
                match = Match.restore(self.ctx, rec, self._session_for)
            except (ReplayError, RuleError) as exc:
                log.error("match %s cannot be restored: %s", rec.id, exc)
                continue
            self.matches[match.id] = match
            await nursery.start(match.run)
            log.info("match %s restored at seq %d (%s, %s)", match.id, match.seq, match.game,
                     match.status)

    def _session_for(self, session_id: str, name: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = Session(session_id, name)
        return session

    def _match_closed(self, match: Match) -> None:
        if self.matches.get(match.id) is match:
            del self.matches[match.id]
        for session, seat in match.members():
            if seat is None:
                session.watching.discard(match.id)
            else:
                session.seats.discard((match.id, seat))
            self._forget_if_idle(session)

    def _forget_if_idle(self, session: Session) -> None:
        if not session.connected and not session.seats and not session.watching:
            self.sessions.pop(session.id, None)

    # -- sessions ---------------------------------------------------------

    def new_session(self, name: str) -> tuple[Session, str]:
        """A new session and its resume token (only the token's hash is stored).

        Raises:
            StoreError: the store refused it.
        """
        token = tokens.new_token()
        session = Session(tokens.new_session_id(), name)
        self.store.create_session(session.id, tokens.hash_token(token), name, time.time())
        self.sessions[session.id] = session
        return session, token

    def resume(self, token: str) -> Session:
        """The session a resume token belongs to.

        Raises:
            Refusal: ``bad_token`` for an unknown or expired token.
        """
        rec = self.store.find_session(tokens.hash_token(token))
        now = time.time()
        if rec is None or now - rec.last_seen > self.config.session_ttl:
            raise Refusal("bad_token", "unknown or expired resume token", "resume")
        self.store.touch_session(rec.id, now)
        session = self._session_for(rec.id, rec.name)
        session.name = rec.name
        return session

    async def attach(self, session: Session, client: Outbox,
                     replace: Any = None) -> None:
        """Make ``client`` the session's connection and refresh its matches.

        A connection the session had before is closed (``replace(old)`` is called).
        """
        old = session.client
        session.client = client
        if old is not None and old is not client and replace is not None:
            replace(old)
        for match_id in sorted(session.match_ids()):
            match = self.matches.get(match_id)
            if match is not None:
                try:
                    await match.submit(cmd.Attach(session.id), session)
                except MatchClosed:
                    pass

    def detach(self, session: Session, client: Outbox) -> None:
        """The connection ``client`` of ``session`` is gone (synchronous, never fails)."""
        if session.client is not client:
            return
        session.client = None
        self._unqueue(session, None)
        for match_id in session.match_ids():
            match = self.matches.get(match_id)
            if match is not None:
                match.detach(session)
        try:
            self.store.touch_session(session.id, time.time())
        except Exception:
            log.exception("cannot record the end of session %s", session.id)
        self._forget_if_idle(session)

    # -- requests ---------------------------------------------------------

    async def handle(self, session: Session, msg: dict[str, Any]) -> None:
        """Answer one validated request from ``session`` (replies go to its outbox):
        one look-up in :data:`LOBBY_ROUTES`, else in :data:`MATCH_COMMANDS` (handed to
        the match's task), else refused.

        Raises:
            Refusal: the request is refused; RemoteProtocolError: it is not a
                request (the caller sends either as an error).
        """
        mtype = msg["type"]
        route = LOBBY_ROUTES.get(mtype)
        if route is not None:
            await route(self, session, msg.get("id"), msg)
        elif mtype in MATCH_COMMANDS:
            await self._to_match(session, msg)
        elif mtype == "hello":
            raise RemoteProtocolError("bad_message", "hello is only the first message", "type")
        else:
            raise RemoteProtocolError("unknown_type", f"unknown message type {mtype!r}", "type")

    async def _games(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        self._ok(session, rid, games=[get_game(name).describe() for name in game_names()])

    async def _matches(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        self._list(session, rid, msg.get("game"), msg.get("status"))

    async def _unqueue_request(self, session: Session, rid: int | None,
                               msg: dict[str, Any]) -> None:
        self._unqueue(session, msg.get("game"))
        self._ok(session, rid)

    @staticmethod
    def _ok(session: Session, rid: int | None, **fields: Any) -> None:
        session.push(ev.Ok(**fields, id=rid))

    def _list(self, session: Session, rid: int | None, game: str | None,
              status: str | None) -> None:
        chosen = [m for m in self.matches.values()
                  if (game is None or m.game == game) and (status is None or m.status == status)]
        order = {"waiting": 0, "active": 1, "finished": 2}
        chosen.sort(key=lambda m: (order[m.status], -m.created))
        summaries = [m.summary() for m in chosen[:MAX_LISTED]]
        queues = {name: len(self.queues.get(name, [])) for name in game_names()}
        self._ok(session, rid, matches=summaries, queues=queues)

    @staticmethod
    def _game_and_options(msg: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        try:
            game = get_game(msg["game"])
        except RuleError as exc:
            raise Refusal(exc.code, str(exc), "game") from None
        try:
            options = game.normalize_options(msg.get("options"))
        except RuleError as exc:
            raise Refusal(exc.code, str(exc), "options") from None
        return game.name, options

    def _check_capacity(self) -> None:
        if len(self.matches) >= self.config.max_matches:
            raise Refusal("not_supported",
                                f"the server holds its maximum of {self.config.max_matches} "
                                "matches; try again later")

    async def _create(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        game, options = self._game_and_options(msg)
        bot = msg.get("bot")
        if bot is not None and bot not in strategy_names():
            raise Refusal("bad_option", f"no strategy {bot!r}; known: "
                                f"{', '.join(strategy_names())}", "bot")
        seat = msg.get("seat", 0)
        turn_timer = msg.get("turn_timer", self.config.turn_timer)
        if turn_timer > self.config.max_turn_timer:
            raise Refusal("bad_option", f"turn_timer must be <= "
                                f"{self.config.max_turn_timer}", "turn_timer")
        self._check_capacity()
        match = Match.create(self.ctx, tokens.new_match_id(), game, options, turn_timer,
                             msg.get("abandon", "forfeit"), tokens.new_seed(), tokens.new_salt())
        match.seat_session(seat, session)
        if bot is not None:
            match.seat_bot(1 - seat, bot)
        await self._launch(match)
        log.info("match %s created: %s %s by %s%s", match.id, game, options, session.id,
                 f" against bot {bot}" if bot else "")
        self._ok(session, rid, match=match.id, seat=seat)
        await self._run(match)

    async def _launch(self, match: Match) -> None:
        match.store_new()
        self.matches[match.id] = match

    async def _run(self, match: Match) -> None:
        assert self._nursery is not None, "lobby not started"
        await self._nursery.start(match.run)

    async def _queue(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        game, options = self._game_and_options(msg)
        waiting = self.queues.setdefault(game, [])
        if session.id in {s.id for s, _ in waiting}:
            raise Refusal("already_seated", f"you already wait in the {game} queue", "game")
        partner = next((i for i, (s, o) in enumerate(waiting) if o == options), None)
        if partner is None:
            waiting.append((session, options))
            session.queued.add(game)
            self._ok(session, rid, game=game)
            return
        self._check_capacity()
        other, _ = waiting.pop(partner)
        other.queued.discard(game)
        match = Match.create(self.ctx, tokens.new_match_id(), game, options,
                             self.config.turn_timer, "forfeit", tokens.new_seed(),
                             tokens.new_salt())
        first = secrets.randbelow(2)
        match.seat_session(first, other)
        match.seat_session(1 - first, session)
        await self._launch(match)
        log.info("match %s paired from the %s queue: %s vs %s", match.id, game, other.id,
                 session.id)
        self._ok(session, rid, game=game)
        await self._run(match)

    def _unqueue(self, session: Session, game: str | None) -> None:
        for name in list(session.queued if game is None else {game} & session.queued):
            self.queues[name] = [(s, o) for s, o in self.queues.get(name, []) if s is not session]
            session.queued.discard(name)

    async def _to_match(self, session: Session, msg: dict[str, Any]) -> None:
        match = self.matches.get(msg["match"])
        if match is None:
            raise Refusal("no_such_match", f"no match {msg['match']!r}", "match")
        command = MATCH_COMMANDS[msg["type"]](session, msg)
        try:
            await match.submit(command, session)
        except MatchClosed:
            raise Refusal("no_such_match", f"match {match.id} is closed", "match") from None


_Route = Callable[[Lobby, Session, "int | None", dict[str, Any]], Awaitable[None]]

#: Requests the lobby answers itself: message type -> handler.
LOBBY_ROUTES: dict[str, _Route] = {
    "games": Lobby._games,
    "matches": Lobby._matches,
    "create": Lobby._create,
    "queue": Lobby._queue,
    "unqueue": Lobby._unqueue_request,
}

#: Requests about one match (``msg["match"]``): message type -> the command its task runs.
MATCH_COMMANDS: dict[str, Callable[[Session, dict[str, Any]], cmd.Request]] = {
    "intent": lambda s, m: cmd.PlayIntent(s.id, m.get("id"), seq=m["seq"], intent=m["intent"]),
    "join": lambda s, m: cmd.Join(s.id, m.get("id"), name=s.name, seat=m.get("seat")),
    "watch": lambda s, m: cmd.Watch(s.id, m.get("id")),
    "leave": lambda s, m: cmd.Leave(s.id, m.get("id")),
    "resign": lambda s, m: cmd.Resign(s.id, m.get("id")),
    "auto_flip": lambda s, m: cmd.SetAutoFlip(s.id, m.get("id"), on=m["on"]),
    "chat": lambda s, m: cmd.Chat(s.id, m.get("id"), name=s.name, text=m["text"]),
}
