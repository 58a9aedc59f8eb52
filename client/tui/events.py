"""Projected events and presence changes in words, for the match log. Pure functions.

The server sends each seat its own projection of the events of a match
(``snapshot.events``); :class:`engine.notation.Speaker` turns each into one
readable line in the notation of the board (``7♣``, arrays from 1), such as
"bob took Q♠ from the queue head onto array 2". An event of a kind it does not
know is still shown, as its type and fields, never dropped and never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.notation import Speaker, result_words, seat_name


def describe_event(game: str, ev: Mapping[str, Any], me: int | None,
                   names: Mapping[int, str], *, glyphs: bool = True) -> str:
    """One projected event as one line of text."""
    return Speaker(me, names, glyphs=glyphs, game=game).event(ev)


def describe_events(game: str, events: Sequence[Any], me: int | None,
                    names: Mapping[int, str], *, glyphs: bool = True) -> list[str]:
    """Every event in order, one line each. Non-map entries are skipped, and so is
    ``game_over``: the snapshot's ``result`` gives the final line (see :func:`describe_result`)."""
    return Speaker(me, names, glyphs=glyphs, game=game).events(events)


def describe_presence(msg: Mapping[str, Any]) -> str:
    """A presence push in words: who left or came back, and how long the grace is."""
    name = msg.get("name") or seat_name(msg.get("seat"))
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
    role = f"you are seat {seat + 1}" if isinstance(seat, int) else "you are watching"
    return f"{snapshot.get('game')} match {snapshot.get('match')}: {players}; {role}"


def describe_result(snapshot: Mapping[str, Any], names: Mapping[int, str]) -> str:
    """The final line of a match: the winner (or a draw) and why, in words."""
    return "game over: " + result_words(str(snapshot.get("game")), snapshot.get("result"),
                                        snapshot.get("seat"), names)


def describe_timeout(seat: int, count: int, limit: int | None, me: int | None,
                     names: Mapping[int, str]) -> str:
    """A turn timer that ran out, in words: ``"you timed out (2 in a row; one more
    forfeits)"``. ``limit`` 0 or None: timeouts never forfeit."""
    who = Speaker(me, names).who(seat)
    left = (limit or 0) - count
    if not limit:
        tail = "the server moved for you" if who == "you" else "the server moved for them"
    elif left <= 0:
        tail = "that forfeits"
    elif left == 1:
        tail = "one more forfeits"
    else:
        tail = f"{left} more forfeit"
    return f"{who} timed out ({count} in a row; {tail})"
