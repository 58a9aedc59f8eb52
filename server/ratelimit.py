"""Per-connection rate limiting: a token bucket, plus an abuse counter.

Each request takes tokens by its cost (:func:`request_cost`: one for most, more
for a ``matches`` page); tokens refill at ``rate`` per second up to ``burst``. A
request that finds too few tokens is refused (``rate_limited``).
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

    def allow(self, now: float, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens if there are as many (a cost above ``burst`` needs a
        full bucket); True when the request may go ahead."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        cost = min(cost, self.burst)
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        if now - self._window_start > self.abuse_window:
            self._window_start = now
            self._refused = 0
        self._refused += 1
        return False

    def abusive(self) -> bool:
        """True when refusals in the current window exceed the abuse limit."""
        return self._refused > self.abuse_limit


#: Summaries of a ``matches`` page that cost one more token.
SUMMARIES_PER_TOKEN = 5


def request_cost(mtype: str, limit: int | None, list_limit: int) -> float:
    """Rate tokens a request of type ``mtype`` costs: one, and for ``matches`` one
    more per :data:`SUMMARIES_PER_TOKEN` summaries it may return (its ``limit``, or
    ``list_limit``): a page of 50 costs 11, of 100 costs 21."""
    if mtype == "matches":
        return 1.0 + (limit or list_limit) / SUMMARIES_PER_TOKEN
    return 1.0
