"""The bot SDK: write the decision, the SDK does the rest.

A bot is a function (or any callable object) that gets the seat's ``view`` and
``legal`` intents of the newest snapshot and returns one element of ``legal``::

    from client.bots.sdk import run_bot

    def first_legal(view, legal):
        return legal[0]

    summary = run_bot(first_legal, "127.0.0.1:7000", game="datastructures", matches=3)
    print(summary.format())

A strategy object from :mod:`engine.bots` (``choose(game, seat, view,
legal)``) works as a bot too, and so does an ``async def`` function.

What the SDK does for the bot:

* connecting and the handshake (through :mod:`client.session`), keeping the
  resume token; when the connection drops it reconnects with backoff, resumes
  the session and picks the match up from the snapshot the server re-sends;
  given several addresses of one server (``run_bot(f, "a:7000,b:7001")``, the
  nodes of a cluster) it connects to the first that answers and resumes on the
  next live one (:mod:`client.failover`);
* matchmaking: ``queue`` (pair with whoever waits, the default), ``create``
  (a new match; optionally against a server-side bot) or ``join`` (a match id);
  it queues again when a drop loses its place in the queue;
* timing: it acts only on the *newest* snapshot of its match. If a newer
  snapshot arrives while the bot thinks (or during ``think``, the optional
  pause before each move), the stale decision is thrown away and the bot is
  asked again. After an accepted intent it waits for a snapshot at least as new as
  the ``seq`` of the ``ok`` (one showing its own move), so under the server's seq
  rule War flips are never ``stale``; an intent refused ``stale`` anyway (the
  position changed under it) is simply decided again on the newest snapshot;
* CPU-bound bots (the search strategy) run in a worker thread, so the session
  keeps answering heartbeats while they think;
* results: each finished match becomes a :class:`MatchResult`; a run returns
  a :class:`Summary` (wins, losses, draws, mean moves).

Errors: a bot that returns something not in ``legal`` raises
:class:`BotError` (the SDK never sends an intent the snapshot did not offer);
server refusals of lobby requests raise :class:`client.session.ServerError`.
"""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from client.address import Address, parse_address, parse_addresses
from client.session import (
    ConnectionLost,
    ServerError,
    Session,
    SessionState,
    failover_connector,
    open_session,
)
from client.state import SessionMemory
from engine.registry import game_names
from protocol.events import Create, Join, Queue
from protocol.events import Intent as IntentRequest
from protocol.version import __version__

log = logging.getLogger(__name__)

Intent = dict[str, Any]
#: A bot: ``bot(view, legal) -> intent`` (sync or async), or a strategy object.
BotFunction = Callable[[dict[str, Any], list[Intent]], Intent | Awaitable[Intent]]

#: The games a bot can play: the engine's registry (kept as a name for the command line).
GAMES = tuple(game_names())
MODES = ("queue", "create", "join")
#: Seconds before an intent refused ``unavailable`` (a cluster node without Redis)
#: is sent again.
UNAVAILABLE_RETRY = 0.25
#: Refusals of pace: the request is sent again after the error's ``retry_after``.
PACED = frozenset({"rate_limited", "creating_too_fast"})
#: Most times one request is sent again after a refusal of pace.
PACED_RETRIES = 8
#: Seconds a bot that decided before its connection dropped waits for the snapshot
#: its resume brings before it acts on the one it had.
RESUME_WAIT = 2.0


class BotError(Exception):
    """The bot broke the contract (e.g. returned an intent that is not legal)."""


@dataclass(slots=True)
class MatchResult:
    """One finished match from the bot's seat.

    ``outcome`` is ``"win"``, ``"loss"`` or ``"draw"``; ``moves`` is the
    match's length in accepted intents (both seats), ``our_moves`` the
    intents this bot had accepted, ``reconnects`` the drops it survived.
    """

    match: str
    game: str
    seat: int
    winner: int | None
    reason: str
    moves: int
    our_moves: int
    reconnects: int = 0

    @property
    def outcome(self) -> str:
        if self.winner is None:
            return "draw"
        return "win" if self.winner == self.seat else "loss"


