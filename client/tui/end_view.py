"""The end of a match as a screen: who won and why, the score, the fair-shuffle check.

A pure function of the match's last snapshot (and the check the model made
when it arrived, :mod:`client.tui.fair`). The score is the one the rules use
at a cap: closed arrays, then cards in open arrays (Data Structures), cards
held (War); it is shown for every ending, so a player sees how close it was.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from client.tui.fair import FairCheck
from client.tui.layout import Block, Line, boxed, text
from client.tui.model import MatchView, player_names
from client.tui.ratings_view import rating_change_lines
from engine import notation

GAME_TITLES = {"datastructures": "Data Structures", "war": "War"}


def score_lines(game: str | None, view: Mapping[str, Any], names: Mapping[int, str],
                me: int | None) -> list[str]:
    """The score in words, one seat a line, from the final view."""

    def who(seat: int) -> str:
        name = notation.seat_name(seat, names)
        return f"{name} (you)" if seat == me else name

    out: list[str] = []
    if game == "datastructures":
        for p in view.get("players") or []:
            seat = p.get("seat")
            if not isinstance(seat, int):
                continue
            arrays = [a for a in p.get("arrays") or [] if isinstance(a, Mapping)]
            open_cards = sum(len(a.get("cards") or []) for a in arrays if not a.get("closed"))
            out.append(f"{who(seat)}: {p.get('closed', 0)} of 3 arrays closed, "
                       f"{open_cards} cards in open arrays")
        out.append(f"after {view.get('turn', '?')} turns (cap {view.get('cap', '?')}); at the "
                   "cap closed arrays count first, then cards in open arrays")
    elif game == "war":
        counts = view.get("counts") or []
        table = view.get("table") or []
        for seat, count in enumerate(counts):
            held = count + (len(table[seat]) if seat < len(table) else 0)
            out.append(f"{who(seat)}: {held} cards")
        out.append(f"{view.get('battles', '?')} battles (cap {view.get('cap', '?')}), "
                   f"{view.get('wars', 0)} wars; at the cap more cards wins")
    return out


def headline(mv: MatchView) -> str:
    """``"You win: closed a third array"`` and the like, from the snapshot's result."""
    snap = mv.snapshot or {}
    words = notation.result_words(mv.game, snap.get("result"), snap.get("seat"),
                                  player_names(snap))
    return words[:1].upper() + words[1:]


def end_keys(mv: MatchView, *, can_replay: bool) -> Line:
    """The keys of the end screen."""
    keys = [("r", "rematch")]
    if can_replay:
        keys.append(("p", "replay"))
    keys += [("Tab", "lobby"), ("Esc", "the board"), ("x", "leave")]
    line: Line = []
    for key, what in keys:
        line += [("class:key", key), ("", f" {what}   ")]
    return line


def render_end(mv: MatchView, cells: int, rows: int, *, fair: FairCheck | None,
               can_replay: bool = True) -> Block:
    """The end screen body, ``cells`` wide, at most ``rows`` lines."""
    snap = mv.snapshot or {}
    view = snap.get("view") or {}
    names = player_names(snap)
    me = snap.get("seat")
    game = mv.game
    players = "  vs  ".join(
        f"{notation.seat_name(s, names)}" + (" (you)" if s == me else "") for s in sorted(names))
    inner = cells - 2
    out: Block = [text(line, "class:title")
                  for line in _wrap(f"GAME OVER   {headline(mv)}", cells)]
    out += [text(f"{GAME_TITLES.get(str(game), str(game))} match {mv.match}   {players}"),
            text("")]
    score = score_lines(game, view, names, me)
    if score:
        out.extend(boxed("Score", [text(part) for line in score for part in _wrap(line, inner)],
                         cells))
    ratings = rating_change_lines(snap.get("result"), me)
    if ratings:
        out.extend(boxed("Ratings", [text(part) for line in ratings
                                     for part in _wrap(line, inner)], cells))
    if fair is not None:
        lines = []
        for line in fair.lines():
            style = "class:error" if line.startswith("WARNING") else \
                "class:notice" if line.startswith("verified") else ""
            lines.extend(text(part, style) for part in _wrap(line, inner))
        out.extend(boxed("Fair shuffle", lines, cells))
    out.append(end_keys(mv, can_replay=can_replay))
    return out[:rows]


def _wrap(line: str, cells: int) -> list[str]:
    if len(line) <= cells:
        return [line]
    return textwrap.wrap(line, cells, subsequent_indent="  ", break_long_words=True) or [line]
