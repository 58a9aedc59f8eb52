"""How long a strategy may think about one decision: the caller owns the clock.

The engine reads no clock of its own. A caller that wants a time limit hands a
strategy a :class:`Budget` built with its own clock function (``time.perf_counter``
in a bot process, a fake one in tests); a caller that wants reproducible play
gives an iteration count instead, and the same seed then gives the same move::

    budget = Budget.timed(0.05, clock=time.perf_counter)   # 50 ms from now
    budget = Budget.iterations(2000)                        # deterministic
    while not budget.exhausted(done):
        ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Budget:
    """A limit on one decision's work: iterations, a deadline on a given clock, or both.

    ``max_iterations`` None means no iteration limit; ``deadline`` None means no
    time limit (then ``clock`` is never called). A budget with neither is refused.
    """

    max_iterations: int | None = None
    deadline: float | None = None
    clock: Callable[[], float] | None = None

    def __post_init__(self) -> None:
        if self.max_iterations is None and self.deadline is None:
            raise ValueError("a budget needs an iteration limit, a deadline, or both")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {self.max_iterations!r}")
        if self.deadline is not None and self.clock is None:
            raise ValueError("a deadline needs the clock it is measured on")

    @classmethod
    def timed(cls, seconds: float, clock: Callable[[], float],
              max_iterations: int | None = None) -> Budget:
        """``seconds`` from now on ``clock`` (optionally also capped in iterations).

        Raises:
            ValueError: ``seconds`` is not positive.
        """
        if not seconds > 0:
            raise ValueError(f"a time budget must be > 0 seconds, got {seconds!r}")
        return cls(max_iterations, clock() + seconds, clock)

    @classmethod
    def iterations(cls, count: int) -> Budget:
        """Exactly ``count`` iterations, no clock: the same seed gives the same move.

        Raises:
            ValueError: ``count`` < 1.
        """
        return cls(max_iterations=count)

    def exhausted(self, done: int) -> bool:
        """True once ``done`` iterations reach the limit or the deadline has passed."""
        if self.max_iterations is not None and done >= self.max_iterations:
            return True
        return self.deadline is not None and self.clock() >= self.deadline  # type: ignore[misc]

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative), or None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self.clock())  # type: ignore[misc]