@dataclass(slots=True)
class Summary:
    """Every match a run played."""

    results: list[MatchResult] = field(default_factory=list)

    @property
    def wins(self) -> int:
        return sum(r.outcome == "win" for r in self.results)

    @property
    def losses(self) -> int:
        return sum(r.outcome == "loss" for r in self.results)

    @property
    def draws(self) -> int:
        return sum(r.outcome == "draw" for r in self.results)

    @property
    def mean_moves(self) -> float:
        """Mean match length in accepted intents (both seats); 0 with no match."""
        return sum(r.moves for r in self.results) / len(self.results) if self.results else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"matches": len(self.results), "wins": self.wins, "losses": self.losses,
                "draws": self.draws, "mean_moves": self.mean_moves,
                "results": [{"match": r.match, "game": r.game, "seat": r.seat,
                             "winner": r.winner, "reason": r.reason, "outcome": r.outcome,
                             "moves": r.moves, "our_moves": r.our_moves,
                             "reconnects": r.reconnects} for r in self.results]}

    def format(self) -> str:
        """One line: ``3 matches: 2 wins, 1 loss, 0 draws; mean 212.3 moves``."""
        n = len(self.results)
        return (f"{n} match{'es' if n != 1 else ''}: {self.wins} win{'s' if self.wins != 1 else ''}, "
                f"{self.losses} loss{'es' if self.losses != 1 else ''}, "
                f"{self.draws} draw{'s' if self.draws != 1 else ''}; "
                f"mean {self.mean_moves:.1f} moves")


def as_decider(bot: Any, game: str, *, threaded: bool | None = None
               ) -> Callable[[int, dict[str, Any], list[Intent]], Awaitable[Intent]]:
    """Turn a bot into ``await decide(seat, view, legal)``.

    Args:
        bot: ``f(view, legal)`` (sync or async) or an object with
            ``choose(game, seat, view, legal)`` (a strategy).
        game: the game name, passed to strategies.
        threaded: run a sync bot in a worker thread (default: yes for
            strategies, which may search for their whole time budget; no for
            plain functions).

    Raises:
        TypeError: ``bot`` is neither.
    """
    choose = getattr(bot, "choose", None)
    if callable(choose):
        def call(seat: int, view: dict[str, Any], legal: list[Intent]) -> Any:
            return choose(game, seat, view, legal)
        if threaded is None:
            threaded = True
    elif callable(bot):
        def call(seat: int, view: dict[str, Any], legal: list[Intent]) -> Any:
            return bot(view, legal)
        if threaded is None:
            threaded = False
    else:
        raise TypeError(f"a bot is a callable f(view, legal) or a strategy, not {bot!r}")

    async def decide(seat: int, view: dict[str, Any], legal: list[Intent]) -> Intent:
        if threaded:
            result = await trio.to_thread.run_sync(call, seat, view, legal)
        else:
            result = call(seat, view, legal)
        if inspect.isawaitable(result):
            result = await result
        return result

    return decide


