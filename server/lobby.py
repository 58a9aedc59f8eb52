"""The lobby: sessions, the match directory, matchmaking queues, request routing.

Requests that are about one match are handed to that match's task (its inbox);
everything else (games, matches, create, queue, unqueue) is answered here. All
of it runs in the server's one trio thread; the lobby never touches a match's
engine state.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from engine import fairness
from engine.core import RuleError
from engine.registry import game_names, get_game
from protocol import events as ev
from protocol.errors import LocalProtocolError, ProtocolError, Refusal, RemoteProtocolError
from server import ratings, records, tokens
from server.account_requests import ACCOUNT_ROUTES, refusal
from server.accounts import AccountError, Accounts
from server.cluster.errors import redis_errors
from server.cluster.sessions import SessionStore, StoreSessions
from server.config import ServerConfig
from server.direct import DIRECT
from server.listing import Listing
from server.match import commands as cmd
from server.match.bots import BotPool, strategy_docs, strategy_names
from server.match.commit import AwaitedCommit, GroupCommit
from server.match.task import UNAVAILABLE_MESSAGE, Match, MatchClosed, MatchContext
from server.profiles import player_extras
from server.quotas import NO_ADDRESS, Counts, Quotas
from server.replay import ReplayError
from server.session import Outbox, Session
from server.store import AccountRecord, DamagedMatch, JournalEntry, MatchRecord, Store

if TYPE_CHECKING:  # the cluster code (and coredis) is loaded by cluster mode alone
    from server.cluster.adoption import Adoption
    from server.cluster.directory import Directory
    from server.cluster.journal import RedisJournal
    from server.cluster.matchmaking import Matchmaker, Partner
    from server.cluster.node import ClusterNode
    from server.cluster.relay import Relay

log = logging.getLogger("cardserver.lobby")

#: Seconds between two looks at the rated queues (their windows widen meanwhile).
PAIRING_INTERVAL = 1.0
#: Finished matches whose last snapshot a resumed session is sent (the newest ones).
RESUME_FINISHED = 10
#: The refusal of what cluster mode does not offer (docs/cluster.md, "Accounts").
CLUSTER_ONLY_GUESTS = "not available in cluster mode"


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player in a matchmaking queue, and the seed of the match it will play."""

    session: Session
    options: dict[str, Any]
    client_seed: str
    seed: int
    salt: str


