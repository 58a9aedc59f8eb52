"""One client connection: handshake, a reader task, a writer task, heartbeats.

Wire handling is :class:`protocol.connection.Connection` (sans-IO); this module
only moves bytes and enforces the server's limits:

* the handshake must complete within ``handshake_timeout`` (else
  ``handshake_timeout``, and the connection is closed);
* everything sent goes through a bounded outbox drained by the writer task; a
  push to a full outbox marks the client a slow consumer and disconnects it
  (its seats enter their grace period) instead of blocking a match;
* the writer pings every ``ping_interval``; the reader drops a peer it has not
  heard from (any frame counts) for ``ping_interval + ping_timeout``;
* every request costs a token of a :class:`~server.ratelimit.TokenBucket`
  (``rate_limited``; sustained abuse disconnects);
* any failure in here ends this connection only; it never propagates.

A connection closed on purpose gets a last message first: ``bye`` (shutdown,
slow consumer, heartbeat, rate abuse, session resumed elsewhere) or the fatal
``error`` (bad frame, failed handshake), sent only if the stream is between
frames.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from protocol.codec import pack
from protocol.connection import CLIENT_MAX_FRAME, CLOSED, NEED_DATA, Connection
from protocol.connection import State as ConnState
from protocol.errors import LocalProtocolError, ProtocolError
from protocol.events import REQUEST_TYPES
from protocol.framing import encode_frame
from protocol.version import __version__
from protocol.versions import negotiate
from server.ratelimit import TokenBucket
from server.session import Session

if TYPE_CHECKING:
    from server.app import Server

log = logging.getLogger("cardserver.connection")

READ_SIZE = 65536
#: Most queued messages the writer joins into one send.
WRITE_BATCH = 64


class ClientConnection:
    """Serves one accepted stream until it closes; see the module docstring."""

    def __init__(self, server: Server, stream: trio.abc.Stream, peer: str) -> None:
        self.server = server
        self.config = server.config
        self.stream = stream
        self.peer = peer
        self.conn = Connection("server", max_frame=self.config.max_frame)
        self._out_send, self._out_recv = trio.open_memory_channel[dict[str, Any]](
            self.config.outbox_size)
        self.session: Session | None = None
        self.scope = trio.CancelScope()
        self.final: dict[str, Any] | None = None
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

    # -- for the rest of the server -------------------------------------

    def push(self, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for the writer; a full outbox disconnects (slow_consumer)."""
        if self.final is not None:
            return
        try:
            self._out_send.send_nowait(msg)
        except trio.WouldBlock:
            self.close_with_bye("slow_consumer",
                                f"more than {self.config.outbox_size} messages unread")
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    def close_with_bye(self, reason: str, message: str) -> None:
        """Close on purpose: send ``bye {reason, message}`` if possible, then close."""
        self._close({"type": "bye", "reason": reason, "message": message}, reason)

    def _close(self, final: dict[str, Any], reason: str) -> None:
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
            log.info("connection %s%s closed: %s", self.peer,
                     f" ({self.session.id})" if self.session else "", self.reason)

    async def _serve_open(self) -> None:
        """After the welcome: the writer, the session's matches, then the reader."""
        assert self.session is not None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer)
            with self._new_scope():
                await self.server.lobby.attach(self.session, self, replace=_replaced)
                await self._reader()
            self._out_send.close()
            with trio.move_on_after(self.config.shutdown_timeout):
                await self._writer_done.wait()
            nursery.cancel_scope.cancel()

    async def _goodbye(self) -> None:
        """Send the final message if the writer never ran (handshake), then close."""
        with trio.CancelScope(shield=True), trio.move_on_after(self.config.shutdown_timeout):
            if self.final is not None and not self._writer_started:
                try:
                    await self.stream.send_all(self.conn.send(self.final))
                except (LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
            try:
                await self.stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async def _receive(self) -> dict[str, Any] | None:
        """The next message from the peer, None when it closed.

        Raises:
            ProtocolError: from the sans-IO connection (fatal or not).
            _Silent: the peer has been silent past the heartbeat bound.
        """
        while True:
            try:
                msg = self.conn.next_message()
            except ProtocolError:
                self.last_heard = trio.current_time()  # a whole (bad) frame arrived
                raise
            if msg is CLOSED:
                return None
            if msg is not NEED_DATA:
                # only a whole frame is a sign of life: bytes trickled into a frame
                # that never completes do not hold the connection open (slowloris)
                self.last_heard = trio.current_time()
                return msg  # type: ignore[return-value]
            deadline = self.last_heard + self.config.ping_interval + self.config.ping_timeout
            with trio.move_on_at(deadline):
                try:
                    data = await self.stream.receive_some(READ_SIZE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                self.conn.receive_data(data)
                continue
            raise _Silent()

    async def _handshake(self) -> bool:
        """Read hello, answer welcome (or a fatal error); True when the session is open."""
        try:
            with trio.fail_after(self.config.handshake_timeout):
                hello = await self._receive()
        except trio.TooSlowError:
            self._close(ProtocolError("handshake_timeout", "no hello within "
                                      f"{self.config.handshake_timeout} s").to_message(),
                        "handshake timeout")
            return False
        except ProtocolError as exc:
            self._close(exc.to_message(), f"handshake failed: {exc.code}")
            return False
        except _Silent:
            return False
        if hello is None:
            self.reason = "closed before hello"
            return False
        lobby = self.server.lobby
        try:
            version = negotiate(hello["protocol"])
            resumed = "resume" in hello
            if resumed:
                session = lobby.resume(hello["resume"])
                token = hello["resume"]
            else:
                session, token = lobby.new_session(hello["name"])
        except ProtocolError as exc:
            self._close(exc.to_message(hello.get("id")), f"handshake failed: {exc.code}")
            return False
        self.session = session
        self.push({"type": "welcome", "protocol": version, "server": f"cardserver/{__version__}",
                   "session": session.id, "token": token, "name": session.name,
                   "resumed": resumed, "limits": self.config.limits()})
        log.info("connection %s: session %s (%s) %s", self.peer, session.id, session.name,
                 "resumed" if resumed else "started")
        return True

    async def _reader(self) -> None:
        assert self.session is not None
        while True:
            try:
                msg = await self._receive()
            except _Silent:
                self.close_with_bye("heartbeat_timeout", "no answer to ping in time")
                return
            except ProtocolError as exc:
                if exc.fatal:
                    self._close(exc.to_message(), f"protocol error: {exc.code}")
                    return
                self.push(exc.to_message())
                continue
            if msg is None:
                return
            mtype = msg["type"]
            if mtype == "pong":
                continue
            if mtype == "ping":
                self.push({"type": "pong", "id": msg["id"]})
                continue
            if mtype in REQUEST_TYPES and not self.bucket.allow(trio.current_time()):
                if self.bucket.abusive():
                    self.close_with_bye("rate_limited", "too many requests, for too long")
                    return
                self.push(ProtocolError("rate_limited", f"more than {self.config.rate:g} "
                                        "requests per second").to_message(msg.get("id")))
                continue
            try:
                await self.server.lobby.handle(self.session, msg)
            except ProtocolError as exc:
                self.push(exc.to_message(msg.get("id")))
            except Exception:
                log.exception("request %s from %s failed", mtype, self.session.id)
                self.push(ProtocolError("internal_error", "the server failed handling this "
                                        "request").to_message(msg.get("id")))
            if not await self._wait_for_room():
                return

    def _backlog(self) -> int:
        return self._out_send.statistics().current_buffer_used

    async def _wait_for_room(self) -> bool:
        """Backpressure on requests: read no further while the outbox is more than half
        full, so a client that pipelines many requests is slowed, not dropped. False (and
        the connection is closed as a slow consumer) when the outbox does not drain within
        ``ping_timeout``."""
        half = self.config.outbox_size // 2
        if self._backlog() <= half:
            return True
        with trio.move_on_after(self.config.ping_timeout):
            while self._backlog() > half:
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
                msg = None
                with trio.move_on_at(next_ping):
                    try:
                        msg = await self._out_recv.receive()
                    except trio.EndOfChannel:
                        break
                    self._room.set()
                if msg is not None and not self._drop_backlog:
                    await self._write_batch(msg)
                if trio.current_time() >= next_ping:
                    if self.final is None:
                        self._ping_id += 1
                        await self._write({"type": "ping", "id": self._ping_id})
                    # always move the timer on: a deadline left in the past cancels the
                    # next receive before it can see the closed outbox, and the writer
                    # would spin until shutdown_timeout without sending the final bye
                    next_ping = trio.current_time() + interval
            if self.final is not None:
                await self._write(self.final)
        finally:
            self._writer_done.set()

    async def _write_batch(self, first: dict[str, Any]) -> None:
        """Write ``first`` and whatever else is queued already (up to ``WRITE_BATCH``
        messages) with one ``send_all``: one syscall and one wake-up instead of one per
        message (an accepted intent queues an ``ok`` and a snapshot together)."""
        chunks = [self._encode(first)]
        for _ in range(WRITE_BATCH - 1):
            try:
                msg = self._out_recv.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            chunks.append(self._encode(msg))
        self._room.set()
        await self._send(b"".join(chunk for chunk in chunks if chunk is not None))

    async def _write(self, msg: dict[str, Any]) -> None:
        data = self._encode(msg)
        if data is not None:
            await self._send(data)

    def _encode(self, msg: dict[str, Any]) -> bytes | None:
        """The frame for ``msg``; None when nothing can be sent (logged).

        Snapshots, the bulk of the traffic, are framed without the per-message schema
        walk of ``Connection.send`` (measured at about a third of the server's CPU per
        intent): the match builds them from the engine's projection only, their shape
        is checked by the test suites and by every client on receipt, and the size
        limit (1 MiB, what a client must accept) is still enforced here.
        """
        try:
            if msg["type"] == "snapshot" and self.conn.state is ConnState.OPEN:
                return encode_frame(pack(msg), CLIENT_MAX_FRAME)
            return self.conn.send(msg)
        except LocalProtocolError as exc:
            if self.conn.state in (ConnState.CLOSED, ConnState.MUST_CLOSE):
                return None  # the peer has gone, or the final message is out: nothing to say
            log.error("not sending an invalid %s message: %s", msg.get("type"), exc)
            if msg.get("type") != "ok" or "id" not in msg:
                return None
            try:
                return self.conn.send(ProtocolError(
                    "internal_error", "the reply could not be encoded").to_message(msg["id"]))
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


class _Silent(Exception):
    """The peer sent nothing for longer than the heartbeat allows."""


def _replaced(old: Any) -> None:
    if isinstance(old, ClientConnection):
        old.close_with_bye("session_resumed", "this session was resumed on another connection")