class BotRunner:
    """Plays matches for one bot over one :class:`~client.session.Session`.

    Args:
        session: an open session (``reconnect=True`` recommended).
        bot: see :func:`as_decider`.
        game: ``"war"`` or ``"datastructures"``.
        think: seconds to wait before sending each move (0: none).
        options: match options for ``queue`` and ``create``.
        on_event: called with one line of text for each notable event
            (match found, match over); None: log at INFO.
        rated: ``queue`` and ``create`` rated matches (the session must be logged in).
        on_seats: called with the set of matches being played whenever it changes
            (to remember them across restarts).

    Raises:
        ValueError: unknown game or a negative ``think``.
    """

    def __init__(self, session: Session, bot: Any, game: str, *, think: float = 0.0,
                 options: Mapping[str, Any] | None = None,
                 on_event: Callable[[str], None] | None = None,
                 rated: bool = False,
                 on_seats: Callable[[set[str]], None] | None = None,
                 client_seed: str | None = None) -> None:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; known: {', '.join(GAMES)}")
        if think < 0:
            raise ValueError("think must be >= 0 seconds")
        self.session = session
        self.game = game
        self.think = think
        self.options = dict(options or {})
        #: sent with every create, join and queue: this bot's share of each deal
        self.client_seed = client_seed
        self.decide = as_decider(bot, game)
        self.on_event = on_event or (lambda text: log.info("%s", text))
        self.latest: dict[str, dict[str, Any]] = {}   # match -> newest snapshot
        self.serials: dict[str, int] = {}             # match -> serial of that snapshot
        self.finished: set[str] = set()
        self.rated = rated
        #: the matches this runner plays now (``on_seats`` hears of every change)
        self.playing: set[str] = set()
        self.on_seats = on_seats or (lambda matches: None)
        self._serial = itertools.count(1)

    # ------------------------------------------------------------ pushes

    def _note(self, push: dict[str, Any]) -> None:
        """Remember a pushed snapshot if it is the newest of its match."""
        if push.get("type") != "snapshot":
            if push.get("type") == "error":
                log.warning("server error push: %s %s", push.get("code"), push.get("message"))
            return
        match = push["match"]
        old = self.latest.get(match)
        if old is None or push["seq"] >= old["seq"] or push["status"] == "finished":
            self.latest[match] = push
            self.serials[match] = next(self._serial)

    def _drain(self) -> None:
        """Take every push already received, without waiting."""
        while True:
            try:
                push = self.session.pushes.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            self._note(push)

    async def _next_push(self) -> None:
        self._note(await self.session.next_push())
        self._drain()

    # ------------------------------------------------------------ matchmaking

    async def queue_match(self) -> MatchResult:
        """Queue for matchmaking, play the paired match to its end.

        Raises:
            ServerError: the server refused the queue request.
            client.session.SessionClosed: the session ended.
        """
        known = set(self.latest)
        await self._request_until_sent(self._queue_request())
        self.on_event(f"queued for {self.game}: waiting for an opponent")
        reconnects = self.session.reconnects
        while True:
            self._drain()
            fresh = [m for m, s in self.latest.items()
                     if m not in known and m not in self.finished and s["game"] == self.game
                     and s.get("seat") is not None]
            if fresh:
                snap = self.latest[fresh[0]]
                self.on_event(f"paired: match {snap['match']}, seat {snap['seat']}")
                return await self.play_match(snap["match"], snap["seat"])
            if self.session.reconnects != reconnects:
                # The drop took us out of the queue: queue again.
                reconnects = self.session.reconnects
                try:
                    await self.session.request(self._queue_request())
                    self.on_event(f"queued for {self.game} again after reconnecting")
                except ServerError as exc:
                    if exc.code != "already_seated":
                        raise
                except ConnectionLost:
                    pass
            with trio.move_on_after(0.25):
                await self._next_push()

    async def create_match(self, server_bot: str | None = None, seat: int | None = None,
                           announce: Callable[[str], None] | None = None) -> MatchResult:
        """Create a match (against a server-side bot when ``server_bot`` names a
        strategy), announce its id, wait for an opponent and play it to its end.

        Raises:
            ServerError: the server refused the create request.
        """
        reply = await self._paced(
            Create(game=self.game, options=self.options, bot=server_bot, seat=seat,
                   rated=True if self.rated else None, client_seed=self.client_seed))
        (announce or self.on_event)(f"created match {reply['match']} (seat {reply['seat']})")
        return await self.play_match(reply["match"], reply["seat"])

    async def join_match(self, match: str, seat: int | None = None) -> MatchResult:
        """Join the match ``match`` and play it to its end.

        Raises:
            ServerError: e.g. ``no_such_match``, ``seat_taken``.
        """
        reply = await self.session.request(Join(match=match, seat=seat,
                                                client_seed=self.client_seed))
        self.on_event(f"joined match {reply['match']} (seat {reply['seat']})")
        return await self.play_match(reply["match"], reply["seat"])

    def _queue_request(self) -> Queue:
        return Queue(game=self.game, options=self.options, rated=True if self.rated else None,
                     client_seed=self.client_seed)

    async def resume_seats(self, remembered: Iterable[str], wait: float = 3.0
                           ) -> list[tuple[str, int]]:
        """After resuming a session: the (match, seat) pairs it still plays.

        The server re-sends a snapshot of every match the session sits in right
        after the welcome; this waits (at most ``wait`` seconds) until one came for
        each of the ``remembered`` matches, and returns those that are not over.
        """
        pending = set(remembered)
        with trio.move_on_after(wait):
            while pending - set(self.latest):
                await self._next_push()
        self._drain()
        return sorted((m, s["seat"]) for m, s in self.latest.items()
                      if s.get("seat") is not None and s["status"] != "finished"
                      and s["game"] == self.game)

    async def _request_until_sent(self, msg: Queue) -> dict[str, Any]:
        while True:
            try:
                return await self._paced(msg)
            except ConnectionLost:
                await self.session.wait_connected()

    async def _paced(self, msg: Any) -> dict[str, Any]:
        """``msg``'s answer; a refusal of pace (:data:`PACED`) that says when to come
        back (``retry_after``) is waited out and the request sent again, up to
        :data:`PACED_RETRIES` times.

        Raises:
            ServerError: any other refusal, or the last refusal of pace.
        """
        for attempt in range(PACED_RETRIES + 1):
            try:
                return await self.session.request(msg)
            except ServerError as exc:
                wait = exc.retry_after
                if exc.code not in PACED or wait is None or attempt == PACED_RETRIES:
                    raise
                self.on_event(f"{exc.code}: sending it again in {wait:.1f} s")
                await trio.sleep(wait)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------ playing

    async def play_match(self, match: str, seat: int) -> MatchResult:
        """Play ``match`` from ``seat`` until it is finished; act on the newest snapshot.

        Raises:
            BotError: the bot returned an intent that is not legal.
            ServerError: the server refused an intent for a reason other than
                ``stale``, ``not_your_turn``, ``illegal_intent`` or ``match_finished``
                (those are recovered from by waiting for the next snapshot),
                ``rate_limited`` (acted on again after its ``retry_after``),
                ``unavailable`` (sent again after :data:`UNAVAILABLE_RETRY`) or
                ``match_moved`` (the resume on another node re-sends the snapshot).
            client.session.SessionClosed: the session ended.
        """
        self.playing.add(match)
        self.on_seats(set(self.playing))
        try:
            return await self._play(match, seat)
        finally:
            self.playing.discard(match)
            if match in self.finished:
                self.on_seats(set(self.playing))

    async def _play(self, match: str, seat: int) -> MatchResult:
        start_reconnects = self.session.reconnects
        consumed = 0        # serial of the last snapshot acted on (or skipped)
        floor = 0           # the match's seq after our last accepted intent
        our_moves = 0
        while True:
            self._drain()
            snap = self.latest.get(match)
            serial = self.serials.get(match, 0)
            if snap is not None and snap["status"] == "finished":
                self.finished.add(match)
                return self._result(snap, seat, our_moves, start_reconnects)
            # a snapshot older than our own last intent does not show it yet: skip it
            if (snap is None or serial <= consumed or not snap["legal"]
                    or snap["seq"] < floor):
                consumed = max(consumed, serial)
                await self._next_push()
                continue
            consumed = serial
            reconnects = self.session.reconnects
            intent = await self.decide(seat, snap["view"], list(snap["legal"]))
            if intent not in snap["legal"]:
                raise BotError(f"the bot chose {intent!r}, which is not among the legal "
                               f"intents of match {match} at seq {snap['seq']}")
            if self.think:
                await trio.sleep(self.think)
            self._drain()
            if self.serials.get(match, 0) != serial:
                continue  # a newer snapshot arrived while thinking: decide again on it
            if (self.session.reconnects != reconnects
                    or self.session.state is not SessionState.CONNECTED):
                # decided before the connection dropped: act on the snapshot the resume
                # sends (a cluster node that adopts the match a moment later sends it
                # then), or on this one again if none comes
                await self.session.wait_connected()
                with trio.move_on_after(RESUME_WAIT):
                    while self.serials.get(match, 0) == serial:
                        await self._next_push()
                if self.serials.get(match, 0) == serial:
                    consumed = serial - 1
                continue
            try:
                reply = await self.session.request(
                    IntentRequest(match=match, seq=snap["seq"], intent=intent))
            except ServerError as exc:
                if exc.code in ("stale", "not_your_turn", "illegal_intent", "match_finished"):
                    log.debug("intent refused (%s); acting on the next snapshot", exc.code)
                    continue
                if exc.code == "rate_limited":   # not run: act again once it may succeed
                    wait = 1.0 if exc.retry_after is None else exc.retry_after
                    log.info("intent refused (rate_limited); acting again in %.2f s", wait)
                    await trio.sleep(wait)
                    consumed = serial - 1
                    continue
                if exc.code == "unavailable":  # cluster: not carried out; the snapshot stands
                    log.info("intent refused (unavailable); trying again shortly")
                    await trio.sleep(UNAVAILABLE_RETRY)
                    consumed = serial - 1
                    continue
                if exc.code == "match_moved":  # cluster: the resume elsewhere re-sends it
                    continue
                raise
            except ConnectionLost:
                # Maybe applied, maybe not: the snapshot re-sent on resume will tell.
                continue
            floor = reply.get("seq", snap["seq"] + 1)
            our_moves += 1

    def _result(self, snap: dict[str, Any], seat: int, our_moves: int,
                start_reconnects: int) -> MatchResult:
        result = snap.get("result") or {}
        out = MatchResult(snap["match"], snap["game"], seat, result.get("winner"),
                          result.get("reason", "?"), snap["seq"], our_moves,
                          self.session.reconnects - start_reconnects)
        self.on_event(f"match {out.match} over: {out.outcome} ({out.reason}) after "
                      f"{out.moves} moves")
        return out


