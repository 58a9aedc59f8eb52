"""One play-through of War: the rules W1-W6 and R0.1/R0.4 as a state machine.

The table during a battle is a flat list of *steps*, four slots each:
``[down0, down1, up0, up1]`` (card ids, ``None`` where a seat placed no such
card). Step 0 is the battle's flip (one face-up card each); every tie adds a
war step (one face-down card, then one face-up card each, W2). W4: in a war
step a seat with one card left plays it face up; a seat with none places
nothing and its last face-up card stands.

A seat flips by placing its cards for the current step at once; the step
resolves when every seat that has to flip has flipped, in either order (W6).
The only source of randomness is ``self.rng``, the match's stream
(:mod:`engine.rng`, R0.1). This module holds the rules only; what a seat may see is computed in
:mod:`engine.war.observer`, the game's one projection.

``apply`` inlines the plain battle (no tie), which is most of every game,
because the engine must run within 2x of a bare loop (scripts/bench_war.py).
"""

from __future__ import annotations

import hashlib
import struct
from collections import deque
from collections.abc import Mapping
from typing import Any, NoReturn

from engine.cards import DECK_SIZE, RANKS
from engine.core import (
    DIGEST_V2,
    Event,
    Game,
    GameOver,
    IllegalIntent,
    Intent,
    MatchRng,
    NotYourTurn,
    Outcome,
    Reason,
    State,
    copy_rng,
    new_rng,
    rng_fingerprint,
)
from engine.fields import Field, FieldTable
from engine.war.intents import FLIP, FLIP_MOVE, Flip, from_wire
from engine.war.table import SEATS, STEP

#: The intent ``legal`` hands out, shared between calls to keep the engine fast:
#: callers must not mutate it. ``apply`` accepts it by identity (a fast path) and
#: otherwise compares against ``FLIP``; no rule reads its contents.
_FLIP_INTENT: dict[str, str] = {"type": "flip"}

#: Every field of a War state, in digest order; clone and digest derive from it.
_FIELDS = FieldTable([
    Field("seed"),
    Field("options", copy="dict({})", digest="sorted({}.items())"),
    Field("decks", copy="(deque({}[0]), deque({}[1]))",
          digest="list({}[0]), list({}[1])"),
    Field("table", copy="list({})"),
    Field("pending", copy="list({})"),
    Field("battle"),
    Field("wars"),
    Field("last"),   # its table is never mutated once the battle is over
    Field("_outcome", digest="None if {} is None else ({}.winner, {}.reason.value)"),
    Field("game", digest=None),
    Field("rng", copy="copy_rng({})", digest=None),   # digested as its fingerprint
    Field("_cap", digest=None),    # the options, unpacked for the hot path
    Field("_played", digest=None),
    Field("_lose", digest=None),
    # the hash of seed and options that journal_digest starts from (None: not yet)
    Field("_digest_head", digest=None),
], {"deque": deque, "copy_rng": copy_rng})

#: journal_digest's fixed-size part; a table slot's byte (255: empty)
_DIGEST_HEADER = struct.Struct(">BBBBBIII")
_SLOT_BYTE = {None: 255, **{card: card for card in range(DECK_SIZE)}}.__getitem__


