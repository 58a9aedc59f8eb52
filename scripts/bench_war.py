#!/usr/bin/env python3
"""Benchmark: full War games per second through the engine's public interface,
next to a bare loop (below) that implements the same rules with no views,
events or checks, in the same process. Prints both rates and their ratio.

The bare loop draws from the generator exactly like the engine, so both play
the very same games; the script checks that their results agree.

    .venv/bin/python scripts/bench_war.py [--games 100] [--seed 1] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.registry import get_game  # noqa: E402
from engine.rng import HmacStream  # noqa: E402

_RANK = tuple(c // 4 + 2 for c in range(52))


def bare_game(seed: int, cap: int = 10000, played: bool = False,
              lose: bool = False) -> tuple[int | None, str, int, int]:
    """Play one War game by the rules W1-W5 in a plain loop.

    Returns ``(winner, reason, battles, wars)`` with the engine's reason names.
    """
    rng = HmacStream.for_match(seed, ())   # the engine's stream when none is given
    cards = list(range(52))
    rng.shuffle(cards)
    decks = (deque(cards[0::2]), deque(cards[1::2]))
    d0, d1 = decks
    rank = _RANK
    battles = wars = 0
    while True:
        battles += 1
        u0 = d0.popleft()
        u1 = d1.popleft()
        steps = [(None, None, u0, u1)]
        while rank[u0] == rank[u1]:
            wars += 1
            n0, n1 = len(d0), len(d1)
            if lose:
                if n0 < 2 or n1 < 2:
                    winner = None if n0 < 2 and n1 < 2 else (1 if n0 < 2 else 0)
                    return winner, "short_war", battles - 1, wars
            elif n0 == 0 and n1 == 0:
                return None, "exhausted", battles - 1, wars
            f0 = d0.popleft() if n0 > 1 else None
            f1 = d1.popleft() if n1 > 1 else None
            n0u = d0.popleft() if n0 else None
            n1u = d1.popleft() if n1 else None
            steps.append((f0, f1, n0u, n1u))
            if n0u is not None:
                u0 = n0u
            if n1u is not None:
                u1 = n1u
        winner = 0 if rank[u0] > rank[u1] else 1
        if played:
            order = (winner, 1 - winner, 2 + winner, 3 - winner)
            pile = [step[i] for step in steps for i in order if step[i] is not None]
        else:
            pile = [card for step in steps for card in step if card is not None]
            rng.shuffle(pile)
        decks[winner].extend(pile)
        if len(decks[winner]) == 52:
            return winner, "all_cards", battles, wars
        if battles >= cap:
            n0, n1 = len(d0), len(d1)
            return (None if n0 == n1 else (0 if n0 > n1 else 1)), "cap", battles, wars


def engine_game(seed: int, options: dict | None = None) -> tuple[int | None, str, int, int]:
    """Play one War game through the public interface: legal + apply for both seats
    each step, no views. Returns ``(winner, reason, battles, wars)``."""
    state = get_game("war").new_state(seed, options)
    legal = state.legal
    apply = state.apply
    while state.outcome() is None:
        for seat in (0, 1):
            intents = legal(seat)
            if intents:
                apply(seat, intents[0])
    outcome = state.outcome()
    return outcome.winner, outcome.reason, state.battles, state.wars


def _rate(play, seeds: list[int]) -> tuple[float, list]:
    """Games per CPU second of this process (CPU time, so other processes' load on a
    shared machine does not count), and the results."""
    start = time.process_time()
    results = [play(seed) for seed in seeds]
    return len(seeds) / max(time.process_time() - start, 1e-9), results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 1 if engine and bare loop disagree on any game.

    Each round times the bare loop and the engine on the same seeds (alternating
    which goes first); the ratio reported is the median of the rounds' ratios.
    """
    parser = argparse.ArgumentParser(prog="bench_war", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games per round (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--repeat", type=int, default=7, help="rounds (default 7)")
    args = parser.parse_args(argv)
    seeds = list(range(args.seed, args.seed + args.games))
    engine_rates: list[float] = []
    bare_rates: list[float] = []
    ratios: list[float] = []
    for round_ in range(args.repeat):
        if round_ % 2:
            engine_rate, engine_results = _rate(engine_game, seeds)
            bare_rate, bare_results = _rate(bare_game, seeds)
        else:
            bare_rate, bare_results = _rate(bare_game, seeds)
            engine_rate, engine_results = _rate(engine_game, seeds)
        if bare_results != engine_results:
            print("MISMATCH: engine and bare loop played different games", file=sys.stderr)
            return 1
        engine_rates.append(engine_rate)
        bare_rates.append(bare_rate)
        ratios.append(bare_rate / engine_rate)
    battles = sum(r[2] for r in engine_results) / len(seeds)
    print(f"{args.games} games per round (mean {battles:.0f} battles per game), "
          f"{args.repeat} rounds, CPU time")
    print(f"engine (legal + apply, public interface): {max(engine_rates):10.1f} games/s (best)")
    print(f"bare loop (same rules, no checks/events):  {max(bare_rates):10.1f} games/s (best)")
    print(f"ratio bare/engine: median {statistics.median(ratios):.2f}x "
          f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x; goal: <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
