"""The trio client connection every client program uses (TUI, bots, tests, load scripts).

Usage::

    from client.session import open_session, ServerError

    async with open_session("127.0.0.1", 7777, name="alice", client="mybot/0.1",
                            reconnect=True) as session:
        reply = await session.request(Create(game="war"))
        match = reply["match"]
        async for push in session.pushes:          # snapshot, presence, chat, bye, error
            if push["type"] == "snapshot" and push["legal"]:
                await session.request(Intent(match=match, seq=push["seq"],
                                             intent=push["legal"][0]))

Requests are events of :mod:`protocol.events` (``Create``, ``Intent``...); a plain
request map is accepted too and turned into its event, so either way it is
validated before it is sent. Replies and pushes are handed out as the wire maps
of the validated events the connection read (unknown extra fields dropped).

What it does:

* connects, sends ``hello`` (with ``resume`` when it holds a token), waits for
  ``welcome``, and keeps the resume token (``session.token``);
* :meth:`Session.request` assigns the ``id``, sends, and returns the ``ok`` reply
  or raises :class:`ServerError` for an ``error`` reply;
* every other server message (snapshot, presence, chat, bye, and errors that
  answer no request of ours; ``ok`` replies nobody waits for are dropped) goes to ``session.pushes``, a bounded trio memory
  channel that survives reconnections and closes when the session ends. When
  it is full the oldest push is dropped (``session.dropped_pushes`` counts them),
  so a program that never reads pushes cannot stall replies or heartbeats;
* answers the server's pings, sends its own every ``ping_interval`` seconds,
  keeps the last round-trip time in ``session.rtt``, and declares the
  connection dead when a ping stays unanswered for ``ping_timeout`` seconds;
* with ``reconnect=True``, when the connection drops (or the server says
  ``bye``) it reconnects with exponential backoff and jitter, resumes with the
  token, and the server re-sends a fresh snapshot of every match it sits in;
  requests in flight at the drop fail with :class:`ConnectionLost`, requests
  made while reconnecting wait for the new connection;
* ``session.state`` is one of :class:`SessionState` (connecting, connected,
  reconnecting, closed); ``on_state`` is called on each change;
* given several addresses of one server (``addresses=["a:7000", "b:7001"]``, the
  nodes of a cluster), it connects to the first that answers and, after a lost
  connection, resumes on the next live one, preferring the nodes the server
  listed in ``welcome.nodes`` (:mod:`client.failover`).

Tasks per connection: one reader, one writer fed by a bounded channel, one
heartbeat. Everything on the wire, both ways, goes through
:class:`protocol.connection.Connection`.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import itertools
import logging
import math
import random
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from client.address import Address, parse_addresses
from client.failover import Failover
from protocol.connection import CLOSED, NEED_DATA, Connection
from protocol.connection import State as ConnState
from protocol.errors import ProtocolError, is_fatal
from protocol.events import TO_SERVER, Bye, Error, Event, Hello, Ok, Ping, Pong, Welcome, outgoing
from protocol.version import PROTOCOL_VERSIONS, __version__

log = logging.getLogger(__name__)

#: A coroutine that opens a byte stream to the server (the default uses TCP).
StreamFactory = Callable[[], Awaitable[trio.abc.Stream]]

READ_SIZE = 65536
#: Error codes after which reconnecting cannot help.
FINAL_CODES = frozenset({"bad_token", "unsupported_version", "handshake_required", "bad_message"})
#: ``bye`` reasons after which the session must not come back by itself: another
#: connection resumed it (reconnecting would take it back and loop).
FINAL_BYE_REASONS = frozenset({"session_resumed"})


#: Seconds :meth:`Session.request` waits for a reply unless told otherwise (the
#: session's ``request_timeout``): a server that answers every request replies in
#: milliseconds; one that does not must not hang its caller for ever.
DEFAULT_REQUEST_TIMEOUT = 30.0


class SessionState(enum.Enum):
    """Where the session is; the TUI shows it."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


class SessionError(Exception):
    """Base of the errors this module raises."""