class Lobby:
    """Sessions, matches and queues of one server."""

    def __init__(self, config: ServerConfig, store: Store) -> None:
        self.config = config
        self.store = store
        #: this node of a cluster (None: a single server); set before :meth:`start`
        self.cluster: ClusterNode | None = None
        #: in cluster mode (set at :meth:`start`): the relay to other nodes' matches,
        #: the cluster-wide listing and the cross-node casual queues
        self.relay: Relay | None = None
        self.directory: Directory | None = None
        self.matchmaker: Matchmaker | None = None
        #: where sessions and resume tokens live (Redis in cluster mode: set by start)
        self.session_store: SessionStore = StoreSessions(store, config.session_ttl)
        #: cluster mode: the match journals in Redis, and adoption (set by start)
        self.journal: RedisJournal | None = None
        self.adoption: Adoption | None = None
        self.sessions: dict[str, Session] = {}
        self.matches: dict[str, Match] = {}
        #: game -> the players waiting in the casual queue, oldest first
        self.queues: dict[str, list[Waiting]] = {}
        #: game -> rated queue, oldest first (see :func:`server.ratings.pair_seekers`)
        self.rated_queues: dict[str, list[ratings.Seeker]] = {}
        #: (game, session id) -> a rated seeker's client seed and pre-drawn match seed
        self.rated_seeds: dict[tuple[str, str], Waiting] = {}
        self.accounts = Accounts(store)
        self._someone_rated = trio.Event()
        self._nursery: trio.Nursery | None = None
        #: stored matches skipped at start: id -> why (see :meth:`start`)
        self.damaged: dict[str, str] = {}
        #: records are replayed in worker threads, a few at a time (a flood of
        #: ``record`` requests waits here instead of taking every core)
        self._record_threads = trio.CapacityLimiter(records.RECORD_THREADS)
        self.quotas = Quotas(config, trio.current_time)
        self.listing = Listing()
        self.ctx = MatchContext(
            store=store, config=config,
            bots=BotPool(config.bot_workers, config.bot_queue, config.bot_time_budget,
                         config.bot_deadline, config.bot_nice),
            on_closed=self._match_closed,
            commits=GroupCommit(store, DIRECT),
            sessions=self.sessions,
            admit=self._admit,
            on_left=self._forget_if_idle,
        )

    # -- life cycle -------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        """Run match tasks (and the bots' worker pool) in ``nursery``; rebuild every
        unfinished stored match; pair the rated queues once a second."""
        self._nursery = nursery
        await nursery.start(self.ctx.bots.run)
        nursery.start_soon(self._pairing_loop)
        if self.cluster is not None:
            await self._start_cluster(nursery, self.cluster)
            return
        assert self.ctx.commits is not None
        nursery.start_soon(self.ctx.commits.run)
        for match_id in self.store.unfinished_match_ids():
            match = self._restore(match_id)
            if match is None:
                continue
            self.matches[match.id] = match
            self.listing.changed()
            await nursery.start(match.run)
            log.info("match %s restored at seq %d (%s, %s)", match.id, match.seq, match.game,
                     match.status)
        if self.damaged:
            log.error("%d stored match(es) skipped as damaged: %s", len(self.damaged),
                      ", ".join(sorted(self.damaged)))
        nursery.start_soon(self._sweep_sessions)

    async def _start_routing(self, nursery: trio.Nursery) -> None:
        """Cluster mode: run the relay (listening before anything is served), the
        lobby index's updates and the queues' background removals in ``nursery``."""
        from server.cluster.directory import Directory
        from server.cluster.matchmaking import Matchmaker
        from server.cluster.relay import Relay

        assert self.cluster is not None
        self.relay = Relay(self.cluster, self)
        self.relay.on_paired = self._paired_elsewhere
        self.directory = Directory(self.cluster, self.matches)
        self.matchmaker = Matchmaker(self.cluster)
        self.matchmaker.start(nursery)
        await nursery.start(self.relay.run)
        nursery.start_soon(self.directory.run)

    async def _start_cluster(self, nursery: trio.Nursery, node: ClusterNode) -> None:
        """Cluster mode: sessions and match journals in Redis, the awaited group
        commit, and adoption (this node's previous incarnation's matches first);
        the relay and the cluster-wide lobby and queues before anything else."""
        from server.cluster.adoption import Adoption
        from server.cluster.journal import RedisJournal
        from server.cluster.sessions import RedisSessions

        await self._start_routing(nursery)
        self.journal = RedisJournal(node.redis, node.name)
        self.session_store = RedisSessions(node.redis, node.name, self.config.session_ttl,
                                           nursery)
        self.ctx.commits = AwaitedCommit(self.store, self.journal, DIRECT)
        self.ctx.on_moved = partial(self.close_session, reason="match_moved",
                                    message="a match of this session is now run by another "
                                    "node: resume to reach it")
        nursery.start_soon(self.ctx.commits.run)
        self.adoption = Adoption(node, self.journal, self)
        await self.adoption.start(nursery)
        nursery.start_soon(self._keep_sessions)

    async def _keep_sessions(self) -> None:
        """Cluster mode: every ``session_sweep_interval``, mark every session this
        node holds as seen (Redis expires the others ``session_ttl`` after their
        last sight, so no sweep deletes them)."""
        while True:
            await trio.sleep(self.config.session_sweep_interval)
            try:
                await self.session_store.touch(list(self.sessions), time.time())
            except Exception as exc:
                log.warning("cannot touch this node's sessions: %s", exc)

    def local_matches(self) -> dict[str, int]:
        """Cluster mode: every match this node runs -> the epoch it owns it at."""
        return {m.id: m.epoch for m in self.matches.values() if not m.closed}

    async def adopt_match(self, rec: MatchRecord, rows: list[JournalEntry],
                          epoch: int) -> None:
        """Cluster mode: run a match taken over from a dead node (its rows replayed,
        every digest checked), owned at ``epoch``.

        Raises:
            ReplayError, RuleError, ...: the rows do not replay.
        """
        assert self._nursery is not None
        match = Match.restore(self.ctx, rec, self._session_for, rows, epoch)
        self.matches[match.id] = match
        self.listing.changed()
        await self._nursery.start(match.run)

    def fence_off(self, match_id: str) -> None:
        """Cluster mode: another node owns ``match_id`` now: stop it here."""
        match = self.matches.get(match_id)
        if match is not None:
            match.fence_off()

    async def _sweep_sessions(self) -> None:
        """Every ``session_sweep_interval``: delete the stored sessions idle past
        ``session_ttl`` (their tokens are dead) that nothing here holds."""
        while True:
            try:
                gone = self.store.delete_idle_sessions(time.time() - self.config.session_ttl,
                                                       keep=set(self.sessions))
                if gone:
                    log.info("deleted %d sessions idle for more than %g s", gone,
                             self.config.session_ttl)
            except Exception:
                log.exception("cannot delete idle sessions")
            await trio.sleep(self.config.session_sweep_interval)

    def _restore(self, match_id: str) -> Match | None:
        """The stored match rebuilt, or None when its rows are damaged (logged and
        kept in :attr:`damaged`; the other matches are restored all the same)."""
        try:
            rec = self.store.load_match(match_id)
            if rec is None:
                return None
            return Match.restore(self.ctx, rec, self._session_for)
        except (DamagedMatch, ReplayError, RuleError, LookupError, ValueError, TypeError) as exc:
            # a row the code cannot read or the engine refuses (a seat out of the
            # game's range, a bad seed, a damaged page): skip this match, not the server
            reason = exc.reason if isinstance(exc, DamagedMatch) else f"{type(exc).__name__}: {exc}"
            self.damaged[match_id] = reason
            log.error("match %s is damaged and was not restored: %s", match_id, reason)
            return None

    def _session_for(self, session_id: str, name: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = Session(session_id, name,
                                                          self._account_of(session_id))
        return session

    def _account_of(self, session_id: str) -> AccountRecord | None:
        if self.cluster is not None:
            return None  # cluster mode: guests only
        account = self.store.session_account(session_id)
        return None if account is None else self.store.account(account)

    def _match_closed(self, match: Match) -> None:
        if self.relay is not None:
            self.relay.closed(match)
        if self.matches.get(match.id) is match:
            del self.matches[match.id]
            self.listing.changed()
        for session, seat in match.members():
            if seat is None:
                session.watching.discard(match.id)
            else:
                session.seats.discard((match.id, seat))
            self._forget_if_idle(session)

    def _forget_if_idle(self, session: Session) -> None:
        """Forget the session of this id once it has no connection, seat or match
        it watches (looked up by id: the registered one decides)."""
        registered = self.sessions.get(session.id)
        if registered is None:
            return
        if not registered.connected and not registered.seats and not registered.watching:
            del self.sessions[session.id]
            self.quotas.forget(session.id)

    # -- sessions ---------------------------------------------------------

    async def authenticate(self, name: str, auth: dict[str, Any] | None,
                           address: str) -> tuple[str, AccountRecord | None, str | None]:
        """Check a hello's ``name`` and ``auth``: the name to use (NFC), the account
        it logs in as (None: a guest, whose name must be free) and the id of the API
        token it logged in with (None: a password, or a guest).

        Raises:
            Refusal: ``bad_name``, ``name_taken`` (a guest with a registered name),
                ``bad_credentials``, ``rate_limited``; RemoteProtocolError:
                ``bad_message`` (``auth`` with neither or both of its fields).
        """
        if auth is not None and self.cluster is not None:
            raise Refusal("not_supported", f"accounts are {CLUSTER_ONLY_GUESTS}", "auth")
        try:
            if auth is None:
                return self.accounts.check_guest_name(name), None, None
            if ("password" in auth) == ("api_token" in auth):
                raise RemoteProtocolError("bad_message", "auth holds exactly one of password "
                                          "or api_token", "auth")
            token_id = None
            if "password" in auth:
                account = await self.accounts.login_password(name, auth["password"], address)
            else:
                account, token_id = await self.accounts.login_token(name, auth["api_token"],
                                                                    address)
        except AccountError as exc:
            raise refusal(exc) from None
        log.info("%s logged in as account %r%s", address, account.name,
                 f" with API token {token_id}" if token_id else "")
        return account.name, account, token_id

    def _live(self, session_id: str) -> bool:
        session = self.sessions.get(session_id)
        return session is not None and session.connected

    async def new_session(self, name: str, account: AccountRecord | None = None,
                          api_token: str | None = None,
                          address: str = NO_ADDRESS) -> tuple[Session, str]:
        """A new session and its resume token (only the token's hash is stored);
        with ``account``, logged in as it (and named as the account is), through
        the API token ``api_token`` (its id) if given.

        Args:
            address: the client's address (the host part of its peer).

        Raises:
            Refusal: ``too_many_handshakes`` (the address's handshake limits);
                ``unavailable`` (cluster mode: Redis did not store it).
            StoreError: the store refused it.
        """
        self.quotas.admit_handshake(address, self._live)
        if account is not None:
            name = account.name
        token = tokens.new_token()
        session = Session(tokens.new_session_id(), name, account)
        try:
            await self.session_store.create(session.id, tokens.hash_token(token), name,
                                            time.time())
        except (*redis_errors(), OSError, trio.TooSlowError) as exc:
            raise _unavailable("hello") from exc
        if account is not None:
            self.store.link_session(session.id, account.id, api_token)
        self.sessions[session.id] = session
        self.quotas.bind(session.id, address)
        return session, token

    async def resume(self, token: str, address: str = NO_ADDRESS) -> Session:
        """The session a resume token belongs to (in cluster mode: of any node).

        Raises:
            Refusal: ``too_many_handshakes`` (the address's handshake limits);
                ``bad_token`` for an unknown or expired token; ``unavailable``
                (cluster mode: Redis did not answer).
        """
        self.quotas.admit_handshake(address, self._live)
        try:
            rec = await self.session_store.find(tokens.hash_token(token), time.time())
        except (*redis_errors(), OSError, trio.TooSlowError) as exc:
            raise _unavailable("resume") from exc
        if rec is None:
            raise Refusal("bad_token", "unknown or expired resume token", "resume")
        session = self._session_for(rec.id, rec.name)
        session.name = rec.name
        session.account = self._account_of(rec.id)
        self.quotas.bind(session.id, address)
        return session

    def reply(self, session: Session, rid: int | None, **fields: Any) -> None:
        """Answer a request of ``session`` with ``ok`` and ``fields``."""
        self._ok(session, rid, **fields)

    def close_session(self, session: Session, reason: str, message: str) -> None:
        """Close the session's connection after what is queued (``bye reason``)."""
        close = getattr(session.client, "close_with_bye", None)
        if close is not None:
            close(reason, message)

    async def attach(self, session: Session, client: Outbox,
                     replace: Any = None) -> None:
        """Make ``client`` the session's connection and refresh its matches.

        A connection the session had before is closed (``replace(old)`` is called).
        """
        old = session.client
        session.client = client
        if old is not None and old is not client and replace is not None:
            replace(old)
        matches = [self.matches[m] for m in sorted(session.match_ids()) if m in self.matches]
        # A finished match stays for --finished-linger seconds; a resume is sent only
        # the newest RESUME_FINISHED of those (a busy bot may have finished hundreds).
        finished = sorted((m for m in matches if m.status == "finished"),
                          key=lambda m: m.created, reverse=True)
        skipped = {m.id for m in finished[RESUME_FINISHED:]}
        for match in matches:
            if match.id not in skipped:
                await match.attach(session)
        if self.relay is not None:
            try:
                await self.relay.attached(session)  # and the matches other nodes run
            except redis_errors() as exc:
                log.warning("session %s: cannot look up its matches on other nodes: %s",
                            session.id, exc)

    def detach(self, session: Session, client: Outbox) -> None:
        """The connection ``client`` of ``session`` is gone (synchronous, never fails)."""
        if session.client is not client:
            return
        session.client = None
        if self.matchmaker is not None:
            self.matchmaker.leave_soon(session.id, session.queued)
        self._unqueue(session, None)
        if self.relay is not None:
            self.relay.detached(session)  # the owners of its other nodes' matches
        for match_id in session.match_ids():
            match = self.matches.get(match_id)
            if match is not None:
                match.detach(session)
        self.session_store.touch_soon(session.id, time.time())
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
        if self.cluster is not None and mtype in CLUSTER_UNSUPPORTED:
            raise Refusal("not_supported", f"{mtype} is {CLUSTER_ONLY_GUESTS}", "type")
        route = LOBBY_ROUTES.get(mtype)
        if route is None and mtype not in MATCH_COMMANDS:
            if mtype == "hello":
                raise RemoteProtocolError("bad_message", "hello is only the first message",
                                          "type")
            raise RemoteProtocolError("unknown_type", f"unknown message type {mtype!r}", "type")
        try:
            if route is not None:
                await route(self, session, msg.get("id"), msg)
            else:
                await self._to_match(session, msg)
        except redis_errors() as exc:  # cluster mode only
            log.warning("request %s from %s: Redis failed: %s", mtype, session.id, exc)
            refusal = _unavailable("type")
            refusal.match = msg.get("match")
            raise refusal from None

    def handle_nowait(self, session: Session, event: ev.Event) -> bool:
        """Answer ``event`` as :meth:`handle` would, if that needs no wait: an
        ``intent`` for a match of this node that can take it at once
        (:meth:`Match.submit_nowait`). False, with nothing done, for anything else
        (await :meth:`handle` then).

        Raises:
            Refusal: as :meth:`handle` (``no_such_match``).
        """
        if event.TYPE != "intent":
            return False
        match_id = event.match   # type: ignore[attr-defined]
        match = self.matches.get(match_id)
        if match is None:
            if self.relay is not None:
                return False   # another node's match, or none: the relay awaits
            raise _no_such_match(match_id)
        try:
            # MATCH_COMMANDS["intent"] of the event's fields, without its wire map
            return match.submit_nowait(cmd.play_intent(
                session.id, event.id, True, event.seq, event.intent),  # type: ignore[attr-defined]
                session)
        except MatchClosed as exc:
            raise exc.refusal() from None

    async def _games(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        self._ok(session, rid, games=[get_game(name).describe() for name in game_names()],
                 bots=[{"name": name, "doc": doc} for name, doc in strategy_docs().items()])

    async def _matches(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        game = msg.get("game")
        if game is not None and game not in game_names():
            raise Refusal("no_such_game", f"no game named {game!r}; known: "
                          f"{', '.join(game_names())}", "game")
        if self.directory is not None:
            await self._list_cluster(session, rid, game, msg.get("status"),
                                     msg.get("limit") or self.config.list_limit,
                                     msg.get("cursor"))
            return
        self._list(session, rid, game, msg.get("status"),
                   msg.get("limit") or self.config.list_limit, msg.get("cursor"))

    async def _records(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        """One page of finished matches, newest first (``before``: the last page's cursor)."""
        before = None
        if msg.get("before") is not None:
            try:
                cursor = records.Cursor.decode(msg["before"])
            except ValueError as exc:
                raise Refusal("bad_option", str(exc), "before") from None
            before = (cursor.finished, cursor.match)
        limit = msg.get("limit") or records.LIST_DEFAULT
        found = self.store.finished_matches(game=msg.get("game"), player=msg.get("player"),
                                            before=before, limit=limit + 1)
        page = found[:limit]
        nxt = None
        if len(found) > limit and page:
            last = page[-1][0]
            nxt = records.Cursor(last.finished or 0.0, last.id).encode()
        self._ok(session, rid, records=[records.summary(rec, moves) for rec, moves in page],
                 next=nxt)

    async def _record(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        """One page of a finished match's record, through the engine's projection."""
        rec = self.store.load_match(msg["match"])
        if rec is None:
            raise _no_such_match(msg["match"])
        if rec.status != "finished":
            raise Refusal("not_finished", f"match {rec.id} is not over: watch it instead",
                          "match")
        seat = msg.get("seat")
        if seat is not None and seat not in records.own_seats(rec, session.id):
            raise Refusal("not_seated", f"you did not play seat {seat} of {rec.id}; "
                                        "ask without a seat for the spectators' record", "seat")
        entries = self.store.journal(rec.id)
        offset = msg.get("offset") or 0
        limit = msg.get("limit") or records.PAGE_DEFAULT
        try:
            page = await trio.to_thread.run_sync(
                partial(records.record_page, rec, entries, seat=seat, offset=offset,
                        limit=limit, session=session.id), limiter=self._record_threads)
        except ReplayError as exc:
            log.error("match %s: its record does not replay: %s", rec.id, exc)
            raise LocalProtocolError("internal_error", str(exc)) from exc
        self._ok(session, rid, match=rec.id, record=page, next=records.next_offset(page))

    async def _unqueue_request(self, session: Session, rid: int | None,
                               msg: dict[str, Any]) -> None:
        if self.matchmaker is not None:
            game = msg.get("game")
            await self.matchmaker.leave(session.id, set(session.queued) if game is None
                                        else {game} & session.queued)
        self._unqueue(session, msg.get("game"))
        self._ok(session, rid)

    @staticmethod
    def _ok(session: Session, rid: int | None, **fields: Any) -> None:
        session.push(ev.Ok(**fields, id=rid))

    def _list(self, session: Session, rid: int | None, game: str | None,
              status: str | None, limit: int, cursor: str | None) -> None:
        """One page of ``limit`` summaries (waiting first, then active, then
        finished; newest first), after ``cursor``; ``next`` when there are more.
        A match whose status changes between two pages moves in the order, so it
        may be listed twice or skipped (:mod:`server.listing`).

        Raises:
            RemoteProtocolError: ``bad_message``: a cursor this server did not give.
        """
        if game is not None and game not in game_names():
            raise Refusal("no_such_game", f"no game {game!r}", "game")
        page, after = self.listing.page(self.matches.values(), game, status, limit, cursor,
                                        trio.current_time())
        queues = {name: len(self.queues.get(name, [])) for name in game_names()}
        self._page(session, rid, [m.summary() for m in page], after, queues)

    async def _list_cluster(self, session: Session, rid: int | None, game: str | None,
                            status: str | None, limit: int, cursor: str | None) -> None:
        """:meth:`_list` of every node's matches (:mod:`server.cluster.directory`);
        ``queues`` counts the cluster's casual queues, ``rated_queues`` this node's."""
        assert self.directory is not None
        page, after, queues = await self.directory.page(game, status, limit, cursor)
        self._page(session, rid, page, after, queues)

    def _page(self, session: Session, rid: int | None, summaries: list[dict[str, Any]],
              after: str | None, queues: dict[str, int]) -> None:
        """Answer a listing: its page of summaries, the cursor of the next page (when
        there is one), the casual ``queues`` and this node's rated queues."""
        rated = {name: len(self.rated_queues.get(name, [])) for name in game_names()}
        fields: dict[str, Any] = {"next": after} if after is not None else {}
        self._ok(session, rid, matches=summaries, queues=queues, rated_queues=rated, **fields)

    def _game_and_options(self, msg: dict[str, Any]) -> tuple[str, dict[str, Any], bool]:
        """The request's game, its normalized options and whether it asks for a rated
        match (``rated: true``, as a field or among the options)."""
        try:
            game = get_game(msg["game"])
        except RuleError as exc:
            raise Refusal(exc.code, str(exc), "game") from None
        options = dict(msg.get("options") or {})
        rated = options.pop("rated", False)
        if not isinstance(rated, bool):
            raise Refusal("bad_option", "rated is true or false", "options.rated")
        rated = rated or bool(msg.get("rated"))
        if rated and self.cluster is not None:
            raise Refusal("not_supported", f"rated matches are {CLUSTER_ONLY_GUESTS}", "rated")
        try:
            options = game.normalize_options(options)
        except RuleError as exc:
            raise Refusal(exc.code, str(exc), "options") from None
        return game.name, options, rated

    @staticmethod
    def _require_account(session: Session) -> AccountRecord:
        if session.account is None:
            raise Refusal("not_registered", "rated matches are between accounts: register, "
                          "or log in with hello.auth", "rated")
        return session.account

    def _check_capacity(self) -> None:
        """Finished matches (listed while they linger) hold no capacity.

        Raises:
            Refusal: ``server_full``.
        """
        unfinished = sum(1 for m in self.matches.values() if m.status != "finished")
        if unfinished >= self.config.max_matches:
            raise Refusal("server_full", f"the server holds its maximum of "
                          f"{self.config.max_matches} unfinished matches; try again later")

    def _counts(self, session: Session) -> Counts:
        counts = Counts()
        for match_id, _ in session.seats:
            match = self.matches.get(match_id)
            if match is not None and match.status != "finished":
                counts.unfinished += 1
                counts.waiting += match.status == "waiting"
        return counts

    def _check_seat(self, session: Session, creating: bool) -> None:
        """The quotas of ``session`` and of its address allow one more seat.

        Raises:
            Refusal: ``too_many_waiting``, ``too_many_active``.
        """
        theirs = Counts()
        for sid in self.quotas.neighbours(session.id):
            other = self.sessions.get(sid)
            if other is not None:
                theirs += self._counts(other)
        self.quotas.check_seat(self._counts(session), theirs, creating)

    def _admit(self, session_id: str, command: cmd.Request) -> None:
        """The match task asks before it runs a ``join`` or ``watch`` (from
        ``session_id``): may the session take one more seat, or watch one more match?

        Raises:
            Refusal: ``too_many_active``, ``too_many_watches``.
        """
        session = self.sessions.get(session_id)
        if session is None:
            return
        if isinstance(command, cmd.Join):
            self._check_seat(session, creating=False)
        elif isinstance(command, cmd.Watch):
            if len(session.watching) >= self.config.max_watches_per_session:
                raise Refusal("too_many_watches", f"you watch "
                              f"{self.config.max_watches_per_session} matches already")

    async def _create(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        game, options, rated = self._game_and_options(msg)
        bot = msg.get("bot")
        if rated:
            self._require_account(session)
            if bot is not None:
                raise Refusal("bad_option", "a rated match is between two accounts: no "
                              "server bot", "bot")
            if msg.get("abandon") == "bot":
                raise Refusal("bad_option", "a rated match's abandoned seat forfeits: "
                              "abandon must be forfeit", "abandon")
        if bot is not None and bot not in strategy_names():
            raise Refusal("bad_option", f"no strategy {bot!r}; known: "
                                f"{', '.join(strategy_names())}", "bot")
        seat = msg.get("seat", 0)
        turn_timer = msg.get("turn_timer", self.config.turn_timer)
        if turn_timer > self.config.max_turn_timer:
            raise Refusal("bad_option", f"turn_timer must be <= "
                                f"{self.config.max_turn_timer}", "turn_timer")
        self._check_seat(session, creating=bot is None)
        self._check_capacity()
        self.quotas.charge_create(session.id)
        match = Match.create(self.ctx, tokens.new_match_id(), game, options, turn_timer,
                             msg.get("abandon", "forfeit"), tokens.new_seed(), tokens.new_salt(),
                             rated=rated)
        match.seat_session(seat, session, client_seed=client_seed(msg))
        if bot is not None:
            match.seat_bot(1 - seat, bot, client_seed=tokens.new_client_seed())
        await self._launch(match)
        log.info("match %s created: %s %s%s by %s%s", match.id, game, options,
                 " rated" if rated else "", session.id, f" against bot {bot}" if bot else "")
        self._ok(session, rid, match=match.id, seat=seat)
        await self._run(match)

    async def _launch(self, match: Match) -> None:
        if self.journal is None:
            match.store_new()
        else:
            from server.cluster.journal import JournalError

            try:
                await match.store_new_in(self.journal)
            except JournalError as exc:
                raise _unavailable("type") from exc
        if self.directory is not None:
            await self.directory.listed(match)  # listed on every node
        self.matches[match.id] = match
        self.listing.changed()

    async def _start_pair(self, game: str, options: dict[str, Any], waited: Waiting,
                          came: tuple[Session, str], wait_on: Callable[[], Awaitable[None]],
                          *, charge: Session | None = None, rated: bool = False) -> Match:
        """Create and launch the match of a pair from a queue (not yet run): ``waited``
        waited longer, so the match plays the seed it was promised; ``came`` is the
        other player and its client seed; the seats are drawn at random. ``charge``
        pays the create quota.

        Raises:
            Refusal: the server is full, or ``charge``'s create quota is spent.
            StoreError: the store refused the match.
            (anything else the launch raises, Cancelled included): in every case
            the two sessions hold no seat of the match, and ``wait_on()`` (shielded)
            has put the pair back where they waited.
        """
        other, client_seed_came = came
        match = Match.create(self.ctx, tokens.new_match_id(), game, options,
                             self.config.turn_timer, "forfeit", waited.seed, waited.salt,
                             rated=rated)
        try:
            self._check_capacity()
            if charge is not None:
                self.quotas.charge_create(charge.id)
            first = secrets.randbelow(2)
            match.seat_session(first, waited.session, client_seed=waited.client_seed)
            match.seat_session(1 - first, other, client_seed=client_seed_came)
            await self._launch(match)
        except BaseException:
            match.unseat_all()
            with trio.CancelScope(shield=True):
                await wait_on()
            raise
        return match

    async def _run(self, match: Match) -> None:
        assert self._nursery is not None, "lobby not started"
        await self._nursery.start(match.run)

    async def _queue(self, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
        game, options, rated = self._game_and_options(msg)
        if game in session.queued:
            raise Refusal("already_seated", f"you already wait in a {game} queue", "game")
        if self.journal is not None and not self.journal.available:
            raise _unavailable("type")
        if rated:
            entry = self._waiting(session, options, msg)
            self.rated_seeds[(game, session.id)] = entry
            await self._queue_rated(session, rid, game, options,
                                    fairness.commitment(entry.seed, entry.salt))
            return
        if self.matchmaker is not None:
            await self._queue_cluster(session, rid, game, options, msg)
            return
        waiting = self.queues.setdefault(game, [])
        self._check_seat(session, creating=False)
        partner = next((i for i, w in enumerate(waiting)
                        if w.options == options and not _same_account(w.session, session)),
                       None)
        if partner is None:
            entry = self._waiting(session, options, msg)
            waiting.append(entry)
            session.queued.add(game)
            self._ok(session, rid, game=game,
                     commitment=fairness.commitment(entry.seed, entry.salt))
            return
        other = waiting.pop(partner)
        other.session.queued.discard(game)

        async def wait_on() -> None:
            waiting.insert(partner, other)
            other.session.queued.add(game)

        match = await self._start_pair(game, options, other, (session, client_seed(msg)),
                                       wait_on, charge=session)
        log.info("match %s paired from the %s queue: %s vs %s", match.id, game,
                 other.session.id, session.id)
        self._ok(session, rid, game=game)
        await self._run(match)

    async def _queue_cluster(self, session: Session, rid: int | None, game: str,
                             options: dict[str, Any], msg: dict[str, Any]) -> None:
        """The casual queue of a cluster (:mod:`server.cluster.matchmaking`): wait, or
        start a match with a player waiting on any node; this node then runs it."""
        assert self.matchmaker is not None and self.relay is not None
        self._check_seat(session, creating=False)
        entry = self._waiting(session, options, msg)
        partner = await self.matchmaker.pair_or_wait(session, game, options, entry.client_seed,
                                                     entry.seed, entry.salt)
        if partner is None:
            if not session.connected:  # it dropped while Redis answered: take it out
                await self.matchmaker.leave(session.id, {game})
                return
            session.queued.add(game)
            self._ok(session, rid, game=game,
                     commitment=fairness.commitment(entry.seed, entry.salt))
            return
        other = self._partner_session(partner)
        matchmaker = self.matchmaker

        async def wait_on() -> None:  # at the queue's head
            await matchmaker.put_back(game, partner)

        match = await self._start_pair(
            game, options, Waiting(other, options, partner.client_seed, partner.seed,
                                   partner.salt),
            (session, entry.client_seed), wait_on, charge=session)
        assert self.cluster is not None
        if partner.node == self.cluster.name:
            other.queued.discard(game)
        else:
            self.relay.paired(other, partner.node, match.id, game)
        log.info("match %s paired from the cluster's %s queue: %s (%s) vs %s", match.id,
                 game, other.id, partner.node, session.id)
        self._ok(session, rid, game=game)
        await self._run(match)

    def _partner_session(self, partner: Partner) -> Session:
        """The session of a partner from the cluster's queue: this node's own, or a
        remote session relayed to its home node."""
        assert self.cluster is not None and self.relay is not None
        if partner.node == self.cluster.name:
            return self._session_for(partner.session, partner.name)
        return self.relay.remote_session(partner.session, partner.name, partner.node, 1)

    def _paired_elsewhere(self, session: Session, match_id: str, game: str) -> None:
        """Another node paired this node's waiting ``session`` into ``match_id``."""
        session.queued.discard(game)
        if self.matchmaker is not None:
            self.matchmaker.forget(session.id, game)
        log.info("session %s paired into match %s of another node", session.id, match_id)

    @staticmethod
    def _waiting(session: Session, options: dict[str, Any], msg: dict[str, Any]) -> Waiting:
        """A queue entry. The seed of the match to come is drawn now and committed to
        in the reply, before a partner's client seed exists, so the server cannot
        choose the deal (a pair plays the seed of the one who waited longer)."""
        return Waiting(session, options, client_seed(msg), tokens.new_seed(), tokens.new_salt())

    async def _queue_rated(self, session: Session, rid: int | None, game: str,
                           options: dict[str, Any], commitment: str) -> None:
        account = self._require_account(session)
        rating = self.store.standing(account.id, game).rating.rating
        seeker = ratings.Seeker(session, account.id, rating, trio.current_time(),
                                tuple(sorted(options.items())))
        self.rated_queues.setdefault(game, []).append(seeker)
        session.queued.add(game)
        self._someone_rated.set()
        self._ok(session, rid, game=game, rated=True, commitment=commitment)
        await self._pair_rated(game)

    async def _pairing_loop(self) -> None:
        """Look at every rated queue once a :data:`PAIRING_INTERVAL`: waiting widens
        the windows, so pairs appear without anyone new queueing."""
        while True:
            if not any(self.rated_queues.values()):
                self._someone_rated = trio.Event()
                await self._someone_rated.wait()
            await trio.sleep(PAIRING_INTERVAL)
            for game in list(self.rated_queues):
                try:
                    await self._pair_rated(game)
                except Refusal:
                    pass  # the server is full: they wait on
                except Exception:
                    log.exception("pairing the rated %s queue failed", game)

    async def _pair_rated(self, game: str) -> None:
        """Start a rated match for every pair the rated queue of ``game`` holds now.

        Raises:
            Refusal: ``not_supported`` when the server holds its maximum of matches.
        """
        waiting = self.rated_queues.get(game, [])
        for pair in ratings.pair_seekers(waiting, trio.current_time()):
            first, second = pair  # the longer-waiting first: the match plays its seed
            one, two = first.ref, second.ref
            assert isinstance(one, Session) and isinstance(two, Session)
            entries = [self.rated_seeds.pop((game, s.id), None) or self._waiting(s, {}, {})
                       for s in (one, two)]
            for seeker, entry in zip(pair, entries, strict=True):
                waiting.remove(seeker)
                entry.session.queued.discard(game)

            async def wait_on(pair: tuple[ratings.Seeker, ratings.Seeker] = pair,
                              entries: list[Waiting] = entries) -> None:
                for seeker, entry in zip(pair, entries, strict=True):
                    waiting.append(seeker)
                    entry.session.queued.add(game)
                    self.rated_seeds[(game, entry.session.id)] = entry

            match = await self._start_pair(game, dict(first.options), entries[0],
                                           (two, entries[1].client_seed), wait_on, rated=True)
            log.info("match %s paired from the rated %s queue: %s (%.0f) vs %s (%.0f)",
                     match.id, game, one.id, first.rating, two.id, second.rating)
            await self._run(match)

    def _unqueue(self, session: Session, game: str | None) -> None:
        for name in list(session.queued if game is None else {game} & session.queued):
            self.queues[name] = [w for w in self.queues.get(name, [])
                                 if w.session.id != session.id]
            self.rated_queues[name] = [e for e in self.rated_queues.get(name, [])
                                       if e.ref.id != session.id]
            self.rated_seeds.pop((name, session.id), None)
            session.queued.discard(name)

    async def _to_match(self, session: Session, msg: dict[str, Any],
                        relayed: bool = False) -> None:
        match = self.matches.get(msg["match"])
        if match is None and self.relay is not None and not relayed:
            if msg["type"] == "chat":
                self.quotas.allow_chat(session.id)
            await self.relay.forward(session, msg)  # another node's match, or none
            return
        if match is None:
            raise _no_such_match(msg["match"])
        if msg["type"] == "chat":
            self.quotas.allow_chat(session.id)
        command = MATCH_COMMANDS[msg["type"]](session, msg)
        if isinstance(command, cmd.Join) and session.account is not None:
            command = dataclasses.replace(
                command, account=session.account.id,
                player=player_extras(self.store, session.account, match.game, match.rated))
        try:
            await match.submit(command, session)
        except MatchClosed as exc:
            raise exc.refusal() from None


    async def run_relayed(self, session: Session, msg: dict[str, Any]) -> None:
        """Run a request relayed from another node (``session`` is remote: its
        outbox relays back) and answer it like the connection would; never raises
        but Cancelled."""
        rid = msg.get("id")
        try:
            await self._to_match(session, msg, relayed=True)
        except ProtocolError as exc:
            session.push(exc.to_event(rid))
        except Exception:
            log.exception("relayed request %s from %s failed", msg.get("type"), session.id)
            session.push(LocalProtocolError("internal_error", "the server failed handling "
                                            "this request").to_event(rid))


def _no_such_match(match_id: str) -> Refusal:
    """A request names a match this server does not have."""
    return Refusal("no_such_match", f"no match {match_id!r}", "match")


def _unavailable(field: str) -> Refusal:
    """Cluster mode: Redis did not answer (protocol/errors.py ``unavailable``)."""
    return Refusal("unavailable", UNAVAILABLE_MESSAGE, field)


def _same_account(a: Session, b: Session) -> bool:
    """Two sessions of one account (never paired with each other)."""
    return a.account is not None and b.account is not None and a.account.id == b.account.id


def client_seed(msg: dict[str, Any]) -> str:
    """The request's ``client_seed`` in lower case, or a fresh one the server chooses
    for a seat that sent none (the schema has checked that it is 1..64 hex digits)."""
    given = msg.get("client_seed")
    return given.lower() if given is not None else tokens.new_client_seed()


_Route = Callable[[Lobby, Session, "int | None", dict[str, Any]], Awaitable[None]]

#: Requests the lobby answers itself: message type -> handler.
LOBBY_ROUTES: dict[str, _Route] = {
    "games": Lobby._games,
    "matches": Lobby._matches,
    "create": Lobby._create,
    "queue": Lobby._queue,
    "unqueue": Lobby._unqueue_request,
    "records": Lobby._records,
    "record": Lobby._record,
    **ACCOUNT_ROUTES,
}

#: Requests cluster mode refuses (``not_supported``): accounts, ratings and the
#: records of finished matches live in each node's own SQLite file, so they would
#: differ from node to node (docs/cluster.md, "Accounts").
CLUSTER_UNSUPPORTED = frozenset({*ACCOUNT_ROUTES, "records", "record"})

#: Requests about one match (``msg["match"]``): message type -> the command its task runs.
MATCH_COMMANDS: dict[str, Callable[[Session, dict[str, Any]], cmd.Request]] = {
    "intent": lambda s, m: cmd.play_intent(s.id, m.get("id"), True, m["seq"], m["intent"]),
    "join": lambda s, m: cmd.Join(s.id, m.get("id"), name=s.name, seat=m.get("seat"),
                                  client_seed=client_seed(m)),
    "watch": lambda s, m: cmd.Watch(s.id, m.get("id")),
    "leave": lambda s, m: cmd.Leave(s.id, m.get("id")),
    "resign": lambda s, m: cmd.Resign(s.id, m.get("id")),
    "auto_flip": lambda s, m: cmd.SetAutoFlip(s.id, m.get("id"), on=m["on"],
                                              delay=m.get("delay")),
    "fast_forward": lambda s, m: cmd.SetFastForward(s.id, m.get("id"), on=m["on"]),
    "chat": lambda s, m: cmd.Chat(s.id, m.get("id"), name=s.name, text=m["text"]),
    "mute_spectators": lambda s, m: cmd.MuteSpectators(s.id, m.get("id"), on=m["on"]),
}
