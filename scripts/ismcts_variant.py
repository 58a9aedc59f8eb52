"""Run ``cardsim`` with the ``ismcts`` strategy built with other arguments.

A screening tool: ``python scripts/ismcts_variant.py KEY=VALUE ... -- ARGS`` runs
``cardsim ARGS`` (in this process; keep ``--jobs`` at 1) where every ``ismcts``
bot is ``ISMCTSStrategy(seed, KEY=VALUE, ...)`` (values read as Python literals,
else strings). At the end it prints to stderr, for every ``ismcts`` bot made,
its searched decisions, those made with the opponent forced to greedy's
choices (or with world priors, by the opponent model), and its opponent
model's stacked cards, their mean stack rank and every rank, and the median
worlds per searched decision over the bots. ``ismcts0`` names the default
``ismcts`` (an opponent for the variant).

Raises:
    SystemExit: no ``--`` in the arguments, or cardsim's own exit status.
"""

from __future__ import annotations

import ast
import statistics
import sys
from typing import Any

import engine.bots as bots
from engine.bots.ismcts import ISMCTSStrategy


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str]) -> int:
    if "--" not in argv:
        raise SystemExit("usage: ismcts_variant.py KEY=VALUE ... -- CARDSIM ARGS")
    cut = argv.index("--")
    kwargs = {k: _value(v) for k, v in (a.split("=", 1) for a in argv[:cut])}
    made: list[ISMCTSStrategy] = []

    def factory(seed: int | None) -> ISMCTSStrategy:
        strategy = ISMCTSStrategy(seed, **kwargs)
        made.append(strategy)
        return strategy

    doc = bots.describe()["ismcts"]
    bots.register("ismcts", factory, doc, replace=True)
    bots.register("ismcts0", ISMCTSStrategy, "ismcts as it is by default", replace=True)
    from client.sim.cli import main as cardsim

    try:
        status = cardsim(argv[cut + 1:])
    finally:
        bots.register("ismcts", ISMCTSStrategy, doc, replace=True)
        bots.unregister("ismcts0")
        worlds = []
        for s in made:
            model = s._model
            rank = (model.rank_sum / model.turns if model is not None and model.turns
                    else float("nan"))
            turns = model.turns if model is not None else 0
            print(f"ismcts-bot searched={s.searched} forced={s.forced_searched} "
                  f"stacked_seen={turns} mean_rank={rank:.3f} "
                  f"worlds_mean={s.total_iterations / max(s.searched, 1):.1f} ranks="
                  + ",".join(f"{r:.3f}" for r in (model.ranks if model is not None else [])),
                  file=sys.stderr)
            if s.searched:
                worlds.append(s.total_iterations / s.searched)
        if worlds:
            print(f"ismcts-bots {len(made)} median worlds per decision (per-game means) "
                  f"{statistics.median(worlds):.1f} kwargs={kwargs}", file=sys.stderr)
    return status or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
