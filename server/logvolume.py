"""Bounded log volume: per client address, at most ``burst`` lines per interval.

A client that opens connections in a loop (hello, close, again) would write two
or three info lines per connection; :class:`LogVolume` lets the first ``burst``
lines of each address through in every ``interval`` seconds, counts the rest,
and writes one summary line per address and interval for what it held back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class _Window:
    start: float
    lines: int = 0
    held: int = 0


class LogVolume:
    """Rate-limited info lines per address (see the module docstring).

    Args:
        burst: lines per address let through in one interval.
        interval: seconds.
        clock: monotonic seconds.
    """

    def __init__(self, burst: int, interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self._windows: dict[str, _Window] = {}
        self._swept = clock()

    def info(self, logger: logging.Logger, address: str, fmt: str, *args: Any) -> None:
        """``logger.info(fmt, *args)`` unless ``address`` used up its lines for now."""
        if not logger.isEnabledFor(logging.INFO):
            return
        now = self.clock()
        if now - self._swept >= self.interval:
            self._sweep(logger, now)
        window = self._windows.get(address)
        if window is None or now - window.start >= self.interval:
            if window is not None:
                self._summary(logger, address, window)
            window = self._windows[address] = _Window(now)
        window.lines += 1
        if window.lines <= self.burst:
            logger.info(fmt, *args)
        else:
            window.held += 1

    def _sweep(self, logger: logging.Logger, now: float) -> None:
        """Close every expired window (its summary line) so the table stays small."""
        self._swept = now
        for address, window in list(self._windows.items()):
            if now - window.start >= self.interval:
                self._summary(logger, address, window)
                del self._windows[address]

    def _summary(self, logger: logging.Logger, address: str, window: _Window) -> None:
        if window.held:
            logger.info("%d more connection log lines from %s in %g s not written",
                        window.held, address, self.interval)
