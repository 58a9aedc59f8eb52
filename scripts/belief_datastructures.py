"""How much does ``ismcts``'s belief about the opponent's kept cards know?

An offline measurement: it plays Data Structures games between two
strategies through the engine and, at the first decision of each of seat 0's
turns, scores the opponent's *real* hand under the belief of
:mod:`engine.bots.ismcts_belief` against the uniform deal of
:func:`engine.datastructures.determinize`: the log-likelihood ratio, in nats,
of that hand (card by card, as the belief deals it: with chance ``KEPT_SHARE``
a kept card drawn by :func:`~engine.bots.ismcts_belief.kept_weights`, else a
uniform one, against always uniform). Above 0 the belief puts more weight on
the hands that really occur; knowing the hand outright would be worth about
log C(unseen, 5), some 15 nats.

    python scripts/belief_datastructures.py --opponent greedy --games 60 --seed 7000

``--opponent search`` plays ``search`` at a fixed number of worlds per move
(``--iterations``), so the run is reproducible and short.
"""

from __future__ import annotations

import argparse
import math
import sys

from engine.bots import Budget, get_strategy
from engine.bots.ismcts_belief import KEPT_SHARE, kept_weights
from engine.datastructures.deck import VALUE
from engine.registry import get_game


def hand_log_ratio(weights: list[float], hand: list[int], unseen: list[int],
                   share: float = KEPT_SHARE) -> float:
    """The log-likelihood ratio of the opponent's ``hand`` (card ids) under the belief
    against a uniform deal from ``unseen`` (every card the seat cannot see)."""
    mean = sum(weights[VALUE[c] + 1] for c in unseen) / len(unseen)
    return sum(math.log(share * weights[VALUE[c] + 1] / mean + 1.0 - share) for c in hand)


def measure(opponent: str, games: int, seed: int, iterations: int) -> tuple[int, float]:
    """(positions, mean log-likelihood ratio per position) over ``games`` games of
    ``greedy`` (seat 0) against ``opponent`` (seat 1)."""
    game = get_game("datastructures")
    positions, total = 0, 0.0
    for g in range(games):
        state = game.new_state(seed + g)
        bots = [get_strategy("greedy", seed + g), get_strategy(opponent, seed + g + 10_000)]
        turn = None
        while state.outcome() is None:
            seat = state.current
            view, legal = state.view(seat), state.legal(seat)
            if seat == 0 and view["turn"] != turn:
                turn = view["turn"]
                weights = kept_weights(view, 0)
                if weights is not None and state.hands[1]:
                    unseen = state.hands[1] + state.deck + state.recycle
                    total += hand_log_ratio(weights, state.hands[1], unseen)
                    positions += 1
            state.apply(seat, bots[seat].choose("datastructures", seat, view, legal,
                                                Budget.iterations(iterations)))
    return positions, (total / positions if positions else 0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponent", default="greedy", help="the seat whose hand is guessed")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7000)
    parser.add_argument("--iterations", type=int, default=8,
                        help="worlds per move of a searching opponent")
    args = parser.parse_args(argv)
    positions, ratio = measure(args.opponent, args.games, args.seed, args.iterations)
    print(f"{args.opponent}: {positions} positions, log-likelihood ratio of the real "
          f"opponent hand, belief against uniform: {ratio:+.4f} nats per position")
    return 0


if __name__ == "__main__":
    sys.exit(main())