class WarState(State):
    """A War match in progress (or finished). Mutable; one owner at a time.

    Read-only attributes for the projection and tools: ``decks`` (two deques,
    top card first), ``table`` (the current battle, flat, see the module doc;
    empty once a battle ended the game), ``pending`` (per seat: still has to
    flip this step), ``battle`` (current battle number, 1-based), ``battles``
    (battles resolved), ``wars`` (ties so far; a double war counts two),
    ``last`` (the last resolved battle: ``(number, winner, table)``, or None).
    """

    __slots__ = _FIELDS.slots

    def __init__(self, game: Game, seed: int, options: dict[str, Any],
                 rng: MatchRng | None = None) -> None:
        """Shuffle one 52-card deck with the match's stream and deal 26 each (W1).

        ``rng`` is that stream, fresh (None: :func:`engine.core.new_rng` of ``seed``).
        The deal alternates, seat 0 first: seat 0 gets the shuffled deck's
        cards 0, 2, 4, ..., seat 1 gets 1, 3, 5, ... ``options`` must already be
        normalized (:meth:`engine.core.Game.normalize_options`).

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
        self.rng = new_rng(seed) if rng is None else rng
        cards = list(range(DECK_SIZE))
        self.rng.shuffle(cards)
        self.decks: tuple[deque[int], deque[int]] = (deque(cards[0::2]), deque(cards[1::2]))
        self.table: list[int | None] = [None, None, None, None]
        self.pending: list[bool] = [True, True]
        self.battle = 1
        self.wars = 0
        self.last: tuple[int, int, list[int | None]] | None = None
        self._outcome: Outcome | None = None
        self._digest_head: Any = None

    # ----------------------------------------------------------------- moves

    def legal(self, seat: int) -> list[Intent]:
        """``[{"type": "flip"}]`` while ``seat`` still has to flip this step, else ``[]``.

        The list is new on each call; the intent in it is shared: do not mutate it.
        """
        if (seat == 0 or seat == 1) and self.pending[seat]:   # all False once over
            return [_FLIP_INTENT]
        return []

    def legal_moves(self, seat: int) -> list[Flip]:
        """:meth:`legal` as intent values: ``[FLIP_MOVE]`` or ``[]``."""
        return [FLIP_MOVE] if (seat == 0 or seat == 1) and self.pending[seat] else []

    def apply_move(self, seat: int, move: Flip) -> list[Event]:
        """:meth:`apply` for an intent value.

        Raises:
            GameOver, NotYourTurn, IllegalIntent: as :meth:`apply`.
        """
        return self.apply(seat, _FLIP_INTENT if move == FLIP_MOVE else move)  # type: ignore[arg-type]

    def to_move(self) -> tuple[int, ...]:
        """Seats that still have to flip in the current step (either order, W6)."""
        first, second = self.pending
        if first:
            return (0, 1) if second else (0,)
        return (1,) if second else ()

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
        pending = self.pending
        if not ((seat == 0 or seat == 1) and pending[seat]
                and (intent is _FLIP_INTENT or intent == FLIP)):
            self._refuse(seat, intent)
        table = self.table
        if len(table) != STEP:
            return self._war_flip(seat)
        # The battle's flip (the hot path): one face-up card.
        up = table[2 + seat] = self.decks[seat].popleft()
        pending[seat] = False
        if pending[1 - seat]:   # the other seat has yet to flip
            return [{"type": "flip", "seat": seat, "up": up}]
        up0 = table[2]
        up1 = table[3]
        r0 = RANKS[up0]
        r1 = RANKS[up1]
        if r0 == r1:
            events: list[Event] = [{"type": "flip", "seat": seat, "up": up}]
            self._start_war(events)
            return events
        winner = 0 if r0 > r1 else 1
        if self._played:   # W3 variant: the winner's card first
            pile = [up0, up1] if r0 > r1 else [up1, up0]
        else:
            pile = [up0, up1]
            self.rng.shuffle(pile)
        deck = self.decks[winner]
        deck.extend(pile)
        battle = self.battle
        self.last = (battle, winner, table)
        events = [{"type": "flip", "seat": seat, "up": up},
                  {"type": "battle", "battle": battle, "winner": winner}]   # 2 cards, no war
        if len(deck) == DECK_SIZE or battle >= self._cap:
            self._game_end(winner, events)
        else:
            self.battle = battle + 1
            self.table = [None, None, None, None]
            pending[0] = pending[1] = True
        return events

    def _refuse(self, seat: int, intent: Mapping[str, Any]) -> NoReturn:
        """Raise the error that says why ``apply(seat, intent)`` is refused."""
        if self._outcome is not None:
            raise GameOver("the game is over", rule="W5")
        if isinstance(seat, bool) or seat not in SEATS:
            raise IllegalIntent(f"no seat {seat!r} in War (seats are 0 and 1)", rule="W1")
        if not self.pending[seat]:
            raise NotYourTurn(f"seat {seat} has nothing to flip now", rule="W6")
        from_wire(intent)  # raises: the intent is not a flip (W6)
        raise AssertionError(f"seat {seat} may flip, yet {intent!r} was refused")

    def _war_flip(self, seat: int) -> list[Event]:
        """A flip in a war step: face down then face up, or one card face up (W2, W4)."""
        deck = self.decks[seat]
        base = len(self.table) - STEP
        down = None
        if len(deck) > 1:
            down = self.table[base + seat] = deck.popleft()
        up = self.table[base + 2 + seat] = deck.popleft()
        self.pending[seat] = False
        events: list[Event] = [{"type": "flip", "seat": seat, "up": up}]
        if down is not None:
            events[0]["down"] = down
        if not self.pending[1 - seat]:
            self._resolve_war(events)
        return events

    def face_up(self, seat: int) -> int | None:
        """The face-up card ``seat`` competes with: its latest this battle (W4), or None."""
        table = self.table
        for i in range(len(table) - STEP + 2 + seat, -1, -STEP):
            if table[i] is not None:
                return table[i]
        return None

    def _resolve_war(self, events: list[Event]) -> None:
        """Compare the latest face-up cards after a war step (W2, W4 stand)."""
        up0 = self.face_up(0)
        up1 = self.face_up(1)
        assert up0 is not None and up1 is not None
        r0 = RANKS[up0]
        r1 = RANKS[up1]
        if r0 == r1:
            self._start_war(events)
            return
        winner = 0 if r0 > r1 else 1
        table = self.table
        if self._played:   # W3: in table order, the winner's card first at each placing
            loser = 1 - winner
            pile = []
            for base in range(0, len(table), STEP):
                for i in (base + winner, base + loser, base + 2 + winner, base + 2 + loser):
                    if table[i] is not None:
                        pile.append(table[i])
        else:
            pile = [card for card in table if card is not None]
            self.rng.shuffle(pile)
        deck = self.decks[winner]
        deck.extend(pile)
        battle = self.battle
        events.append({"type": "battle", "battle": battle, "winner": winner,
                       "cards": len(pile), "wars": len(table) // STEP - 1})
        self.last = (battle, winner, table)
        if len(deck) == DECK_SIZE or battle >= self._cap:
            self._game_end(winner, events)
        else:
            self.battle = battle + 1
            self.table = [None, None, None, None]
            self.pending[0] = self.pending[1] = True

    def _start_war(self, events: list[Event]) -> None:
        """Equal ranks: a war step follows, or the game ends for want of cards (W2, W4)."""
        self.wars += 1
        n0 = len(self.decks[0])
        n1 = len(self.decks[1])
        events.append({"type": "war", "battle": self.battle, "step": len(self.table) // STEP})
        if self._lose:
            short0, short1 = n0 < 2, n1 < 2
            if short0 or short1:
                winner = None if short0 and short1 else (1 if short0 else 0)
                self._end(winner, Reason.SHORT_WAR, events)
                return
        elif n0 == 0 and n1 == 0:
            self._end(None, Reason.EXHAUSTED, events)
            return
        self.table.extend((None, None, None, None))
        self.pending[0] = n0 > 0
        self.pending[1] = n1 > 0

    def _game_end(self, winner: int, events: list[Event]) -> None:
        """After a battle won by ``winner``: it wins if it holds all 52 cards; else the
        cap was reached and more cards wins, equal is a draw (W5)."""
        self.table = []
        if len(self.decks[winner]) == DECK_SIZE:
            self._end(winner, Reason.ALL_CARDS, events)
            return
        n0 = len(self.decks[0])
        n1 = len(self.decks[1])
        self._end(None if n0 == n1 else (0 if n0 > n1 else 1), Reason.CAP, events)

    def _end(self, winner: int | None, reason: Reason, events: list[Event]) -> None:
        self._outcome = Outcome(winner, reason)
        self.pending[0] = self.pending[1] = False
        events.append({"type": "game_over", "winner": winner, "reason": reason.value})

    def resign(self, seat: int) -> list[Event]:
        """``seat`` resigns at once; the other seat wins (R0.4).

        Raises:
            GameOver: the game has already ended.
            IllegalIntent: ``seat`` is not 0 or 1.
        """
        return self.forfeit(seat, Reason.RESIGN)

    def forfeit(self, seat: int, reason: str) -> list[Event]:
        """``seat`` loses at once for ``reason`` (timeouts, abandonment); the other wins.

        Raises:
            GameOver: the game has already ended.
            IllegalIntent: ``seat`` is not 0 or 1.
            ValueError: ``reason`` is not a :class:`~engine.core.Reason` value.
        """
        if self._outcome is not None:
            raise GameOver("the game is over", rule="R0.4")
        if isinstance(seat, bool) or seat not in SEATS:
            raise IllegalIntent(f"no seat {seat!r} in War (seats are 0 and 1)", rule="R0.4")
        why = Reason(reason)
        events: list[Event] = [{"type": "resign" if why is Reason.RESIGN else "forfeit",
                                "seat": seat, "reason": why.value}]
        self._end(1 - seat, why, events)
        return events

    @property
    def battles(self) -> int:
        """Battles resolved so far: the current one counts once its pile has gone."""
        if self._outcome is not None and not self.table:   # a battle ended the game
            return self.battle
        return self.battle - 1

    def outcome(self) -> Outcome | None:
        """The result once the game has ended, else None."""
        return self._outcome

    # ---------------------------------------------------------------- copies

    def table_cards(self) -> list[int]:
        """Every card on the table now (any order); for checks and tools."""
        return [card for card in self.table if card is not None]

    def digest(self) -> str:
        """SHA-256 hex over the whole state: options, decks, table, counters, RNG state."""
        return hashlib.sha256(repr(_FIELDS.digest_parts(self)).encode()
                              + rng_fingerprint(self.rng)).hexdigest()

    def journal_digest(self) -> str:
        """Version 2 of the digest, what the server journals: ``"2:"`` and the SHA-256
        hex of a byte string that fixes the same fields as :meth:`digest` (which
        stays, for the rows journaled before, and reads them by ``repr``):

        * ``repr((seed, sorted(options.items())))``, UTF-8 (hashed once per state);
        * ``>BBBBBIII``: the two deck sizes, the table's and the last battle's table
          lengths (0: no last battle), ``pending`` as bits (seat 0 = 1), the battle
          number, ``wars``, and ``2 * last battle number + its winner``;
        * the decks (one byte a card id, top first), the table, the last battle's
          table (a card id a byte, 255 for an empty slot), the generator's
          fingerprint (:func:`engine.core.rng_fingerprint`);
        * once over: ``repr((winner, reason))``, UTF-8.

        About half the time of :meth:`digest` (no ``repr`` of 52 card ids).
        """
        d0, d1 = self.decks
        table = self.table
        last = self.last
        p0, p1 = self.pending
        if last is None:
            number = winner = 0
            last_table: list[int | None] | tuple[()] = ()
        else:
            number, winner, last_table = last
        head = self._digest_head_hash()
        digest = head.copy()
        digest.update(_DIGEST_HEADER.pack(len(d0), len(d1), len(table), len(last_table),
                                          p0 + 2 * p1, self.battle, self.wars,
                                          2 * number + winner))
        digest.update(bytes(d0) + bytes(d1) + bytes(map(_SLOT_BYTE, table))
                      + bytes(map(_SLOT_BYTE, last_table)) + rng_fingerprint(self.rng))
        outcome = self._outcome
        if outcome is not None:
            digest.update(repr((outcome.winner, outcome.reason.value)).encode())
        return DIGEST_V2 + digest.hexdigest()

    def clone(self) -> WarState:
        """An independent deep copy (the generator included)."""
        return _FIELDS.copy(self)