async def play(bot: Any, host: str | None = None, port: int | None = None, *, game: str,
               name: str = "bot",
               matches: int = 1, mode: str = "queue", match: str | None = None,
               seat: int | None = None, server_bot: str | None = None,
               options: Mapping[str, Any] | None = None, think: float = 0.0,
               on_event: Callable[[str], None] | None = None,
               session_options: Mapping[str, Any] | None = None,
               summary: Summary | None = None, rated: bool = False,
               memory: SessionMemory | None = None, client_seed: str | None = None,
               tls: bool = False, ca: str | None = None,
               addresses: Sequence[str | Address] | str | None = None) -> Summary:
    """Connect, play ``matches`` matches with ``bot``, return the summary.

    Args:
        host, port: the server; or ``addresses``: several addresses of one server
            (``"a:7000,b:7001"`` or a list), tried in order, the session resuming
            on the next live one after a lost connection.
        tls: speak TLS (a ``tls://`` address); ``ca``: a PEM file of the private CA
            that signed the server's certificate (default: the system's roots).
        mode: ``"queue"`` (matchmaking), ``"create"`` (a new match each time;
            ``server_bot`` names a server-side opponent) or ``"join"`` (the
            match ``match``; plays that one match).
        session_options: passed to :func:`client.session.open_session`
            (e.g. ``connect`` for tests, ``backoff``); ``reconnect`` defaults on.
        summary: a :class:`Summary` to fill in as matches end (so a caller
            that is interrupted still has the finished ones); default: a new one.
        rated: queue for (or create) rated matches; log in with
            ``session_options={"auth": ...}``.
        memory: what to remember across restarts (:class:`client.state.SessionMemory`):
            its resume token is sent, the new one saved, and the matches it sat in
            are played to their end first (each counts as one of ``matches``).
        client_seed: 1..64 hex digits mixed into every deal (docs/protocol.md,
            "The random stream"); None: the server picks one per match.

    Raises:
        ValueError: bad mode, game, or match count.
        OSError: the first connection failed.
        ServerError: a lobby request was refused.
        BotError: the bot broke the contract.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    if mode == "join" and not match:
        raise ValueError("mode 'join' needs a match id")
    if matches < 1:
        raise ValueError("matches must be at least 1")
    opts: dict[str, Any] = {"reconnect": True, "client": f"cardbot/{__version__}",
                            "tls": tls, "ca": ca}
    if on_event is not None:
        opts["on_state"] = _state_reporter(on_event)
    opts.update(session_options or {})
    if addresses is not None and "connect" not in opts:
        opts["connect"] = failover_connector(addresses, ca)  # one ring for every session
    summary = Summary() if summary is None else summary
    say = on_event or (lambda text: log.info("%s", text))
    if memory is not None:
        opts.setdefault("token", memory.remembered.resume)
        if memory.remembered.api_token and "auth" not in opts:
            opts["auth"] = {"api_token": memory.remembered.api_token}
    try:
        async with open_session(host, port, name=name, **opts) as session:
            await _play_session(session, bot, game, matches, mode, match, seat, server_bot,
                                options, think, on_event, say, summary, rated, memory,
                                client_seed=client_seed)
    except ServerError as exc:
        if exc.code != "bad_token" or not opts.get("token"):
            raise
        say("the server no longer knows our session: starting a new one")
        opts["token"] = None
        if memory is not None:
            memory.welcomed(None)
        async with open_session(host, port, name=name, **opts) as session:
            await _play_session(session, bot, game, matches, mode, match, seat, server_bot,
                                options, think, on_event, say, summary, rated, memory,
                                client_seed=client_seed)
    return summary


async def _play_session(session: Session, bot: Any, game: str, matches: int, mode: str,
                        match: str | None, seat: int | None, server_bot: str | None,
                        options: Mapping[str, Any] | None, think: float,
                        on_event: Callable[[str], None] | None, say: Callable[[str], None],
                        summary: Summary, rated: bool, memory: SessionMemory | None, *,
                        client_seed: str | None = None) -> None:
    """The body of :func:`play` on an open session."""
    runner = BotRunner(session, bot, game, think=think, options=options, on_event=on_event,
                       rated=rated, on_seats=memory.seated if memory is not None else None,
                       client_seed=client_seed)
    back: list[tuple[str, int]] = []
    if memory is not None:
        memory.welcomed(session.token)
        if session.resumed:
            back = await runner.resume_seats(memory.remembered.matches)
            for found, found_seat in back:
                say(f"back in match {found} (seat {found_seat})")
            for found, found_seat in back:
                summary.results.append(await runner.play_match(found, found_seat))
    if mode == "join":
        assert match is not None
        if match not in {m for m, _ in back}:
            summary.results.append(await runner.join_match(match, seat))
        return
    for _ in range(matches - len(back)):
        if mode == "queue":
            summary.results.append(await runner.queue_match())
        else:
            summary.results.append(await runner.create_match(server_bot, seat))


def _state_reporter(on_event: Callable[[str], None]) -> Callable[[SessionState], None]:
    """An ``on_state`` callback that reports drops and successful reconnections."""
    dropped = False

    def report(state: SessionState) -> None:
        nonlocal dropped
        if state is SessionState.RECONNECTING:
            dropped = True
            on_event("connection lost: reconnecting with the resume token")
        elif state is SessionState.CONNECTED and dropped:
            dropped = False
            on_event("reconnected")

    return report


def run_bot(bot: Any, address: str | Sequence[str] = "127.0.0.1:7000", *, game: str,
            ca: str | None = None, **kwargs: Any) -> Summary:
    """Blocking wrapper of :func:`play`: ``run_bot(f, "host:port", game="war")``;
    ``"tls://host:port"`` speaks TLS (``ca``: a private CA's PEM file); several
    addresses (``"a:7000,b:7001"`` or a list) fail over.

    Raises:
        ValueError: a bad address, or ``ca`` without ``tls://``.
        See also :func:`play` and :func:`client.address.parse_addresses`.
    """
    parsed = parse_addresses(address)
    if ca is not None and not any(a.tls for a in parsed):
        raise ValueError(f"{address!r}: a CA file is for tls:// addresses only")
    if len(parsed) > 1:
        return trio.run(lambda: play(bot, game=game, ca=ca, addresses=parsed, **kwargs))
    one = parsed[0]
    return trio.run(lambda: play(bot, one.host, one.port, game=game, tls=one.tls,
                                 ca=ca, **kwargs))


__all__ = ["BotError", "BotRunner", "MatchResult", "Summary", "as_decider", "parse_address",
           "play", "run_bot"]
