"""Small helpers for simulator and tournament reports: statistics, a text
histogram, and a progress bar on stderr.

    from client.sim.report import Progress, describe, histogram

    stats = describe([12, 40, 40, 7])     # {"n", "mean", "median", "mode", "max", "min"}
    print(histogram([12, 40, 40, 7], bins=4))
    with Progress(total=1000, label="war") as bar:
        for _ in range(1000):
            ...
            bar.advance()

The progress bar only appears when stderr is a terminal and the run has
already taken longer than ``delay`` seconds (default 0.5), so quick runs and
piped output stay clean. Nothing here touches stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TextIO

Number = int | float


def positive_int(text: str) -> int:
    """An argparse ``type`` for counts: a whole number of at least 1.

    Raises:
        argparse.ArgumentTypeError: not an integer, or less than 1.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def mean(values: Sequence[Number]) -> float | None:
    """The arithmetic mean, or None for no values."""
    return statistics.fmean(values) if values else None


def median(values: Sequence[Number]) -> Number | None:
    """The median (the mean of the two middle values for an even count), or None."""
    return statistics.median(values) if values else None


def mode(values: Sequence[Number]) -> Number | None:
    """The most common value; on a tie, the smallest of the most common. None if empty."""
    if not values:
        return None
    counts = Counter(values)
    top = max(counts.values())
    return min(v for v, n in counts.items() if n == top)


def maximum(values: Sequence[Number]) -> Number | None:
    """The largest value, or None."""
    return max(values) if values else None


def describe(values: Sequence[Number]) -> dict[str, Any]:
    """``{"n", "mean", "median", "mode", "max", "min"}`` of ``values`` (None when empty);
    the mean is rounded to 3 decimals."""
    m = mean(values)
    return {"n": len(values), "mean": None if m is None else round(m, 3),
            "median": median(values), "mode": mode(values), "max": maximum(values),
            "min": min(values) if values else None}


def bins_of(values: Sequence[Number], bins: int = 10) -> list[tuple[Number, Number, int]]:
    """Equal-width bins over ``[min, max]``: ``(low, high, count)`` each, low first.

    Integer data gets integer bounds (``low <= v <= high``, no overlap). Empty
    input gives ``[]``; a single distinct value gives one bin.

    Raises:
        ValueError: ``bins`` < 1.
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if not values:
        return []
    lo, hi = min(values), max(values)
    integral = all(isinstance(v, int) for v in values)
    if lo == hi:
        return [(lo, hi, len(values))]
    if integral:
        width = max(1, -(-(hi - lo + 1) // bins))      # ceil
        edges = list(range(lo, hi + 1, width))
        out = []
        for start in edges:
            end = min(start + width - 1, hi)
            out.append((start, end, sum(1 for v in values if start <= v <= end)))
        return out
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    return [(lo + i * width, lo + (i + 1) * width, counts[i]) for i in range(bins)]


def histogram(values: Sequence[Number], bins: int = 10, width: int = 40,
              char: str = "#") -> str:
    """A text histogram, one line per bin: ``"  low-high | ####### count"``.

    The longest bar is ``width`` characters; a non-empty bin gets at least one.
    Returns ``"(no data)"`` for no values.

    Raises:
        ValueError: ``bins`` < 1 or ``width`` < 1.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    rows = bins_of(values, bins)
    if not rows:
        return "(no data)"
    top = max(count for _, _, count in rows)

    def fmt(x: Number) -> str:
        return str(x) if isinstance(x, int) else f"{x:.4g}"

    labels = [f"{fmt(lo)}-{fmt(hi)}" for lo, hi, _ in rows]
    pad = max(len(label) for label in labels)
    lines = []
    for label, (_, _, count) in zip(labels, rows, strict=True):
        bar = char * (max(1, round(width * count / top)) if count else 0)
        lines.append(f"  {label:>{pad}} | {bar} {count}")
    return "\n".join(lines)


class Progress:
    """A one-line progress bar on stderr for runs that take more than a moment.

    Args:
        total: number of steps expected (>= 0).
        label: text before the bar.
        delay: seconds before the bar first appears; shorter runs never show it.
        stream: where to draw (default ``sys.stderr``).
        enabled: None (default) draws only when the stream is a terminal; True or
            False forces it.
        clock: the time source (tests pass a fake one).
    """

    def __init__(self, total: int, label: str = "", *, delay: float = 0.5,
                 stream: TextIO | None = None, enabled: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = max(0, total)
        self.label = label
        self.done = 0
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.clock = clock
        self.start = clock()
        self.shown = False
        self._last_draw = -1.0

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more done; redraw at most ten times a second."""
        self.done += steps
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.shown and now - self._last_draw < 0.1 and self.done < self.total:
            return
        self._draw(now)

    def _draw(self, now: float) -> None:
        width = 30
        frac = self.done / self.total if self.total else 1.0
        fill = min(width, int(width * frac))
        elapsed = now - self.start
        label = f"{self.label} " if self.label else ""
        self.stream.write(f"\r{label}[{'#' * fill}{'.' * (width - fill)}] "
                          f"{self.done}/{self.total} {elapsed:.1f}s")
        self.stream.flush()
        self.shown = True
        self._last_draw = now

    def close(self) -> None:
        """End the bar's line if it was ever drawn (idempotent)."""
        if self.shown:
            self._draw(self.clock())
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
