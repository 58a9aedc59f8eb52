"""Build a full state consistent with what one seat can see (for search bots).

A Monte Carlo bot knows only its view. :func:`determinize` fills in the hidden
part — the opponent's hand, the deck order and the faces of the face-down
``recycle`` pile — by dealing the cards that seat cannot see, uniformly at
random, and copies every public fact, so that ``determinize(v, s, rng).view(s)
== v``. The result is an ordinary state: clone it, apply intents, play it out.
"""

from __future__ import annotations

import random
from typing import Any

from engine.core import Outcome, Reason, View
from engine.datastructures.deck import N_CARDS, NAME, copies
from engine.datastructures.game import GAME
from engine.datastructures.rules import DISCARD, OVER, PLAY, DSState
from engine.rng import LegacyStream

#: Wire string -> its two physical ids.
_COPIES: dict[str, tuple[int, int]] = {NAME[c]: copies(NAME[c]) for c in range(N_CARDS)}


class _Pool:
    """The 104 physical cards; hands out one unused copy of a face at a time."""

    def __init__(self) -> None:
        self.used = [False] * N_CARDS

    def take(self, text: str) -> int:
        used = self.used
        pair = _COPIES.get(text)
        if pair is None:
            raise ValueError(f"not a card: {text!r}")
        first, second = pair
        if not used[first]:
            used[first] = True
            return first
        if not used[second]:
            used[second] = True
            return second
        raise ValueError(f"the view shows {text!r} more than twice")

    def take_all(self, texts: list[str]) -> list[int]:
        return [self.take(t) for t in texts]

    def unseen(self) -> list[int]:
        return [c for c in range(N_CARDS) if not self.used[c]]


def determinize(view: View, seat: int, rng: random.Random) -> DSState:
    """A full state that ``seat``'s ``view`` could come from, hidden cards sampled.

    Visible cards (own hand, queue, stacks, arrays, discard) are placed as shown;
    the rest are shuffled with ``rng`` and dealt to the opponent's hand (as many
    as its count), the face-down recycle pile, and the deck. Turn, phase, flags,
    the cap and the result are copied. The new state's own generator is seeded
    from ``rng``, so two calls with equally seeded ``rng`` give equal states; it is
    :class:`engine.rng.LegacyStream` (Python's Mersenne Twister: about four times
    faster to shuffle with than the documented stream, and an imagined world is
    never a match anyone verifies).

    Args:
        view: ``state.view(seat)`` of a Data Structures state (any phase).
        seat: the seat whose view it is (0 or 1), not a spectator.
        rng: the caller's generator; the only randomness used.

    Raises:
        ValueError: the view is a spectator's or another seat's, shows a card more
            than twice, or its counts do not add up to 104 cards.
    """
    if view.get("game") != "datastructures" or view.get("seat") != seat or seat not in (0, 1):
        raise ValueError(f"not seat {seat!r}'s datastructures view")
    pool = _Pool()
    hands: list[list[int]] = [[], []]
    hands[seat] = pool.take_all(view["hand"])
    queue = pool.take_all(view["queue"])
    discard = pool.take_all(view["discard"])
    stacks = [pool.take_all(view["players"][s]["stack"]) for s in (0, 1)]
    arrays = [[pool.take_all(a["cards"]) for a in view["players"][s]["arrays"]] for s in (0, 1)]
    closed = [[bool(a["closed"]) for a in view["players"][s]["arrays"]] for s in (0, 1)]
    hidden = pool.unseen()
    n_opp = view["hand_counts"][1 - seat]
    n_recycle, n_deck = view["recycle"], view["deck"]
    if len(hidden) != n_opp + n_recycle + n_deck:
        raise ValueError(f"{len(hidden)} unseen cards, but the view counts "
                         f"{n_opp} + {n_recycle} + {n_deck}")
    rng.shuffle(hidden)
    hands[1 - seat] = hidden[:n_opp]
    recycle = hidden[n_opp:n_opp + n_recycle]
    deck = hidden[n_opp + n_recycle:]

    result: dict[str, Any] | None = view["result"]
    phase = view["phase"]
    if phase not in (PLAY, DISCARD, OVER):
        raise ValueError(f"unknown phase {phase!r}")
    reveal = view["last_mulligan"]
    seed = rng.getrandbits(256)
    return DSState.from_fields(
        LegacyStream(seed), game=GAME, seed=seed, options=GAME.normalize_options({"cap": view["cap"]}),
        cap=view["cap"], deck=deck, discard=discard, recycle=recycle, queue=queue,
        stacks=stacks, hands=hands, arrays=arrays, closed=closed, phase=phase,
        current=view["to_move"] if view["to_move"] is not None else seat,
        turn=view["turn"], played=view["played"], mulliganed=view["mulliganed"],
        stacked=view["stacked"], idle_turns=view["idle_turns"],
        last_mulligan=None if reveal is None else {
            k: (list(v) if isinstance(v, list) else v) for k, v in reveal.items()},
        result=None if result is None else Outcome(result["winner"], Reason(result["reason"])))
