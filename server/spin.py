"""How long the poller keeps polling before it sleeps: an adaptive busy-poll window.

A server that sleeps in ``epoll_wait`` the moment it has nothing to do pays, on
the next request, for being woken: the kernel's wake-up of the thread and, on
an idle CPU (a virtual one above all), the CPU's own return from its idle
state -- tens of microseconds, often more than the request's own work. Polling
for a short while before sleeping keeps the CPU awake for a request that comes
soon after the last one (a strict ping-pong of moves, a burst of a bot match),
at the price of the CPU time spent polling.

:class:`SpinWindow` decides that while, as Linux's ``cpuidle-haltpoll`` governor
does for a guest's idle loop: a window between 0 and ``limit`` seconds that
grows (doubling, from an eighth of the limit) each time the server slept and
was woken within ``limit`` of the end of its last pass -- the next request came
soon, and a longer poll would have caught it -- and halves, down to 0, each
time the sleep lasted longer than that. So a server whose requests come
seconds apart polls a few hundred microseconds after a burst and then not at
all, one whose requests come close together polls up to ``limit`` after every
pass, and the CPU it spends polling is never more than ``limit`` per pass.
Pure bookkeeping: no clock and no I/O of its own (the caller gives the times).
"""

from __future__ import annotations

#: a window that grows from 0 starts at this share of the limit
GROW_START = 1 / 8


class SpinWindow:
    """The busy-poll window after a pass, adapted to how soon requests follow.

    ``limit`` 0 turns polling off: :attr:`window` is then always 0.
    """

    def __init__(self, limit: float) -> None:
        if limit < 0:
            raise ValueError(f"busy-poll limit must be >= 0, not {limit!r}")
        self.limit = limit
        #: seconds to poll after the next pass before sleeping
        self.window = limit
        #: seconds spent polling so far (the run loop's other steps between two
        #: polls included), and passes a poll caught (no sleep needed)
        self.polled = 0.0
        self.caught = 0

    def poll_caught(self, spent: float) -> None:
        """A poll of ``spent`` seconds found a ready socket: the window stays."""
        self.polled += spent
        self.caught += 1

    def poll_missed(self, spent: float) -> None:
        """A poll ran its whole window (``spent`` seconds) and found nothing."""
        self.polled += spent

    def slept(self, idle: float) -> None:
        """The server slept and was woken ``idle`` seconds after its last pass
        ended (the poll before the sleep included): grow the window if a poll of
        ``limit`` would have caught the wake-up, else shrink it."""
        limit = self.limit
        if limit <= 0:
            return
        if idle <= limit:
            self.window = min(limit, max(self.window * 2, limit * GROW_START))
        else:
            window = self.window / 2
            self.window = window if window >= limit * GROW_START else 0.0
