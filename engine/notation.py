"""The one notation people read: cards, numbering, intents, events and end reasons in words.

Pure functions over wire values (card strings such as ``"10H"``, projected
events, intents, outcome reasons), shared by the terminal client's board and log,
``cardserver replay`` and the replay page, so a card reads the same everywhere
(``10♥``, or ``10H`` without glyphs) and every array, hand card and seat a
player reads is numbered from 1 (the wire numbers them from 0).

Nothing here decides what is legal: an intent is only put into words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
#: Suit letter -> glyph.
SUIT_GLYPHS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
RED_SUITS = frozenset("DH")
BACK = "back"

#: Outcome reasons in words: (game or "" for every game, reason) -> what happened.
REASONS: dict[tuple[str, str], str] = {
    ("war", "all_cards"): "took all 52 cards",
    ("war", "cap"): "the battle cap was reached: more cards wins",
    ("war", "exhausted"): "both ran out of cards in the same war",
    ("war", "short_war"): "not enough cards for a war (short war loses)",
    ("datastructures", "three_arrays"): "closed a third array",
    ("datastructures", "cap"): "the turn cap was reached: more closed arrays wins, "
                               "then more cards in open arrays",
    ("datastructures", "stuck"): "the game could not progress (20 turns with no play "
                                 "and no cards left to draw): scored as at the cap",
    ("", "resign"): "the other player resigned",
    ("", "timeout"): "the other player's turn timer ran out too many times in a row",
    ("", "abandoned"): "the other player left and did not come back in time",
}


def split_card(text: Any) -> tuple[str, str] | None:
    """``"10H"`` -> ``("10", "H")``; None for anything that is not a face-up card."""
    if not isinstance(text, str) or len(text) < 2:
        return None
    rank, suit = text[:-1].upper(), text[-1].upper()
    if rank not in RANKS or suit not in SUIT_GLYPHS:
        return None
    return rank, suit


def is_red(text: Any) -> bool:
    """True for a heart or a diamond."""
    parts = split_card(text)
    return parts is not None and parts[1] in RED_SUITS


def card(text: Any, *, glyphs: bool = True) -> str:
    """A card as people read it: ``"10♥"`` (``"10H"`` without glyphs).

    A face-down card (``"back"``) is ``"▒▒"`` (``"##"``); anything unreadable is
    ``"??"`` rather than an error, so a surprising value never breaks a screen.
    """
    if text == BACK:
        return "\u2592\u2592" if glyphs else "##"
    parts = split_card(text)
    if parts is None:
        return "??"
    return parts[0] + (SUIT_GLYPHS[parts[1]] if glyphs else parts[1])


def cards(texts: Any, *, glyphs: bool = True) -> str:
    """Several cards, space separated (``"7♣ 8♦"``); ``"-"`` for none."""
    if not isinstance(texts, Sequence) or isinstance(texts, str) or not texts:
        return "-"
    return " ".join(card(t, glyphs=glyphs) for t in texts)


def number(index: Any) -> str:
    """A wire index (from 0) as people count (from 1); ``"?"`` for a non-integer."""
    return str(index + 1) if isinstance(index, int) and not isinstance(index, bool) else "?"


def array_name(index: Any) -> str:
    """``0`` -> ``"array 1"``."""
    return f"array {number(index)}"


def seat_name(seat: Any, names: Mapping[int, str] | None = None) -> str:
    """A seat's player name, or ``"seat 1"`` / ``"seat 2"`` (seats are counted from 1)."""
    if names and isinstance(seat, int) and names.get(seat):
        return str(names[seat])
    return f"seat {number(seat)}"


def reason_words(game: str | None, reason: Any) -> str:
    """An outcome reason in words (``"all_cards"`` -> ``"took all 52 cards"``).

    An unknown reason is shown with its underscores as spaces.
    """
    key = str(reason or "")
    return REASONS.get((game or "", key)) or REASONS.get(("", key)) or key.replace("_", " ")


