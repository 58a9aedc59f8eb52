#!/usr/bin/env python3
"""Benchmark: Data Structures random games per second, and the median time of one
step (legal + apply + projection), through the engine's public interface.

A step is what the server does per intent: ``legal(seat)``, ``apply`` of one
uniformly random legal intent, then ``view(seat)`` and ``project_events`` for
the seat that moved (the goal is a median under 50 microseconds). Also timed,
for search bots: ``clone()`` and ``determinize(view, seat, rng)``.

    .venv/bin/python scripts/bench_datastructures.py [--games 200] [--seed 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.datastructures import determinize  # noqa: E402
from engine.registry import get_game  # noqa: E402

GAME = get_game("datastructures")


def play(seed: int) -> int:
    """One random game, legal + apply only; returns the number of intents."""
    state = GAME.new_state(seed)
    rng = random.Random(seed)
    steps = 0
    while state.outcome() is None:
        (seat,) = state.to_move()
        legal = state.legal(seat)
        state.apply(seat, legal[rng.randrange(len(legal))])
        steps += 1
    return steps


def play_projected(seed: int) -> int:
    """One random game where every step also projects the view and events for both
    seats and a spectator (what a served match with a spectator costs)."""
    state = GAME.new_state(seed)
    rng = random.Random(seed)
    steps = 0
    while state.outcome() is None:
        (seat,) = state.to_move()
        legal = state.legal(seat)
        events = state.apply(seat, legal[rng.randrange(len(legal))])
        for who in (0, 1, None):
            state.view(who)
            state.project_events(events, who)
        steps += 1
    return steps


def step_times(seeds: list[int]) -> tuple[list[float], list[float], list[float]]:
    """Per-step times (seconds) of legal + apply + view + project_events for the mover,
    and of clone() and determinize() sampled along the same games."""
    perf = time.perf_counter
    steps, clones, dets = [], [], []
    for seed in seeds:
        state = GAME.new_state(seed)
        rng = random.Random(seed)
        sample = random.Random(seed + 1)
        while state.outcome() is None:
            (seat,) = state.to_move()
            t0 = perf()
            legal = state.legal(seat)
            events = state.apply(seat, legal[rng.randrange(len(legal))])
            view = state.view(seat)
            state.project_events(events, seat)
            t1 = perf()
            steps.append(t1 - t0)
            if len(steps) % 10 == 0:
                t0 = perf()
                state.clone()
                t1 = perf()
                determinize(view, seat, sample)
                t2 = perf()
                clones.append(t1 - t0)
                dets.append(t2 - t1)
    return steps, clones, dets


def _rate(fn, seeds: list[int]) -> tuple[float, int]:
    start = time.perf_counter()
    total = sum(fn(seed) for seed in seeds)
    return len(seeds) / (time.perf_counter() - start), total


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its numbers; returns 0."""
    parser = argparse.ArgumentParser(prog="bench_datastructures",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per run (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is kept")
    args = parser.parse_args(argv)
    seeds = list(range(args.seed, args.seed + args.games))
    best = best_projected = 0.0
    intents = 0
    for _ in range(args.repeat):
        rate, intents = _rate(play, seeds)
        best = max(best, rate)
        rate, _ = _rate(play_projected, seeds)
        best_projected = max(best_projected, rate)
    steps, clones, dets = step_times(seeds[: max(1, args.games // 4)])
    us = 1e6
    print(f"games per run: {args.games} (mean {intents / len(seeds):.0f} intents per game), "
          f"best of {args.repeat}")
    print(f"random games/s, legal + apply:                         {best:10.1f}")
    print(f"random games/s, + view & events for 2 seats + spectator: {best_projected:8.1f}")
    print(f"one step legal + apply + view + events (median):  {statistics.median(steps) * us:6.1f} us"
          f"  (p90 {statistics.quantiles(steps, n=10)[-1] * us:.1f} us; goal < 50 us)")
    print(f"clone() median:                                   {statistics.median(clones) * us:6.1f} us")
    print(f"determinize(view) median:                         {statistics.median(dets) * us:6.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