class ServerError(SessionError):
    """The server answered ``error``.

    Attributes:
        code: the error code (see protocol.errors.CODES).
        message: the server's human-readable text.
        reply: the whole error message (``field``, ``match``, ``versions``...).
        retry_after: a refusal of pace's seconds until the request may succeed (None:
            the error carried none, or not a number).
    """

    def __init__(self, code: str, message: str, reply: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reply = reply or {}
        self.field = self.reply.get("field")
        self.match = self.reply.get("match")
        self.versions = self.reply.get("versions")
        wait = self.reply.get("retry_after")
        self.retry_after: float | None = wait if isinstance(wait, (int, float)) else None


class ConnectionLost(SessionError):
    """The connection dropped before the reply came; the request may or may not have run."""


class SessionClosed(SessionError):
    """The session is over (closed by us, by the server, or reconnection gave up)."""


@dataclass(frozen=True)
class Backoff:
    """Reconnection delays: ``initial * factor**attempt`` capped at ``maximum``, then
    multiplied by a random factor in ``[1 - jitter, 1]`` so clients spread out."""

    initial: float = 0.25
    maximum: float = 10.0
    factor: float = 2.0
    jitter: float = 0.5
    #: Give up after this many failed attempts in a row (None: never).
    attempts: int | None = None

    def delay(self, attempt: int, rng: random.Random) -> float:
        """The delay before attempt number ``attempt`` (0-based)."""
        base = min(self.maximum, self.initial * self.factor ** min(attempt, 64))
        return base * (1 - self.jitter * rng.random())


class _Waiter:
    """One request waiting for its reply."""

    __slots__ = ("event", "reply", "error")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.reply: dict[str, Any] | None = None
        self.error: SessionError | None = None

    def resolve(self, reply: dict[str, Any] | None, error: SessionError | None = None) -> None:
        if not self.event.is_set():
            self.reply, self.error = reply, error
            self.event.set()


class _Link:
    """One live connection: the stream, its sans-IO Connection, and its outbox."""

    def __init__(self, stream: trio.abc.Stream, conn: Connection, outbox_size: int) -> None:
        self.stream = stream
        self.conn = conn
        self.out_send, self.out_recv = trio.open_memory_channel[bytes](outbox_size)
        self.pings: dict[int, float] = {}  # ping id -> time sent
        self.dead_reason: str | None = None


class Session:
    """A client session; build it with :func:`open_session`.

    Attributes:
        state: the :class:`SessionState`.
        token: the resume token from the latest welcome (persist it to resume later).
        auth: ``hello.auth`` (``{"password": ...}`` or ``{"api_token": ...}``), sent
            when there is no resume token to send.
        name: the name of the latest welcome (an account's own spelling).
        session_id: the server's session id.
        welcome: the latest welcome message.
        limits: ``welcome["limits"]``.
        resumed: True when the latest welcome resumed an earlier session.
        rtt: the latest ping round-trip time in seconds, or None before the first pong.
        pushes: receive channel of every server message that is not a reply.
        close_reason: why the session ended (a code such as ``"server_shutdown"``).
        reconnects: how many times the session reconnected successfully.
        dropped_pushes: pushes dropped because ``pushes`` was full (oldest first).
    """

    def __init__(
        self,
        connect: StreamFactory,
        *,
        name: str,
        client: str,
        token: str | None = None,
        auth: dict[str, str] | None = None,
        reconnect: bool = False,
        backoff: Backoff | None = None,
        ping_interval: float | None = None,
        ping_timeout: float | None = None,
        handshake_timeout: float = 10.0,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        on_state: Callable[[SessionState], None] | None = None,
        push_buffer: int = 1024,
        outbox_size: int = 64,
        seed: int | None = None,
    ) -> None:
        self._connect = connect
        #: the addresses tried in turn, when ``connect`` is a Failover
        self.failover = connect if isinstance(connect, Failover) else None
        self.name = name
        self.client = client
        self.token = token
        self.auth = auth
        self.reconnect = reconnect
        self.backoff = backoff or Backoff()
        self._ping_interval = ping_interval
        self._ping_timeout = ping_timeout
        self.handshake_timeout = handshake_timeout
        #: seconds a request waits for its reply by default (None: no limit)
        self.request_timeout = request_timeout
        self.on_state = on_state
        self._outbox_size = outbox_size
        self._rng = random.Random(seed)
        self.state = SessionState.CONNECTING
        self.session_id: str | None = None
        self.welcome: dict[str, Any] | None = None
        self.limits: dict[str, Any] = {}
        self.resumed = False
        self.rtt: float | None = None
        self.close_reason: str | None = None
        self.reconnects = 0
        self.dropped_pushes = 0
        self._push_send, self.pushes = trio.open_memory_channel[dict[str, Any]](push_buffer)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Waiter] = {}
        #: ids of requests given up on (timeout, cancel): their late replies are dropped
        self._abandoned: collections.deque[int] = collections.deque(maxlen=1024)
        self._link: _Link | None = None
        self._connected = trio.Event()
        self._closed = trio.Event()
        self._cancel: trio.CancelScope | None = None

    # ------------------------------------------------------------------ public API

    @property
    def ping_interval(self) -> float:
        """Seconds between our pings (ours if given, else the server's, else 10)."""
        if self._ping_interval is not None:
            return self._ping_interval
        return float(self.limits.get("ping_interval") or 10.0)

    @property
    def ping_timeout(self) -> float:
        """Seconds a ping may stay unanswered before the connection counts as dead."""
        if self._ping_timeout is not None:
            return self._ping_timeout
        return float(self.limits.get("ping_timeout") or 30.0)

    async def request(
        self, msg: Event | dict[str, Any], timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request with a fresh ``id`` and return the ``ok`` reply (its wire map).

        Args:
            msg: the request event (or its wire map) without ``id`` (an ``id`` given
                is replaced).
            timeout: seconds to wait for the reply (None: the session's
                ``request_timeout``, by default :data:`DEFAULT_REQUEST_TIMEOUT`;
                ``math.inf``: no limit).

        Raises:
            ServerError: the server answered ``error``.
            ConnectionLost: the connection dropped before the reply.
            SessionClosed: the session is closed (or closes while waiting).
            protocol.errors.LocalProtocolError: ``msg`` is not a valid request.
            trio.TooSlowError: ``timeout`` passed (its late reply is dropped).
        """
        if timeout is None:
            timeout = self.request_timeout
        event = outgoing(msg, TO_SERVER)
        if not event.IS_REQUEST:
            raise ValueError(f"{event.TYPE!r} is not a request; use send()")
        rid = next(self._ids)
        event = dataclasses.replace(event, id=rid)  # type: ignore[call-arg]
        waiter = _Waiter()
        self._pending[rid] = waiter
        try:
            with trio.fail_after(math.inf if timeout is None else timeout):
                await self._enqueue(event)
                await waiter.event.wait()
        finally:
            if self._pending.pop(rid, None) is not None and not waiter.event.is_set():
                self._abandoned.append(rid)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.reply is not None
        if waiter.reply["type"] == "error":
            raise ServerError(waiter.reply["code"], waiter.reply["message"], waiter.reply)
        return waiter.reply

    async def send(self, msg: Event | dict[str, Any]) -> None:
        """Send a message (an event, or its wire map) without waiting for any reply
        (waits for a connection).

        Raises:
            SessionClosed: the session is closed.
            protocol.errors.LocalProtocolError: ``msg`` is not valid.
        """
        await self._enqueue(outgoing(msg, TO_SERVER))

    async def next_push(self, timeout: float | None = None) -> dict[str, Any]:
        """The next pushed message.

        Raises:
            SessionClosed: the session ended and every push was taken.
            trio.TooSlowError: ``timeout`` passed.
        """
        try:
            with trio.fail_after(math.inf if timeout is None else timeout):
                return await self.pushes.receive()
        except trio.EndOfChannel:
            raise SessionClosed(self.close_reason or "closed") from None

    async def wait_connected(self) -> None:
        """Return once the session is connected.

        Raises:
            SessionClosed: the session is closed instead.
        """
        while True:
            if self.state is SessionState.CLOSED:
                raise SessionClosed(self.close_reason or "closed")
            if self._connected.is_set():
                return
            await self._wait_connected_or_closed()

    async def ping(self) -> float:
        """Ping the server now and return the round-trip time in seconds.

        Raises:
            ConnectionLost, SessionClosed: as for :meth:`request`.
        """
        start = trio.current_time()
        rid = next(self._ids)
        waiter = _Waiter()
        self._pending[rid] = waiter
        try:
            await self._enqueue(Ping(id=rid))
            await waiter.event.wait()
        finally:
            self._pending.pop(rid, None)
        if waiter.error is not None:
            raise waiter.error
        self.rtt = trio.current_time() - start
        return self.rtt

    async def aclose(self) -> None:
        """Close the session: the connection, the tasks, and the pushes channel."""
        self._shutdown("closed")
        if self._link is not None:
            await _close_stream(self._link.stream)

    # ------------------------------------------------------------------ internals

    def _set_state(self, state: SessionState) -> None:
        if state is self.state:
            return
        self.state = state
        log.debug("session %s: %s", self.name, state.value)
        if self.on_state is not None:
            try:
                self.on_state(state)
            except Exception:  # a broken callback must not kill the connection
                log.exception("on_state callback failed")

    def _shutdown(self, reason: str) -> None:
        if self.state is SessionState.CLOSED:
            return
        self.close_reason = self.close_reason or reason
        self._fail_pending(SessionClosed(self.close_reason))
        self._set_state(SessionState.CLOSED)
        self._push_send.close()
        self._closed.set()
        self._connected.set()  # wake waiters; they see CLOSED
        if self._cancel is not None:
            self._cancel.cancel()

    def _fail_pending(self, error: SessionError) -> None:
        for waiter in self._pending.values():
            waiter.resolve(None, error)

    async def _wait_connected_or_closed(self) -> None:
        await self._connected.wait()

    async def _enqueue(self, msg: Event) -> None:
        while True:
            if self.state is SessionState.CLOSED:
                raise SessionClosed(self.close_reason or "closed")
            link = self._link
            if link is not None and self._connected.is_set():
                if link.conn.state in (ConnState.MUST_CLOSE, ConnState.CLOSED):
                    raise ConnectionLost("the connection is closing")
                data = link.conn.send(msg)  # validates; raises LocalProtocolError
                try:
                    await link.out_send.send(data)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    raise ConnectionLost("the connection dropped") from None
                return
            await self._wait_connected_or_closed()

    async def _open_link(self) -> _Link:
        """Connect and handshake.

        Raises:
            OSError: the connection failed.
            ServerError: the server refused the hello.
            ConnectionLost: the server closed during the handshake.
            trio.TooSlowError: no welcome within ``handshake_timeout``.
        """
        stream = await self._connect()
        try:
            with trio.fail_after(self.handshake_timeout):
                return await self._handshake(stream)
        except BaseException:
            await _close_stream(stream)
            raise

    async def _handshake(self, stream: trio.abc.Stream) -> _Link:
        conn = Connection("client")
        hello = Hello(protocol=list(PROTOCOL_VERSIONS), name=self.name, client=self.client,
                      resume=self.token or None,
                      auth=None if self.token or not self.auth else dict(self.auth))
        await stream.send_all(conn.send(hello))
        while True:
            try:
                event = conn.next_event()
            except ProtocolError as exc:
                raise ConnectionLost(f"bad handshake reply: {exc}") from None
            if event is NEED_DATA:
                data = await stream.receive_some(READ_SIZE)
                conn.receive_data(data)
                continue
            if event is CLOSED:
                raise ConnectionLost("the server closed during the handshake")
            if isinstance(event, Welcome):
                break
            if isinstance(event, Error):
                raise ServerError(event.code, event.message, event.to_wire())
            assert isinstance(event, Event)
            raise ConnectionLost(f"the server said {event.TYPE} during the handshake")
        self.welcome = event.to_wire()
        self.name = event.name
        self.token = event.token
        self.session_id = event.session
        self.limits = dict(event.limits)
        self.resumed = event.resumed
        if self.failover is not None:
            self.failover.welcomed(event.nodes)
        return _Link(stream, conn, self._outbox_size)

    async def _first_link(self) -> _Link:
        """The first connection: with several addresses, one that refuses the
        handshake (full, shutting down, silent, not knowing our token) passes the
        turn to the next; the last one's failure is raised.

        Raises:
            as :meth:`_open_link`.
        """
        tries = 1 if self.failover is None else len(self.failover.ring())
        for attempt in range(1, tries + 1):
            try:
                return await self._open_link()
            except ServerError as exc:
                if attempt == tries or (exc.code in FINAL_CODES
                                        and not self._another_may_know(exc.code)):
                    raise
                log.info("connect refused: %s; trying the next address", exc)
            except (ConnectionLost, trio.TooSlowError) as exc:
                if attempt == tries:
                    raise
                log.info("connect failed: %r; trying the next address", exc)
        raise AssertionError("unreachable")

    def _another_may_know(self, code: str) -> bool:
        """After a refused hello: whether another address may still accept it (a
        ``bad_token`` from a server outside the session's cluster)."""
        return (code == "bad_token" and self.failover is not None
                and self.failover.token_refused())

    @property
    def address(self) -> str | None:
        """The address of the latest connection, when the session has several."""
        if self.failover is None or self.failover.current is None:
            return None
        return str(self.failover.current)

    async def _supervise(self, link: _Link, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve links one after the other until the session ends."""
        with trio.CancelScope() as scope:
            self._cancel = scope
            self._attach(link)
            task_status.started()
            while True:
                reason = await self._serve(link)
                if self.state is SessionState.CLOSED:
                    return
                self.close_reason = reason
                if not self.reconnect or reason in FINAL_BYE_REASONS:
                    break
                next_link = await self._reconnect_loop()
                if next_link is None:
                    break
                link = next_link
                self.reconnects += 1
                self.close_reason = None
                self._attach(link)
        self._shutdown(self.close_reason or "closed")

    def _attach(self, link: _Link) -> None:
        """Make ``link`` the live connection: requests go to it from now on."""
        self._link = link
        self._connected.set()
        self._set_state(SessionState.CONNECTED)

    async def _serve(self, link: _Link) -> str:
        """Run one (attached) link's reader, writer and heartbeat; return why it ended."""
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._reader, link, nursery.cancel_scope)
                nursery.start_soon(self._writer, link, nursery.cancel_scope)
                nursery.start_soon(self._heartbeat, link, nursery.cancel_scope)
        finally:
            self._connected = trio.Event()
            self._link = None
            link.out_send.close()
            await _close_stream(link.stream)
            self._fail_pending(ConnectionLost(link.dead_reason or "connection lost"))
        return link.dead_reason or "connection lost"

    async def _reconnect_loop(self) -> _Link | None:
        """Reconnect with backoff; None when giving up (final error or attempts used)."""
        self._set_state(SessionState.RECONNECTING)
        attempt = 0
        while self.backoff.attempts is None or attempt < self.backoff.attempts:
            await trio.sleep(self.backoff.delay(attempt, self._rng))
            attempt += 1
            try:
                return await self._open_link()
            except ServerError as exc:
                log.info("reconnect refused: %s", exc)
                if exc.code in FINAL_CODES and not self._another_may_know(exc.code):
                    self.close_reason = exc.code
                    await self._push({"type": "error", "code": exc.code, "message": exc.message})
                    return None
            except (OSError, trio.BrokenResourceError, trio.TooSlowError, ConnectionLost) as exc:
                log.info("reconnect attempt %d failed: %r", attempt, exc)
        self.close_reason = "reconnect_failed"
        return None

    async def _push(self, msg: dict[str, Any]) -> None:
        """Queue a push; when the buffer is full, drop the oldest (never block the reader)."""
        try:
            while True:
                try:
                    self._push_send.send_nowait(msg)
                    return
                except trio.WouldBlock:
                    self.pushes.receive_nowait()
                    self.dropped_pushes += 1
                    if self.dropped_pushes == 1:
                        log.warning("push buffer full: dropping the oldest pushes")
        except (trio.ClosedResourceError, trio.BrokenResourceError, trio.WouldBlock):
            pass

    async def _reader(self, link: _Link, scope: trio.CancelScope) -> None:
        conn = link.conn
        try:
            while True:
                try:
                    event = conn.next_event()
                except ProtocolError as exc:
                    if exc.fatal:
                        link.dead_reason = exc.code
                        return
                    log.warning("ignoring a bad message from the server: %s", exc)
                    continue
                if event is NEED_DATA:
                    try:
                        data = await link.stream.receive_some(READ_SIZE)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        data = b""
                    conn.receive_data(data)
                    continue
                if event is CLOSED:
                    link.dead_reason = link.dead_reason or "connection closed"
                    return
                assert isinstance(event, Event)
                await self._dispatch(link, event)
        finally:
            scope.cancel()

    async def _dispatch(self, link: _Link, event: Event) -> None:
        if isinstance(event, Ping):
            await link.out_send.send(link.conn.send(Pong(id=event.id)))
            return
        if isinstance(event, Pong):
            sent = link.pings.pop(event.id, None)
            if sent is not None:
                self.rtt = trio.current_time() - sent
            waiter = self._pending.get(event.id)
            if waiter is not None:
                waiter.resolve(event.to_wire())
            return
        if isinstance(event, Ok | Error) and event.id is not None:
            waiter = self._pending.get(event.id)
            if waiter is not None:
                waiter.resolve(event.to_wire())
                return
            if event.id in self._abandoned:  # a late reply to a request given up on
                return
        if isinstance(event, Ok):  # a reply to a message sent with send(): nobody waits for it
            return
        if isinstance(event, Bye):
            link.dead_reason = event.reason
        elif isinstance(event, Error) and is_fatal(event.code):
            link.dead_reason = event.code
        await self._push(event.to_wire())

    async def _writer(self, link: _Link, scope: trio.CancelScope) -> None:
        try:
            async for data in link.out_recv:
                await link.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            link.dead_reason = link.dead_reason or "write failed"
        finally:
            scope.cancel()

    async def _heartbeat(self, link: _Link, scope: trio.CancelScope) -> None:
        """Ping every ping_interval; a ping unanswered for ping_timeout kills the link."""
        next_ping = trio.current_time() + self.ping_interval
        while True:
            now = trio.current_time()
            oldest = min(link.pings.values(), default=None)
            if oldest is not None and now - oldest >= self.ping_timeout:
                link.dead_reason = "heartbeat_timeout"
                scope.cancel()
                return
            if now >= next_ping:
                pid = next(self._ids)
                link.pings[pid] = now  # counted even if the writer is stuck
                oldest = now if oldest is None else oldest
                try:
                    link.out_send.send_nowait(link.conn.send(Ping(id=pid)))
                except trio.WouldBlock:
                    pass
                next_ping = now + self.ping_interval
            wake = next_ping if oldest is None else min(next_ping, oldest + self.ping_timeout)
            await trio.sleep_until(wake)


async def _close_stream(stream: trio.abc.Stream) -> None:
    with trio.CancelScope(shield=True):
        try:
            await stream.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass


def tcp_connector(host: str, port: int) -> StreamFactory:
    """A StreamFactory that opens a TCP connection (Nagle off: frames go out at once)."""

    async def connect() -> trio.abc.Stream:
        stream = await trio.open_tcp_stream(host, port)
        try:
            import socket

            stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        except (OSError, AttributeError):
            pass
        return stream

    return connect


def client_tls_context(ca: str | None = None) -> ssl.SSLContext:
    """A client context that checks the server's certificate and host name against
    the system's trusted roots, or only against the CA certificate(s) in the PEM file
    ``ca`` (a private CA).

    Raises:
        OSError, ssl.SSLError: ``ca`` cannot be read or holds no valid certificate.
    """
    return ssl.create_default_context(cafile=ca)


def tls_connector(host: str, port: int, ca: str | None = None) -> StreamFactory:
    """A StreamFactory that opens TCP to ``host:port`` and speaks TLS inside it,
    checking the certificate (see :func:`client_tls_context`) for ``host``. The
    stream it returns has completed its handshake; a failed one raises the
    ``ssl.SSLError`` (an OSError) or ConnectionError.

    Raises:
        OSError, ssl.SSLError: ``ca`` cannot be used (at once, not at connect time).
    """
    context = client_tls_context(ca)

    async def connect() -> trio.abc.Stream:
        stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=context)
        try:
            await stream.do_handshake()
        except trio.BrokenResourceError as exc:
            await _close_stream(stream)
            cause = exc.__cause__
            if isinstance(cause, ssl.SSLError):  # e.g. the certificate is not trusted
                raise cause from None
            raise ConnectionError(f"TLS handshake with {host}:{port} failed") from exc
        except BaseException:
            await _close_stream(stream)
            raise
        return stream

    return connect


def failover_connector(addresses: Sequence[str | Address] | str, ca: str | None = None,
                       ) -> Failover:
    """A :class:`~client.failover.Failover` over ``addresses`` (``"a:7000,b:7001"``,
    or a list of texts or :class:`~client.address.Address`), each opened by
    :func:`connector` (TLS for a ``tls://`` address, trusting ``ca``).

    Raises:
        ValueError: no address, or a malformed one.
    """
    parsed = parse_addresses(addresses if isinstance(addresses, str)
                             else [str(a) for a in addresses])

    async def open_stream(address: Address) -> trio.abc.Stream:
        return await connector(address.host, address.port, address.tls,
                               ca if address.tls else None)()

    return Failover(parsed, open_stream)


def connector(host: str, port: int, tls: bool = False, ca: str | None = None) -> StreamFactory:
    """:func:`tls_connector` when ``tls`` (a ``tls://`` address), else :func:`tcp_connector`.

    Raises:
        ValueError: ``ca`` without ``tls``.
        OSError, ssl.SSLError: ``ca`` cannot be used.
    """
    if not tls:
        if ca is not None:
            raise ValueError("--ca is for tls:// addresses only")
        return tcp_connector(host, port)
    return tls_connector(host, port, ca)


@asynccontextmanager
async def open_session(
    host: str | None = None,
    port: int | None = None,
    *,
    name: str,
    client: str = f"cardclient/{__version__}",
    token: str | None = None,
    connect: StreamFactory | None = None,
    tls: bool = False,
    ca: str | None = None,
    addresses: Sequence[str | Address] | str | None = None,
    **options: Any,
) -> AsyncIterator[Session]:
    """Connect, handshake, and yield a running :class:`Session`; close it on exit.

    Args:
        host, port: the server (ignored when ``connect`` or ``addresses`` is given).
        addresses: several addresses of one server (``"a:7000,b:7001"`` or a list;
            ``tls://`` per address): tried in order, and after a lost connection
            the session resumes on the next live one (:mod:`client.failover`).
        tls: speak TLS inside the TCP connection (a ``tls://`` address), checking
            the server's certificate; ``ca``: a PEM file of the private CA to trust
            instead of the system's roots.
        name: display name (1..32 characters).
        client: client software and version, e.g. ``"mybot/0.1"``.
        token: a resume token from an earlier session, to take its seats back.
        connect: a coroutine function returning a trio Stream (tests use memory
            streams); default: TCP to ``host:port``.
        **options: passed to :class:`Session`: ``reconnect``, ``backoff``,
            ``ping_interval``, ``ping_timeout``, ``handshake_timeout``,
            ``request_timeout`` (default :data:`DEFAULT_REQUEST_TIMEOUT`), ``on_state``,
            ``push_buffer``, ``outbox_size``, ``seed``, ``auth`` (log in as ``name``).

    Raises:
        OSError: the first connection failed.
        ssl.SSLError (an OSError): the TLS handshake failed (e.g. an untrusted
            certificate).
        ServerError: the server refused the hello (``bad_token``, ``unsupported_version``...).
        ConnectionLost: the server closed during the handshake.
        trio.TooSlowError: no welcome within ``handshake_timeout``.
    """
    if connect is None and addresses is not None:
        connect = failover_connector(addresses, ca)
    if connect is None:
        if host is None or port is None:
            raise ValueError("give host and port, addresses, or connect")
        connect = connector(host, port, tls, ca)
    session = Session(connect, name=name, client=client, token=token, **options)
    try:
        link = await session._first_link()
    except BaseException:
        session._shutdown("connect failed")
        raise
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(session._supervise, link)
            try:
                yield session
            finally:
                await session.aclose()
    except BaseExceptionGroup as group:
        # Our own tasks never raise, so a group holds what the caller's block raised:
        # give it back unwrapped.
        raise _unwrap(group) from None


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