def result_words(game: str | None, result: Mapping[str, Any] | None, me: int | None,
                 names: Mapping[int, str] | None = None) -> str:
    """``"you win: closed a third array"``, ``"bob wins: ..."``, ``"a draw: ..."``."""
    if not result:
        return "not finished"
    winner = result.get("winner")
    why = reason_words(game, result.get("reason"))
    if winner is None:
        return f"a draw: {why}"
    who = "you win" if winner == me else f"{seat_name(winner, names)} wins"
    return f"{who}: {why}"


#: Who played a journal row, when it was not the seat's own choice.
BY_WORDS = {"timer": "the turn timer ran out", "auto": "auto-flip", "bot": "a bot",
            "fast_forward": "fast-forward", "grace": "the grace period ran out"}


class Speaker:
    """Puts intents and projected events into words for one reader.

    Args:
        me: the reader's seat (None: a spectator, who reads every seat by name).
        names: seat -> player name.
        glyphs: suit glyphs (``♥``) or letters (``H``).
        game: the game's name, for its own end reasons.
    """

    def __init__(self, me: int | None = None, names: Mapping[int, str] | None = None,
                 *, glyphs: bool = True, game: str | None = None) -> None:
        self.game = game
        self.me = me
        self.names = dict(names or {})
        self.glyphs = glyphs

    # -- pieces --------------------------------------------------------------

    def card(self, text: Any) -> str:
        """One card in this reader's notation."""
        return card(text, glyphs=self.glyphs)

    def who(self, seat: Any) -> str:
        """``"you"`` for the reader's seat, else the seat's name."""
        if not isinstance(seat, int):
            return "someone"
        if self.me is not None and seat == self.me:
            return "you"
        return seat_name(seat, self.names)

    def _s(self, actor: str) -> str:
        return "" if actor == "you" else "s"

    def _whose_stack(self, owner: Any) -> str:
        if self.me is not None and owner == self.me:
            return "your stack"
        if isinstance(owner, int):
            return f"{seat_name(owner, self.names)}'s stack"
        return "a stack"

    def _event_card(self, ev: Mapping[str, Any], *keys: str) -> str:
        for key in keys:
            if isinstance(ev.get(key), str):
                return self.card(ev[key])
        return "a card"

    # -- intents ---------------------------------------------------------------

    def intent(self, intent: Mapping[str, Any], hand: Sequence[str] | None = None) -> str:
        """An intent (an element of ``legal``, or a journal row's) in words, numbering
        hand cards and arrays from 1; ``hand`` names the card when it is known."""

        def hand_card(i: Any) -> str:
            name = f"hand card {number(i)}"
            if hand is not None and isinstance(i, int) and 0 <= i < len(hand):
                name += f" ({self.card(hand[i])})"
            return name

        kind = intent.get("type")
        if kind == "play":
            where = array_name(intent.get("array"))
            src = intent.get("src")
            if src == "hand":
                return f"play {hand_card(intent.get('index'))} onto {where}"
            if src == "queue":
                return f"play the queue head onto {where}"
            if src == "stack":
                owner = intent.get("stack")
                whose = self._whose_stack(owner) if self.me is not None else \
                    f"{seat_name(owner, self.names)}'s stack"
                return f"play the top of {whose} onto {where}"
        if kind == "mulligan":
            return f"mulligan: keep {hand_card(intent.get('keep'))}, discard the rest"
        if kind == "end_phase":
            return "end phase 1"
        if kind == "stack":
            return f"put {hand_card(intent.get('index'))} on their stack"
        if kind == "enqueue":
            return f"enqueue {hand_card(intent.get('index'))} at the queue tail"
        if kind == "end_turn":
            return "end the turn"
        if kind == "flip":
            return "flip"
        fields = ", ".join(f"{k}={v}" for k, v in intent.items() if k != "type")
        return f"{kind} {fields}".strip()

    def move(self, move: Mapping[str, Any]) -> str:
        """One journal row of a record: ``12. alice: play hand card 2 onto array 1``,
        with who played it when it was not the seat itself (``[auto-flip]``)."""
        who = self.who(move.get("seat"))
        kind = move.get("kind")
        if kind == "intent":
            what = self.intent(move.get("intent") or {})
        elif kind == "resign":
            what = "resigns"
        elif kind == "forfeit":
            what = f"forfeits ({reason_words(None, move.get('reason'))})"
        else:
            what = str(kind)
        by = BY_WORDS.get(str(move.get("by")))
        return f"{move.get('seq')}. {who}: {what}" + (f" [{by}]" if by else "")

    # -- events ----------------------------------------------------------------

    def event(self, ev: Mapping[str, Any]) -> str:
        """One projected event as one line (an unknown kind: its type and fields)."""
        kind = ev.get("type", "?")
        actor = self.who(ev.get("seat"))
        s = self._s(actor)
        if kind == "play":
            src = ev.get("src")
            source = {"hand": "the hand", "queue": "the queue head"}.get(str(src)) or \
                (self._whose_stack(ev.get("stack")) if src == "stack" else "somewhere")
            return (f"{actor} took {self._event_card(ev, 'card')} from {source} "
                    f"onto {array_name(ev.get('array'))}")
        if kind == "close":
            n = ev.get("closed")
            return f"{actor} closed {array_name(ev.get('array'))}" + \
                (f" ({n} of 3 closed)" if n is not None else "")
        if kind == "mulligan":
            shown = cards(ev.get("hand"), glyphs=self.glyphs)
            kept = ev.get("card")
            tail = f", kept {self.card(kept)}" if isinstance(kept, str) else ""
            return f"{actor} mulligan{s}: showed {shown}{tail}"
        if kind == "phase":
            return f"{actor} end{s} phase 1"
        if kind == "discard":
            return f"the queue head {self._event_card(ev, 'card')} goes to the discard pile"
        if kind == "stack":
            whose = "your" if actor == "you" else "their"
            return f"{actor} put{s} {self._event_card(ev, 'card')} on {whose} stack"
        if kind == "enqueue":
            return f"{actor} enqueue{s} {self._event_card(ev, 'card')} at the queue tail"
        if kind == "end_turn":
            return f"{actor} end{s} the turn"
        if kind == "draw":
            n = ev.get("count")
            got = ev.get("cards")
            shown = f": {cards(got, glyphs=self.glyphs)}" if isinstance(got, list) else ""
            return f"{actor} draw{s} {n if n is not None else 'some'} card(s){shown}"
        if kind == "queue":
            return f"the queue is refilled: {cards(ev.get('cards'), glyphs=self.glyphs)}"
        if kind == "recycle":
            return (f"closed arrays ({ev.get('cards')} cards) and the discard pile "
                    f"({ev.get('discard')}) are shuffled into the deck")
        if kind == "reshuffle":
            return "the discard pile is shuffled into the empty deck"
        if kind == "turn":
            turn = ev.get("turn", "")
            return f"turn {turn}: your move" if actor == "you" else f"turn {turn}: {actor} to move"
        if kind == "flip":
            down = " (one face down first)" if ev.get("down") else ""
            return f"{actor} flip{s} {self._event_card(ev, 'up', 'card')}{down}"
        if kind == "battle":
            winner = self.who(ev.get("winner"))
            count = f" {ev['cards']} cards" if isinstance(ev.get("cards"), int) else ""
            wars = ev.get("wars")
            after = f" after {wars} war(s)" if isinstance(wars, int) and wars else ""
            return f"battle {ev.get('battle', '')}: {winner} take{self._s(winner)}{count}{after}"
        if kind == "war":
            return "war! each places a card face down, then one face up"
        if kind == "resign":
            return f"{actor} resign{s}"
        if kind == "forfeit":
            reason = ev.get("reason")
            why = {"timeout": "the turn timer ran out too many times in a row",
                   "abandoned": "gone longer than the grace period"}.get(
                str(reason), str(reason or "no reason given").replace("_", " "))
            return f"{actor} forfeit{s} ({why})"
        if kind == "game_over":
            return f"game over: {result_words(self.game, ev, self.me, self.names)}"
        fields = ", ".join(f"{k}={v}" for k, v in ev.items() if k != "type")
        return f"{kind}: {fields}" if fields else str(kind)

    def events(self, events: Sequence[Any], *, game_over: bool = False) -> list[str]:
        """Every map in ``events`` as one line each, in order; ``game_over`` events are
        left out unless asked for (screens say the result in their own line)."""
        return [self.event(ev) for ev in events
                if isinstance(ev, Mapping) and (game_over or ev.get("type") != "game_over")]
