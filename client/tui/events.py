"""Projected events and presence changes in words, for the match log. Pure functions.

The server sends each seat its own projection of the events of a match
(``snapshot.events``); this module turns each into one readable line, such as
"opponent took Q from the queue head onto array 2". An event of a kind it does
not know is still shown, as its type and fields, never dropped and never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from client.tui.cards import card_plain


def who(seat: Any, me: int | None, names: Mapping[int, str]) -> str:
    """``"you"`` for the own seat, ``"opponent"`` for the other (with the name), or the
    seat's name for a spectator."""
    if not isinstance(seat, int):
        return "someone"
    name = names.get(seat, f"seat {seat}")
    if me is None:
        return name
    return "you" if seat == me else f"{name}"


def _card(ev: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = ev.get(key)
        if isinstance(value, str):
            return card_plain(value)
    return "a card"


def _array(ev: Mapping[str, Any]) -> str:
    a = ev.get("array")
    return f"array {a + 1}" if isinstance(a, int) else "an array"


def _source(ev: Mapping[str, Any], me: int | None, names: Mapping[int, str]) -> str:
    src = ev.get("src") or ev.get("source")
    if src == "hand":
        return "the hand"
    if src == "queue":
        return "the queue head"
    if src == "stack":
        owner = ev.get("stack")
        if owner == me:
            return "your stack"
        if isinstance(owner, int):
            return f"{names.get(owner, f'seat {owner}')}'s stack"
        return "a stack"
    return str(src) if src else "somewhere"


def describe_event(game: str, ev: Mapping[str, Any], me: int | None,
                   names: Mapping[int, str]) -> str:
    """One projected event as one line of text."""
    kind = ev.get("type", "?")
    actor = who(ev.get("seat"), me, names)
    verb_s = "" if actor == "you" else "s"
    if kind == "play":
        return (f"{actor} took {_card(ev, 'card')} from {_source(ev, me, names)} "
                f"onto {_array(ev)}")
    if kind == "close":
        n = ev.get("closed")
        return f"{actor} closed {_array(ev)}" + (f" ({n} of 3 closed)" if n is not None else "")
    if kind == "mulligan":
        hand = ev.get("hand")
        shown = " ".join(card_plain(c) for c in hand) if isinstance(hand, list) else "a hand"
        kept = ev.get("card")
        tail = f", kept {card_plain(kept)}" if isinstance(kept, str) else ""
        return f"{actor} mulligan{verb_s}: showed {shown}{tail}"
    if kind == "phase":
        return f"{actor} end{verb_s} phase 1"
    if kind == "discard":
        return f"queue head {_card(ev, 'card')} goes to the discard pile"
    if kind == "stack":
        whose = "your" if actor == "you" else "their"
        return f"{actor} put{verb_s} {_card(ev, 'card')} on {whose} stack"
    if kind == "enqueue":
        return f"{actor} enqueue{verb_s} {_card(ev, 'card')} at the queue tail"
    if kind == "end_turn":
        return f"{actor} end{verb_s} the turn"
    if kind == "draw":
        n = ev.get("count")
        cards = ev.get("cards")
        shown = ": " + " ".join(card_plain(c) for c in cards) if isinstance(cards, list) else ""
        return f"{actor} draw{verb_s} {n if n is not None else 'some'} card(s){shown}"
    if kind == "queue":
        cards = ev.get("cards")
        shown = " ".join(card_plain(c) for c in cards) if isinstance(cards, list) else "cards"
        return f"the queue is refilled: {shown}"
    if kind == "recycle":
        return (f"closed arrays ({ev.get('cards')} cards) and the discard pile "
                f"({ev.get('discard')}) are shuffled into the deck")
    if kind == "reshuffle":
        return "the discard pile is shuffled into the empty deck"
    if kind == "turn":
        return f"turn {ev.get('turn', '')}: {actor} to move" if actor != "you" else \
            f"turn {ev.get('turn', '')}: your move"
    if kind == "flip":
        down = " (one face down first)" if ev.get("down") else ""
        return f"{actor} flip{verb_s} {_card(ev, 'up', 'card')}{down}"
    if kind == "battle":
        winner = ev.get("winner")
        cards = ev.get("cards")
        count = f" {cards} cards" if isinstance(cards, int) else ""
        wars = ev.get("wars")
        after = f" after {wars} war(s)" if isinstance(wars, int) and wars else ""
        return (f"battle {ev.get('battle', '')}: {who(winner, me, names)} "
                f"take{'' if winner == me else 's'}{count}{after}")
    if kind == "war":
        return "war! each places a card face down, then one face up"
    if kind == "resign":
        return f"{actor} resign{verb_s}"
    if kind == "forfeit":
        return f"{actor} forfeit{verb_s} ({ev.get('reason', 'no reason given')})"
    if kind == "game_over":
        winner = ev.get("winner")
        if winner is None:
            return f"game over: draw ({ev.get('reason', '')})"
        return f"game over: {who(winner, me, names)} win{'' if winner == me else 's'} ({ev.get('reason', '')})"
    fields = ", ".join(f"{k}={v}" for k, v in ev.items() if k != "type")
    return f"{kind}: {fields}" if fields else str(kind)


def describe_events(game: str, events: Sequence[Any], me: int | None,
                    names: Mapping[int, str]) -> list[str]:
    """Every event in order, one line each. Non-map entries are skipped, and so is
    ``game_over``: the snapshot's ``result`` gives the final line (see :func:`describe_result`)."""
    return [describe_event(game, ev, me, names) for ev in events
            if isinstance(ev, Mapping) and ev.get("type") != "game_over"]


def describe_presence(msg: Mapping[str, Any]) -> str:
    """A presence push in words: who left or came back, and how long the grace is."""
    name = msg.get("name") or f"seat {msg.get('seat')}"
    if msg.get("connected"):
        return f"{name} is connected"
    grace = msg.get("grace")
    if isinstance(grace, (int, float)):
        return f"{name} lost the connection ({grace:.0f} s to come back)"
    return f"{name} left"


def describe_start(snapshot: Mapping[str, Any], names: Mapping[int, str]) -> str:
    """The first log line of a match: which game, who plays, and the own role."""
    seat = snapshot.get("seat")
    players = " vs ".join(names.get(s, "(open)") for s in sorted(names)) or "?"
    role = f"you are seat {seat}" if isinstance(seat, int) else "you are watching"
    return f"{snapshot.get('game')} match {snapshot.get('match')}: {players}; {role}"


def describe_result(snapshot: Mapping[str, Any], names: Mapping[int, str]) -> str:
    """The final line of a match: the winner (or a draw) and why."""
    result = snapshot.get("result") or {}
    winner = result.get("winner")
    reason = result.get("reason", "")
    me = snapshot.get("seat")
    if winner is None:
        return f"game over: a draw ({reason})"
    if winner == me:
        return f"game over: you win ({reason})"
    return f"game over: {names.get(winner, f'seat {winner}')} wins ({reason})"
