"""The server process: listeners, the connection and match nurseries, shutdown.

In-process use (tests)::

    server = await nursery.start(serve, config)     # returns once listening
    server.port                                     # the bound port (config.port 0: any)
    server.shutdown()                               # what SIGINT/SIGTERM do

Shutdown stops accepting, sends every connection ``bye {reason: "server_shutdown"}``,
gives writers ``shutdown_timeout`` seconds, then stops the match tasks. Every
accepted intent is already committed, so nothing is lost; the next start with
the same store rebuilds every unfinished match.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import ssl
from typing import TYPE_CHECKING, Any

import trio

from protocol.connection import Connection
from protocol.errors import Refusal
from server.config import ServerConfig
from server.connection import ClientConnection
from server.lobby import Lobby
from server.logvolume import LogVolume
from server.metrics_http import MetricsEndpoint
from server.poller import new_poller
from server.ratelimit import AddressThrottle
from server.services import Services
from server.store import Store, StoreError
from server.tls import accept_tls, server_context

if TYPE_CHECKING:  # the cluster code (and coredis) is loaded only by --cluster
    from server.cluster.node import ClusterNode

log = logging.getLogger("cardserver")

#: Most connections accepted in one go before the other tasks run again.
ACCEPT_BURST = 64
#: Journal rows the folding task inserts into SQLite between two checkpoints
#: (2.5-3 µs each: a slice costs about what the fold's commit of a busy 50 ms does).
FOLD_SLICE = 50
#: accept() errors that mean "out of descriptors or memory": pause, then go on.
_ACCEPT_PAUSE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})


class Server:
    """One running server. ``lobby``, ``clients`` and ``port`` are for inspection."""

    def __init__(self, config: ServerConfig, store: Store,
                 tls: ssl.SSLContext | None = None) -> None:
        self.config = config
        self.store = store
        #: the port speaks TLS only when set (see server/tls.py)
        self.tls = tls
        self._tls_pending = 0
        self.lobby = Lobby(config, store)
        #: the one task idle plain-socket connections wait in (None: no epoll here)
        self.poller = new_poller(config.busy_poll)
        if self.poller is not None:
            self.poller.on_pass = self._poller_pass
        #: what each connection is handed (not the whole server)
        self.services = Services(self.lobby, config,
                                 LogVolume(config.log_burst, config.log_interval),
                                 AddressThrottle(config.address_rate, config.address_burst),
                                 self.poller)
        self.clients: set[ClientConnection] = set()
        #: this node of a cluster (None: a single server); set by :func:`serve`
        self.cluster: ClusterNode | None = None
        self.port: int | None = None
        self.addresses: list[str] = []
        #: the --metrics-port endpoint, once it listens (None: off)
        self.metrics: MetricsEndpoint | None = None
        self._metrics_listeners: list[trio.SocketListener] = []
        self._stopping = trio.Event()
        #: set once :meth:`run` has finished shutting down and the store is closed
        self.stopped = trio.Event()

    def _poller_pass(self, ready: int) -> None:
        """The poller serves ``ready`` sockets in this pass: the group commit's
        one-by-one mode is told (looked up each pass: cluster mode replaces it)."""
        commits = self.lobby.ctx.commits
        if commits is not None:
            commits.poller_pass(ready)

    def shutdown(self) -> None:
        """Begin a clean shutdown (idempotent; returns at once)."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        """A shutdown has begun (``/healthz`` answers 503)."""
        return self._stopping.is_set()

    async def listen(self) -> list[trio.SocketListener]:
        """Bind the configured address; sets :attr:`port` and :attr:`addresses`.

        Raises:
            OSError: the address cannot be bound (in use, not permitted, ...).
        """
        listeners = await trio.open_tcp_listeners(self.config.port, host=self.config.host)
        for listener in listeners:
            host, port = listener.socket.getsockname()[:2]
            self.addresses.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        self.port = listeners[0].socket.getsockname()[1]
        if self.config.metrics_port and not self._metrics_listeners:
            self._metrics_listeners = await MetricsEndpoint.listen(self.config.metrics_port,
                                                                   self.config.host)
        log.info("listening on %s%s", ", ".join(self.addresses),
                 " (TLS only)" if self.tls is not None else "")
        return listeners

    async def run(self, listeners: list[trio.SocketListener] | None = None, *,
                  task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until :meth:`shutdown`, then shut down cleanly.

        Args:
            listeners: from :meth:`listen` (called here when None).

        Raises:
            OSError: the address cannot be bound.
        """
        try:
            if listeners is None:
                listeners = await self.listen()
            await self._run(listeners, task_status)
        finally:
            self.store.close()  # before `stopped`: a restart may open the store at once
            self.stopped.set()

    async def _run(self, listeners: list[trio.SocketListener], task_status: Any) -> None:
        async with trio.open_nursery() as matches:
            matches.start_soon(self._fold_store)
            if self.poller is not None:
                matches.start_soon(self.poller.run)
            if self.cluster is not None:
                await matches.start(self.cluster.run)
            if self._metrics_listeners:
                self.metrics = await matches.start(MetricsEndpoint(self).run,
                                                   self._metrics_listeners)
            await self.lobby.start(matches)
            async with trio.open_nursery() as connections:
                accept_scope = trio.CancelScope()
                connections.start_soon(self._accept, listeners, connections, accept_scope)
                task_status.started(self)
                await self._stopping.wait()
                log.info("shutting down: %d connections, %d matches", len(self.clients),
                         len(self.lobby.matches))
                accept_scope.cancel()
                for listener in listeners:
                    await listener.aclose()
                for client in list(self.clients):
                    client.close_with_bye("server_shutdown", "the server is shutting down")
                with trio.move_on_after(self.config.shutdown_timeout + 1):
                    while self.clients:
                        await trio.sleep(0.01)
                connections.cancel_scope.cancel()
            if self.cluster is not None:
                with trio.move_on_after(1):
                    await self.cluster.registry.leave()
            matches.cancel_scope.cancel()
        log.info("stopped")

    async def _fold_store(self) -> None:
        """Fold the store's redo log ``--journal-fold`` seconds after its last fold
        while writes wait in it: how far behind the server another process reading
        its store may be (``cardserver replay``, ``leaderboard``, a backup). A fold
        made meanwhile (a match finished, the log filled) starts the interval
        again, so that it replaces the timed one instead of adding to it."""
        interval = self.config.journal_fold
        folded_at = trio.current_time()

        def folded() -> None:
            nonlocal folded_at
            folded_at = trio.current_time()

        self.store.on_fold = folded
        try:
            while True:
                await trio.sleep_until(folded_at + interval)
                if trio.current_time() < folded_at + interval:
                    continue   # folded while this slept
                folded_at = trio.current_time()
                if not self.store.unfolded:
                    continue
                try:
                    # the rows waiting for SQLite a slice at a time, every other task
                    # running between: a request that comes meanwhile waits for one
                    # slice (about FOLD_SLICE rows), not for all of them
                    while self.store.insert_deferred(FOLD_SLICE):
                        await trio.lowlevel.checkpoint()
                    self.store.fold()
                except StoreError as exc:   # the writes stay in the log: tried again
                    log.error("store %s: %s", self.config.db, exc)
        finally:
            self.store.on_fold = None

    async def _accept(self, listeners: list[trio.SocketListener], nursery: trio.Nursery,
                      scope: trio.CancelScope) -> None:
        with scope:
            async with trio.open_nursery() as loops:
                for listener in listeners:
                    loops.start_soon(self._accept_loop, listener, nursery)

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        """Accept connections from ``listener`` in bursts of up to :data:`ACCEPT_BURST`.

        trio's ``accept`` yields to every other task after each connection, so a busy
        server (one scheduler pass taking 100 ms or more) used to accept only a
        handful of connections per second while hundreds waited in the listen
        queue. After each accept this drains the queue without yielding, through a
        non-blocking duplicate of the listening socket. Running out of file
        descriptors or memory pauses accepting for 0.1 s (as ``trio.serve_listeners``
        does); any other error propagates.
        """
        raw = socket.socket(fileno=os.dup(listener.socket.fileno()))
        raw.setblocking(False)
        try:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:
                    if exc.errno not in _ACCEPT_PAUSE_ERRNOS:
                        raise
                    log.error("accept failed (%s); pausing 0.1 s", exc)
                    await trio.sleep(0.1)
                    continue
                nursery.start_soon(self._handle, stream)
                for _ in range(ACCEPT_BURST - 1):
                    try:
                        sock, _ = raw.accept()
                    except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                        break
                    except OSError as exc:
                        if exc.errno not in _ACCEPT_PAUSE_ERRNOS:
                            raise
                        break  # the next listener.accept() reports and pauses
                    stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
                    nursery.start_soon(self._handle, stream)
        finally:
            raw.close()

    async def _handle(self, stream: trio.SocketStream) -> None:
        """One accepted connection (inside TLS when configured); never raises."""
        try:
            peer = stream.socket.getpeername()
            name = f"{peer[0]}:{peer[1]}"
        except OSError:
            name = "?"
        if self.tls is None:
            await self.serve_stream(stream, name)
            return
        # connections still in their TLS handshake count against max_connections
        if len(self.clients) + self._tls_pending >= self.config.max_connections:
            log.warning("refusing %s before its TLS handshake: %d connections already",
                        name, len(self.clients) + self._tls_pending)
            with trio.move_on_after(1):
                await stream.aclose()
            return
        self._tls_pending += 1
        try:
            tls = await accept_tls(stream, self.tls, self.config.handshake_timeout, name)
        finally:
            self._tls_pending -= 1
        if tls is not None:
            await self.serve_stream(tls, name)

    async def serve_stream(self, stream: trio.abc.Stream, name: str = "stream") -> None:
        """Serve one connection over any trio stream (tests use memory streams)."""
        if len(self.clients) >= self.config.max_connections:
            await self._refuse(stream, name)
            return
        client = ClientConnection(self.services, stream, name)
        self.clients.add(client)
        self.services.log_volume.info(log, client.address, "connection from %s", name)
        try:
            await client.serve()
        except Exception:  # serve() catches its own; this is the last line of defence
            log.exception("connection %s: handler failed", name)
        finally:
            self.clients.discard(client)

    async def _refuse(self, stream: trio.abc.Stream, name: str) -> None:
        log.warning("refusing %s: %d connections already", name, len(self.clients))
        error = Refusal("too_many_connections",
                        f"the server serves at most {self.config.max_connections} "
                        "connections").to_event()
        with trio.move_on_after(1):
            try:
                await stream.send_all(Connection("server").send(error))
                await stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass


