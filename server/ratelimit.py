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
        burst = self.burst   # (comparisons, not min(): two calls fewer a request)
        tokens = self.tokens + (now - self.stamp) * self.rate
        if tokens > burst:
            tokens = burst
        self.stamp = now
        if cost > burst:
            cost = burst
        if tokens >= cost:
            self.tokens = tokens - cost
            return True
        self.tokens = tokens
        if now - self._window_start > self.abuse_window:
            self._window_start = now
            self._refused = 0
        self._refused += 1
        return False

    def available(self, now: float) -> float:
        """The tokens there would be at ``now`` (taking none)."""
        return min(self.burst, self.tokens + (now - self.stamp) * self.rate)

    def wait(self, now: float, cost: float = 1.0) -> float:
        """Seconds from ``now`` until :meth:`allow` of ``cost`` would succeed (0: now)."""
        missing = min(cost, self.burst) - self.available(now)
        return max(0.0, missing / self.rate)

    def abusive(self) -> bool:
        """True when refusals in the current window exceed the abuse limit."""
        return self._refused > self.abuse_limit


class AddressThrottle:
    """All the requests of one client address together, however many connections
    it opens: beyond ``rate`` per second (bursts of ``burst``) its readers wait,
    so the address's requests queue in its own sockets (TCP backpressure), cost
    the server nothing meanwhile, and other addresses are served as before."""

    #: Addresses kept before the idle ones (a full bucket) are forgotten.
    MAX_ADDRESSES = 10000

    def __init__(self, rate: float, burst: int) -> None:
        """Raises:
            ValueError: rate or burst not positive."""
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be > 0")
        self.rate = rate
        self.burst = float(burst)
        #: address -> (tokens, stamp); tokens below zero are a debt being waited off
        self._buckets: dict[str, tuple[float, float]] = {}

    def delay(self, address: str, now: float, cost: float = 1.0) -> float:
        """Take ``cost`` tokens of ``address`` at ``now``; the seconds its request
        must wait before it runs (0: at once)."""
        buckets = self._buckets
        burst = self.burst
        known = buckets.get(address)
        if known is None:
            tokens = burst - cost
            if len(buckets) >= self.MAX_ADDRESSES:
                self._forget_idle(now)
        else:
            tokens = known[0] + (now - known[1]) * self.rate
            tokens = (burst if tokens > burst else tokens) - cost
        buckets[address] = (tokens, now)
        return 0.0 if tokens >= 0 else -tokens / self.rate

    def _forget_idle(self, now: float) -> None:
        for address, (tokens, stamp) in list(self._buckets.items()):
            if tokens + (now - stamp) * self.rate >= self.burst:
                del self._buckets[address]


#: Summaries of a ``matches`` page that cost one more token.
SUMMARIES_PER_TOKEN = 5


def request_cost(mtype: str, limit: int | None, list_limit: int) -> float:
    """Rate tokens a request of type ``mtype`` costs: one, and for ``matches`` one
    more per :data:`SUMMARIES_PER_TOKEN` summaries it may return (its ``limit``, or
    ``list_limit``): a page of 50 costs 11, of 100 costs 21."""
    if mtype == "matches":
        return 1.0 + (limit or list_limit) / SUMMARIES_PER_TOKEN
    return 1.0
