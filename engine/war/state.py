"""One play-through of War: the rules W1-W6 and R0.1/R0.4 as a state machine.

The table during a battle is a list of *steps*. Step 0 is the battle's flip
(one face-up card each); every tie adds a war step (one face-down card, then
one face-up card each, W2). A step is a list ``[down0, down1, up0, up1]`` of
card ids, ``None`` where a seat placed no such card (W4: a seat with one card
left plays it face up; a seat with none lets its last face-up card stand).

A seat flips by placing its cards for the current step at once; the step
resolves when every seat that has to flip has flipped (W6). The only source
of randomness is ``self.rng``, a ``random.Random(seed)`` (R0.1).

This module holds the rules only. What a seat may see is computed in
:mod:`engine.war.view`, the game's one projection.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.cards import DECK_SIZE, RANKS
from engine.core import Event, GameOver, IllegalIntent, Intent, NotYourTurn, Outcome, State, View

if TYPE_CHECKING:
    from engine.war.game import WarGame

#: The one War intent (W6).
FLIP: dict[str, str] = {"type": "flip"}

#: Outcome reasons (also in docs/rules.md).
REASON_ALL_CARDS = "all_cards"    # W5: one seat holds all 52 cards
REASON_CAP = "cap"                # W5: the battle cap was reached
REASON_EXHAUSTED = "exhausted"    # W4 (stand): both seats out of cards in a tied war
REASON_SHORT_WAR = "short_war"    # W4 (variant lose): too few cards for a war
REASON_RESIGN = "resign"          # R0.4

SEATS = (0, 1)


class WarState(State):
    """A War match in progress (or finished). Mutable; one owner at a time.

    Public read-only attributes used by the projection and by tools:
    ``decks`` (two deques, top card first), ``steps`` (the current battle's
    table), ``pending`` (seats that still have to flip this step), ``battle``
    (number of the current battle, 1-based), ``battles`` (battles resolved),
    ``wars`` (ties so far, a double war counts two), ``last`` (the last resolved
    battle: ``(number, winner, steps)`` or None).
    """

    __slots__ = (
        "game", "seed", "options", "rng", "decks", "steps", "pending", "battle",
        "battles", "wars", "last", "_outcome", "_cap", "_played", "_lose",
    )

    def __init__(self, game: WarGame, seed: int, options: dict[str, Any]) -> None:
        """Shuffle one 52-card deck with ``random.Random(seed)`` and deal 26 each (W1).

        The deal alternates, seat 0 first: seat 0 gets the shuffled deck's
        cards 0, 2, 4, ..., seat 1 gets 1, 3, 5, ...

        Raises:
            ValueError: ``seed`` is not an int in ``[0, 2**256)``.
        """
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 256:
            raise ValueError(f"seed must be an int in [0, 2**256), got {seed!r}")
        self.game = game
        self.seed = seed
        self.options = options
        self._cap: int = options["cap"]
        self._played: bool = options["return"] == "played"
        self._lose: bool = options["short_war"] == "lose"
        self.rng = random.Random(seed)
        cards = list(range(DECK_SIZE))
        self.rng.shuffle(cards)
        self.decks: tuple[deque[int], deque[int]] = (deque(cards[0::2]), deque(cards[1::2]))
        self.steps: list[list[int | None]] = [[None, None, None, None]]
        self.pending: list[bool] = [True, True]
        self.battle = 1
        self.battles = 0
        self.wars = 0
        self.last: tuple[int, int, list[list[int | None]]] | None = None
        self._outcome: Outcome | None = None

    # ----------------------------------------------------------------- moves

    def legal(self, seat: int) -> list[Intent]:
        """``[{"type": "flip"}]`` while ``seat`` still has to flip this step, else ``[]``."""
        if self._outcome is None and (seat == 0 or seat == 1) and self.pending[seat]:
            return [{"type": "flip"}]
        return []

    def to_move(self) -> tuple[int, ...]:
        """Seats that still have to flip in the current step (either order, W6)."""
        if self._outcome is not None:
            return ()
        pending = self.pending
        return tuple(seat for seat in SEATS if pending[seat])

    def default_intent(self, seat: int) -> Intent | None:
        """A flip for a seat that has to flip (auto-flip and turn timeout, W6), else None."""
        return {"type": "flip"} if self.legal(seat) else None

    def apply(self, seat: int, intent: Mapping[str, Any]) -> list[Event]:
        """Flip for ``seat``: place its card(s) for this step; resolve when all have.

        Returns raw events (they name face-down cards; send only their projection).

        Raises:
            GameOver: the game has ended.
            NotYourTurn: ``seat`` has already flipped this step, or has no card
                and its last face-up card stands (W4).
            IllegalIntent: ``seat`` is not 0 or 1, or the intent is not exactly
                ``{"type": "flip"}``.
        """
        if self._outcome is not None:
            raise GameOver("the game is over", rule="W5")
        if seat != 0 and seat != 1:
            raise IllegalIntent(f"no seat {seat!r} in War (seats are 0 and 1)", rule="W1")
        if not self.pending[seat]:
            raise NotYourTurn(f"seat {seat} has nothing to flip now", rule="W6")
        if intent != FLIP:
            raise IllegalIntent(f"the only War intent is {{'type': 'flip'}}, got {intent!r}",
                                rule="W6")
        deck = self.decks[seat]
        step = self.steps[-1]
        down = None
        if len(self.steps) > 1 and len(deck) > 1:   # a war step: face-down card first (W2)
            down = step[seat] = deck.popleft()
        up = step[2 + seat] = deck.popleft()
        self.pending[seat] = False
        events: list[Event] = [{"type": "flip", "seat": seat, "battle": self.battle,
                                "down": down, "up": up}]
        if not (self.pending[0] or self.pending[1]):
            self._resolve(events)
        return events

    def _face_up(self, seat: int) -> int:
        """The face-up card ``seat`` competes with: its latest one this battle (W4 stand)."""
        for step in reversed(self.steps):
            card = step[2 + seat]
            if card is not None:
                return card
        raise AssertionError("a seat competes without a face-up card")

    def _resolve(self, events: list[Event]) -> None:
        """Compare the face-up cards; give the pile to the winner, or start a war (W2-W5)."""
        step = self.steps[-1]
        up0 = step[2] if step[2] is not None else self._face_up(0)
        up1 = step[3] if step[3] is not None else self._face_up(1)
        r0 = RANKS[up0]
        r1 = RANKS[up1]
        if r0 == r1:
            self._start_war(events)
            return
        winner = 0 if r0 > r1 else 1
        pile = self._gather(winner)
        deck = self.decks[winner]
        deck.extend(pile)
        events.append({"type": "battle", "battle": self.battle, "winner": winner,
                       "cards": len(pile), "wars": len(self.steps) - 1})
        self.last = (self.battle, winner, self.steps)
        self.battles = self.battle
        self.steps = []
        if len(deck) == DECK_SIZE:
            self._end(winner, REASON_ALL_CARDS, events)
        elif self.battles >= self._cap:
            n0 = len(self.decks[0])
            n1 = len(self.decks[1])
            self._end(None if n0 == n1 else (0 if n0 > n1 else 1), REASON_CAP, events)
        else:
            self.battle += 1
            self.steps.append([None, None, None, None])
            self.pending[0] = self.pending[1] = True

    def _gather(self, winner: int) -> list[int]:
        """The pile in the order it goes under the winner's deck (W3)."""
        pile: list[int] = []
        if self._played:
            loser = 1 - winner
            for step in self.steps:
                for i in (winner, loser, 2 + winner, 2 + loser):
                    card = step[i]
                    if card is not None:
                        pile.append(card)
            return pile
        for step in self.steps:
            for card in step:
                if card is not None:
                    pile.append(card)
        self.rng.shuffle(pile)
        return pile

    def _start_war(self, events: list[Event]) -> None:
        """Equal ranks: a war step follows, or the game ends for want of cards (W2, W4)."""
        self.wars += 1
        n0 = len(self.decks[0])
        n1 = len(self.decks[1])
        events.append({"type": "war", "battle": self.battle, "step": len(self.steps)})
        if self._lose:
            short0, short1 = n0 < 2, n1 < 2
            if short0 or short1:
                winner = None if short0 and short1 else (1 if short0 else 0)
                self._end(winner, REASON_SHORT_WAR, events)
                return
        elif n0 == 0 and n1 == 0:
            self._end(None, REASON_EXHAUSTED, events)
            return
        self.steps.append([None, None, None, None])
        self.pending[0] = n0 > 0
        self.pending[1] = n1 > 0

    def _end(self, winner: int | None, reason: str, events: list[Event]) -> None:
        self._outcome = Outcome(winner, reason)
        self.pending[0] = self.pending[1] = False
        events.append({"type": "game_over", "winner": winner, "reason": reason})

    def resign(self, seat: int) -> list[Event]:
        """``seat`` resigns at once; the other seat wins (R0.4).

        Raises:
            GameOver: the game has already ended.
            IllegalIntent: ``seat`` is not 0 or 1.
        """
        return self.forfeit(seat, REASON_RESIGN)

    def forfeit(self, seat: int, reason: str) -> list[Event]:
        """``seat`` loses at once for ``reason`` (timeouts, abandonment); the other wins.

        Raises:
            GameOver: the game has already ended.
            IllegalIntent: ``seat`` is not 0 or 1.
        """
        if self._outcome is not None:
            raise GameOver("the game is over", rule="R0.4")
        if seat != 0 and seat != 1:
            raise IllegalIntent(f"no seat {seat!r} in War (seats are 0 and 1)", rule="R0.4")
        events: list[Event] = []
        self._end(1 - seat, reason, events)
        events[0]["seat"] = seat
        return events

    def outcome(self) -> Outcome | None:
        """The result once the game has ended, else None."""
        return self._outcome

    # ------------------------------------------------------------ projection

    def view(self, seat: int | None) -> View:
        """What ``seat`` (None: a spectator) may see; see :func:`engine.war.view.view`."""
        from engine.war.view import view

        return view(self, seat)

    def project_events(self, events: list[Event], seat: int | None) -> list[Event]:
        """The events as ``seat`` may see them; see :func:`engine.war.view.project_events`."""
        from engine.war.view import project_events

        return project_events(events, seat)

    # ---------------------------------------------------------------- copies

    def table_cards(self) -> list[int]:
        """Every card on the table in the current battle (any order); for checks and tools."""
        return [card for step in self.steps for card in step if card is not None]

    def digest(self) -> str:
        """SHA-256 hex over the whole state: options, decks, table, counters, RNG state."""
        last = None if self.last is None else (self.last[0], self.last[1], self.last[2])
        parts = (
            self.seed, sorted(self.options.items()), list(self.decks[0]), list(self.decks[1]),
            self.steps, self.pending, self.battle, self.battles, self.wars, last,
            None if self._outcome is None else (self._outcome.winner, self._outcome.reason),
            self.rng.getstate(),
        )
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def clone(self) -> WarState:
        """An independent deep copy (the generator included)."""
        other = WarState.__new__(WarState)
        other.game = self.game
        other.seed = self.seed
        other.options = dict(self.options)
        other._cap, other._played, other._lose = self._cap, self._played, self._lose
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.decks = (deque(self.decks[0]), deque(self.decks[1]))
        other.steps = [list(step) for step in self.steps]
        other.pending = list(self.pending)
        other.battle, other.battles, other.wars = self.battle, self.battles, self.wars
        other.last = self.last   # never mutated after it is set
        other._outcome = self._outcome
        return other
