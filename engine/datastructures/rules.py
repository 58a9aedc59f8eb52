"""One play-through of Data Structures: setup, legal intents, and their effects.

The rules are the seed text (``shared/seeds/data-structures-card-game.txt``) as
decided by rulings D1..D13 and R0.1..R0.4; docs/rules.md explains every one and
names its test. Cards are physical ids (:mod:`engine.datastructures.deck`);
they become wire strings only in events and in the projection
(:mod:`engine.datastructures.observer`), which is the only way out of this state.

Piles, all lists of physical ids:

- ``deck``: top is the *end* of the list; secret order (D10).
- ``discard``: public, bottom first.
- ``recycle``: the face-down cards of arrays closed this turn, waiting for
  phase 3 (D4, D8). It is non-empty exactly when an array closed this turn.
- ``queue``: head first, at most 5 cards.
- ``stacks[s]``: bottom first, top last.
- ``hands[s]``: in the order the cards were drawn; intents name an index.
- ``arrays[s][a]``: the cards of array ``a`` in play order; ``closed[s][a]``
  marks a closed slot (D4), whose list stays empty.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

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
from engine.datastructures.arrays import fits, plays, why_not
from engine.datastructures.deck import N_CARDS, N_VALUES, NAME, names
from engine.datastructures.intents import (
    END_PHASE,
    END_TURN,
    HAND,
    N_ARRAYS,
    PHASE_OF,
    QUEUE,
    DSIntent,
    EndPhase,
    Enqueue,
    Mulligan,
    Play,
    StackCard,
    enqueues,
    from_wire,
    mulligans,
    stack_cards,
)
from engine.fields import Field, FieldTable

#: Cards in a full hand and a full queue (seed; D5, D8, D9).
HAND_SIZE = 5
QUEUE_SIZE = 5
#: Cards in a complete array (D2).
ARRAY_LEN = N_VALUES
#: Consecutive idle turns (with deck and discard empty) that end a stuck game (D13).
STUCK_TURNS = 20

PLAY = "play"
DISCARD = "discard"
OVER = "over"



#: Every field of a Data Structures state, in digest order: clone, digest and
#: construction (:meth:`DSState.setup`, :func:`~engine.datastructures.determinize`)
#: derive from this table.
_FIELDS = FieldTable([
    Field("seed"),
    Field("options", digest="sorted({}.items())"),
    Field("deck", copy="{}[:]"),
    Field("discard", copy="{}[:]"),
    Field("recycle", copy="{}[:]"),
    Field("queue", copy="{}[:]"),
    Field("stacks", copy="[{}[0][:], {}[1][:]]"),
    Field("hands", copy="[{}[0][:], {}[1][:]]"),
    Field("arrays", copy="[[a[:] for a in side] for side in {}]"),
    Field("closed", copy="[side[:] for side in {}]"),
    Field("current"),
    Field("phase"),
    Field("turn"),
    Field("played"),
    Field("mulliganed"),
    Field("stacked"),
    Field("idle_turns"),
    Field("last_mulligan"),   # never mutated, only replaced
    Field("result", digest="None if {} is None else {}.to_dict()"),
    Field("game", digest=None),
    Field("cap", digest=None),   # options["cap"], unpacked
    # The generator, shared copy-on-write between clones (see DSState.rng); it is
    # digested as its fingerprint, cached until the next draw.
    Field("_rng", digest=None),
    Field("_rng_shared", digest=None),
    Field("_rng_print", digest=None),
    # the hash of seed and options that journal_digest starts from (None: not yet)
    Field("_digest_head", digest=None),
    # (last_mulligan, result, {phase: the repr of the three as bytes}) as journal_digest
    # last made them (shared by clones: the objects it is keyed by are never mutated)
    Field("_digest_tail", digest=None),
    # (last_mulligan, the copy of it build_views last shared among the views)
    Field("_view_mulligan", digest=None),
    # what build_views keeps of the last views it made, pile by pile (its own to each
    # state: a clone starts without, since the two go their own ways)
    Field("_view_kept", copy="None", digest=None),
])

#: journal_digest's fixed-size part after the pile lengths
_DIGEST_COUNTERS = struct.Struct(">BIBBBI")


class DSState(State):
    """A Data Structures match. Mutable; touched by one owner at a time.

    Its fields are declared once, in ``_FIELDS``; the only randomness is
    :attr:`rng`.
    """

    game: Game
    seed: int
    options: dict[str, Any]
    cap: int
    deck: list[int]
    discard: list[int]
    recycle: list[int]
    queue: list[int]
    stacks: list[list[int]]
    hands: list[list[int]]
    arrays: list[list[list[int]]]
    closed: list[list[bool]]
    current: int
    phase: str
    turn: int
    played: bool
    mulliganed: bool
    stacked: bool
    idle_turns: int
    last_mulligan: dict[str, Any] | None
    result: Outcome | None
    _rng: MatchRng
    _rng_shared: bool
    _rng_print: bytes | None  # rng_fingerprint cache; reset before every draw
    _view_mulligan: tuple[dict[str, Any] | None, dict[str, Any] | None] | None
    _view_kept: list[tuple[Any, Any, Any]] | None

    # ------------------------------------------------------------------ setup

    @classmethod
    def from_fields(cls, rng: MatchRng, **fields: Any) -> DSState:
        """A state with the given fields (every declared one but the generator's) and
        ``rng`` as its own generator.

        Raises:
            ValueError: a declared field is missing, or an unknown one is given.
        """
        return _FIELDS.build(cls, {**fields, "_rng": rng, "_rng_shared": False,
                                   "_rng_print": None, "_digest_head": None,
                                   "_digest_tail": None, "_view_mulligan": None,
                                   "_view_kept": None})

    @classmethod
    def setup(cls, game: Game, seed: int, options: dict[str, Any],
              rng: MatchRng | None = None) -> DSState:
        """Shuffle the 104 cards, deal (seed "Setup") and pick the first player (D11).

        Deal order, from the top of the shuffled deck: 5 queue cards, one stack
        card for seat 0 then seat 1, five hand cards for seat 0 then seat 1.
        Then ``randbelow(2)`` of the match's stream picks who starts. ``rng`` is
        that stream, fresh (None: :func:`engine.core.new_rng` of ``seed``).
        """
        rng = new_rng(seed) if rng is None else rng
        deck = list(range(N_CARDS))
        rng.shuffle(deck)
        queue = [deck.pop() for _ in range(QUEUE_SIZE)]
        stacks = [[deck.pop()], [deck.pop()]]
        hands = [[deck.pop() for _ in range(HAND_SIZE)] for _ in range(2)]
        return cls.from_fields(
            rng, game=game, seed=seed, options=options, cap=options["cap"],
            deck=deck, discard=[], recycle=[], queue=queue, stacks=stacks, hands=hands,
            arrays=[[[] for _ in range(N_ARRAYS)] for _ in range(2)],
            closed=[[False] * N_ARRAYS for _ in range(2)],
            current=rng.randbelow(2), phase=PLAY, turn=1, played=False, mulliganed=False,
            stacked=False, idle_turns=0, last_mulligan=None, result=None)

    # ------------------------------------------------------------ generator

    @property
    def rng(self) -> MatchRng:
        """The match generator, the state's only randomness (``shuffle``, ``randbelow``).

        Copied first if a clone still shares it; reading it resets the digest's
        cached fingerprint, since the caller is about to draw from it.
        """
        if self._rng_shared:
            self._rng = copy_rng(self._rng)
            self._rng_shared = False
        self._rng_print = None
        return self._rng

    def _rng_fingerprint(self) -> bytes:
        """The generator's state as bytes, cached until the next draw (see :attr:`rng`)."""
        if self._rng_print is None:
            self._rng_print = rng_fingerprint(self._rng)
        return self._rng_print

    def clone(self) -> DSState:
        """An independent copy. The generator is shared copy-on-write, so a clone
        costs a few list copies until one side shuffles."""
        other = _FIELDS.copy(self)
        self._rng_shared = other._rng_shared = True
        return other

    def digest(self) -> str:
        """SHA-256 hex of every pile, every flag, the options and the generator state."""
        return hashlib.sha256(repr(_FIELDS.digest_parts(self)).encode()
                              + self._rng_fingerprint()).hexdigest()

    def journal_digest(self) -> str:
        """Version 2 of the digest, what the server journals: ``"2:"`` and the SHA-256
        hex of a byte string that fixes the same fields as :meth:`digest` (which
        stays, for the rows journaled before):

        * ``repr((seed, sorted(options.items())))``, UTF-8 (hashed once per state);
        * the lengths of the piles, one byte each, in this order: deck, discard,
          recycle, queue, both stacks, both hands, seat 0's arrays, seat 1's;
        * those piles' card ids, one byte each, in the same order;
        * ``closed``, seat 0 first, one byte a flag;
        * ``>BIBBBI``: current, turn, played, mulliganed, stacked, idle_turns;
        * the generator's fingerprint, then
          ``repr((phase, last_mulligan, result.to_dict() or None))``, UTF-8.

        About a third of the time of :meth:`digest`.
        """
        (s0, s1), (h0, h1), ((a00, a01, a02), (a10, a11, a12)) = (
            self.stacks, self.hands, self.arrays)
        deck, discard, recycle, queue = self.deck, self.discard, self.recycle, self.queue
        head = self._digest_head_hash()
        closed = self.closed
        result, mulligan, phase = self.result, self.last_mulligan, self.phase
        # last_mulligan and result are never mutated, only replaced: the repr of each
        # phase with them is kept until one is (the phase turns every few intents)
        tail = self._digest_tail
        if tail is None or tail[0] is not mulligan or tail[1] is not result:
            tail = self._digest_tail = (mulligan, result, {})
        text = tail[2].get(phase)
        if text is None:
            text = tail[2][phase] = repr(
                (phase, mulligan, None if result is None else result.to_dict())).encode()
        digest = head.copy()
        # one list of every length and card id, one bytes of it (a third cheaper
        # than a bytes object per pile joined)
        digest.update(bytes([len(deck), len(discard), len(recycle), len(queue), len(s0),
                             len(s1), len(h0), len(h1), len(a00), len(a01), len(a02),
                             len(a10), len(a11), len(a12), *deck, *discard, *recycle,
                             *queue, *s0, *s1, *h0, *h1, *a00, *a01, *a02, *a10, *a11,
                             *a12, *closed[0], *closed[1]])
                      + _DIGEST_COUNTERS.pack(self.current, self.turn, self.played,
                                              self.mulliganed, self.stacked, self.idle_turns)
                      + self._rng_fingerprint() + text)
        return DIGEST_V2 + digest.hexdigest()

    # ------------------------------------------------------------ queries

    def to_move(self) -> tuple[int, ...]:
        """``(current,)`` while the game runs (one seat always has a legal intent), else ``()``."""
        return () if self.result is not None else (self.current,)

    def outcome(self) -> Outcome | None:
        """The result once the game has ended, else None."""
        return self.result

    def stack_owed(self) -> bool:
        """True in phase 2 while the mandatory stack card is still due (D7)."""
        return self.phase == DISCARD and not self.stacked and bool(self.hands[self.current])

    def _plays(self, seat: int) -> list[Play]:
        """Every phase-1 play for ``seat`` (:func:`engine.datastructures.arrays.plays`)."""
        return plays(self.arrays[seat], self.closed[seat], self.hands[seat], self.queue,
                     self.stacks)

    def legal_moves(self, seat: int) -> list[DSIntent]:
        """Every intent value :meth:`apply_move` accepts from ``seat`` now, in the order
        of :meth:`legal`; ``[]`` when it is not ``seat``'s move or the game is over."""
        if self.result is not None or seat != self.current:
            return []
        hand = self.hands[seat]
        if self.phase == PLAY:
            out: list[DSIntent] = list(self._plays(seat))
            if not out and not self.played and len(hand) >= 2:
                out = mulligans(len(hand))
            out.append(END_PHASE)
            return out
        if not self.stacked and hand:
            return stack_cards(len(hand))
        moves: list[DSIntent] = []
        if hand and len(self.queue) < QUEUE_SIZE:
            moves = enqueues(len(hand))
        moves.append(END_TURN)
        return moves

    def legal(self, seat: int) -> list[Intent]:
        """Every intent :meth:`apply` accepts from ``seat`` now; ``[]`` when it is not
        ``seat``'s move or the game is over. Fresh dicts on every call."""
        if self.result is not None or seat != self.current:
            return []   # the other seat's list, at every change: no list of values to map
        return [move.to_wire() for move in self.legal_moves(seat)]

    def default_intent(self, seat: int) -> Intent | None:
        """Turn timeout: phase 1 ends the phase; phase 2 stacks hand card 0 while the
        stack card is owed, else ends the turn. None if ``seat`` is not to move."""
        if self.result is not None or seat != self.current:
            return None
        if self.phase == PLAY:
            return END_PHASE.to_wire()
        if self.stack_owed():
            return StackCard(0).to_wire()
        return END_TURN.to_wire()

    # ------------------------------------------------------------ intents

    def _check_seat(self, seat: Any) -> None:
        if type(seat) is not int or seat not in (0, 1):
            raise IllegalIntent(f"no seat {seat!r} in datastructures (seats are 0 and 1)")

    def _check_mover(self, seat: int) -> None:
        self._check_seat(seat)
        if self.result is not None:
            raise GameOver(f"the game is over ({self.result.reason})")
        if seat != self.current:
            raise NotYourTurn(f"it is seat {self.current}'s turn, not seat {seat}'s")

    def apply(self, seat: int, intent: Mapping[str, Any]) -> list[Event]:
        """Apply one wire intent of ``seat``; returns the raw events (they may name
        hidden cards: send only :meth:`project_events` of them).

        Raises:
            GameOver: the game has ended.
            NotYourTurn: ``seat`` is not the seat to move.
            IllegalIntent: anything not in :meth:`legal` (unknown type, missing or
                extra fields, bad index, a card that does not fit, wrong phase); the
                error's ``rule`` names the ruling.
        """
        if (type(seat) is not int or seat not in (0, 1) or self.result is not None
                or seat != self.current):
            self._check_mover(seat)   # raises (inline: two calls an intent)
        if type(intent) is not dict and not isinstance(intent, Mapping):
            raise IllegalIntent(f"an intent is a map, got {type(intent).__name__}")
        kind = intent.get("type")
        phase = PHASE_OF.get(kind)  # type: ignore[arg-type]
        if phase == DISCARD and self.phase == PLAY:
            raise IllegalIntent(f"{kind!r} belongs to phase 2; end phase 1 first", rule="D7")
        if phase == PLAY and self.phase == DISCARD:
            raise IllegalIntent(f"{kind!r} belongs to phase 1, which has ended", rule="D3")
        if kind == "stack" or kind == "enqueue":
            self._check_phase2(kind)  # the turn's own limits come before the intent's shape
        try:
            move = from_wire(intent)
            if isinstance(move, Mulligan) and move.keep >= len(self.hands[seat]):
                raise IllegalIntent("no such card to keep")
        except IllegalIntent:
            if kind != "mulligan":
                raise
            raise IllegalIntent(f"not a mulligan intent for a hand of {len(self.hands[seat])}: "
                                f"{dict(intent)!r}", rule="D6") from None
        return self._apply(seat, move)

    def apply_move(self, seat: int, move: DSIntent) -> list[Event]:
        """:meth:`apply` for an intent value (bots and rollouts skip the wire form).

        Raises:
            GameOver, NotYourTurn, IllegalIntent: as :meth:`apply`.
        """
        self._check_mover(seat)
        if PHASE_OF[move.TYPE] != self.phase:
            return self.apply(seat, move.to_wire())  # the refusal, worded as for the wire
        return self._apply(seat, move)

    def _apply(self, seat: int, move: DSIntent) -> list[Event]:
        """Apply a well-formed intent of the seat to move, in the phase it belongs to."""
        if isinstance(move, Play):
            return self._apply_play(seat, move)
        if isinstance(move, StackCard):
            return self._apply_stack(seat, move.index)
        if isinstance(move, Enqueue):
            return self._apply_enqueue(seat, move.index)
        if isinstance(move, Mulligan):
            return self._apply_mulligan(seat, move.keep)
        if isinstance(move, EndPhase):
            events: list[Event] = []
            self._enter_discard(seat, events)
            return events
        if self.stack_owed():
            raise IllegalIntent("put one hand card on your stack first", rule="D7")
        return self._end_turn(seat)

    def _apply_play(self, seat: int, move: Play) -> list[Event]:
        src = move.src
        event: Event = {"type": "play", "seat": seat, "src": src}
        if src == HAND:
            hand = self.hands[seat]
            if move.index is None or move.index >= len(hand):
                raise IllegalIntent(f"no card at hand index {move.index!r}", rule="D3")
            card = hand[move.index]
            event["index"] = move.index
        elif src == QUEUE:
            if not self.queue:
                raise IllegalIntent("the queue is empty", rule="D3")
            card = self.queue[0]
        else:
            s = move.stack
            if not self.stacks[s]:  # type: ignore[index]
                raise IllegalIntent(f"stack {s} is empty", rule="D3")
            card = self.stacks[s][-1]  # type: ignore[index]
            event["stack"] = s
        from_hand = src == HAND
        array = move.array
        if not fits(self.arrays[seat], self.closed[seat], card, array, from_hand):
            message, rule = why_not(self.arrays[seat], self.closed[seat], card, array)
            raise IllegalIntent(message, rule=rule)
        # The move itself.
        if from_hand:
            self.hands[seat].pop(event["index"])
        elif src == QUEUE:
            self.queue.pop(0)
        else:
            self.stacks[event["stack"]].pop()
        arr = self.arrays[seat][array]
        arr.append(card)
        self.played = True
        event["card"] = NAME[card]
        event["array"] = array
        events: list[Event] = [event]
        if len(arr) == ARRAY_LEN:
            self._close(seat, array, events)
            if self.result is not None:
                return events
        if from_hand and not self.hands[seat]:
            self._draw_hand(seat, HAND_SIZE, events, "D5")
        if src == QUEUE and not self.queue:
            self._fill_queue(events, "D5")
        return events

    def _close(self, seat: int, array: int, events: list[Event]) -> None:
        """Close a complete array (D4): its cards go face down to ``recycle``."""
        arr = self.arrays[seat][array]
        self.recycle.extend(arr)
        arr.clear()
        self.closed[seat][array] = True
        count = sum(self.closed[seat])
        events.append({"type": "close", "seat": seat, "array": array, "closed": count})
        if count == N_ARRAYS:
            self._finish(Outcome(seat, Reason.THREE_ARRAYS), events)

    def _apply_mulligan(self, seat: int, keep: int) -> list[Event]:
        hand = self.hands[seat]
        if keep >= len(hand):
            raise IllegalIntent(f"not a mulligan intent for a hand of {len(hand)}: "
                                f"{Mulligan(keep).to_wire()!r}", rule="D6")
        if self.played:
            raise IllegalIntent("a mulligan comes before any play", rule="D6")
        if len(hand) < 2:
            raise IllegalIntent("a mulligan needs at least 2 cards in hand", rule="D6")
        if self._plays(seat):
            raise IllegalIntent("a mulligan needs a hand with no legal play", rule="D6")
        shown = names(hand)
        kept = hand[keep]
        thrown = hand[:keep] + hand[keep + 1:]
        self.discard.extend(thrown)
        hand[:] = [kept]
        self.mulliganed = True
        self.last_mulligan = {"seat": seat, "turn": self.turn, "hand": list(shown),
                              "keep": NAME[kept], "discarded": names(thrown)}
        events: list[Event] = [{"type": "mulligan", "seat": seat, "hand": shown, "keep": keep,
                                "card": NAME[kept], "discarded": names(thrown)}]
        self._enter_discard(seat, events)
        return events

    def _enter_discard(self, seat: int, events: list[Event]) -> None:
        """Phase 1 ends: phase 2 discards the queue head at once (D7)."""
        self.phase = DISCARD
        events.append({"type": "phase", "seat": seat, "phase": DISCARD})
        if self.queue:
            card = self.queue.pop(0)
            self.discard.append(card)
            events.append({"type": "discard", "seat": seat, "src": "queue", "card": NAME[card]})

    def _check_phase2(self, kind: str) -> None:
        """The turn's limits on a ``stack`` or ``enqueue`` intent (D7)."""
        if kind == "stack":
            if self.stacked:
                raise IllegalIntent("one stack card per turn, and it is placed", rule="D7")
            return
        if self.stack_owed():
            raise IllegalIntent("put one hand card on your stack first", rule="D7")
        if len(self.queue) >= QUEUE_SIZE:
            raise IllegalIntent("the queue is full", rule="D7")

    def _pop_hand(self, seat: int, index: int) -> int:
        """Take hand card ``index`` of ``seat`` for phase 2 (D7)."""
        hand = self.hands[seat]
        if index >= len(hand):
            raise IllegalIntent(f"no card at hand index {index!r}", rule="D7")
        return hand.pop(index)

    def _apply_stack(self, seat: int, index: int) -> list[Event]:
        self._check_phase2("stack")
        card = self._pop_hand(seat, index)
        self.stacks[seat].append(card)
        self.stacked = True
        return [{"type": "stack", "seat": seat, "index": index, "card": NAME[card]}]

    def _apply_enqueue(self, seat: int, index: int) -> list[Event]:
        self._check_phase2("enqueue")
        card = self._pop_hand(seat, index)
        self.queue.append(card)
        return [{"type": "enqueue", "seat": seat, "index": index, "card": NAME[card]}]

    def _end_turn(self, seat: int) -> list[Event]:
        """End of phase 2, then phase 3 (D8), the D12/D13 checks and the next turn (D9)."""
        events: list[Event] = [{"type": "end_turn", "seat": seat, "turn": self.turn}]
        if self.recycle:
            n_recycle, n_discard = len(self.recycle), len(self.discard)
            self.deck.extend(self.recycle)
            self.deck.extend(self.discard)
            self.recycle.clear()
            self.discard.clear()
            self.rng.shuffle(self.deck)
            events.append({"type": "recycle", "cards": n_recycle, "discard": n_discard,
                           "deck": len(self.deck)})
        self._fill_queue(events, "D8")
        self._draw_hand(seat, HAND_SIZE - len(self.hands[seat]), events, "D8")
        progress = self.played or self.mulliganed
        if progress or self.deck or self.discard:
            self.idle_turns = 0
        else:
            self.idle_turns += 1
        # A game that ends here keeps the number of its last turn.
        if self.turn >= self.cap:
            self._finish(self._score(Reason.CAP), events)
            return events
        if self.idle_turns >= STUCK_TURNS:
            self._finish(self._score(Reason.STUCK), events)
            return events
        self.turn += 1
        nxt = 1 - seat
        self.current = nxt
        self.phase = PLAY
        self.played = self.mulliganed = self.stacked = False
        events.append({"type": "turn", "seat": nxt, "turn": self.turn})
        self._draw_hand(nxt, HAND_SIZE - len(self.hands[nxt]), events, "D9")
        return events

    # ------------------------------------------------------------ drawing

    def _draw(self, n: int, events: list[Event]) -> list[int]:
        """Take up to ``n`` cards off the deck; an empty deck takes the discard pile
        in first (shuffled); with both empty, fewer cards come (D9)."""
        out: list[int] = []
        deck = self.deck
        while len(out) < n:
            if not deck:
                if not self.discard:
                    break
                deck.extend(self.discard)
                self.discard.clear()
                self.rng.shuffle(deck)
                events.append({"type": "reshuffle", "deck": len(deck)})
            out.append(deck.pop())
        return out

    def _draw_hand(self, seat: int, n: int, events: list[Event], rule: str) -> None:
        if n <= 0:
            return
        drawn = self._draw(n, events)
        if drawn:
            self.hands[seat].extend(drawn)
            events.append({"type": "draw", "seat": seat, "count": len(drawn),
                           "cards": names(drawn), "rule": rule})

    def _fill_queue(self, events: list[Event], rule: str) -> None:
        drawn = self._draw(QUEUE_SIZE - len(self.queue), events)
        if drawn:
            self.queue.extend(drawn)
            events.append({"type": "queue", "cards": names(drawn), "rule": rule})

    # ------------------------------------------------------------ ending

    def _score(self, reason: Reason) -> Outcome:
        """D12: more closed arrays wins, then more cards in open arrays, else a draw."""
        key = [(sum(self.closed[s]), sum(len(a) for a in self.arrays[s])) for s in (0, 1)]
        if key[0] == key[1]:
            return Outcome(None, reason)
        return Outcome(0 if key[0] > key[1] else 1, reason)

    def _finish(self, outcome: Outcome, events: list[Event]) -> None:
        self.result = outcome
        self.phase = OVER
        events.append({"type": "game_over", **outcome.to_dict()})

    def resign(self, seat: int) -> list[Event]:
        """R0.4: ``seat`` resigns at any moment; the other seat wins.

        Raises:
            IllegalIntent: not a seat. GameOver: the game has already ended.
        """
        return self.forfeit(seat, Reason.RESIGN)

    def forfeit(self, seat: int, reason: str) -> list[Event]:
        """``seat`` loses at once for ``reason`` (e.g. ``"timeout"``, ``"abandoned"``).

        Raises:
            IllegalIntent: not a seat. GameOver: the game has already ended.
            ValueError: ``reason`` is not a :class:`~engine.core.Reason` value.
        """
        self._check_seat(seat)
        if self.result is not None:
            raise GameOver(f"the game is over ({self.result.reason})")
        why = Reason(reason)
        events: list[Event] = [{"type": "resign" if why is Reason.RESIGN else "forfeit",
                                "seat": seat, "reason": why.value}]
        self._finish(Outcome(1 - seat, why), events)
        return events