async def serve(config: ServerConfig, *, signals: bool = False,
                task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Open the store and run a :class:`Server` until it is shut down.

    Args:
        config: the configuration.
        signals: shut down cleanly on SIGINT/SIGTERM (the ``cardserver`` command).
        task_status: receives the :class:`Server` once it listens.

    Raises:
        StoreError: the store cannot be opened.
        OSError: the address cannot be bound.
        TLSFileError: the TLS certificate or key cannot be used.
    """
    tls = None if config.tls_cert is None else server_context(config.tls_cert, config.tls_key)
    store = Store(config.db, exclusive=True, hold_file=config.store_lock == "exclusive",
                  redo_log=config.journal_log == "on")
    log.info("store %s", config.db)
    server = Server(config, store, tls)
    try:
        listeners = await server.listen()  # outside any nursery: a plain OSError
        if config.cluster is None:
            await _serve(server, listeners, signals, task_status)
        else:
            from server.cluster.node import open_node  # coredis: only for --cluster

            assert server.port is not None
            async with open_node(config, server.port) as node:
                server.cluster = server.lobby.cluster = node
                await _serve(server, listeners, signals, task_status)
    finally:
        store.close()


async def _serve(server: Server, listeners: list[trio.SocketListener], signals: bool,
                 task_status: Any) -> None:
    async with trio.open_nursery() as nursery:
        if signals:
            nursery.start_soon(_watch_signals, server)
        await nursery.start(server.run, listeners)
        task_status.started(server)
        await server.stopped.wait()
        nursery.cancel_scope.cancel()


async def _watch_signals(server: Server) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            server.shutdown()
            return
