"""The token bucket and the address throttle take and refill tokens as the plain
formulas say (``min(burst, tokens + elapsed * rate)``), on random request streams."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.ratelimit import AddressThrottle, TokenBucket

STEPS = st.lists(st.tuples(st.floats(0, 0.5), st.sampled_from([1.0, 3.0, 11.0, 40.0]),
                           st.sampled_from(["a", "b", "c"])), max_size=60)


@given(rate=st.floats(1, 50), burst=st.integers(1, 30), steps=STEPS)
def test_the_bucket_is_the_formula(rate: float, burst: int,
                                   steps: list[tuple[float, float, str]]) -> None:
    bucket = TokenBucket(rate, burst, 0.0, abuse_limit=5, abuse_window=1.0)
    tokens, now, stamp = float(burst), 0.0, 0.0
    for gap, cost, _ in steps:
        now += gap
        tokens = min(float(burst), tokens + (now - stamp) * rate)
        stamp = now
        take = min(cost, float(burst))
        expected = tokens >= take
        if expected:
            tokens -= take
        assert bucket.allow(now, cost) is expected
        assert bucket.available(now) == tokens


@given(rate=st.floats(1, 50), burst=st.integers(1, 30), steps=STEPS)
def test_the_throttle_is_the_formula(rate: float, burst: int,
                                     steps: list[tuple[float, float, str]]) -> None:
    throttle = AddressThrottle(rate, burst)
    model: dict[str, tuple[float, float]] = {}
    now = 0.0
    for gap, cost, address in steps:
        now += gap
        tokens, stamp = model.get(address, (float(burst), now))
        tokens = min(float(burst), tokens + (now - stamp) * rate) - cost
        model[address] = (tokens, now)
        assert throttle.delay(address, now, cost) == (0.0 if tokens >= 0 else -tokens / rate)
