"""Per-connection rate limiting: a token bucket, plus an abuse counter.

Each request takes one token; tokens refill at ``rate`` per second up to
``burst``. A request that finds the bucket empty is refused (``rate_limited``).
A connection refused more than ``abuse_limit`` times within ``abuse_window``
seconds is abusive and is disconnected.
"""

from __future__ import annotations


class TokenBucket:
    """A token bucket driven by an explicit clock (pass ``trio.current_time()``)."""

    def __init__(self, rate: float, burst: int, now: float,
                 abuse_limit: int = 200, abuse_window: float = 10.0) -> None:
        """Start full at time ``now``.

        Raises:
            ValueError: rate or burst not positive.
        """
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be > 0")
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = now
        self.abuse_limit = abuse_limit
        self.abuse_window = abuse_window
        self._window_start = now
        self._refused = 0

    def allow(self, now: float) -> bool:
        """Take one token if there is one; True when the request may go ahead."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        if now - self._window_start > self.abuse_window:
            self._window_start = now
            self._refused = 0
        self._refused += 1
        return False

    def abusive(self) -> bool:
        """True when refusals in the current window exceed the abuse limit."""
        return self._refused > self.abuse_limit
