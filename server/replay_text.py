"""A stored match as a readable, move-by-move account (``cardserver replay ID``).

The input is the public record (:func:`server.replay.public_record`): only
what a spectator saw, through the engine's projection, plus the reveal of a
finished match. The words and the card notation are :mod:`engine.notation`'s,
the same as the terminal client's log: ``7♣`` (or ``7C`` with ``glyphs=False``),
arrays, hand cards and seats counted from 1.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from engine import notation

GAME_TITLES = {"datastructures": "Data Structures", "war": "War"}
def player_names(record: Mapping[str, Any]) -> dict[int, str]:
    """Seat -> the name to print (bots named after their strategy, open seats as such)."""
    out: dict[int, str] = {}
    for p in record.get("players") or []:
        seat = p.get("seat")
        if isinstance(seat, int):
            out[seat] = str(p.get("name") or (f"{p['bot']} (bot)" if p.get("bot") else
                                              f"seat {seat + 1}"))
    return out


def when(ts: Any) -> str:
    """A Unix time as ``2026-12-01 08:00:00 UTC`` (``-`` when missing)."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def options_words(game: str | None, options: Any) -> str:
    """The match options as ``name value`` pairs (``defaults`` when none)."""
    if not isinstance(options, Mapping) or not options:
        return "defaults"
    return ", ".join(f"{k} {v}" for k, v in sorted(options.items()))


def position_words(game: str | None, view: Mapping[str, Any], names: Mapping[int, str],
                   glyphs: bool = True) -> list[str]:
    """A public view in a few lines: what is on the table."""
    def c(cards: Any) -> str:
        return notation.cards(cards, glyphs=glyphs)

    if game == "war":
        counts = view.get("counts") or []
        return ["decks: " + ", ".join(f"{notation.seat_name(s, names)} {n} cards"
                                      for s, n in enumerate(counts))]
    if game == "datastructures":
        lines = [f"queue (head first): {c(view.get('queue'))}; deck {view.get('deck', '?')} "
                 f"cards; discard pile {len(view.get('discard') or [])}"]
        for p in view.get("players") or []:
            seat = p.get("seat")
            arrays = "; ".join(
                f"{notation.array_name(i)} closed" if a.get("closed") else
                f"{notation.array_name(i)} {c(a.get('cards')) if a.get('cards') else 'empty'}"
                for i, a in enumerate(p.get("arrays") or []))
            stack = p.get("stack") or []
            top = notation.card(stack[-1], glyphs=glyphs) if stack else "empty"
            count = "1 card" if len(stack) == 1 else f"{len(stack)} cards"
            lines.append(f"{notation.seat_name(seat, names)}: stack top {top} ({count}), "
                         f"{arrays}")
        if isinstance(view.get("to_move"), int):
            lines.append(f"{notation.seat_name(view['to_move'], names)} to move")
        return lines
    return []


def fair_lines(record: Mapping[str, Any]) -> list[str]:
    """The fair-shuffle facts and what was checked."""
    lines = [f"commitment {record.get('commitment', '-')}"]
    reveal = record.get("reveal")
    if not isinstance(reveal, Mapping):
        lines.append("not finished: the seed stays secret until the match ends")
        return lines
    lines.append(f"seed       {reveal.get('seed')}")
    lines.append(f"salt       {reveal.get('salt')}")
    if record.get("verified"):
        lines.append("verified: sha256(seed + salt) matches the commitment published when "
                     "the match was created")
    else:
        lines.append("WARNING: sha256(seed + salt) does NOT match the commitment")
    lines.append("verified: every move above was replayed through the engine from this seed, "
                 "and every state digest matched the one journaled during the match")
    return lines


def format_record(record: Mapping[str, Any], *, glyphs: bool = True) -> str:
    """The whole match as text: header, opening, one line per move with its public
    events indented under it, the result and the fair-shuffle check."""
    game = record.get("game")
    names = player_names(record)
    speaker = notation.Speaker(None, names, glyphs=glyphs, game=str(game))
    title = GAME_TITLES.get(str(game), str(game))
    players = "  vs  ".join(f"{names[s]} (seat {s + 1})" for s in sorted(names))
    out = [f"{title} match {record.get('match')}: {players}",
           f"options: {options_words(game, record.get('options'))}",
           f"created {when(record.get('created'))}, status {record.get('status')}"
           + (f", finished {when(record.get('finished'))}" if record.get("finished") else ""),
           "", "opening position:"]
    out += [f"  {line}" for line in position_words(game, record.get("start") or {}, names,
                                                   glyphs)]
    out.append("")
    for move in record.get("moves") or []:
        out.append(speaker.move(move))
        out += [f"      {line}" for line in speaker.events(move.get("events") or [])]
    out.append("")
    result = record.get("result")
    if isinstance(result, Mapping):
        out.append("result: " + notation.result_words(str(game), result, None, names))
        final = (record.get("moves") or [{}])[-1].get("view") if record.get("moves") else None
        if isinstance(final, Mapping):
            out += [f"  {line}" for line in position_words(game, final, names, glyphs)]
    out.append("")
    out.append("fair shuffle:")
    out += [f"  {line}" for line in fair_lines(record)]
    return "\n".join(out) + "\n"
