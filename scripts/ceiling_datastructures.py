"""How strong could a search bot for Data Structures be if it knew the hidden cards?

An offline measurement, never a strategy a server or ``cardbot`` can run: it
plays ``search`` or ``ismcts`` with their determinizations replaced by an
*oracle* that reads the real state of the game being played, against a normal
opponent, at the same time budget per move, with the same deals and swapped
seats as ``cardsim tournament``. Modes of the oracle:

- ``full``: every sampled world is the real state (the opponent's hand, the
  deck order and the face-down recycle pile as they are); only the order of a
  future reshuffle of the recycle pile stays unknown.
- ``hand``: the opponent's hand as it is; the deck and the recycle pile dealt at
  random from the cards that are really in them (what a perfect inference of the
  opponent's hand from its public actions could at best tell).
- ``none``: the bot's own determinization (the baseline, measured in the same run).

Set against the bot's normal score, it says how much of a win rate is reachable
by better beliefs at all, and how much must come from the search or its evaluation.

    python scripts/ceiling_datastructures.py --bot ismcts --opponent greedy \
        --mode full --games 150 --seed 3001 --time-budget 0.05
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from client.sim.tournament import CLOCKS, GameJob, parse_options, schedule, wilson
from engine.bots import get_strategy, timed
from engine.bots import ismcts as ismcts_module
from engine.bots import search as search_module
from engine.bots.ismcts import ISMCTSStrategy
from engine.datastructures.rules import DSState
from engine.playout import play_out
from engine.registry import get_game
from engine.rng import LegacyStream

MODES = ("full", "hand", "none")


def oracle_world(real: DSState, mode: str, rng: random.Random) -> DSState:
    """A world for the searching seat built from the real state ``real`` (``mode``)."""
    world = real.clone()
    if mode == "hand":
        pool = world.deck + world.recycle
        rng.shuffle(pool)
        n = len(world.recycle)
        world.recycle, world.deck = pool[:n], pool[n:]
    world._rng = LegacyStream(rng.getrandbits(256))
    world._rng_shared = False
    return world


@contextmanager
def oracle(real: list[DSState | None], mode: str) -> Iterator[None]:
    """While active, the bots' ``determinize`` returns :func:`oracle_world` of
    ``real[0]`` when it is set (``mode`` ``none``: unchanged)."""
    saved = search_module.determinize, ismcts_module.determinize
    if mode == "none":
        yield
        return
    original = saved[0]

    def determinize(view: Any, seat: int, rng: random.Random) -> DSState:
        state = real[0]
        if state is None:
            return original(view, seat, rng)
        return oracle_world(state, mode, rng)

    search_module.determinize = ismcts_module.determinize = determinize
    try:
        yield
    finally:
        search_module.determinize, ismcts_module.determinize = saved


def play(job: GameJob, bot: str, mode: str, budget: float, now: Callable[[], float],
         options: dict[str, Any] | None = None) -> int | None:
    """One game; the winner's seat (None: a draw). Only ``bot`` sees the oracle;
    ``ismcts`` is built with ``options`` (keyword arguments of ISMCTSStrategy)."""
    game = get_game("datastructures")
    state = game.new_state(job.seed, game.normalize_options({}))
    players = [timed(ISMCTSStrategy(s, **(options or {})) if name == "ismcts"
                     else get_strategy(name, seed=s), budget, clock=now)
               for name, s in zip(job.bots, job.strategy_seeds, strict=True)]
    real: list[DSState | None] = [None]

    def choose(state: Any, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        real[0] = state if job.bots[seat] == bot else None
        with oracle(real, mode):
            intent = players[seat].choose("datastructures", seat, state.view(seat), legal)
        real[0] = None
        if intent not in legal:
            raise RuntimeError(f"{job.bots[seat]} chose an illegal intent {intent!r}")
        return intent

    play_out(state, choose, max_moves=5000)
    outcome = state.outcome()
    assert outcome is not None
    return outcome.winner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default="ismcts", choices=("ismcts", "search"))
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--mode", default="full", choices=MODES)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a keyword argument of ISMCTSStrategy (repeatable), "
                             "e.g. evaluation=cards, infer=false, exploration=0.3")
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--seed", type=int, default=3001)
    parser.add_argument("--time-budget", type=float, default=0.05)
    parser.add_argument("--clock", default="cpu", choices=tuple(CLOCKS))
    args = parser.parse_args(argv)
    if args.bot == args.opponent:
        parser.error("the bot and its opponent must differ")
    now = CLOCKS[args.clock]
    try:
        options = parse_options(args.option)
    except ValueError as exc:
        parser.error(str(exc))
    wins = losses = draws = 0
    started = time.perf_counter()
    for job in schedule([args.bot, args.opponent], args.games, args.seed):
        winner = play(job, args.bot, args.mode, args.time_budget, now, options)
        if winner is None:
            draws += 1
        elif job.bots[winner] == args.bot:
            wins += 1
        else:
            losses += 1
    lo, hi = wilson(wins, wins + losses) if wins + losses else (0.0, 0.0)
    print(json.dumps({"bot": args.bot, "opponent": args.opponent, "mode": args.mode,
                      "options": options,
                      "games": args.games, "seed": args.seed, "wins": wins, "losses": losses,
                      "draws": draws, "win_rate": wins / max(1, wins + losses),
                      "ci95": [lo, hi], "seconds": time.perf_counter() - started}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
