"""One client connection: handshake, a reader task, a writer task, heartbeats.

Wire handling is :class:`protocol.connection.Connection` (sans-IO); this module
only moves bytes and enforces the server's limits:

* the handshake must complete within ``handshake_timeout`` (else
  ``handshake_timeout``, and the connection is closed);
* everything sent goes through an outbox drained by the writer task, bounded in
  messages (``outbox_size``) and in bytes (``outbox_bytes``: a message is framed
  when it is pushed, so its size is known); a push past either bound marks the
  client a slow consumer and disconnects it (its seats enter their grace
  period) instead of blocking a match or growing the server;
* the writer pings every ``ping_interval``; a peer the reader has waited for and
  not heard from (any frame counts) for ``ping_interval + ping_timeout`` is
  dropped (by a watcher task, so that no read needs a cancel scope of its own);
* every request costs tokens of a :class:`~server.ratelimit.TokenBucket` by its
  cost (:func:`~server.ratelimit.request_cost`; ``rate_limited``; sustained abuse
  disconnects), and as many of its address's
  :class:`~server.ratelimit.AddressThrottle` (past it, the reader waits);
* connection log lines are counted per client address (:class:`~server.logvolume.
  LogVolume`): past ``log_burst`` in a ``log_interval`` they are aggregated into
  one summary line, so a hello loop cannot grow the log without bound;
* any failure in here ends this connection only; it never propagates.

A connection closed on purpose gets a last message first: ``bye`` (shutdown,
slow consumer, heartbeat, rate abuse, session resumed elsewhere) or the fatal
``error`` (bad frame, failed handshake), sent only if the stream is between
frames.

Every message is an event of :mod:`protocol.events` and goes out through
``Connection.send`` (when it is pushed); an event was validated when it was built
(the match core's snapshots and oks, built with ``protocol.events.trusted``, only
under the test suite's ``CARDSERVER_CHECK_EVENTS``).
Transitionally, the rest of the server may still push plain message maps:
``Connection.send`` turns each into its event first, so they are validated the
same way. A message that fails validation is our own bug: it is logged at ERROR
and not sent (an ``ok`` reply is replaced by ``internal_error``), as is any
unexpected exception of a request's handler.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

import trio

from protocol.connection import CLOSED, NEED_DATA, Connection
from protocol.connection import State as ConnState
from protocol.errors import LocalProtocolError, ProtocolError, Refusal, RemoteProtocolError
from protocol.events import Bye, Error, Event, Hello, Ok, Ping, Pong, Welcome
from protocol.version import __version__
from protocol.versions import negotiate
from server import metrics
from server.config import ServerConfig
from server.direct import DIRECT
from server.logvolume import LogVolume
from server.poller import Poller
from server.quotas import address_of
from server.ratelimit import AddressThrottle, TokenBucket, request_cost
from server.session import Message, Outbox, Session
from server.store import AccountRecord

log = logging.getLogger("cardserver.connection")


READ_SIZE = 65536
#: Most queued messages the writer joins into one send.
WRITE_BATCH = 64
#: Longest a reader runs requests already in its buffer (a pipelining client's)
#: before it lets every other task run once: refusals are answered without any
#: checkpoint, so a buffer of a thousand pipelined requests would otherwise hold
#: the whole server for tens of milliseconds.
READER_SLICE = 0.002
#: Most requests the poller (server/poller.py) runs for one connection in one
#: pass before it hands the connection back to its reader (which checkpoints
#: every READER_SLICE): a pipelining client cannot hold the poller either.
POLL_BATCH = 16


class Lobby(Protocol):
    """The calls a connection makes into the lobby (the fixed contract)."""

    async def authenticate(self, name: str, auth: dict[str, Any] | None,
                           address: str) -> tuple[str, AccountRecord | None, str | None]: ...

    async def new_session(self, name: str, account: AccountRecord | None = None,
                          api_token: str | None = None,
                          address: str = ...) -> tuple[Session, str]: ...

    async def resume(self, token: str, address: str = ...) -> Session: ...

    async def attach(self, session: Session, client: Outbox,
                     replace: Callable[[Any], None] | None = None) -> None: ...

    def detach(self, session: Session, client: Outbox) -> None: ...

    async def handle(self, session: Session, msg: dict[str, Any]) -> None: ...

    def handle_nowait(self, session: Session, event: Event) -> bool: ...


class Host(Protocol):
    """What a connection needs of the server that accepted it: its config and lobby."""

    config: ServerConfig
    lobby: Lobby
    log_volume: LogVolume
    throttle: AddressThrottle
    #: where an idle plain-socket connection waits (None: each reader waits itself)
    poller: Poller | None


class ClientConnection:
    """Serves one accepted stream until it closes; see the module docstring."""

    def __init__(self, server: Host, stream: trio.abc.Stream, peer: str) -> None:
        self.server = server
        self.config = server.config
        self.stream = stream
        self.peer = peer
        #: the peer's host without the port (login limits and quotas count per address)
        self.address = address_of(peer)
        self.host = self.address
        self.log_volume = server.log_volume
        self.conn = Connection("server", max_frame=self.config.max_frame)
        self._out_send, self._out_recv = trio.open_memory_channel[bytes](
            self.config.outbox_size)
        #: bytes framed into the outbox and not yet taken by the writer
        self._queued_bytes = 0
        self.session: Session | None = None
        self.scope = trio.CancelScope()
        self.final: Event | None = None
        self.reason = "closed by peer"
        self.last_heard = trio.current_time()
        self.bucket = TokenBucket(self.config.rate, self.config.burst, self.last_heard,
                                  self.config.abuse_limit, self.config.abuse_window)
        self._drop_backlog = False
        self._writer_started = False
        self._writer_done = trio.Event()
        self._room = trio.Event()
        self._broken = False
        self._ping_id = 0
        #: messages pushed to the outbox and not yet written (the writer may hold some)
        self._queued = 0
        self._writing = False
        #: frames encoded for a direct write (server.direct)
        self._direct_buf: list[bytes] = []
        self._fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else None
        #: the last read found the socket empty or emptied it (a short read): the
        #: next one waits for readiness first instead of failing with EAGAIN
        self._drained = False
        #: a read waited for the peer since the reader last looked (other tasks ran)
        self._waited = False
        #: the heartbeat watcher's scope (:meth:`_watch_silence`), once it runs
        self._watch: trio.CancelScope | None = None
        #: the reader waits for the peer's bytes (what the watcher may cut short)
        self._awaiting_data = False
        #: set when the reader starts waiting (the watcher waits for it, rarely)
        self._watch_wake: trio.Event | None = None
        #: the poller the reader waits in once the session is open (plain sockets)
        self._poller = server.poller if self._fd is not None else None
        self._polling = False
        #: set by the poller when it hands the connection back to the reader
        self._poll_wake = trio.Event()
        #: a request the poller admitted (rate limit, throttle) but could not run
        #: at once, with the throttle's wait: the reader's to carry out next
        self._handed: tuple[Event, float] | None = None
        #: set with :attr:`_handed` for the event :meth:`_receive` returns
        self._admitted: float | None = None

    @property
    def direct(self) -> bool:
        """A plain socket: replies may be written without the writer task."""
        return self._fd is not None

    # -- for the rest of the server -------------------------------------

    def push(self, msg: Message) -> None:
        """Frame ``msg`` (an event, or transitionally its wire map; validated here)
        once: while :data:`~server.direct.DIRECT` collects and nothing of this
        connection is queued, for a direct write; else for the writer. An outbox
        full in messages or in bytes disconnects (slow_consumer)."""
        if self.final is not None:
            return
        data = self._encode(msg)
        if data is None:
            return
        if (DIRECT.depth and self._fd is not None and not self._queued
                and not self._writing and not self._broken):
            if not self._direct_buf:
                DIRECT.dirty.append(self)
            self._direct_buf.append(data)
            return
        self._enqueue(data)

    def flush(self) -> None:
        """Write the frames encoded for a direct write with one non-blocking ``send``;
        what the socket does not take goes to the writer."""
        data = b"".join(self._direct_buf)
        self._direct_buf.clear()
        if self._broken or not data:
            return
        try:
            sent = os.write(self._fd, data)  # type: ignore[arg-type]
        except BlockingIOError:
            sent = 0
        except OSError:
            self._broken = True
            if self.final is None:
                self.reason = "peer gone"
            self.scope.cancel()
            return
        if sent < len(data):
            self._enqueue(data[sent:])

    def _enqueue(self, data: bytes) -> None:
        if self._queued_bytes + len(data) > self.config.outbox_bytes:
            self.close_with_bye("slow_consumer",
                                f"more than {self.config.outbox_bytes} bytes unread")
            return
        try:
            self._out_send.send_nowait(data)
            self._queued += 1
        except trio.WouldBlock:
            self.close_with_bye("slow_consumer",
                                f"more than {self.config.outbox_size} messages unread")
            return
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        self._queued_bytes += len(data)

    def close_with_bye(self, reason: str, message: str) -> None:
        """Close on purpose: send ``bye {reason, message}`` if possible, then close."""
        metrics.bye(reason)
        self._close(Bye(reason=reason, message=message), reason)

    def _close(self, final: Event, reason: str) -> None:
        """Stop reading; the writer sends what is queued (nothing for a slow
        consumer), then ``final``, within ``shutdown_timeout``."""
        if self.final is None:
            self.final = final
            self.reason = reason
            self._drop_backlog = reason == "slow_consumer"
        self.scope.cancel()

    def _new_scope(self) -> trio.CancelScope:
        """The scope that :meth:`_close` cancels (already cancelled once closing)."""
        self.scope = trio.CancelScope()
        if self.final is not None or self._broken:
            self.scope.cancel()
        return self.scope

    # -- the handler ----------------------------------------------------

    async def serve(self) -> None:
        """Run the connection to its end; never raises (except Cancelled)."""
        opened = False
        try:
            with self._new_scope():
                opened = await self._handshake()
            if opened:
                await self._serve_open()
        except Exception:
            log.exception("connection %s failed", self.peer)
            self.reason = "internal error"
        finally:
            if self.session is not None:
                try:
                    self.server.lobby.detach(self.session, self)
                except Exception:
                    log.exception("connection %s: detaching its session failed", self.peer)
            await self._goodbye()
            self.log_volume.info(log, self.address, "connection %s%s closed: %s", self.peer,
                                 f" ({self.session.id})" if self.session else "", self.reason)

    async def _serve_open(self) -> None:
        """After the welcome: the writer, the session's matches, then the reader."""
        assert self.session is not None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer)
            self._watch = await nursery.start(self._watch_silence)
            with self._new_scope():
                await self.server.lobby.attach(self.session, self, replace=_replaced)
                await self._reader()
            self._watch.cancel()
            self._out_send.close()
            with trio.move_on_after(self.config.shutdown_timeout):
                await self._writer_done.wait()
            nursery.cancel_scope.cancel()

    async def _goodbye(self) -> None:
        """Send the final message if the writer never ran (handshake), then close."""
        with trio.CancelScope(shield=True), trio.move_on_after(self.config.shutdown_timeout):
            if self.final is not None and not self._writer_started:
                metrics.sent(self.final)
                try:
                    await self.stream.send_all(self.conn.send(self.final))
                except (LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
            try:
                await self.stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async def _receive(self) -> Event | None:
        """The next event from the peer, None when it closed.

        Raises:
            ProtocolError: from the sans-IO connection (fatal or not).
            _Silent: the peer has been silent past the heartbeat bound.
        """
        while True:
            if self._handed is not None:   # the poller's, admitted already
                event, self._admitted = self._handed
                self._handed = None
                return event
            try:
                event = self.conn.next_event()
            except ProtocolError:
                self.last_heard = trio.current_time()  # a whole (bad) frame arrived
                raise
            if event is CLOSED:
                return None
            if isinstance(event, Event):
                # only a whole frame is a sign of life: bytes trickled into a frame
                # that never completes do not hold the connection open (slowloris)
                self.last_heard = trio.current_time()
                return event
            assert event is NEED_DATA
            deadline = self.last_heard + self.config.ping_interval + self.config.ping_timeout
            if self._watch is None:   # the handshake: no watcher yet
                with trio.move_on_at(deadline):
                    data = await self._read()
                    if data is not None:
                        self.conn.receive_data(data)
                    continue
                raise _Silent()
            # the watcher closes the connection if the peer stays silent while we wait
            if trio.current_time() >= deadline:
                raise _Silent()
            self._awaiting_data = True
            if self._watch_wake is not None:
                self._watch_wake.set()
            try:
                data = await self._read()
            finally:
                self._awaiting_data = False
            if data is not None:
                self.conn.receive_data(data)

    async def _read(self) -> bytes | None:
        """The next bytes from the peer; b"" once it has closed or the stream broke;
        None when the poller read them (they are in ``self.conn``, and a request it
        could not run is in ``self._handed``).

        A plain socket is read directly: what ``receive_some`` does, without its
        checkpoints around a read that found bytes (the reader checkpoints every
        :data:`READER_SLICE` itself). After a read that emptied the socket (fewer
        bytes than asked for) the next one waits for readiness first: a client
        that waits for its answer has sent nothing more yet, and reading at once
        would only fail with EAGAIN (a system call and an exception per request).
        """
        fd = self._fd
        if fd is None:   # TLS, in-memory streams
            self._waited = True   # receive_some checkpoints
            try:
                return await self.stream.receive_some(READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return b""
        while True:
            if self._drained:
                self._waited = True
                poller = self._poller if self._polling else None
                if poller is not None and not poller.closed:
                    return await self._wait_in_poller(poller, fd)
                try:
                    await trio.lowlevel.wait_readable(fd)
                except trio.ClosedResourceError:
                    return b""
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                self._drained = True
                continue
            except OSError:   # reset by the peer
                return b""
            # a short read emptied the socket: its next bytes come after a wait
            self._drained = len(data) < READ_SIZE
            return data

    async def _wait_in_poller(self, poller: Poller, fd: int) -> bytes | None:
        """Leave the socket to ``poller`` until it hands the connection back
        (None: what it read is in ``self.conn``); b"" if the socket is gone."""
        self._poll_wake = trio.Event()
        try:
            poller.add(fd, self)
        except OSError:
            return b""
        try:
            await self._poll_wake.wait()
        finally:
            poller.remove(fd, self)
        return None

    def handed_back(self) -> None:
        """The poller let go of this connection: its reader carries on."""
        self._poll_wake.set()

    def serve_ready(self, now: float) -> bool:
        """The poller found the socket readable (see server/poller.py): read, and run
        the requests that need no wait, at most :data:`POLL_BATCH`. True to stay in
        the poller; False to go back to the reader, which carries on from there (a
        request the poller admitted but could not run is in ``self._handed``)."""
        if self.final is not None or self._broken:
            return False   # closing: its reader, cancelled, reads nothing more
        try:
            data = os.read(self._fd, READ_SIZE)  # type: ignore[arg-type]
        except BlockingIOError:
            return True
        except OSError:   # reset by the peer
            data = b""
        self._drained = len(data) < READ_SIZE
        self.conn.receive_data(data)   # b"": closed; the reader sees CLOSED
        if not data:
            return False
        for _ in range(POLL_BATCH):
            try:
                event = self.conn.next_event()
            except ProtocolError as exc:
                self.last_heard = now   # a whole (bad) frame arrived
                if not self._protocol_error(exc):
                    return False
                continue
            if event is NEED_DATA:
                return True
            if event is CLOSED:
                return False
            assert isinstance(event, Event)
            self.last_heard = now
            wait = self._admit(event)
            if wait is None:
                if self.final is not None:
                    return False
                continue
            if wait > 0 or not self._dispatch_nowait(event):
                self._handed = (event, wait)
                return False
            if self._backed_up() or self.final is not None or self._broken:
                return False   # the reader waits for room, or is closing
        return False

    async def _watch_silence(self, task_status: trio.TaskStatus[trio.CancelScope]
                             = trio.TASK_STATUS_IGNORED) -> None:
        """Close the connection (``bye heartbeat_timeout``) when the reader has waited
        for the peer's bytes and heard no frame for ``ping_interval + ping_timeout``:
        one sleep per heartbeat period instead of a cancel scope around every read
        (3-5 µs each). While the reader is busy it checks the bound itself before
        it next waits, and wakes this watcher when it does."""
        bound = self.config.ping_interval + self.config.ping_timeout
        with trio.CancelScope() as scope:
            task_status.started(scope)
            while True:
                silent_at = self.last_heard + bound
                if trio.current_time() < silent_at:
                    await trio.sleep_until(silent_at)
                elif self._awaiting_data:
                    self.close_with_bye("heartbeat_timeout", "no answer to ping in time")
                    return
                else:
                    self._watch_wake = trio.Event()
                    await self._watch_wake.wait()
                    self._watch_wake = None

    async def _handshake(self) -> bool:
        """Read hello, answer welcome (or a fatal error); True when the session is open."""
        try:
            with trio.fail_after(self.config.handshake_timeout):
                hello = await self._receive()
        except trio.TooSlowError:
            self._close(RemoteProtocolError("handshake_timeout", "no hello within "
                                            f"{self.config.handshake_timeout} s").to_event(),
                        "handshake timeout")
            return False
        except ProtocolError as exc:
            self._close(exc.to_event(), f"handshake failed: {exc.code}")
            return False
        except _Silent:
            return False
        if hello is None:
            self.reason = "closed before hello"
            return False
        assert isinstance(hello, Hello)  # the state machine admits nothing else first
        lobby = self.server.lobby
        try:
            version = negotiate(hello.protocol)
            resumed = hello.resume is not None
            if hello.resume is not None:
                session = await lobby.resume(hello.resume, self.address)
                token = hello.resume
            else:
                name, account, via = await lobby.authenticate(hello.name, hello.auth,
                                                              self.host)
                session, token = await lobby.new_session(name, account, via,
                                                        address=self.address)
        except ProtocolError as exc:
            _log_if_ours(exc, "handshake")
            self._close(exc.to_event(hello.id), f"handshake failed: {exc.code}")
            return False
        self.session = session
        session.address = self.host
        account = None if session.account is None else {"name": session.account.name,
                                                         "bot": session.account.bot}
        self.push(Welcome(protocol=version, server=f"cardserver/{__version__}",
                          session=session.id, token=token, name=session.name,
                          resumed=resumed, limits=self.config.limits(), account=account,
                          nodes=None if lobby.cluster is None else lobby.cluster.addresses()))
        self.log_volume.info(log, self.address, "connection %s: session %s (%s) %s", self.peer,
                             session.id, session.name, "resumed" if resumed else "started")
        return True

    async def _reader(self) -> None:
        assert self.session is not None
        self._polling = self._poller is not None
        slice_start = trio.current_time()
        while True:
            # backpressure first: after a request of this reader, and when the
            # poller handed the connection back because its outbox backed up
            if self._queued and not await self._wait_for_room():  # no coroutine when none
                return
            if self._waited:
                # the last read waited for the peer, so every other task has run
                # since: a new slice starts at that frame's arrival (no checkpoint)
                self._waited = False
                slice_start = self.last_heard
            elif self.last_heard - slice_start >= READER_SLICE:
                # requests already buffered (a pipelining client) for a whole slice,
                # by the arrival stamps of their frames (no clock read of its own)
                await trio.lowlevel.checkpoint()
                slice_start = trio.current_time()
            try:
                event = await self._receive()
            except _Silent:
                self.close_with_bye("heartbeat_timeout", "no answer to ping in time")
                return
            except ProtocolError as exc:
                if not self._protocol_error(exc):
                    return
                continue
            if event is None:
                return
            wait, self._admitted = self._admitted, None
            if wait is None:
                wait = self._admit(event)
                if wait is None:
                    if self.final is not None:
                        return
                    continue
            if wait > 0:
                await trio.sleep(wait)  # the address's other connections used its share
                slice_start = trio.current_time()
            await self._dispatch(event)

    def _protocol_error(self, exc: ProtocolError) -> bool:
        """Answer a bad message from the peer; False when it was fatal (closing)."""
        if exc.fatal:
            self._close(exc.to_event(), f"protocol error: {exc.code}")
            return False
        self.push(exc.to_event())
        return True

    def _admit(self, event: Event) -> float | None:
        """The limits on one event from the peer, which arrived at ``last_heard``.

        Returns:
            None when nothing more is to be done with it: a pong, a ping (answered),
            a request over the rate limit (refused ``rate_limited``; for sustained
            abuse the connection is closing: ``final`` is set). Else the seconds
            the address throttle asks to wait before it is handled (0: none).
        """
        if isinstance(event, Pong):
            return None
        if isinstance(event, Ping):
            self.push(Pong(id=event.id))
            return None
        if not event.IS_REQUEST:
            return 0.0
        # the limits count at the frame's arrival (stamped a moment ago): no clock
        # read of their own
        now = self.last_heard
        cost = request_cost(event.TYPE, getattr(event, "limit", None), self.config.list_limit)
        if not self.bucket.allow(now, cost):
            if self.bucket.abusive():
                self.close_with_bye("rate_limited", "too many requests, for too long")
                return None
            wait = self.bucket.wait(now, cost)
            self.push(Refusal("rate_limited", f"more than {self.config.rate:g} "
                              "requests per second",
                              retry_after=wait).to_event(getattr(event, "id", None)))
            return None
        return self.server.throttle.delay(self.address, now, cost)

    async def _dispatch(self, event: Event) -> None:
        """Hand an admitted event to the lobby; its failures are answered here."""
        assert self.session is not None
        metrics.request(event.TYPE)
        try:
            # the lobby still reads message maps: hand it the validated event's
            await self.server.lobby.handle(self.session, event.to_wire())
        except ProtocolError as exc:
            self._refused(exc, event)
        except Exception:
            self._failed(event)

    def _dispatch_nowait(self, event: Event) -> bool:
        """:meth:`_dispatch` when the lobby can carry ``event`` out without a wait
        (``Lobby.handle_nowait``); False, with nothing done, when it cannot."""
        assert self.session is not None
        try:
            if not self.server.lobby.handle_nowait(self.session, event):
                return False
        except ProtocolError as exc:
            self._refused(exc, event)
        except Exception:
            self._failed(event)
        metrics.request(event.TYPE)
        return True

    def _refused(self, exc: ProtocolError, event: Event) -> None:
        assert self.session is not None
        _log_if_ours(exc, f"request {event.TYPE} from {self.session.id}")
        self.push(exc.to_event(getattr(event, "id", None)))

    def _failed(self, event: Event) -> None:
        assert self.session is not None
        log.exception("request %s from %s failed", event.TYPE, self.session.id)
        self.push(LocalProtocolError("internal_error", "the server failed handling "
                                     "this request").to_event(getattr(event, "id", None)))

    def _backed_up(self) -> bool:
        """The outbox is more than half full, in messages or in bytes."""
        if not self._queued:   # nothing pushed is unwritten (the usual case: no look-up)
            return False
        return (self._out_send.statistics().current_buffer_used > self.config.outbox_size // 2
                or self._queued_bytes > self.config.outbox_bytes // 2)

    async def _wait_for_room(self) -> bool:
        """Backpressure on requests: read no further while the outbox is more than half
        full, so a client that pipelines many requests is slowed, not dropped. False (and
        the connection is closed as a slow consumer) when the outbox does not drain within
        ``ping_timeout``."""
        if not self._backed_up():
            return True
        with trio.move_on_after(self.config.ping_timeout):
            while self._backed_up():
                self._room = trio.Event()
                await self._room.wait()
            return True
        self.close_with_bye("slow_consumer", "the replies to your requests are not read")
        return False

    async def _writer(self) -> None:
        """Write the outbox in order, ping every ``ping_interval``; once the outbox is
        closed, write what is left (unless dropped) and the final message."""
        self._writer_started = True
        interval = self.config.ping_interval
        next_ping = trio.current_time() + interval
        try:
            while True:
                data = None
                with trio.move_on_at(next_ping):
                    try:
                        data = await self._out_recv.receive()
                    except trio.EndOfChannel:
                        break
                    self._queued_bytes -= len(data)
                    self._room.set()
                if data is not None and not self._drop_backlog:
                    await self._write_batch(data)
                elif data is not None:
                    self._queued -= 1
                    metrics.dropped(len(data))
                if trio.current_time() >= next_ping:
                    if self.final is None:
                        self._ping_id += 1
                        await self._write(Ping(id=self._ping_id))
                    # always move the timer on: a deadline left in the past cancels the
                    # next receive before it can see the closed outbox, and the writer
                    # would spin until shutdown_timeout without sending the final bye
                    next_ping = trio.current_time() + interval
            if self.final is not None:
                await self._write(self.final)
        finally:
            self._writer_done.set()

    async def _write_batch(self, first: bytes) -> None:
        """Write ``first`` and whatever else is queued already (up to ``WRITE_BATCH``
        frames) with one ``send_all``: one syscall and one wake-up instead of one per
        message (an accepted intent queues an ``ok`` and a snapshot together)."""
        taken = 1
        self._writing = True
        try:
            chunks = [first]
            for _ in range(WRITE_BATCH - 1):
                try:
                    data = self._out_recv.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
                taken += 1
                self._queued_bytes -= len(data)
                chunks.append(data)
            self._room.set()
            await self._send(b"".join(chunks))
        finally:
            self._queued -= taken
            self._writing = False

    async def _write(self, msg: Message) -> None:
        data = self._encode(msg)
        if data is not None:
            self._writing = True
            try:
                await self._send(data)
            finally:
                self._writing = False

    def _encode(self, msg: Message) -> bytes | None:
        """The frame for ``msg``, validated by ``Connection.send``; None when nothing
        can be sent. An invalid message is our bug: logged at ERROR and dropped (an
        ``ok`` reply becomes ``internal_error``, so the request still gets an answer)."""
        if isinstance(msg, bytes):
            return msg  # the part of a direct write the socket did not take
        if type(msg) is Error:
            metrics.error(msg.code)
        try:
            return self.conn.send(msg)
        except LocalProtocolError as exc:
            if self.conn.state in (ConnState.CLOSED, ConnState.MUST_CLOSE):
                return None  # the peer has gone, or the final message is out: nothing to say
            mtype = msg.TYPE if isinstance(msg, Event) else msg.get("type")
            log.error("not sending an invalid %s message to %s: %s", mtype, self.peer, exc)
            rid = msg.id if isinstance(msg, Ok) else (
                msg.get("id") if isinstance(msg, dict) and mtype == "ok" else None)
            if mtype != "ok" or rid is None:
                return None
            try:
                return self.conn.send(LocalProtocolError(
                    "internal_error", "the reply could not be encoded").to_event(rid))
            except LocalProtocolError:
                return None

    async def _send(self, data: bytes) -> None:
        if self._broken or not data:
            return
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._broken = True
            if self.final is None:
                self.reason = "peer gone"
            self.scope.cancel()


def _log_if_ours(exc: ProtocolError, what: str) -> None:
    """Log our own bugs (:class:`LocalProtocolError`) at ERROR; refusals and the
    peer's mistakes are answered, not logged."""
    if isinstance(exc, LocalProtocolError):
        log.error("%s failed: %s", what, exc)


class _Silent(Exception):
    """The peer sent nothing for longer than the heartbeat allows."""


def _replaced(old: Any) -> None:
    if isinstance(old, ClientConnection):
        old.close_with_bye("session_resumed", "this session was resumed on another connection")
