"""One task that waits for every idle plain-socket connection at once.

A connection's reader task used to wait for its socket with trio's
``wait_readable``, which re-arms a one-shot epoll registration (an
``epoll_ctl``) before every wait and resumes the reader through the scheduler
for every request. Instead, a reader with nothing left to read hands its
connection to the :class:`Poller` and sleeps. The poller keeps every such
socket registered, level-triggered, in an epoll of its own (no re-arm per
request), waits for that epoll's descriptor with one ``wait_readable``, and for
each ready socket calls the connection's ``serve_ready``, which reads and
carries out, in the poller's task, what needs no wait (an intent the match can
take at once, a ping); the requests of many connections then reach the group
commit in one pass without a task switch each.

Whatever must wait (another request than an intent, a full match inbox, the
address throttle, a backed-up outbox, a closed peer, a batch's worth of
requests) is handed back: the poller unregisters the socket and wakes the
connection's reader, which carries it on as it always did and comes back once
it has nothing left to read. A request is begun in the poller only when it can
end there, so one connection's wait never holds up another's; and a
connection is in the poller or with its reader, never both, so its requests
keep their order.

After a pass the poller does not sleep at once: for a short window
(``--busy-poll``, adapted to how soon requests follow: :mod:`server.spin`) it
polls its epoll between checkpoints, so a request that comes soon after the
last one is served without waiting for the thread -- and, on an idle CPU, the
CPU itself -- to be woken.

Linux only (``select.epoll``); elsewhere :func:`new_poller` gives None and
every reader waits with ``wait_readable`` as before.
"""

from __future__ import annotations

import logging
import select
from collections.abc import Callable
from time import perf_counter
from typing import Protocol

import trio

from server.spin import SpinWindow

log = logging.getLogger(__name__)


class Pollable(Protocol):
    """A connection the poller can serve (:class:`server.connection.ClientConnection`)."""

    def serve_ready(self, now: float) -> bool:
        """Its socket is readable: read and carry out what needs no wait.

        Returns:
            True to stay in the poller; False to be handed back to its reader
            (which the poller then wakes).
        """
        ...

    def handed_back(self) -> None:
        """The poller let go of it: wake its reader."""
        ...


class Poller:
    """Every idle plain-socket connection in one epoll, served by one task (:meth:`run`)."""

    def __init__(self, busy_poll: float = 0.0) -> None:
        self._epoll = select.epoll()
        #: how long each pass is followed by polling before the poller sleeps
        self.spin = SpinWindow(busy_poll)
        self._by_fd: dict[int, Pollable] = {}
        #: :meth:`run` has ended: nothing can be added any more
        self.closed = False
        #: told how many sockets a pass is about to serve, and 0 once it has served
        #: them (the group commit's :meth:`~server.match.commit.GroupCommit.poller_pass`)
        self.on_pass: Callable[[int], None] | None = None

    def __len__(self) -> int:
        return len(self._by_fd)

    def add(self, fd: int, conn: Pollable) -> None:
        """Serve ``conn`` whenever ``fd`` is readable, until it is handed back or
        :meth:`remove`\\ d.

        Raises:
            OSError: ``fd`` cannot be registered (closed already).
            ValueError: the poller is :attr:`closed`.
        """
        try:
            self._epoll.register(fd, select.EPOLLIN)
        except FileExistsError:   # a stale entry of a socket closed behind our back
            self._epoll.modify(fd, select.EPOLLIN)
        self._by_fd[fd] = conn

    def remove(self, fd: int, conn: Pollable) -> None:
        """Stop serving ``conn`` on ``fd`` (idempotent: handed back already is fine).

        Only ``conn``'s own registration goes: a socket closed behind the poller's
        back (the epoll drops it by itself) may have left its number to a new
        connection, which stays."""
        if self._by_fd.get(fd) is conn:
            del self._by_fd[fd]
            try:
                self._epoll.unregister(fd)
            except OSError:   # closed meanwhile: the epoll dropped it itself
                pass

    async def run(self) -> None:
        """Serve ready connections until cancelled; closes the epoll at the end."""
        epoll, by_fd = self._epoll, self._by_fd
        try:
            while True:
                ready = await self._next_ready()
                now = trio.current_time()
                on_pass = self.on_pass
                if on_pass is not None:
                    on_pass(len(ready))
                for fd, _ in ready:
                    conn = by_fd.get(fd)
                    if conn is None:   # handed back earlier in this pass
                        continue
                    try:
                        keep = conn.serve_ready(now)
                    except Exception:   # a bug: that connection's reader carries on
                        log.exception("poller: serving a ready connection failed")
                        keep = False
                    if not keep:
                        self.remove(fd, conn)
                        conn.handed_back()
                if on_pass is not None:
                    on_pass(0)
        finally:
            self.closed = True
            for conn in list(by_fd.values()):
                conn.handed_back()
            by_fd.clear()
            epoll.close()

    async def _next_ready(self) -> list[tuple[int, int]]:
        """The sockets of the next pass (possibly none: a spurious wake-up).

        First polls for the :class:`~server.spin.SpinWindow`'s window, letting
        every other task of the run loop go on between two polls (each poll
        follows a checkpoint), then sleeps in trio's I/O wait until the epoll
        is readable.
        """
        epoll, spin = self._epoll, self.spin
        window = spin.window
        began = perf_counter()
        if window > 0:
            until = began + window
            while True:
                await trio.lowlevel.checkpoint()
                ready = epoll.poll(0)
                now = perf_counter()
                if ready:
                    spin.poll_caught(now - began)
                    return ready
                if now >= until:
                    spin.poll_missed(now - began)
                    break
        await trio.lowlevel.wait_readable(epoll.fileno())
        spin.slept(perf_counter() - began)
        return epoll.poll(0)


def new_poller(busy_poll: float = 0.0) -> Poller | None:
    """A poller where the system has epoll (Linux), else None; ``busy_poll`` is
    its :class:`~server.spin.SpinWindow`'s limit in seconds (0: sleep at once)."""
    return Poller(busy_poll) if hasattr(select, "epoll") else None
